package store

import (
	"math"
	"slices"
)

// fuse merges the prefetches' result lists: RRF
// (lib/segment/src/common/reciprocal_rank_fusion.rs rrf_scoring) or DBSF
// (lib/segment/src/common/score_fusion.rs score_fusion with
// ScoreFusion::dbsf). A point keeps the version (and order value) of its
// first occurrence. Scores are computed in float32, as Qdrant does, and the
// result is sorted best first; equal scores are ordered by point id, where
// Qdrant leaves them in hash-map order.
func fuse(c *collection, q scoring, sources [][]cand) []cand {
	if q.rrf {
		return rrf(c, sources, q.rrfK, q.weights)
	}
	return dbsf(c, sources)
}

// rrfPositionScore is position_score: 1 / ((position + 1) / weight + k - 1),
// zero for a weight <= 0.
func rrfPositionScore(pos, k int, weight float32) float32 {
	if weight <= 0 {
		return 0
	}
	return 1 / (float32(pos+1)/weight + float32(k) - 1)
}

// accumulate sums scores per point in first-seen order.
type accumulator struct {
	at  map[uint32]int
	out []cand
}

func (a *accumulator) add(p cand, score float32) {
	if i, ok := a.at[p.slot]; ok {
		a.out[i].score += score
		return
	}
	a.at[p.slot] = len(a.out)
	p.score = score
	a.out = append(a.out, p)
}

func rrf(c *collection, sources [][]cand, k int, weights []float32) []cand {
	acc := accumulator{at: map[uint32]int{}}
	for i, src := range sources {
		w := float32(1)
		if weights != nil {
			w = weights[i]
		}
		for pos, p := range src {
			acc.add(p, rrfPositionScore(pos, k, w))
		}
	}
	// rrf_scoring sorts by score only (order values play no part).
	slices.SortStableFunc(acc.out, func(a, b cand) int {
		if d := cmpScore(b.score, a.score); d != 0 {
			return d
		}
		return c.ids[a.slot].Compare(c.ids[b.slot])
	})
	return acc.out
}

func dbsf(c *collection, sources [][]cand) []cand {
	acc := accumulator{at: map[uint32]int{}}
	for _, src := range sources {
		norm := distrNorm(src)
		for i, p := range src {
			acc.add(p, norm[i])
		}
	}
	// score_fusion sorts with ScoredPoint's Ord, largest first.
	slices.SortStableFunc(acc.out, func(a, b cand) int {
		if d := cmpCand(b, a); d != 0 {
			return d
		}
		return c.ids[a.slot].Compare(c.ids[b.slot])
	})
	return acc.out
}

// distrNorm is distr_norm: scores normalised between mean - 3σ and
// mean + 3σ (sample variance by Welford's method, in float32); a single
// point gets 0.5, and so does every point of a list whose extremes coincide.
func distrNorm(src []cand) []float32 {
	out := make([]float32, len(src))
	switch len(src) {
	case 0:
		return out
	case 1:
		out[0] = 0.5
		return out
	}
	var mean, agg float32
	for i, p := range src {
		old := p.score - mean
		mean += old / float32(i+1)
		agg += old * (p.score - mean)
	}
	variance := agg / (float32(len(src)) - 1)
	std := sqrt32(variance)
	lo, hi := mean-3*std, mean+3*std
	for i, p := range src {
		if lo == hi {
			out[i] = 0.5
			continue
		}
		out[i] = (p.score - lo) / (hi - lo)
	}
	return out
}

// sqrt32 is f32::sqrt (rounding the float64 root to float32 is exact).
func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }
