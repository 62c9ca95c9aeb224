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
	off := def
	off.Off = true
	tests := []struct {
		name string
		base Setting
		want []row
	}{{
		// Confidence weight 0 is the default: its row is memrank's; guard
		// off is then the seeds' formula.
		name: "defaults",
		base: Setting{Guard: def},
		want: []row{
			{Name: "raw", Label: "raw similarity"},
			{Name: "memrank", Label: "memrank", Setting: &Setting{Guard: def}, Same: []string{"confidence_weight_0"}},
			{Name: "guard_off", Label: "guard off = seeds' formula", Setting: &Setting{Guard: off}, Same: []string{"seeds_formula"}},
			{Name: "confidence_weight_1", Label: "confidence weight 1", Setting: &Setting{Guard: def, ConfidenceWeight: 1}},
			{Name: "gate_off", Label: "retrieval gate off", Setting: &Setting{Guard: def, GateOff: true}},
			{Name: "decay_floor_off", Label: "decay floor off", Setting: &Setting{Guard: def, DecayFloorOff: true}},
		},
	}, {
		name: "every row differs",
		base: Setting{Guard: def, ConfidenceWeight: 0.5},
		want: []row{
			{Name: "raw", Label: "raw similarity"},
			{Name: "memrank", Label: "memrank", Setting: &Setting{Guard: def, ConfidenceWeight: 0.5}},
			{Name: "guard_off", Label: "guard off", Setting: &Setting{Guard: off, ConfidenceWeight: 0.5}},
			{Name: "confidence_weight_0", Label: "confidence weight 0", Setting: &Setting{Guard: def}},
			{Name: "confidence_weight_1", Label: "confidence weight 1", Setting: &Setting{Guard: def, ConfidenceWeight: 1}},
			{Name: "seeds_formula", Label: "seeds' formula", Setting: &Setting{Guard: rank.Guard{Off: true}}},
			{Name: "gate_off", Label: "retrieval gate off", Setting: &Setting{Guard: def, ConfidenceWeight: 0.5, GateOff: true}},
			{Name: "decay_floor_off", Label: "decay floor off", Setting: &Setting{Guard: def, ConfidenceWeight: 0.5, DecayFloorOff: true}},
		},
	}, {
		// The guard's band does not matter once it is off.
		name: "the seeds' formula itself",
		base: Setting{Guard: off},
		want: []row{
			{Name: "raw", Label: "raw similarity"},
			{Name: "memrank", Label: "memrank", Setting: &Setting{Guard: off}, Same: []string{"guard_off", "confidence_weight_0", "seeds_formula"}},
			{Name: "confidence_weight_1", Label: "confidence weight 1", Setting: &Setting{Guard: off, ConfidenceWeight: 1}},
			{Name: "gate_off", Label: "retrieval gate off", Setting: &Setting{Guard: off, GateOff: true}},
			{Name: "decay_floor_off", Label: "decay floor off", Setting: &Setting{Guard: off, DecayFloorOff: true}},
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
