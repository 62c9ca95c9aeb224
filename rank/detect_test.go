package rank_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank"
)

// probeSource is a fake store whose collection has the given points and,
// optionally, an audit companion with an embedder record; it counts the
// look-ups detection makes.
type probeSource struct {
	fakeSource
	companion bool
	embedder  string
	probeErr  error
	gate      chan context.Context // when set, each scroll hands over its context and waits
	pm        sync.Mutex
	exists    int
	scrolls   []*qdrant.ScrollPoints
}

func (p *probeSource) CollectionExists(_ context.Context, name string) (bool, error) {
	p.pm.Lock()
	defer p.pm.Unlock()
	p.exists++
	if p.probeErr != nil {
		return false, p.probeErr
	}
	return p.companion && memory.IsAuditCollection(name), nil
}

func (p *probeSource) Scroll(ctx context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, error) {
	p.pm.Lock()
	p.scrolls = append(p.scrolls, req)
	err, gate := p.probeErr, p.gate
	p.pm.Unlock()
	if gate != nil {
		gate <- ctx // the test decides when the scroll answers
		<-gate
	}
	if err != nil {
		return nil, err
	}
	return p.fakeSource.Scroll(ctx, req)
}

func (p *probeSource) Get(_ context.Context, req *qdrant.GetPoints) ([]*qdrant.RetrievedPoint, error) {
	if !p.companion || p.embedder == "" {
		return nil, nil
	}
	rec := memory.EmbedderRecord{Model: p.embedder, Dimensions: dim, Collection: "mem"}.Point()
	return []*qdrant.RetrievedPoint{{Id: rec.GetId(), Payload: rec.GetPayload()}}, nil
}

func (p *probeSource) looks() (exists, scrolls int) {
	p.pm.Lock()
	defer p.pm.Unlock()
	return p.exists, len(p.scrolls)
}

func plainPoints(payloads ...map[string]any) []*qdrant.ScoredPoint {
	var out []*qdrant.ScoredPoint
	for i, p := range payloads {
		out = append(out, scored(uint64(i+1), 0.9-float32(i)/10, p, nil))
	}
	return out
}

