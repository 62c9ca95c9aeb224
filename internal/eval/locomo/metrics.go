package locomo

import (
	"math"
	"slices"
)

// Hit is one result of an answer: its point id and the turns its payload
// covers (turn_ids).
type Hit struct {
	ID      string
	TurnIDs []string
}

// Scores are one answer's numbers.
type Scores struct {
	R5, R10, R25 float64 // evidence recall in the top 5, 10, 25
	Hit10        float64 // 1 when an evidence turn is in the top 10
	MRR          float64 // 1 / FirstHit, 0 without one
	// FirstHit is the rank (1-based) of the first result covering an
	// evidence turn; 0: none within Limit.
	FirstHit int
	Returned int // results returned (at most Limit count)
}

// Empty says whether the answer had no result.
func (s Scores) Empty() bool { return s.Returned == 0 }

// Score measures an answer (best first; only the first Limit count)
// against the question's evidence turns (distinct).
func Score(evidence []string, hits []Hit) Scores {
	hits = hits[:min(len(hits), Limit)]
	s := Scores{Returned: len(hits)}
	if len(evidence) == 0 {
		return s
	}
	covered := make(map[string]bool, len(evidence))
	recall := func() float64 { return float64(len(covered)) / float64(len(evidence)) }
	for i, h := range hits {
		for _, id := range h.TurnIDs {
			if slices.Contains(evidence, id) {
				covered[id] = true
			}
		}
		if s.FirstHit == 0 && len(covered) > 0 {
			s.FirstHit = i + 1
			s.MRR = 1 / float64(i+1)
		}
		switch i + 1 {
		case 5:
			s.R5 = recall()
		case 10:
			s.R10 = recall()
		}
	}
	// An answer shorter than k covers at k what it covers at its end.
	if len(hits) < 5 {
		s.R5 = recall()
	}
	if len(hits) < 10 {
		s.R10 = recall()
	}
	s.R25 = recall()
	if s.FirstHit > 0 && s.FirstHit <= 10 {
		s.Hit10 = 1
	}
	return s
}

// Summary is the mean of a set of answers' scores.
type Summary struct {
	Questions int
	// Means over the questions; NaN without a question.
	R5, R10, R25, Hit10, MRR float64
	Empty                    int // answers without a result
}

// Summarize averages the scores.
func Summarize(scores []Scores) Summary {
	s := Summary{Questions: len(scores)}
	for _, sc := range scores {
		s.R5 += sc.R5
		s.R10 += sc.R10
		s.R25 += sc.R25
		s.Hit10 += sc.Hit10
		s.MRR += sc.MRR
		if sc.Empty() {
			s.Empty++
		}
	}
	n := float64(len(scores))
	if len(scores) == 0 {
		n = math.NaN()
	}
	s.R5, s.R10, s.R25, s.Hit10, s.MRR = s.R5/n, s.R10/n, s.R25/n, s.Hit10/n, s.MRR/n
	return s
}
