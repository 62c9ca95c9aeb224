package locomo

import (
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// hits makes an answer: each argument is one result's turn ids, comma
// separated ("" covers none).
func hits(turns ...string) []Hit {
	out := make([]Hit, len(turns))
	for i, t := range turns {
		out[i].ID = strconv.Itoa(i + 1)
		if t != "" {
			out[i].TurnIDs = SplitEvidence([]string{t})
		}
	}
	return out
}

// filler is n results covering no evidence.
func filler(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "X" + strconv.Itoa(i)
	}
	return out
}

func TestScore(t *testing.T) {
	at := func(rank int, turn string, n int) []string { // n results, turn at rank
		out := filler(n)
		out[rank-1] = turn
		return out
	}
	for _, tc := range []struct {
		name     string
		evidence []string
		answer   []Hit
		want     Scores
	}{
		{"empty answer", []string{"D1:1"}, nil, Scores{}},
		{"first", []string{"D1:1"}, hits(at(1, "D1:1", 25)...),
			Scores{R5: 1, R10: 1, R25: 1, Hit10: 1, MRR: 1, FirstHit: 1, Returned: 25}},
		{"third", []string{"D1:1"}, hits(at(3, "D1:1", 25)...),
			Scores{R5: 1, R10: 1, R25: 1, Hit10: 1, MRR: 1.0 / 3, FirstHit: 3, Returned: 25}},
		{"sixth", []string{"D1:1"}, hits(at(6, "D1:1", 25)...),
			Scores{R10: 1, R25: 1, Hit10: 1, MRR: 1.0 / 6, FirstHit: 6, Returned: 25}},
		{"eleventh", []string{"D1:1"}, hits(at(11, "D1:1", 25)...),
			Scores{R25: 1, MRR: 1.0 / 11, FirstHit: 11, Returned: 25}},
		{"missed", []string{"D1:1"}, hits(filler(25)...), Scores{Returned: 25}},
		{"past the limit", []string{"D1:1"}, hits(at(26, "D1:1", 30)...), Scores{Returned: 25}},
		{"two of three", []string{"D1:1", "D2:2", "D3:3"}, hits(append([]string{"D2:2", "X", "X", "X", "X", "X", "D3:3"}, filler(18)...)...),
			Scores{R5: 1.0 / 3, R10: 2.0 / 3, R25: 2.0 / 3, Hit10: 1, MRR: 1, FirstHit: 1, Returned: 25}},
		{"one result covers two", []string{"D1:1", "D2:2"}, hits("X", "D1:1,D2:2"),
			Scores{R5: 1, R10: 1, R25: 1, Hit10: 1, MRR: 0.5, FirstHit: 2, Returned: 2}},
		{"a turn returned twice counts once", []string{"D1:1", "D2:2"}, hits("D1:1", "D1:1"),
			Scores{R5: 0.5, R10: 0.5, R25: 0.5, Hit10: 1, MRR: 1, FirstHit: 1, Returned: 2}},
		{"short answer", []string{"D1:1", "D2:2"}, hits("X", "X", "D2:2"),
			Scores{R5: 0.5, R10: 0.5, R25: 0.5, Hit10: 1, MRR: 1.0 / 3, FirstHit: 3, Returned: 3}},
		{"results without turns", []string{"D1:1"}, hits("", "", "D1:1"),
			Scores{R5: 1, R10: 1, R25: 1, Hit10: 1, MRR: 1.0 / 3, FirstHit: 3, Returned: 3}},
		{"no evidence", nil, hits("D1:1"), Scores{Returned: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Score(tc.evidence, tc.answer)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("Score (-want +got):\n%s", diff)
			}
			if got.Empty() != (len(tc.answer) == 0) {
				t.Errorf("Empty() = %v", got.Empty())
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scores []Scores
		want   Summary
	}{
		{"none", nil, Summary{R5: math.NaN(), R10: math.NaN(), R25: math.NaN(), Hit10: math.NaN(), MRR: math.NaN()}},
		{"two and an empty answer", []Scores{
			{R5: 1, R10: 1, R25: 1, Hit10: 1, MRR: 1, FirstHit: 1, Returned: 25},
			{R5: 0, R10: 0.5, R25: 1, Hit10: 1, MRR: 1.0 / 6, FirstHit: 6, Returned: 25},
			{},
		}, Summary{Questions: 3, R5: 1.0 / 3, R10: 0.5, R25: 2.0 / 3, Hit10: 2.0 / 3, MRR: (1 + 1.0/6) / 3, Empty: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Summarize(tc.scores), cmpopts.EquateApprox(0, 1e-12), cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
		})
	}
}
