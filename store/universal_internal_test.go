package store

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"
)

// OrderValue's Ord (lib/segment/src/data_types/order_by.rs): integers and
// floats compare as numbers, exactly, and NaN sorts above everything.
func TestOrderValueCmp(t *testing.T) {
	nan := floatOrder(math.NaN())
	tests := []struct {
		name string
		a, b orderValue
		want int
	}{
		{"ints", intOrder(3), intOrder(4), -1},
		{"floats", floatOrder(2.5), floatOrder(2.5), 0},
		{"int vs float below", intOrder(2), floatOrder(2.5), -1},
		{"int vs float equal", intOrder(2), floatOrder(2), 0},
		{"int vs negative fraction", intOrder(-3), floatOrder(-2.5), -1},
		{"float vs int", floatOrder(-2.5), intOrder(-3), 1},
		{"huge float above every int", intOrder(math.MaxInt64), floatOrder(1e19), -1},
		{"tiny float below every int", floatOrder(-1e19), intOrder(math.MinInt64), -1},
		{"max int vs 2^63 float", intOrder(math.MaxInt64), floatOrder(9223372036854775808.0), -1},
		{"int close to 2^53", intOrder(1<<53 + 1), floatOrder(1 << 53), 1},
		{"NaN above ints", intOrder(math.MaxInt64), nan, -1},
		{"NaN above floats", nan, floatOrder(math.Inf(1)), 1},
		{"NaN equals NaN", nan, nan, 0},
		{"f64::MIN below every int", floatOrder(-math.MaxFloat64), intOrder(math.MinInt64), -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.cmp(tc.b); got != tc.want {
				t.Fatalf("cmp = %d, want %d", got, tc.want)
			}
			if got := tc.b.cmp(tc.a); got != -tc.want {
				t.Fatalf("reverse cmp = %d, want %d", got, -tc.want)
			}
		})
	}
}

// Filter::merge_owned concatenates every list: two should lists become
// one (Qdrant's behaviour, kept), min_should keeps the larger count.
func TestMergeFilters(t *testing.T) {
	a := &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatchKeyword("a", "1")}, Must: []*qdrant.Condition{qdrant.NewMatchKeyword("m", "1")},
		MinShould: &qdrant.MinShould{Conditions: []*qdrant.Condition{qdrant.NewMatchKeyword("x", "1")}, MinCount: 1}}
	b := &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatchKeyword("b", "2")}, MustNot: []*qdrant.Condition{qdrant.NewHasID(qdrant.NewIDNum(1))},
		MinShould: &qdrant.MinShould{Conditions: []*qdrant.Condition{qdrant.NewMatchKeyword("y", "2")}, MinCount: 2}}
	aCopy := cloneFilter(a)
	want := &qdrant.Filter{
		Should:    []*qdrant.Condition{qdrant.NewMatchKeyword("a", "1"), qdrant.NewMatchKeyword("b", "2")},
		Must:      []*qdrant.Condition{qdrant.NewMatchKeyword("m", "1")},
		MustNot:   []*qdrant.Condition{qdrant.NewHasID(qdrant.NewIDNum(1))},
		MinShould: &qdrant.MinShould{Conditions: []*qdrant.Condition{qdrant.NewMatchKeyword("x", "1"), qdrant.NewMatchKeyword("y", "2")}, MinCount: 2},
	}
	if diff := cmp.Diff(want, mergeFilters(a, b), protocmp.Transform()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(aCopy, a, protocmp.Transform()); diff != "" {
		t.Fatalf("input modified (-before +after):\n%s", diff)
	}
	if mergeFilters(nil, b) != b || mergeFilters(a, nil) != a {
		t.Fatal("merging with nil must return the other filter")
	}
}

func cloneFilter(f *qdrant.Filter) *qdrant.Filter {
	return &qdrant.Filter{Should: append([]*qdrant.Condition(nil), f.Should...), Must: append([]*qdrant.Condition(nil), f.Must...),
		MustNot: append([]*qdrant.Condition(nil), f.MustNot...), MinShould: &qdrant.MinShould{
			Conditions: append([]*qdrant.Condition(nil), f.GetMinShould().GetConditions()...), MinCount: f.GetMinShould().GetMinCount()}}
}

// rrf_scoring's position_score and distr_norm, checked against Qdrant's own
// unit test values (reciprocal_rank_fusion.rs test_rrf_scoring_one: one
// point at position 0 with k = 2 scores 0.5; score_fusion.rs: one point
// normalises to 0.5).
func TestFusionFormulas(t *testing.T) {
	if got := rrfPositionScore(0, 2, 1); got != 0.5 {
		t.Fatalf("position 0, k 2: %v", got)
	}
	if got := rrfPositionScore(2, 1, 3); got != 1 {
		t.Fatalf("position 2, k 1, weight 3: %v, want 1/((3/3) + 1 - 1)", got)
	}
	if got := rrfPositionScore(0, 2, 0); got != 0 {
		t.Fatalf("weight 0: %v", got)
	}
	if got := distrNorm([]cand{{score: 7}}); got[0] != 0.5 {
		t.Fatalf("one point: %v", got)
	}
	got := distrNorm([]cand{{score: 1}, {score: 2}, {score: 3}})
	// mean 2, sample σ 1: extremes -1 and 5.
	if diff := cmp.Diff([]float32{2.0 / 6, 3.0 / 6, 4.0 / 6}, got, cmp.Comparer(func(a, b float32) bool { return math.Abs(float64(a-b)) < 1e-6 })); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if cut := cutThreshold([]cand{{score: 3}, {score: 3}, {score: 2.9}, {score: 3}}, ptr(float32(3))); len(cut) != 2 {
		t.Fatalf("take_while(score >= 3) kept %d points, want the 2 leading ones", len(cut))
	}
}

func ptr[T any](v T) *T { return &v }
