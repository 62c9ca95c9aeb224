package native

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/telemetry/settings"
	"github.com/memrank/memrank/tenancy"
)

// call is one call the fakes received, with what travelled in its context.
type call struct {
	method      string
	obs         dedup.Observation
	conf        dedup.Confirmation
	collection  string
	tenant      string
	id          string
	md          metadata.MD
	hasDeadline bool
}

// fakeWritePath is a Writer and an Inspector that records its calls and
// answers canned values, or err. Like the engine, it first refuses what
// the write path's rules refuse (texts longer than maxText, or
// dedup.DefaultMaxTextBytes), and records only what they let through.
type fakeWritePath struct {
	mu      sync.Mutex
	calls   []call
	out     dedup.Outcome
	view    dedup.MemoryView
	stats   dedup.Stats
	err     error
	maxText int
}

func (f *fakeWritePath) validate(obs dedup.Observation) error {
	max := f.maxText
	if max == 0 {
		max = dedup.DefaultMaxTextBytes
	}
	return obs.Validate(max)
}

var (
	_ Writer    = (*fakeWritePath)(nil)
	_ Inspector = (*fakeWritePath)(nil)
)

func (f *fakeWritePath) record(ctx context.Context, c call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c.md, _ = metadata.FromOutgoingContext(ctx)
	_, c.hasDeadline = ctx.Deadline()
	f.calls = append(f.calls, c)
}

func (f *fakeWritePath) Observe(ctx context.Context, obs dedup.Observation) (dedup.Outcome, error) {
	if err := f.validate(obs); err != nil {
		return dedup.Outcome{}, err
	}
	f.record(ctx, call{method: "observe", obs: obs})
	return f.out, f.err
}

func (f *fakeWritePath) Confirm(ctx context.Context, c dedup.Confirmation) (dedup.Outcome, error) {
	if err := c.Validate(); err != nil {
		return dedup.Outcome{}, err
	}
	f.record(ctx, call{method: "confirm", conf: c})
	return f.out, f.err
}

func (f *fakeWritePath) Correct(ctx context.Context, obs dedup.Observation) (dedup.Outcome, error) {
	if err := f.validate(obs); err != nil {
		return dedup.Outcome{}, err
	}
	f.record(ctx, call{method: "correct", obs: obs})
	return f.out, f.err
}

func (f *fakeWritePath) Memory(ctx context.Context, collection, tenant, id string) (dedup.MemoryView, error) {
	f.record(ctx, call{method: "memory", collection: collection, tenant: tenant, id: id})
	return f.view, f.err
}

func (f *fakeWritePath) Stats(ctx context.Context, collection, tenant string) (dedup.Stats, error) {
	f.record(ctx, call{method: "stats", collection: collection, tenant: tenant})
	return f.stats, f.err
}

func (f *fakeWritePath) ScanStats(ctx context.Context, collection, tenant string) (dedup.Stats, error) {
	f.record(ctx, call{method: "scan-stats", collection: collection, tenant: tenant})
	return f.stats, f.err
}

func (f *fakeWritePath) received() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

func writeHandler(t *testing.T, f *fakeWritePath, cfg Config) http.Handler {
	t.Helper()
	cfg.Ranker = &fakeRetriever{}
	cfg.Writer, cfg.Inspector = f, f
	return newHandler(t, cfg)
}

const memID = "553f9722-8ebe-5636-9720-a487cf263fc6"

// fullObserve has every field of an observe body.
const fullObserve = `{"collection":"memories","text":"Dana uses Neovim","memory_type":"preference","source":"direct",
	"extractor_model":"gpt-4o","extractor_logprob":-0.125,"grounding":"partial","session_id":"s1","turn_id":"t4",
	"observed_at":"2026-05-01T12:00:00.5+02:00","modality":"chat","entities":["Dana","Neovim"],
	"decay_category":"preference","vector":[0.5,-0.25,1e-3],"observation_id":"obs-1","corrects":"42",
	"attribution":"self","speaker":"Dana"}`

func fullObservation() dedup.Observation {
	lp := -0.125
	return dedup.Observation{
		Collection: "memories", Text: "Dana uses Neovim", MemoryType: "preference", Source: "direct",
		ExtractorModel: "gpt-4o", ExtractorLogprob: &lp, Grounding: "partial", SessionID: "s1", TurnID: "t4",
		ObservedAt: time.Date(2026, 5, 1, 10, 0, 0, 5e8, time.UTC), Modality: "chat", Entities: []string{"Dana", "Neovim"},
		DecayCategory: "preference", Vector: []float32{0.5, -0.25, 1e-3}, ObservationID: "obs-1", Corrects: "42",
		Attribution: "self", Speaker: "Dana",
	}
}

// sameTime compares instants, whatever their zones.
var sameTime = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func TestObserve(t *testing.T) {
	f := &fakeWritePath{out: dedup.Outcome{
		Decision: dedup.DecisionIndependent, MemoryID: memID, Confidence: 0.8125, Observations: 3, Tier: 3,
		Judge:  &dedup.JudgeInfo{Verdict: "same", Cached: true, Reason: "both say Neovim is Dana's editor"},
		Merged: []string{"1002"},
	}}
	h := writeHandler(t, f, Config{})
	r := do(t, h, http.MethodPost, "/v1/observe", fullObserve, "Api-Key", "k1")
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	got := f.received()
	if len(got) != 1 || got[0].method != "observe" {
		t.Fatalf("calls %+v", got)
	}
	if diff := cmp.Diff(fullObservation(), got[0].obs, sameTime); diff != "" {
		t.Errorf("observation (-want +got):\n%s", diff)
	}
	if !got[0].hasDeadline {
		t.Error("the write path was called without a deadline")
	}
	if diff := cmp.Diff(metadata.Pairs("api-key", "k1"), got[0].md); diff != "" {
		t.Errorf("credentials (-want +got):\n%s", diff)
	}
	checkGolden(t, "observe.golden.json", r.body)

	var resp OutcomeResponse
	if err := json.Unmarshal(r.body, &resp); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f.out, resp.Result); diff != "" {
		t.Errorf("outcome read back (-want +got):\n%s", diff)
	}
}

