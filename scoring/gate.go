package scoring

import (
	"cmp"
	"slices"
)

// passes reports whether s clears a confidence threshold. Unscored memories
// carry no confidence and are never gated.
func (s *Score) passes(threshold float64) bool {
	return s.Flags.Has(FlagUnscored) || s.Confidence >= threshold
}

// GateRetrieval applies the retrieval gate of docs/scoring.md to a candidate set,
// compacting it in place (order kept): memories below the gate are dropped,
// unless no candidate clears it. Then every candidate is kept, flagged
// FlagBelowGate, and fallback is true, so the caller still gets the best of
// what exists.
func (p *Params) GateRetrieval(scores []Score) (kept []Score, fallback bool) {
	kept = scores[:0]
	for i := range scores {
		if scores[i].passes(p.RetrievalGate) {
			kept = append(kept, scores[i])
		}
	}
	if len(kept) > 0 || len(scores) == 0 {
		return kept, false
	}
	// Nothing passed, so nothing was moved: the slice is intact.
	kept = scores
	for i := range kept {
		kept[i].Flags |= FlagBelowGate
	}
	return kept, true
}

// GateRender sets FlagRender on the returned results (docs/scoring.md): render is
// false below the render gate unless no returned result reaches it, in which
// case every result renders and fallback is true.
func (p *Params) GateRender(results []Score) (fallback bool) {
	passed := false
	for i := range results {
		if results[i].passes(p.RenderGate) {
			results[i].Flags |= FlagRender
			passed = true
		} else {
			results[i].Flags &^= FlagRender
		}
	}
	if passed || len(results) == 0 {
		return false
	}
	for i := range results {
		results[i].Flags |= FlagRender
	}
	return true
}

// compareScores orders by weight (higher first), then confidence (higher
// first), then Seq (lower first), so equal inputs always rank the same way.
// Evaluate never produces NaN weights or confidences, so plain comparisons
// suffice (cmp.Compare's NaN handling cost a third of TopK).
func compareScores(a, b Score) int {
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
	return cmp.Compare(a.Seq, b.Seq)
}

// SortByWeight sorts scores best first.
func SortByWeight(scores []Score) {
	slices.SortFunc(scores, compareScores)
}

// TopK moves the best k scores, best first, to the front of scores and
// returns them (k <= 0 or k >= len: the whole slice, sorted); the rest of the
// slice is left in no useful order, possibly with repeats. For the usual
// read (10 of 40 or 100) selecting into a small sorted prefix costs a
// fraction of a full sort.
func TopK(scores []Score, k int) []Score {
	if k <= 0 || k >= len(scores) || k > 64 {
		SortByWeight(scores)
		if k > 0 && k < len(scores) {
			return scores[:k]
		}
		return scores
	}
	// Insertion into the sorted prefix scores[:n]: everything past it is
	// either unseen or already known to be worse than scores[k-1].
	n := 0
	for i := range scores {
		s := scores[i]
		if n == k && (s.Weight < scores[k-1].Weight || compareScores(s, scores[k-1]) >= 0) {
			continue
		}
		j := n
		if n < k {
			n++
		} else {
			j = k - 1
		}
		for j > 0 && compareScores(s, scores[j-1]) < 0 {
			scores[j] = scores[j-1]
			j--
		}
		scores[j] = s
	}
	return scores[:n]
}

// Select runs the read path's gate, sort and cut on scored candidates: the
// retrieval gate, the top k best first (k <= 0: all), then the render gate
// over what is returned. It reuses the scores slice.
func (p *Params) Select(scores []Score, k int) (top []Score, belowGate, renderFallback bool) {
	top, belowGate = p.GateRetrieval(scores)
	top = TopK(top, k)
	renderFallback = p.GateRender(top)
	return top, belowGate, renderFallback
}
