package store

import (
	"math"

	"github.com/qdrant/go-client/qdrant"
	"github.com/viterin/vek"
	"github.com/viterin/vek/vek32"
)

// kernels are the vector arithmetic the scan uses. With AVX2+FMA they are
// vek32's assembly; elsewhere (arm64, old x86) the 4-way unrolled pure-Go
// loops below, which are about twice as fast as vek's naive Go fallback.
type kernels struct {
	dot       func(a, b []float32) float32
	euclid    func(a, b []float32) float32 // L2 distance
	manhattan func(a, b []float32) float32 // L1 distance
}

func newKernels() kernels {
	if vek.Info().Acceleration {
		return kernels{dot: vek32.Dot, euclid: vek32.Distance, manhattan: vek32.ManhattanDistance}
	}
	return pureGoKernels()
}

func pureGoKernels() kernels {
	return kernels{dot: dotUnrolled, euclid: euclidUnrolled, manhattan: manhattanUnrolled}
}

func dotUnrolled(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func euclidUnrolled(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return float32(math.Sqrt(float64((s0 + s1) + (s2 + s3))))
}

func manhattanUnrolled(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += abs32(a[i] - b[i])
		s1 += abs32(a[i+1] - b[i+1])
		s2 += abs32(a[i+2] - b[i+2])
		s3 += abs32(a[i+3] - b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += abs32(a[i] - b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// metric binds a collection's distance to the kernels. score is what Qdrant
// returns; rank orders candidates (larger is better) so the top-k heap never
// needs to know the distance.
type metric struct {
	distance qdrant.Distance
	k        kernels
}

func (m metric) score(q, v []float32) float32 {
	switch m.distance {
	case qdrant.Distance_Euclid:
		return m.k.euclid(q, v)
	case qdrant.Distance_Manhattan:
		return m.k.manhattan(q, v)
	default: // Cosine (both sides normalised) and Dot
		return m.k.dot(q, v)
	}
}

// smallerBetter reports Qdrant's SmallBetter order (Euclid, Manhattan).
func (m metric) smallerBetter() bool {
	return m.distance == qdrant.Distance_Euclid || m.distance == qdrant.Distance_Manhattan
}

// rank turns a score into a larger-is-better key.
func (m metric) rank(score float32) float32 {
	if m.smallerBetter() {
		return -score
	}
	return score
}

// passes is Qdrant's Distance::check_threshold: strict on both sides.
func (m metric) passes(score, threshold float32) bool {
	if m.smallerBetter() {
		return score < threshold
	}
	return score > threshold
}

// normalize is Qdrant's cosine_preprocess: divide by the L2 norm unless the
// squared norm is below f32 epsilon or already within 1e-6 of 1. It returns
// a new slice; the input is not modified.
func normalize(v []float32) []float32 {
	out := make([]float32, len(v))
	copy(out, v)
	var sq float32
	for _, x := range v {
		sq += x * x
	}
	if sq < 1.1920929e-07 || abs32(sq-1) <= 1e-6 {
		return out
	}
	n := float32(math.Sqrt(float64(sq)))
	for i := range out {
		out[i] /= n
	}
	return out
}
