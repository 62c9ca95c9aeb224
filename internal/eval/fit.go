package eval

import (
	"errors"
	"math"
	"slices"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// FitItem is one memory of the weight fit: the inputs of its confidence and
// whether its claim is true.
type FitItem struct {
	Components scoring.Components
	Grounding  scoring.Grounding
	Correct    bool
}

// FitItems decodes the memories of part that carry correct: their
// payloads' source, observations, extractor, type and grounding, resolved
// with codec's tables (the stored confidence is not read). Unscored
// memories (no confidence field at all) are left out: the read path never
// gates them, so there is no confidence of theirs to rank.
func FitItems(set *Set, codec *memory.Codec, split Split, part Part) []FitItem {
	var out []FitItem
	var m memory.Memory
	for i := range set.Memories {
		sm := &set.Memories[i]
		if sm.Correct == nil || !split.In(sm.Unit(), part) {
			continue
		}
		codec.Decode(sm.Payload, &m)
		if m.Unscored() {
			continue
		}
		in := codec.Inputs(&m)
		out = append(out, FitItem{Components: in.Components, Grounding: m.Grounding, Correct: *sm.Correct})
	}
	return out
}

// confidences are the items' confidences under w, split by correctness;
// incorrect is sorted.
func confidences(items []FitItem, w scoring.Weights, g scoring.GroundingParams, correct, incorrect []float64) ([]float64, []float64) {
	correct, incorrect = correct[:0], incorrect[:0]
	for i := range items {
		c := g.Apply(w.Confidence(items[i].Components), items[i].Grounding)
		if items[i].Correct {
			correct = append(correct, c)
		} else {
			incorrect = append(incorrect, c)
		}
	}
	slices.Sort(incorrect)
	return correct, incorrect
}

// inverted counts the pairs (correct c, incorrect i) with c <= i, incorrect
// sorted: a binary search per correct memory, so a candidate costs
// O(n log n), not one comparison per pair.
func inverted(correct, incorrect []float64) int {
	n := 0
	for _, c := range correct {
		at, _ := slices.BinarySearch(incorrect, c) // first incorrect >= c
		n += len(incorrect) - at
	}
	return n
}

// InversionFraction is the fraction of pairs (correct memory, incorrect
// memory) among items whose correct one's confidence under w (with the
// grounding penalties g) is not higher, and the number of pairs. It is NaN
// when there is no pair.
func InversionFraction(items []FitItem, w scoring.Weights, g scoring.GroundingParams) (float64, int) {
	c, i := confidences(items, w, g, nil, nil)
	pairs := len(c) * len(i)
	if pairs == 0 {
		return math.NaN(), 0
	}
	return float64(inverted(c, i)) / float64(pairs), pairs
}

// FitResult is the weights that minimise the inversions.
type FitResult struct {
	Weights    scoring.Weights
	Inversions float64 // the fraction of pairs inverted with Weights
	Pairs      int
	Candidates int // weight vectors tried
}

// Grid steps of the fit, in hundredths.
const (
	coarseStep = 5 // 0.05
	fineSpan   = 5 // the refinement tries steps of 0.01 within 0.05 of the best
)

// ErrNoPairs is Fit's answer for items without both a correct and an
// incorrect memory.
var ErrNoPairs = errors.New("no pair of a correct and an incorrect memory to fit on")

// Fit finds the confidence weights (each in [0, 1], summing to 1) with the
// fewest inverted pairs among items: every point of the simplex in steps
// of 0.05, then every point in steps of 0.01 within 0.05 (in each weight)
// of the best. Ties go to the weights nearest start (the configured ones),
// then to the first in (source, repetition, extractor, type) order, so the
// answer is deterministic.
func Fit(items []FitItem, start scoring.Weights, g scoring.GroundingParams) (FitResult, error) {
	f := fitter{items: items, g: g, start: start}
	nc, ni := 0, 0
	for _, it := range items {
		if it.Correct {
			nc++
		} else {
			ni++
		}
	}
	if nc == 0 || ni == 0 {
		return FitResult{}, ErrNoPairs
	}
	var best candidate
	first := true
	try := func(u [4]int) {
		c := f.eval(u)
		if first || f.better(c, best) {
			best, first = c, false
		}
	}
	const n = 100 / coarseStep
	for a := 0; a <= n; a++ {
		for b := 0; a+b <= n; b++ {
			for c := 0; a+b+c <= n; c++ {
				try([4]int{a * coarseStep, b * coarseStep, c * coarseStep, (n - a - b - c) * coarseStep})
			}
		}
	}
	center := best.u
	for a := center[0] - fineSpan; a <= center[0]+fineSpan; a++ {
		for b := center[1] - fineSpan; b <= center[1]+fineSpan; b++ {
			for c := center[2] - fineSpan; c <= center[2]+fineSpan; c++ {
				d := 100 - a - b - c
				if a < 0 || b < 0 || c < 0 || d < 0 || d < center[3]-fineSpan || d > center[3]+fineSpan || d > 100 {
					continue
				}
				if a%coarseStep == 0 && b%coarseStep == 0 && c%coarseStep == 0 {
					continue // on the coarse grid: tried
				}
				try([4]int{a, b, c, d})
			}
		}
	}
	return FitResult{
		Weights:    weightsOf(best.u),
		Inversions: float64(best.inverted) / float64(nc*ni),
		Pairs:      nc * ni,
		Candidates: f.tried,
	}, nil
}

type fitter struct {
	items              []FitItem
	g                  scoring.GroundingParams
	start              scoring.Weights
	correct, incorrect []float64 // scratch
	tried              int
}

// candidate is a weight vector in hundredths, its inverted pairs and its
// distance to the start.
type candidate struct {
	u        [4]int
	inverted int
	dist     float64
}

func weightsOf(u [4]int) scoring.Weights {
	return scoring.Weights{
		Source:     float64(u[0]) / 100,
		Repetition: float64(u[1]) / 100,
		Extractor:  float64(u[2]) / 100,
		Type:       float64(u[3]) / 100,
	}
}

func (f *fitter) eval(u [4]int) candidate {
	f.tried++
	w := weightsOf(u)
	f.correct, f.incorrect = confidences(f.items, w, f.g, f.correct, f.incorrect)
	d := [4]float64{w.Source - f.start.Source, w.Repetition - f.start.Repetition, w.Extractor - f.start.Extractor, w.Type - f.start.Type}
	return candidate{u: u, inverted: inverted(f.correct, f.incorrect), dist: d[0]*d[0] + d[1]*d[1] + d[2]*d[2] + d[3]*d[3]}
}

// better orders candidates: fewer inversions (counted exactly, as
// integers), then nearer the start, then the first in lexicographic order.
func (f *fitter) better(a, b candidate) bool {
	switch {
	case a.inverted != b.inverted:
		return a.inverted < b.inverted
	case a.dist != b.dist:
		return a.dist < b.dist
	}
	return slices.Compare(a.u[:], b.u[:]) < 0
}