// TestDetection: with no configuration, collections of memrank memories
// are re-ranked and every other collection is passed through; the rule that
// decided is said; fields that plain collections also carry never count.
func TestDetection(t *testing.T) {
	mem := memoryPayload("a memory", 0.8, 3, nil)
	tests := []struct {
		name       string
		src        *probeSource
		cfg        func(*rank.Config)
		collection string
		want       rank.Detection
	}{
		{
			name: "memrank memories",
			src:  &probeSource{fakeSource: fakeSource{points: plainPoints(mem, mem, map[string]any{"text": "a wiki page"})}},
			want: rank.Detection{Mode: rank.ModeRerank, Memory: true, Rule: "2 of 3 sampled points are memrank memories", Guard: testGuard, GuardFrom: "default"},
		},
		{
			// One point (anyone's, a tenant's) cannot turn a collection of
			// documents into memories.
			name: "a minority of memories",
			src: &probeSource{fakeSource: fakeSource{points: plainPoints(map[string]any{"memrank_schema": 1},
				map[string]any{"content": "doc"}, map[string]any{"content": "doc 2"})}},
			want: rank.Detection{Mode: rank.ModeOff, Rule: "only 1 of 3 sampled points are memrank memories (a majority is needed)"},
		},
		{
			name: "with tenancy on, only a companion counts",
			src:  &probeSource{fakeSource: fakeSource{points: plainPoints(mem, mem)}},
			cfg:  func(c *rank.Config) { c.Detect.CompanionOnly = true },
			want: rank.Detection{Mode: rank.ModeOff, Rule: "no audit companion (with tenancy on, only an audit companion or the configuration makes a memory collection)"},
		},
		{
			name: "with tenancy on, a companion",
			src:  &probeSource{companion: true},
			cfg:  func(c *rank.Config) { c.Detect.CompanionOnly = true },
			want: rank.Detection{Mode: rank.ModeRerank, Memory: true, Rule: "has an audit companion (written by memrank)", Guard: testGuard, GuardFrom: "default"},
		},
		{
			name: "the schema marker alone",
			src:  &probeSource{fakeSource: fakeSource{points: plainPoints(map[string]any{"text": "x", "memrank_schema": 1})}},
			want: rank.Detection{Mode: rank.ModeRerank, Memory: true, Rule: "1 of 1 sampled points are memrank memories", Guard: testGuard, GuardFrom: "default"},
		},
		{
			name: "LangChain.js documents",
			src: &probeSource{fakeSource: fakeSource{points: plainPoints(
				map[string]any{"content": "doc", "metadata": map[string]any{"source": "a.md", "memory_type": "fact"}},
				map[string]any{"content": "doc 2", "metadata": map[string]any{}},
			)}},
			want: rank.Detection{Mode: rank.ModeOff, Rule: "none of 2 sampled points is a memrank memory"},
		},
		{
			name: "LangChain (Python) documents",
			src:  &probeSource{fakeSource: fakeSource{points: plainPoints(map[string]any{"page_content": "doc", "metadata": map[string]any{"source": "a.md"}})}},
			want: rank.Detection{Mode: rank.ModeOff, Rule: "none of 1 sampled points is a memrank memory"},
		},
		{
			name: "mem0 memories",
			src: &probeSource{fakeSource: fakeSource{points: plainPoints(map[string]any{
				"data": "Likes tea", "hash": "abc", "created_at": "2026-01-01T00:00:00Z", "updated_at": nil, "user_id": "alice",
			})}},
			want: rank.Detection{Mode: rank.ModeOff, Rule: "none of 1 sampled points is a memrank memory"},
		},
		{
			name: "shared fields, and access counts an older memrank wrote",
			src: &probeSource{fakeSource: fakeSource{points: plainPoints(map[string]any{
				"text": "t", "created_at": "2026-01-01T00:00:00Z", "user_id": "u", "hash": "h",
				"access_counts": map[string]any{"r1": 4}, "last_accessed_at": "2026-02-01T00:00:00Z",
			})}},
			want: rank.Detection{Mode: rank.ModeOff, Rule: "none of 1 sampled points is a memrank memory"},
		},
		{
			name: "a type and a source without an extractor or a confidence",
			src:  &probeSource{fakeSource: fakeSource{points: plainPoints(map[string]any{"text": "t", "memory_type": "fact", "source": "web"})}},
			want: rank.Detection{Mode: rank.ModeOff, Rule: "none of 1 sampled points is a memrank memory"},
		},
		{
			name: "written by memrank: an audit companion with its embedder",
			src:  &probeSource{companion: true, embedder: "text-embedding-3-small:512"},
			cfg: func(c *rank.Config) {
				c.EmbedderGuards = map[string]rank.GuardPatch{"text-embedding-3-small": {Band: ptr(0.1), Floor: ptr(0.4)}}
			},
			want: rank.Detection{Mode: rank.ModeRerank, Memory: true, Rule: "has an audit companion (written by memrank)",
				Embedder: "text-embedding-3-small:512", Guard: rank.Guard{Band: 0.1, Floor: 0.4, RelativeBand: testGuard.RelativeBand}, GuardFrom: "embedder text-embedding-3-small:512"},
		},
		{
			name: "a collection's own guard wins",
			src:  &probeSource{companion: true, embedder: "m"},
			cfg: func(c *rank.Config) {
				c.EmbedderGuards = map[string]rank.GuardPatch{"m": {Band: ptr(0.1)}}
				c.Collections = map[string]rank.CollectionConfig{"mem": {Guard: rank.GuardPatch{Off: ptr(true)}}}
			},
			want: rank.Detection{Mode: rank.ModeRerank, Memory: true, Rule: "has an audit companion (written by memrank)",
				Embedder: "m", Guard: func() rank.Guard { g := testGuard; g.Off = true; return g }(), GuardFrom: "collection"},
		},
		{
			name: "empty",
			src:  &probeSource{},
			want: rank.Detection{Mode: rank.ModeOff, Rule: "empty collection"},
		},
		{
			name: "unreadable",
			src:  &probeSource{probeErr: errors.New("unavailable")},
			want: rank.Detection{Mode: rank.ModeOff, Rule: "could not be read to recognise it"},
		},
		{
			name:       "an audit companion itself",
			src:        &probeSource{fakeSource: fakeSource{points: plainPoints(mem)}},
			collection: "mem" + memory.AuditSuffix,
			want:       rank.Detection{Mode: rank.ModeOff, Rule: "an audit companion: memrank's own records"},
		},
		{
			name: "configured to re-rank a plain collection",
			src:  &probeSource{fakeSource: fakeSource{points: plainPoints(map[string]any{"text": "t"})}},
			cfg:  func(c *rank.Config) { c.Collections = map[string]rank.CollectionConfig{"mem": {Mode: rank.ModeRerank}} },
			want: rank.Detection{Mode: rank.ModeRerank, Memory: true, Forced: true, Rule: "configured: rerank", Guard: testGuard, GuardFrom: "default"},
		},
		{
			name: "configured off",
			src:  &probeSource{fakeSource: fakeSource{points: plainPoints(mem)}},
			cfg:  func(c *rank.Config) { c.Collections = map[string]rank.CollectionConfig{"mem": {Mode: rank.ModeOff}} },
			want: rank.Detection{Mode: rank.ModeOff, Forced: true, Rule: "configured: off"},
		},
		{
			name: "every collection in shadow mode",
			src:  &probeSource{fakeSource: fakeSource{points: plainPoints(mem)}},
			cfg:  func(c *rank.Config) { c.Mode = rank.ModeShadow },
			want: rank.Detection{Mode: rank.ModeShadow, Memory: true, Forced: true, Rule: "configured: shadow (rank.mode)", Guard: testGuard, GuardFrom: "default"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.src.info = cosineInfo()
			r := newRanker(t, tc.src, func(c *rank.Config) {
				c.Guard = testGuard
				if tc.cfg != nil {
					tc.cfg(c)
				}
			})
			coll := tc.collection
			if coll == "" {
				coll = "mem"
			}
			got := r.Detect(context.Background(), coll)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if r.Reranks(context.Background(), coll) != (tc.want.Mode != rank.ModeOff) {
				t.Errorf("Reranks disagrees with the detection")
			}
			// A query reports the same detection, and a pass-through sends
			// the caller's request unchanged.
			req := &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryDense(query())}
			res, err := r.Query(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Detection.Rule != tc.want.Rule || res.Reranked != (tc.want.Mode == rank.ModeRerank) {
				t.Errorf("query: detection %q reranked %v", res.Detection.Rule, res.Reranked)
			}
			if tc.want.Mode == rank.ModeOff {
				if diff := cmp.Diff(req, tc.src.reqs[len(tc.src.reqs)-1], protocmp.Transform()); diff != "" {
					t.Errorf("pass-through request changed (-caller +upstream):\n%s", diff)
				}
			}
		})
	}
}

