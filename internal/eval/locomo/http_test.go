package locomo

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// handler checks a request's path, header and body and answers with
// status and answer.
func handler(t *testing.T, path, wantBody string, status int, answer string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var got, want any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Errorf("request body %s: %v", body, err)
		}
		_ = json.Unmarshal([]byte(wantBody), &want)
		if r.Method != http.MethodPost || r.URL.Path != path || r.Header.Get("api-key") != "k" ||
			r.Header.Get("Content-Type") != "application/json" || !cmp.Equal(want, got) {
			t.Errorf("request %s %s api-key %q: %s", r.Method, r.URL.Path, r.Header.Get("api-key"), body)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	})
}

func TestNativeRetriever(t *testing.T) {
	const body = `{"collection": "c_retrieve", "text": "where?", "limit": 25}`
	for _, tc := range []struct {
		name    string
		status  int
		answer  string
		want    []Hit
		wantErr string
	}{
		{"results", 200, `{"result": [{"id": 7, "score": 0.5, "payload": {"turn_ids": ["D1:7"], "text": "x"}},
			{"id": "5F0C3E6A-0000-4000-8000-000000000001", "payload": {"turn_ids": ["D2:1", "D2:2"]}},
			{"id": 9, "payload": {"text": "no turns"}}, {"id": 10}], "status": "ok", "reranked": true}`,
			[]Hit{{ID: "7", TurnIDs: []string{"D1:7"}}, {ID: "5f0c3e6a-0000-4000-8000-000000000001", TurnIDs: []string{"D2:1", "D2:2"}}, {ID: "9"}, {ID: "10"}}, ""},
		{"empty", 200, `{"result": [], "status": "ok"}`, []Hit{}, ""},
		{"refused", 400, `{"status": {"error": "bad"}}`, nil, `POST /v1/retrieve: status 400: {"status": {"error": "bad"}}`},
		{"turn ids not strings", 200, `{"result": [{"id": 1, "payload": {"turn_ids": 3}}]}`, nil, "result 0 (id 1): payload turn_ids"},
		{"odd id", 200, `{"result": [{"id": true}]}`, nil, "result 0: id true is not a number or a UUID"},
		{"not JSON", 200, `<html>`, nil, "POST /v1/retrieve: the answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NativeRetriever{Handler: handler(t, "/v1/retrieve", body, tc.status, tc.answer), Header: http.Header{"Api-Key": {"k"}}, TurnKey: "turn_ids"}
			got, err := r.Retrieve(context.Background(), "c_retrieve", "where?", 25)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Retrieve: %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Retrieve (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRESTQuerier(t *testing.T) {
	const body = `{"query": [0.5, 0.25], "limit": 25, "with_payload": true}`
	q := RESTQuerier{
		Handler: handler(t, "/collections/c_query/points/query", body, 200,
			`{"result": {"points": [{"id": 3, "version": 1, "score": 0.9, "payload": {"turns": ["D1:3"]}}]}, "status": "ok", "time": 0.001}`),
		Header:  http.Header{"Api-Key": {"k"}},
		TurnKey: "turns",
	}
	got, err := q.QueryPoints(context.Background(), "c_query", []float32{0.5, 0.25}, 25)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Hit{{ID: "3", TurnIDs: []string{"D1:3"}}}, got); diff != "" {
		t.Errorf("QueryPoints (-want +got):\n%s", diff)
	}
	q.Handler = handler(t, "/collections/c_query/points/query", body, 404, `{"status": {"error": "Not found: Collection c_query"}}`)
	if _, err := q.QueryPoints(context.Background(), "c_query", []float32{0.5, 0.25}, 25); err == nil ||
		!strings.Contains(err.Error(), "status 404: ") {
		t.Errorf("a 404: %v", err)
	}
}