func TestObserveMinimalAndRejected(t *testing.T) {
	f := &fakeWritePath{out: dedup.Outcome{Decision: dedup.DecisionRejected, Reason: "grounding not_supported: not stored"}}
	h := writeHandler(t, f, Config{})
	r := do(t, h, http.MethodPost, "/v1/observe", `{"collection":"m","text":"x","grounding":"not_supported","entities":null}`)
	if r.code != http.StatusOK {
		t.Fatalf("a rejection is a decision, not an error: status %d: %s", r.code, r.body)
	}
	want := dedup.Observation{Collection: "m", Text: "x", Grounding: "not_supported"}
	if diff := cmp.Diff(want, f.received()[0].obs); diff != "" {
		t.Errorf("observation (-want +got):\n%s", diff)
	}
	for _, s := range []string{`"decision":"rejected"`, `"memory_id":""`, `"judge":null`, `"reason":"grounding not_supported: not stored"`, `"replayed":false`, `"status":"ok"`} {
		if !bytes.Contains(r.body, []byte(s)) {
			t.Errorf("body lacks %s: %s", s, r.body)
		}
	}
	for _, s := range []string{`"superseded"`, `"merged"`} {
		if bytes.Contains(r.body, []byte(s)) {
			t.Errorf("body has an empty %s: %s", s, r.body)
		}
	}
}

func TestObserveBadInput(t *testing.T) {
	long := `{"collection":"c","text":"` + strings.Repeat("a", 1025) + `"}`
	tests := []struct {
		name string
		body string
		code int
		msg  string
	}{
		// A body that is not one JSON object: as /v1/retrieve words it
		// (TestBadBodyOneWording).
		{"empty body", ``, 400, "Format error in JSON body: EOF while parsing a value at line 1 column 0"},
		{"invalid JSON", `{"collection":"c",}`, 400, "Format error in JSON body: trailing comma at line 1 column 19"},
		{"truncated", `{"collection":"c","text":"x"`, 400, "Format error in JSON body: EOF while parsing an object at line 1 column 28"},
		{"not an object", `["c"]`, 400, "Format error in JSON body: invalid type: sequence, expected a map"},
		{"trailing data", `{"collection":"c","text":"x"} {}`, 400, "Format error in JSON body: trailing characters at line 1 column 31"},
		{"invalid UTF-8", "{\"collection\":\"c\",\"text\":\"\xff\"}", 400, "Format error in JSON body: invalid unicode code point (the body is not valid UTF-8)"},
		{"unknown field", `{"collection":"c","text":"x","memry_type":"fact"}`, 400, `Bad request: memry_type: unknown field (known: collection, text`},
		{"key in another case", `{"collection":"c","Text":"x"}`, 400, "Text: unknown field"},
		{"tenant in the body", `{"collection":"c","text":"x","tenant":"bob"}`, 400, "tenant: unknown field"},
		{"key twice", `{"collection":"c","text":"x","text":"y"}`, 400, "text: given twice"},
		{"empty key", `{"":1,"collection":"c","text":"x"}`, 400, `Bad request: "": unknown field`},
		{"key with a newline", `{"a\nb":1,"collection":"c","text":"x"}`, 400, `Bad request: "a\nb": unknown field`},
		{"missing text", `{"collection":"c"}`, 400, "text: required"},
		{"blank text", `{"collection":"c","text":" \n\t"}`, 400, "text: required and must not be blank"},
		{"text too long", long, 400, "text: at most 1024 bytes, got 1025"},
		{"text a number", `{"collection":"c","text":5}`, 400, "text: want a string, got a number"},
		{"missing collection", `{"text":"x"}`, 400, "collection: required"},
		{"long collection", `{"collection":"` + strings.Repeat("c", 256) + `","text":"x"}`, 400, "collection: at most 255 bytes, got 256"},
		{"text without letters", `{"collection":"c","text":"?!"}`, 400, "text: has no letters or digits"},
		{"collection an object", `{"collection":{},"text":"x"}`, 400, "collection: want a string, got an object"},
		{"session_id a number", `{"collection":"c","text":"x","session_id":7}`, 400, "session_id: want a string, got a number"},
		{"source a boolean", `{"collection":"c","text":"x","source":true}`, 400, "source: want a string, got a boolean"},
		{"speaker a number", `{"collection":"c","text":"x","speaker":7}`, 400, "speaker: want a string, got a number"},
		{"long turn_id", `{"collection":"c","text":"x","turn_id":"` + strings.Repeat("t", 257) + `"}`, 400, "turn_id: at most 256 bytes"},
		{"unknown grounding", `{"collection":"c","text":"x","grounding":"solid"}`, 400, `grounding: want one of supported, partial, unknown, not_supported, got "solid"`},
		{"logprob a string", `{"collection":"c","text":"x","extractor_logprob":"-1"}`, 400, "extractor_logprob: want a number, got a string"},
		{"logprob overflows", `{"collection":"c","text":"x","extractor_logprob":-1e400}`, 400, "extractor_logprob: want a finite number"},
		{"logprob positive", `{"collection":"c","text":"x","extractor_logprob":0.5}`, 400, "extractor_logprob: a mean log-probability is at most 0"},
		{"observed_at not RFC 3339", `{"collection":"c","text":"x","observed_at":"May 1st"}`, 400, `observed_at: want an RFC 3339 time such as 2026-05-01T12:00:00Z, got "May 1st"`},
		{"observed_at without a zone", `{"collection":"c","text":"x","observed_at":"2026-05-01T12:00:00"}`, 400, "observed_at: want an RFC 3339 time"},
		{"observed_at a number", `{"collection":"c","text":"x","observed_at":1714560000}`, 400, "observed_at: want a string, got a number"},
		{"entities a string", `{"collection":"c","text":"x","entities":"Dana"}`, 400, "entities: want an array of strings, got a string"},
		{"entity a number", `{"collection":"c","text":"x","entities":["Dana",3]}`, 400, "entities[1]: want a string, got a number"},
		{"entity blank", `{"collection":"c","text":"x","entities":[" "]}`, 400, "entities[0]: must not be blank"},
		{"too many entities", `{"collection":"c","text":"x","entities":[` + strings.Repeat(`"e",`, 64) + `"e"]}`, 400, "entities: at most 64 entries, got 65"},
		{"long entity", `{"collection":"c","text":"x","entities":["` + strings.Repeat("e", 257) + `"]}`, 400, "entities[0]: at most 256 bytes, got 257"},
		{"vector an object", `{"collection":"c","text":"x","vector":{"dense":[1]}}`, 400, "vector: want an array of numbers, got an object"},
		{"vector element a string", `{"collection":"c","text":"x","vector":[1,"2"]}`, 400, "vector[1]: want a number, got a string"},
		{"vector element beyond float32", `{"collection":"c","text":"x","vector":[1,2,1e39]}`, 400, "vector[2]: 1e39 is beyond float32's range"},
		{"vector element beyond float64", `{"collection":"c","text":"x","vector":[-1e400]}`, 400, "vector[0]: -1e400 is beyond float32's range"},
		{"vector empty", `{"collection":"c","text":"x","vector":[]}`, 400, "vector: must not be empty"},
		{"corrects not an id", `{"collection":"c","text":"x","corrects":"last one"}`, 400, `corrects: want a memory id (a UUID or an unsigned integer), got "last one"`},
		{"corrects negative", `{"collection":"c","text":"x","corrects":-4}`, 400, "corrects: want a memory id"},
		{"huge body", `{"collection":"c","text":"x","vector":[` + strings.Repeat("0.5,", 1000) + `1]}`, 400, "larger than allowed"},
	}
	// The text's limit is the write path's (dedup.Config.MaxTextBytes), not
	// the native API's.
	f := &fakeWritePath{maxText: 1024}
	h := writeHandler(t, f, Config{MaxBodyBytes: 3000})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, h, http.MethodPost, "/v1/observe", tt.body)
			if r.code != tt.code {
				t.Fatalf("status %d, want %d: %s", r.code, tt.code, r.body)
			}
			if msg := qdrantError(t, r); !strings.Contains(msg, tt.msg) {
				t.Errorf("error %q lacks %q", msg, tt.msg)
			}
		})
	}
	if n := len(f.received()); n != 0 {
		t.Errorf("the write path took bad input %d times", n)
	}
	// The limit is the write path's exactly.
	r := do(t, h, http.MethodPost, "/v1/observe", `{"collection":"c","text":"`+strings.Repeat("a", 1024)+`"}`)
	if r.code != http.StatusOK {
		t.Errorf("a text of the write path's limit: status %d: %s", r.code, r.body)
	}
}

