package rank_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/telemetry/settings"
)

// The read path's ranking puts relevance first (docs/scoring.md): age
// never excludes, every factor of the weight is bounded, the gate yields
// to the best match, and a group of duplicates is shown by its most
// trusted member. These tests hold it to that.

// rel is a candidate of the relevance cases: a scored memory unless
// unscored, with a stored confidence (0.9 when 0), an age in days, reads
// by replica "z", and extra payload.
type rel struct {
	id       uint64
	score    float32
	conf     float64
	age      float64
	reads    int
	vec      []float32
	text     string
	unscored bool
	extra    map[string]any
}

func (m rel) point() *qdrant.ScoredPoint {
	text := m.text
	if text == "" {
		text = fmt.Sprintf("relevance memory %d", m.id)
	}
	if m.unscored {
		return scored(m.id, m.score, map[string]any{"text": text}, m.vec)
	}
	conf := m.conf
	if conf == 0 {
		conf = 0.9
	}
	var counts map[string]any
	if m.reads > 0 {
		counts = map[string]any{"z": m.reads}
	}
	p := memoryPayload(text, conf, m.age, counts)
	for k, v := range m.extra {
		p[k] = v
	}
	return scored(m.id, m.score, p, m.vec)
}

func relPoints(ms ...rel) []*qdrant.ScoredPoint {
	var out []*qdrant.ScoredPoint
	for _, m := range ms {
		out = append(out, m.point())
	}
	return out
}

// textOnly is a memory stored with nothing but its text, as the write
// path scores one: a weak inference at confidence 0.4675, between the
// render gate (0.40) and the retrieval gate (0.50).
func textOnly(id uint64, score float32) rel {
	return rel{id: id, score: score, conf: 0.4675, extra: map[string]any{"source": "weak_inference"}}
}

// droppedReasons are a result's dropped candidates' reasons, by id.
func droppedReasons(res *rank.Result) map[uint64]string {
	out := map[uint64]string{}
	for _, d := range res.Dropped {
		out[d.ID.GetNum()] = d.Reason
	}
	return out
}

// TestOldRelevantMemoryReturned: a memory ten years old, never read, that
// is the best match is returned, and first unless a fresher memory comes
// within 30% of its similarity at full focus (age takes at most
// FreshnessWeight, 70%, of the weight). It is never dropped, whatever its
// tier: past its decay floor, its tier is archived, a label.
func TestOldRelevantMemoryReturned(t *testing.T) {
	const decade = 3650
	old := rel{id: 1, score: 0.9, age: decade}
	fresh := func(id uint64, score float32, reads int) rel { return rel{id: id, score: score, reads: reads} }
	tests := []struct {
		name      string
		mems      []rel
		pinned    bool // focus pinned at 1
		limit     uint64
		want      []uint64
		wantFocus float64
	}{
		{
			// The five most similar (the old one and four fresh) are less
			// fresh than the ten: the query is not about recent memories.
			name: "its query does not weigh freshness: first",
			mems: []rel{old, fresh(2, 0.85, 40), fresh(3, 0.8, 0), fresh(4, 0.75, 9), fresh(5, 0.7, 0), fresh(6, 0.65, 0),
				fresh(7, 0.6, 0), fresh(8, 0.55, 0), fresh(9, 0.5, 0), fresh(10, 0.45, 0)},
			limit: 10, want: []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		},
		{
			// At full focus its weight is 0.9 x 0.3 = 0.27: 0.28 beats it,
			// 0.26 does not.
			name:   "full focus: only a fresher memory within 30% of its similarity beats it",
			mems:   []rel{old, fresh(2, 0.28, 0), fresh(3, 0.26, 90)},
			pinned: true, limit: 10, want: []uint64{2, 1, 3}, wantFocus: 1,
		},
		{
			name:   "full focus: nothing fresher within 30%, first",
			mems:   []rel{old, fresh(2, 0.26, 0), fresh(3, 0.2, 0)},
			pinned: true, limit: 10, want: []uint64{1, 2, 3}, wantFocus: 1,
		},
		{
			name: "full focus, limit 1: however many fresh memories are just below",
			mems: func() []rel {
				ms := []rel{old}
				for i := range 39 {
					ms = append(ms, fresh(uint64(i+2), 0.26, i))
				}
				return ms
			}(),
			pinned: true, limit: 1, want: []uint64{1}, wantFocus: 1,
		},
		{
			name:   "stored as archived by consolidation, still retrievable: returned",
			mems:   []rel{{id: 1, score: 0.9, age: decade, extra: map[string]any{"tier": "archived"}}, fresh(2, 0.26, 0)},
			pinned: true, limit: 10, want: []uint64{1, 2}, wantFocus: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{info: cosineInfo(), points: relPoints(tc.mems...)}
			r := newRanker(t, src, func(c *rank.Config) {
				c.Guard = testGuard
				if tc.pinned {
					c.Params = focusFloor(1)
				}
			})
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: &tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			if res.Guard.Focus != tc.wantFocus {
				t.Errorf("focus %v, want %v", res.Guard.Focus, tc.wantFocus)
			}
			if _, ok := droppedReasons(res)[1]; ok {
				t.Errorf("the old memory was dropped: %v", res.Dropped)
			}
			i := slices.Index(ids(res.Points), 1)
			if i < 0 {
				t.Fatalf("the old memory was not returned")
			}
			ex := res.Explanations[i]
			// The bound: age took at most FreshnessWeight of the weight.
			p := scoring.DefaultParams()
			if floor := (1 - p.FreshnessWeight) * ex.BaseScore; ex.Weight < floor-1e-12 {
				t.Errorf("weight %v below (1 - %v) x %v", ex.Weight, p.FreshnessWeight, ex.BaseScore)
			}
			if want := weight(0.9, decade, 0, tc.wantFocus); math.Abs(ex.Weight-want) > 1e-12 {
				t.Errorf("weight %v, want %v", ex.Weight, want)
			}
			if ex.Tier != scoring.TierArchived || ex.WithinFloor || ex.Archived != "" || ex.Guard != rank.GuardRelevant {
				t.Errorf("tier %v within floor %v archived %q guard %v: want the archived tier as a label, relevant, not marked",
					ex.Tier, ex.WithinFloor, ex.Archived, ex.Guard)
			}
		})
	}
}

// TestGateYieldsToRelevance: below the retrieval gate, the best match by
// similarity still comes back, flagged below_gate and in its weight's
// place, when it would be rendered (confidence at the render gate or
// above), is at the guard's floor or above, and nothing that passes the
// gate is within the guard's band of it; every other below-gate memory is
// dropped.
func TestGateYieldsToRelevance(t *testing.T) {
	passing := func(id uint64, score float32) rel { return rel{id: id, score: score} }
	prefetch := []*qdrant.PrefetchQuery{{Query: qdrant.NewQueryDense(query())}}
	tests := []struct {
		name          string
		mems          []rel
		fusion        bool
		pinned        bool
		want          []uint64
		wantBelowGate []uint64
		wantDropped   map[uint64]string
		// wantHidden are the results not rendered (below the render gate);
		// every other one is.
		wantHidden []uint64
	}{
		{
			name: "a text-only memory, the best match by far, yields",
			mems: []rel{textOnly(1, 0.9), passing(2, 0.6), passing(3, 0.5)},
			want: []uint64{1, 2, 3}, wantBelowGate: []uint64{1},
		},
		{
			name: "a passing memory within the band: no yield",
			mems: []rel{textOnly(1, 0.9), passing(2, 0.8), passing(3, 0.5)},
			want: []uint64{2, 3}, wantDropped: map[uint64]string{1: "below_gate"},
		},
		{
			name: "a speculation (0.30, below the render gate) never yields",
			mems: []rel{{id: 1, score: 0.9, conf: 0.3, extra: map[string]any{"source": "speculation"}}, passing(2, 0.5)},
			want: []uint64{2}, wantDropped: map[uint64]string{1: "below_gate"},
		},
		{
			name: "below the guard's floor: no yield",
			mems: []rel{textOnly(1, 0.28), passing(2, 0.1)},
			want: []uint64{2}, wantDropped: map[uint64]string{1: "below_gate"},
		},
		{
			name: "not the best match: no yield",
			mems: []rel{passing(1, 0.9), textOnly(2, 0.6)},
			want: []uint64{1}, wantDropped: map[uint64]string{2: "below_gate"},
		},
		{
			name: "only the best match yields",
			mems: []rel{textOnly(1, 0.9), textOnly(2, 0.88), passing(3, 0.6)},
			want: []uint64{1, 3}, wantBelowGate: []uint64{1}, wantDropped: map[uint64]string{2: "below_gate"},
		},
		{
			// 240 days old at full focus: 0.9 x 0.475 = 0.43, below 0.6.
			name:   "it comes back in its weight's place",
			mems:   []rel{{id: 1, score: 0.9, conf: 0.4675, age: 240}, passing(2, 0.6)},
			pinned: true, want: []uint64{2, 1}, wantBelowGate: []uint64{1},
		},
		{
			name: "nothing passes: every one back, flagged",
			mems: []rel{textOnly(1, 0.9), {id: 2, score: 0.8, conf: 0.3}},
			want: []uint64{1, 2}, wantBelowGate: []uint64{1, 2}, wantHidden: []uint64{2},
		},
		{
			name:   "fused scores: the relative band (25%), no floor",
			mems:   []rel{textOnly(1, 0.032), passing(2, 0.02)},
			fusion: true, want: []uint64{1, 2}, wantBelowGate: []uint64{1},
		},
		{
			name:   "fused scores: a passing memory within the relative band",
			mems:   []rel{textOnly(1, 0.032), passing(2, 0.026)},
			fusion: true, want: []uint64{2}, wantDropped: map[uint64]string{1: "below_gate"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{info: cosineInfo(), points: relPoints(tc.mems...)}
			r := newRanker(t, src, func(c *rank.Config) {
				c.Guard = testGuard
				if tc.pinned {
					c.Params = focusFloor(1)
				}
			})
			req := &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())}
			if tc.fusion {
				req = &qdrant.QueryPoints{CollectionName: "mem", Prefetch: prefetch, Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF)}
			}
			res, err := r.Query(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			var below, hidden []uint64
			for _, ex := range res.Explanations {
				if ex.BelowGate {
					below = append(below, ex.ID.GetNum())
				}
				if !ex.Render {
					hidden = append(hidden, ex.ID.GetNum())
				}
			}
			if diff := cmp.Diff(tc.wantHidden, hidden, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("not rendered (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantBelowGate, below, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("below the gate (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDropped, droppedReasons(res), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFoldLeaderByTrust: a paraphrase nearer the query but less trusted
// folds into the trusted statement, which is shown, in the group's place
// (the nearer member's) with the group's score and guard decision, its own
// weight in its explanation, and the paraphrase in its folded ids. The
// reader sees the better established of two wordings of one fact, where
// the nearer would have been.
func TestFoldLeaderByTrust(t *testing.T) {
	// 1 and 2 are tier-2 duplicates (cosine 0.95); 3 and 4 are apart.
	mems := func(paraphraseConf float64) []rel {
		return []rel{
			{id: 1, score: 0.9, conf: paraphraseConf, vec: base, text: "seems to like dark mode"},
			{id: 2, score: 0.86, conf: 0.95, vec: cos95, text: "uses a dark theme everywhere"},
			{id: 3, score: 0.88, vec: vecAt(0.88, 12), text: "works from Lisbon"},
			{id: 4, score: 0.5, vec: vecAt(0.5, 13), text: "has a cat"},
		}
	}
	type report struct{ Relevant, Beyond, Folded int }
	tests := []struct {
		name        string
		conf        float64 // the paraphrase's
		limit       uint64
		want        []uint64
		shown       uint64
		folded      uint64
		wantReport  report
		wantCounted []uint64
	}{
		{
			name: "the trusted statement shows the group", conf: 0.6, limit: 10,
			want: []uint64{2, 3, 4}, shown: 2, folded: 1,
			wantReport: report{Relevant: 2, Beyond: 1, Folded: 1}, wantCounted: []uint64{2, 3},
		},
		{
			// The group keeps its best match's place (0.9): the trusted
			// statement answers a query for one.
			name: "the group keeps its place at a limit of 1", conf: 0.6, limit: 1,
			want: []uint64{2}, shown: 2, folded: 1, wantReport: report{Relevant: 1, Folded: 1}, wantCounted: []uint64{2},
		},
		{
			name: "as trusted: the best weight shows the group", conf: 0.95, limit: 10,
			want: []uint64{1, 3, 4}, shown: 1, folded: 2,
			wantReport: report{Relevant: 2, Beyond: 1, Folded: 1}, wantCounted: []uint64{1, 3},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := &fakePayloads{}
			rec := newRecorder(t, dst, nil)
			src := &fakeSource{info: cosineInfo(), points: relPoints(mems(tc.conf)...)}
			r := newRanker(t, src, func(c *rank.Config) { c.Guard, c.Recorder = testGuard, rec })
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: &tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			prev := math.Inf(1)
			for i, p := range res.Points {
				ex := res.Explanations[i]
				// Fresh and never read: a weight is the similarity. The shown
				// member scores its group's (the nearer member's).
				group := ex.Weight
				if p.GetId().GetNum() == tc.shown && tc.conf < 0.95 {
					group = 0.9
				}
				if float64(p.GetScore()) > prev || math.Abs(float64(p.GetScore())-group) > 1e-6 || ex.Weight != ex.BaseScore ||
					ex.Score != float64(p.GetScore()) || ex.Guard != rank.GuardRelevant && ex.BaseScore > 0.8 {
					t.Errorf("%d: score %v (explained %v) weight %v base %v guard %v: want the group's weight %v, not above %v",
						p.GetId().GetNum(), p.GetScore(), ex.Score, ex.Weight, ex.BaseScore, ex.Guard, group, prev)
				}
				prev = float64(p.GetScore())
				if p.GetId().GetNum() == tc.shown {
					if got := numIDs(ex.FoldedIDs); !slices.Equal(got, []uint64{tc.folded}) || ex.DedupTier != "vector" {
						t.Errorf("%d: folded %v (%s), want [%d] (vector)", tc.shown, got, ex.DedupTier, tc.folded)
					}
				}
			}
			// The fold is listed whether or not its group was returned.
			var into uint64
			for _, d := range res.Dropped {
				if d.Reason == "folded" {
					into = d.Into.GetNum()
				}
			}
			if wantInto := map[float64]uint64{0.6: 2, 0.95: 1}[tc.conf]; into != wantInto {
				t.Errorf("folded into %d, want %d (%v)", into, wantInto, res.Dropped)
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
			if diff := cmp.Diff(tc.wantCounted, counted, cmpopts.SortSlices(func(a, b uint64) bool { return a < b }), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("counted (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFocus: a query whose most similar candidates are fresher than the
// pool it was answered from weighs freshness, as much as they are; one
// whose best matches are old, or no fresher than the rest, is answered by
// similarity. The focus is reported, and every weight is computed with it.
func TestFocus(t *testing.T) {
	const old = 240 // freshness 1/4
	// ten candidates at similarities 0.95 down to 0.86; ages by position.
	mk := func(ages ...float64) []rel {
		var ms []rel
		for i, a := range ages {
			ms = append(ms, rel{id: uint64(i + 1), score: float32(0.95 - 0.01*float64(i)), age: a})
		}
		return ms
	}
	tests := []struct {
		name      string
		mems      []rel
		floor     float64
		wantFocus float64
		want      []uint64
	}{
		{
			// Top five: four fresh, one old (mean 0.85); all ten: 0.55. Focus
			// (0.85 - 0.55) / 0.45 = 2/3: 1 (0.95 x 0.65) falls behind the
			// fresh ones, still ahead of the old 6 to 10.
			name:      "its best matches are fresh: freshness weighs",
			mems:      mk(old, 0, 0, 0, 0, old, old, old, old, old),
			wantFocus: 2.0 / 3, want: []uint64{2, 3, 4, 5, 1, 6, 7, 8, 9, 10},
		},
		{
			name:      "all its best matches are fresh: full focus",
			mems:      mk(0, 0, 0, 0, 0, old, old, old, old, old),
			wantFocus: 1, want: []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		},
		{
			name:      "its best matches are old: by similarity",
			mems:      mk(old, old, old, old, old, 0, 0, 0, 0, 0),
			wantFocus: 0, want: []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		},
		{
			name:      "as old as the rest: by similarity",
			mems:      mk(old, 0, old, 0, old, 0, old, 0, old, 0),
			wantFocus: 0, want: []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		},
		{
			// Top and pool are the same five candidates: no contrast.
			name:      "no more candidates than the top: by similarity",
			mems:      mk(old, 0, 0, 0, 0),
			wantFocus: 0, want: []uint64{1, 2, 3, 4, 5},
		},
		{
			// The floor: old memories keep 1 - 0.7 x 0.5 x 0.75 = 0.74 of their
			// similarity, below every fresh one.
			name:      "a focus floor of 0.5",
			mems:      mk(old, old, old, old, old, 0, 0, 0, 0, 0),
			floor:     0.5,
			wantFocus: 0.5, want: []uint64{6, 7, 8, 9, 10, 1, 2, 3, 4, 5},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			params := focusFloor(tc.floor)
			var cands []focusCand
			for _, m := range tc.mems {
				cands = append(cands, focusCand{base: float64(m.score), fresh: scoring.Freshness(m.age, 120)})
			}
			if f := expectedFocus(params, cands); math.Abs(f-tc.wantFocus) > 1e-12 {
				t.Fatalf("the fixture's focus is %v, want %v", f, tc.wantFocus)
			}
			src := &fakeSource{info: cosineInfo(), points: relPoints(tc.mems...)}
			r := newRanker(t, src, func(c *rank.Config) { c.Guard, c.Params = testGuard, params })
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(res.Guard.Focus-tc.wantFocus) > 1e-12 {
				t.Errorf("focus %v, want %v", res.Guard.Focus, tc.wantFocus)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			for i, p := range res.Points {
				id := p.GetId().GetNum()
				m := tc.mems[id-1]
				ex := res.Explanations[i]
				if want := weight(m.score, m.age, 0, tc.wantFocus); math.Abs(ex.Weight-want) > 1e-12 || ex.Focus != res.Guard.Focus {
					t.Errorf("%d: weight %v at focus %v, want %v at %v", id, ex.Weight, ex.Focus, want, tc.wantFocus)
				}
			}
		})
	}
}

// TestGuardReportCounts: the guard report counts the returned results
// inside and outside the band, after folding and the offset and limit,
// and the relevant candidates folded into returned results.
func TestGuardReportCounts(t *testing.T) {
	v1 := vecAt(0.95, 1)
	v5 := vecAt(0.7, 5)
	pts := relPoints(
		rel{id: 1, score: 0.95, vec: v1, text: "likes tea"},
		rel{id: 2, score: 0.93, vec: vecAt(0.93, 2), text: "Likes tea!"},   // tier 1 into 1: relevant
		rel{id: 3, score: 0.90, vec: near(v1, 0.95, 3), text: "tea lover"}, // tier 2 into 1: relevant
		rel{id: 4, score: 0.85, vec: vecAt(0.85, 4), text: "lives in Lisbon"},
		rel{id: 5, score: 0.70, vec: v5, text: "owns a bike"},                  // beyond the band (0.80)
		rel{id: 6, score: 0.65, vec: near(v5, 0.95, 6), text: "has a bicycle"}, // into 5: beyond
		rel{id: 7, score: 0.60, vec: vecAt(0.6, 7), text: "has a cat"},
		rel{id: 8, score: 0.25, vec: vecAt(0.25, 8), text: "once saw a film"}, // below the floor
	)
	type report struct{ Relevant, Beyond, Folded int }
	tests := []struct {
		name   string
		limit  uint64
		offset uint64
		want   []uint64
		report report
	}{
		{name: "everything", limit: 10, want: []uint64{1, 4, 5, 7, 8}, report: report{Relevant: 2, Beyond: 3, Folded: 2}},
		{name: "the relevant ones", limit: 2, want: []uint64{1, 4}, report: report{Relevant: 2, Folded: 2}},
		{name: "past the first", limit: 1, offset: 1, want: []uint64{4}, report: report{Relevant: 1}},
		{name: "beyond the band only", limit: 2, offset: 2, want: []uint64{5, 7}, report: report{Beyond: 2}},
		{name: "offset past the results", limit: 2, offset: 5, want: []uint64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRanker(t, &fakeSource{info: cosineInfo(), points: pts}, func(c *rank.Config) { c.Guard = testGuard })
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: &tc.limit, Offset: &tc.offset})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			g := res.Guard
			if got := (report{g.Relevant, g.Beyond, g.Folded}); got != tc.report {
				t.Errorf("report %+v, want %+v", got, tc.report)
			}
			if !g.Applied || g.Relative || math.Abs(g.Best-0.95) > 1e-6 || math.Abs(g.Cutoff-0.80) > 1e-6 {
				t.Errorf("report %+v: want an absolute band from 0.95 down to 0.80", g)
			}
		})
	}
	t.Run("guard off", func(t *testing.T) {
		r := newRanker(t, &fakeSource{info: cosineInfo(), points: pts}, func(c *rank.Config) { c.Guard = rank.Guard{Off: true} })
		res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]uint64{1, 4, 5, 7, 8}, ids(res.Points)); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
		if g := res.Guard; g.Applied || g.Best != 0 || g.Cutoff != 0 || g.Focus != 0 {
			t.Errorf("report %+v: want not applied, no band, the query's focus (0)", g)
		}
	})
}

// TestEmptyAnswer: an answer left empty although the store returned
// candidates says why (every candidate excluded, or the offset past the
// results), and the first one per collection is logged.
func TestEmptyAnswer(t *testing.T) {
	superseded := func(id uint64) rel { return rel{id: id, score: 0.9, extra: map[string]any{"superseded_by": "99"}} }
	tests := []struct {
		name     string
		mems     []rel
		archived bool
		offset   uint64
		want     []uint64
		empty    string
	}{
		{
			name:  "every candidate superseded",
			mems:  []rel{superseded(1), superseded(2), superseded(3)},
			empty: "all 3 candidates were left out: 3 superseded",
		},
		{
			name:     "every candidate superseded, archived ones asked for",
			mems:     []rel{superseded(1), superseded(2)},
			archived: true,
			empty:    "all 2 candidates were left out: 2 superseded",
		},
		{
			name: "every reason",
			mems: []rel{superseded(1), {id: 2, score: 0.8, extra: map[string]any{"retrievable": false}},
				{id: 3, score: 0.7, extra: map[string]any{"retrievable": false, "tier": "archived"}}, superseded(4)},
			empty: "all 4 candidates were left out: 2 superseded, 1 not_retrievable, 1 archived",
		},
		{
			name:     "not retrievable, archived ones asked for: returned",
			mems:     []rel{superseded(1), {id: 2, score: 0.8, extra: map[string]any{"retrievable": false}}},
			archived: true, want: []uint64{2},
		},
		{
			name:   "the offset past the results",
			mems:   []rel{{id: 1, score: 0.9}, {id: 2, score: 0.8}},
			offset: 2,
			empty:  "the offset 2 is past the 2 results",
		},
		{name: "an answer", mems: []rel{superseded(1), {id: 2, score: 0.5}}, want: []uint64{2}},
		{name: "the store had nothing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			src := &fakeSource{info: cosineInfo(), points: relPoints(tc.mems...)}
			r := newRanker(t, src, func(c *rank.Config) {
				c.Mode = rank.ModeRerank // the empty store's collection too
				c.Telemetry = settings.Settings{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			})
			ctx := context.Background()
			if tc.archived {
				ctx = rank.WithArchived(ctx)
			}
			for _, coll := range []string{"mem", "mem", "other"} {
				res, err := r.Query(ctx, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryDense(query()), Offset: &tc.offset})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, ids(res.Points), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: returned (-want +got):\n%s", coll, diff)
				}
				if res.Empty != tc.empty || !res.Reranked {
					t.Errorf("%s: Empty %q (re-ranked %v), want %q", coll, res.Empty, res.Reranked, tc.empty)
				}
			}
			// Once per collection: "mem" was asked twice. Paging past the
			// results is not logged.
			logged := tc.empty != "" && tc.offset == 0
			wantLogs := 0
			if logged {
				wantLogs = 2
			}
			if n := strings.Count(logs.String(), "an answer was empty"); n != wantLogs {
				t.Errorf("%d log lines, want %d:\n%s", n, wantLogs, logs.String())
			}
			if logged && !strings.Contains(logs.String(), "collection=mem") {
				t.Errorf("the log does not name the collection:\n%s", logs.String())
			}
		})
	}
}
