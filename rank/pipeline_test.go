package rank_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
)

// fixtureMem is one memory of the order fixture.
type fixtureMem struct {
	id     uint64
	sim    float64 // cosine with the query
	age    float64 // days since last observed
	conf   float64 // stored confidence; 0: an unscored point (text only)
	counts map[string]any
	extra  map[string]any
}

// orderFixture is built so that the raw vector order and memrank's differ:
// the most similar memories are old, unconfident, superseded, not
// retrievable, archived or never used, the less similar ones fresh,
// confident and used.
var orderFixture = []fixtureMem{
	{id: 1, sim: 0.95, age: 240, conf: 0.85},                                       // old: freshness 1/4
	{id: 2, sim: 0.90, age: 120, conf: 0.70},                                       // one half-life
	{id: 3, sim: 0.80, age: 1, conf: 0.90, counts: map[string]any{"a": 3, "x": 2}}, // fresh and used
	{id: 4, sim: 0.70, age: 10, conf: 0.95, counts: map[string]any{"b": 1}},        // used once
	{id: 5, sim: 0.85, age: 30, conf: 0.80},                                        // never used
	{id: 6, sim: 0.99, age: 0, conf: 0.30},                                         // below the gate
	{id: 7, sim: 0.97, age: 5, conf: 0.90, extra: map[string]any{"superseded_by": "3"}},
	{id: 8, sim: 0.96, age: 5, conf: 0.90, extra: map[string]any{"retrievable": false}},
	{id: 9, sim: 0.94, age: 5, conf: 0.90, extra: map[string]any{"tier": "archived"}},
	{id: 10, sim: 0.75}, // unscored: never gated
}

// memrank's orders of the fixture, and the raw order of the vectors. The
// kept candidates are 1, 9, 2, 5, 3, 10 and 4 by similarity: 6 is below
// the gate (and, at confidence 0.30, below the render gate too, so the gate
// does not yield to it although it is the best match), 7 is superseded, 8
// stored as not retrievable; 9 is labelled archived but retrievable, so it
// is a candidate like any other.
//
// rankedOrder is the order at the focus the query has: the mean freshness
// of its five most similar candidates (1, 9, 2, 5, 3: 0.71) is below that
// of all seven (0.79), so the focus is 0, age takes nothing, and the weight
// is the similarity times the access boost (3: 0.80 x 1.013 stays below
// 5's 0.85; 4: 0.70 x 1.008 below 10's 0.75). freshOrder is the order with
// the focus pinned at 1 (FocusFloor 1), where age takes up to 70% of the
// weight: 9 (0.94 x 0.98 = 0.92) leads, 1 (a quarter fresh: 0.95 x 0.475 =
// 0.45) comes last. The relevance guard changes neither: it only decides
// which results count as read.
var (
	rankedOrder = []uint64{1, 9, 2, 5, 3, 10, 4}
	freshOrder  = []uint64{9, 3, 5, 10, 4, 2, 1}
	rawOrder    = []uint64{6, 7, 8, 1, 9, 2, 5, 3, 10, 4}
	// fixtureKept are the fixture's candidates after the exclusions and
	// the gate.
	fixtureKept = []uint64{1, 2, 3, 4, 5, 9, 10}
)

func (m fixtureMem) payload() map[string]any {
	if m.conf == 0 {
		return map[string]any{"text": "unscored import " + idString(qdrant.NewIDNum(m.id)), "user": "u1"}
	}
	p := memoryPayload("memory number "+idString(qdrant.NewIDNum(m.id)), m.conf, m.age, m.counts)
	p["user"] = []string{"u1", "u2"}[m.id%2]
	for k, v := range m.extra {
		p[k] = v
	}
	return p
}

func (m fixtureMem) accesses() int64 {
	var n int64
	for _, v := range m.counts {
		n += int64(v.(int))
	}
	return n
}

// freshness is the memory's freshness at now: an unscored point has no
// last observation, so it is fresh.
func (m fixtureMem) freshness() float64 {
	if m.conf == 0 {
		return 1
	}
	return scoring.Freshness(m.age, 120)
}

func fixtureMemOf(id uint64) fixtureMem {
	for _, m := range orderFixture {
		if m.id == id {
			return m
		}
	}
	panic("no fixture memory")
}

// loadOrderFixture creates collection "mem" (Cosine) with the fixture and
// returns the raw scores of a plain query, by id.
func loadOrderFixture(t testing.TB, e *env) map[uint64]float32 {
	t.Helper()
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	var pts []pt
	for _, m := range orderFixture {
		pts = append(pts, pt{id: m.id, vec: vecAt(m.sim, int(m.id)), payload: m.payload()})
	}
	e.upsert(t, "mem", pts...)
	raw, err := e.client.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: u64(100)})
	if err != nil {
		t.Fatalf("raw query: %v", err)
	}
	if diff := cmp.Diff(rawOrder, ids(raw)); diff != "" {
		t.Fatalf("raw order of the fixture (-want +got):\n%s", diff)
	}
	scores := map[uint64]float32{}
	for _, p := range raw {
		scores[p.GetId().GetNum()] = p.GetScore()
	}
	return scores
}

// expectedWeight is the weight memrank must give fixture memory id against
// base, for a query of the given focus.
func expectedWeight(id uint64, base float32, focus float64) float64 {
	m := fixtureMemOf(id)
	if m.conf == 0 {
		return scoring.Weight(float64(base), 1, 1) // fresh and never read
	}
	return weight(base, m.age, m.accesses(), focus)
}

// fixtureFocus is the focus of a query whose kept candidates are ids, with
// the given bases: computed from the fixture's ages (expectedFocus).
func fixtureFocus(p *scoring.Params, bases map[uint64]float32, ids []uint64) float64 {
	var cands []focusCand
	for _, id := range ids {
		cands = append(cands, focusCand{base: float64(bases[id]), fresh: fixtureMemOf(id).freshness()})
	}
	return expectedFocus(p, cands)
}

