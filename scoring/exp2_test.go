package scoring

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestHalfPowMatchesExp2(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	check := func(y float64) {
		t.Helper()
		got, want := halfPow(y), math.Exp2(y)
		if want == 0 && got == 0 {
			return
		}
		if rel := math.Abs(got-want) / want; rel > 4e-16 {
			t.Fatalf("halfPow(%v) = %v, want %v (relative error %g)", y, got, want, rel)
		}
	}
	for _, y := range []float64{0, -1, -0.5, -1.0 / 128, -1.0 / 64, -2, -10, -63.99, -1021.9, -1022, -1050, -1080} {
		check(y)
	}
	for i := 0; i < 200000; i++ {
		check(-r.Float64() * 40)
		check(-r.Float64() * 1100)
	}
	if halfPow(-1) != 0.5 || halfPow(-2) != 0.25 {
		t.Errorf("whole powers must be exact: %v %v", halfPow(-1), halfPow(-2))
	}
	if halfPow(math.Inf(-1)) != 0 || halfPow(math.NaN()) != 1 {
		t.Errorf("edge cases: -Inf -> %v, NaN -> %v", halfPow(math.Inf(-1)), halfPow(math.NaN()))
	}
}

func BenchmarkHalfPow(b *testing.B) {
	y, s := -0.1, 0.0
	for b.Loop() {
		s += halfPow(y)
		y -= 1e-5
	}
	_ = s
}
