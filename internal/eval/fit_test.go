package eval

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

func item(correct bool, s float64, n int, e, t float64) FitItem {
	return FitItem{Components: scoring.Components{Source: s, Observations: n, Extractor: e, Type: t}, Correct: correct}
}

func TestInversionFraction(t *testing.T) {
	g := scoring.DefaultParams().Grounding
	source := scoring.Weights{Source: 1}
	items := []FitItem{
		item(true, 0.9, 0, 0, 0),
		item(true, 0.5, 0, 0, 0),
		item(false, 0.7, 0, 0, 0),
		item(false, 0.5, 0, 0, 0), // ties the second correct one: inverted
		item(false, 0.1, 0, 0, 0),
	}
	// Pairs: 0.9 is above all three; 0.5 is below 0.7 and ties 0.5.
	got, pairs := InversionFraction(items, source, g)
	if pairs != 6 || got != 2.0/6 {
		t.Errorf("InversionFraction = %v over %d pairs, want 2/6 over 6", got, pairs)
	}
	// The grounding penalty is part of the confidence: 0.9 partial is 0.75,
	// now below... nothing (0.7 < 0.75), but 0.5 partial floors at 0.35,
	// below 0.5 too.
	items[0].Grounding = scoring.GroundingPartial
	items[1].Grounding = scoring.GroundingPartial
	if got, _ := InversionFraction(items, source, g); got != 2.0/6 {
		t.Errorf("with grounding: %v, want 2/6", got)
	}
	items[0].Components.Source = 0.8 // 0.65 partial: below 0.7 now
	if got, _ := InversionFraction(items, source, g); got != 3.0/6 {
		t.Errorf("with grounding: %v, want 3/6", got)
	}
	if got, pairs := InversionFraction(items[:2], source, g); !math.IsNaN(got) || pairs != 0 {
		t.Errorf("no incorrect memory: %v over %d pairs, want NaN over 0", got, pairs)
	}
}

func TestFitKnownAnswer(t *testing.T) {
	// Only the source tells correct from incorrect: incorrect memories
	// with a slightly lower source but the best extractor or type, or
	// re-observed a hundred times (r = 0.82). Any weight on repetition,
	// extractor or type (0.01 at least, on the grid) lets them tie or pass
	// the correct ones, so the only weights without an inversion are
	// source 1.
	items := []FitItem{
		item(true, 1, 0, 0, 0),
		item(true, 1, 0, 0, 0),
		item(false, 0.99, 0, 1, 0),
		item(false, 0.99, 0, 0, 1),
		item(false, 0.995, 100, 0, 0),
	}
	p := scoring.DefaultParams()
	got, err := Fit(items, p.Weights, p.Grounding)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(scoring.Weights{Source: 1}, got.Weights); diff != "" {
		t.Errorf("weights (-want +got):\n%s", diff)
	}
	if got.Inversions != 0 || got.Pairs != 6 {
		t.Errorf("inversions %v over %d pairs, want 0 over 6", got.Inversions, got.Pairs)
	}
	// 1771 points of the 0.05 grid and the 0.01 points within 0.05 of
	// (1, 0, 0, 0) that are not on it.
	if got.Candidates < 1771 || got.Candidates > 1771+6*6*6 {
		t.Errorf("%d candidates tried", got.Candidates)
	}
}

