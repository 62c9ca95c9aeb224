package dedup

import (
	"testing"

	"github.com/memrank/memrank/scoring"
)

func TestHearsayCue(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"i heard", "I heard Acme is pivoting to ML", "i heard"},
		{"i've heard, curly apostrophe", "I\u2019ve heard the office is moving", "i've heard"},
		{"apparently", "Apparently the launch slipped", "apparently"},
		{"someone told me", "Someone told me Priya left", "someone told me"},
		{"a name told me", "Tom told me the budget doubled", "tom told me"},
		{"rumour", "Rumour has it Acme is for sale", "rumour has it"},
		{"rumor", "Rumor is they raised again", "rumor is"},
		{"according to", "According to Priya, the deadline moved", "according to"},
		{"reportedly", "The CEO reportedly resigned", "reportedly"},
		{"i was told", "I was told the API is deprecated", "i was told"},
		{"first hand", "I work at Acme", ""},
		{"own hedge is not hearsay", "I think I mentioned I was at Acme", ""},
		{"telling someone else", "I told Tom about the move", ""},
		{"own words", "I said that I prefer tea", ""},
		{"she said", "She said that the team is growing", "she said that"},
		{"word inside another", "The hearing is on Monday", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := hearsayCue(tc.text); got != tc.want {
				t.Errorf("hearsayCue(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestSharedEntities(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
		want int
	}{
		{"normalised", []string{"Dana", "Acme Inc."}, []string{"dana", "acme inc"}, 2},
		{"each once", []string{"Dana"}, []string{"Dana", "dana"}, 1},
		{"none", []string{"Dana"}, []string{"Tom"}, 0},
		{"blank ignored", []string{"", "Dana"}, []string{"", "x"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sharedEntities(tc.a, tc.b); got != tc.want {
				t.Errorf("sharedEntities = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestCorroborationBoostGate: the evidence gate's arithmetic.
func TestCorroborationBoostGate(t *testing.T) {
	e := &Engine{cfg: Config{}.withDefaults(), params: scoring.DefaultParams()}
	w := &write{e: e}
	tests := []struct {
		name           string
		conf           float64
		corroborations int
		want           float64
	}{
		{"below the gate", 0.60, 1, 0.65},
		{"up to the gate", 0.78, 2, 0.80},
		{"held at the gate", 0.80, 2, 0.80},
		{"past the gate with three", 0.80, 3, 0.85},
		{"already above the gate is kept", 0.86, 1, 0.86},
		{"never above the confirm clamp", 0.97, 5, 0.99},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := w.e.corroborationBoost(tc.conf, tc.corroborations); got < tc.want-1e-9 || got > tc.want+1e-9 {
				t.Errorf("boost(%v, %d) = %v, want %v", tc.conf, tc.corroborations, got, tc.want)
			}
		})
	}
}

// BenchmarkHearsayCue: the heuristic runs on every observation without an
// attribution.
func BenchmarkHearsayCue(b *testing.B) {
	texts := []string{"Dana prefers dark mode in every editor she uses at work and at home",
		"I heard Acme is pivoting to ML", "According to Priya, the deadline moved to March"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		hearsayCue(texts[i%len(texts)])
	}
}
