package native

import (
	"testing"
	"time"

	"github.com/memrank/memrank/qdrantjson"
)

// FuzzDecodeRetrieveRequest: any body decodes or is refused, never panics,
// and what is accepted satisfies the request's invariants.
func FuzzDecodeRetrieveRequest(f *testing.F) {
	for _, s := range []string{
		`{"collection":"memories","text":"what editor does Dana use"}`,
		`{"collection":"memories","vector":[0.1,0.2],"limit":5,"offset":2,"explain":false,"with_payload":["text"]}`,
		`{"collection":"m","vector":[1],"filter":{"must":[{"key":"a","match":{"value":3}}],"should":{"has_id":[18446744073709551615]}}}`,
		`{"collection":"m","vector":[1],"with_payload":{"exclude":["x"]},"score_threshold":-0.5,"using":"dense"}`,
		`{"collection":"m","vector":[1],"limit":1e30}`,
		`{"collection":"m","text":"x","at":"2026-06-01T00:00:00+02:00","include_archived":true}`,
		"{\"collection\":\"\xff\"}",
		`null`, `[]`, `{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeRetrieveRequest(body)
		if err != nil {
			if req != nil {
				t.Fatal("a request and an error")
			}
			if _, ok := err.(*qdrantjson.Error); !ok {
				t.Fatalf("error %T (%v) is not a *qdrantjson.Error", err, err)
			}
			return
		}
		if req.Collection == "" || req.Limit < 1 || req.Limit > MaxLimit || req.Offset > MaxOffset {
			t.Fatalf("invalid request accepted: %+v", req)
		}
		if req.HasText == (req.Vector != nil) {
			t.Fatalf("vector and text: %+v", req)
		}
		if req.WithPayload == nil {
			t.Fatal("no payload selector")
		}
		if !req.At.IsZero() && (req.At.Location() != time.UTC || req.At.Year() < 1 || req.At.Year() > 9999) {
			t.Fatalf("at %v accepted", req.At)
		}
		q := req.Query([]float32{1}, req.Filter)
		if q.GetCollectionName() != req.Collection || q.GetLimit() != req.Limit {
			t.Fatalf("query %v", q)
		}
	})
}
