package main

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
)

// rng draws every random number of the generator from one PCG stream
// (math/rand/v2's PCG-DXSM). The derived draws (uniform floats, bounded
// integers, normals) are written here on top of the raw 64-bit outputs, so
// that the output for a seed depends only on PCG's sequence, which Go
// specifies, and not on how math/rand/v2's helpers may change.
type rng struct {
	src      *rand.PCG
	spare    float64
	hasSpare bool
}

func newRNG(seed, stream uint64) *rng {
	return &rng{src: rand.NewPCG(seed, stream)}
}

// float is uniform in [0, 1).
func (r *rng) float() float64 {
	return float64(r.src.Uint64()>>11) * (1.0 / (1 << 53))
}

// intn is uniform in [0, n) (Lemire's multiply-and-reject, unbiased).
func (r *rng) intn(n int) int {
	if n <= 0 {
		panic("intn: n <= 0")
	}
	un := uint64(n)
	hi, lo := bits.Mul64(r.src.Uint64(), un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			hi, lo = bits.Mul64(r.src.Uint64(), un)
		}
	}
	return int(hi)
}

// between is an integer uniform in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// uniform is a float uniform in [lo, hi).
func (r *rng) uniform(lo, hi float64) float64 { return lo + (hi-lo)*r.float() }

// logUniform is log-uniform in [lo, hi).
func (r *rng) logUniform(lo, hi float64) float64 {
	return lo * math.Pow(hi/lo, r.float())
}

// norm is a standard normal (Marsaglia's polar method).
func (r *rng) norm() float64 {
	if r.hasSpare {
		r.hasSpare = false
		return r.spare
	}
	for {
		u := 2*r.float() - 1
		v := 2*r.float() - 1
		s := u*u + v*v
		if s > 0 && s < 1 {
			m := math.Sqrt(-2 * math.Log(s) / s)
			r.spare, r.hasSpare = v*m, true
			return u * m
		}
	}
}

// logNormal has the given median and log-space standard deviation.
func (r *rng) logNormal(median, sigma float64) float64 {
	return median * math.Exp(sigma*r.norm())
}

// chance is true with probability p.
func (r *rng) chance(p float64) bool { return r.float() < p }

// pick returns an index drawn with the given weights (which need not sum to 1).
func (r *rng) pick(weights ...float64) int {
	total := 0.0
	for _, w := range weights {
		total += w
	}
	u := r.float() * total
	for i, w := range weights {
		if u < w {
			return i
		}
		u -= w
	}
	return len(weights) - 1
}

// perm is a random permutation of [0, n) (Fisher-Yates).
func (r *rng) perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// sample returns k distinct indices of [0, n) in draw order.
func (r *rng) sample(n, k int) []int {
	return r.perm(n)[:k]
}

func itoa(i int) string { return strconv.Itoa(i) }

func pad(i, width int) string {
	s := strconv.Itoa(i)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

// thousands writes 40000 as "40,000".
func thousands(v int) string {
	s := strconv.Itoa(v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
