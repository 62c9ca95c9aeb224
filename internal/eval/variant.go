package eval

import (
	"fmt"
	"strconv"

	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
)

// Setting is what the memrank variants change: the relevance guard (which
// results count as read), the bounds on what freshness, reads and
// confidence may do to the weight (scoring.Params' FreshnessWeight,
// AccessWeight and ConfidenceWeight), the floor of the query's focus on
// recent memories, and, to show what it costs or gains, the retrieval gate
// switched off.
type Setting struct {
	Guard            rank.Guard `json:"guard"`
	ConfidenceWeight float64    `json:"confidence_weight"`
	FreshnessWeight  float64    `json:"freshness_weight"`
	AccessWeight     float64    `json:"access_weight"`
	FocusFloor       float64    `json:"focus_floor"`
	GateOff          bool       `json:"gate_off,omitempty"`
}

// same reports whether two settings rank alike: with the guard off, its
// band and floor do not matter; with no freshness weight, the focus does
// not.
func (s Setting) same(o Setting) bool {
	for _, x := range []*Setting{&s, &o} {
		if x.Guard.Off {
			x.Guard = rank.Guard{Off: true}
		}
		if x.FreshnessWeight == 0 {
			x.FocusFloor = 0
		}
	}
	return s == o
}

func (s Setting) String() string {
	g := "guard off"
	if !s.Guard.Off {
		g = "guard band " + fmtF(s.Guard.Band) + ", floor " + fmtF(s.Guard.Floor)
	}
	out := fmt.Sprintf("%s; freshness weight %s, focus floor %s; access weight %s; confidence weight %s",
		g, fmtF(s.FreshnessWeight), fmtF(s.FocusFloor), fmtF(s.AccessWeight), fmtF(s.ConfidenceWeight))
	if s.GateOff {
		out += "; retrieval gate off"
	}
	return out
}

// BaseSetting is memrank's row for guard g and the scoring parameters p:
// their freshness, access and confidence weights and focus floor.
func BaseSetting(g rank.Guard, p *scoring.Params) Setting {
	return Setting{Guard: g, ConfidenceWeight: p.ConfidenceWeight, FreshnessWeight: p.FreshnessWeight,
		AccessWeight: p.AccessWeight, FocusFloor: p.FocusFloor}
}

func fmtF(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Variant is one row of the report.
type Variant struct {
	// Name is the row's key in JSON: raw, memrank, freshness_weight_0,
	// focus_off, access_weight_0, confidence_weight_0, confidence_weight_1,
	// gate_off.
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
// then each of memrank's factors switched off or changed alone: freshness
// weight 0 (age changes nothing), focus off (freshness weighs on every
// query, focus floor 1), access weight 0, confidence weight 0 and 1, and
// the retrieval gate off. A variant configured like base is left out
// (named in memrank's Same); one configured like an earlier variant joins
// its row.
func Variants(base Setting) []Variant {
	out := []Variant{
		{Name: "raw", Label: "raw similarity", Raw: true},
		{Name: "memrank", Label: "memrank", Setting: &base},
	}
	with := func(change func(*Setting)) *Setting {
		s := base
		change(&s)
		return &s
	}
	for _, c := range []Variant{
		{Name: "freshness_weight_0", Label: "freshness weight 0", Setting: with(func(s *Setting) { s.FreshnessWeight = 0 })},
		{Name: "focus_off", Label: "focus off (freshness on every query)", Setting: with(func(s *Setting) { s.FocusFloor = 1 })},
		{Name: "access_weight_0", Label: "access weight 0", Setting: with(func(s *Setting) { s.AccessWeight = 0 })},
		{Name: "confidence_weight_0", Label: "confidence weight 0", Setting: with(func(s *Setting) { s.ConfidenceWeight = 0 })},
		{Name: "confidence_weight_1", Label: "confidence weight 1", Setting: with(func(s *Setting) { s.ConfidenceWeight = 1 })},
		{Name: "gate_off", Label: "retrieval gate off", Setting: with(func(s *Setting) { s.GateOff = true })},
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
