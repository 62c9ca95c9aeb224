package eval

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/rank"
)

func TestVariants(t *testing.T) {
	type row struct {
		Name, Label string
		Setting     *Setting
		Same        []string
	}
	def := rank.DefaultGuard()
	base := Setting{Guard: def, FreshnessWeight: 0.7, AccessWeight: 0.02}
	with := func(change func(*Setting)) *Setting {
		s := base
		change(&s)
		return &s
	}
	tests := []struct {
		name string
		base Setting
		want []row
	}{{
		// Confidence weight 0 is the default: its row is memrank's.
		name: "defaults",
		base: base,
		want: []row{
			{Name: "raw", Label: "raw similarity"},
			{Name: "memrank", Label: "memrank", Setting: &base, Same: []string{"confidence_weight_0"}},
			{Name: "freshness_weight_0", Label: "freshness weight 0", Setting: with(func(s *Setting) { s.FreshnessWeight = 0 })},
			{Name: "focus_off", Label: "focus off (freshness on every query)", Setting: with(func(s *Setting) { s.FocusFloor = 1 })},
			{Name: "access_weight_0", Label: "access weight 0", Setting: with(func(s *Setting) { s.AccessWeight = 0 })},
			{Name: "confidence_weight_1", Label: "confidence weight 1", Setting: with(func(s *Setting) { s.ConfidenceWeight = 1 })},
			{Name: "gate_off", Label: "retrieval gate off", Setting: with(func(s *Setting) { s.GateOff = true })},
		},
	}, {
		// Without a freshness weight the focus changes nothing: focus off
		// joins memrank's row; without an access weight, that row too.
		name: "freshness and access weights 0",
		base: Setting{Guard: def, ConfidenceWeight: 0.5},
		want: []row{
			{Name: "raw", Label: "raw similarity"},
			{Name: "memrank", Label: "memrank", Setting: &Setting{Guard: def, ConfidenceWeight: 0.5},
				Same: []string{"freshness_weight_0", "focus_off", "access_weight_0"}},
			{Name: "confidence_weight_0", Label: "confidence weight 0", Setting: &Setting{Guard: def}},
			{Name: "confidence_weight_1", Label: "confidence weight 1", Setting: &Setting{Guard: def, ConfidenceWeight: 1}},
			{Name: "gate_off", Label: "retrieval gate off", Setting: &Setting{Guard: def, ConfidenceWeight: 0.5, GateOff: true}},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []row
			for _, v := range Variants(tc.base) {
				if v.Raw != (v.Name == "raw") {
					t.Errorf("%s: Raw %v", v.Name, v.Raw)
				}
				got = append(got, row{v.Name, v.Label, v.Setting, v.Same})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("variants (-want +got):\n%s", diff)
			}
		})
	}
}
