package rank

import (
	"context"
	"math"
	"slices"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/scoring"
)

// GuardDecision is where the relevance guard placed one result.
type GuardDecision uint8

// Guard decisions.
const (
	// GuardOff: the guard is disabled; the result is ordered by weight.
	GuardOff GuardDecision = iota
	// GuardRelevant: inside the relevance band; ordered by weight among the
	// relevant results, and counted as accessed when returned.
	GuardRelevant
	// GuardBelowBand: relevant to the query less than the band allows, so
	// ordered by similarity after every relevant result, and not counted.
	GuardBelowBand
	// GuardBelowFloor: below the guard's similarity floor (nothing this far
	// from the query is relevant), ordered and counted as GuardBelowBand.
	GuardBelowFloor
)

var guardNames = [...]string{"off", "relevant", "below_band", "below_floor"}

func (d GuardDecision) String() string {
	if int(d) < len(guardNames) {
		return guardNames[d]
	}
	return "unknown"
}

// GuardReport is the relevance guard as one query saw it.
type GuardReport struct {
	// Applied is false when the guard is off (every result ordered by
	// weight); the other fields are then zero.
	Applied bool
	// Relative is true for scores without a fixed scale (fusion, formula,
	// sparse): the band was a fraction of the best score.
	Relative bool
	// Best is the best base score among the candidates that could be
	// returned (after exclusions and the confidence gate); Cutoff the lowest
	// base score inside the band: max(Floor, Best - Band), or
	// Best - RelativeBand x |Best|.
	Best, Cutoff float64
	Guard        Guard
	// From says where the guard's settings came from: "default", "embedder
	// <model>" or "collection".
	From string
	// Relevant and Beyond count the candidates inside and outside the band.
	Relevant, Beyond int
}

// guardCut is one query's relevance band.
type guardCut struct {
	rep GuardReport
}

func (c guardCut) report() GuardReport { return c.rep }

// guard computes the relevance band over the kept candidates and marks each
// candidate in or out of it (w.inBand, by candidate index).
func (r *Ranker) guard(ctx context.Context, span trace.Span, w *work, kept []scoring.Score, p plan) guardCut {
	g := p.det.Guard
	w.countable = !p.scaled
	w.inBand = resize(w.inBand, len(w.scores))
	w.decision = resize(w.decision, len(w.scores))
	c := guardCut{rep: GuardReport{Applied: !g.Off, Relative: p.scaled, Guard: g, From: p.det.GuardFrom}}
	if g.Off {
		for _, s := range kept {
			w.inBand[s.Seq], w.decision[s.Seq] = true, GuardOff
		}
		c.rep.Relevant = len(kept)
		return c
	}
	best := math.Inf(-1)
	for _, s := range kept {
		best = max(best, w.bases[s.Seq])
	}
	cutoff := best - g.Band
	if p.scaled {
		cutoff = best - g.RelativeBand*math.Abs(best)
	} else {
		cutoff = max(cutoff, g.Floor)
	}
	c.rep.Best, c.rep.Cutoff = best, cutoff
	if len(kept) == 0 {
		c.rep.Best, c.rep.Cutoff = 0, 0
	}
	for _, s := range kept {
		b := w.bases[s.Seq]
		switch {
		case b >= cutoff:
			w.inBand[s.Seq], w.decision[s.Seq] = true, GuardRelevant
			c.rep.Relevant++
		case !p.scaled && b < g.Floor:
			w.inBand[s.Seq], w.decision[s.Seq] = false, GuardBelowFloor
			c.rep.Beyond++
		default:
			w.inBand[s.Seq], w.decision[s.Seq] = false, GuardBelowBand
			c.rep.Beyond++
		}
	}
	if c.rep.Beyond > 0 {
		r.metrics.guarded.Add(ctx, int64(c.rep.Beyond))
	}
	span.SetAttributes(attrGuardBest.Float64(c.rep.Best), attrGuardCutoff.Float64(c.rep.Cutoff), attrGuardBeyond.Int(c.rep.Beyond))
	return c
}

// order sorts scores best first: the relevant ones (inside the band) by
// weight, then confidence, then the lower point id; after them the rest by
// similarity (base score), then the lower point id. With the guard off
// every candidate is inside the band.
func (w *work) order(scores []scoring.Score, points []*qdrant.ScoredPoint) {
	slices.SortFunc(scores, func(a, b scoring.Score) int {
		ia, ib := w.inBand[a.Seq], w.inBand[b.Seq]
		switch {
		case ia && !ib:
			return -1
		case ib && !ia:
			return 1
		case ia:
			switch {
			case a.Weight > b.Weight:
				return -1
			case a.Weight < b.Weight:
				return 1
			case a.Confidence > b.Confidence:
				return -1
			case a.Confidence < b.Confidence:
				return 1
			}
		default:
			switch ba, bb := w.bases[a.Seq], w.bases[b.Seq]; {
			case ba > bb:
				return -1
			case ba < bb:
				return 1
			}
		}
		return compareIDs(points[a.Seq].GetId(), points[b.Seq].GetId())
	})
}

// returnedScores sets the score each leader is returned with, in order: the
// weight inside the band; after it, the similarity, capped at the score
// above it, so scores never increase down the list and a client that sorts
// by score (or fuses lists by score) keeps memrank's order.
func returnedScores(w *work, leaders []leader) {
	prev := math.Inf(1)
	for i := range leaders {
		l := &leaders[i]
		s := l.score.Weight
		if !w.inBand[l.score.Seq] {
			s = min(w.bases[l.score.Seq], prev)
		}
		l.ret, prev = s, s
	}
}
