package fold

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/internal/vecmath"
)

func TestCosineAndInvNorm(t *testing.T) {
	tests := []struct {
		name   string
		a, b   []float32
		want   float32
		wantOK bool
	}{
		{name: "same direction, different lengths", a: []float32{3, 4}, b: []float32{6, 8}, want: 1, wantOK: true},
		{name: "orthogonal", a: []float32{1, 0}, b: []float32{0, 2}, want: 0, wantOK: true},
		{name: "opposite", a: []float32{1, 1}, b: []float32{-1, -1}, want: -1, wantOK: true},
		{name: "zero vector matches nothing", a: []float32{0, 0}, b: []float32{1, 0}, want: 0, wantOK: true},
		{name: "different dimensions", a: []float32{1, 0}, b: []float32{1, 0, 0}},
		{name: "missing vector", a: nil, b: []float32{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := Item{Vector: tc.a, InvNorm: vecmath.InvNorm(tc.a)}
			b := Item{Vector: tc.b, InvNorm: vecmath.InvNorm(tc.b)}
			got, ok := Cosine(&a, &b)
			if ok != tc.wantOK || math.Abs(float64(got-tc.want)) > 1e-6 {
				t.Errorf("Cosine = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestFold: leader clustering over items given best first.
func TestFold(t *testing.T) {
	unit := func(x, y, z float32) []float32 {
		n := float32(math.Sqrt(float64(x*x + y*y + z*z)))
		return []float32{x / n, y / n, z / n}
	}
	v0 := unit(1, 0, 0)
	v95 := unit(0.95, float32(math.Sqrt(1-0.95*0.95)), 0)
	v85 := unit(0.85, 0, float32(math.Sqrt(1-0.85*0.85)))
	same := func(a, b string) (dedup.Verdict, bool) {
		switch a + b {
		case "ac", "ca":
			return dedup.VerdictSame, true
		case "ad", "da":
			return dedup.VerdictDifferent, true
		case "ae", "ea":
			return dedup.VerdictContradicts, true
		}
		return dedup.VerdictUnknown, false
	}
	tests := []struct {
		name    string
		items   []Item
		lookup  func(a, b string) (dedup.Verdict, bool)
		leaders []int32
		leader  []int32
		tiers   []Tier
		judged  []Judged
	}{
		{
			name:    "text hash",
			items:   []Item{{Hash: "a"}, {Hash: "b"}, {Hash: "a"}},
			leaders: []int32{0, 1}, leader: []int32{-1, -1, 0}, tiers: []Tier{0, 0, TierTextHash},
			judged: make([]Judged, 3),
		},
		{
			name:    "no hash never folds by text",
			items:   []Item{{}, {}},
			leaders: []int32{0, 1}, leader: []int32{-1, -1}, tiers: []Tier{0, 0}, judged: make([]Judged, 2),
		},
		{
			name:    "vector",
			items:   []Item{{Hash: "a", Vector: v0, InvNorm: 1}, {Hash: "b", Vector: v95, InvNorm: 1}},
			leaders: []int32{0}, leader: []int32{-1, 0}, tiers: []Tier{0, TierVector}, judged: make([]Judged, 2),
		},
		{
			name:    "judge band without a cache",
			items:   []Item{{Hash: "a", Vector: v0, InvNorm: 1}, {Hash: "c", Vector: v85, InvNorm: 1}},
			leaders: []int32{0, 1}, leader: []int32{-1, -1}, tiers: []Tier{0, 0}, judged: []Judged{{Band: 1}, {Band: 1}},
		},
		{
			name:    "judge band, same",
			items:   []Item{{Hash: "a", Vector: v0, InvNorm: 1}, {Hash: "c", Vector: v85, InvNorm: 1}},
			lookup:  same,
			leaders: []int32{0}, leader: []int32{-1, 0}, tiers: []Tier{0, TierJudge}, judged: []Judged{{1, 1}, {1, 1}},
		},
		{
			name:    "judge band, different",
			items:   []Item{{Hash: "a", Vector: v0, InvNorm: 1}, {Hash: "d", Vector: v85, InvNorm: 1}},
			lookup:  same,
			leaders: []int32{0, 1}, leader: []int32{-1, -1}, tiers: []Tier{0, 0}, judged: []Judged{{1, 1}, {1, 1}},
		},
		{
			name:    "judge band, contradicts",
			items:   []Item{{Hash: "a", Vector: v0, InvNorm: 1}, {Hash: "e", Vector: v85, InvNorm: 1}},
			lookup:  same,
			leaders: []int32{0, 1}, leader: []int32{-1, -1}, tiers: []Tier{0, 0}, judged: []Judged{{1, 1}, {1, 1}},
		},
		{
			name:    "judge band, no cached verdict",
			items:   []Item{{Hash: "a", Vector: v0, InvNorm: 1}, {Hash: "f", Vector: v85, InvNorm: 1}},
			lookup:  same,
			leaders: []int32{0, 1}, leader: []int32{-1, -1}, tiers: []Tier{0, 0}, judged: []Judged{{Band: 1}, {Band: 1}},
		},
		{
			name: "the same words from two speakers are two memories",
			items: []Item{
				{Hash: "a", Text: "That's awesome!", Speaker: "Caroline", Vector: v0, InvNorm: 1},
				{Hash: "a", Text: "That's awesome!", Speaker: "Melanie", Vector: v0, InvNorm: 1},
			},
			leaders: []int32{0, 1}, leader: []int32{-1, -1}, tiers: []Tier{0, 0}, judged: make([]Judged, 2),
		},
		{
			name: "the same words from one speaker fold",
			items: []Item{
				{Hash: "a", Text: "That's awesome!", Speaker: "Caroline"},
				{Hash: "a", Text: "That's awesome!", Speaker: "caroline"},
			},
			leaders: []int32{0}, leader: []int32{-1, 0}, tiers: []Tier{0, TierTextHash}, judged: make([]Judged, 2),
		},
		{
			name: "a leading name is the speaker",
			items: []Item{
				{Hash: "a", Text: "Caroline: I went hiking on Sunday", Vector: v0, InvNorm: 1},
				{Hash: "b", Text: "Melanie: I went hiking on Sunday", Vector: v95, InvNorm: 1},
			},
			lookup:  same,
			leaders: []int32{0, 1}, leader: []int32{-1, -1}, tiers: []Tier{0, 0}, judged: make([]Judged, 2),
		},
		{
			name: "another person's claim about one subject folds",
			items: []Item{
				{Hash: "a", Text: "Bob moved to Berlin", Speaker: "Ann", Entities: []string{"Bob"}, Vector: v0, InvNorm: 1},
				{Hash: "b", Text: "Bob has moved to Berlin", Speaker: "Cy", Entities: []string{"bob"}, Vector: v95, InvNorm: 1},
			},
			leaders: []int32{0}, leader: []int32{-1, 0}, tiers: []Tier{0, TierVector}, judged: make([]Judged, 2),
		},
		{
			name: "another city never folds on similarity",
			items: []Item{
				{Hash: "a", Text: "Bob lives in Berlin", Vector: v0, InvNorm: 1},
				{Hash: "b", Text: "Bob lives in Munich", Vector: v95, InvNorm: 1},
			},
			leaders: []int32{0, 1}, leader: []int32{-1, -1}, tiers: []Tier{0, 0}, judged: []Judged{{Band: 1}, {Band: 1}},
		},
		{
			name: "a negation never folds on similarity",
			items: []Item{
				{Hash: "a", Text: "I work at Acme", Vector: v0, InvNorm: 1},
				{Hash: "b", Text: "I don't work at Acme", Vector: v95, InvNorm: 1},
			},
			leaders: []int32{0, 1}, leader: []int32{-1, -1}, tiers: []Tier{0, 0}, judged: []Judged{{Band: 1}, {Band: 1}},
		},
		{
			name: "another number never folds on similarity",
			items: []Item{
				{Hash: "a", Text: "Has two kids", Vector: v0, InvNorm: 1},
				{Hash: "b", Text: "Has 3 kids", Vector: v95, InvNorm: 1},
			},
			leaders: []int32{0, 1}, leader: []int32{-1, -1}, tiers: []Tier{0, 0}, judged: []Judged{{Band: 1}, {Band: 1}},
		},
		{
			name: "a name one says and the other never mentions",
			items: []Item{
				{Hash: "a", Text: "I don't work at Acme", Vector: v0, InvNorm: 1},
				{Hash: "b", Text: "I work at Initech now, not Acme", Vector: v95, InvNorm: 1},
			},
			leaders: []int32{0, 1}, leader: []int32{-1, -1}, tiers: []Tier{0, 0}, judged: []Judged{{Band: 1}, {Band: 1}},
		},
		{
			name: "a differing claim the judge called the same folds",
			items: []Item{
				{Hash: "a", Text: "Bob lives in Berlin", Vector: v0, InvNorm: 1},
				{Hash: "c", Text: "Bob lives in Munich", Vector: v95, InvNorm: 1},
			},
			lookup:  same,
			leaders: []int32{0}, leader: []int32{-1, 0}, tiers: []Tier{0, TierJudge}, judged: []Judged{{1, 1}, {1, 1}},
		},
		{
			name: "a name said elsewhere in the other text is no swap",
			items: []Item{
				{Hash: "a", Text: "Dana uses Neovim", Vector: v0, InvNorm: 1},
				{Hash: "b", Text: "Neovim is the editor Dana uses", Vector: v95, InvNorm: 1},
			},
			leaders: []int32{0}, leader: []int32{-1, 0}, tiers: []Tier{0, TierVector}, judged: make([]Judged, 2),
		},
		{
			name:    "judge band needs both hashes",
			items:   []Item{{Hash: "a", Vector: v0, InvNorm: 1}, {Vector: v85, InvNorm: 1}},
			lookup:  same,
			leaders: []int32{0, 1}, leader: []int32{-1, -1}, tiers: []Tier{0, 0}, judged: make([]Judged, 2),
		},
	}
	var res Result
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			Fold(tc.items, Options{Same: 0.92, Judge: 0.80, Lookup: tc.lookup}, &res) // reused: reset between cases
			got := struct {
				Leaders, Leader []int32
				Tiers           []Tier
				Judged          []Judged
			}{res.Leaders, res.Leader, res.Tier, res.Judged}
			want := struct {
				Leaders, Leader []int32
				Tiers           []Tier
				Judged          []Judged
			}{tc.leaders, tc.leader, tc.tiers, tc.judged}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTierString(t *testing.T) {
	want := []string{"", "text_hash", "vector", "judge_cache", "unknown"}
	for i, w := range want {
		if got := Tier(i).String(); got != w {
			t.Errorf("Tier(%d) = %q, want %q", i, got, w)
		}
	}
}