// TestBadBodyOneWording: a body that is not one JSON object is answered
// in the same words on every /v1 route that reads one, Qdrant's, as the
// REST front answers it; what the CLI prints for it stays its own.
func TestBadBodyOneWording(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"empty", ``, "Format error in JSON body: EOF while parsing a value at line 1 column 0"},
		{"blank", " \n", "Format error in JSON body: EOF while parsing a value at line 2 column 0"},
		{"a syntax error", `{"collection":"c",}`, "Format error in JSON body: trailing comma at line 1 column 19"},
		{"cut short", `{"collection":"c"`, "Format error in JSON body: EOF while parsing an object at line 1 column 17"},
		{"trailing data", `{"collection":"c"} {}`, "Format error in JSON body: trailing characters at line 1 column 20"},
		{"not an object", `7`, "Format error in JSON body: invalid type: integer `7`, expected a map"},
		{"not UTF-8", "{\"collection\":\"c\xff\"}", "Format error in JSON body: invalid unicode code point (the body is not valid UTF-8)"},
	}
	routes := []string{"/v1/retrieve", "/v1/observe", "/v1/memories/7/confirm", "/v1/memories/7/correct"}
	h := writeHandler(t, &fakeWritePath{maxText: 1024}, Config{Embedder: &fakeEmbedder{vec: []float32{1}}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, route := range routes {
				r := do(t, h, http.MethodPost, route, tt.body)
				if msg := qdrantError(t, r); r.code != 400 || msg != tt.want {
					t.Errorf("%s: %d %q, want 400 %q", route, r.code, msg, tt.want)
				}
			}
			// The CLI and import print the field and what is wrong with it.
			if _, err := DecodeObserveRequest([]byte(tt.body)); err == nil || !strings.HasPrefix(err.Error(), "body: ") {
				t.Errorf("DecodeObserveRequest: %v, want a body: error", err)
			}
		})
	}
}

