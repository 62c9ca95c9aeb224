package scoring

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func scored(seq int, conf, weight float64) Score {
	return Score{Seq: seq, Confidence: conf, Weight: weight}
}

func unscored(seq int, weight float64) Score {
	return Score{Seq: seq, Weight: weight, Flags: FlagUnscored}
}

func seqs(s []Score) []int {
	out := make([]int, len(s))
	for i := range s {
		out[i] = s[i].Seq
	}
	return out
}

func TestGateRetrieval(t *testing.T) {
	p := DefaultParams()
	tests := []struct {
		name         string
		in           []Score
		wantSeqs     []int
		wantFallback bool
	}{
		{
			name:     "some pass: exactly those are kept",
			in:       []Score{scored(0, 0.49, 9), scored(1, 0.50, 1), scored(2, 0.9, 2), scored(3, 0.1, 5)},
			wantSeqs: []int{1, 2},
		},
		{
			name:         "none passes: all come back flagged",
			in:           []Score{scored(0, 0.49, 9), scored(1, 0.3, 1)},
			wantSeqs:     []int{0, 1},
			wantFallback: true,
		},
		{
			name:     "unscored memories are never gated",
			in:       []Score{unscored(0, 1), scored(1, 0.2, 3)},
			wantSeqs: []int{0},
		},
		{
			name:     "empty set",
			in:       []Score{},
			wantSeqs: []int{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, fallback := p.GateRetrieval(tt.in)
			if diff := cmp.Diff(tt.wantSeqs, seqs(kept)); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if fallback != tt.wantFallback {
				t.Errorf("fallback = %v, want %v", fallback, tt.wantFallback)
			}
			for _, s := range kept {
				if s.Flags.Has(FlagBelowGate) != tt.wantFallback {
					t.Errorf("seq %d below-gate flag = %v, want %v", s.Seq, s.Flags.Has(FlagBelowGate), tt.wantFallback)
				}
			}
		})
	}
}

func TestSelect(t *testing.T) {
	p := DefaultParams()
	t.Run("below-gate fallback returns the best by weight, flagged", func(t *testing.T) {
		in := []Score{scored(0, 0.45, 0.2), scored(1, 0.30, 0.9), scored(2, 0.42, 0.5), scored(3, 0.2, 0.1)}
		top, below, renderFallback := p.Select(in, 2)
		if diff := cmp.Diff([]int{1, 2}, seqs(top)); diff != "" {
			t.Errorf("top (-want +got):\n%s", diff)
		}
		if !below {
			t.Error("want below-gate fallback")
		}
		// seq 2 (0.42) reaches the render gate, so seq 1 (0.30) does not render.
		if renderFallback || top[0].Flags.Has(FlagRender) || !top[1].Flags.Has(FlagRender) {
			t.Errorf("render flags wrong: fallback=%v %+v", renderFallback, top)
		}
	})
	t.Run("render fallback when nothing returned reaches 0.40", func(t *testing.T) {
		in := []Score{scored(0, 0.35, 0.2), scored(1, 0.30, 0.9)}
		top, _, renderFallback := p.Select(in, 5)
		if !renderFallback || !top[0].Flags.Has(FlagRender) || !top[1].Flags.Has(FlagRender) {
			t.Errorf("want every result rendered under the fallback: %+v", top)
		}
	})
	t.Run("ties break by confidence then seq", func(t *testing.T) {
		in := []Score{scored(3, 0.6, 1), scored(1, 0.6, 1), scored(2, 0.9, 1), scored(0, 0.7, 2)}
		top, _, _ := p.Select(in, 0)
		if diff := cmp.Diff([]int{0, 2, 1, 3}, seqs(top)); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
	})
}