func TestQueryReranksTheFixture(t *testing.T) {
	e := newEnv(t)
	raw := loadOrderFixture(t, e)
	off := rank.Guard{Off: true}
	// The defaults' focus over the fixture, computed from its ages: the
	// orders below assume it.
	if f := fixtureFocus(scoring.DefaultParams(), raw, fixtureKept); f != 0 {
		t.Fatalf("the fixture's focus is %v, want 0", f)
	}
	tests := []struct {
		name      string
		guard     rank.Guard
		pinned    bool // FocusFloor 1: the focus is 1 whatever the candidates
		limit     *uint64
		offset    *uint64
		threshold *float32
		want      []uint64
		wantAsk   uint64
		wantFocus float64
		wantEmpty string
	}{
		{name: "guard off: default limit", guard: off, want: rankedOrder, wantAsk: 40},
		{name: "guard off: limit 3", guard: off, limit: u64(3), want: rankedOrder[:3], wantAsk: 40},
		{name: "guard off: offset applied after re-ranking", guard: off, limit: u64(2), offset: u64(1), want: []uint64{9, 2}, wantAsk: 40},
		{name: "guard off: offset past the results", guard: off, limit: u64(2), offset: u64(7), want: []uint64{}, wantAsk: 40, wantEmpty: "the offset 7 is past the 7 results"},
		{name: "guarded: the same order", guard: testGuard, want: rankedOrder, wantAsk: 40},
		{name: "guarded: limit 3", guard: testGuard, limit: u64(3), want: rankedOrder[:3], wantAsk: 40},
		{name: "guarded: offset applied after re-ranking", guard: testGuard, limit: u64(2), offset: u64(4), want: []uint64{3, 10}, wantAsk: 40},
		{name: "guarded: a large offset", guard: testGuard, limit: u64(10), offset: u64(5), want: []uint64{10, 4}, wantAsk: 60},
		// Raw scores above 0.82 are 6, 7, 8, 1, 9, 2, 5; of those 1, 9, 2 and
		// 5 pass the exclusions and the gate.
		{name: "guarded: score_threshold on the similarity", guard: testGuard, threshold: ptr(float32(0.82)), want: []uint64{1, 9, 2, 5}, wantAsk: 40},
		{name: "focus 1: freshness weighs", guard: testGuard, pinned: true, want: freshOrder, wantAsk: 40, wantFocus: 1},
		{name: "focus 1: guard off", guard: off, pinned: true, want: freshOrder, wantAsk: 40, wantFocus: 1},
		{name: "focus 1: offset", guard: testGuard, pinned: true, limit: u64(2), offset: u64(1), want: []uint64{3, 5}, wantAsk: 40, wantFocus: 1},
		// 9: 0.92, 5: 0.76, 2: 0.59, 1: 0.45.
		{name: "focus 1: score_threshold", guard: testGuard, pinned: true, threshold: ptr(float32(0.82)), want: []uint64{9, 5, 2, 1}, wantAsk: 40, wantFocus: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &recSource{Source: e.client}
			r := newRanker(t, src, func(c *rank.Config) {
				c.Guard = tc.guard
				if tc.pinned {
					c.Params = focusFloor(1)
				}
			})
			req := &qdrant.QueryPoints{
				CollectionName: "mem", Query: qdrant.NewQueryDense(query()),
				Limit: tc.limit, Offset: tc.offset, ScoreThreshold: tc.threshold,
				WithPayload: qdrant.NewWithPayloadEnable(true),
			}
			before := proto.Clone(req).(*qdrant.QueryPoints)
			res, err := r.Query(context.Background(), req)
			if err != nil {
				t.Fatalf("Query: %v", err)
			}
			if diff := cmp.Diff(before, req, protocmp.Transform()); diff != "" {
				t.Errorf("the caller's request was modified (-before +after):\n%s", diff)
			}
			if !res.Reranked || res.PassThrough != "" {
				t.Errorf("Reranked %v PassThrough %q, want re-ranked", res.Reranked, res.PassThrough)
			}
			if !res.Detection.Memory || res.Detection.Mode != rank.ModeRerank {
				t.Errorf("detection %+v: want a memory collection re-ranked with no configuration", res.Detection)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			if res.Empty != tc.wantEmpty {
				t.Errorf("Empty %q, want %q", res.Empty, tc.wantEmpty)
			}
			if res.Guard.Focus != tc.wantFocus {
				t.Errorf("focus %v, want %v", res.Guard.Focus, tc.wantFocus)
			}
			if len(res.Explanations) != len(res.Points) {
				t.Fatalf("%d explanations for %d points", len(res.Explanations), len(res.Points))
			}
			// The returned score is the weight, whatever the guard decided;
			// so scores never increase down the list.
			prev := math.Inf(1)
			relevant, beyond := 0, 0
			for i, p := range res.Points {
				id := p.GetId().GetNum()
				want := expectedWeight(id, raw[id], tc.wantFocus)
				ex := res.Explanations[i]
				if p.GetScore() != float32(want) {
					t.Errorf("point %d (%v): score %v, want its weight %v", id, ex.Guard, p.GetScore(), float32(want))
				}
				if float64(p.GetScore()) > prev {
					t.Errorf("point %d: score %v above the one before it (%v)", id, p.GetScore(), prev)
				}
				prev = float64(p.GetScore())
				got := struct{ ID, Weight, Base, Focus float64 }{float64(ex.ID.GetNum()), ex.Weight, ex.BaseScore, ex.Focus}
				exp := struct{ ID, Weight, Base, Focus float64 }{float64(id), want, float64(raw[id]), tc.wantFocus}
				if diff := cmp.Diff(exp, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
					t.Errorf("point %d explanation (-want +got):\n%s", id, diff)
				}
				if ff := scoring.FreshnessFactor(ex.FreshnessWeight, ex.Focus, ex.Freshness); ex.FreshnessFactor != ff {
					t.Errorf("point %d: freshness factor %v, want 1 - %v x %v x (1 - %v) = %v", id, ex.FreshnessFactor, ex.FreshnessWeight, ex.Focus, ex.Freshness, ff)
				}
				if ex.Weight != scoring.Weight(ex.BaseScore, ex.FreshnessFactor, ex.AccessBoost)*ex.ConfidenceFactor {
					t.Errorf("point %d: weight %v != base %v x freshness factor %v x boost %v x confidence factor %v", id, ex.Weight, ex.BaseScore, ex.FreshnessFactor, ex.AccessBoost, ex.ConfidenceFactor)
				}
				// The band reaches from the best kept similarity (1's 0.95) down
				// to 0.80: 1, 9, 2, 5 and 3 are relevant, 10 and 4 beyond it.
				wantGuard := rank.GuardOff
				if !tc.guard.Off {
					wantGuard = rank.GuardBelowBand
					if raw[id] >= raw[3] {
						wantGuard = rank.GuardRelevant
					}
				}
				if ex.Guard != wantGuard {
					t.Errorf("point %d: guard %v, want %v", id, ex.Guard, wantGuard)
				}
				if ex.Guard == rank.GuardBelowBand {
					beyond++
				} else if ex.Guard == rank.GuardRelevant {
					relevant++
				}
				if p.GetPayload()["text"] == nil {
					t.Errorf("point %d: payload not returned with with_payload=true", id)
				}
			}
			if g := res.Guard; !tc.guard.Off && (g.Relevant != relevant || g.Beyond != beyond || g.Folded != 0) {
				t.Errorf("guard report relevant %d beyond %d folded %d, want %d %d 0", g.Relevant, g.Beyond, g.Folded, relevant, beyond)
			}
			if len(src.reqs) != 1 {
				t.Fatalf("%d upstream queries, want 1", len(src.reqs))
			}
			up := src.reqs[0]
			wantUp := &qdrant.QueryPoints{
				CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: u64(tc.wantAsk), ScoreThreshold: tc.threshold,
				WithPayload: qdrant.NewWithPayloadEnable(true), WithVectors: qdrant.NewWithVectorsEnable(true),
			}
			if diff := cmp.Diff(wantUp, up, protocmp.Transform()); diff != "" {
				t.Errorf("upstream request (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQueryExplanations checks the factors, tiers and guard of every
// result of the fixture, at the focus the query has (0: every freshness
// factor 1).
func TestQueryExplanations(t *testing.T) {
	e := newEnv(t)
	raw := loadOrderFixture(t, e)
	r := newRanker(t, e.client, nil)
	res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rankedOrder, ids(res.Points)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	type factors struct {
		Base, Freshness, FreshnessFactor, Focus, Boost, Confidence float64
		Count                                                      int64
		Unscored, BelowGate, WithinFloor                           bool
		Tier                                                       scoring.Tier
		StoredTier, Archived                                       string
	}
	got := map[uint64]factors{}
	for _, ex := range res.Explanations {
		got[ex.ID.GetNum()] = factors{ex.BaseScore, ex.Freshness, ex.FreshnessFactor, ex.Focus, ex.AccessBoost, ex.Confidence,
			ex.AccessCount, ex.Unscored, ex.BelowGate, ex.WithinFloor, ex.Tier, ex.StoredTier, ex.Archived}
	}
	aw := scoring.DefaultParams().AccessWeight
	// Tiers by c x f (active above 0.60, dormant from 0.30, stale from
	// 0.10); every one is within its decay floor (1.25 x (1 - c)). 9's
	// stored tier is "archived", a label: it is returned, not marked.
	want := map[uint64]factors{
		1:  {float64(raw[1]), 0.25, 1, 0, 1, 0.85, 0, false, false, true, scoring.TierStale, "", ""},
		9:  {float64(raw[9]), scoring.Freshness(5, 120), 1, 0, 1, 0.9, 0, false, false, true, scoring.TierActive, "archived", ""},
		2:  {float64(raw[2]), 0.5, 1, 0, 1, 0.7, 0, false, false, true, scoring.TierDormant, "", ""},
		5:  {float64(raw[5]), scoring.Freshness(30, 120), 1, 0, 1, 0.8, 0, false, false, true, scoring.TierActive, "", ""},
		3:  {float64(raw[3]), scoring.Freshness(1, 120), 1, 0, scoring.AccessBoost(aw, 5), 0.9, 5, false, false, true, scoring.TierActive, "", ""},
		10: {float64(raw[10]), 1, 1, 0, 1, 0, 0, true, false, true, scoring.TierActive, "", ""},
		4:  {float64(raw[4]), scoring.Freshness(10, 120), 1, 0, scoring.AccessBoost(aw, 1), 0.95, 1, false, false, true, scoring.TierActive, "", ""},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("factors (-want +got):\n%s", diff)
	}
}

// TestQueryGateAndExclusions: superseded and not retrievable memories
// (archived by a person or a review: not retrievable and tier archived)
// are dropped whatever their similarity; a stored tier archived alone and
// any age are labels, never exclusions; the gate keeps exactly the
// confidences at or above it; when none passes every below-gate one comes
// back flagged; unscored points are never gated. Dropped says why each
// candidate left out was.
func TestQueryGateAndExclusions(t *testing.T) {
	memAged := func(id uint64, score float32, conf, age float64, extra map[string]any) *qdrant.ScoredPoint {
		p := memoryPayload("gate memory "+idString(qdrant.NewIDNum(id)), conf, age, nil)
		for k, v := range extra {
			p[k] = v
		}
		return scored(id, score, p, nil)
	}
	mem := func(id uint64, score float32, conf float64, extra map[string]any) *qdrant.ScoredPoint {
		return memAged(id, score, conf, 0, extra)
	}
	unscored := func(id uint64, score float32) *qdrant.ScoredPoint {
		return scored(id, score, map[string]any{"text": "import " + idString(qdrant.NewIDNum(id))}, nil)
	}
	tests := []struct {
		name          string
		points        []*qdrant.ScoredPoint
		limit         uint64
		mode          rank.Mode
		want          []uint64
		wantBelowGate []uint64
		wantDropped   map[uint64]string
		wantEmpty     string
	}{
		{
			// 1 is the best match but below the gate; 2 passes it inside the
			// default guard's band (0.015) of 1, so the gate does not yield.
			name: "gate keeps exactly those at or above 0.5",
			points: []*qdrant.ScoredPoint{
				mem(1, 0.99, 0.49, nil), mem(2, 0.98, 0.5, nil), mem(3, 0.97, 0.51, nil), mem(4, 0.96, 0.2, nil), mem(5, 0.5, 0.9, nil),
			},
			limit: 10, want: []uint64{2, 3, 5},
			wantDropped: map[uint64]string{1: "below_gate", 4: "below_gate"},
		},
		{
			name: "exclusions dropped whatever their similarity; a stored tier is a label",
			points: []*qdrant.ScoredPoint{
				mem(1, 0.99, 0.9, map[string]any{"superseded_by": "4"}),
				mem(2, 0.98, 0.9, map[string]any{"retrievable": false}),
				mem(3, 0.97, 0.9, map[string]any{"tier": "archived", "retrievable": false}),
				mem(4, 0.96, 0.9, map[string]any{"tier": "archived"}),
				mem(5, 0.95, 0.9, map[string]any{"tier": "archived", "retrievable": true}),
				mem(6, 0.6, 0.9, nil),
			},
			limit: 10, want: []uint64{4, 5, 6},
			wantDropped: map[uint64]string{1: "superseded", 2: "not_retrievable", 3: "archived"},
		},
		{
			// 2 is 5000 days old, far past its decay floor (its tier is
			// archived): returned all the same, first (two candidates: the
			// focus is 0, age takes nothing).
			name:   "age never excludes",
			points: []*qdrant.ScoredPoint{memAged(1, 0.5, 0.9, 0, nil), memAged(2, 0.9, 0.9, 5000, nil)},
			limit:  10, want: []uint64{2, 1},
		},
		{
			name: "nothing passes: the best below-gate ones, flagged",
			points: []*qdrant.ScoredPoint{
				mem(1, 0.9, 0.3, nil), mem(2, 0.8, 0.45, nil), mem(3, 0.95, 0.2, nil), mem(4, 0.99, 0.9, map[string]any{"superseded_by": "1"}),
			},
			limit: 2, want: []uint64{3, 1}, wantBelowGate: []uint64{3, 1},
			wantDropped: map[uint64]string{4: "superseded"},
		},
		{
			name: "unscored points are never gated",
			points: []*qdrant.ScoredPoint{
				mem(1, 0.99, 0.3, nil), unscored(2, 0.5), mem(3, 0.9, 0.2, nil), unscored(4, 0.7),
			},
			limit: 10, want: []uint64{4, 2},
			wantDropped: map[uint64]string{1: "below_gate", 3: "below_gate"},
		},
		{
			// Detection would call this a plain collection; configured as
			// memories, its points are ranked on their similarity (fresh and
			// never read: every factor 1).
			name:   "unscored points alone, configured to re-rank",
			points: []*qdrant.ScoredPoint{unscored(1, 0.4), unscored(2, 0.6)},
			limit:  10, mode: rank.ModeRerank, want: []uint64{2, 1},
		},
		{
			name:   "everything excluded",
			points: []*qdrant.ScoredPoint{mem(1, 0.9, 0.9, map[string]any{"retrievable": false})},
			limit:  10, want: []uint64{},
			wantDropped: map[uint64]string{1: "not_retrievable"},
			wantEmpty:   "all 1 candidates were left out: 1 not_retrievable",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{info: cosineInfo(), points: tc.points}
			r := newRanker(t, src, func(c *rank.Config) { c.Mode = tc.mode })
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: &tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("returned (-want +got):\n%s", diff)
			}
			var below []uint64
			for _, ex := range res.Explanations {
				if ex.BelowGate {
					below = append(below, ex.ID.GetNum())
				}
				if ex.Archived != "" {
					t.Errorf("%d returned marked archived (%q) without WithArchived", ex.ID.GetNum(), ex.Archived)
				}
			}
			if diff := cmp.Diff(tc.wantBelowGate, below, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("flagged below the gate (-want +got):\n%s", diff)
			}
			dropped := map[uint64]string{}
			for _, d := range res.Dropped {
				dropped[d.ID.GetNum()] = d.Reason
			}
			if diff := cmp.Diff(tc.wantDropped, dropped, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
			if res.Empty != tc.wantEmpty {
				t.Errorf("Empty %q, want %q", res.Empty, tc.wantEmpty)
			}
		})
	}
}

// TestQueryUpstreamRequest: (offset + limit) x oversample candidates, at
// least the floor (40 by default: the focus's pool), capped, never below
// offset + limit, from offset 0, with the caller's
// score_threshold (Qdrant's meaning: on the similarity), the whole payload
// and the vector tier 2 compares; every other field carried over.
func TestQueryUpstreamRequest(t *testing.T) {
	thr := float32(0.3)
	timeout := uint64(7)
	filter := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("user", "u1")}}
	params := &qdrant.SearchParams{HnswEf: u64(64)}
	named := &qdrant.CollectionInfo{Config: &qdrant.CollectionConfig{Params: &qdrant.CollectionParams{
		VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{
			"text":  {Size: dim, Distance: qdrant.Distance_Cosine},
			"image": {Size: dim, Distance: qdrant.Distance_Dot},
		}),
	}}}
	tests := []struct {
		name        string
		cfg         func(*rank.Config)
		info        *qdrant.CollectionInfo
		limit       *uint64
		offset      *uint64
		using       *string
		withVectors *qdrant.WithVectorsSelector
		wantLimit   uint64
		wantVectors *qdrant.WithVectorsSelector
	}{
		{name: "default limit 10 x 4", wantLimit: 40},
		{name: "offset counts", limit: u64(10), offset: u64(5), wantLimit: 60},
		{name: "oversample 2", cfg: func(c *rank.Config) { c.Oversample = 2 }, limit: u64(30), wantLimit: 60},
		{name: "oversample 2, no floor", cfg: func(c *rank.Config) { c.Oversample, c.MinCandidates = 2, 1 }, limit: u64(9), wantLimit: 18},
		{name: "oversample 1, no floor", cfg: func(c *rank.Config) { c.Oversample, c.MinCandidates = 1, 1 }, limit: u64(7), wantLimit: 7},
		{name: "a small limit asks for the floor", limit: u64(1), wantLimit: 40},
		{name: "oversample 2 below the floor", cfg: func(c *rank.Config) { c.Oversample = 2 }, limit: u64(7), wantLimit: 40},
		{name: "a configured floor", cfg: func(c *rank.Config) { c.MinCandidates = 16 }, limit: u64(3), wantLimit: 16},
		{name: "the floor is capped by max candidates", cfg: func(c *rank.Config) { c.MaxCandidates = 10 }, limit: u64(1), wantLimit: 10},
		{name: "capped by max candidates", cfg: func(c *rank.Config) { c.MaxCandidates = 30 }, limit: u64(10), wantLimit: 30},
		{name: "default cap 1000", limit: u64(300), wantLimit: 1000},
		{name: "never below offset + limit", cfg: func(c *rank.Config) { c.MaxCandidates = 30 }, limit: u64(40), offset: u64(10), wantLimit: 50},
		{name: "huge limit does not overflow", limit: u64(1 << 62), wantLimit: 1 << 62},
		{name: "caller's vectors kept when they include tier 2's", withVectors: qdrant.NewWithVectorsEnable(true), wantLimit: 40},
		{
			name: "named vectors: the query's vector added", info: named, using: ptr("text"),
			withVectors: qdrant.NewWithVectorsInclude("image"), wantLimit: 40,
			wantVectors: qdrant.NewWithVectorsInclude("image", "text"),
		},
		{
			name: "named vectors: none asked, only the query's fetched", info: named, using: ptr("image"),
			wantLimit: 40, wantVectors: qdrant.NewWithVectorsInclude("image"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info := tc.info
			if info == nil {
				info = cosineInfo()
			}
			src := &fakeSource{info: info}
			// An empty fake: detection would pass it through.
			r := newRanker(t, src, func(c *rank.Config) {
				c.Mode = rank.ModeRerank
				if tc.cfg != nil {
					tc.cfg(c)
				}
			})
			req := &qdrant.QueryPoints{
				CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Using: tc.using,
				Filter: filter, Params: params, ScoreThreshold: &thr, Limit: tc.limit, Offset: tc.offset,
				WithPayload: qdrant.NewWithPayloadInclude("text"), WithVectors: tc.withVectors, Timeout: &timeout,
				ReadConsistency: &qdrant.ReadConsistency{Value: &qdrant.ReadConsistency_Factor{Factor: 2}},
			}
			res, err := r.Query(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Reranked || res.Requested != tc.wantLimit {
				t.Errorf("Reranked %v Requested %d, want true %d", res.Reranked, res.Requested, tc.wantLimit)
			}
			wantVectors := tc.wantVectors
			if wantVectors == nil {
				wantVectors = qdrant.NewWithVectorsEnable(true)
			}
			want := &qdrant.QueryPoints{
				CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Using: tc.using,
				Filter: filter, Params: params, Limit: u64(tc.wantLimit), ScoreThreshold: &thr,
				WithPayload: qdrant.NewWithPayloadEnable(true), WithVectors: wantVectors, Timeout: &timeout,
				ReadConsistency: &qdrant.ReadConsistency{Value: &qdrant.ReadConsistency_Factor{Factor: 2}},
			}
			if len(src.reqs) != 1 {
				t.Fatalf("%d upstream calls, want 1", len(src.reqs))
			}
			if diff := cmp.Diff(want, src.reqs[0], protocmp.Transform()); diff != "" {
				t.Errorf("upstream request (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestScoreThresholdOnTheSimilarity: the caller's score_threshold keeps
// Qdrant's meaning: it filters on the similarity, upstream, and memrank
// re-ranks what passes (it used to filter on the boosted weight, so a 0.5
// cosine passed a 0.9 threshold).
func TestScoreThresholdOnTheSimilarity(t *testing.T) {
	e := newEnv(t)
	raw := loadOrderFixture(t, e)
	tests := []struct {
		name string
		thr  *float32
		want []uint64
	}{
		// Above 0.82: 6 (gated), 7, 8 (excluded), 1, 9, 2, 5: by weight.
		{name: "0.82", thr: ptr(float32(0.82)), want: []uint64{1, 9, 2, 5}},
		// Nothing passes the gate: the gated one comes back (flagged).
		{name: "0.96 leaves only the excluded and the gated", thr: ptr(float32(0.96)), want: []uint64{6}},
		{name: "none", want: rankedOrder},
		{name: "negative keeps all", thr: ptr(float32(-1)), want: rankedOrder},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &recSource{Source: e.client}
			r := newRanker(t, src, func(c *rank.Config) { c.Guard = testGuard })
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), ScoreThreshold: tc.thr})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("returned (-want +got):\n%s", diff)
			}
			if got := src.reqs[0].ScoreThreshold; (got == nil) != (tc.thr == nil) || got != nil && *got != *tc.thr {
				t.Errorf("score_threshold sent upstream: %v, want the caller's %v", got, tc.thr)
			}
			for _, p := range res.Points {
				if id := p.GetId().GetNum(); tc.thr != nil && !(raw[id] > *tc.thr) {
					t.Errorf("point %d of similarity %v returned past a threshold of %v", id, raw[id], *tc.thr)
				}
			}
		})
	}
}

// TestPassThrough: requests that are not re-ranked go upstream unchanged,
// in one call, and their answer comes back unchanged.
func TestPassThrough(t *testing.T) {
	pts := []*qdrant.ScoredPoint{
		scored(1, 0.2, memoryPayload("one", 0.1, 400, nil), nil),
		scored(2, 0.9, memoryPayload("two", 0.9, 0, map[string]any{"a": 9}), nil),
	}
	nearest := qdrant.NewQueryDense(query())
	tests := []struct {
		name     string
		info     *qdrant.CollectionInfo
		cfg      func(*rank.Config)
		req      *qdrant.QueryPoints
		want     string
		wantInfo bool // the collection's info was needed
	}{
		{name: "euclid", info: infoWith(qdrant.Distance_Euclid), req: &qdrant.QueryPoints{CollectionName: "mem", Query: nearest, Limit: u64(1)}, want: rank.PassThroughEuclid},
		{name: "manhattan", info: infoWith(qdrant.Distance_Manhattan), req: &qdrant.QueryPoints{CollectionName: "mem", Query: nearest}, want: rank.PassThroughManhattan},
		{name: "order_by", req: &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryOrderBy(&qdrant.OrderBy{Key: "created_at"})}, want: rank.PassThroughOrderBy},
		{name: "sample", req: &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQuerySample(qdrant.Sample_Random), Limit: u64(2)}, want: rank.PassThroughSample},
		{name: "scroll-like (no query)", req: &qdrant.QueryPoints{CollectionName: "mem", Limit: u64(2), Filter: &qdrant.Filter{}}, want: rank.PassThroughScroll},
		{name: "prefetch without query", req: &qdrant.QueryPoints{CollectionName: "mem", Prefetch: []*qdrant.PrefetchQuery{{Query: nearest}}}, want: rank.PassThroughPrefetchNoQuery},
		{name: "fusion without prefetch", req: &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF)}, want: rank.PassThroughNoPrefetch},
		{
			name: "configured off", cfg: func(c *rank.Config) { c.Collections = map[string]rank.CollectionConfig{"docs": {Mode: rank.ModeOff}} },
			req: &qdrant.QueryPoints{CollectionName: "docs", Query: nearest}, want: rank.PassThroughModeOff,
		},
		{
			name: "everything off", cfg: func(c *rank.Config) { c.Mode = rank.ModeOff },
			req: &qdrant.QueryPoints{CollectionName: "mem", Query: nearest}, want: rank.PassThroughModeOff,
		},
		{name: "audit companion", req: &qdrant.QueryPoints{CollectionName: "mem" + memory.AuditSuffix, Query: nearest}, want: rank.PassThroughNotMemory},
		{name: "limit 0 left to the upstream", req: &qdrant.QueryPoints{CollectionName: "mem", Query: nearest, Limit: u64(0)}, want: rank.PassThroughLimitZero},
		{name: "unknown vector name", req: &qdrant.QueryPoints{CollectionName: "mem", Query: nearest, Using: ptr("nope")}, want: rank.PassThroughUnknownVector},
		{
			name: "bad payload selector", want: rank.PassThroughBadSelector,
			req: &qdrant.QueryPoints{CollectionName: "mem", Query: nearest, WithPayload: qdrant.NewWithPayloadInclude("a..b")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info := tc.info
			if info == nil {
				info = cosineInfo()
			}
			src := &fakeSource{info: info, points: pts}
			r := newRanker(t, src, tc.cfg)
			before := proto.Clone(tc.req).(*qdrant.QueryPoints)
			res, err := r.Query(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.PassThrough != tc.want || res.Reranked {
				t.Errorf("PassThrough %q Reranked %v, want %q false", res.PassThrough, res.Reranked, tc.want)
			}
			if len(src.reqs) != 1 {
				t.Fatalf("%d upstream calls, want 1", len(src.reqs))
			}
			if diff := cmp.Diff(before, src.reqs[0], protocmp.Transform()); diff != "" {
				t.Errorf("upstream request differs from the caller's (-caller +upstream):\n%s", diff)
			}
			n := len(pts)
			if tc.req.Limit != nil {
				n = min(n, int(tc.req.GetLimit()))
			}
			if diff := cmp.Diff(pts[:n], res.Points, protocmp.Transform()); diff != "" {
				t.Errorf("points differ from the upstream's (-upstream +got):\n%s", diff)
			}
			for i, ex := range res.Explanations {
				if ex.Weight != float64(pts[i].GetScore()) || ex.BaseScore != ex.Weight {
					t.Errorf("explanation %d: weight %v base %v, want Qdrant's score %v", i, ex.Weight, ex.BaseScore, pts[i].GetScore())
				}
			}
		})
	}
}

// TestDotAndFusionBases: Dot similarities keep their sign; under a fusion
// the base is Qdrant's fused score and the outer limit is oversampled while
// the prefetches go up unchanged.
func TestDotAndFusionBases(t *testing.T) {
	unscored := func(id uint64, score float32, n int) *qdrant.ScoredPoint {
		p := map[string]any{"text": "t" + idString(qdrant.NewIDNum(id))}
		if n > 0 {
			p["access_counts"] = map[string]any{"z": n}
		}
		return scored(id, score, p, nil)
	}
	pts := []*qdrant.ScoredPoint{unscored(1, 0.5, 0), unscored(2, 0.33, 4), unscored(3, -0.2, 50)}
	prefetch := []*qdrant.PrefetchQuery{{Query: qdrant.NewQueryDense(query()), Limit: u64(20)}, {Query: qdrant.NewQuerySparse([]uint32{1}, []float32{1}), Using: ptr("bm25"), Limit: u64(20)}}
	tests := []struct {
		name string
		info *qdrant.CollectionInfo
		req  *qdrant.QueryPoints
	}{
		{name: "dot", info: infoWith(qdrant.Distance_Dot), req: &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: u64(3)}},
		{name: "rrf fusion over prefetch", info: cosineInfo(), req: &qdrant.QueryPoints{CollectionName: "mem", Prefetch: prefetch, Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF), Limit: u64(3)}},
		{name: "dbsf fusion on a euclid collection", info: infoWith(qdrant.Distance_Euclid), req: &qdrant.QueryPoints{CollectionName: "mem", Prefetch: prefetch, Query: qdrant.NewQueryFusion(qdrant.Fusion_DBSF), Limit: u64(3)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{info: tc.info, points: pts}
			// Unscored points only: configured as memories; the bases and
			// weights themselves, without the guard.
			r := newRanker(t, src, func(c *rank.Config) { c.Mode, c.Guard = rank.ModeRerank, rank.Guard{Off: true} })
			res, err := r.Query(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Reranked {
				t.Fatalf("not re-ranked: %q", res.PassThrough)
			}
			// 1: 0.5; 2: 0.33 x 1.012 (four reads add at most 2%); 3: -0.2,
			// kept as it is (factors never scale a negative base, so fifty
			// reads lift it nowhere).
			if diff := cmp.Diff([]uint64{1, 2, 3}, ids(res.Points)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			aw := scoring.DefaultParams().AccessWeight
			wantW := []float64{float64(float32(0.5)), scoring.Weight(float64(float32(0.33)), 1, scoring.AccessBoost(aw, 4)), float64(float32(-0.2))}
			wantB := []float64{float64(float32(0.5)), float64(float32(0.33)), float64(float32(-0.2))}
			var gotW, gotB []float64
			for _, ex := range res.Explanations {
				gotW, gotB = append(gotW, ex.Weight), append(gotB, ex.BaseScore)
			}
			if diff := cmp.Diff(wantW, gotW); diff != "" {
				t.Errorf("weights (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantB, gotB); diff != "" {
				t.Errorf("bases (-want +got):\n%s", diff)
			}
			up := src.reqs[0]
			if up.GetLimit() != 40 { // limit 3 x 4, raised to the floor
				t.Errorf("upstream limit %d, want 40", up.GetLimit())
			}
			if diff := cmp.Diff(tc.req.GetPrefetch(), up.GetPrefetch(), protocmp.Transform()); diff != "" {
				t.Errorf("prefetch changed (-caller +upstream):\n%s", diff)
			}
		})
	}
}

// TestSelectorsReapplied: the upstream is asked for everything, the caller
// gets what its selectors ask for.
func TestSelectorsReapplied(t *testing.T) {
	e := newEnv(t)
	loadOrderFixture(t, e)
	tests := []struct {
		name        string
		withPayload *qdrant.WithPayloadSelector
		withVectors *qdrant.WithVectorsSelector
		wantKeys    []string
		wantVectors bool
	}{
		{name: "defaults: neither"},
		{name: "payload false", withPayload: qdrant.NewWithPayloadEnable(false), withVectors: qdrant.NewWithVectorsEnable(false)},
		{name: "include", withPayload: qdrant.NewWithPayloadInclude("text", "user"), wantKeys: []string{"text", "user"}},
		{name: "include missing key", withPayload: qdrant.NewWithPayloadInclude("nope"), wantKeys: []string{}},
		{
			name: "exclude", withPayload: qdrant.NewWithPayloadExclude("access_counts", "confidence", "created_at", "decay_category", "extractor_model", "last_observed_at", "memory_type", "source", "tier"),
			wantKeys: []string{"text", "user"},
		},
		{name: "vectors", withVectors: qdrant.NewWithVectorsEnable(true), wantVectors: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRanker(t, e.client, func(c *rank.Config) { c.Guard = testGuard })
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{
				CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: u64(3),
				WithPayload: tc.withPayload, WithVectors: tc.withVectors,
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(rankedOrder[:3], ids(res.Points)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			for _, p := range res.Points {
				var keys []string
				for k := range p.GetPayload() {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				if tc.wantKeys == nil {
					if p.GetPayload() != nil {
						t.Errorf("point %d: payload %v, want none", p.GetId().GetNum(), keys)
					}
				} else if diff := cmp.Diff(tc.wantKeys, keys, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("point %d payload keys (-want +got):\n%s", p.GetId().GetNum(), diff)
				}
				if got := p.GetVectors() != nil; got != tc.wantVectors {
					t.Errorf("point %d: vectors returned %v, want %v", p.GetId().GetNum(), got, tc.wantVectors)
				}
				if tc.wantVectors {
					v := p.GetVectors().GetVector().GetDense().GetData()
					want := vecAt(orderFixtureSim(p.GetId().GetNum()), int(p.GetId().GetNum()))
					if diff := cmp.Diff(want, v, cmpopts.EquateApprox(0, 1e-6)); diff != "" {
						t.Errorf("point %d vector (-want +got):\n%s", p.GetId().GetNum(), diff)
					}
				}
			}
		})
	}
}

func orderFixtureSim(id uint64) float64 {
	for _, m := range orderFixture {
		if m.id == id {
			return m.sim
		}
	}
	return 0
}

// TestSearchBehavesAsQuery: Search is the equivalent Query.
func TestSearchBehavesAsQuery(t *testing.T) {
	e := newEnv(t)
	raw := loadOrderFixture(t, e)
	r := newRanker(t, e.client, func(c *rank.Config) { c.Guard = rank.Guard{Off: true} })
	thr := float32(0.72)
	res, err := r.Search(context.Background(), &qdrant.SearchPoints{
		CollectionName: "mem", Vector: query(), Limit: 5, ScoreThreshold: &thr,
		WithPayload: qdrant.NewWithPayloadInclude("text"),
	})
	if err != nil {
		t.Fatal(err)
	}
	// The similarity threshold keeps 1, 9, 2, 5, 3, 10 (and the excluded
	// and gated); their five most similar are not fresher than all six, so
	// the focus is 0: by similarity x access boost, 1, 9, 2, 5, 3.
	kept := []uint64{1, 2, 3, 5, 9, 10}
	if f := fixtureFocus(scoring.DefaultParams(), raw, kept); f != 0 || res.Guard.Focus != 0 {
		t.Fatalf("focus %v, computed %v: want 0", res.Guard.Focus, f)
	}
	if diff := cmp.Diff([]uint64{1, 9, 2, 5, 3}, ids(res.Points)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	for _, p := range res.Points {
		id := p.GetId().GetNum()
		if p.GetScore() != float32(expectedWeight(id, raw[id], 0)) {
			t.Errorf("point %d: score %v, want %v", id, p.GetScore(), float32(expectedWeight(id, raw[id], 0)))
		}
		if len(p.GetPayload()) != 1 || p.GetPayload()["text"] == nil {
			t.Errorf("point %d: payload %v, want only text", id, p.GetPayload())
		}
	}
	if _, err := r.Search(context.Background(), nil); !errors.Is(err, rank.ErrInvalidRequest) {
		t.Errorf("nil search: %v, want ErrInvalidRequest", err)
	}
}

func TestSearchToQuery(t *testing.T) {
	thr, off, timeout := float32(0.5), uint64(3), uint64(9)
	filter := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("user", "u1")}}
	tests := []struct {
		name string
		in   *qdrant.SearchPoints
		want *qdrant.QueryPoints
	}{
		{
			name: "dense with everything",
			in: &qdrant.SearchPoints{
				CollectionName: "mem", Vector: []float32{1, 2}, Filter: filter, Limit: 4, WithPayload: qdrant.NewWithPayloadEnable(true),
				Params: &qdrant.SearchParams{Exact: ptr(true)}, ScoreThreshold: &thr, Offset: &off, VectorName: ptr("text"),
				WithVectors: qdrant.NewWithVectorsEnable(true), Timeout: &timeout,
			},
			want: &qdrant.QueryPoints{
				CollectionName: "mem", Query: qdrant.NewQueryDense([]float32{1, 2}), Filter: filter, Limit: u64(4), WithPayload: qdrant.NewWithPayloadEnable(true),
				Params: &qdrant.SearchParams{Exact: ptr(true)}, ScoreThreshold: &thr, Offset: &off, Using: ptr("text"),
				WithVectors: qdrant.NewWithVectorsEnable(true), Timeout: &timeout,
			},
		},
		{
			name: "sparse",
			in:   &qdrant.SearchPoints{CollectionName: "mem", Vector: []float32{0.5}, SparseIndices: &qdrant.SparseIndices{Data: []uint32{7}}, VectorName: ptr("bm25"), Limit: 2},
			want: &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQuerySparse([]uint32{7}, []float32{0.5}), Using: ptr("bm25"), Limit: u64(2)},
		},
		{
			name: "limit 0 stays 0",
			in:   &qdrant.SearchPoints{CollectionName: "mem", Vector: []float32{1}},
			want: &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense([]float32{1}), Limit: u64(0)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, rank.SearchToQuery(tc.in), protocmp.Transform()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestSearchGroupsToQueryGroups: every field of a grouped search reaches
// the grouped query (the gRPC front answers SearchGroups with it).
func TestSearchGroupsToQueryGroups(t *testing.T) {
	thr := float32(0.5)
	timeout := uint64(7)
	filter := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("kind", "fact")}}
	params := &qdrant.SearchParams{HnswEf: u64(64)}
	consistency := qdrant.NewReadConsistencyType(qdrant.ReadConsistencyType_Majority)
	shards := &qdrant.ShardKeySelector{ShardKeys: []*qdrant.ShardKey{qdrant.NewShardKey("eu")}}
	tests := []struct {
		name string
		in   *qdrant.SearchPointGroups
		want *qdrant.QueryPointGroups
	}{
		{
			name: "dense",
			in: &qdrant.SearchPointGroups{
				CollectionName: "mem", Vector: []float32{1, 2}, Limit: 3, GroupSize: 2, GroupBy: "user",
				ScoreThreshold: &thr, WithPayload: qdrant.NewWithPayloadEnable(true), VectorName: ptr("text"),
				WithLookup: &qdrant.WithLookup{Collection: "users"},
			},
			want: &qdrant.QueryPointGroups{
				CollectionName: "mem", Query: qdrant.NewQueryDense([]float32{1, 2}), Limit: u64(3), GroupSize: u64(2), GroupBy: "user",
				ScoreThreshold: &thr, WithPayload: qdrant.NewWithPayloadEnable(true), Using: ptr("text"),
				WithLookup: &qdrant.WithLookup{Collection: "users"},
			},
		},
		{
			name: "sparse, every other field",
			in: &qdrant.SearchPointGroups{
				CollectionName: "mem", Vector: []float32{0.5, 0.25}, SparseIndices: &qdrant.SparseIndices{Data: []uint32{3, 9}},
				VectorName: ptr("words"), Limit: 4, GroupSize: 1, GroupBy: "topic",
				Filter: filter, Params: params, WithVectors: qdrant.NewWithVectorsEnable(true),
				ReadConsistency: consistency, Timeout: &timeout, ShardKeySelector: shards,
			},
			want: &qdrant.QueryPointGroups{
				CollectionName: "mem", Query: qdrant.NewQuerySparse([]uint32{3, 9}, []float32{0.5, 0.25}),
				Using: ptr("words"), Limit: u64(4), GroupSize: u64(1), GroupBy: "topic",
				Filter: filter, Params: params, WithVectors: qdrant.NewWithVectorsEnable(true),
				ReadConsistency: consistency, Timeout: &timeout, ShardKeySelector: shards,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, rank.SearchGroupsToQueryGroups(tc.in), protocmp.Transform()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestQueryGroups: grouped queries are oversampled in groups and group
// size, re-ranked within each group, and the groups ordered by their best
// weight; one focus for the whole query.
func TestQueryGroups(t *testing.T) {
	e := newEnv(t)
	raw := loadOrderFixture(t, e)
	// Users: the odd ids are "u2" (1, 3, 5, 7, 9), the even ones "u1" (2,
	// 4, 6, 8), and 10 has "u1". Every candidate is asked for, so the
	// focus is the fixture's (0 by default: by similarity x access boost;
	// 1 pinned): u2 kept 1, 9, 5, 3 and u1 kept 2, 10, 4.
	tests := []struct {
		name      string
		guard     *rank.Guard // nil: off
		pinned    bool        // focus pinned at 1
		req       *qdrant.QueryPointGroups
		want      map[string][]uint64
		wantOrder []string
		wantAsk   [2]uint64
		wantFocus float64
		// wantReport is the guard report's relevant and beyond counts over
		// every returned hit (guarded cases only).
		wantReport [2]int
	}{
		{
			name:      "two groups of two",
			req:       &qdrant.QueryPointGroups{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), GroupBy: "user", Limit: u64(2), GroupSize: u64(2)},
			want:      map[string][]uint64{"u2": {1, 9}, "u1": {2, 10}},
			wantOrder: []string{"u2", "u1"},
			wantAsk:   [2]uint64{8, 8},
		},
		{
			name:      "one group",
			req:       &qdrant.QueryPointGroups{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), GroupBy: "user", Limit: u64(1), GroupSize: u64(3)},
			want:      map[string][]uint64{"u2": {1, 9, 5}},
			wantOrder: []string{"u2"},
			wantAsk:   [2]uint64{4, 12},
		},
		{
			// Above 0.82: u2 has 1, 9 and 5 (7 is superseded), u1 has 2 (6
			// is gated, 8 not retrievable).
			name:      "threshold on the similarity",
			req:       &qdrant.QueryPointGroups{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), GroupBy: "user", Limit: u64(3), GroupSize: u64(3), ScoreThreshold: ptr(float32(0.82))},
			want:      map[string][]uint64{"u2": {1, 9, 5}, "u1": {2}},
			wantOrder: []string{"u2", "u1"},
			wantAsk:   [2]uint64{12, 12},
		},
		{
			// One band for the whole query (best kept similarity 0.95, down
			// to 0.80): in u1, 2 is relevant, 10 beyond the band; the order
			// is the weights' all the same.
			name:       "guarded",
			guard:      &testGuard,
			req:        &qdrant.QueryPointGroups{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), GroupBy: "user", Limit: u64(2), GroupSize: u64(2)},
			want:       map[string][]uint64{"u2": {1, 9}, "u1": {2, 10}},
			wantOrder:  []string{"u2", "u1"},
			wantAsk:    [2]uint64{8, 8},
			wantReport: [2]int{3, 1},
		},
		{
			// Focus 1: u2's 9 (0.92) and 3 (0.81) lead it, u1's 10 (0.75)
			// and 4 (0.68) lead u1, below u2.
			name:       "focus 1",
			guard:      &testGuard,
			pinned:     true,
			req:        &qdrant.QueryPointGroups{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), GroupBy: "user", Limit: u64(2), GroupSize: u64(2)},
			want:       map[string][]uint64{"u2": {9, 3}, "u1": {10, 4}},
			wantOrder:  []string{"u2", "u1"},
			wantAsk:    [2]uint64{8, 8},
			wantFocus:  1,
			wantReport: [2]int{2, 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &recSource{Source: e.client}
			r := newRanker(t, src, func(c *rank.Config) {
				c.Guard = rank.Guard{Off: true}
				if tc.guard != nil {
					c.Guard = *tc.guard
				}
				if tc.pinned {
					c.Params = focusFloor(1)
				}
			})
			res, err := r.QueryGroups(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Reranked {
				t.Fatalf("not re-ranked: %q", res.PassThrough)
			}
			if res.Guard.Focus != tc.wantFocus {
				t.Errorf("focus %v, want %v", res.Guard.Focus, tc.wantFocus)
			}
			if g := res.Guard; tc.guard != nil && (g.Relevant != tc.wantReport[0] || g.Beyond != tc.wantReport[1] || g.Folded != 0) {
				t.Errorf("guard report %+v: want %d relevant, %d beyond, none folded", g, tc.wantReport[0], tc.wantReport[1])
			}
			got := map[string][]uint64{}
			var order []string
			for gi, g := range res.Groups {
				key := g.GetId().GetStringValue()
				order = append(order, key)
				got[key] = ids(g.GetHits())
				prev := math.Inf(1)
				for j, h := range g.GetHits() {
					id := h.GetId().GetNum()
					ex := res.Explanations[gi][j]
					if ex.ID.GetNum() != id {
						t.Errorf("explanation [%d][%d] is for %d, not %d", gi, j, ex.ID.GetNum(), id)
					}
					if want := expectedWeight(id, raw[id], tc.wantFocus); math.Abs(ex.Weight-want) > 1e-12 {
						t.Errorf("point %d: weight %v, want %v", id, ex.Weight, want)
					}
					if h.GetScore() != float32(ex.Weight) || float64(h.GetScore()) > prev {
						t.Errorf("point %d (%v): score %v, want its weight %v, not above %v", id, ex.Guard, h.GetScore(), float32(ex.Weight), prev)
					}
					prev = float64(h.GetScore())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOrder, order); diff != "" {
				t.Errorf("group order (-want +got):\n%s", diff)
			}
			if len(src.groups) != 1 {
				t.Fatalf("%d upstream calls, want 1", len(src.groups))
			}
			up := src.groups[0]
			if got := [2]uint64{up.GetLimit(), up.GetGroupSize()}; got != tc.wantAsk {
				t.Errorf("upstream limit, group size %v, want %v", got, tc.wantAsk)
			}
			if (up.ScoreThreshold == nil) != (tc.req.ScoreThreshold == nil) || up.ScoreThreshold != nil && *up.ScoreThreshold != *tc.req.ScoreThreshold || !up.GetWithPayload().GetEnable() {
				t.Errorf("upstream threshold %v with_payload %v: want the caller's %v and true", up.ScoreThreshold, up.GetWithPayload(), tc.req.ScoreThreshold)
			}
		})
	}
	t.Run("search groups converted", func(t *testing.T) {
		r := newRanker(t, e.client, func(c *rank.Config) { c.Guard = rank.Guard{Off: true} })
		res, err := r.QueryGroups(context.Background(), rank.SearchGroupsToQueryGroups(&qdrant.SearchPointGroups{
			CollectionName: "mem", Vector: query(), GroupBy: "user", Limit: 2, GroupSize: 2,
		}))
		if err != nil {
			t.Fatal(err)
		}
		var got [][]uint64
		for _, g := range res.Groups {
			got = append(got, ids(g.GetHits()))
		}
		if diff := cmp.Diff([][]uint64{{1, 9}, {2, 10}}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("a collection switched off passes through", func(t *testing.T) {
		src := &recSource{Source: e.client}
		r := newRanker(t, src, func(c *rank.Config) { c.Collections = map[string]rank.CollectionConfig{"mem": {Mode: rank.ModeOff}} })
		req := &qdrant.QueryPointGroups{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), GroupBy: "user", Limit: u64(2), GroupSize: u64(1)}
		res, err := r.QueryGroups(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Reranked || res.PassThrough != rank.PassThroughModeOff {
			t.Errorf("Reranked %v PassThrough %q, want a pass-through", res.Reranked, res.PassThrough)
		}
		if len(src.groups) != 1 {
			t.Fatalf("%d upstream calls, want 1", len(src.groups))
		}
		if diff := cmp.Diff(req, src.groups[0], protocmp.Transform()); diff != "" {
			t.Errorf("upstream request (-caller +upstream):\n%s", diff)
		}
		var got [][]uint64
		for _, g := range res.Groups {
			got = append(got, ids(g.GetHits()))
		}
		// Qdrant's own order: the raw similarities, gate and exclusions ignored.
		if diff := cmp.Diff([][]uint64{{6}, {7}}, got); diff != "" {
			t.Errorf("groups (-want +got):\n%s", diff)
		}
	})
	t.Run("unsupported source", func(t *testing.T) {
		r := newRanker(t, &fakeSource{info: cosineInfo()}, nil)
		if _, err := r.QueryGroups(context.Background(), &qdrant.QueryPointGroups{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), GroupBy: "user"}); !errors.Is(err, rank.ErrGroupsUnsupported) {
			t.Errorf("err %v, want ErrGroupsUnsupported", err)
		}
	})
}

// TestUpstreamErrorsUnchanged: the upstream's errors come back as they
// are, status code included.
func TestUpstreamErrorsUnchanged(t *testing.T) {
	e := newEnv(t)
	loadOrderFixture(t, e)
	upErr := status.Error(codes.ResourceExhausted, "too many requests")
	tests := []struct {
		name     string
		src      rank.Source
		req      *qdrant.QueryPoints
		wantCode codes.Code
		wantErr  error
	}{
		{name: "fake upstream failure", src: &fakeSource{info: cosineInfo(), err: upErr}, req: &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())}, wantCode: codes.ResourceExhausted, wantErr: upErr},
		{name: "pass-through failure", src: &fakeSource{info: infoWith(qdrant.Distance_Euclid), err: upErr}, req: &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())}, wantCode: codes.ResourceExhausted, wantErr: upErr},
		{name: "unknown collection", src: e.client, req: &qdrant.QueryPoints{CollectionName: "nope", Query: qdrant.NewQueryDense(query())}, wantCode: codes.NotFound},
		{name: "wrong dimension", src: e.client, req: &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense([]float32{1, 2})}, wantCode: codes.InvalidArgument},
		{name: "limit 0", src: e.client, req: &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: u64(0)}, wantCode: codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRanker(t, tc.src, nil)
			res, err := r.Query(context.Background(), tc.req)
			if err == nil {
				t.Fatalf("no error; result %v", res)
			}
			if got := status.Code(err); got != tc.wantCode {
				t.Errorf("code %v (%v), want %v", got, err, tc.wantCode)
			}
			if tc.wantErr != nil && err != tc.wantErr {
				t.Errorf("error %v is not the upstream's %v", err, tc.wantErr)
			}
		})
	}
	if _, err := newRanker(t, &fakeSource{info: cosineInfo()}, nil).Query(context.Background(), nil); !errors.Is(err, rank.ErrInvalidRequest) {
		t.Errorf("nil request: %v, want ErrInvalidRequest", err)
	}
}

