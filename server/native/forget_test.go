package native

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/tenancy"
	"github.com/memrank/memrank/upstream"
)

// forgetHandler is the native API over the real write path on an embedded
// store, with tenancy from the x-tenant header.
func forgetHandler(t *testing.T) http.Handler {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ip := upstream.ServeInProcess(store.NewServer(db))
	t.Cleanup(func() { ip.Close() })
	client, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	policy := &tenancy.Policy{Key: "user_id", Header: "x-tenant"}
	eng, err := dedup.New(client, dedup.Config{Codec: codec, Embedder: demoEmbedder(t, true), Tenancy: policy,
		RequireSurfaceChange: true})
	if err != nil {
		t.Fatal(err)
	}
	return newHandler(t, Config{Ranker: &fakeRetriever{}, Writer: eng, Inspector: eng, Forgetter: eng, Tenancy: policy})
}

// report reads a forget answer's result.
func report(t *testing.T, r response) dedup.ForgetReport {
	t.Helper()
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	var env struct {
		Result dedup.ForgetReport `json:"result"`
		Status string             `json:"status"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil || env.Status != "ok" {
		t.Fatalf("answer %s: %v", r.body, err)
	}
	return env.Result
}

func observeHTTP(t *testing.T, h http.Handler, tenant, body string) dedup.Outcome {
	t.Helper()
	r := do(t, h, http.MethodPost, "/v1/observe", body, "X-Tenant", tenant)
	if r.code != http.StatusOK {
		t.Fatalf("observe: status %d: %s", r.code, r.body)
	}
	var env struct {
		Result dedup.Outcome `json:"result"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatal(err)
	}
	return env.Result
}

// TestForgetRoutes: DELETE /v1/sessions/{id} and DELETE /v1/memories/{id}
// through the handler, scoped to the caller's tenant, idempotent.
func TestForgetRoutes(t *testing.T) {
	h := forgetHandler(t)
	a1 := observeHTTP(t, h, "alice", `{"collection":"mem","text":"Dana uses Neovim","source":"direct","session_id":"s1","modality":"chat","observed_at":"2026-11-01T10:00:00Z"}`)
	a2 := observeHTTP(t, h, "alice", `{"collection":"mem","text":"Dana uses Neovim","session_id":"s2","modality":"email","observed_at":"2026-11-03T10:00:00Z"}`)
	b1 := observeHTTP(t, h, "bob", `{"collection":"mem","text":"Dana uses Neovim","session_id":"s1"}`)
	if a2.Decision != dedup.DecisionIndependent || a2.MemoryID != a1.MemoryID || b1.MemoryID == a1.MemoryID {
		t.Fatalf("setup: %+v %+v %+v", a1, a2, b1)
	}
	base := dedup.ForgetReport{Collection: "mem", AuditPolicy: dedup.AuditRedact}
	steps := []struct {
		name, tenant, method, path, body string
		want                             func(dedup.ForgetReport) dedup.ForgetReport
	}{
		{"alice forgets s1", "alice", http.MethodDelete, "/v1/sessions/s1?collection=mem", "",
			func(r dedup.ForgetReport) dedup.ForgetReport { r.MemoriesUpdated, r.AuditRedacted = 1, 1; return r }},
		{"again", "alice", http.MethodDelete, "/v1/sessions/s1?collection=mem", "",
			func(r dedup.ForgetReport) dedup.ForgetReport { return r }},
		{"bob forgets s1, collection in the body", "bob", http.MethodDelete, "/v1/sessions/s1", `{"collection":"mem"}`,
			func(r dedup.ForgetReport) dedup.ForgetReport { r.MemoriesDeleted, r.AuditRedacted = 1, 1; return r }},
		{"alice deletes her memory", "alice", http.MethodDelete, "/v1/memories/" + a1.MemoryID + "?collection=mem", "",
			func(r dedup.ForgetReport) dedup.ForgetReport { r.MemoriesDeleted, r.AuditRedacted = 1, 1; return r }},
		{"and again", "alice", http.MethodDelete, "/v1/memories/" + a1.MemoryID + "?collection=mem", "",
			func(r dedup.ForgetReport) dedup.ForgetReport { return r }},
	}
	for _, s := range steps {
		got := report(t, do(t, h, s.method, s.path, s.body, "X-Tenant", s.tenant))
		if diff := cmp.Diff(s.want(base), got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.name, diff)
		}
		if s.name == "alice forgets s1" {
			r := do(t, h, http.MethodGet, "/v1/memories/"+a1.MemoryID+"?collection=mem", "", "X-Tenant", "alice")
			var env struct {
				Result struct {
					Payload map[string]any `json:"payload"`
				} `json:"result"`
			}
			if err := json.Unmarshal(r.body, &env); err != nil {
				t.Fatal(err)
			}
			if p := env.Result.Payload; p["observations"] != float64(0) || !cmp.Equal(p["session_ids"], []any{"s2"}) {
				t.Errorf("alice's memory after forgetting s1: %v", p)
			}
		}
	}
}