// TestDetectionSamplesOnlyWhatItNeeds: the sample reads the detection keys
// and no vectors, a bounded number of points.
func TestDetectionSamplesOnlyWhatItNeeds(t *testing.T) {
	src := &probeSource{fakeSource: fakeSource{info: cosineInfo(), points: plainPoints(map[string]any{"text": "t"})}}
	r := newRanker(t, src, func(c *rank.Config) { c.Detect.SampleSize = 7 })
	r.Detect(context.Background(), "docs")
	if len(src.scrolls) != 1 {
		t.Fatalf("%d scrolls", len(src.scrolls))
	}
	s := src.scrolls[0]
	want := &qdrant.ScrollPoints{
		CollectionName: "docs", Limit: qdrant.PtrOf(uint32(7)),
		WithPayload: qdrant.NewWithPayloadInclude("memrank_schema", "memory_type", "source", "extractor_model", "extractor_logprob", "confidence"),
		WithVectors: qdrant.NewWithVectors(false),
	}
	if diff := cmp.Diff(want, s, protocmp.Transform()); diff != "" {
		t.Errorf("sample (-want +got):\n%s", diff)
	}
}

// TestDetectionCache: a verdict is kept for the TTL; an empty collection's
// and a failed look-up's are not (the first memory may be written at once).
func TestDetectionCache(t *testing.T) {
	clock := fixedNow()
	now := func() time.Time { return clock }
	tests := []struct {
		name      string
		src       *probeSource
		wantLooks int // scrolls after three detections, the clock moved past the TTL before the third
	}{
		{name: "memories: cached until the TTL", src: &probeSource{fakeSource: fakeSource{points: plainPoints(memoryPayload("m", 0.9, 1, nil))}}, wantLooks: 2},
		{name: "plain: cached until the TTL", src: &probeSource{fakeSource: fakeSource{points: plainPoints(map[string]any{"text": "t"})}}, wantLooks: 2},
		{name: "empty: never cached", src: &probeSource{}, wantLooks: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock = fixedNow()
			tc.src.info = cosineInfo()
			r := newRanker(t, tc.src, func(c *rank.Config) { c.Now, c.Detect.TTL = now, time.Minute })
			r.Detect(context.Background(), "mem")
			clock = clock.Add(59 * time.Second)
			r.Detect(context.Background(), "mem")
			clock = clock.Add(2 * time.Second)
			r.Detect(context.Background(), "mem")
			if _, scrolls := tc.src.looks(); scrolls != tc.wantLooks {
				t.Errorf("%d samples, want %d", scrolls, tc.wantLooks)
			}
		})
	}
}