// TestFusionOverTheStore: a prefetch + RRF query on the fixture gets its
// outer limit oversampled (the prefetches go up unchanged) and is
// re-ranked on Qdrant's fused score.
func TestFusionOverTheStore(t *testing.T) {
	e := newEnv(t)
	loadOrderFixture(t, e)
	prefetch := []*qdrant.PrefetchQuery{
		{Query: qdrant.NewQueryDense(query()), Limit: u64(10)},
		{Query: qdrant.NewQueryDense(vecAt(0.5, 3)), Limit: u64(10)},
	}
	req := &qdrant.QueryPoints{CollectionName: "mem", Prefetch: prefetch, Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF), Limit: u64(3)}
	raw, err := e.client.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Prefetch: prefetch, Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF), Limit: u64(100)})
	if err != nil {
		t.Fatal(err)
	}
	fused := map[uint64]float32{}
	for _, p := range raw {
		fused[p.GetId().GetNum()] = p.GetScore()
	}
	src := &recSource{Source: e.client}
	r := newRanker(t, src, nil)
	res, err := r.Query(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Reranked {
		t.Fatalf("not re-ranked: %q", res.PassThrough)
	}
	// The fused scores are RRF's 1/(k + rank) sums, the base of the
	// weights; 3 (first in the second prefetch, eighth in the first) has
	// the best fused score once 6 (gated), 7 and 8 (excluded) are gone. The
	// focus is measured on the fused scores too. The guard's band is
	// relative there (a fused score has no fixed scale).
	focus := fixtureFocus(scoring.DefaultParams(), fused, fixtureKept)
	if res.Guard.Focus != focus {
		t.Errorf("focus %v, want %v", res.Guard.Focus, focus)
	}
	var got, weights, want []float64
	for i, p := range res.Points {
		id := p.GetId().GetNum()
		got = append(got, float64(p.GetScore()))
		weights = append(weights, res.Explanations[i].Weight)
		want = append(want, expectedWeight(id, fused[id], focus))
	}
	if diff := cmp.Diff(want, weights, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("weights on the fused scores (-want +got):\n%s", diff)
	}
	if !res.Guard.Applied || !res.Guard.Relative {
		t.Errorf("guard %+v: want a relative band over fused scores", res.Guard)
	}
	if len(res.Points) == 0 || res.Points[0].GetId().GetNum() != 3 {
		t.Errorf("order %v, want 3 first", ids(res.Points))
	}
	for i := 1; i < len(got); i++ {
		if got[i] > got[i-1] {
			t.Errorf("weights not in order: %v", got)
		}
	}
	up := src.reqs[0]
	if up.GetLimit() != 40 { // limit 3 x 4, raised to the floor
		t.Errorf("upstream limit %d, want 40", up.GetLimit())
	}
	if diff := cmp.Diff(prefetch, up.GetPrefetch(), protocmp.Transform()); diff != "" {
		t.Errorf("prefetch changed (-caller +upstream):\n%s", diff)
	}
}
