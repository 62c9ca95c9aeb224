package scoring

import (
	"math/rand/v2"
	"testing"
	"time"
)

// benchInputs are 100 decoded memories of mixed type, age and use, with a
// quarter below the retrieval gate and a few unscored.
func benchInputs(now time.Time) ([]Inputs, []float64) {
	r := rand.New(rand.NewPCG(42, 42))
	in := make([]Inputs, 100)
	base := make([]float64, 100)
	for i := range in {
		in[i] = Inputs{
			Components:    Components{Source: r.Float64(), Observations: r.IntN(6), Extractor: 0.65 + r.Float64()*0.3, Type: 0.8},
			Confidence:    0.3 + r.Float64()*0.65,
			HasConfidence: i%7 != 0,
			HalfLife:      []float64{30, 90, 365}[i%3],
			LastObserved:  now.Add(-time.Duration(r.IntN(400*24)) * time.Hour),
			AccessCount:   int64(r.IntN(3) * r.IntN(50)),
			Seq:           i,
		}
		if i%5 == 0 {
			in[i].LastAccessed = now.Add(-time.Duration(r.IntN(30*24)) * time.Hour)
		}
		if i%20 == 0 {
			in[i] = Inputs{Unscored: true, HalfLife: 90, Seq: i}
		}
		base[i] = 0.5 + r.Float64()*0.5
	}
	return in, base
}

// BenchmarkScoreGateSort100 is the read path's math for one query of 100
// decoded candidates: evaluate each, gate, sort, cut to 10, render gate.
// Goal (issue 3): at most 5 µs per 100 on the 2-core CI machine.
func BenchmarkScoreGateSort100(b *testing.B) {
	p := DefaultParams()
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	in, base := benchInputs(now)
	scores := make([]Score, 0, len(in))
	b.ReportAllocs()
	for b.Loop() {
		scores = scores[:0]
		for i := range in {
			scores = append(scores, p.Evaluate(&in[i], base[i], now))
		}
		top, _, _ := p.Select(scores, 10)
		if len(top) != 10 {
			b.Fatalf("got %d results", len(top))
		}
	}
}
