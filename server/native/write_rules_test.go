package native

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A confirmation repeated from the same session is answered 200 with
// already_counted and the observations unchanged; another session's counts;
// a replay of an Idempotency-Key returns the recorded answer.
func TestConfirmRouteCountsOncePerSession(t *testing.T) {
	h := usedEnv(t, nil)
	id := observeID(t, h, "Dana uses Neovim")
	path := "/v1/memories/" + id + "/confirm"
	tests := []struct {
		name         string
		body         string
		header       []string
		wantN        int
		wantCounted  bool // already_counted in the answer
		wantReplayed bool
	}{
		{name: "first from s1", body: `{"collection":"m","session_id":"s1"}`, header: []string{"Idempotency-Key", "c1"}, wantN: 1},
		{name: "again from s1", body: `{"collection":"m","session_id":"s1"}`, wantN: 1, wantCounted: true},
		{name: "replay of the first", body: `{"collection":"m","session_id":"s1"}`, header: []string{"Idempotency-Key", "c1"}, wantN: 1, wantReplayed: true},
		{name: "from s2", body: `{"collection":"m","session_id":"s2"}`, wantN: 2},
		{name: "without a session", body: `{"collection":"m"}`, wantN: 3},
		{name: "without a session again", body: `{"collection":"m"}`, wantN: 3, wantCounted: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, h, http.MethodPost, path, tc.body, tc.header...)
			if r.code != http.StatusOK {
				t.Fatalf("status %d, body %s", r.code, r.body)
			}
			var out outcomeEnvelope
			if err := json.Unmarshal(r.body, &out); err != nil {
				t.Fatal(err)
			}
			got := out.Result
			if got.Decision != "confirmed" || got.Observations != tc.wantN || got.AlreadyCounted != tc.wantCounted || got.Replayed != tc.wantReplayed {
				t.Errorf("outcome %s, want n %d, already_counted %v, replayed %v", r.body, tc.wantN, tc.wantCounted, tc.wantReplayed)
			}
			if has := strings.Contains(string(r.body), `"already_counted":true`); has != tc.wantCounted {
				t.Errorf("body %s: already_counted present %v, want %v", r.body, has, tc.wantCounted)
			}
		})
	}
}

// observed_at (and a confirmation's or use's at) more than
// dedup.max_clock_skew ahead of the engine's clock (here 2026-11-01T10:00Z)
// is a 400 naming the field and the skew; nothing is stored.
func TestWriteRoutesRefuseTimesAhead(t *testing.T) {
	h := usedEnv(t, nil)
	id := observeID(t, h, "Dana uses Neovim")
	tests := []struct {
		name, path, body string
		wantField        string // "" for a 200
	}{
		{name: "observe two hours ahead", path: "/v1/observe",
			body: `{"collection":"m","text":"Dana lives in Lisbon","session_id":"s2","observed_at":"2026-11-01T12:00:00Z"}`, wantField: "observed_at"},
		{name: "correct two hours ahead", path: "/v1/memories/" + id + "/correct",
			body: `{"collection":"m","text":"Dana uses Emacs","observed_at":"2026-11-01T12:00:00Z"}`, wantField: "observed_at"},
		{name: "confirm two hours ahead", path: "/v1/memories/" + id + "/confirm",
			body: `{"collection":"m","session_id":"s2","at":"2026-11-01T12:00:00+00:00"}`, wantField: "at"},
		{name: "used two hours ahead", path: "/v1/memories/" + id + "/used",
			body: `{"collection":"m","at":"2026-11-01T12:00:00Z"}`, wantField: "at"},
		{name: "ahead in another zone", path: "/v1/observe",
			body: `{"collection":"m","text":"Dana lives in Lisbon","observed_at":"2026-11-01T13:00:00+02:00"}`, wantField: "observed_at"},
		{name: "observe within the skew", path: "/v1/observe",
			body: `{"collection":"m","text":"Dana lives in Porto","observed_at":"2026-11-01T10:04:00Z"}`},
		{name: "confirm an hour ago", path: "/v1/memories/" + id + "/confirm",
			body: `{"collection":"m","session_id":"s3","at":"2026-11-01T09:00:00Z"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, h, http.MethodPost, tc.path, tc.body)
			if tc.wantField == "" {
				if r.code != http.StatusOK {
					t.Fatalf("status %d, body %s; want 200", r.code, r.body)
				}
				return
			}
			msg := qdrantError(t, r)
			if r.code != http.StatusBadRequest || !strings.Contains(msg, tc.wantField+": ") || !strings.Contains(msg, "at most 5m0s ahead") {
				t.Errorf("status %d, %q; want 400 naming %s and the 5m0s skew", r.code, msg, tc.wantField)
			}
		})
	}
	r := do(t, h, http.MethodGet, "/v1/memories/"+id+"?collection=m", "")
	var view struct {
		Result struct {
			Payload struct {
				Observations int `json:"observations"`
				Uses         int `json:"uses"`
			} `json:"payload"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.body, &view); err != nil || r.code != http.StatusOK {
		t.Fatalf("memory: %d %s", r.code, r.body)
	}
	if p := view.Result.Payload; p.Observations != 1 || p.Uses != 0 {
		t.Errorf("memory after the refused writes: n %d, uses %d; want only the accepted confirmation (n 1, no use)", p.Observations, p.Uses)
	}
}

// An observation without extractor_model stores no such key; one with it
// stores it.
func TestObserveStoresNoEmptyExtractorModel(t *testing.T) {
	h := usedEnv(t, nil)
	tests := []struct {
		name, body string
		want       string // the stored extractor_model, "" for no key
	}{
		{name: "none given", body: `{"collection":"m","text":"Dana uses Neovim"}`},
		{name: "empty given", body: `{"collection":"m","text":"Dana lives in Lisbon","extractor_model":""}`},
		{name: "a model", body: `{"collection":"m","text":"Dana works in finance","extractor_model":"gpt-4o"}`, want: "gpt-4o"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, h, http.MethodPost, "/v1/observe", tc.body)
			var out outcomeEnvelope
			if err := json.Unmarshal(r.body, &out); err != nil || r.code != http.StatusOK {
				t.Fatalf("observe: %d %s", r.code, r.body)
			}
			r = do(t, h, http.MethodGet, "/v1/memories/"+out.Result.MemoryID+"?collection=m", "")
			var view struct {
				Result struct {
					Payload map[string]json.RawMessage `json:"payload"`
				} `json:"result"`
			}
			if err := json.Unmarshal(r.body, &view); err != nil || r.code != http.StatusOK {
				t.Fatalf("memory: %d %s", r.code, r.body)
			}
			raw, ok := view.Result.Payload["extractor_model"]
			switch {
			case tc.want == "" && ok:
				t.Errorf("extractor_model stored as %s, want no key", raw)
			case tc.want != "" && string(raw) != `"`+tc.want+`"`:
				t.Errorf("extractor_model %s, want %q", raw, tc.want)
			}
		})
	}
}
