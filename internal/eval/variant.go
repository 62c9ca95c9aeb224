package eval

import (
	"fmt"
	"strconv"

	"github.com/memrank/memrank/rank"
)

// Setting is what the memrank variants change: the relevance guard, the
// confidence weight (scoring.Params.ConfidenceWeight), and, to show what
// each of memrank's exclusions costs or gains, the retrieval gate and the
// decay floor switched off.
type Setting struct {
	Guard            rank.Guard `json:"guard"`
	ConfidenceWeight float64    `json:"confidence_weight"`
	GateOff          bool       `json:"gate_off,omitempty"`
	DecayFloorOff    bool       `json:"decay_floor_off,omitempty"`
}

// same reports whether two settings rank alike: with the guard off, its
// band and floor do not matter.
func (s Setting) same(o Setting) bool {
	if s.Guard.Off {
		s.Guard = rank.Guard{Off: true}
	}
	if o.Guard.Off {
		o.Guard = rank.Guard{Off: true}
	}
	return s == o
}

func (s Setting) String() string {
	g := "guard off"
	if !s.Guard.Off {
		g = "guard band " + fmtF(s.Guard.Band) + ", floor " + fmtF(s.Guard.Floor)
	}
	out := fmt.Sprintf("%s; confidence weight %s", g, fmtF(s.ConfidenceWeight))
	if s.GateOff {
		out += "; retrieval gate off"
	}
	if s.DecayFloorOff {
		out += "; decay floor off"
	}
	return out
}

func fmtF(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Variant is one row of the report.
type Variant struct {
	// Name is the row's key in JSON: raw, memrank, guard_off,
	// confidence_weight_0, confidence_weight_1, seeds_formula.
	Name  string `json:"name"`
	Label string `json:"label"`
	// Raw is the store's own order; Setting is then unused.
	Raw     bool     `json:"raw"`
	Setting *Setting `json:"setting,omitempty"`
	// Same are the variants configured like this one, which share its row
	// (for memrank: the variants identical to the defaults, left out).
	Same []string `json:"same_as,omitempty"`
}

// Variants are the rows for memrank configured with base: raw, memrank,
// then guard off, confidence weight 0 and 1 and the seeds' formula (guard
// off, confidence weight 0). A variant configured like base is left out
// (named in memrank's Same); one configured like an earlier variant joins
// its row ("guard off = seeds' formula").
func Variants(base Setting) []Variant {
	out := []Variant{
		{Name: "raw", Label: "raw similarity", Raw: true},
		{Name: "memrank", Label: "memrank", Setting: &base},
	}
	off := base
	off.Guard.Off = true
	for _, c := range []Variant{
		{Name: "guard_off", Label: "guard off", Setting: &off},
		{Name: "confidence_weight_0", Label: "confidence weight 0", Setting: &Setting{Guard: base.Guard, ConfidenceWeight: 0}},
		{Name: "confidence_weight_1", Label: "confidence weight 1", Setting: &Setting{Guard: base.Guard, ConfidenceWeight: 1}},
		{Name: "seeds_formula", Label: "seeds' formula", Setting: &Setting{Guard: rank.Guard{Off: true}, ConfidenceWeight: 0}},
		{Name: "gate_off", Label: "retrieval gate off", Setting: &Setting{Guard: base.Guard, ConfidenceWeight: base.ConfidenceWeight, GateOff: true}},
		{Name: "decay_floor_off", Label: "decay floor off", Setting: &Setting{Guard: base.Guard, ConfidenceWeight: base.ConfidenceWeight, DecayFloorOff: true}},
	} {
		joined := false
		for i := 1; i < len(out); i++ {
			if out[i].Setting.same(*c.Setting) {
				if i > 1 {
					out[i].Label += " = " + c.Label
				}
				out[i].Same = append(out[i].Same, c.Name)
				joined = true
				break
			}
		}
		if !joined {
			out = append(out, c)
		}
	}
	return out
}