func TestWriteErrors(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		code     int
		msg      string
		leakFree string
	}{
		{"input refused by the engine", fmt.Errorf("dedup: observe in /srv/x: %w", &dedup.InputError{Field: "memory_type", Reason: `unknown type "opinion"`}),
			400, `Bad request: memory_type: unknown type "opinion"`, "/srv/x"},
		{"unknown memory", fmt.Errorf("dedup: get 553f in memories_v2 shard 3: %w", dedup.ErrNotFound), 404, "Not found: no such memory or collection", "shard"},
		{"embedder mismatch", fmt.Errorf("dedup: collection written with text-embedding-3-small:1536, have local:384: %w", dedup.ErrEmbedderMismatch),
			409, "the collection was written with another embedder", "1536"},
		{"embedder mismatch, named", fmt.Errorf("dedup: observe in /srv/x: %w", &dedup.MismatchError{Collection: "m", Had: "text-embedding-3-small", HadDims: 1536, Want: "memrank-local-hash-v1", WantDims: 384}),
			409, "Conflict: collection m was written with text-embedding-3-small (1536 dimensions); this write uses memrank-local-hash-v1 (384 dimensions): write it with that embedder, or use another collection", "/srv/x"},
		{"upstream down", status.Error(codes.Unavailable, "dial tcp 10.9.9.9:6334: refused"), 503, "the upstream is not reachable", "10.9.9.9"},
		{"deadline", fmt.Errorf("dedup: %w", context.DeadlineExceeded), 408, "Timeout error", ""},
		{"internal", errors.New("dedup: audit upsert: secret-host:6334 broke"), 500, "Service internal error", "secret-host"},
	}
	routes := []struct{ method, path, body string }{
		{http.MethodPost, "/v1/observe", `{"collection":"m","text":"x"}`},
		{http.MethodPost, "/v1/memories/" + memID + "/confirm", `{"collection":"m"}`},
		{http.MethodPost, "/v1/memories/7/correct", `{"collection":"m","text":"y"}`},
		{http.MethodGet, "/v1/memories/7?collection=m", ""},
		{http.MethodGet, "/v1/stats?collection=m", ""},
	}
	for _, tt := range tests {
		for _, rt := range routes {
			t.Run(tt.name+" "+rt.path, func(t *testing.T) {
				var logs bytes.Buffer
				f := &fakeWritePath{err: tt.err}
				h := writeHandler(t, f, Config{Telemetry: settings.Settings{Logger: slogJSON(&logs)}})
				r := do(t, h, rt.method, rt.path, rt.body)
				if r.code != tt.code {
					t.Fatalf("status %d, want %d: %s", r.code, tt.code, r.body)
				}
				msg := qdrantError(t, r)
				if !strings.Contains(msg, tt.msg) {
					t.Errorf("error %q lacks %q", msg, tt.msg)
				}
				if tt.leakFree != "" && strings.Contains(msg, tt.leakFree) {
					t.Errorf("error %q leaks %q", msg, tt.leakFree)
				}
				if tt.code >= 500 && !strings.Contains(logs.String(), " failed") {
					t.Errorf("a %d was not logged: %s", tt.code, logs.String())
				}
			})
		}
	}
}

