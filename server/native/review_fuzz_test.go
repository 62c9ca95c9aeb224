package native

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/qdrantjson"
)

// FuzzDecodeReviewAnswer: any body decodes or is refused with an error
// naming a field, never panics, and what is accepted is a usable answer.
func FuzzDecodeReviewAnswer(f *testing.F) {
	for _, s := range []string{
		`{"collection":"mem","action":"archive"}`,
		`{"collection":"mem","action":"confirm","session_id":"s1","observation_id":"o1"}`,
		`{"collection":"mem","action":"correct","text":"Dana moved","source":"direct","memory_type":"fact"}`,
		`{"collection":"mem","action":"correct"}`, `{"action":"archive"}`, `{"collection":"mem","action":7}`,
		"{\"collection\":\"\xff\"}", `null`, `[]`, `{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := decodeReviewAnswer(body)
		if err != nil {
			var ie *dedup.InputError
			if !errors.As(err, &ie) || ie.Field == "" {
				t.Fatalf("error %T (%v) names no field", err, err)
			}
			return
		}
		if a.obs.Collection == "" || (a.action != "confirm" && a.action != "correct" && a.action != "archive") {
			t.Fatalf("unusable answer accepted: %+v", a)
		}
		if a.action == "correct" && a.obs.Text == "" {
			t.Fatalf("a correction without a text: %+v", a)
		}
	})
}

// FuzzReviewQuery: any query string is read or refused in Qdrant's error
// shape, and what is accepted is within bounds.
func FuzzReviewQuery(f *testing.F) {
	for _, s := range []string{"collection=mem", "collection=mem&limit=5&dormant_idle_days=30", "limit=0", "collection=a&collection=b",
		"collection=mem&dormant_idle_days=NaN", "collection=mem&limit=99999999999999999999", "%zz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r := httptest.NewRequest("GET", "/v1/review", nil)
		r.URL = &url.URL{Path: "/v1/review", RawQuery: raw}
		req, err := reviewQuery(r)
		if err != nil {
			var qe *qdrantjson.Error
			if !errors.As(err, &qe) {
				t.Fatalf("error %T (%v) is not a *qdrantjson.Error", err, err)
			}
			return
		}
		if req.Collection == "" || req.Limit < 0 || req.Limit > consolidate.MaxReviewLimit || req.DormantIdle < 0 {
			t.Fatalf("out of bounds: %+v", req)
		}
	})
}
