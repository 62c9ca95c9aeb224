package native

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/telemetry/settings"
	"github.com/memrank/memrank/tenancy"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeRetriever records what it receives and answers a canned result or
// error.
type fakeRetriever struct {
	mu    sync.Mutex
	reqs  []*qdrant.QueryPoints
	modes []rank.Mode
	md    []metadata.MD
	spans []trace.SpanContext
	// counts says, per call, whether the call counted accesses.
	counts []bool
	res    *rank.Result
	err    error
}

func (f *fakeRetriever) QueryAs(ctx context.Context, req *qdrant.QueryPoints, mode rank.Mode) (*rank.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	f.modes = append(f.modes, mode)
	md, _ := metadata.FromOutgoingContext(ctx)
	f.md = append(f.md, md)
	f.spans = append(f.spans, trace.SpanContextFromContext(ctx))
	f.counts = append(f.counts, rank.CountsAccess(ctx))
	if f.err != nil {
		return nil, f.err
	}
	if f.res == nil {
		return &rank.Result{Reranked: true}, nil
	}
	return f.res, nil
}

func (f *fakeRetriever) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

// fakeEmbedder returns a fixed vector and records the texts.
type fakeEmbedder struct {
	mu    sync.Mutex
	texts []string
	vec   []float32
	err   error
}

func (f *fakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.texts = append(f.texts, texts...)
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = f.vec
	}
	return out, nil
}
func (f *fakeEmbedder) Dimensions() int { return len(f.vec) }
func (f *fakeEmbedder) Model() string   { return "fake-embedder-v1:4" }