func TestFitRefines(t *testing.T) {
	// With repetition and extractor 0 everywhere, confidence is ws s + wt t.
	// c1 beats i1 iff ws > 0.97 ws + wt, i.e. wt < 0.03 ws; c2 beats i2 iff
	// wt > 0.015 ws; c2 never beats i1. So at best 1 pair of 4 is inverted,
	// with 0.015 ws < wt < 0.03 ws: no point of the 0.05 grid (wt 0 or
	// >= 0.05) is there, and only the refinement finds one.
	items := []FitItem{
		item(true, 1, 0, 0, 0),
		item(true, 0, 0, 0, 1),
		item(false, 0.97, 0, 0, 1),
		item(false, 0.015, 0, 0, 0),
	}
	// The coarse grid's best (two inversions) is the start itself; the
	// nearest point of the refinement with one inversion is (0.96, 0.01,
	// 0.01, 0.02): ws = 0.95 leaves 0.03 to share between wr and we,
	// farther away.
	start := scoring.Weights{Source: 0.95, Type: 0.05}
	got, err := Fit(items, start, scoring.DefaultParams().Grounding)
	if err != nil {
		t.Fatal(err)
	}
	want := scoring.Weights{Source: 0.96, Repetition: 0.01, Extractor: 0.01, Type: 0.02}
	if diff := cmp.Diff(want, got.Weights); diff != "" {
		t.Errorf("weights (-want +got):\n%s", diff)
	}
	if got.Inversions != 0.25 || got.Pairs != 4 {
		t.Errorf("inversions %v over %d pairs, want 0.25 over 4", got.Inversions, got.Pairs)
	}
	if f, _ := InversionFraction(items, start, scoring.DefaultParams().Grounding); f != 0.5 {
		t.Errorf("the start inverts %v, want 0.5", f)
	}
}

func TestFitTiesGoToTheStart(t *testing.T) {
	// Identical components: every weight vector inverts every pair, so
	// the configured weights (on the grid) are kept.
	items := []FitItem{item(true, 0.5, 1, 0.5, 0.5), item(false, 0.5, 1, 0.5, 0.5)}
	p := scoring.DefaultParams()
	got, err := Fit(items, p.Weights, p.Grounding)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p.Weights, got.Weights, cmpApprox); diff != "" {
		t.Errorf("weights (-want +got):\n%s", diff)
	}
	if got.Inversions != 1 {
		t.Errorf("inversions %v, want 1", got.Inversions)
	}
	if _, err := Fit(items[:1], p.Weights, p.Grounding); err != ErrNoPairs {
		t.Errorf("one memory: %v, want ErrNoPairs", err)
	}
}

var cmpApprox = cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })

func TestFitItems(t *testing.T) {
	in := lines(header,
		`{"memory": {"id": 1, "vector": [1, 0], "topic": "a", "correct": true, "payload": {"source": "direct", "observations": 2, "extractor_model": "gpt-4o", "memory_type": "entity", "grounding": "partial", "confidence": 0.1}}}`,
		`{"memory": {"id": 2, "vector": [1, 0], "topic": "a", "payload": {"source": "direct"}}}`,
		`{"memory": {"id": 3, "vector": [1, 0], "topic": "a", "correct": false, "payload": {"memory_type": "fact", "source": "x", "confidence": 0.5}}}`,
		// No confidence field at all: an unscored point, which the read
		// path never gates; it has no confidence to fit.
		`{"memory": {"id": 4, "vector": [1, 0], "topic": "a", "correct": false, "payload": {"text": "wiki page"}}}`,
	)
	s, err := Parse(strings.NewReader(in), "s")
	if err != nil {
		t.Fatal(err)
	}
	p := scoring.DefaultParams()
	codec, err := memory.NewCodec(memory.DefaultKeys(), p)
	if err != nil {
		t.Fatal(err)
	}
	split := s.Split(1) // one unit: train
	got := FitItems(s, codec, split, PartTrain)
	want := []FitItem{
		{Components: scoring.Components{Source: 0.95, Observations: 2, Extractor: 0.85, Type: 0.90}, Grounding: scoring.GroundingPartial, Correct: true},
		// Absent or unknown fields take the codec's defaults: weak
		// inference, an unknown extractor. The stored confidence is not
		// read.
		{Components: scoring.Components{Source: 0.50, Extractor: 0.65, Type: 0.80}, Correct: false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if got := FitItems(s, codec, split, PartTest); len(got) != 0 {
		t.Errorf("test items %v, want none", got)
	}
}