func TestConfirm(t *testing.T) {
	f := &fakeWritePath{out: dedup.Outcome{Decision: dedup.DecisionConfirmed, MemoryID: memID, Confidence: 0.99, Observations: 5}}
	h := writeHandler(t, f, Config{})
	r := do(t, h, http.MethodPost, "/v1/memories/"+memID+"/confirm",
		`{"collection":"memories","observation_id":"c-1","session_id":"s9","turn_id":"t1","at":"2026-06-01T00:00:00Z"}`)
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	want := dedup.Confirmation{Collection: "memories", MemoryID: memID, ObservationID: "c-1", SessionID: "s9", TurnID: "t1",
		At: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	got := f.received()
	if len(got) != 1 || got[0].method != "confirm" {
		t.Fatalf("calls %+v", got)
	}
	if diff := cmp.Diff(want, got[0].conf, sameTime); diff != "" {
		t.Errorf("confirmation (-want +got):\n%s", diff)
	}
	var resp OutcomeResponse
	if err := json.Unmarshal(r.body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Result.Decision != "confirmed" || resp.Result.Confidence != 0.99 || resp.Result.Observations != 5 || resp.Status != "ok" {
		t.Errorf("response %s", r.body)
	}

	for _, tt := range []struct{ name, path, body, msg string }{
		{"no collection", "/v1/memories/7/confirm", `{}`, "collection: required"},
		{"unknown field", "/v1/memories/7/confirm", `{"collection":"m","text":"x"}`, "text: unknown field (known: collection, observation_id, session_id, turn_id, at)"},
		{"bad at", "/v1/memories/7/confirm", `{"collection":"m","at":"yesterday"}`, `at: want an RFC 3339 time`},
		{"bad id", "/v1/memories/not-an-id/confirm", `{"collection":"m"}`, `id: want a memory id (a UUID or an unsigned integer), got "not-an-id"`},
	} {
		r := do(t, h, http.MethodPost, tt.path, tt.body)
		if r.code != 400 || !strings.Contains(qdrantError(t, r), tt.msg) {
			t.Errorf("%s: status %d: %s", tt.name, r.code, r.body)
		}
	}
	if n := len(f.received()); n != 1 {
		t.Errorf("refused confirms reached the write path: %d calls", n)
	}
}

func TestCorrect(t *testing.T) {
	f := &fakeWritePath{out: dedup.Outcome{Decision: dedup.DecisionCorrected, MemoryID: "9f0c3bd8-3a5e-5d43-8e0f-2b6f5f1c0a11", Confidence: 0.9, Superseded: memID}}
	h := writeHandler(t, f, Config{})
	r := do(t, h, http.MethodPost, "/v1/memories/"+memID+"/correct",
		`{"collection":"memories","text":"Dana works at Initech, not Acme","source":"direct","session_id":"s2","turn_id":"t1"}`)
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	want := dedup.Observation{Collection: "memories", Text: "Dana works at Initech, not Acme", Source: "direct",
		SessionID: "s2", TurnID: "t1", Corrects: memID}
	got := f.received()
	if len(got) != 1 || got[0].method != "correct" {
		t.Fatalf("calls %+v", got)
	}
	if diff := cmp.Diff(want, got[0].obs); diff != "" {
		t.Errorf("correction (-want +got):\n%s", diff)
	}
	if !bytes.Contains(r.body, []byte(`"decision":"corrected"`)) || !bytes.Contains(r.body, []byte(`"superseded":"`+memID+`"`)) {
		t.Errorf("body %s", r.body)
	}

	// corrects in the body may repeat the path's id, not name another.
	r = do(t, h, http.MethodPost, "/v1/memories/7/correct", `{"collection":"m","text":"y","corrects":7}`)
	if r.code != http.StatusOK {
		t.Errorf("corrects = the path's id: status %d: %s", r.code, r.body)
	}
	r = do(t, h, http.MethodPost, "/v1/memories/7/correct", `{"collection":"m","text":"y","corrects":"8"}`)
	if r.code != 400 || !strings.Contains(qdrantError(t, r), `corrects: names "8", but the path corrects "7"`) {
		t.Errorf("corrects another id: status %d: %s", r.code, r.body)
	}
	// The id the body names is quoted, cut short.
	r = do(t, h, http.MethodPost, "/v1/memories/7/correct", `{"collection":"m","text":"y","corrects":"`+strings.Repeat("9", 5000)+`"}`)
	if msg := qdrantError(t, r); r.code != 400 || !strings.HasPrefix(msg, `Bad request: corrects: names "999`) || len(msg) > 200 {
		t.Errorf("corrects a long id: status %d: %.300s", r.code, msg)
	}
	r = do(t, h, http.MethodPost, "/v1/memories/7/correct", `{"collection":"m"}`)
	if r.code != 400 || !strings.Contains(qdrantError(t, r), "text: required") {
		t.Errorf("no text: status %d: %s", r.code, r.body)
	}
	if n := len(f.received()); n != 2 {
		t.Errorf("write path calls %d, want 2", n)
	}
}

func TestMemory(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	f := &fakeWritePath{view: dedup.MemoryView{
		ID: memID, Collection: "memories",
		Payload: []byte(`{"text":"Dana uses Neovim","observations":1,"confidence":0.75,"score":3.0,"big":18446744073709551615}`),
		Audit: []dedup.AuditRecord{
			{MemoryID: memID, ObservationID: "obs-1", Reason: "insert", Old: 0, New: 0.7, OldN: 0, NewN: 0, At: at,
				SessionID: "s1", TurnID: "t1", Source: 0.95, Extractor: 0.9, Type: 0.75, Grounding: "supported", Decision: dedup.DecisionInserted},
			{MemoryID: memID, Reason: "merge", Old: 0.7, New: 0.75, OldN: 0, NewN: 1, At: at.Add(time.Hour),
				SessionID: "s2", TurnID: "t3", Source: 0.95, Extractor: 0.9, Type: 0.75, Grounding: "supported",
				Decision: dedup.DecisionIndependent, Related: "1002"},
		},
	}}
	h := writeHandler(t, f, Config{})
	r := do(t, h, http.MethodGet, "/v1/memories/"+memID+"?collection=memories", "")
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	want := []call{{method: "memory", collection: "memories", id: memID, hasDeadline: true}}
	if diff := cmp.Diff(want, f.received(), cmp.AllowUnexported(call{}), cmpopts.IgnoreFields(call{}, "md")); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	checkGolden(t, "memory.golden.json", r.body)
	// The payload is the stored JSON as it is: integers stay integers.
	for _, s := range []string{`"score":3.0`, `"big":18446744073709551615`, `"at":"2026-05-01T10:00:00Z"`} {
		if !bytes.Contains(r.body, []byte(s)) {
			t.Errorf("body lacks %s", s)
		}
	}
	if n := bytes.Count(r.body, []byte(`"related"`)); n != 1 {
		t.Errorf("related written %d times, want once (only on the merge)", n)
	}

	f.view = dedup.MemoryView{ID: "7", Collection: "m"}
	r = do(t, h, http.MethodGet, "/v1/memories/7?collection=m", "")
	if r.code != http.StatusOK || !bytes.Contains(r.body, []byte(`"payload":{},"audit":[]`)) {
		t.Errorf("an empty view: status %d: %s", r.code, r.body)
	}
	f.view = dedup.MemoryView{ID: "7", Collection: "m", Payload: []byte(`{"text":`)}
	r = do(t, h, http.MethodGet, "/v1/memories/7?collection=m", "")
	if r.code != http.StatusInternalServerError {
		t.Errorf("an invalid stored payload: status %d: %s", r.code, r.body)
	}

	for _, tt := range []struct{ name, path, msg string }{
		{"no collection", "/v1/memories/7", "collection: required (?collection=NAME)"},
		{"empty collection", "/v1/memories/7?collection=", "collection: required"},
		{"collection twice", "/v1/memories/7?collection=a&collection=b", "collection: given twice"},
		{"unknown parameter", "/v1/memories/7?collection=m&with_vector=true", `unknown query parameter "with_vector"`},
		{"bad id", "/v1/memories/x%20y?collection=m", `id: want a memory id`},
		{"id beyond u64", "/v1/memories/18446744073709551616?collection=m", `id: want a memory id`},
	} {
		r := do(t, h, http.MethodGet, tt.path, "")
		if r.code != 400 || !strings.Contains(qdrantError(t, r), tt.msg) {
			t.Errorf("%s: status %d: %s", tt.name, r.code, r.body)
		}
	}
}

func TestStats(t *testing.T) {
	f := &fakeWritePath{stats: dedup.Stats{
		Collection: "memories", Method: "counted", Memories: 120, Archived: 2, Superseded: 4, Average: 0.74,
		Buckets:   map[string]int{"high": 70, "medium": 40, "low": 10},
		Histogram: []int{0, 0, 0, 0, 10, 0, 20, 20, 40, 30},
		Tiers:     map[string]int{"active": 100, "dormant": 20, "archived": 2},
		TiersAsOf: time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC),
		Types:     map[string]int{"fact": 80, "preference": 40},
		Decisions: map[string]int64{"inserted": 124, "restatement": 300, "independent": 12},
		Judge:     dedup.JudgeStats{Calls: 9, CacheHits: 27, CacheMisses: 9, Fallbacks: 1, CacheHitRate: 0.75},
	}}
	h := writeHandler(t, f, Config{})
	r := do(t, h, http.MethodGet, "/v1/stats?collection=memories", "")
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	if got := f.received(); len(got) != 1 || got[0].method != "stats" || got[0].collection != "memories" || got[0].tenant != "" {
		t.Errorf("calls %+v", got)
	}
	checkGolden(t, "stats.golden.json", r.body)

	// ?exact=true scans; anything else but false is refused.
	r = do(t, h, http.MethodGet, "/v1/stats?collection=memories&exact=true", "")
	if got := f.received(); r.code != http.StatusOK || len(got) != 2 || got[1].method != "scan-stats" {
		t.Errorf("exact: status %d, calls %+v", r.code, got)
	}
	for _, q := range []string{"exact=yes", "exact=true&exact=true", "limit=3"} {
		if r = do(t, h, http.MethodGet, "/v1/stats?collection=memories&"+q, ""); r.code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", q, r.code)
		}
	}
	if r = do(t, h, http.MethodGet, "/v1/stats?collection=memories&exact=false", ""); r.code != http.StatusOK {
		t.Errorf("exact=false: status %d", r.code)
	}

	// An empty collection: maps are objects, never null; no look-ups, no
	// hit rate.
	f.stats = dedup.Stats{}
	r = do(t, h, http.MethodGet, "/v1/stats?collection=fresh", "")
	var resp struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(r.body, &resp); err != nil || r.code != 200 {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	wantRaw := map[string]string{
		"collection": `"fresh"`, "method": `""`, "memories": "0", "archived": "0", "superseded": "0", "average_confidence": "null",
		"buckets": "{}", "histogram": "[]", "tiers": "{}", "tiers_as_of": "null", "types": "{}", "decisions": "{}",
		"judge": `{"calls":0,"cache_hits":0,"cache_misses":0,"fallbacks":0,"cache_hit_rate":null}`,
	}
	gotRaw := map[string]string{}
	for k, v := range resp.Result {
		gotRaw[k] = string(v)
	}
	if diff := cmp.Diff(wantRaw, gotRaw); diff != "" {
		t.Errorf("empty stats (-want +got):\n%s", diff)
	}
}

func TestWriteRouting(t *testing.T) {
	f := &fakeWritePath{}
	h := writeHandler(t, f, Config{})
	tests := []struct {
		method, path string
		code         int
		allow        string
	}{
		{http.MethodGet, "/v1/observe", 405, "POST"},
		{http.MethodPut, "/v1/observe", 405, "POST"},
		{http.MethodPost, "/v1/memories/7", 405, "GET, DELETE"},
		{http.MethodPut, "/v1/memories/7", 405, "GET, DELETE"},
		{http.MethodGet, "/v1/sessions/s1", 405, "DELETE"},
		{http.MethodGet, "/v1/memories/7/confirm", 405, "POST"},
		{http.MethodGet, "/v1/memories/7/correct", 405, "POST"},
		{http.MethodPost, "/v1/stats", 405, "GET"},
		{http.MethodGet, "/v1/memories/", 404, ""},
		{http.MethodGet, "/v1/memories/7/audit", 404, ""},
		{http.MethodPost, "/v1/memories/7/forget", 404, ""},
	}
	for _, tt := range tests {
		r := do(t, h, tt.method, tt.path, "")
		if r.code != tt.code {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, r.code, tt.code)
			continue
		}
		qdrantError(t, r)
		if r.header.Get("Allow") != tt.allow {
			t.Errorf("%s %s: Allow %q, want %q", tt.method, tt.path, r.header.Get("Allow"), tt.allow)
		}
	}
	if n := len(f.received()); n != 0 {
		t.Errorf("misrouted requests reached the write path %d times", n)
	}
}

func TestWritePathNotConfigured(t *testing.T) {
	h := newHandler(t, Config{Ranker: &fakeRetriever{}})
	for _, rt := range []struct{ method, path, body string }{
		{http.MethodPost, "/v1/observe", `{"collection":"m","text":"x"}`},
		{http.MethodPost, "/v1/memories/7/confirm", `{"collection":"m"}`},
		{http.MethodPost, "/v1/memories/7/correct", `{"collection":"m","text":"x"}`},
		{http.MethodGet, "/v1/memories/7?collection=m", ""},
		{http.MethodGet, "/v1/stats?collection=m", ""},
	} {
		r := do(t, h, rt.method, rt.path, rt.body)
		if r.code != http.StatusNotImplemented || !strings.Contains(qdrantError(t, r), "the write path is not configured") {
			t.Errorf("%s %s: status %d: %s", rt.method, rt.path, r.code, r.body)
		}
	}
	// Retrieve still works.
	if r := do(t, h, http.MethodPost, "/v1/retrieve", `{"collection":"c","vector":[1]}`); r.code != http.StatusOK {
		t.Errorf("retrieve: status %d: %s", r.code, r.body)
	}
}

func TestWriteTenancy(t *testing.T) {
	routes := []struct{ method, path, body string }{
		{http.MethodPost, "/v1/observe", `{"collection":"m","text":"x"}`},
		{http.MethodPost, "/v1/memories/7/confirm", `{"collection":"m"}`},
		{http.MethodPost, "/v1/memories/7/correct", `{"collection":"m","text":"x"}`},
		{http.MethodGet, "/v1/memories/7?collection=m", ""},
		{http.MethodGet, "/v1/stats?collection=m", ""},
	}
	tenantOf := func(c call) string {
		switch c.method {
		case "observe", "correct":
			return c.obs.Tenant
		case "confirm":
			return c.conf.Tenant
		}
		return c.tenant
	}
	t.Run("header", func(t *testing.T) {
		f := &fakeWritePath{}
		h := writeHandler(t, f, Config{Tenancy: &tenancy.Policy{Key: "user_id", Header: "x-tenant"}})
		for _, rt := range routes {
			r := do(t, h, rt.method, rt.path, rt.body)
			if r.code != http.StatusForbidden {
				t.Errorf("%s %s without a tenant: status %d: %s", rt.method, rt.path, r.code, r.body)
			}
			r = do(t, h, rt.method, rt.path, rt.body, "X-Tenant", "alice", "X-Tenant", "bob")
			if r.code != http.StatusForbidden {
				t.Errorf("%s %s with two tenants: status %d: %s", rt.method, rt.path, r.code, r.body)
			}
		}
		if n := len(f.received()); n != 0 {
			t.Fatalf("requests without a tenant reached the write path %d times", n)
		}
		for _, rt := range routes {
			if r := do(t, h, rt.method, rt.path, rt.body, "X-Tenant", "alice"); r.code != http.StatusOK {
				t.Errorf("%s %s: status %d: %s", rt.method, rt.path, r.code, r.body)
			}
		}
		got := f.received()
		if len(got) != len(routes) {
			t.Fatalf("calls %d, want %d", len(got), len(routes))
		}
		for _, c := range got {
			if tenantOf(c) != "alice" {
				t.Errorf("%s: tenant %q, want alice", c.method, tenantOf(c))
			}
		}
	})
	t.Run("api keys", func(t *testing.T) {
		f := &fakeWritePath{}
		h := writeHandler(t, f, Config{Tenancy: &tenancy.Policy{Key: "user_id", APIKeys: map[string]string{"k-carol": "carol"}}})
		if r := do(t, h, http.MethodPost, "/v1/observe", routes[0].body, "Api-Key", "k-unknown"); r.code != http.StatusUnauthorized {
			t.Errorf("an unknown key: status %d: %s", r.code, r.body)
		}
		if r := do(t, h, http.MethodPost, "/v1/observe", routes[0].body, "Authorization", "Bearer k-carol"); r.code != http.StatusOK {
			t.Fatalf("status %d: %s", r.code, r.body)
		}
		got := f.received()
		if len(got) != 1 || got[0].obs.Tenant != "carol" {
			t.Errorf("calls %+v", got)
		}
	})
	t.Run("off", func(t *testing.T) {
		f := &fakeWritePath{}
		h := writeHandler(t, f, Config{})
		if r := do(t, h, http.MethodPost, "/v1/observe", routes[0].body, "X-Tenant", "alice"); r.code != http.StatusOK {
			t.Fatalf("status %d: %s", r.code, r.body)
		}
		if got := f.received(); got[0].obs.Tenant != "" {
			t.Errorf("tenancy off, tenant %q", got[0].obs.Tenant)
		}
	})
}

func TestWriteTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	f := &fakeWritePath{out: dedup.Outcome{Decision: dedup.DecisionRestatement, MemoryID: "7", Tier: 1}}
	h := writeHandler(t, f, Config{Telemetry: settings.Settings{TracerProvider: tp, Propagator: propagation.TraceContext{}}})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, rt := range []struct{ method, path, body string }{
		{http.MethodPost, "/v1/observe", `{"collection":"m","text":"x"}`},
		{http.MethodGet, "/v1/stats?collection=m", ""},
	} {
		if r := do(t, h, rt.method, rt.path, rt.body, "traceparent", "00-"+traceID+"-00f067aa0ba902b7-01"); r.code != 200 {
			t.Fatalf("status %d: %s", r.code, r.body)
		}
	}
	spans := map[string]map[string]string{}
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID().String() != traceID {
			t.Errorf("span %s in trace %s", s.Name, s.SpanContext.TraceID())
		}
		attrs := map[string]string{}
		for _, a := range s.Attributes {
			attrs[string(a.Key)] = a.Value.Emit()
		}
		spans[s.Name] = attrs
	}
	obs, ok := spans["POST /v1/observe"]
	if !ok || obs["db.collection.name"] != "m" || obs["memrank.decision"] != "restatement" || obs["memrank.dedup.tier"] != "1" {
		t.Errorf("observe span %v (all: %v)", obs, spans)
	}
	if st, ok := spans["GET /v1/stats"]; !ok || st["db.collection.name"] != "m" {
		t.Errorf("stats span %v", st)
	}
}

func TestDecodeObserveRequest(t *testing.T) {
	obs, err := DecodeObserveRequest([]byte(fullObserve))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fullObservation(), obs, sameTime); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Collection is the caller's to supply.
	obs, err = DecodeObserveRequest([]byte(`{"text":"x"}`))
	if err != nil || obs.Collection != "" || obs.Text != "x" {
		t.Errorf("no collection: %+v, %v", obs, err)
	}
	// The values are the write path's to judge (dedup.Observation.Validate):
	// decoded as they are.
	lp := 0.5
	want := dedup.Observation{Text: " ", Grounding: "solid", ExtractorLogprob: &lp, Entities: []string{""}, Vector: []float32{},
		Corrects: "-4", SessionID: strings.Repeat("s", dedup.MaxFieldBytes+1)}
	obs, err = DecodeObserveRequest([]byte(`{"text":" ","grounding":"solid","extractor_logprob":0.5,"entities":[""],"vector":[],
		"corrects":-4,"session_id":"` + want.SessionID + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, obs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	for _, tt := range []struct{ body, field, reason string }{
		{`{"text":"x","entities":["a",null]}`, "entities[1]", "want a string, got null"},
		{`{"text":"x","observed_at":"2026-13-01T00:00:00Z"}`, "observed_at", `want an RFC 3339 time such as 2026-05-01T12:00:00Z, got "2026-13-01T00:00:00Z"`},
		{`{"text":"x","nope":1}`, "nope", "unknown field"},
		{`{"text":"x"`, "body", "the JSON ends in the middle of a value"},
		{`7`, "body", "want a JSON object, got a number"},
	} {
		_, err := DecodeObserveRequest([]byte(tt.body))
		var ie *dedup.InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: error %v (%T) is not an InputError", tt.body, err, err)
			continue
		}
		if ie.Field != tt.field || !strings.HasPrefix(ie.Reason, tt.reason) {
			t.Errorf("%s: field %q reason %q, want %q %q", tt.body, ie.Field, ie.Reason, tt.field, tt.reason)
		}
	}
}

