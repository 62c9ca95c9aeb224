package rank_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/qdrantwire"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/telemetry/settings"
)

// cacheFixture is a memory collection with duplicates of every tier, an
// excluded memory, a low-confidence one and a point that is not a memory.
func cacheFixture(scale float32) []pt {
	sc := func(v []float32) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = x * scale
		}
		return out
	}
	superseded := memoryPayload("tea, once", 0.9, 1, nil)
	superseded["superseded_by"] = "1"
	pts := []pt{
		{id: 1, vec: sc(vecAt(0.9, 1)), payload: memoryPayload("likes tea", 0.9, 1, map[string]any{"a": 3})},
		{id: 2, vec: sc(vecAt(0.85, 2)), payload: memoryPayload("Likes tea!", 0.9, 2, nil)},
		{id: 3, vec: sc(near(vecAt(0.9, 1), 0.97, 3)), payload: memoryPayload("enjoys green tea", 0.8, 3, nil)},
		{id: 4, vec: sc(vecAt(0.95, 4)), payload: superseded},
		{id: 5, vec: sc(vecAt(0.7, 5)), payload: memoryPayload("unsure about tea", 0.2, 1, nil)},
		{id: 6, vec: sc(vecAt(0.6, 6)), payload: map[string]any{"source": "wiki/tea.md"}},
	}
	for i := 7; i < 20; i++ {
		pts = append(pts, pt{id: uint64(i), vec: sc(vecAt(0.8-float64(i)*0.03, i)), payload: memoryPayload(fmt.Sprintf("memory %d about tea", i), 0.7, float64(i), nil)})
	}
	return pts
}

// otherVec is a vector no point of cacheFixture has under the same id
// (0.51 + 0.08 x (id mod 5) to the query, never the fixture's similarity
// for that id), for the cases that recreate the collection "with other
// vectors". A point recreated with its old vector is served its old
// payload from the cache until the TTL (CandidateCacheConfig says so), and
// every candidate's payload counts: its age moves the query's focus, and
// so every weight, even when it is not returned.
func otherVec(id uint64) []float32 {
	return vecAt(0.51+float64(id%5)*0.08, int(id)%dim)
}

// cacheMetrics reads the candidate cache's hit and miss counters.
func cacheMetrics(t *testing.T, reader *sdkmetric.ManualReader) (hits, misses int64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			d, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, dp := range d.DataPoints { // misses have a reason each
				switch m.Name {
				case "memrank.rank.candidate_cache.hits":
					hits += dp.Value
				case "memrank.rank.candidate_cache.misses":
					misses += dp.Value
				}
			}
		}
	}
	return hits, misses
}

// cachedRanker is a ranker with the candidate cache on, its metrics read
// by the returned reader.
func cachedRanker(t *testing.T, src rank.Source, mut func(*rank.Config)) (*rank.Ranker, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	r := newRanker(t, src, func(c *rank.Config) {
		c.Guard = testGuard
		c.CandidateCache = rank.CandidateCacheConfig{MaxBytes: 1 << 20, TTL: time.Hour}
		c.Telemetry = settings.Settings{MeterProvider: mp}
		if mut != nil {
			mut(c)
		}
	})
	return r, reader
}