func newHandler(t *testing.T, cfg Config) http.Handler {
	t.Helper()
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type response struct {
	code   int
	header http.Header
	body   []byte
}

func do(t *testing.T, h http.Handler, method, path, body string, header ...string) response {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json") // as every client sends it
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Content-Type" {
			req.Header.Del("Content-Type")
		}
		req.Header.Add(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return response{rec.Code, rec.Header(), rec.Body.Bytes()}
}

// qdrantError checks Qdrant's error envelope and returns the message.
func qdrantError(t *testing.T, r response) string {
	t.Helper()
	var env struct {
		Status *struct {
			Error *string `json:"error"`
		} `json:"status"`
		Time   *float64        `json:"time"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatalf("error body is not JSON: %v: %s", err, r.body)
	}
	if env.Status == nil || env.Status.Error == nil || *env.Status.Error == "" || env.Time == nil || env.Result != nil {
		t.Fatalf("not Qdrant's error envelope: %s", r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	return *env.Status.Error
}

// cannedResult has a u64 id above 2^53, a UUID id, a float 3.0 and an int 3
// in a payload, an unscored point and a protected one (days_to_archive
// +Inf) whose payload holds no tier.
func cannedResult() *rank.Result {
	payload, err := qdrantjson.DecodePayload([]byte(`{"text":"Dana uses Neovim","score":3.0,"count":3,"nested":{"big":9007199254740993}}`))
	if err != nil {
		panic(err)
	}
	big := qdrant.NewIDNum(18446744073709551557)
	uuid := qdrant.NewID("553f9722-8ebe-5636-9720-a487cf263fc6")
	return &rank.Result{
		Points: []*qdrant.ScoredPoint{
			{Id: big, Score: 0.7597, Payload: payload},
			{Id: uuid, Score: 0.25},
		},
		Explanations: []rank.Explanation{
			{
				ID: big, Weight: 0.7597, BaseScore: 0.75, Score: 0.7597, Guard: rank.GuardRelevant,
				Explanation: scoring.Explanation{
					Source: 0.95, Observations: 4, Repetition: 0.6167, Extractor: 0.9, Type: 0.75,
					Formula: 0.8509, Computed: 0.8509, StoredConfidence: true, Confidence: 0.851,
					AgeDays: 6, HalfLife: 365, Freshness: 0.9887, FreshnessWeight: 0.7, Focus: 0.4, FreshnessFactor: 0.9968,
					IdleDays: 4, DecayFloor: 0.18625, DaysToArchive: math.Inf(1), AccessCount: 64, AccessWeight: 0.02,
					AccessBoost: 1.0161, ConfidenceFactor: 1, Base: 0.75, Weight: 0.7597,
					WithinFloor: true, Protected: true, Tier: scoring.TierActive, Bucket: scoring.BucketHigh, Render: true,
				},
				FoldedIDs: []*qdrant.PointId{qdrant.NewIDNum(1002), qdrant.NewID("0d6c5d2c-0000-4000-8000-000000000001")},
				DedupTier: "text_hash",
			},
			{
				ID: uuid, Weight: 0.25, BaseScore: 0.25, Score: 0.25, Guard: rank.GuardBelowBand,
				Explanation: scoring.Explanation{
					Unscored: true, Freshness: 1, FreshnessWeight: 0.7, Focus: 0.4, FreshnessFactor: 1, AccessWeight: 0.02,
					AccessBoost: 1, Base: 0.25, Weight: 0.25, WithinFloor: true,
					Tier: scoring.TierActive, Render: true, DaysToArchive: math.Inf(1),
				},
				Problems: []string{`extractor_model: "x" unknown`},
			},
		},
		Reranked:   true,
		Candidates: 40,
		Detection:  rank.Detection{Mode: rank.ModeRerank, Memory: true, Rule: "has an audit companion (written by memrank)"},
		Guard: rank.GuardReport{Applied: true, Best: 0.75, Cutoff: 0.6, Guard: rank.Guard{Band: 0.15, Floor: 0.3, RelativeBand: 0.25},
			From: "default", Relevant: 1, Beyond: 1, Folded: 2, Focus: 0.4},
	}
}

func TestRetrieveVector(t *testing.T) {
	fr := &fakeRetriever{res: cannedResult()}
	h := newHandler(t, Config{Ranker: fr})
	body := `{"collection":"memories","vector":[0.1,0.2,0.3,0.4],"using":"dense",
		"filter":{"must":[{"key":"kind","match":{"value":"note"}}]},
		"limit":2,"offset":1,"score_threshold":0.125,"with_payload":["text","score","count","nested"]}`
	r := do(t, h, http.MethodPost, "/v1/retrieve", body)
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	want := &qdrant.QueryPoints{
		CollectionName: "memories",
		Query:          qdrant.NewQueryDense([]float32{0.1, 0.2, 0.3, 0.4}),
		Using:          qdrant.PtrOf("dense"),
		Filter:         &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "note")}},
		Limit:          qdrant.PtrOf(uint64(2)),
		Offset:         qdrant.PtrOf(uint64(1)),
		ScoreThreshold: qdrant.PtrOf(float32(0.125)),
		WithPayload:    qdrant.NewWithPayloadInclude("text", "score", "count", "nested"),
	}
	if fr.calls() != 1 {
		t.Fatalf("ranker called %d times", fr.calls())
	}
	if diff := cmp.Diff(want, fr.reqs[0], protocmp.Transform()); diff != "" {
		t.Errorf("ranker request (-want +got):\n%s", diff)
	}
	checkGolden(t, "retrieve_vector.golden.json", r.body)

	// Decoding the answer with the exported types keeps every digit.
	var resp RetrieveResponse
	if err := json.Unmarshal(r.body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Result[0].ID.Num != 18446744073709551557 || resp.Result[1].ID.UUID == "" {
		t.Errorf("ids %v %v", resp.Result[0].ID, resp.Result[1].ID)
	}
	if !math.IsInf(float64(resp.Result[0].Explanation.DaysToArchive), 1) {
		t.Errorf("days_to_archive %v, want +Inf (null)", resp.Result[0].Explanation.DaysToArchive)
	}
	for _, s := range []string{`"score":3.0`, `"count":3,`, `"big":9007199254740993`, `"id":18446744073709551557`, `"confidence":null`} {
		if !bytes.Contains(r.body, []byte(s)) {
			t.Errorf("body lacks %s", s)
		}
	}
}

// checkGolden compares the body, with its "time" zeroed, to a golden file.
func checkGolden(t *testing.T, name string, body []byte) {
	t.Helper()
	var v map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("body is not a JSON object: %v", err)
	}
	if _, ok := v["time"]; !ok {
		t.Fatal("no time in the envelope")
	}
	v["time"] = json.RawMessage("0")
	var got bytes.Buffer
	enc := json.NewEncoder(&got)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func TestRetrieveTextAndDefaults(t *testing.T) {
	fr := &fakeRetriever{res: cannedResult()}
	fe := &fakeEmbedder{vec: []float32{0.5, 0.5, 0.5, 0.5}}
	h := newHandler(t, Config{Ranker: fr, Embedder: fe})
	r := do(t, h, http.MethodPost, "/v1/retrieve", `{"collection":"memories","text":"what editor does Dana use","explain":false}`)
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	if diff := cmp.Diff([]string{"what editor does Dana use"}, fe.texts); diff != "" {
		t.Errorf("embedder texts:\n%s", diff)
	}
	want := &qdrant.QueryPoints{
		CollectionName: "memories",
		Query:          qdrant.NewQueryDense(fe.vec),
		Limit:          qdrant.PtrOf(uint64(DefaultLimit)),
		WithPayload:    qdrant.NewWithPayload(true),
	}
	if diff := cmp.Diff(want, fr.reqs[0], protocmp.Transform()); diff != "" {
		t.Errorf("ranker request (-want +got):\n%s", diff)
	}
	var resp RetrieveResponse
	if err := json.Unmarshal(r.body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Status != "ok" || !resp.Reranked || len(resp.Result) != 2 {
		t.Fatalf("response %+v", resp)
	}
	for _, res := range resp.Result {
		if res.Explanation != nil {
			t.Errorf("explain=false still explains %v", res.ID)
		}
	}
	if got := resp.Result[0]; got.Score != 0.7597 || got.BaseScore != 0.75 || *got.Confidence != 0.851 ||
		*got.AccessCount != 64 || !got.Protected || *got.Tier != "active" || *got.Bucket != "high" ||
		*got.Dedup != "text_hash" || len(got.FoldedIDs) != 2 || got.FoldedIDs[0].Num != 1002 {
		t.Errorf("first result %+v", got)
	}
	if got := resp.Result[1]; got.Confidence != nil || got.Bucket != nil || got.Dedup != nil || len(got.Problems) != 1 {
		t.Errorf("unscored result %+v", got)
	}
}

func TestPassThroughResult(t *testing.T) {
	fr := &fakeRetriever{res: &rank.Result{
		Points:      []*qdrant.ScoredPoint{{Id: qdrant.NewIDNum(7), Score: 12.5}},
		PassThrough: "euclid distance",
	}}
	h := newHandler(t, Config{Ranker: fr})
	r := do(t, h, http.MethodPost, "/v1/retrieve", `{"collection":"docs","vector":[1,2]}`)
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	checkGolden(t, "retrieve_passthrough.golden.json", r.body)
}

func TestBadInput(t *testing.T) {
	long := `{"collection":"c","text":"` + strings.Repeat("a", 2000) + `"}`
	tests := []struct {
		name string
		body string
		code int
		msg  string // a substring of the error
	}{
		{"empty body", ``, 400, "Format error in JSON body: EOF while parsing a value at line 1 column 0"},
		{"malformed JSON", `{"collection":`, 400, "Format error"},
		{"syntax error", `{"collection":"c",}`, 400, "Format error"},
		{"not an object", `[1,2]`, 400, "invalid type: sequence, expected a map"},
		{"trailing data", `{"collection":"c","vector":[1]} {}`, 400, "trailing characters at line 1 column 33"},
		{"unknown field", `{"collection":"c","vector":[1],"limt":3}`, 400, "unknown field `limt`, expected one of `collection`"},
		{"duplicate field", `{"collection":"c","vector":[1],"limit":3,"limit":4}`, 400, "duplicate field `limit`"},
		{"no collection", `{"vector":[1]}`, 422, "Validation error in JSON body: [collection: required]"},
		{"collection not a string", `{"collection":5,"vector":[1]}`, 400, "collection: want a string"},
		{"neither vector nor text", `{"collection":"c"}`, 422, "vector or text"},
		{"both vector and text", `{"collection":"c","vector":[1],"text":"x"}`, 422, "not both"},
		{"empty vector", `{"collection":"c","vector":[]}`, 422, "vector: must not be empty"},
		{"vector of strings", `{"collection":"c","vector":["a"]}`, 400, "vector: want an array of numbers"},
		{"vector overflows float32", `{"collection":"c","vector":[1e39]}`, 400, "vector"},
		{"empty text", `{"collection":"c","text":"  "}`, 422, "text: must not be empty"},
		{"text too long", long, 422, "text: at most 1024 bytes"},
		{"limit 0", `{"collection":"c","vector":[1],"limit":0}`, 422, "limit: must be between 1 and 1000, got 0"},
		{"limit negative", `{"collection":"c","vector":[1],"limit":-1}`, 422, "limit: must be between 1 and 1000, got -1"},
		{"limit huge", `{"collection":"c","vector":[1],"limit":1001}`, 422, "limit: must be between 1 and 1000"},
		{"limit beyond u64", `{"collection":"c","vector":[1],"limit":1e30}`, 422, "limit: must be between"},
		{"limit fraction", `{"collection":"c","vector":[1],"limit":2.5}`, 400, "limit: want an integer"},
		{"limit string", `{"collection":"c","vector":[1],"limit":"10"}`, 400, "limit: want an integer"},
		{"offset negative", `{"collection":"c","vector":[1],"offset":-3}`, 422, "offset: must be between"},
		{"bad explain", `{"collection":"c","vector":[1],"explain":"yes"}`, 400, "explain"},
		{"unknown mode", `{"collection":"c","vector":[1],"mode":"sometimes"}`, 422, `mode: "sometimes" is not one of auto, off`},
		{"rerank per request", `{"collection":"c","vector":[1],"mode":"rerank"}`, 422, `mode: "rerank" cannot be asked per request`},
		{"shadow per request", `{"collection":"c","vector":[1],"mode":"shadow"}`, 422, `mode: "shadow" cannot be asked per request`},
		{"mode not a string", `{"collection":"c","vector":[1],"mode":1}`, 400, "mode: want a string"},
		{"bad with_payload", `{"collection":"c","vector":[1],"with_payload":7}`, 400, "with_payload"},
		{"bad filter", `{"collection":"c","vector":[1],"filter":{"must":7}}`, 400, "filter"},
		{"filter failing validation", `{"collection":"c","vector":[1],"filter":{"must":[{"key":"a"}]}}`, 422,
			"Validation error in JSON body: [filter.must[0]: At least one field condition must be specified]"},
		{"invalid UTF-8", "{\"collection\":\"c\xff\",\"vector\":[1]}", 400, "not valid UTF-8"},
		{"huge body", `{"collection":"c","vector":[` + strings.Repeat("0.5,", 1000) + `1]}`, 400, "larger than allowed"},
	}
	fr := &fakeRetriever{}
	fe := &fakeEmbedder{vec: []float32{1}}
	h := newHandler(t, Config{Ranker: fr, Embedder: fe, MaxBodyBytes: 2048 + 64, MaxTextBytes: 1024})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, h, http.MethodPost, "/v1/retrieve", tt.body)
			if r.code != tt.code {
				t.Fatalf("status %d, want %d: %s", r.code, tt.code, r.body)
			}
			if msg := qdrantError(t, r); !strings.Contains(msg, tt.msg) {
				t.Errorf("error %q lacks %q", msg, tt.msg)
			}
		})
	}
	if fr.calls() != 0 || len(fe.texts) != 0 {
		t.Errorf("bad input reached the ranker (%d) or the embedder (%d)", fr.calls(), len(fe.texts))
	}
}

// goClientError wraps a status the way go-client does ("Query() failed:
// ..."), which status.FromError would fold into the message.
type goClientError struct{ err error }

func (e *goClientError) Error() string { return "Query() failed: memories: " + e.err.Error() }
func (e *goClientError) Unwrap() error { return e.err }

func TestUpstreamAndInternalErrors(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		code     int
		msg      string
		leakFree string // text that must not reach the caller
	}{
		{"unknown collection", &goClientError{status.Error(codes.NotFound, "Not found: Collection `nope` doesn't exist!")},
			404, "Not found: Collection `nope` doesn't exist!", "Query() failed"},
		{"dimension mismatch", status.Error(codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: 4, got 3"),
			400, "Wrong input: Vector dimension error: expected dim: 4, got 3", ""},
		{"upstream down", status.Error(codes.Unavailable, "connection error: desc = \"transport: Error while dialing: dial tcp 10.1.2.3:6334: connect: connection refused\""),
			503, "Service unavailable: the upstream is not reachable", "10.1.2.3"},
		{"rate limited", status.Error(codes.ResourceExhausted, "Rate limiting exceeded"), 429, "Rate limiting exceeded", ""},
		{"deadline", fmt.Errorf("rank: candidates: %w", context.DeadlineExceeded), 408, "Timeout error", ""},
		{"memrank refusal", rank.ErrInvalidRequest, 400, "Bad request: invalid request", "rank: "},
		{"grpc-go's own deadline", status.Error(codes.DeadlineExceeded, "context deadline exceeded"), 408, "Timeout error: the request did not complete in time", ""},
		{"internal", errors.New("rank: decode: index out of range at /srv/secret/path"), 500, "Service internal error", "/srv/secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			fr := &fakeRetriever{err: tt.err}
			h := newHandler(t, Config{Ranker: fr, Telemetry: settings.Settings{Logger: slogJSON(&logs)}})
			r := do(t, h, http.MethodPost, "/v1/retrieve", `{"collection":"memories","vector":[1,2,3]}`)
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
			if tt.code >= 500 && !strings.Contains(logs.String(), "retrieve failed") {
				t.Errorf("a %d was not logged: %s", tt.code, logs.String())
			}
		})
	}
}

func TestEmbedderErrors(t *testing.T) {
	t.Run("no embedder", func(t *testing.T) {
		h := newHandler(t, Config{Ranker: &fakeRetriever{}})
		r := do(t, h, http.MethodPost, "/v1/retrieve", `{"collection":"c","text":"hello"}`)
		if r.code != 400 || !strings.Contains(qdrantError(t, r), "embedder") {
			t.Fatalf("status %d: %s", r.code, r.body)
		}
	})
	t.Run("embedder fails", func(t *testing.T) {
		fr := &fakeRetriever{}
		fe := &fakeEmbedder{err: errors.New("POST https://embeddings.internal/v1: 401 bad key sk-123")}
		h := newHandler(t, Config{Ranker: fr, Embedder: fe})
		r := do(t, h, http.MethodPost, "/v1/retrieve", `{"collection":"c","text":"hello"}`)
		msg := qdrantError(t, r)
		if r.code != 500 || strings.Contains(msg, "sk-123") || strings.Contains(msg, "internal") && strings.Contains(msg, "embeddings.internal") {
			t.Fatalf("status %d: %q", r.code, msg)
		}
		if fr.calls() != 0 {
			t.Error("the ranker was called after the embedder failed")
		}
	})
}

func TestTenancy(t *testing.T) {
	fr := &fakeRetriever{}
	policy := &tenancy.Policy{Key: "user_id", Header: "x-tenant"}
	h := newHandler(t, Config{Ranker: fr, Tenancy: policy})
	const body = `{"collection":"memories","vector":[1,2],"filter":{"must":[{"key":"kind","match":{"value":"note"}}]}}`

	r := do(t, h, http.MethodPost, "/v1/retrieve", body)
	if r.code != http.StatusForbidden {
		t.Fatalf("no tenant: status %d: %s", r.code, r.body)
	}
	qdrantError(t, r)

	r = do(t, h, http.MethodPost, "/v1/retrieve", `{"collection":"memories","vector":[1,2],"filter":{"must":[{"key":"user_id","match":{"value":"bob"}}]}}`, "X-Tenant", "alice")
	if r.code != http.StatusBadRequest {
		t.Fatalf("filter on the tenant key: status %d: %s", r.code, r.body)
	}
	if fr.calls() != 0 {
		t.Fatal("a refused request reached the ranker")
	}

	r = do(t, h, http.MethodPost, "/v1/retrieve", body, "X-Tenant", "alice")
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	// Scoped by the policy itself (its exact form is tenancy's business),
	// and it does name the tenant.
	want, err := policy.ScopeFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "note")}}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fr.reqs[0].GetFilter().String(), "alice") {
		t.Errorf("filter %v does not name the tenant", fr.reqs[0].GetFilter())
	}
	if diff := cmp.Diff(want, fr.reqs[0].GetFilter(), protocmp.Transform()); diff != "" {
		t.Errorf("scoped filter (-want +got):\n%s", diff)
	}
}

func TestCredentialsForwarded(t *testing.T) {
	fr := &fakeRetriever{}
	h := newHandler(t, Config{Ranker: fr})
	r := do(t, h, http.MethodPost, "/v1/retrieve", `{"collection":"c","vector":[1]}`,
		"Api-Key", "secret", "Authorization", "Bearer tok", "Cookie", "session=1")
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	md := fr.md[0]
	if diff := cmp.Diff(metadata.Pairs("api-key", "secret", "authorization", "Bearer tok"), md); diff != "" {
		t.Errorf("outgoing metadata (-want +got):\n%s", diff)
	}
	// A custom AuthContext replaces the default.
	fr2 := &fakeRetriever{}
	h = newHandler(t, Config{Ranker: fr2, AuthContext: func(ctx context.Context, _ *http.Request) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "api-key", "memrank-own")
	}})
	do(t, h, http.MethodPost, "/v1/retrieve", `{"collection":"c","vector":[1]}`, "Api-Key", "secret")
	if got := fr2.md[0].Get("api-key"); len(got) != 1 || got[0] != "memrank-own" {
		t.Errorf("api-key %v", got)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	readyErr := errors.New("dial tcp 10.0.0.1:6334: refused")
	var mu sync.Mutex
	var current error
	block := false
	cfg := Config{
		Ranker:       &fakeRetriever{},
		ReadyTimeout: 50 * time.Millisecond,
		Ready: func(ctx context.Context) error {
			mu.Lock()
			err, b := current, block
			mu.Unlock()
			if b {
				<-ctx.Done()
				return ctx.Err()
			}
			return err
		},
		Metrics:    http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "up 1\n") }),
		ReadyCache: -1, // every probe checks: the test flips readiness
	}
	h := newHandler(t, cfg)
	set := func(err error, b bool) { mu.Lock(); current, block = err, b; mu.Unlock() }

	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		if r := do(t, h, http.MethodGet, p, ""); r.code != 200 {
			t.Errorf("GET %s: %d %s", p, r.code, r.body)
		}
	}
	set(readyErr, false)
	r := do(t, h, http.MethodGet, "/readyz", "")
	if r.code != 503 || strings.Contains(qdrantError(t, r), "10.0.0.1") {
		t.Errorf("not ready: %d %s", r.code, r.body)
	}
	if r := do(t, h, http.MethodGet, "/healthz", ""); r.code != 200 {
		t.Errorf("liveness follows readiness: %d", r.code)
	}
	set(nil, true)
	start := time.Now()
	r = do(t, h, http.MethodGet, "/readyz", "")
	if r.code != 503 || time.Since(start) > 5*time.Second {
		t.Errorf("a hanging check: %d after %v", r.code, time.Since(start))
	}
	if r := do(t, h, http.MethodGet, "/metrics", ""); r.code != 200 || string(r.body) != "up 1\n" {
		t.Errorf("metrics: %d %q", r.code, r.body)
	}
	if r := do(t, newHandler(t, Config{Ranker: &fakeRetriever{}}), http.MethodGet, "/metrics", ""); r.code != 404 {
		t.Errorf("metrics without a handler: %d", r.code)
	}
}

func TestRoutingErrors(t *testing.T) {
	h := newHandler(t, Config{Ranker: &fakeRetriever{}})
	tests := []struct {
		method, path string
		code         int
	}{
		{http.MethodGet, "/v1/retrieve", 405},
		{http.MethodPut, "/v1/retrieve", 405},
		{http.MethodPost, "/healthz", 405},
		{http.MethodPost, "/v1/observe", 501}, // no write path configured
		{http.MethodGet, "/nope", 404},
	}
	for _, tt := range tests {
		r := do(t, h, tt.method, tt.path, "")
		if r.code != tt.code {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, r.code, tt.code)
			continue
		}
		qdrantError(t, r)
		if tt.code == 405 && r.header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", tt.method, tt.path)
		}
	}
}

// TestTraceContinues: the caller's traceparent becomes the parent of the
// server span, the embed span and whatever the ranker starts.
func TestTraceContinues(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	fr := &fakeRetriever{}
	h := newHandler(t, Config{Ranker: fr, Embedder: &fakeEmbedder{vec: []float32{1, 0}},
		Telemetry: settings.Settings{TracerProvider: tp, Propagator: propagation.TraceContext{}}})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	r := do(t, h, http.MethodPost, "/v1/retrieve", `{"collection":"c","text":"hi"}`,
		"traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	if r.code != 200 {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	if got := fr.spans[0].TraceID().String(); got != traceID {
		t.Errorf("ranker's trace %s, want the caller's", got)
	}
	names := map[string]bool{}
	for _, s := range exp.GetSpans() {
		names[s.Name] = true
		if s.Name == "POST /v1/retrieve" {
			attrs := map[string]string{}
			for _, a := range s.Attributes {
				attrs[string(a.Key)] = a.Value.Emit()
			}
			if attrs["db.collection.name"] != "c" || attrs["memrank.query.kind"] != "text" || attrs["db.response.returned_rows"] != "0" {
				t.Errorf("server span attributes %v", attrs)
			}
		}
		if s.SpanContext.TraceID().String() != traceID {
			t.Errorf("span %s in trace %s", s.Name, s.SpanContext.TraceID())
		}
	}
	if !names["POST /v1/retrieve"] || !names["memrank.embed"] {
		t.Errorf("spans %v", names)
	}
}

func TestConfigValidate(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without a ranker")
	}
	if _, err := New(Config{Ranker: &fakeRetriever{}, Tenancy: &tenancy.Policy{Key: "user_id"}}); err == nil {
		t.Error("New with a tenancy policy naming no tenant source")
	}
	if _, err := New(Config{Ranker: &fakeRetriever{}, MaxBodyBytes: -1}); err == nil {
		t.Error("New with a negative limit")
	}
}

// TestRetrieveMode: a request may replace its collection's mode; the
// ranker gets it, and the answer says the mode and the rule.
func TestRetrieveMode(t *testing.T) {
	for _, tc := range []struct {
		body string
		want rank.Mode
	}{
		{`{"collection":"c","vector":[1]}`, rank.ModeAuto},
		{`{"collection":"c","vector":[1],"mode":"off"}`, rank.ModeOff},
		{`{"collection":"c","vector":[1],"mode":"OFF"}`, rank.ModeOff},
		{`{"collection":"c","vector":[1],"mode":"auto"}`, rank.ModeAuto},
	} {
		fr := &fakeRetriever{res: &rank.Result{PassThrough: rank.PassThroughModeOff, Detection: rank.Detection{Mode: rank.ModeOff, Forced: true, Rule: "requested: off"}}}
		h := newHandler(t, Config{Ranker: fr})
		r := do(t, h, http.MethodPost, "/v1/retrieve", tc.body)
		if r.code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", tc.body, r.code, r.body)
		}
		if len(fr.modes) != 1 || fr.modes[0] != tc.want {
			t.Errorf("%s: the ranker got modes %v, want %v", tc.body, fr.modes, tc.want)
		}
		var got RetrieveResponse
		if err := json.Unmarshal([]byte(r.body), &got); err != nil {
			t.Fatal(err)
		}
		if got.Mode != "off" || got.Detection != "requested: off" || got.Guard != nil || got.Reranked {
			t.Errorf("%s: mode %q detection %q guard %v", tc.body, got.Mode, got.Detection, got.Guard)
		}
	}
}

// TestReadyCached: a flood of probes is one upstream check a second, not
// one each (probes are not counted by the admission limit).
func TestReadyCached(t *testing.T) {
	var calls atomic.Int32
	h := newHandler(t, Config{Ranker: &fakeRetriever{}, Ready: func(context.Context) error { calls.Add(1); return nil }})
	for range 50 {
		if r := do(t, h, http.MethodGet, "/readyz", ""); r.code != 200 {
			t.Fatalf("readyz: %d", r.code)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d upstream checks for 50 probes, want 1", n)
	}
}
