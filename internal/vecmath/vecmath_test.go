package vecmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// reference kernels in float64.
func refDot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func refEuclid(a, b []float32) float64 {
	var s float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		s += d * d
	}
	return math.Sqrt(s)
}

func refManhattan(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += math.Abs(float64(a[i]) - float64(b[i]))
	}
	return s
}

func randVecs(r *rand.Rand, n int) (a, b []float32) {
	a, b = make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	return a, b
}

// TestKernels: the dispatching kernels, the scan kernels (vek's assembly
// where the CPU has it) and the unrolled pure-Go ones agree with a float64
// reference on every length, the unrolled loops' tails and (for the
// dispatchers) the empty vector included.
func TestKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	scan, pure := ScanKernels(), goKernels()
	kernels := []struct {
		name     string
		ref      func(a, b []float32) float64
		dispatch func(a, b []float32) float32
		scan     func(a, b []float32) float32
		pureGo   func(a, b []float32) float32
	}{
		{"dot", refDot, Dot, scan.Dot, pure.Dot},
		{"euclid", refEuclid, Euclid, scan.Euclid, pure.Euclid},
		{"manhattan", refManhattan, Manhattan, scan.Manhattan, pure.Manhattan},
	}
	for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 16, 31, 33, 384, 1536} {
		a, b := randVecs(r, n)
		for _, k := range kernels {
			want := k.ref(a, b)
			for impl, f := range map[string]func(a, b []float32) float32{"dispatch": k.dispatch, "scan": k.scan, "go": k.pureGo} {
				if n == 0 && impl != "dispatch" {
					continue // only the dispatchers take the empty vector
				}
				if got := float64(f(a, b)); math.Abs(got-want) > 1e-4*math.Max(1, math.Abs(want)) {
					t.Errorf("%s %s over %d: %v, want %v", impl, k.name, n, got, want)
				}
			}
		}
	}
}

// TestLongerSecond: b may be longer than a; only len(a) components count.
func TestLongerSecond(t *testing.T) {
	a, b := []float32{1, 2}, []float32{3, 4, 100}
	for name, got := range map[string]float32{"dot": Dot(a, b), "euclid": Euclid(a, b), "manhattan": Manhattan(a, b)} {
		want := map[string]float32{"dot": 11, "euclid": float32(math.Sqrt(8)), "manhattan": 4}[name]
		if math.Abs(float64(got-want)) > 1e-6 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

func TestNormsAndCosine(t *testing.T) {
	tests := []struct {
		name          string
		a, b          []float32
		norm, invNorm float32 // of a
		cosine        float32
	}{
		{name: "same direction, different lengths", a: []float32{3, 4}, b: []float32{6, 8}, norm: 5, invNorm: 0.2, cosine: 1},
		{name: "orthogonal", a: []float32{1, 0}, b: []float32{0, 2}, norm: 1, invNorm: 1, cosine: 0},
		{name: "opposite", a: []float32{1, 1}, b: []float32{-1, -1}, norm: float32(math.Sqrt2), invNorm: float32(1 / math.Sqrt2), cosine: -1},
		{name: "zero vector matches nothing", a: []float32{0, 0}, b: []float32{1, 0}},
		{name: "empty vectors", a: nil, b: nil},
		{name: "different lengths", a: []float32{1, 0}, b: []float32{1, 0, 0}, norm: 1, invNorm: 1},
		{name: "the norms' product does not overflow", a: []float32{1e15, 1e15}, b: []float32{2e15, 2e15}, norm: float32(1e15 * math.Sqrt2), invNorm: float32(1 / (1e15 * math.Sqrt2)), cosine: 1},
	}
	near := func(got, want float32) bool {
		return math.Abs(float64(got-want)) <= 1e-6*math.Max(1, math.Abs(float64(want)))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Norm(tc.a); !near(got, tc.norm) {
				t.Errorf("Norm = %v, want %v", got, tc.norm)
			}
			if got := InvNorm(tc.a); !near(got, tc.invNorm) {
				t.Errorf("InvNorm = %v, want %v", got, tc.invNorm)
			}
			if got := Cosine(tc.a, tc.b); !near(got, tc.cosine) {
				t.Errorf("Cosine = %v, want %v", got, tc.cosine)
			}
		})
	}
}

// TestCosineMatchesFloat64: Cosine agrees with a float64 computation (the
// one dedup's write path used before it moved here) to well within the
// precision its thresholds are given in.
func TestCosineMatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 7, 64, 384, 1536} {
		for range 20 {
			a, b := randVecs(r, n)
			want := refDot(a, b) / math.Sqrt(refDot(a, a)*refDot(b, b))
			if got := float64(Cosine(a, b)); math.Abs(got-want) > 1e-5 {
				t.Fatalf("dimension %d: Cosine %v, float64 %v", n, got, want)
			}
		}
	}
}

func BenchmarkKernels(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{384, 1536} {
		x, y := randVecs(r, n)
		for _, k := range []struct {
			name string
			f    func(a, b []float32) float32
		}{
			{"Dot", Dot}, {"ScanKernels.Dot", ScanKernels().Dot}, {"dotGo", dotGo},
			{"Euclid", Euclid}, {"euclidGo", euclidGo},
			{"Manhattan", Manhattan}, {"manhattanGo", manhattanGo},
			{"Cosine", Cosine},
		} {
			b.Run(fmt.Sprintf("%s/%d", k.name, n), func(b *testing.B) {
				var sink float32
				for b.Loop() {
					sink += k.f(x, y)
				}
				_ = sink
			})
		}
		b.Run(fmt.Sprintf("InvNorm/%d", n), func(b *testing.B) {
			var sink float32
			for b.Loop() {
				sink += InvNorm(x)
			}
			_ = sink
		})
	}
}