// sameAsUncached asks plain, then cached, and fails unless the answers
// are alike (sameAnswer).
func sameAsUncached(t *testing.T, label string, plain, cached *rank.Ranker, req *qdrant.QueryPoints, opts ...cmp.Option) {
	t.Helper()
	want, err := plain.Query(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cached.Query(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	sameAnswer(t, label, want, got, opts...)
}

// sameAnswer fails unless got is want in every field a caller sees.
func sameAnswer(t *testing.T, label string, want, got *rank.Result, opts ...cmp.Option) {
	t.Helper()
	opts = append(opts, protocmp.Transform(), cmpopts.EquateEmpty(), cmpopts.IgnoreFields(rank.Result{}, "PayloadWire"))
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("%s: the cached answer differs (-uncached +cached):\n%s", label, diff)
	}
	samePayloadWire(t, label, got)
}

// samePayloadWire fails unless a reply encoded from res's payload bytes
// decodes to its points.
func samePayloadWire(t *testing.T, label string, res *rank.Result) {
	t.Helper()
	if res.PayloadWire == nil {
		return
	}
	if len(res.PayloadWire) != len(res.Points) {
		t.Fatalf("%s: %d payload wires for %d points", label, len(res.PayloadWire), len(res.Points))
	}
	b, err := qdrantwire.EncodeScoredWire(res.Points, res.PayloadWire, 0)
	if err != nil {
		t.Fatal(err)
	}
	var back qdrant.QueryResponse
	if err := proto.Unmarshal(b, &back); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	if diff := cmp.Diff(res.Points, back.GetResult(), protocmp.Transform(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: the reply from payload bytes differs (-points +reply):\n%s", label, diff)
	}
}

func cacheQueries() []struct {
	name string
	req  *qdrant.QueryPoints
} {
	return []struct {
		name string
		req  *qdrant.QueryPoints
	}{
		{name: "defaults", req: &qdrant.QueryPoints{Query: qdrant.NewQueryDense(query())}},
		{name: "payload", req: &qdrant.QueryPoints{Query: qdrant.NewQueryDense(query()), Limit: u64(5), WithPayload: qdrant.NewWithPayload(true)}},
		{name: "payload include", req: &qdrant.QueryPoints{Query: qdrant.NewQueryDense(query()), WithPayload: qdrant.NewWithPayloadInclude("text", "access_counts")}},
		{name: "payload exclude", req: &qdrant.QueryPoints{Query: qdrant.NewQueryDense(query()), WithPayload: qdrant.NewWithPayloadExclude("text")}},
		{name: "vectors and payload", req: &qdrant.QueryPoints{Query: qdrant.NewQueryDense(query()), WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)}},
		{name: "offset", req: &qdrant.QueryPoints{Query: qdrant.NewQueryDense(query()), Limit: u64(3), Offset: u64(2), WithPayload: qdrant.NewWithPayload(true)}},
		{name: "limit 1", req: &qdrant.QueryPoints{Query: qdrant.NewQueryDense(query()), Limit: u64(1), WithPayload: qdrant.NewWithPayload(true)}},
		{name: "score threshold", req: &qdrant.QueryPoints{Query: qdrant.NewQueryDense(query()), ScoreThreshold: func() *float32 { f := float32(0.6); return &f }(), WithPayload: qdrant.NewWithPayload(true)}},
		{name: "filter", req: &qdrant.QueryPoints{Query: qdrant.NewQueryDense(query()), Filter: &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatch("text", "likes tea")}}, WithPayload: qdrant.NewWithPayload(true)}},
		{name: "unnormalised query", req: &qdrant.QueryPoints{Query: qdrant.NewQueryDense(func() []float32 { v := query(); v[0], v[3] = 3, 0.5; return v }()), WithPayload: qdrant.NewWithPayload(true)}},
		{name: "by id (not cached)", req: &qdrant.QueryPoints{Query: qdrant.NewQueryID(qdrant.NewIDNum(1)), WithPayload: qdrant.NewWithPayload(true)}},
	}
}

// TestCandidateCacheSameAnswers: with the cache on, cold and warm, every
// answer is the one without it: points, order, scores, payloads, vectors,
// explanations, what was dropped; and the warm answers come from the cache.
func TestCandidateCacheSameAnswers(t *testing.T) {
	for _, coll := range []struct {
		name  string
		dist  qdrant.Distance
		scale float32
	}{{"cosine", qdrant.Distance_Cosine, 1}, {"dot", qdrant.Distance_Dot, 1.5}} {
		t.Run(coll.name, func(t *testing.T) {
			for _, wire := range []bool{false, true} {
				name := "go-client listings"
				if wire {
					name = "wire listings"
				}
				t.Run(name, func(t *testing.T) {
					e := newEnv(t)
					e.create(t, "mem", dim, coll.dist)
					e.upsert(t, "mem", cacheFixture(coll.scale)...)
					plain := newRanker(t, e.client, func(c *rank.Config) { c.Guard = testGuard })
					src := &recSource{Source: e.client}
					var source rank.Source = src
					ls := &listingSource{recSource: src, wire: qdrantwire.NewClient(e.client)}
					if wire {
						source = ls
					}
					cached, reader := cachedRanker(t, source, nil)
					for _, tc := range cacheQueries() {
						tc.req.CollectionName = "mem"
						want, err := plain.Query(context.Background(), tc.req)
						if err != nil {
							t.Fatalf("%s: %v", tc.name, err)
						}
						if !want.Reranked {
							t.Fatalf("%s: not re-ranked (%s)", tc.name, want.PassThrough)
						}
						h0, m0 := cacheMetrics(t, reader)
						for _, round := range []string{"cold", "warm"} {
							got, err := cached.Query(context.Background(), tc.req)
							if err != nil {
								t.Fatalf("%s %s: %v", tc.name, round, err)
							}
							sameAnswer(t, tc.name+" "+round, want, got)
							whole := tc.req.GetWithPayload().GetEnable()
							if wire && round == "warm" && whole && tc.name != "by id (not cached)" &&
								(len(got.PayloadWire) != len(got.Points) || slices.ContainsFunc(got.PayloadWire, func(w []byte) bool { return w == nil })) {
								t.Errorf("%s warm: whole payloads from the cache without their bytes: %d of %d", tc.name, len(got.PayloadWire), len(got.Points))
							}
							if !whole && got.PayloadWire != nil {
								t.Errorf("%s %s: payload bytes for a selection: they would replace it", tc.name, round)
							}
						}
						h1, m1 := cacheMetrics(t, reader)
						if tc.name != "by id (not cached)" && h1-h0 == 0 {
							t.Errorf("%s: no cache hits (hits %d, misses %d)", tc.name, h1-h0, m1-m0)
						}
					}
					src.mu.Lock()
					defer src.mu.Unlock()
					for _, req := range src.reqs {
						// Only the fetch of the misses, by id, asks for payloads or vectors.
						must := req.GetFilter().GetMust()
						fetch := len(must) > 0 && must[0].GetHasId() != nil
						if req.GetQuery().GetNearest().GetDense() != nil && (req.GetWithPayload().GetEnable() || req.GetWithVectors().GetEnable()) && !fetch {
							t.Errorf("the cached path asked the upstream for payloads or vectors: %v", req)
						}
						if wire && !fetch && req.GetQuery().GetNearest().GetDense() != nil && isListing(req) {
							t.Errorf("a listing went to Query, not QueryListing: %v", req)
						}
					}
					for _, req := range ls.listings {
						if req.GetWithPayload().GetEnable() || req.GetWithVectors().GetEnable() {
							t.Errorf("a listing asked for payloads or vectors: %v", req)
						}
					}
					if wire && (len(ls.listings) == 0 || ls.wires == 0) {
						t.Errorf("%d listings went through QueryListing and %d fetches through QueryWire", len(ls.listings), ls.wires)
					}
				})
			}
		})
	}
}

// isListing says whether req has a listing's shape: neither payloads nor
// vectors.
func isListing(req *qdrant.QueryPoints) bool {
	return !req.GetWithPayload().GetEnable() && !req.GetWithVectors().GetEnable()
}

// TestCandidateCacheNeverStale: after warming the cache, every change made
// behind the ranker's back is seen: a changed payload or vector (new
// version), a collection recreated with the same ids and versions (the
// score check catches other vectors; an invalidation or the TTL other
// payloads), an alias moved, a point deleted.
func TestCandidateCacheNeverStale(t *testing.T) {
	ctx := context.Background()
	wait := true
	other := func(p pt) pt { // the same point with another text
		q := p
		q.payload = memoryPayload(fmt.Sprintf("renewed %d", p.id), 0.9, 1, nil)
		return q
	}
	rotated := func(p pt) pt { // another vector for every point
		q := p
		q.vec = otherVec(p.id)
		return q
	}
	recreate := func(t *testing.T, e *env, coll string, change func(pt) pt) {
		t.Helper()
		if err := e.client.DeleteCollection(ctx, coll); err != nil {
			t.Fatal(err)
		}
		e.create(t, coll, dim, qdrant.Distance_Cosine)
		var pts []pt
		for _, p := range cacheFixture(1) {
			pts = append(pts, change(p))
		}
		e.upsert(t, coll, pts...)
	}
	tests := []struct {
		name string
		// target is the name queried ("mem", or an alias).
		target string
		change func(t *testing.T, e *env, r *rank.Ranker, clock *atomic.Int64)
	}{
		{name: "set payload", target: "mem", change: func(t *testing.T, e *env, _ *rank.Ranker, _ *atomic.Int64) {
			_, err := e.client.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "mem", Wait: &wait,
				Payload: qdrant.NewValueMap(map[string]any{"text": "likes coffee now"}), PointsSelector: qdrant.NewPointsSelector(qdrant.NewIDNum(1))})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{name: "upsert", target: "mem", change: func(t *testing.T, e *env, _ *rank.Ranker, _ *atomic.Int64) {
			e.upsert(t, "mem", pt{id: 2, vec: vecAt(0.99, 2), payload: memoryPayload("Likes tea a lot", 0.95, 0, nil)})
		}},
		{name: "recreated, other vectors", target: "mem", change: func(t *testing.T, e *env, _ *rank.Ranker, _ *atomic.Int64) {
			recreate(t, e, "mem", func(p pt) pt { return other(rotated(p)) })
		}},
		{name: "recreated, same vectors, invalidated", target: "mem", change: func(t *testing.T, e *env, r *rank.Ranker, _ *atomic.Int64) {
			recreate(t, e, "mem", other)
			r.CollectionsChanged()
		}},
		{name: "recreated, same vectors, after the TTL", target: "mem", change: func(t *testing.T, e *env, _ *rank.Ranker, clock *atomic.Int64) {
			recreate(t, e, "mem", other)
			clock.Add(int64(time.Hour))
		}},
		{name: "alias moved, other vectors", target: "live", change: func(t *testing.T, e *env, _ *rank.Ranker, _ *atomic.Int64) {
			recreate(t, e, "mem2", func(p pt) pt { return other(rotated(p)) })
			moveAlias(t, e, "live", "mem2")
		}},
		{name: "alias moved, same vectors, invalidated", target: "live", change: func(t *testing.T, e *env, r *rank.Ranker, _ *atomic.Int64) {
			recreate(t, e, "mem2", other)
			moveAlias(t, e, "live", "mem2")
			r.CollectionsChanged()
		}},
		{name: "alias moved after its call ended unanswered", target: "live", change: func(t *testing.T, e *env, r *rank.Ranker, _ *atomic.Int64) {
			// The front gave up on the alias change (a timeout) and told
			// the ranker; queries go on reaching the old collection until
			// the upstream applies the change, which it then does.
			r.CollectionsUnsettled()
			for range 2 {
				if _, err := r.Query(ctx, &qdrant.QueryPoints{CollectionName: "live", Query: qdrant.NewQueryDense(query()),
					WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)}); err != nil {
					t.Fatal(err)
				}
			}
			recreate(t, e, "mem2", other)
			moveAlias(t, e, "live", "mem2")
		}},
		{name: "point deleted", target: "mem", change: func(t *testing.T, e *env, _ *rank.Ranker, _ *atomic.Int64) {
			_, err := e.client.Delete(ctx, &qdrant.DeletePoints{CollectionName: "mem", Wait: &wait, Points: qdrant.NewPointsSelector(qdrant.NewIDNum(1), qdrant.NewIDNum(7))})
			if err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t, "mem", dim, qdrant.Distance_Cosine)
			e.upsert(t, "mem", cacheFixture(1)...)
			e.create(t, "mem2", dim, qdrant.Distance_Cosine)
			e.upsert(t, "mem2", cacheFixture(1)...)
			moveAlias(t, e, "live", "mem")
			var clock atomic.Int64
			clock.Store(now.UnixNano())
			tick := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
			cached, reader := cachedRanker(t, e.client, func(c *rank.Config) { c.Now = tick })
			req := &qdrant.QueryPoints{CollectionName: tc.target, Query: qdrant.NewQueryDense(query()), WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)}
			for range 2 {
				if _, err := cached.Query(ctx, req); err != nil {
					t.Fatal(err)
				}
			}
			if h, _ := cacheMetrics(t, reader); h == 0 {
				t.Fatal("the cache was not warm")
			}
			tc.change(t, e, cached, &clock)
			plain := newRanker(t, e.client, func(c *rank.Config) { c.Guard, c.Now = testGuard, tick })
			// The ranker's detection verdict is cached from before the
			// change (the fresh ranker sampled the changed points).
			sameAsUncached(t, "after the change", plain, cached, req, cmpopts.IgnoreFields(rank.Result{}, "Detection"))
		})
	}
}

func moveAlias(t *testing.T, e *env, alias, coll string) {
	t.Helper()
	err := e.client.UpdateAliases(context.Background(), []*qdrant.AliasOperations{
		qdrant.NewAliasDelete(alias), qdrant.NewAliasCreate(alias, coll),
	})
	if err != nil {
		t.Fatal(err)
	}
}

// deletingSource deletes a point right after answering the first query,
// before the cache's Get reads the misses.
type deletingSource struct {
	*qdrant.Client
	once sync.Once
	del  func()
}

func (s *deletingSource) Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	pts, err := s.Client.Query(ctx, req)
	s.once.Do(s.del)
	return pts, err
}

// TestCandidateCacheDeletedBeforeGet: a candidate deleted between the
// query and the Get of the misses is dropped, not an error.
func TestCandidateCacheDeletedBeforeGet(t *testing.T) {
	e := newEnv(t)
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	e.upsert(t, "mem", cacheFixture(1)...)
	plain := newRanker(t, e.client, func(c *rank.Config) { c.Guard, c.Mode = testGuard, rank.ModeRerank })
	req := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), WithPayload: qdrant.NewWithPayload(true)}
	// Detection reads the collection first: recognise it before the deletion.
	if _, err := plain.Query(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	wait := true
	src := &deletingSource{Client: e.client, del: func() {
		_, err := e.client.Delete(context.Background(), &qdrant.DeletePoints{CollectionName: "mem", Wait: &wait, Points: qdrant.NewPointsSelector(qdrant.NewIDNum(2))})
		if err != nil {
			t.Error(err)
		}
	}}
	cached, _ := cachedRanker(t, src, func(c *rank.Config) { c.Mode = rank.ModeRerank })
	got, err := cached.Query(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want, err := plain.Query(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want.Detection, want.Requested = got.Detection, got.Requested
	sameAnswer(t, "point 2 deleted between the query and the get", want, got)
}

// TestCandidateCacheConcurrent: queries sharing entries, with different
// payload selectors, run at once (under -race: nothing writes what
// another request reads) and each gets its uncached answer.
func TestCandidateCacheConcurrent(t *testing.T) {
	e := newEnv(t)
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	e.upsert(t, "mem", cacheFixture(1)...)
	plain := newRanker(t, e.client, func(c *rank.Config) { c.Guard = testGuard })
	rec := newRecorder(t, &fakePayloads{}, nil)
	cached, _ := cachedRanker(t, e.client, func(c *rank.Config) { c.Recorder = rec })
	queries := cacheQueries()
	want := make([]*rank.Result, len(queries))
	for i, q := range queries {
		q.req.CollectionName = "mem"
		var err error
		if want[i], err = plain.Query(context.Background(), q.req); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	results := make([][]*rank.Result, 8)
	errs := make([]error, 8)
	for g := range 8 {
		wg.Go(func() {
			for k := range 3 * len(queries) {
				res, err := cached.Query(context.Background(), queries[(k+g)%len(queries)].req)
				if err != nil {
					errs[g] = err
					return
				}
				results[g] = append(results[g], res)
			}
		})
	}
	wg.Wait()
	for g := range 8 {
		if errs[g] != nil {
			t.Fatal(errs[g])
		}
		for k, res := range results[g] {
			sameAnswer(t, queries[(k+g)%len(queries)].name, want[(k+g)%len(queries)], res)
		}
	}
}

// TestCandidateCacheOnlyWhenConfigured: any Source (it needs no Get: the
// misses are fetched with Query) has the cache when it is configured, and
// none without.
func TestCandidateCacheOnlyWhenConfigured(t *testing.T) {
	tests := []struct {
		name     string
		cache    rank.CandidateCacheConfig
		wantHits bool
	}{
		{name: "configured", cache: rank.CandidateCacheConfig{MaxBytes: 1 << 20, TTL: time.Hour}, wantHits: true},
		{name: "not configured"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t, "mem", dim, qdrant.Distance_Cosine)
			e.upsert(t, "mem", cacheFixture(1)...)
			src := &struct{ rank.Source }{e.client}
			r, reader := cachedRanker(t, src, func(c *rank.Config) { c.Mode, c.CandidateCache = rank.ModeRerank, tc.cache })
			for range 2 {
				if _, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())}); err != nil {
					t.Fatal(err)
				}
			}
			if h, m := cacheMetrics(t, reader); (h > 0) != tc.wantHits || (m > 0) != tc.wantHits {
				t.Errorf("hits %d, misses %d; want some: %v", h, m, tc.wantHits)
			}
		})
	}
}