// TestForgetRouteErrors: refusals map to their statuses before anything is
// erased.
func TestForgetRouteErrors(t *testing.T) {
	h := forgetHandler(t)
	observeHTTP(t, h, "alice", `{"collection":"mem","text":"Dana uses Neovim","session_id":"s1"}`)
	cases := []struct {
		name, method, path, body string
		header                   []string
		status                   int
	}{
		{"unknown collection", http.MethodDelete, "/v1/sessions/s1?collection=nope", "", nil, http.StatusNotFound},
		{"unknown collection, memory", http.MethodDelete, "/v1/memories/7?collection=nope", "", nil, http.StatusNotFound},
		{"bad memory id", http.MethodDelete, "/v1/memories/not-an-id?collection=mem", "", nil, http.StatusBadRequest},
		{"session id too long", http.MethodDelete, "/v1/sessions/" + strings.Repeat("x", 300) + "?collection=mem", "", nil, http.StatusBadRequest},
		{"no collection", http.MethodDelete, "/v1/sessions/s1", "", nil, http.StatusBadRequest},
		{"two collections", http.MethodDelete, "/v1/sessions/s1?collection=mem", `{"collection":"other"}`, nil, http.StatusBadRequest},
		{"unknown parameter", http.MethodDelete, "/v1/sessions/s1?collection=mem&all=1", "", nil, http.StatusBadRequest},
		{"unknown body key", http.MethodDelete, "/v1/sessions/s1", `{"collection":"mem","everything":true}`, nil, http.StatusBadRequest},
		{"the audit companion", http.MethodDelete, "/v1/sessions/s1?collection=mem_memrank_audit", "", nil, http.StatusBadRequest},
		{"no tenant", http.MethodDelete, "/v1/sessions/s1?collection=mem", "", []string{}, http.StatusForbidden},
		{"wrong method", http.MethodPost, "/v1/sessions/s1?collection=mem", "", nil, http.StatusMethodNotAllowed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := c.header
			if hdr == nil {
				hdr = []string{"X-Tenant", "alice"}
			}
			r := do(t, h, c.method, c.path, c.body, hdr...)
			if r.code != c.status {
				t.Errorf("status %d, want %d: %s", r.code, c.status, r.body)
			}
			qdrantError(t, r)
		})
	}
	// Nothing was erased.
	r := do(t, h, http.MethodDelete, "/v1/sessions/s1?collection=mem", "", "X-Tenant", "alice")
	if rep := report(t, r); rep.MemoriesDeleted != 1 {
		t.Errorf("the forget after the refusals: %+v", rep)
	}
}

// TestForgetNotConfigured: without a Forgetter the routes answer 501.
func TestForgetNotConfigured(t *testing.T) {
	h := newHandler(t, Config{Ranker: &fakeRetriever{}})
	for _, p := range []string{"/v1/sessions/s1?collection=mem", "/v1/memories/7?collection=mem"} {
		if r := do(t, h, http.MethodDelete, p, ""); r.code != http.StatusNotImplemented {
			t.Errorf("DELETE %s: status %d: %s", p, r.code, r.body)
		}
	}
}

// FuzzForgetCollection: any query and body either give a collection or a
// refusal in Qdrant's classes; never a panic, never an empty name.
func FuzzForgetCollection(f *testing.F) {
	f.Add("collection=mem", "")
	f.Add("", `{"collection":"mem"}`)
	f.Add("collection=a", `{"collection":"b"}`)
	f.Add("collection=%zz", `{"collection":1}`)
	f.Add("x=1", `{"collection":"mem","collection":"mem"}`)
	f.Fuzz(func(t *testing.T, query, body string) {
		r := httptest.NewRequest(http.MethodDelete, "/v1/sessions/s1", nil)
		r.URL.RawQuery = query
		c, err := forgetCollection(r, []byte(body))
		if err == nil && c == "" {
			t.Fatalf("query %q body %q: no error and no collection", query, body)
		}
		var qe *qdrantjson.Error
		if err != nil && !errors.As(clientError(err), &qe) {
			t.Fatalf("query %q body %q: unclassified error %T %v", query, body, err, err)
		}
	})
}

// fakeForgetter answers every call with err.
type fakeForgetter struct{ err error }

func (f fakeForgetter) ForgetSession(context.Context, string, string, string) (dedup.ForgetReport, error) {
	return dedup.ForgetReport{}, f.err
}

func (f fakeForgetter) DeleteMemory(context.Context, string, string, string) (dedup.ForgetReport, error) {
	return dedup.ForgetReport{}, f.err
}

// TestForgetErrorMapping: the write path's refusals become their statuses;
// an internal error's text never reaches the client.
func TestForgetErrorMapping(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		status int
		hidden string // must not appear in the answer
	}{
		{"too large", fmt.Errorf("wrapped: %w", dedup.ErrTooLarge), http.StatusBadRequest, "wrapped"},
		{"not found", fmt.Errorf("%w: collection x in shard 3", dedup.ErrNotFound), http.StatusNotFound, "shard"},
		{"input", &dedup.InputError{Field: "session_id", Reason: "too long"}, http.StatusBadRequest, ""},
		{"internal", errors.New("dial tcp 10.0.0.7:6334: refused"), http.StatusInternalServerError, "10.0.0.7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHandler(t, Config{Ranker: &fakeRetriever{}, Forgetter: fakeForgetter{c.err}})
			for _, p := range []string{"/v1/sessions/s1?collection=mem", "/v1/memories/7?collection=mem"} {
				r := do(t, h, http.MethodDelete, p, "")
				if r.code != c.status {
					t.Errorf("%s: status %d, want %d: %s", p, r.code, c.status, r.body)
				}
				if msg := qdrantError(t, r); c.hidden != "" && strings.Contains(msg, c.hidden) {
					t.Errorf("%s: the answer %q shows %q", p, msg, c.hidden)
				}
			}
		})
	}
}
