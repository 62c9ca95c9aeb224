package native

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRetrieveCountAccess: count_access false runs the query without
// counting accesses (rank.WithoutAccess); absent or true counts them; a
// value that is not a boolean is refused before anything is queried.
func TestRetrieveCountAccess(t *testing.T) {
	tests := []struct {
		name   string
		field  string // appended to the body
		code   int
		counts []bool // what the ranker was asked, per call
	}{
		{"absent: counted", ``, http.StatusOK, []bool{true}},
		{"true: counted", `,"count_access":true`, http.StatusOK, []bool{true}},
		{"false: not counted", `,"count_access":false`, http.StatusOK, []bool{false}},
		{"null: the default, counted", `,"count_access":null`, http.StatusOK, []bool{true}},
		{"a string: refused", `,"count_access":"no"`, http.StatusBadRequest, nil},
		{"given twice: refused", `,"count_access":false,"count_access":true`, http.StatusBadRequest, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &fakeRetriever{}
			h := newHandler(t, Config{Ranker: rt})
			r := do(t, h, http.MethodPost, "/v1/retrieve", `{"collection":"mem","vector":[1,0]`+tc.field+`}`)
			if r.code != tc.code {
				t.Fatalf("status %d %s, want %d", r.code, r.body, tc.code)
			}
			rt.mu.Lock()
			defer rt.mu.Unlock()
			if diff := cmp.Diff(tc.counts, rt.counts); diff != "" {
				t.Errorf("accesses counted per call (-want +got):\n%s", diff)
			}
		})
	}
}