// swapSource runs swap once, right after answering the first query made
// once it is armed: between the slim query and the fetch of the misses.
type swapSource struct {
	*qdrant.Client
	armed atomic.Bool
	once  sync.Once
	swap  func()
}

func (s *swapSource) Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	pts, err := s.Client.Query(ctx, req)
	if s.armed.Load() {
		s.once.Do(s.swap)
	}
	return pts, err
}

// TestCandidateCacheFetchKeepsFilter: a point that changes between the
// slim query and the fetch of the misses, so that the caller's filter (a
// tenant's) no longer matches it, is dropped: another tenant's payload
// never reaches the caller, from the fetch or later from the cache.
func TestCandidateCacheFetchKeepsFilter(t *testing.T) {
	ctx := context.Background()
	wait := true
	tests := []struct {
		name string
		// warm runs two queries before the change, so that it happens
		// with the cache warm (every candidate a hit but the changed one).
		warm   bool
		change func(t *testing.T, e *env, p pt)
	}{
		{name: "re-created for another tenant", change: func(t *testing.T, e *env, p pt) {
			if _, err := e.client.Delete(ctx, &qdrant.DeletePoints{CollectionName: "mem", Wait: &wait, Points: qdrant.NewPointsSelector(qdrant.NewIDNum(p.id))}); err != nil {
				t.Error(err)
			}
			p.payload = memoryPayload("b's secret", 0.9, 1, nil)
			p.payload["tenant"] = "b"
			e.upsert(t, "mem", p)
		}},
		{name: "re-created for another tenant, warm", warm: true, change: func(t *testing.T, e *env, p pt) {
			p.payload = memoryPayload("b's secret", 0.9, 1, nil)
			p.payload["tenant"] = "b"
			e.upsert(t, "mem", p)
		}},
		{name: "stops matching", change: func(t *testing.T, e *env, p pt) {
			_, err := e.client.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "mem", Wait: &wait,
				Payload: qdrant.NewValueMap(map[string]any{"tenant": "c"}), PointsSelector: qdrant.NewPointsSelector(qdrant.NewIDNum(p.id))})
			if err != nil {
				t.Error(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t, "mem", dim, qdrant.Distance_Cosine)
			pts := cacheFixture(1)
			for i := range pts {
				pts[i].payload["tenant"] = "a"
			}
			e.upsert(t, "mem", pts...)
			src := &swapSource{Client: e.client}
			src.swap = func() { tc.change(t, e, pts[0]) }
			cached, reader := cachedRanker(t, src, func(c *rank.Config) { c.Mode = rank.ModeRerank })
			req := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), WithPayload: qdrant.NewWithPayload(true),
				Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("tenant", "a")}}}
			rounds := 2
			if tc.warm {
				for range 2 {
					if _, err := cached.Query(ctx, req); err != nil {
						t.Fatal(err)
					}
				}
				if h, _ := cacheMetrics(t, reader); h == 0 {
					t.Fatal("the cache was not warm")
				}
			}
			src.armed.Store(true)
			for round := range rounds {
				got, err := cached.Query(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Points) == 0 {
					t.Fatalf("round %d: no points", round)
				}
				for _, p := range got.Points {
					if tenant := p.GetPayload()["tenant"].GetStringValue(); tenant != "a" {
						t.Errorf("round %d: tenant a's query returned point %d with tenant %q, text %q", round, p.GetId().GetNum(),
							tenant, p.GetPayload()["text"].GetStringValue())
					}
					if !tc.warm && p.GetId().GetNum() == pts[0].id {
						t.Errorf("round %d: point %d, changed before the fetch, was returned", round, pts[0].id)
					}
				}
			}
		})
	}
}

// TestCandidateCacheSmallDotRecreated: in a Dot collection of small-norm
// vectors (tiny scores), a collection recreated behind memrank with the
// same ids and versions but other vectors and payloads is not served from
// the cache: the score check is on the vectors' scale, not the score's.
func TestCandidateCacheSmallDotRecreated(t *testing.T) {
	ctx := context.Background()
	const scale = 1e-4
	e := newEnv(t)
	e.create(t, "mem", dim, qdrant.Distance_Dot)
	e.upsert(t, "mem", cacheFixture(scale)...)
	off := rank.Guard{Off: true} // the scores are far below the guard's band
	cached, reader := cachedRanker(t, e.client, func(c *rank.Config) { c.Guard = off })
	req := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)}
	for range 2 {
		if _, err := cached.Query(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if h, _ := cacheMetrics(t, reader); h == 0 {
		t.Fatal("the cache was not warm")
	}
	if err := e.client.DeleteCollection(ctx, "mem"); err != nil {
		t.Fatal(err)
	}
	e.create(t, "mem", dim, qdrant.Distance_Dot)
	var pts []pt
	for _, p := range cacheFixture(scale) {
		v := otherVec(p.id)
		for i := range v {
			v[i] *= scale
		}
		p.vec = v
		p.payload = memoryPayload(fmt.Sprintf("renewed %d", p.id), 0.9, 1, nil)
		pts = append(pts, p)
	}
	e.upsert(t, "mem", pts...)
	plain := newRanker(t, e.client, func(c *rank.Config) { c.Guard = off })
	sameAsUncached(t, "after the change", plain, cached, req, cmpopts.IgnoreFields(rank.Result{}, "Detection"))
}

// TestCandidateCacheProperty: on random memories (with near duplicates)
// and random queries, limits, offsets and selectors, the cached answers,
// cold and warm, are the uncached ones.
func TestCandidateCacheProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 13))
	unit := func(v []float32) []float32 {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		for i := range v {
			v[i] = float32(float64(v[i]) / math.Sqrt(n))
		}
		return v
	}
	randVec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return unit(v)
	}
	e := newEnv(t)
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	var pts []pt
	for i := range 80 {
		vec := randVec()
		if i > 0 && i%7 == 0 { // a near duplicate of the previous point
			vec = unit(append([]float32(nil), pts[i-1].vec...))
			vec[i%dim] += 0.05
			vec = unit(vec)
		}
		text := fmt.Sprintf("memory %d", i)
		if i%11 == 0 && i > 0 {
			text = pts[i-1].payload["text"].(string) // a text duplicate
		}
		pts = append(pts, pt{id: uint64(i + 1), vec: vec, payload: memoryPayload(text, 0.3+0.6*rng.Float64(), 100*rng.Float64(),
			map[string]any{"a": rng.IntN(20)})})
	}
	e.upsert(t, "mem", pts...)
	plain := newRanker(t, e.client, func(c *rank.Config) { c.Guard = testGuard })
	cached, _ := cachedRanker(t, e.client, nil)
	selectors := []*qdrant.WithPayloadSelector{nil, qdrant.NewWithPayload(true), qdrant.NewWithPayloadInclude("text"), qdrant.NewWithPayloadExclude("access_counts")}
	for i := range 60 {
		q := randVec()
		if i%3 == 0 { // near a stored point, so duplicates are among the candidates
			q = unit(append([]float32(nil), pts[rng.IntN(len(pts))].vec...))
		}
		req := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(q), Limit: u64(uint64(1 + rng.IntN(15))),
			WithPayload: selectors[rng.IntN(len(selectors))]}
		if rng.IntN(3) == 0 {
			req.Offset = u64(uint64(rng.IntN(5)))
		}
		if rng.IntN(2) == 0 {
			req.WithVectors = qdrant.NewWithVectors(true)
		}
		want, err := plain.Query(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, round := range []string{"cold", "warm"} {
			got, err := cached.Query(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			sameAnswer(t, fmt.Sprintf("query %d %s", i, round), want, got)
		}
	}
}