func TestEvaluate(t *testing.T) {
	p := DefaultParams()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	t.Run("stored confidence, freshness and boost", func(t *testing.T) {
		in := Inputs{
			Components:    Components{0.95, 3, 0.9, 0.9},
			Confidence:    0.7,
			HasConfidence: true,
			HalfLife:      90,
			LastObserved:  now.AddDate(0, 0, -90),
			AccessCount:   5,
		}
		s := p.Evaluate(&in, 0.8, now)
		// Focus 1 until Refocus: age takes FreshnessWeight x (1 - f).
		want := 0.8 * (1 - p.FreshnessWeight*0.5) * AccessBoost(p.AccessWeight, 5)
		if s.Confidence != 0.7 || s.Freshness != 0.5 || math.Abs(s.Weight-want) > 1e-12 || s.Flags.Has(FlagComputedConfidence) {
			t.Errorf("got %+v, want conf 0.7 f 0.5 w %v", s, want)
		}
		if s.Tier != TierDormant || s.Bucket != BucketMedium || !s.Flags.Has(FlagWithinFloor) {
			t.Errorf("tier/bucket/floor wrong: %+v", s)
		}
		p.Refocus(&s, 0.8, 0)
		if want := 0.8 * AccessBoost(p.AccessWeight, 5); math.Abs(s.Weight-want) > 1e-12 || s.FreshnessFactor != 1 || s.Focus != 0 {
			t.Errorf("at focus 0 age takes nothing: got %+v, want w %v", s, want)
		}
	})
	t.Run("missing confidence is computed and flagged", func(t *testing.T) {
		in := Inputs{Components: Components{0.30, 0, 0.65, 0.80}, Grounding: GroundingPartial, HalfLife: 90, LastObserved: now}
		s := p.Evaluate(&in, 1, now)
		if round3(s.Confidence) != 0.300 || !s.Flags.Has(FlagComputedConfidence) {
			t.Errorf("got %+v, want computed 0.300", s)
		}
		e := p.Explain(&in, s, 1, now)
		if round3(e.Formula) != 0.378 || round3(e.GroundingPenalty) != 0.078 || e.StoredConfidence {
			t.Errorf("explanation %+v", e)
		}
	})
	t.Run("unscored: never gated, weight from base, freshness and boost", func(t *testing.T) {
		in := Inputs{Unscored: true, HalfLife: 90, AccessCount: 0}
		s := p.Evaluate(&in, 0.42, now)
		if s.Weight != 0.42 || !s.Flags.Has(FlagUnscored|FlagWithinFloor|FlagRender) {
			t.Errorf("got %+v", s)
		}
	})
	t.Run("access keeps a stale memory out of the archived tier", func(t *testing.T) {
		in := Inputs{Components: Components{0.7, 0, 0.8, 0.75}, Confidence: 0.59, HasConfidence: true, HalfLife: 90,
			LastObserved: now.AddDate(-1, 0, 0)}
		if s := p.Evaluate(&in, 1, now); s.Flags.Has(FlagWithinFloor) || s.Tier != TierArchived {
			t.Fatalf("a year-old 0.59 memory should have crossed its floor: %+v", s)
		}
		in.LastAccessed = now.AddDate(0, 0, -3)
		if s := p.Evaluate(&in, 1, now); !s.Flags.Has(FlagWithinFloor) || s.Tier == TierArchived {
			t.Errorf("an access 3 days ago should keep it within its floor: %+v", s)
		}
	})
	t.Run("age lowers within its bound and never erases", func(t *testing.T) {
		in := Inputs{Components: Components{0.95, 0, 0.65, 0.8}, HalfLife: 90, LastObserved: now.AddDate(-40, 0, 0)}
		for _, focus := range []float64{0, 0.3, 1} {
			s := p.Evaluate(&in, 0.6, now)
			p.Refocus(&s, 0.6, focus)
			if lo := 0.6 * (1 - p.FreshnessWeight); s.Weight < lo-1e-12 || s.Weight > 0.6 {
				t.Errorf("focus %v: weight %v outside [%v, 0.6]", focus, s.Weight, lo)
			}
		}
	})
}

func TestTopKMatchesFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for trial := 0; trial < 2000; trial++ {
		n := r.IntN(120)
		in := make([]Score, n)
		for i := range in {
			// Few distinct values so that ties on weight and confidence are common.
			in[i] = Score{Seq: i, Weight: float64(r.IntN(8)), Confidence: float64(r.IntN(4)) / 4}
		}
		want := slices.Clone(in)
		SortByWeight(want)
		k := r.IntN(n+10) - 2
		if k > 0 && k < len(want) {
			want = want[:k]
		}
		got := TopK(slices.Clone(in), k)
		if diff := cmp.Diff(seqs(want), seqs(got)); diff != "" {
			t.Fatalf("n=%d k=%d (-want +got):\n%s", n, k, diff)
		}
	}
}

func TestTierFollowsLastUse(t *testing.T) {
	p := DefaultParams()
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	in := Inputs{Components: Components{0.95, 1, 0.9, 0.9}, Confidence: 0.9, HasConfidence: true, HalfLife: 90,
		LastObserved: now.AddDate(0, -10, 0)}
	if s := p.Evaluate(&in, 1, now); s.Tier != TierArchived {
		t.Fatalf("ten months without use: tier %v, want archived", s.Tier)
	}
	in.LastAccessed = now.AddDate(0, 0, -3)
	s := p.Evaluate(&in, 1, now)
	if s.Tier != TierActive {
		t.Errorf("accessed 3 days ago: tier %v, want active", s.Tier)
	}
	if s.Freshness > 0.1 {
		t.Errorf("the weight's freshness still counts from the last observation: %v", s.Freshness)
	}
}
