package native

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memrank/memrank/rank"
)

// BenchmarkRetrieveHandler is the native layer's own cost per request:
// decoding the body, building the query, turning ten explained results into
// JSON. The ranker is a fake answering at once.
func BenchmarkRetrieveHandler(b *testing.B) {
	c := cannedResult()
	res := &rank.Result{Reranked: true}
	for range 5 {
		res.Points = append(res.Points, c.Points...)
		res.Explanations = append(res.Explanations, c.Explanations...)
	}
	h, err := New(Config{Ranker: &fakeRetriever{res: res}})
	if err != nil {
		b.Fatal(err)
	}
	vec := strings.TrimSuffix(strings.Repeat("0.0123,", 384), ",")
	body := `{"collection":"memories","vector":[` + vec + `],"limit":10,
		"filter":{"must":[{"key":"kind","match":{"value":"note"}}]}}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/v1/retrieve", strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkDecodeRetrieveRequest is the body decoding alone, with a
// 384-dimension vector.
func BenchmarkDecodeRetrieveRequest(b *testing.B) {
	vec := strings.TrimSuffix(strings.Repeat("0.0123,", 384), ",")
	body := []byte(`{"collection":"memories","vector":[` + vec + `],"limit":10}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRetrieveRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}