// TestQueryAs: a request may replace its collection's mode. Re-ranked, the
// best match (below both gates) is left out; passed through, it is first.
func TestQueryAs(t *testing.T) {
	pts := guardPoints(guardMem{id: 1, score: 0.95, conf: 0.2}, guardMem{id: 2, score: 0.9, age: 200, conf: 0.95}, guardMem{id: 3, score: 0.85, reads: 20})
	src := &fakeSource{info: cosineInfo(), points: pts}
	r := newRanker(t, src, func(c *rank.Config) { c.Guard = testGuard })
	for _, tc := range []struct {
		mode     rank.Mode
		want     []uint64
		reranked bool
		pass     string
	}{
		{rank.ModeAuto, []uint64{2, 3}, true, ""},
		{rank.ModeRerank, []uint64{2, 3}, true, ""},
		{rank.ModeOff, []uint64{1, 2, 3}, false, rank.PassThroughModeOff},
		{rank.ModeShadow, []uint64{1, 2, 3}, false, rank.PassThroughShadow},
	} {
		res, err := r.QueryAs(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())}, tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, ids(res.Points), cmpopts.EquateEmpty()); diff != "" || res.Reranked != tc.reranked || res.PassThrough != tc.pass {
			t.Errorf("%v: reranked %v pass %q, order (-want +got):\n%s", tc.mode, res.Reranked, res.PassThrough, diff)
		}
	}
}

// TestDetectionOutlivesACancelledCaller: the look-up two callers share goes
// on when the one that started it gives up, and the other gets its answer.
func TestDetectionOutlivesACancelledCaller(t *testing.T) {
	gate := make(chan context.Context)
	src := &probeSource{fakeSource: fakeSource{info: cosineInfo(), points: plainPoints(memoryPayload("m", 0.9, 1, nil))}, gate: gate}
	r := newRanker(t, src, nil)
	first, cancel := context.WithCancel(context.Background())
	done := make(chan rank.Detection, 2)
	go func() { done <- r.Detect(first, "mem") }()
	probeCtx := <-gate // the shared scroll has started, with the first caller
	go func() { done <- r.Detect(context.Background(), "mem") }()
	cancel()
	if got := <-done; got.Mode != rank.ModeOff {
		t.Errorf("the cancelled caller: %+v, want it to give up (served as plain)", got)
	}
	if probeCtx.Err() != nil {
		t.Errorf("the shared look-up was cancelled with its first caller: %v", probeCtx.Err())
	}
	gate <- nil // let the scroll answer
	if got := <-done; got.Mode != rank.ModeRerank {
		t.Errorf("the other caller: %+v, want the look-up's verdict", got)
	}
}

// TestDetectionCredentials: with memrank's own credentials configured, the
// look-ups carry them and not the caller's, and a failure is remembered
// for FailureTTL; with the caller's, a failure is not remembered.
func TestDetectionCredentials(t *testing.T) {
	own := func(ctx context.Context) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "api-key", "memrank-own")
	}
	caller := metadata.AppendToOutgoingContext(context.Background(), "api-key", "caller")
	for _, tc := range []struct {
		name      string
		auth      func(context.Context) context.Context
		wantKey   string
		wantLooks int // scrolls after two failed detections
	}{
		{"own credentials", own, "memrank-own", 1},
		{"the caller's", nil, "caller", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &mdSource{fakeSource: fakeSource{info: cosineInfo(), points: plainPoints(memoryPayload("m", 0.9, 1, nil))}}
			r := newRanker(t, src, func(c *rank.Config) { c.AuthContext = tc.auth })
			if got := r.Detect(caller, "mem"); got.Mode != rank.ModeRerank {
				t.Fatalf("%+v", got)
			}
			for _, seen := range src.seen {
				if key := strings.Fields(seen)[1]; key != tc.wantKey {
					t.Errorf("%s: api-key %s, want %s", seen, key, tc.wantKey)
				}
			}
			fail := &probeSource{fakeSource: fakeSource{info: cosineInfo()}, probeErr: errors.New("unavailable")}
			r = newRanker(t, fail, func(c *rank.Config) { c.AuthContext = tc.auth })
			r.Detect(caller, "mem")
			r.Detect(caller, "mem")
			if _, scrolls := fail.looks(); scrolls != tc.wantLooks {
				t.Errorf("%d samples after two failed detections, want %d", scrolls, tc.wantLooks)
			}
		})
	}
}
