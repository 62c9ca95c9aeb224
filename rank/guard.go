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

// Guard decisions. Every result is ordered by its weight; the guard decides
// which returned results count as read.
const (
	// GuardOff: the guard is disabled; every returned result is counted.
	GuardOff GuardDecision = iota
	// GuardRelevant: inside the relevance band; counted as accessed when
	// returned.
	GuardRelevant
	// GuardBelowBand: relevant to the query less than the band allows: not
	// counted.
	GuardBelowBand
	// GuardBelowFloor: below the guard's similarity floor (nothing this far
	// from the query is relevant): not counted.
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
	// Applied is false when the guard is off (every returned result counts
	// as read); Best and Cutoff are then zero, and every returned result is
	// counted Relevant.
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
	// Relevant and Beyond count the returned results inside and outside
	// the band; Folded the candidates inside it that were folded into a
	// returned result (what the reader sees: "3 relevant, 2 folded").
	Relevant, Beyond, Folded int
	// Focus is the query's focus on recent memories the weights were
	// computed with (scoring.Params.Focus).
	Focus float64
}

// guardCut is one query's relevance band.
type guardCut struct {
	rep GuardReport
}

func (c guardCut) report() GuardReport { return c.rep }

// guard computes the relevance band over the kept candidates and marks each
// candidate in or out of it (w.inBand, by candidate index). The report's
// counts are the returned results' (countReturned).
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
	beyond := 0
	for _, s := range kept {
		b := w.bases[s.Seq]
		switch {
		case b >= cutoff:
			w.inBand[s.Seq], w.decision[s.Seq] = true, GuardRelevant
		case !p.scaled && b < g.Floor:
			w.inBand[s.Seq], w.decision[s.Seq] = false, GuardBelowFloor
			beyond++
		default:
			w.inBand[s.Seq], w.decision[s.Seq] = false, GuardBelowBand
			beyond++
		}
	}
	if beyond > 0 {
		r.metrics.guarded.Add(ctx, int64(beyond))
	}
	span.SetAttributes(attrGuardBest.Float64(c.rep.Best), attrGuardCutoff.Float64(c.rep.Cutoff), attrGuardBeyond.Int(beyond))
	return c
}

// countReturned fills the report's counts from the returned leaders: the
// results inside and outside the band, and the relevant candidates folded
// into them.
func (c *guardCut) countReturned(w *work, returned []leader) {
	for i := range returned {
		l := &returned[i]
		if w.inBand[l.best] {
			c.rep.Relevant++
		} else {
			c.rep.Beyond++
		}
		for _, j := range l.folded {
			if w.inBand[j] {
				c.rep.Folded++
			}
		}
	}
}

// order sorts scores best first: by weight, then confidence, then the
// lower point id. The weight's factors are bounded (docs/scoring.md), so
// metadata reorders memories of similar relevance and never buries the
// best match under a much less similar one.
func (w *work) order(scores []scoring.Score, points []*qdrant.ScoredPoint) {
	slices.SortFunc(scores, func(a, b scoring.Score) int {
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
		return compareIDs(points[a.Seq].GetId(), points[b.Seq].GetId())
	})
}

// returnedScores sets the score each leader is returned with: its group's
// weight (the best member's). Leaders are in that order, so scores never
// increase down the list and a client that sorts by score (or fuses lists
// by score) keeps memrank's order.
func returnedScores(leaders []leader) {
	for i := range leaders {
		leaders[i].ret = leaders[i].weight
	}
}
