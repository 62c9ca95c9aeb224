package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/server/native"
)

// sent is one request the fake server received.
type sent struct {
	Method, Path, Query string
	Header              http.Header
	Body                map[string]any
}

// fakeAPI answers every request with status and answer, and records what
// it was sent.
type fakeAPI struct {
	mu      sync.Mutex
	got     []sent
	status  int
	answer  string
	headers map[string]string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s := sent{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: r.Header}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &s.Body); err != nil {
			http.Error(w, "not JSON", http.StatusTeapot)
			return
		}
	}
	f.mu.Lock()
	f.got = append(f.got, s)
	f.mu.Unlock()
	for k, v := range f.headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.status)
	_, _ = io.WriteString(w, f.answer)
}

func (f *fakeAPI) last(t *testing.T) sent {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.got) == 0 {
		t.Fatal("the server was sent nothing")
	}
	return f.got[len(f.got)-1]
}

func newFake(t *testing.T, status int, answer string) (*fakeAPI, *Client) {
	t.Helper()
	f := &fakeAPI{status: status, answer: answer}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, WithAPIKey("k1"), WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

const outcomeAnswer = `{"result":{"decision":"new","memory_id":"6f1c2a8e-0000-4000-8000-000000000001","confidence":0.7225,"observations":1,"dedup_tier":0,"judge":null,"replayed":false,"created_collection":true},"status":"ok","time":0.001}`

// TestRequests: each method sends the route, method, query and body the
// native API documents, with the credentials, and reads its answer.
func TestRequests(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	lp := -0.25
	tests := []struct {
		name      string
		answer    string
		call      func(context.Context, *Client) (any, error)
		want      sent
		wantValue any
	}{
		{
			name:   "observe",
			answer: outcomeAnswer,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Observe(ctx, Observation{Collection: "m", Text: "Dana lives in Lisbon", Source: "direct",
					SessionID: "s1", ObservedAt: at, Entities: []string{"Dana"}, ExtractorLogprob: &lp, ObservationID: "o1", Speaker: "Dana"})
			},
			want: sent{Method: "POST", Path: "/v1/observe", Body: map[string]any{
				"collection": "m", "text": "Dana lives in Lisbon", "source": "direct", "session_id": "s1",
				"observed_at": "2026-05-01T12:00:00Z", "entities": []any{"Dana"}, "extractor_logprob": -0.25, "observation_id": "o1",
				"speaker": "Dana"}},
			wantValue: &Outcome{Decision: "new", MemoryID: "6f1c2a8e-0000-4000-8000-000000000001", Confidence: 0.7225,
				Observations: 1, CreatedCollection: true},
		},
		{
			name:   "confirm",
			answer: outcomeAnswer,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Confirm(ctx, Confirmation{Collection: "m", MemoryID: "a/b", At: at})
			},
			want: sent{Method: "POST", Path: "/v1/memories/a%2Fb/confirm", Body: map[string]any{"collection": "m", "at": "2026-05-01T12:00:00Z"}},
		},
		{
			name:   "correct: the id goes in the path, not the body",
			answer: outcomeAnswer,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Correct(ctx, "42", Observation{Collection: "m", Text: "Dana lives in Porto", Corrects: "7", Speaker: "Ann"})
			},
			want: sent{Method: "POST", Path: "/v1/memories/42/correct", Body: map[string]any{"collection": "m", "text": "Dana lives in Porto",
				"speaker": "Ann"}},
		},
		{
			name:   "used",
			answer: outcomeAnswer,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Used(ctx, Confirmation{Collection: "m", MemoryID: "42", SessionID: "s2"})
			},
			want: sent{Method: "POST", Path: "/v1/memories/42/used", Body: map[string]any{"collection": "m", "session_id": "s2"}},
		},
		{
			name:   "retrieve: explain on by default, ids of both kinds",
			answer: `{"result":[{"id":7,"score":0.5,"base_score":0.6,"weight":0.8,"guard":null,"confidence":0.9,"freshness":1,"access_count":2,"access_boost":1.1,"render":true,"below_gate":false,"tier":"active","bucket":"high","retrievable":true,"protected":false,"folded_ids":["b2b2b2b2-0000-4000-8000-000000000002"],"dedup":"text_hash","judge_consulted":false,"problems":[],"payload":{"text":"Lives in Lisbon"}}],"status":"ok","time":0.002,"reranked":true,"mode":"rerank","detection":"has an audit companion","guard":{"applied":true,"relative":false,"best":0.6,"cutoff":0.45,"band":0.15,"floor":0,"relative_band":0,"from":"default","relevant":1,"beyond":0},"dropped":[{"id":9,"reason":"folded","into":7,"base_score":0.59}]}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				res, err := c.Retrieve(ctx, RetrieveRequest{Collection: "m", Text: "where does Dana live", Limit: 3})
				if err != nil {
					return nil, err
				}
				return []any{res.Results[0].ID, res.Results[0].Text(), res.Results[0].FoldedIDs, *res.Dropped[0].Into, res.Guard.Cutoff, *res.Results[0].AccessBoost}, nil
			},
			want:      sent{Method: "POST", Path: "/v1/retrieve", Body: map[string]any{"collection": "m", "text": "where does Dana live", "limit": 3.0, "explain": true}},
			wantValue: []any{ID("7"), "Lives in Lisbon", []ID{"b2b2b2b2-0000-4000-8000-000000000002"}, ID("7"), Float(0.45), 1.1},
		},
		{
			name: "retrieve: not counted, some payload keys; the embedder, the shadow report and nulls read",
			answer: `{"result":[` +
				`{"id":"a","score":0.5,"base_score":0.6,"weight":0.5,"guard":"relevant","confidence":0.9,"freshness":1,"access_count":0,"access_boost":1,"render":true,"below_gate":false,"tier":"active","bucket":"high","retrievable":true,"protected":true,"folded_ids":[],"dedup":null,"judge_consulted":false,"problems":[],` +
				`"explanation":{"unscored":false,"source":0.85,"confidence":0.9,"half_life":30,"days_to_archive":null,"decay_floor":0.1,"within_decay_floor":true}},` +
				`{"id":"b","score":0.4,"base_score":0.4,"weight":0.4,"guard":"relevant","confidence":null,"freshness":1,"access_count":0,"access_boost":1,"render":true,"below_gate":false,"tier":"active","bucket":null,"retrievable":true,"protected":false,"folded_ids":[],"dedup":null,"judge_consulted":false,"problems":[],` +
				`"explanation":{"unscored":true,"source":null,"confidence":null,"computed":null,"half_life":30,"days_to_archive":null}}],` +
				`"status":"ok","time":0,"reranked":true,"mode":"shadow","detection":"d",` +
				`"embedder":{"model":"all-minilm-l6-v2","same_threshold":0.9,"judge_threshold":null},` +
				`"guard":null,"shadow":{"store":["b","a"],"memrank":["a","b"],"overlap":1,"top_changed":true,"moved":2,"dropped":0},"dropped":[]}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				res, err := c.Retrieve(ctx, RetrieveRequest{Collection: "m", Vector: []float32{0.5, -1}, NoCountAccess: true, PayloadKeys: []string{"text"}})
				if err != nil {
					return nil, err
				}
				scored, unscored := res.Results[0].Explanation, res.Results[1].Explanation
				return []any{
					math.IsInf(float64(scored.DaysToArchive), 1), scored.WithinDecayFloor, scored.HalfLife, *scored.Source, *scored.Confidence,
					unscored.Source == nil, unscored.Confidence == nil, unscored.Computed == nil,
					res.Embedder.Model, *res.Embedder.SameThreshold, res.Embedder.JudgeThreshold == nil,
					res.Shadow.Store, res.Shadow.Overlap, res.Shadow.TopChanged, res.Shadow.Moved,
				}, nil
			},
			want: sent{Method: "POST", Path: "/v1/retrieve", Body: map[string]any{"collection": "m", "vector": []any{0.5, -1.0},
				"explain": true, "count_access": false, "with_payload": []any{"text"}}},
			wantValue: []any{true, true, Float(30), 0.85, 0.9, true, true, true, "all-minilm-l6-v2", 0.9, true, []ID{"b", "a"}, Float(1), true, 2},
		},
		{
			name: "retrieve as of a time: at sent in UTC and echoed; the bounded factors, the stored tier and the guard's counts read",
			answer: `{"result":[{"id":"a","score":0.61,"base_score":0.6,"weight":0.61,"guard":"relevant","confidence":0.9,` +
				`"freshness":0.5,"freshness_factor":0.86,"access_count":3,"access_boost":1.012,"render":true,"below_gate":false,` +
				`"tier":"dormant","stored_tier":"active","bucket":"high","retrievable":true,"protected":false,"folded_ids":[],` +
				`"dedup":null,"judge_consulted":false,"problems":[],` +
				`"explanation":{"unscored":false,"freshness":0.5,"freshness_weight":0.7,"focus":0.4,"freshness_factor":0.86,` +
				`"days_to_archive":12.5,"within_decay_floor":true,"access_weight":0.02,"access_boost":1.012,"tier":"dormant"}}],` +
				`"status":"ok","time":0,"reranked":true,"mode":"rerank","detection":"d",` +
				`"guard":{"applied":true,"relative":false,"best":0.6,"cutoff":0.57,"band":0.03,"floor":0.2,"relative_band":0.025,` +
				`"from":"default","relevant":1,"beyond":0,"folded":2,"focus":0.4},"dropped":[],"at":"2026-06-01T10:00:00Z"}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				// 12:00 in UTC+2 is 10:00 UTC.
				at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
				res, err := c.Retrieve(ctx, RetrieveRequest{Collection: "m", Text: "x", At: at, NoCountAccess: true})
				if err != nil {
					return nil, err
				}
				r, x := res.Results[0], res.Results[0].Explanation
				return []any{res.At.Equal(at), res.Empty, *r.FreshnessFactor, *r.Tier, *r.StoredTier, r.Retrievable,
					x.FreshnessWeight, x.Focus, x.FreshnessFactor, x.DaysToArchive, x.WithinDecayFloor, x.AccessWeight,
					res.Guard.Relevant, res.Guard.Beyond, res.Guard.Folded, res.Guard.Focus}, nil
			},
			want: sent{Method: "POST", Path: "/v1/retrieve", Body: map[string]any{"collection": "m", "text": "x", "explain": true,
				"count_access": false, "at": "2026-06-01T10:00:00Z"}},
			wantValue: []any{true, "", 0.86, "dormant", "active", true,
				Float(0.7), Float(0.4), Float(0.86), Float(12.5), true, Float(0.02), 1, 0, 2, Float(0.4)},
		},
		{
			name: "retrieve with include_archived: an archived memory, not retrievable; no at asked, none echoed; a nil stored tier",
			answer: `{"result":[{"id":"z","score":0.3,"base_score":0.3,"weight":0.3,"guard":"relevant","confidence":0.8,"freshness":1,` +
				`"freshness_factor":1,"access_count":0,"access_boost":1,"render":true,"below_gate":false,"tier":"archived",` +
				`"stored_tier":null,"bucket":"high","retrievable":false,"protected":false,"folded_ids":[],"dedup":null,` +
				`"judge_consulted":false,"problems":[],"archived":"archived"}],` +
				`"status":"ok","time":0,"reranked":true,"mode":"rerank","detection":"d","guard":null,"dropped":[]}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				res, err := c.Retrieve(ctx, RetrieveRequest{Collection: "m", Text: "x", IncludeArchived: true})
				if err != nil {
					return nil, err
				}
				r := res.Results[0]
				return []any{res.At.IsZero(), res.Empty, r.StoredTier == nil, r.Retrievable, r.Archived}, nil
			},
			want: sent{Method: "POST", Path: "/v1/retrieve", Body: map[string]any{"collection": "m", "text": "x", "explain": true,
				"include_archived": true}},
			wantValue: []any{true, "", true, false, "archived"},
		},
		{
			name: "retrieve: no payload, no explanation; an empty answer says why",
			answer: `{"result":[],"status":"ok","time":0,"reranked":true,"mode":"rerank","detection":"d","guard":null,` +
				`"dropped":[{"id":4,"reason":"superseded","base_score":0.5}],"empty":"all 1 candidates were left out: 1 superseded"}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				res, err := c.Retrieve(ctx, RetrieveRequest{Collection: "m", Text: "x", NoPayload: true, NoExplain: true})
				if err != nil {
					return nil, err
				}
				return []any{len(res.Results), res.Empty}, nil
			},
			want:      sent{Method: "POST", Path: "/v1/retrieve", Body: map[string]any{"collection": "m", "text": "x", "explain": false, "with_payload": false}},
			wantValue: []any{0, "all 1 candidates were left out: 1 superseded"},
		},
		{
			name: "observe: warnings read",
			answer: `{"result":{"decision":"inserted","memory_id":"m1","confidence":0.4675,"observations":0,"dedup_tier":0,"judge":null,` +
				`"replayed":false,"warnings":["the memory's confidence 0.4675 is below the retrieval gate 0.5"]},"status":"ok","time":0}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				o, err := c.Observe(ctx, Observation{Collection: "m", Text: "Dana keeps bees"})
				if err != nil {
					return nil, err
				}
				return o.Warnings, nil
			},
			want:      sent{Method: "POST", Path: "/v1/observe", Body: map[string]any{"collection": "m", "text": "Dana keeps bees"}},
			wantValue: []string{"the memory's confidence 0.4675 is below the retrieval gate 0.5"},
		},
		{
			name:   "observe: a confidence of null (not finite) reads as +Inf, not 0",
			answer: `{"result":{"decision":"rejected","memory_id":"","confidence":null,"observations":0,"dedup_tier":0,"judge":null,"replayed":false},"status":"ok","time":0}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				o, err := c.Observe(ctx, Observation{Collection: "m", Text: "x"})
				if err != nil {
					return nil, err
				}
				return math.IsInf(float64(o.Confidence), 1), nil
			},
			want:      sent{Method: "POST", Path: "/v1/observe", Body: map[string]any{"collection": "m", "text": "x"}},
			wantValue: true,
		},
		{
			name:   "history",
			answer: `{"result":{"id":"42","collection":"m","payload":{"text":"x"},"audit":[{"memory_id":"42","observation_id":"o1","reason":"insert","old":0,"new":0.7,"old_n":0,"new_n":1,"at":"2026-05-01T12:00:00Z","session_id":"s1","turn_id":"","source":0.85,"extractor":0.85,"type":1,"grounding":"supported","decision":"new"}]},"status":"ok","time":0}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				m, err := c.History(ctx, "m 1", "42")
				if err != nil {
					return nil, err
				}
				return []any{m.ID, len(m.Audit), m.Audit[0].Reason, m.Audit[0].At, m.Audit[0].NewN}, nil
			},
			want:      sent{Method: "GET", Path: "/v1/memories/42", Query: "collection=m+1"},
			wantValue: []any{"42", 1, "insert", at, 1},
		},
		{
			name:   "forget a session",
			answer: `{"result":{"collection":"m","memories_updated":1,"memories_deleted":2,"audit_redacted":3,"audit_deleted":0,"audit_kept":0,"audit_policy":"redact"},"status":"ok","time":0}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.ForgetSession(ctx, "m", "s1")
			},
			want:      sent{Method: "DELETE", Path: "/v1/sessions/s1", Query: "collection=m"},
			wantValue: &ForgetReport{Collection: "m", MemoriesUpdated: 1, MemoriesDeleted: 2, AuditRedacted: 3, AuditPolicy: "redact"},
		},
		{
			name:   "forget a memory",
			answer: `{"result":{"collection":"m","memories_updated":0,"memories_deleted":1,"audit_redacted":0,"audit_deleted":0,"audit_kept":0,"audit_policy":"redact"},"status":"ok","time":0}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.ForgetMemory(ctx, "m", "42")
			},
			want: sent{Method: "DELETE", Path: "/v1/memories/42", Query: "collection=m"},
		},
		{
			name:   "stats: null average and rate stay nil",
			answer: `{"result":{"collection":"m","method":"counted","memories":0,"archived":0,"superseded":0,"average_confidence":null,"buckets":{},"histogram":[0,0,0,0,0,0,0,0,0,0],"tiers":{},"tiers_as_of":null,"types":{},"decisions":{},"judge":{"calls":0,"cache_hits":0,"cache_misses":0,"fallbacks":0,"cache_hit_rate":null}},"status":"ok","time":0}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				st, err := c.Stats(ctx, "m")
				if err != nil {
					return nil, err
				}
				return []any{st.Method, st.AverageConfidence == nil, st.TiersAsOf == nil, st.Judge.CacheHitRate == nil, len(st.Histogram)}, nil
			},
			want:      sent{Method: "GET", Path: "/v1/stats", Query: "collection=m"},
			wantValue: []any{"counted", true, true, true, 10},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := newFake(t, http.StatusOK, tt.answer)
			got, err := tt.call(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			s := f.last(t)
			if k := s.Header.Get("api-key"); k != "k1" {
				t.Errorf("api-key = %q, want k1", k)
			}
			h := s.Header
			s.Header = nil
			if diff := cmp.Diff(tt.want, s); diff != "" {
				t.Errorf("sent (-want +got):\n%s", diff)
			}
			if tt.want.Body != nil && h.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type = %q", h.Get("Content-Type"))
			}
			if tt.wantValue != nil {
				if diff := cmp.Diff(tt.wantValue, got); diff != "" {
					t.Errorf("answer (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestErrors: every status becomes its kind with the server's message, and
// a refused connection is ErrConnection.
func TestErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		answer     string
		headers    map[string]string
		kind       error
		message    string
		retryAfter time.Duration
	}{
		{"bad request", 400, `{"status":{"error":"text: required"},"time":0}`, nil, ErrBadRequest, "text: required", 0},
		{"validation", 422, `{"status":{"error":"Validation error in JSON body: [limit: 0]"},"time":0}`, nil, ErrBadRequest, "Validation error in JSON body: [limit: 0]", 0},
		{"unauthorized", 401, `{"status":{"error":"Must provide an API key or an Authorization bearer token"},"time":0}`, nil, ErrUnauthorized, "Must provide an API key or an Authorization bearer token", 0},
		{"forbidden", 403, `{"status":{"error":"Forbidden"},"time":0}`, nil, ErrForbidden, "Forbidden", 0},
		{"not found", 404, `{"status":{"error":"Not found: memory 42"},"time":0}`, nil, ErrNotFound, "Not found: memory 42", 0},
		{"conflict", 409, `{"status":{"error":"being re-embedded"},"time":0}`, nil, ErrConflict, "being re-embedded", 0},
		{"rate limited", 429, `{"status":{"error":"too many requests"},"time":0}`, map[string]string{"Retry-After": "3"}, ErrRateLimited, "too many requests", 3 * time.Second},
		{"unavailable", 503, `{"status":{"error":"upstream down"},"time":0}`, nil, ErrUnavailable, "upstream down", 0},
		{"server", 500, `{"status":{"error":"Service internal error"},"time":0}`, nil, ErrServer, "Service internal error", 0},
		{"not our envelope", 502, `<html>bad gateway</html>`, nil, ErrUnavailable, "<html>bad gateway</html>", 0},
		{"the store missed its deadline: retry", 408, `{"status":{"error":"Timeout error: the store did not answer in time"},"time":0}`, nil, ErrUnavailable, "Timeout error: the store did not answer in time", 0},
		{"load shedding: retry after", 503, `{"status":{"error":"overloaded"},"time":0}`, map[string]string{"Retry-After": "2"}, ErrUnavailable, "overloaded", 2 * time.Second},
		{"method not allowed", 405, `{"status":{"error":"Method Not Allowed"},"time":0}`, nil, ErrBadRequest, "Method Not Allowed", 0},
		{"body too large", 413, `{"status":{"error":"Payload too large"},"time":0}`, nil, ErrBadRequest, "Payload too large", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := newFake(t, tt.status, tt.answer)
			f.headers = tt.headers
			_, err := c.Stats(context.Background(), "m")
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if !errors.Is(err, tt.kind) || e.Status != tt.status || e.Message != tt.message || e.RetryAfter != tt.retryAfter {
				t.Errorf("err = %#v, want kind %v, status %d, message %q, retry after %v", e, tt.kind, tt.status, tt.message, tt.retryAfter)
			}
			for _, other := range []error{ErrBadRequest, ErrNotFound, ErrConnection, ErrServer, ErrUnavailable} {
				if other != tt.kind && errors.Is(err, other) {
					t.Errorf("err is also %v", other)
				}
			}
		})
	}

	t.Run("connection refused", func(t *testing.T) {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := lis.Addr().String()
		lis.Close()
		c, err := New("http://" + addr)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Observe(context.Background(), Observation{Collection: "m", Text: "x"})
		var e *Error
		if !errors.Is(err, ErrConnection) || !errors.As(err, &e) || e.Status != 0 {
			t.Fatalf("err = %v, want ErrConnection with status 0", err)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
		defer srv.Close()
		defer close(release)
		c, err := New(srv.URL, WithTimeout(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Stats(context.Background(), "m")
		if !errors.Is(err, ErrConnection) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want ErrConnection wrapping the deadline", err)
		}
	})

	// "." and ".." are path steps the server's router cleans away:
	// /v1/memories/../confirm would be another route.
	for _, id := range []string{"", ".", ".."} {
		t.Run(fmt.Sprintf("id %q: refused before any request", id), func(t *testing.T) {
			f, c := newFake(t, 200, outcomeAnswer)
			ctx := context.Background()
			calls := map[string]func() error{
				"confirm":          func() error { _, err := c.Confirm(ctx, Confirmation{Collection: "m", MemoryID: id}); return err },
				"correct":          func() error { _, err := c.Correct(ctx, id, Observation{Collection: "m", Text: "x"}); return err },
				"used":             func() error { _, err := c.Used(ctx, Confirmation{Collection: "m", MemoryID: id}); return err },
				"history":          func() error { _, err := c.History(ctx, "m", id); return err },
				"forget a memory":  func() error { _, err := c.ForgetMemory(ctx, "m", id); return err },
				"forget a session": func() error { _, err := c.ForgetSession(ctx, "m", id); return err },
			}
			for name, call := range calls {
				if err := call(); !errors.Is(err, ErrBadRequest) {
					t.Errorf("%s: err = %v, want ErrBadRequest", name, err)
				}
			}
			if len(f.got) != 0 {
				t.Errorf("sent %d requests: %+v", len(f.got), f.got)
			}
		})
	}
	t.Run("an id with dots in it is one segment", func(t *testing.T) {
		f, c := newFake(t, 200, outcomeAnswer)
		if _, err := c.Confirm(context.Background(), Confirmation{Collection: "m", MemoryID: "..a"}); err != nil {
			t.Fatal(err)
		}
		if p := f.last(t).Path; p != "/v1/memories/..a/confirm" {
			t.Errorf("path = %q", p)
		}
	})
}

// TestCredentials: With copies the client, so one caller's credentials do
// not reach another's calls; empty values send no header.
func TestCredentials(t *testing.T) {
	f, base := newFake(t, 200, outcomeAnswer)
	alice := base.With(WithAPIKey(""), WithBearerToken("tok-a"), WithTenantHeader("x-tenant", "alice"))
	if _, err := alice.Stats(context.Background(), "m"); err != nil {
		t.Fatal(err)
	}
	h := f.last(t).Header
	if h.Get("Authorization") != "Bearer tok-a" || h.Get("x-tenant") != "alice" || h.Get("api-key") != "" {
		t.Errorf("alice sent %v", h)
	}
	if _, err := base.Stats(context.Background(), "m"); err != nil {
		t.Fatal(err)
	}
	h = f.last(t).Header
	if h.Get("Authorization") != "" || h.Get("x-tenant") != "" || h.Get("api-key") != "k1" {
		t.Errorf("the base client sent %v", h)
	}
}

func TestNewURL(t *testing.T) {
	tests := []struct {
		url, want string
		ok        bool
	}{
		{"", DefaultURL, true},
		{"http://localhost:6333/", "http://localhost:6333", true},
		{"https://memrank.example", "https://memrank.example", true},
		{"localhost:6333", "", false},
		{"ftp://x", "", false},
	}
	for _, tt := range tests {
		c, err := New(tt.url)
		if (err == nil) != tt.ok {
			t.Errorf("New(%q) err = %v", tt.url, err)
			continue
		}
		if err == nil && c.URL() != tt.want {
			t.Errorf("New(%q).URL() = %q, want %q", tt.url, c.URL(), tt.want)
		}
	}
}

// TestRetrieveRequestRefused: a request that cannot say what it asks is
// refused before it is sent.
func TestRetrieveRequestRefused(t *testing.T) {
	f, c := newFake(t, 200, `{"result":[],"status":"ok","time":0}`)
	_, err := c.Retrieve(context.Background(), RetrieveRequest{Collection: "m", Text: "x", NoPayload: true, PayloadKeys: []string{"text"}})
	if err == nil || !strings.Contains(err.Error(), "both NoPayload and PayloadKeys") {
		t.Errorf("err = %v", err)
	}
	if len(f.got) != 0 {
		t.Errorf("sent %d requests", len(f.got))
	}
}

// TestRetrieveRequestDecodes: the server's own decoder accepts what the
// client sends, and reads the same time from at.
func TestRetrieveRequestDecodes(t *testing.T) {
	at := time.Date(2026, 6, 1, 12, 30, 0, 500, time.FixedZone("", -5*3600))
	for _, r := range []RetrieveRequest{
		{Collection: "m", Text: "x"},
		{Collection: "m", Text: "x", At: at, NoCountAccess: true, IncludeArchived: true},
		{Collection: "m", Vector: []float32{0.5, 1}, At: at.UTC(), NoPayload: true, NoExplain: true, Mode: "off"},
	} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := native.DecodeRetrieveRequest(b)
		if err != nil {
			t.Fatalf("the server refuses %s: %v", b, err)
		}
		if !got.At.Equal(r.At) || got.At.IsZero() != r.At.IsZero() || got.CountAccess == r.NoCountAccess || got.IncludeArchived != r.IncludeArchived {
			t.Errorf("%s decoded as at %v, count_access %v, include_archived %v", b, got.At, got.CountAccess, got.IncludeArchived)
		}
	}
}

// TestObservationDecodes: the server's own decoder reads what the client
// sends for an observation, speaker included, and leaves out what is unset.
func TestObservationDecodes(t *testing.T) {
	lp := -0.5
	for _, o := range []Observation{
		{Collection: "m", Text: "x"},
		{Collection: "m", Text: "I went hiking", Speaker: "Caroline", Attribution: "self", Entities: []string{"Caroline"},
			ExtractorLogprob: &lp, ObservedAt: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)},
	} {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := native.DecodeObserveRequest(b)
		if err != nil {
			t.Fatalf("the server refuses %s: %v", b, err)
		}
		if got.Speaker != o.Speaker || got.Text != o.Text || got.Attribution != o.Attribution || !got.ObservedAt.Equal(o.ObservedAt) {
			t.Errorf("%s decoded as speaker %q, text %q, attribution %q, observed_at %v", b, got.Speaker, got.Text, got.Attribution, got.ObservedAt)
		}
		if o.Speaker == "" && strings.Contains(string(b), "speaker") {
			t.Errorf("%s sends an empty speaker", b)
		}
	}
}

// TestFloat: null reads as +Inf and is written back as null, as the server
// writes and reads its own numbers.
func TestFloat(t *testing.T) {
	tests := []struct {
		name, in, out string
		want          float64
	}{
		{"a number", "0.25", "0.25", 0.25},
		{"an exponent", "1e-05", "1e-05", 1e-5},
		{"null: unbounded", "null", "null", math.Inf(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Float
			if err := json.Unmarshal([]byte(tt.in), &f); err != nil {
				t.Fatal(err)
			}
			if float64(f) != tt.want {
				t.Errorf("read %s as %v, want %v", tt.in, f, tt.want)
			}
			b, err := json.Marshal(f)
			if err != nil || string(b) != tt.out {
				t.Errorf("wrote %s, %v; want %s", b, err, tt.out)
			}
		})
	}
	var f Float
	if err := json.Unmarshal([]byte(`"1"`), &f); err == nil {
		t.Error(`read "1" as a number`)
	}
}

// TestRedirectsAreNotFollowed: a redirect would hand the api-key, the
// tenant header and (307, 308) the body to the host it names; the client
// answers it as an error instead, whichever http.Client it was given, and
// the other host is sent nothing.
func TestRedirectsAreNotFollowed(t *testing.T) {
	var mu sync.Mutex
	var reached []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		reached = append(reached, fmt.Sprintf("%s %s api-key=%q x-tenant=%q body=%s", r.Method, r.URL, r.Header.Get("api-key"), r.Header.Get("x-tenant"), b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, outcomeAnswer)
	}))
	defer elsewhere.Close()
	followAll := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}

	tests := []struct {
		name     string
		status   int
		location string
		opts     []Option
		want     string // in the message: where it pointed
	}{
		{"307, the default client", http.StatusTemporaryRedirect, elsewhere.URL + "/v1/observe", nil, elsewhere.URL + "/v1/observe"},
		{"308, a client of the caller's", http.StatusPermanentRedirect, elsewhere.URL + "/v1/observe", []Option{WithHTTPClient(&http.Client{})}, elsewhere.URL},
		{"302, a client that follows every redirect", http.StatusFound, elsewhere.URL + "/x", []Option{WithHTTPClient(followAll)}, elsewhere.URL + "/x"},
		{"301 with user information in the Location", http.StatusMovedPermanently,
			strings.Replace(elsewhere.URL, "http://", "http://someone:hunter2@", 1), nil, "someone:xxxxx@"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, tt.location, tt.status)
			}))
			defer srv.Close()
			opts := append([]Option{WithAPIKey("secret-key"), WithTenantHeader("x-tenant", "alice"), WithTimeout(5 * time.Second)}, tt.opts...)
			c, err := New(srv.URL, opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []*Client{c, c.With(WithBearerToken("tok"))} {
				_, err = c.Observe(context.Background(), Observation{Collection: "m", Text: "Dana lives in Lisbon"})
				var e *Error
				if !errors.As(err, &e) || e.Status != tt.status {
					t.Fatalf("err = %v, want an *Error with status %d", err, tt.status)
				}
				for _, want := range []string{"does not redirect", tt.want} {
					if !strings.Contains(e.Message, want) {
						t.Errorf("message %q does not say %q", e.Message, want)
					}
				}
				if strings.Contains(err.Error(), "secret-key") || strings.Contains(err.Error(), "hunter2") {
					t.Errorf("message shows a credential: %q", err.Error())
				}
				for _, kind := range []error{ErrBadRequest, ErrNotFound, ErrUnavailable, ErrServer, ErrConnection} {
					if errors.Is(err, kind) {
						t.Errorf("err is %v", kind)
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reached) > 0 {
				t.Errorf("the redirect's host was sent %q", reached)
			}
		})
	}
	if followAll.CheckRedirect == nil || followAll.CheckRedirect(nil, nil) != nil {
		t.Error("WithHTTPClient changed the caller's http.Client")
	}
}
