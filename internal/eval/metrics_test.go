package eval

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// labelSet is six memories: 1 and 2 state fact A, 3 is fact B, 6 fact C;
// 4 and 5 have no fact (each is its own). 4 is off topic t1. Their cosines
// with the query vector (1, 0): 1 0.9, 2 0.85, 3 0.6, 4 0.7, 5 0.5, 6 0.8.
func labelSet() *Set {
	at := func(c float64) []float32 { return []float32{float32(c), float32(math.Sqrt(1 - c*c))} }
	s := &Set{Memories: []Memory{
		{ID: "1", Fact: "A", Topic: "t1", Vector: at(0.9)},
		{ID: "2", Fact: "A", Topic: "t1", Vector: at(0.85)},
		{ID: "3", Fact: "B", Topic: "t1", Vector: at(0.6)},
		{ID: "4", Topic: "t2", Vector: at(0.7)},
		{ID: "5", Topic: "t1", Vector: at(0.5)},
		{ID: "6", Fact: "C", Topic: "t1", Vector: at(0.8)},
	}}
	s.byID = map[string]int{}
	for i, m := range s.Memories {
		s.byID[m.ID] = i
	}
	return s
}

var queryVec = []float32{1, 0}

func TestScore(t *testing.T) {
	l := NewLabels(labelSet())
	// Facts A (best grade 3, from memory 1), B (1) and C (2). The ideal
	// list is A, C, B.
	q := &Query{ID: "q", Topic: "t1", Vector: queryVec, Relevant: map[string]int{"1": 3, "2": 1, "3": 1, "6": 2}}
	ideal := 7 + 3/math.Log2(3) + 1/math.Log2(4)
	tests := []struct {
		name    string
		q       *Query
		ranking []string
		raw     []string
		want    QueryMetrics
	}{{
		// 2 brings fact A (grade 3: its best) at 1; 1 restates A at 2:
		// gain 0 and not relevant again; 4 (off topic, 0.7) at 3; B (0.6)
		// at 4; 5 at 5. Inverted: (4, B), not lifted (B is less similar).
		// C, in the raw list, is withheld.
		name:    "fact counted once",
		q:       q,
		ranking: []string{"2", "1", "4", "3", "5"},
		raw:     []string{"1", "3", "6", "4", "5"},
		want: QueryMetrics{P5: 2.0 / 5, P10: 2.0 / 10, NDCG10: (7 + 1/math.Log2(5)) / ideal, MRR: 1,
			Inversions: 1, OffTopic: 1, Withheld: 1},
	}, {
		// 4 (0.7) above C (0.8): lifted; above B (0.6): inverted only.
		name:    "lifted",
		q:       q,
		ranking: []string{"4", "6", "3"},
		raw:     []string{"6", "3", "4"},
		want: QueryMetrics{P5: 2.0 / 5, P10: 2.0 / 10, NDCG10: (3/math.Log2(3) + 1/math.Log2(4)) / ideal, MRR: 1.0 / 2,
			Inversions: 2, OffTopic: 2, Lifted: 1},
	}, {
		name:    "grades",
		q:       q,
		ranking: []string{"3", "6", "1"},
		raw:     []string{"3", "6", "1"},
		want:    QueryMetrics{P5: 3.0 / 5, P10: 3.0 / 10, NDCG10: (1 + 3/math.Log2(3) + 7/math.Log2(4)) / ideal, MRR: 1},
	}, {
		// 5 (0.5, on topic) and 4 (0.7, off topic) both above C (0.8).
		name:    "first relevant third",
		q:       q,
		ranking: []string{"5", "4", "6"},
		raw:     []string{"6", "5", "4"},
		want: QueryMetrics{P5: 1.0 / 5, P10: 1.0 / 10, NDCG10: (3 / math.Log2(4)) / ideal, MRR: 1.0 / 3,
			Inversions: 2, OffTopic: 1, Lifted: 2},
	}, {
		// Nothing relevant listed, nor in the raw list: no pair to invert.
		name:    "relevant missing",
		q:       q,
		ranking: []string{"4", "5"},
		raw:     []string{"4", "5"},
		want:    QueryMetrics{},
	}, {
		name:    "withheld",
		q:       q,
		ranking: []string{"4"},
		raw:     []string{"1", "3", "4"},
		want:    QueryMetrics{Withheld: 2},
	}, {
		// An id the set does not hold is its own irrelevant fact, off
		// every topic, of unknown similarity (never counted as lifted).
		name:    "unknown id",
		q:       q,
		ranking: []string{"999", "1"},
		raw:     []string{"1"},
		want:    QueryMetrics{P5: 1.0 / 5, P10: 1.0 / 10, NDCG10: (7 / math.Log2(3)) / ideal, MRR: 1.0 / 2, Inversions: 1, OffTopic: 1},
	}, {
		name:    "no relevant memory",
		q:       &Query{ID: "none", Topic: "t1", Vector: queryVec},
		ranking: []string{"4", "5", "1"},
		raw:     []string{"1"},
		want:    QueryMetrics{},
	}, {
		name:    "empty ranking",
		q:       q,
		ranking: nil,
		raw:     nil,
		want:    QueryMetrics{},
	}, {
		// Without a topic on the query nothing is off topic.
		name:    "query without topic",
		q:       &Query{ID: "q2", Vector: queryVec, Relevant: map[string]int{"3": 2}},
		ranking: []string{"4", "3"},
		raw:     []string{"3", "4"},
		want:    QueryMetrics{P5: 1.0 / 5, P10: 1.0 / 10, NDCG10: (3 / math.Log2(3)) / 3, MRR: 0.5, Inversions: 1},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := l.Judge(tc.q)
			got := j.Score(l, l.List(tc.ranking), l.List(tc.raw))
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJudgeGradesByFact(t *testing.T) {
	l := NewLabels(labelSet())
	j := l.Judge(&Query{Relevant: map[string]int{"2": 1, "1": 3, "4": 2}})
	want := map[string]int{"fact:A": 3, "id:4": 2}
	if diff := cmp.Diff(want, j.Grades); diff != "" {
		t.Errorf("grades (-want +got):\n%s", diff)
	}
	if want := 7 + 3/math.Log2(3); math.Abs(j.ideal-want) > 1e-12 {
		t.Errorf("ideal DCG %v, want %v", j.ideal, want)
	}
}

func TestSummarise(t *testing.T) {
	js := []Judgement{
		{Grades: map[string]int{"a": 1}},
		{},
		{Grades: map[string]int{"b": 2}},
	}
	ms := []QueryMetrics{
		{P5: 0.4, P10: 0.2, NDCG10: 1, MRR: 1, Inversions: 2, OffTopic: 1, Lifted: 1, Withheld: 2},
		{Inversions: 0},
		{P5: 0.2, P10: 0.1, NDCG10: 0.5, MRR: 0.5, Inversions: 3, OffTopic: 3},
	}
	want := Summary{Queries: 3, WithRelevant: 2, Without: 1, P5: 0.3, P10: 0.15, NDCG10: 0.75, MRR: 0.75,
		Inversions: 5, OffTopic: 4, Lifted: 1, Withheld: 2}
	if diff := cmp.Diff(want, Summarise(js, ms), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

func TestReads(t *testing.T) {
	l := NewLabels(labelSet())
	j := l.Judge(&Query{ID: "q", Topic: "t1", Vector: queryVec, Relevant: map[string]int{"1": 3, "6": 2}})
	var m QueryMetrics
	// 2 states fact A (relevant), 6 is C (relevant), 4 and 999 are not.
	j.Reads(l, []string{"2", "6", "4", "999"}, &m)
	if m.ReadsRelevant != 2 || m.ReadsIrrelevant != 2 {
		t.Errorf("reads %d relevant, %d irrelevant; want 2 and 2", m.ReadsRelevant, m.ReadsIrrelevant)
	}
}
