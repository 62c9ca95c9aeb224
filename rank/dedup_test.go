package rank_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/rank"
)

// The write path's verdict cache is the read path's as it is: one verdict
// type, no adapter.
var _ rank.VerdictCache = (*dedup.Judging)(nil)

// dmem is a candidate of the dedup cases: a scored memory, fresh unless
// ageDay says otherwise, whose weight at focus 1 (TestDedup pins it) is
// score x (1 - 0.7 x (1 - freshness)) x access boost.
type dmem struct {
	id     uint64
	score  float32
	text   string
	conf   float64
	n      int // accesses by replica "z"
	vec    []float32
	hash   string // stored text_hash; "" = none stored
	ageDay float64
}

func (m dmem) point() *qdrant.ScoredPoint {
	conf := m.conf
	if conf == 0 {
		conf = 0.9
	}
	var counts map[string]any
	if m.n > 0 {
		counts = map[string]any{"z": m.n}
	}
	p := memoryPayload(m.text, conf, m.ageDay, counts)
	if m.hash != "" {
		p["text_hash"] = m.hash
	}
	return scored(m.id, m.score, p, m.vec)
}

// The dedup fixture's vectors: base is similar to the query; the others
// sit at a chosen cosine from base, each leaning on its own axis.
var (
	base   = vecAt(0.9, 1)
	cos95  = near(base, 0.95, 2)  // tier 2
	cos921 = near(base, 0.921, 3) // tier 2, just above the threshold
	cos919 = near(base, 0.919, 4) // judge band, just below it
	cos91  = near(base, 0.91, 4)  // judge band
	cos85  = near(base, 0.85, 5)  // judge band
	cos80  = near(base, 0.801, 6) // judge band, at its lower edge
	cos79  = near(base, 0.79, 7)  // below the band
	other  = vecAt(0.5, 8)
	other2 = near(other, 0.85, 9)
)

type folded struct {
	IDs   []uint64
	Tiers []string
	Tier  string
	Judge bool
}

