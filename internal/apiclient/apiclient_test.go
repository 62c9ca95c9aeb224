package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/server/native"
)

// server is a memrank HTTP API stand-in: it records what it is sent and
// answers code and body.
type server struct {
	t      *testing.T
	code   int
	body   string
	mu     sync.Mutex
	got    []dedup.Observation
	header []http.Header
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/observe" || r.Header.Get("Content-Type") != "application/json" {
		s.t.Errorf("request %s %s (content-type %q)", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
	}
	body, _ := io.ReadAll(r.Body)
	// The server's own decoder must accept what the client sends.
	obs, err := native.DecodeObserveRequest(body)
	if err != nil {
		s.t.Errorf("the client sent a body the API refuses: %v: %s", err, body)
	}
	s.mu.Lock()
	s.got = append(s.got, obs)
	s.header = append(s.header, r.Header.Clone())
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(s.code)
	io.WriteString(w, s.body)
}

const insertedBody = `{"result":{"decision":"inserted","memory_id":"42","confidence":0.7,"observations":0,"dedup_tier":0,"judge":null,"replayed":false},"status":"ok","time":0.001}`

func TestRemote(t *testing.T) {
	srv := &server{t: t, code: http.StatusOK, body: insertedBody}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	r, err := NewRemote(RemoteConfig{URL: ts.URL + "/", APIKey: "k1", TenantHeader: "x-tenant", Tenant: "alice", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	obs := dedup.Observation{Collection: "memories", Text: "Dana uses Neovim", Entities: []string{"Dana"},
		ObservedAt: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)}
	out, err := r.Observe(context.Background(), obs)
	if err != nil {
		t.Fatal(err)
	}
	if want := (dedup.Outcome{Decision: dedup.DecisionInserted, MemoryID: "42", Confidence: 0.7}); !cmp.Equal(want, out) {
		t.Errorf("outcome (-want +got):\n%s", cmp.Diff(want, out))
	}
	if len(srv.got) != 1 {
		t.Fatalf("server called %d times", len(srv.got))
	}
	if diff := cmp.Diff(obs, srv.got[0], cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("posted observation (-want +got):\n%s", diff)
	}
	if h := srv.header[0]; h.Get("Api-Key") != "k1" || h.Get("X-Tenant") != "alice" {
		t.Errorf("headers %v", h)
	}
}

// TestRemoteWarnings: the answer's warnings reach the caller (observe
// prints them on stderr).
func TestRemoteWarnings(t *testing.T) {
	const body = `{"result":{"decision":"inserted","memory_id":"42","confidence":0.4675,"observations":0,"dedup_tier":0,` +
		`"judge":null,"warnings":["the memory's confidence 0.4675 is below the retrieval gate 0.5"],"replayed":false},"status":"ok","time":0.001}`
	ts := httptest.NewServer(&server{t: t, code: http.StatusOK, body: body})
	defer ts.Close()
	r, err := NewRemote(RemoteConfig{URL: ts.URL, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, err := r.Observe(context.Background(), dedup.Observation{Collection: "c", Text: "Dana keeps bees"})
	if err != nil {
		t.Fatal(err)
	}
	want := dedup.Outcome{Decision: dedup.DecisionInserted, MemoryID: "42", Confidence: 0.4675,
		Warnings: []string{"the memory's confidence 0.4675 is below the retrieval gate 0.5"}}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
}

// TestRemoteErrors: a non-200 answer carries the API's message and status,
// and InputFault tells the observation's faults from the write path's.
func TestRemoteErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		code     int
		body     string
		corrects string
		msg      string
		fault    bool
	}{
		{"bad request", 400, `{"status":{"error":"Bad request: memory_type: unknown type"},"time":0}`, "",
			"Bad request: memory_type: unknown type (HTTP 400)", true},
		{"too large", 413, `{"status":{"error":"Payload too large"},"time":0}`, "", "Payload too large (HTTP 413)", true},
		{"forbidden", 403, `{"status":{"error":"Forbidden: tenant required"},"time":0}`, "", "Forbidden: tenant required (HTTP 403)", false},
		{"not memrank", 404, `404 page not found`, "", "404 page not found (HTTP 404)", false},
		{"corrected memory not found", 404, `{"status":{"error":"Not found: no such memory 7"},"time":0}`, "7",
			"Not found: no such memory 7 (HTTP 404)", true},
		{"not found without corrects", 404, `{"status":{"error":"Not found: no such memory 7"},"time":0}`, "",
			"Not found: no such memory 7 (HTTP 404)", false},
		{"mismatch", 409, `{"status":{"error":"Conflict: the collection was written with another embedder"},"time":0}`, "",
			"another embedder (HTTP 409)", false},
		{"down", 503, `{"status":{"error":"Service unavailable: the upstream is not reachable"},"time":0}`, "",
			"the upstream is not reachable (HTTP 503)", false},
		{"not an outcome", 200, `{"result":[]}`, "", "is not an observe response", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(&server{t: t, code: tt.code, body: tt.body})
			defer ts.Close()
			r, err := NewRemote(RemoteConfig{URL: ts.URL, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			obs := dedup.Observation{Collection: "c", Text: "x", Corrects: tt.corrects}
			_, err = r.Observe(context.Background(), obs)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %v, want one with %q", err, tt.msg)
			}
			if got := InputFault(err, obs); got != tt.fault {
				t.Errorf("InputFault = %v, want %v", got, tt.fault)
			}
		})
	}
}

func TestNewRemoteURL(t *testing.T) {
	for _, u := range []string{"localhost:6333", "ftp://host/", "http://", "://x", ""} {
		if _, err := NewRemote(RemoteConfig{URL: u}); err == nil || !strings.Contains(err.Error(), "is not an http(s) URL") {
			t.Errorf("NewRemote(%q): %v", u, err)
		}
	}
}

func TestInputFault(t *testing.T) {
	for _, tt := range []struct {
		name     string
		err      error
		corrects string
		want     bool
	}{
		{"an input error", fmt.Errorf("dedup: %w", &dedup.InputError{Field: "memory_type", Reason: "unknown"}), "", true},
		{"not found, naming a memory", fmt.Errorf("dedup: memory 9: %w", dedup.ErrNotFound), "9", true},
		{"not found: the collection", fmt.Errorf("dedup: %w", dedup.ErrNotFound), "", false},
		{"the upstream down", errors.New("rpc error: code = Unavailable"), "", false},
		{"cancelled", context.Canceled, "", false},
	} {
		if got := InputFault(tt.err, dedup.Observation{Corrects: tt.corrects}); got != tt.want {
			t.Errorf("%s: InputFault = %v, want %v", tt.name, got, tt.want)
		}
	}
}

type ctxKey struct{}

// engine records the observation and the context it was offered.
type engine struct {
	obs dedup.Observation
	ctx context.Context
}

func (e *engine) Observe(ctx context.Context, obs dedup.Observation) (dedup.Outcome, error) {
	e.obs, e.ctx = obs, ctx
	return dedup.Outcome{Decision: dedup.DecisionInserted}, nil
}

func TestLocal(t *testing.T) {
	eng := &engine{}
	l := &Local{Engine: eng, Tenant: "alice", Timeout: time.Minute,
		Auth: func(ctx context.Context) context.Context { return context.WithValue(ctx, ctxKey{}, "creds") }}
	if _, err := l.Observe(context.Background(), dedup.Observation{Collection: "c", Text: "x", Tenant: "mallory"}); err != nil {
		t.Fatal(err)
	}
	if eng.obs.Tenant != "alice" {
		t.Errorf("tenant %q: the caller's tenant must win over the observation's", eng.obs.Tenant)
	}
	if eng.ctx.Value(ctxKey{}) != "creds" {
		t.Error("the engine was called without the credentials")
	}
	if _, ok := eng.ctx.Deadline(); !ok {
		t.Error("the engine was called without a deadline")
	}
}

func TestFormatOutcome(t *testing.T) {
	for _, tt := range []struct {
		name string
		out  dedup.Outcome
		want string
	}{
		{"independent via the judge", dedup.Outcome{Decision: dedup.DecisionIndependent, MemoryID: "7", Confidence: 0.81234, Observations: 2, Tier: 3,
			Judge: &dedup.JudgeInfo{Verdict: "same", Cached: true}},
			"independent 7 confidence=0.812 observations=2 dedup_tier=3 judge=same(cached)"},
		{"judge fallback", dedup.Outcome{Decision: dedup.DecisionInserted, MemoryID: "8", Confidence: 0.7, Judge: &dedup.JudgeInfo{Fallback: "timeout"}},
			"inserted 8 confidence=0.700 observations=0 dedup_tier=0 judge=fallback:timeout"},
		{"contradiction", dedup.Outcome{Decision: dedup.DecisionContradiction, MemoryID: "9", Confidence: 0.6, Tier: 2, Superseded: "3", Merged: []string{"4", "5"}},
			"contradiction 9 confidence=0.600 observations=0 dedup_tier=2 superseded=3 merged=4,5"},
		{"replayed", dedup.Outcome{Decision: dedup.DecisionRestatement, MemoryID: "9", Confidence: 0.6, Tier: 1, Replayed: true},
			"restatement 9 confidence=0.600 observations=0 dedup_tier=1 replayed"},
		{"with a reason", dedup.Outcome{Decision: dedup.DecisionInserted, MemoryID: "1", Reason: `no "match"`},
			`inserted 1 confidence=0.000 observations=0 dedup_tier=0 reason="no \"match\""`},
		{"rejected", dedup.Outcome{Decision: dedup.DecisionRejected, Reason: "grounding is not_supported"},
			"rejected (not stored): grounding is not_supported"},
	} {
		if got := FormatOutcome(tt.out); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestRemoteRetrieve: explain's request goes to /v1/retrieve with the
// caller's credentials and tenant, and the explained answer comes back;
// the API's errors come back with their message.
func TestRemoteRetrieve(t *testing.T) {
	var got http.Header
	var gotBody string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, gotBody = r.Header.Clone(), string(b)
		switch {
		case r.Method != http.MethodPost || r.URL.Path != "/v1/retrieve":
			t.Errorf("request %s %s", r.Method, r.URL.Path)
		case strings.Contains(gotBody, `"nope"`):
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"status":{"error":"Not found: Collection `+"`nope`"+` doesn't exist!"},"time":0}`)
			return
		}
		io.WriteString(w, `{"result":[{"id":9007199254740993,"score":0.9,"base_score":0.8,"weight":0.9,"guard":"relevant"},
			{"id":"6f9619ff-8b86-d011-b42d-00c04fc964ff","score":0.5}],"status":"ok","time":0,"reranked":true,"mode":"rerank","detection":"configured"}`)
	}))
	defer ts.Close()
	r, err := NewRemote(RemoteConfig{URL: ts.URL, APIKey: "k1", TenantHeader: "x-tenant", Tenant: "alice", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	resp, err := r.Retrieve(context.Background(), []byte(`{"collection":"memories","text":"editor"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Get("Api-Key") != "k1" || got.Get("X-Tenant") != "alice" || gotBody != `{"collection":"memories","text":"editor"}` {
		t.Errorf("sent %v %s", got, gotBody)
	}
	ids := []native.PointID{{Num: 9007199254740993}, {UUID: "6f9619ff-8b86-d011-b42d-00c04fc964ff"}}
	if len(resp.Result) != 2 || resp.Result[0].ID != ids[0] || resp.Result[1].ID != ids[1] || !resp.Reranked || resp.Mode != "rerank" {
		t.Errorf("answer %+v", resp)
	}
	_, err = r.Retrieve(context.Background(), []byte(`{"collection":"nope","text":"editor"}`))
	if err == nil || err.Error() != "Not found: Collection `nope` doesn't exist! (HTTP 404)" {
		t.Errorf("error %v", err)
	}
}
