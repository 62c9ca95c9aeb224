package store

import (
	"math"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/internal/vecmath"
)

// metric binds a collection's distance to vecmath's scan kernels (vek's
// assembly with AVX2+FMA, unrolled Go elsewhere), which the DB chooses
// once. score is what Qdrant returns; rank orders candidates (larger is
// better) so the top-k heap never needs to know the distance. A
// collection's vectors have at least one component, as the scan kernels
// require.
type metric struct {
	distance qdrant.Distance
	k        vecmath.Kernels
}

func (m metric) score(q, v []float32) float32 {
	switch m.distance {
	case qdrant.Distance_Euclid:
		return m.k.Euclid(q, v)
	case qdrant.Distance_Manhattan:
		return m.k.Manhattan(q, v)
	default: // Cosine (both sides normalised) and Dot
		return m.k.Dot(q, v)
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
	if sq < 1.1920929e-07 || math.Abs(float64(sq-1)) <= 1e-6 {
		return out
	}
	n := float32(math.Sqrt(float64(sq)))
	for i := range out {
		out[i] /= n
	}
	return out
}