func TestDedup(t *testing.T) {
	same := func(a, b string) map[[2]string]dedup.Verdict {
		return map[[2]string]dedup.Verdict{{a, b}: dedup.VerdictSame}
	}
	tests := []struct {
		name     string
		mems     []dmem
		verdicts map[[2]string]dedup.Verdict // nil: no verdict cache
		want     []uint64
		folds    map[uint64]folded // by leader; leaders without folds omitted
		notes    map[uint64]string // JudgeNote by leader, when not ""
		// unscored are points that are not memories, after mems.
		unscored []*qdrant.ScoredPoint
	}{
		{
			name: "tier 1: same normalised text, the higher weight leads",
			mems: []dmem{
				{id: 1, score: 0.9, text: "Prefers tea over coffee.", vec: base, ageDay: 240}, // 0.9 x 0.475 = 0.43
				{id: 2, score: 0.8, text: "prefers TEA over coffee", vec: other},
				{id: 3, score: 0.7, text: "Lives in Lisbon", vec: vecAt(0.7, 10)},
			},
			want:  []uint64{2, 3},
			folds: map[uint64]folded{2: {IDs: []uint64{1}, Tiers: []string{"text_hash"}, Tier: "text_hash"}},
		},
		{
			name: "tier 1: the stored text_hash",
			mems: []dmem{
				{id: 1, score: 0.9, text: "one wording", hash: "h1", vec: base},
				{id: 2, score: 0.8, text: "another wording", hash: "h1", vec: other},
			},
			want:  []uint64{1},
			folds: map[uint64]folded{1: {IDs: []uint64{2}, Tiers: []string{"text_hash"}, Tier: "text_hash"}},
		},
		{
			name: "equal weights: the higher confidence leads",
			mems: []dmem{
				{id: 1, score: 0.8, text: "same fact", conf: 0.7, vec: base},
				{id: 2, score: 0.8, text: "Same fact!", conf: 0.95, vec: base},
			},
			want:  []uint64{2},
			folds: map[uint64]folded{2: {IDs: []uint64{1}, Tiers: []string{"text_hash"}, Tier: "text_hash"}},
		},
		{
			name: "equal weights and confidences: the lower id leads",
			mems: []dmem{
				{id: 9, score: 0.8, text: "same fact", vec: base},
				{id: 4, score: 0.8, text: "same fact", vec: base},
				{id: 7, score: 0.8, text: "same fact", vec: base},
			},
			want:  []uint64{4},
			folds: map[uint64]folded{4: {IDs: []uint64{7, 9}, Tiers: []string{"text_hash", "text_hash"}, Tier: "text_hash"}},
		},
		{
			name: "tier 2: cosine at or above 0.92",
			mems: []dmem{
				{id: 1, score: 0.95, text: "likes dark mode", vec: base},
				{id: 2, score: 0.9, text: "prefers a dark theme", vec: cos95},
				{id: 3, score: 0.85, text: "uses dark colours in the editor", vec: cos921},
				{id: 4, score: 0.80, text: "works at night", vec: cos919},
			},
			want:  []uint64{1, 4},
			folds: map[uint64]folded{1: {IDs: []uint64{2, 3}, Tiers: []string{"vector", "vector"}, Tier: "vector"}},
			notes: map[uint64]string{
				1: "judge not consulted: no verdict cache (1 pair(s) in the judge band)",
				4: "judge not consulted: no verdict cache (1 pair(s) in the judge band)",
			},
		},
		{
			name: "tier 2: a more similar duplicate with a lower weight folds into the leader",
			mems: []dmem{
				{id: 1, score: 0.8, text: "a", vec: base},
				{id: 2, score: 0.9, text: "b", vec: cos95, ageDay: 240}, // 0.43
			},
			want:  []uint64{1},
			folds: map[uint64]folded{1: {IDs: []uint64{2}, Tiers: []string{"vector"}, Tier: "vector"}},
		},
		{
			name: "no verdict cache: nothing in the band folds, judge not consulted",
			mems: []dmem{
				{id: 1, score: 0.9, text: "lives in Lisbon", vec: base},
				{id: 2, score: 0.8, text: "moved to Lisbon", vec: cos85},
				{id: 3, score: 0.7, text: "in Lisbon since 2020", vec: cos80},
				{id: 4, score: 0.6, text: "visited Porto", vec: cos79},
			},
			want: []uint64{1, 2, 3, 4},
			notes: map[uint64]string{
				1: "judge not consulted: no verdict cache (2 pair(s) in the judge band)",
				2: "judge not consulted: no verdict cache (1 pair(s) in the judge band)",
				3: "judge not consulted: no verdict cache (1 pair(s) in the judge band)",
			},
		},
		{
			name:     "tier 3: a cached same verdict folds",
			mems:     []dmem{{id: 1, score: 0.9, text: "lives in Lisbon", vec: base}, {id: 2, score: 0.8, text: "moved to Lisbon", vec: cos85}},
			verdicts: same("lives in Lisbon", "moved to Lisbon"),
			want:     []uint64{1},
			folds:    map[uint64]folded{1: {IDs: []uint64{2}, Tiers: []string{"judge_cache"}, Tier: "judge_cache", Judge: true}},
			notes:    map[uint64]string{1: "cached judge verdicts for 1 of 1 pair(s) in the judge band"},
		},
		{
			name:     "tier 3: key order does not matter",
			mems:     []dmem{{id: 1, score: 0.9, text: "lives in Lisbon", vec: base}, {id: 2, score: 0.8, text: "moved to Lisbon", vec: cos91}},
			verdicts: same("moved to Lisbon", "lives in Lisbon"),
			want:     []uint64{1},
			folds:    map[uint64]folded{1: {IDs: []uint64{2}, Tiers: []string{"judge_cache"}, Tier: "judge_cache", Judge: true}},
			notes:    map[uint64]string{1: "cached judge verdicts for 1 of 1 pair(s) in the judge band"},
		},
		{
			name:     "tier 3: different does not fold",
			mems:     []dmem{{id: 1, score: 0.9, text: "lives in Lisbon", vec: base}, {id: 2, score: 0.8, text: "moved to Lisbon", vec: cos85}},
			verdicts: map[[2]string]dedup.Verdict{{"lives in Lisbon", "moved to Lisbon"}: dedup.VerdictDifferent},
			want:     []uint64{1, 2},
			folds:    map[uint64]folded{1: {Judge: true}, 2: {Judge: true}},
			notes:    map[uint64]string{1: "cached judge verdicts for 1 of 1 pair(s) in the judge band", 2: "cached judge verdicts for 1 of 1 pair(s) in the judge band"},
		},
		{
			name:     "tier 3: contradicts does not fold",
			mems:     []dmem{{id: 1, score: 0.9, text: "lives in Lisbon", vec: base}, {id: 2, score: 0.8, text: "moved to Lisbon", vec: cos85}},
			verdicts: map[[2]string]dedup.Verdict{{"lives in Lisbon", "moved to Lisbon"}: dedup.VerdictContradicts},
			want:     []uint64{1, 2},
			folds:    map[uint64]folded{1: {Judge: true}, 2: {Judge: true}},
			notes:    map[uint64]string{1: "cached judge verdicts for 1 of 1 pair(s) in the judge band", 2: "cached judge verdicts for 1 of 1 pair(s) in the judge band"},
		},
		{
			name:     "tier 3: a cache without this pair is not consulted",
			mems:     []dmem{{id: 1, score: 0.9, text: "lives in Lisbon", vec: base}, {id: 2, score: 0.8, text: "moved to Lisbon", vec: cos85}},
			verdicts: same("lives in Lisbon", "something else"),
			want:     []uint64{1, 2},
			notes:    map[uint64]string{1: "judge not consulted: no cached verdict for 1 pair(s) in the judge band", 2: "judge not consulted: no cached verdict for 1 pair(s) in the judge band"},
		},
		{
			name:     "tier 3: a same verdict outside the band is ignored",
			mems:     []dmem{{id: 1, score: 0.9, text: "lives in Lisbon", vec: base}, {id: 2, score: 0.8, text: "moved to Lisbon", vec: cos79}},
			verdicts: same("lives in Lisbon", "moved to Lisbon"),
			want:     []uint64{1, 2},
		},
		{
			name: "groups are independent; the winner of each is its best",
			mems: []dmem{
				{id: 1, score: 0.9, text: "xa", vec: base, ageDay: 120}, // 0.9 x 0.65 = 0.585
				{id: 2, score: 0.6, text: "ya", vec: other},
				{id: 3, score: 0.7, text: "yb", vec: near(other, 0.97, 11)}, // leads y, and every result
				{id: 4, score: 0.8, text: "xb", vec: cos95, ageDay: 120},    // 0.52
				{id: 5, score: 0.5, text: "yc", vec: other2},
			},
			verdicts: same("y1", "y3"),
			want:     []uint64{3, 1, 5},
			folds: map[uint64]folded{
				3: {IDs: []uint64{2}, Tiers: []string{"vector"}, Tier: "vector"},
				1: {IDs: []uint64{4}, Tiers: []string{"vector"}, Tier: "vector"},
			},
			// y3 is in y2's judge band, and the cache only knows y1 (folded
			// into y2, so never compared again).
			notes: map[uint64]string{
				3: "judge not consulted: no cached verdict for 1 pair(s) in the judge band",
				5: "judge not consulted: no cached verdict for 1 pair(s) in the judge band",
			},
		},
		{
			name: "the least certain tier names the fold",
			mems: []dmem{
				{id: 1, score: 0.9, text: "likes tea", vec: base},
				{id: 2, score: 0.8, text: "Likes tea.", vec: other},
				{id: 3, score: 0.7, text: "enjoys tea", vec: cos85},
				{id: 4, score: 0.6, text: "drinks tea daily", vec: cos95},
			},
			verdicts: same("likes tea", "enjoys tea"),
			want:     []uint64{1},
			folds:    map[uint64]folded{1: {IDs: []uint64{2, 3, 4}, Tiers: []string{"text_hash", "judge_cache", "vector"}, Tier: "judge_cache", Judge: true}},
			notes:    map[uint64]string{1: "cached judge verdicts for 1 of 1 pair(s) in the judge band"},
		},
		{
			// The group gathers around 1, the best weight, and keeps 1's
			// place (0.9, before 3's 0.87); it is shown by 2, the most
			// trusted; 1 is listed as folded in 2's place.
			name: "the most trusted member shows the group",
			mems: []dmem{
				{id: 1, score: 0.9, text: "prefers dark mode, probably", conf: 0.6, vec: base},
				{id: 2, score: 0.85, text: "uses a dark theme", conf: 0.95, vec: cos95},
				{id: 3, score: 0.87, text: "works in Lisbon", vec: vecAt(0.87, 12)},
			},
			want:  []uint64{2, 3},
			folds: map[uint64]folded{2: {IDs: []uint64{1}, Tiers: []string{"vector"}, Tier: "vector"}},
		},
		{
			name: "of several more trusted members, the most trusted; ties keep the first",
			mems: []dmem{
				{id: 1, score: 0.9, text: "same fact", conf: 0.6, vec: base},
				{id: 2, score: 0.8, text: "Same fact.", conf: 0.8, vec: other},
				{id: 3, score: 0.75, text: "same fact!", conf: 0.95, vec: other2},
				{id: 4, score: 0.7, text: "SAME FACT", conf: 0.95, vec: vecAt(0.7, 12)},
			},
			want:  []uint64{3},
			folds: map[uint64]folded{3: {IDs: []uint64{2, 1, 4}, Tiers: []string{"text_hash", "text_hash", "text_hash"}, Tier: "text_hash"}},
		},
		{
			// A point that is not a memory has no confidence to trust: a
			// scored member shows the group it leads by weight.
			name: "an unscored leader is shown by a scored member",
			mems: []dmem{
				{id: 2, score: 0.8, text: "imported fact", conf: 0.7, vec: base},
			},
			unscored: []*qdrant.ScoredPoint{scored(1, 0.9, map[string]any{"text": "Imported fact."}, other)},
			want:     []uint64{2},
			folds:    map[uint64]folded{2: {IDs: []uint64{1}, Tiers: []string{"text_hash"}, Tier: "text_hash"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var pts []*qdrant.ScoredPoint
			for _, m := range tc.mems {
				pts = append(pts, m.point())
			}
			pts = append(pts, tc.unscored...)
			dst := &fakePayloads{}
			rec := newRecorder(t, dst, nil)
			var cache *fakeVerdicts
			// Folding itself, every result counted (the guard's counting is
			// TestGuardLeadsGroups'), age weighing fully.
			r := newRanker(t, &fakeSource{info: cosineInfo(), points: pts}, func(c *rank.Config) {
				c.Guard = rank.Guard{Off: true}
				c.Params = focusFloor(1)
				c.Recorder = rec
				if tc.verdicts != nil {
					cache = newVerdicts(tc.verdicts)
					c.Verdicts = cache
				}
			})
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points)); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			gotFolds := map[uint64]folded{}
			gotNotes := map[uint64]string{}
			for _, ex := range res.Explanations {
				f := folded{IDs: numIDs(ex.FoldedIDs), Tiers: ex.FoldedTiers, Tier: ex.DedupTier, Judge: ex.JudgeConsulted}
				if len(f.IDs) > 0 || f.Judge || f.Tier != "" {
					gotFolds[ex.ID.GetNum()] = f
				}
				if ex.JudgeNote != "" {
					gotNotes[ex.ID.GetNum()] = ex.JudgeNote
				}
			}
			if diff := cmp.Diff(tc.folds, gotFolds, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("folds (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.notes, gotNotes, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("judge notes (-want +got):\n%s", diff)
			}
			// Only the winners count as accessed.
			if err := rec.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			wantCounts := map[string]map[string]int64{}
			for _, id := range tc.want {
				wantCounts["mem/"+idString(qdrant.NewIDNum(id))] = map[string]int64{"a": 1}
			}
			if diff := cmp.Diff(wantCounts, dst.totals()); diff != "" {
				t.Errorf("recorded accesses (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDedupNamedAndDotVectors: tier 2 compares the query's named vector,
// and normalises Dot vectors (stored as they are).
func TestDedupNamedAndDotVectors(t *testing.T) {
	scale := func(v []float32, k float32) []float32 {
		out := make([]float32, len(v))
		for i := range v {
			out[i] = v[i] * k
		}
		return out
	}
	named := func(d qdrant.Distance) *qdrant.CollectionInfo {
		return &qdrant.CollectionInfo{Config: &qdrant.CollectionConfig{Params: &qdrant.CollectionParams{
			VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{"text": {Size: dim, Distance: d}}),
		}}}
	}
	tests := []struct {
		name string
		info *qdrant.CollectionInfo
		pts  []*qdrant.ScoredPoint
		req  *qdrant.QueryPoints
		want []uint64
	}{
		{
			name: "named cosine vectors",
			info: named(qdrant.Distance_Cosine),
			pts: []*qdrant.ScoredPoint{
				scoredNamed(1, 0.9, memoryPayload("a", 0.9, 0, nil), "text", base),
				scoredNamed(2, 0.8, memoryPayload("b", 0.9, 0, nil), "text", cos95),
				scoredNamed(3, 0.7, memoryPayload("c", 0.9, 0, nil), "text", cos85),
			},
			req:  &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Using: ptr("text")},
			want: []uint64{1, 3},
		},
		{
			name: "dot vectors of different lengths",
			info: infoWith(qdrant.Distance_Dot),
			pts: []*qdrant.ScoredPoint{
				scored(1, 0.9, memoryPayload("a", 0.9, 0, nil), scale(base, 3)),
				scored(2, 0.8, memoryPayload("b", 0.9, 0, nil), scale(cos95, 0.5)),
				scored(3, 0.7, memoryPayload("c", 0.9, 0, nil), scale(cos85, 2)),
			},
			req:  &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())},
			want: []uint64{1, 3},
		},
		{
			name: "euclid fusion: no vector comparison",
			info: infoWith(qdrant.Distance_Euclid),
			pts: []*qdrant.ScoredPoint{
				scored(1, 0.9, memoryPayload("a", 0.9, 0, nil), base),
				scored(2, 0.8, memoryPayload("b", 0.9, 0, nil), base),
			},
			req:  &qdrant.QueryPoints{CollectionName: "mem", Prefetch: []*qdrant.PrefetchQuery{{Query: qdrant.NewQueryDense(query())}}, Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF)},
			want: []uint64{1, 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRanker(t, &fakeSource{info: tc.info, points: tc.pts}, nil)
			res, err := r.Query(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points)); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTieBreakByID: equal weights and confidences order by point id as
// Qdrant does: numbers first, ascending, then UUIDs (case-insensitive).
func TestTieBreakByID(t *testing.T) {
	mk := func(id *qdrant.PointId, text string) *qdrant.ScoredPoint {
		return &qdrant.ScoredPoint{Id: id, Score: 0.8, Payload: qdrant.NewValueMap(memoryPayload(text, 0.9, 0, nil))}
	}
	ua, ub := "A0000000-0000-4000-8000-000000000000", "b0000000-0000-4000-8000-000000000000"
	tests := []struct {
		name       string
		texts      [4]string
		want       []string
		wantFolded []string
	}{
		{name: "distinct memories", texts: [4]string{"w", "x", "y", "z"}, want: []string{"5", "9", ua, ub}},
		{name: "one fact: the lowest id leads", texts: [4]string{"same", "same", "same", "same"}, want: []string{"5"}, wantFolded: []string{"9", ua, ub}},
		{name: "the numbers fold, the uuids stay apart", texts: [4]string{"same", "other", "same", "other2"}, want: []string{"5", ua, ub}, wantFolded: []string{"9"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Ids 9, ub, 5, ua carry texts[0..3].
			pts := []*qdrant.ScoredPoint{mk(qdrant.NewIDNum(9), tc.texts[0]), mk(qdrant.NewID(ub), tc.texts[1]), mk(qdrant.NewIDNum(5), tc.texts[2]), mk(qdrant.NewID(ua), tc.texts[3])}
			r := newRanker(t, &fakeSource{info: cosineInfo(), points: pts}, nil)
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query())})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range res.Points {
				got = append(got, idString(p.GetId()))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			if tc.wantFolded != nil {
				var folded []string
				for _, id := range res.Explanations[0].FoldedIDs {
					folded = append(folded, idString(id))
				}
				if diff := cmp.Diff(tc.wantFolded, folded, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("folded into the first (-want +got):\n%s", diff)
				}
			}
		})
	}
}