// inexactSource scores like an upstream searching quantized vectors
// without rescoring: every score but an exact search's is a little off.
type inexactSource struct {
	*recSource
}

func (s *inexactSource) Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	points, err := s.recSource.Query(ctx, req)
	if err != nil || req.GetParams().GetExact() {
		return points, err
	}
	for _, p := range points {
		p.Score *= 0.98
	}
	return points, nil
}

// TestCandidateCacheInexactScores: an upstream whose scores are not the
// exact similarity of its vectors fails every score check, so the cache
// would double its round trips; the cache turns itself off for the
// collection after a window of such checks (counting why it missed and
// the queries it sent in one call), and every answer stays the uncached
// one.
func TestCandidateCacheInexactScores(t *testing.T) {
	e := newEnv(t)
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	e.upsert(t, "mem", cacheFixture(1)...)
	plain := newRanker(t, &inexactSource{&recSource{Source: e.client}}, func(c *rank.Config) { c.Guard = testGuard })
	src := &inexactSource{&recSource{Source: e.client}}
	cached, reader := cachedRanker(t, src, nil)
	req := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), WithPayload: qdrant.NewWithPayload(true)}
	calls := func() int {
		src.mu.Lock()
		defer src.mu.Unlock()
		return len(src.reqs)
	}
	var last int
	for i := range 40 {
		before := calls()
		sameAsUncached(t, fmt.Sprint("query ", i), plain, cached, req)
		last = calls() - before
	}
	if last != 1 {
		t.Errorf("the last query took %d upstream calls; with the cache off, one", last)
	}
	got := counters(t, reader)
	if got["memrank.rank.candidate_cache.misses score_mismatch"] == 0 || got["memrank.rank.candidate_cache.off"] == 0 ||
		got["memrank.rank.candidate_cache.hits"] != 0 {
		t.Errorf("metrics %v: want score mismatches, queries with the cache off and no hits", got)
	}
}

// TestCandidateCacheQuantizedRequest: a request that asks for quantized
// scores without rescoring is not cached: none of its hits would check.
func TestCandidateCacheQuantizedRequest(t *testing.T) {
	e := newEnv(t)
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	e.upsert(t, "mem", cacheFixture(1)...)
	src := &recSource{Source: e.client}
	cached, reader := cachedRanker(t, src, nil)
	rescore := false
	req := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), WithPayload: qdrant.NewWithPayload(true),
		Params: &qdrant.SearchParams{Quantization: &qdrant.QuantizationSearchParams{Rescore: &rescore}}}
	for range 3 {
		if _, err := cached.Query(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if hits, misses := cacheMetrics(t, reader); hits+misses != 0 {
		t.Errorf("hits %d, misses %d: the request went through the cache", hits, misses)
	}
	if n := len(src.reqs); n != 3 {
		t.Errorf("%d upstream calls for 3 queries, want 3", n)
	}
}

// counters reads every int64 counter, a reason attribute appended to its
// name.
func counters(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range d.DataPoints {
					r, _ := dp.Attributes.Value("reason")
					got[strings.TrimSpace(m.Name+" "+r.AsString())] += dp.Value
				}
			}
		}
	}
	return got
}

