// Package randvec makes the random unit vectors the benchmarks load and
// query with.
package randvec

import (
	"math"
	"math/rand/v2"
)

// Unit is a random direction of dim components (Gaussian, normalised).
func Unit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return Normalise(v)
}

// Normalise scales v to unit length in place and returns it.
func Normalise(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	n := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= n
	}
	return v
}
