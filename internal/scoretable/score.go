package scoretable

import (
	"slices"
	"time"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// Result is one memory's verdict, in output order.
type Result struct {
	item     *Item
	in       scoring.Inputs
	score    scoring.Score
	expl     scoring.Explanation
	rank     int    // 1-based among returned results; 0 when not returned
	decision string // returned | below_gate | gated | cut | excluded
	reason   string // why excluded
}

// Score treats the items as one candidate set, as the read path would:
// exclusions, the retrieval gate, best first, the top limit (0: all), the
// render gate; every memory has base as its similarity and is scored at
// now. Returned results come first in rank order, then the rest by weight.
//
// focus is the query's focus on recent memories the weights are computed
// with (scoring.Params.Focus): a real query measures it from its
// candidates' similarities, which one base score for all cannot tell
// apart, so the caller chooses it (1: age takes all it may).
func Score(codec *memory.Codec, items []Item, base, focus float64, now time.Time, limit int) []Result {
	p := codec.Params()
	res := make([]Result, len(items))
	cands := make([]scoring.Score, 0, len(items))
	for i := range items {
		r := &res[i]
		r.item = &items[i]
		r.in = codec.Inputs(&items[i].mem)
		r.in.Seq = i
		r.score = p.Evaluate(&r.in, base, now)
		p.Refocus(&r.score, base, focus)
		if reason := items[i].mem.Exclusion(); reason != "" {
			r.decision, r.reason = "excluded", reason
			continue
		}
		cands = append(cands, r.score)
	}
	kept, belowGate := p.GateRetrieval(cands)
	for i := range res {
		if res[i].decision == "" {
			res[i].decision = "gated"
		}
	}
	for _, s := range kept {
		res[s.Seq].decision = "cut"
	}
	top := scoring.TopK(kept, limit)
	p.GateRender(top)
	for i, s := range top {
		r := &res[s.Seq]
		r.score = s
		r.rank = i + 1
		r.decision = "returned"
		if belowGate {
			r.decision = "below_gate"
		}
	}
	for i := range res {
		res[i].expl = p.Explain(&res[i].in, res[i].score, base, now)
		if res[i].rank == 0 {
			res[i].expl.Render = false // only returned results are rendered
		}
	}
	slices.SortStableFunc(res, outputOrder)
	return res
}

// outputOrder puts returned results in rank order, then the rest by
// weight, then by line.
func outputOrder(a, b Result) int {
	switch {
	case a.rank > 0 && b.rank > 0:
		return a.rank - b.rank
	case a.rank > 0:
		return -1
	case b.rank > 0:
		return 1
	}
	if a.score.Weight != b.score.Weight {
		if a.score.Weight > b.score.Weight {
			return -1
		}
		return 1
	}
	return a.item.line - b.item.line
}