func TestEncodeObserveRequest(t *testing.T) {
	for name, obs := range map[string]dedup.Observation{
		"full":    fullObservation(),
		"minimal": {Text: "<b>Dana</b> & \"Neovim\"\n"},
		"empty entities and a zero logprob": {Collection: "c", Text: "x", Entities: []string{}, ExtractorLogprob: new(float64),
			ObservedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("", -7*3600))},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := EncodeObserveRequest(obs)
			if err != nil {
				t.Fatal(err)
			}
			back, err := DecodeObserveRequest(b)
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if diff := cmp.Diff(obs, back, sameTime); diff != "" {
				t.Errorf("%s (-want +got):\n%s", b, diff)
			}
		})
	}
	// The tenant is never in the body.
	b, err := EncodeObserveRequest(dedup.Observation{Text: "x", Tenant: "alice"})
	if err != nil || bytes.Contains(b, []byte("alice")) {
		t.Errorf("%s, %v", b, err)
	}
}

// FuzzDecodeObserveRequest: any body decodes or is refused with an
// InputError naming a field, never panics; what is decoded survives
// EncodeObserveRequest unchanged, and what the write path's rules then
// accept satisfies the limits.
func FuzzDecodeObserveRequest(f *testing.F) {
	for _, s := range []string{
		fullObserve,
		`{"text":"x"}`,
		`{"collection":"c","text":"x","vector":[1e39]}`,
		`{"collection":"c","text":"x","entities":["a","b"],"corrects":18446744073709551615}`,
		`{"text":"x","extractor_logprob":-0,"observed_at":"2026-05-01T12:00:00-07:00"}`,
		`{"text":"x","Text":"y"}`, `{"text":"x","text":"x"}`, `{""`,
		"{\"text\":\"\xff\"}", `null`, `[]`, `{}`, ``, `{"text":"x"} 1`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		obs, err := DecodeObserveRequest(body)
		if err != nil {
			var ie *dedup.InputError
			if !errors.As(err, &ie) || ie.Field == "" || ie.Reason == "" {
				t.Fatalf("error %v (%T) is not an InputError naming a field", err, err)
			}
			return
		}
		for _, x := range obs.Vector {
			if math.IsInf(float64(x), 0) || math.IsNaN(float64(x)) {
				t.Fatalf("vector %v decoded", obs.Vector)
			}
		}
		if obs.Tenant != "" {
			t.Fatal("a tenant from the body")
		}
		if err := obs.Validate(dedup.DefaultMaxTextBytes); err == nil {
			if strings.TrimSpace(obs.Text) == "" || len(obs.Text) > dedup.DefaultMaxTextBytes || len(obs.Entities) > dedup.MaxEntities {
				t.Fatalf("invalid observation accepted: %+v", obs)
			}
		} else if ie := (*dedup.InputError)(nil); !errors.As(err, &ie) || ie.Field == "" || ie.Reason == "" {
			t.Fatalf("rule error %v (%T) is not an InputError naming a field", err, err)
		}
		b, err := EncodeObserveRequest(obs)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeObserveRequest(b)
		if err != nil {
			t.Fatalf("re-encoded %s: %v", b, err)
		}
		if diff := cmp.Diff(obs, back, sameTime); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}

func BenchmarkDecodeObserveRequest(b *testing.B) {
	vec := make([]string, 384)
	for i := range vec {
		vec[i] = fmt.Sprintf("%.6f", math.Sin(float64(i)))
	}
	withVector := []byte(`{"collection":"memories","text":"Dana uses Neovim as her main editor","memory_type":"preference",
		"source":"direct","extractor_model":"gpt-4o","grounding":"supported","session_id":"s1","turn_id":"t4",
		"entities":["Dana","Neovim"],"vector":[` + strings.Join(vec, ",") + `]}`)
	for _, bc := range []struct {
		name string
		body []byte
	}{{"full", []byte(fullObserve)}, {"384-dim vector", withVector}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				if _, err := DecodeObserveRequest(bc.body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestIdempotencyKey: the Idempotency-Key header is the observation id of
// a body without one, on every write route; it cannot contradict the body.
func TestIdempotencyKey(t *testing.T) {
	for _, rt := range []struct{ path, body string }{
		{"/v1/observe", `{"collection":"m","text":"x"}`},
		{"/v1/memories/7/confirm", `{"collection":"m"}`},
		{"/v1/memories/7/correct", `{"collection":"m","text":"x"}`},
	} {
		t.Run(rt.path, func(t *testing.T) {
			f := &fakeWritePath{}
			h := writeHandler(t, f, Config{})
			if r := do(t, h, http.MethodPost, rt.path, rt.body, "Idempotency-Key", "retry-1"); r.code != http.StatusOK {
				t.Fatalf("status %d: %s", r.code, r.body)
			}
			got := f.received()
			if len(got) != 1 || got[0].obs.ObservationID+got[0].conf.ObservationID != "retry-1" {
				t.Errorf("calls %+v", got)
			}
			withID := strings.TrimSuffix(rt.body, "}") + `,"observation_id":"other"}`
			r := do(t, h, http.MethodPost, rt.path, withID, "Idempotency-Key", "retry-1")
			if r.code != http.StatusBadRequest || !strings.Contains(qdrantError(t, r), "Idempotency-Key: differs from the body's observation_id") {
				t.Errorf("a contradicting key: status %d: %s", r.code, r.body)
			}
		})
	}
}