// TestCandidateCacheRecreatedStaysOn: a collection deleted and created
// again behind memrank, same ids and versions but other vectors, fails the
// score check on most cached copies; that is not an inexact upstream (the
// fetched vectors check), so the cache stays on, and every answer is the
// uncached one.
func TestCandidateCacheRecreatedStaysOn(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 7))
	random := func() []pt {
		var pts []pt
		for i := range 300 {
			v := make([]float32, dim)
			for j := range v {
				v[j] = float32(rng.NormFloat64())
			}
			pts = append(pts, pt{id: uint64(i + 1), vec: v, payload: memoryPayload(fmt.Sprint("memory ", i), 0.8, 3, nil)})
		}
		return pts
	}
	var queries []*qdrant.QueryPoints
	for range 6 {
		q := random()[0].vec
		queries = append(queries, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(q), WithPayload: qdrant.NewWithPayload(true)})
	}
	e := newEnv(t)
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	e.upsert(t, "mem", random()...)
	cached, reader := cachedRanker(t, e.client, func(c *rank.Config) { c.Guard = rank.Guard{Off: true} })
	plain := newRanker(t, e.client, func(c *rank.Config) { c.Guard = rank.Guard{Off: true} })
	for range 2 {
		for _, q := range queries {
			if _, err := cached.Query(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.client.DeleteCollection(ctx, "mem"); err != nil {
		t.Fatal(err)
	}
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	e.upsert(t, "mem", random()...) // the same ids and versions, other vectors
	delta := func(before map[string]int64, name string) int64 { return counters(t, reader)[name] - before[name] }
	for round := range 3 {
		before := counters(t, reader)
		for i, q := range queries {
			sameAsUncached(t, fmt.Sprint("after the re-creation, round ", round, " query ", i), plain, cached, q, cmpopts.IgnoreFields(rank.Result{}, "Detection"))
		}
		mismatched := delta(before, "memrank.rank.candidate_cache.misses score_mismatch")
		hits := delta(before, "memrank.rank.candidate_cache.hits")
		switch {
		case round == 0 && mismatched <= hits:
			t.Fatalf("first round: %d copies failed the check against %d hits: the re-creation does not dominate the checks", mismatched, hits)
		case round > 0 && hits == 0:
			t.Errorf("round %d: no hits", round)
		}
	}
	got := counters(t, reader)
	if got["memrank.rank.candidate_cache.off"] != 0 {
		t.Errorf("metrics %v: the cache turned itself off for an exact upstream", got)
	}
}

// clockSource advances the ranker's clock during each listing, as a slow
// upstream would.
type clockSource struct {
	*recSource
	advance func()
}

func (s *clockSource) Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	if len(req.GetFilter().GetMust()) == 0 && isListing(req) {
		s.advance()
	}
	return s.recSource.Query(ctx, req)
}

// TestCandidateCacheTimeoutSplit: a request's timeout bounds its two
// upstream calls together, not each: the fetch of the misses gets what the
// listing left, rounded up to Qdrant's whole seconds, at least one.
func TestCandidateCacheTimeoutSplit(t *testing.T) {
	e := newEnv(t)
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	e.upsert(t, "mem", cacheFixture(1)...)
	for _, tc := range []struct {
		name    string
		timeout *uint64
		listing time.Duration // how long the listing takes
		want    *uint64       // the fetch's timeout
	}{
		{name: "no timeout", listing: 3 * time.Second},
		{name: "instant listing", timeout: u64(5), want: u64(5)},
		{name: "rest rounded up", timeout: u64(5), listing: 3400 * time.Millisecond, want: u64(2)},
		{name: "nothing left: one second", timeout: u64(5), listing: 6 * time.Second, want: u64(1)},
		{name: "clock set back", timeout: u64(5), listing: -time.Hour, want: u64(5)},
		{name: "largest timeout", timeout: u64(math.MaxUint64), want: u64(math.MaxInt64 / uint64(time.Second))},
		{name: "largest timeout, a little spent", timeout: u64(math.MaxUint64), listing: 1500 * time.Millisecond,
			want: u64(math.MaxInt64/uint64(time.Second) - 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
			src := &clockSource{recSource: &recSource{Source: e.client}, advance: func() { now = now.Add(tc.listing) }}
			cached, _ := cachedRanker(t, src, func(c *rank.Config) { c.Now = func() time.Time { return now } })
			req := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), WithPayload: qdrant.NewWithPayload(true), Timeout: tc.timeout}
			if _, err := cached.Query(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			var fetches int
			for _, r := range src.reqs {
				if must := r.GetFilter().GetMust(); len(must) > 0 && must[0].GetHasId() != nil {
					fetches++
					if diff := cmp.Diff(tc.want, r.Timeout); diff != "" {
						t.Errorf("the fetch's timeout (-want +got):\n%s", diff)
					}
				} else if diff := cmp.Diff(tc.timeout, r.Timeout); diff != "" {
					t.Errorf("the listing's timeout (-want +got):\n%s", diff)
				}
			}
			if fetches != 1 {
				t.Fatalf("%d fetches of the misses on a cold cache, want 1", fetches)
			}
		})
	}
}
