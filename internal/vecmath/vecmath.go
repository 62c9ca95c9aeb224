// Package vecmath is memrank's float32 vector arithmetic: the dot product,
// norm and cosine that the ranker's duplicate folding and dedup's write
// path compare vectors with, and the distances the embedded store scores
// with. It is the one implementation of them (issue 11).
//
// With AVX2 and FMA the kernels are viterin/vek's assembly; elsewhere
// (arm64, old x86) they are the 4-way unrolled pure-Go loops below, which
// are about twice as fast as vek's own Go fallback. Unlike vek's, every
// function here takes empty vectors (vek32 panics on them).
//
// The two-vector functions read len(a) components of each: b must be at
// least as long as a (callers compare vectors of one length).
package vecmath

import (
	"math"

	"github.com/viterin/vek"
	"github.com/viterin/vek/vek32"
)

// accel is whether vek runs its assembly on this CPU, read once.
var accel = vek.Info().Acceleration

// Dot is the dot product of a and b[:len(a)]; 0 for an empty a.
func Dot(a, b []float32) float32 {
	if len(a) == 0 {
		return 0
	}
	if accel {
		return vek32.Dot(a, b[:len(a)])
	}
	return dotGo(a, b)
}

// Euclid is the L2 distance between a and b[:len(a)]; 0 for an empty a.
func Euclid(a, b []float32) float32 {
	if len(a) == 0 {
		return 0
	}
	if accel {
		return vek32.Distance(a, b[:len(a)])
	}
	return euclidGo(a, b)
}

// Manhattan is the L1 distance between a and b[:len(a)]; 0 for an empty a.
func Manhattan(a, b []float32) float32 {
	if len(a) == 0 {
		return 0
	}
	if accel {
		return vek32.ManhattanDistance(a, b[:len(a)])
	}
	return manhattanGo(a, b)
}

// Kernels are the distance kernels as function values chosen once for
// this CPU, for a scan that compares one query with many vectors of one
// dimension, such as the store's: with AVX2 and FMA they are vek32's own
// functions, entered without the guard and dispatch of Dot, Euclid and
// Manhattan (one call less per vector, which a scan of 100k vectors would
// feel). They require len(a) == len(b) >= 1: vek panics on empty or
// unequal vectors.
type Kernels struct {
	Dot       func(a, b []float32) float32
	Euclid    func(a, b []float32) float32 // L2 distance
	Manhattan func(a, b []float32) float32 // L1 distance
}

// ScanKernels returns the kernels for this CPU.
func ScanKernels() Kernels {
	if accel {
		return Kernels{Dot: vek32.Dot, Euclid: vek32.Distance, Manhattan: vek32.ManhattanDistance}
	}
	return goKernels()
}

// goKernels are the pure-Go kernels, ScanKernels' without AVX2.
func goKernels() Kernels {
	return Kernels{Dot: dotGo, Euclid: euclidGo, Manhattan: manhattanGo}
}

// Norm is |v|, the L2 norm; 0 for an empty v.
func Norm(v []float32) float32 {
	return sqrt32(Dot(v, v))
}

// InvNorm is 1/|v|, or 0 for a zero or empty vector (which then matches
// nothing: every cosine taken with it is 0).
func InvNorm(v []float32) float32 {
	n := Dot(v, v)
	if !(n > 0) {
		return 0
	}
	return 1 / sqrt32(n)
}

// Cosine is the cosine similarity of a and b, 0 when either is zero or
// empty or when their lengths differ (such vectors cannot be compared).
// The sums are float32, as every kernel here: components beyond about
// 1e18 overflow them (embeddings are nowhere near); the norms' product is
// taken in float64, where it cannot.
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	na, nb := float64(Dot(a, a)), float64(Dot(b, b))
	if !(na > 0) || !(nb > 0) {
		return 0
	}
	return float32(float64(Dot(a, b)) / math.Sqrt(na*nb))
}

func dotGo(a, b []float32) float32 {
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

func euclidGo(a, b []float32) float32 {
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
	return sqrt32((s0 + s1) + (s2 + s3))
}

func manhattanGo(a, b []float32) float32 {
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

// abs32 is |x|, by clearing the sign bit (no branch, no float64 round trip).
func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }
