package rank_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
)

// guardMem is a candidate of the guard cases.
type guardMem struct {
	id    uint64
	score float32
	conf  float64
	age   float64 // days since last observed
	reads int     // accesses by replica "z"
	vec   []float32
}

func (m guardMem) point() *qdrant.ScoredPoint {
	conf := m.conf
	if conf == 0 {
		conf = 0.9
	}
	var counts map[string]any
	if m.reads > 0 {
		counts = map[string]any{"z": m.reads}
	}
	// Texts differ in length, not in a number or one word: duplicates by
	// vector fold, as they would on the write path.
	text := "guard memory" + strings.Repeat(" again", int(m.id))
	return scored(m.id, m.score, memoryPayload(text, conf, m.age, counts), m.vec)
}

func guardPoints(ms ...guardMem) []*qdrant.ScoredPoint {
	var out []*qdrant.ScoredPoint
	for _, m := range ms {
		out = append(out, m.point())
	}
	return out
}

// TestGuard: every result is ordered by its weight and returned with it
// (so scores never increase down the list), guard on or off; the guard
// decides which results are relevant, and only those are counted as
// accessed. Reads add at most 2% to the weight: popularity never beats
// relevance, guard or not.
func TestGuard(t *testing.T) {
	tests := []struct {
		name       string
		mems       []guardMem
		guard      rank.Guard
		want       []uint64
		decisions  []rank.GuardDecision
		wantCounts []uint64 // counted as accessed
	}{
		{
			// The case: a memory read 90 times at cosine 0.3
			// outranked a fresh, confirmed one at 0.75 (the seeds' boost,
			// x5.5 against x1). Bounded, 90 reads make 0.28 x 1.016.
			name: "popularity never beats relevance",
			mems: []guardMem{
				{id: 1, score: 0.75},
				{id: 2, score: 0.28, reads: 90},
				{id: 3, score: 0.55, reads: 40},
				{id: 4, score: 0.66, reads: 2},
			},
			guard:      testGuard,
			want:       []uint64{1, 4, 3, 2},
			decisions:  []rank.GuardDecision{rank.GuardRelevant, rank.GuardRelevant, rank.GuardBelowBand, rank.GuardBelowFloor},
			wantCounts: []uint64{1, 4},
		},
		{
			name: "guard off: the same order, everything counted",
			mems: []guardMem{
				{id: 1, score: 0.75},
				{id: 2, score: 0.30, reads: 90},
				{id: 3, score: 0.55, reads: 40},
				{id: 4, score: 0.66, reads: 2},
			},
			guard:      rank.Guard{Off: true},
			want:       []uint64{1, 4, 3, 2},
			decisions:  []rank.GuardDecision{rank.GuardOff, rank.GuardOff, rank.GuardOff, rank.GuardOff},
			wantCounts: []uint64{3, 2, 4, 1},
		},
		{
			// Within the band, reads do re-order memories of nearly the same
			// similarity: 0.70 x 1.016 = 0.711 over 0.705.
			name: "reads break near ties",
			mems: []guardMem{
				{id: 1, score: 0.705},
				{id: 2, score: 0.70, reads: 90},
			},
			guard:      testGuard,
			want:       []uint64{2, 1},
			decisions:  []rank.GuardDecision{rank.GuardRelevant, rank.GuardRelevant},
			wantCounts: []uint64{1, 2},
		},
		{
			// 0.25 x 1.016 stays below 0.28.
			name: "nothing reaches the floor: nothing counted",
			mems: []guardMem{
				{id: 1, score: 0.25, reads: 80},
				{id: 2, score: 0.28},
				{id: 3, score: 0.10, reads: 200},
			},
			guard:     testGuard,
			want:      []uint64{2, 1, 3},
			decisions: []rank.GuardDecision{rank.GuardBelowFloor, rank.GuardBelowFloor, rank.GuardBelowFloor},
		},
		{
			// Seed 000's order is kept for negative similarities: the
			// factors never lift one, so -0.1 stays above -0.6.
			name: "negative similarities keep their order",
			mems: []guardMem{
				{id: 1, score: -0.6, reads: 100},
				{id: 2, score: -0.1, age: 100},
				{id: 3, score: -0.3, conf: 0.95},
			},
			guard:     testGuard,
			want:      []uint64{2, 3, 1},
			decisions: []rank.GuardDecision{rank.GuardBelowFloor, rank.GuardBelowFloor, rank.GuardBelowFloor},
		},
		{
			name: "negative similarities with the guard off",
			mems: []guardMem{
				{id: 1, score: -0.6, reads: 100},
				{id: 2, score: -0.1, age: 100},
				{id: 3, score: -0.3, conf: 0.95},
			},
			guard:      rank.Guard{Off: true},
			want:       []uint64{2, 3, 1},
			decisions:  []rank.GuardDecision{rank.GuardOff, rank.GuardOff, rank.GuardOff},
			wantCounts: []uint64{2, 3, 1},
		},
		{
			// A floor below zero lets negative similarities into the band,
			// where the factors still never lift them.
			name: "a negative band keeps the order too",
			mems: []guardMem{
				{id: 1, score: -0.2, reads: 100},
				{id: 2, score: -0.1, age: 100},
			},
			guard:      rank.Guard{Band: 0.5, Floor: -1},
			want:       []uint64{2, 1},
			decisions:  []rank.GuardDecision{rank.GuardRelevant, rank.GuardRelevant},
			wantCounts: []uint64{2, 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := &fakePayloads{}
			rec := newRecorder(t, dst, nil)
			src := &fakeSource{info: cosineInfo(), points: guardPoints(tc.mems...)}
			r := newRanker(t, src, func(c *rank.Config) { c.Guard, c.Recorder = tc.guard, rec })
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			var decisions []rank.GuardDecision
			prev := math.Inf(1)
			for i, ex := range res.Explanations {
				decisions = append(decisions, ex.Guard)
				score := float64(res.Points[i].GetScore())
				if score > prev {
					t.Errorf("score %v of %d is above the one before it (%v)", score, ex.ID.GetNum(), prev)
				}
				prev = score
				if ex.Score != ex.Weight || score != float64(float32(ex.Weight)) {
					t.Errorf("%d (%v): returned %v (explained %v), want its weight %v", ex.ID.GetNum(), ex.Guard, score, ex.Score, ex.Weight)
				}
			}
			if diff := cmp.Diff(tc.decisions, decisions); diff != "" {
				t.Errorf("guard decisions (-want +got):\n%s", diff)
			}
			if err := rec.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			var counted []uint64
			for k := range dst.totals() {
				var id uint64
				fmt.Sscanf(k, "mem/%d", &id)
				counted = append(counted, id)
			}
			slices.Sort(counted)
			want := slices.Clone(tc.wantCounts)
			slices.Sort(want)
			if diff := cmp.Diff(want, counted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("counted as accessed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGuardLeadsGroups: a duplicate beyond the band folds into the
// relevant memory that leads its group by weight, however often it was
// read; when the duplicate is the more trusted, it shows the group, which
// keeps the relevant memory's place, score and guard decision, and the
// relevant memory is folded into it. Only a relevant result is counted as accessed; the guard
// report counts what the reader sees.
func TestGuardLeadsGroups(t *testing.T) {
	// a at cosine 0.8 to the query; b at cosine 0.93 to a (a tier-2
	// duplicate), turned away from the query in the plane of both.
	a := vecAt(0.8, 1)
	b := make([]float32, dim)
	b[0], b[1] = float32(0.93*0.8-math.Sqrt(1-0.93*0.93)*0.6), float32(0.93*0.6+math.Sqrt(1-0.93*0.93)*0.8)
	cos := float64(b[0])
	if cos > 0.8-testGuard.Band {
		t.Fatalf("the duplicate's similarity %v is inside the band", cos)
	}
	type report struct{ Relevant, Beyond, Folded int }
	tests := []struct {
		name        string
		confA       float64
		confB       float64
		want        uint64
		wantFolded  uint64
		wantGuard   rank.GuardDecision
		wantReport  report
		wantCounted []uint64
	}{
		{
			name: "equal trust: the relevant memory shows the group", confA: 0.9, confB: 0.9,
			want: 1, wantFolded: 2, wantGuard: rank.GuardRelevant,
			wantReport: report{Relevant: 1}, wantCounted: []uint64{1},
		},
		{
			// The group keeps its best member's place, score and guard
			// decision: relevant, and the shown member is counted.
			name: "the duplicate beyond the band is the more trusted: it shows the group", confA: 0.7, confB: 0.95,
			want: 2, wantFolded: 1, wantGuard: rank.GuardRelevant,
			wantReport: report{Relevant: 1, Folded: 1}, wantCounted: []uint64{2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pts := guardPoints(
				guardMem{id: 1, score: 0.8, vec: a, conf: tc.confA},
				guardMem{id: 2, score: float32(cos), reads: 500, vec: b, conf: tc.confB},
			)
			dst := &fakePayloads{}
			rec := newRecorder(t, dst, nil)
			r := newRanker(t, &fakeSource{info: cosineInfo(), points: pts}, func(c *rank.Config) { c.Guard, c.Recorder = testGuard, rec })
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]uint64{tc.want}, ids(res.Points)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			ex := res.Explanations[0]
			if got := numIDs(ex.FoldedIDs); !slices.Equal(got, []uint64{tc.wantFolded}) {
				t.Errorf("folded %v, want [%d]", got, tc.wantFolded)
			}
			// Returned with the group's weight: 1's (similarity 0.8, never read).
			if ex.Guard != tc.wantGuard || math.Abs(float64(res.Points[0].GetScore())-0.8) > 1e-6 {
				t.Errorf("guard %v score %v weight %v: want %v, the group's weight 0.8", ex.Guard, res.Points[0].GetScore(), ex.Weight, tc.wantGuard)
			}
			g := res.Guard
			if got := (report{g.Relevant, g.Beyond, g.Folded}); got != tc.wantReport {
				t.Errorf("guard report %+v, want %+v", got, tc.wantReport)
			}
			if err := rec.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			var counted []uint64
			for k := range dst.totals() {
				var id uint64
				fmt.Sscanf(k, "mem/%d", &id)
				counted = append(counted, id)
			}
			if diff := cmp.Diff(tc.wantCounted, counted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("counted (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGuardRelativeBand: fusion scores have no fixed scale, so the band is
// a fraction of the best one, and there is no floor.
func TestGuardRelativeBand(t *testing.T) {
	pts := guardPoints(
		guardMem{id: 1, score: 0.032},            // the best fused score
		guardMem{id: 2, score: 0.026, reads: 30}, // within 25%: relevant
		guardMem{id: 3, score: 0.016, reads: 300},
	)
	prefetch := []*qdrant.PrefetchQuery{{Query: qdrant.NewQueryDense(query())}}
	r := newRanker(t, &fakeSource{info: cosineInfo(), points: pts}, func(c *rank.Config) { c.Guard = testGuard })
	res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Prefetch: prefetch, Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint64{1, 2, 3}, ids(res.Points)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var decisions []rank.GuardDecision
	for _, ex := range res.Explanations {
		decisions = append(decisions, ex.Guard)
	}
	if diff := cmp.Diff([]rank.GuardDecision{rank.GuardRelevant, rank.GuardRelevant, rank.GuardBelowBand}, decisions); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	g := res.Guard
	if !g.Applied || !g.Relative || math.Abs(g.Cutoff-0.032*0.75) > 1e-6 || g.Relevant != 2 || g.Beyond != 1 {
		t.Errorf("guard report %+v", g)
	}
}

// TestEqualMetadataKeepsRawOrder: with every memory's metadata equal and
// no near-duplicate to fold, memrank's order is the store's, guard on or
// off.
func TestEqualMetadataKeepsRawOrder(t *testing.T) {
	e := newEnv(t)
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	rng := rand.New(rand.NewPCG(7, 11))
	var pts []pt
	for i := range 60 {
		p := memoryPayload(fmt.Sprintf("memory %d", i), 0.8, 12, map[string]any{"a": 3})
		pts = append(pts, pt{id: uint64(i + 1), vec: randomUnit(rng), payload: p})
	}
	e.upsert(t, "mem", pts...)
	for _, g := range []rank.Guard{testGuard, {Off: true}, {Band: 2, Floor: -1}} {
		r := newRanker(t, e.client, func(c *rank.Config) { c.Guard = g })
		for q := range 20 {
			vec := randomUnit(rng)
			if q%2 == 0 { // queries near a stored memory, so some are relevant
				vec = jitterUnit(rng, pts[rng.IntN(len(pts))].vec, 0.6)
			}
			raw, err := e.client.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(vec), Limit: u64(10)})
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(vec), Limit: u64(10)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ids(raw), ids(res.Points)); diff != "" {
				t.Fatalf("guard %+v, query %d: memrank's order differs from the store's (-store +memrank):\n%s", g, q, diff)
			}
		}
	}
}

// TestConfidenceWeight: at weight 0 confidence only gates (seed 000's
// weight); at 1 it scales the weight.
func TestConfidenceWeight(t *testing.T) {
	pts := guardPoints(
		guardMem{id: 1, score: 0.70, conf: 0.60},
		guardMem{id: 2, score: 0.68, conf: 0.95},
	)
	for _, tc := range []struct {
		w    float64
		want []uint64
	}{{0, []uint64{1, 2}}, {0.5, []uint64{2, 1}}, {1, []uint64{2, 1}}} {
		t.Run(fmt.Sprint(tc.w), func(t *testing.T) {
			params := scoring.DefaultParams()
			params.ConfidenceWeight = tc.w
			r := newRanker(t, &fakeSource{info: cosineInfo(), points: pts}, func(c *rank.Config) { c.Params, c.Guard = params, testGuard })
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, ex := range res.Explanations {
				f := 1 - tc.w + tc.w*ex.Confidence
				if math.Abs(ex.ConfidenceFactor-f) > 1e-12 || math.Abs(ex.Weight-ex.BaseScore*ex.FreshnessFactor*ex.AccessBoost*f) > 1e-12 {
					t.Errorf("%d: factor %v weight %v, want %v and base x freshness factor x boost x factor", ex.ID.GetNum(), ex.ConfidenceFactor, ex.Weight, f)
				}
			}
		})
	}
}

// TestNothingCountedWithoutAScale: fused, formula and sparse scores have no
// floor that can tell the best result from the best of nothing, so no
// result of such a query is counted as accessed.
func TestNothingCountedWithoutAScale(t *testing.T) {
	pts := guardPoints(guardMem{id: 1, score: 0.032}, guardMem{id: 2, score: 0.031})
	prefetch := []*qdrant.PrefetchQuery{{Query: qdrant.NewQueryDense(query())}}
	dst := &fakePayloads{}
	rec := newRecorder(t, dst, nil)
	r := newRanker(t, &fakeSource{info: cosineInfo(), points: pts}, func(c *rank.Config) { c.Guard, c.Recorder = testGuard, rec })
	res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Prefetch: prefetch, Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 2 || res.Explanations[0].Guard != rank.GuardRelevant {
		t.Fatalf("%v", res.Explanations)
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := dst.totals(); len(got) != 0 {
		t.Errorf("counted %v", got)
	}
}

// TestMixedCollection: in a collection recognised as memories, a point that
// is not a memory record is ranked but never gated and never written to,
// even with a key memories also use ({"source": "wiki/page.md"}).
func TestMixedCollection(t *testing.T) {
	wiki := scored(3, 0.9, map[string]any{"text": "wiki page", "source": "wiki/page.md"}, nil)
	pts := append(guardPoints(guardMem{id: 1, score: 0.9}, guardMem{id: 2, score: 0.89}), wiki)
	dst := &fakePayloads{}
	rec := newRecorder(t, dst, nil)
	r := newRanker(t, &fakeSource{info: cosineInfo(), points: pts}, func(c *rank.Config) { c.Guard, c.Recorder = testGuard, rec })
	res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())})
	if err != nil {
		t.Fatal(err)
	}
	if res.Detection.Rule != "2 of 3 sampled points are memrank memories" {
		t.Fatalf("detection %q", res.Detection.Rule)
	}
	got := ids(res.Points)
	slices.Sort(got)
	if diff := cmp.Diff([]uint64{1, 2, 3}, got); diff != "" {
		t.Errorf("returned (-want +got):\n%s", diff)
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := dst.totals()["mem/3"]; ok || len(dst.totals()) != 2 {
		t.Errorf("counted %v: want the two memories only", dst.totals())
	}
}
