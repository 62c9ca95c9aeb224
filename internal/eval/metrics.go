package eval

import (
	"cmp"
	"math"
	"slices"
)

// Labels are the set's facts, topics and vectors by memory id key.
type Labels struct {
	set   *Set
	fact  map[string]string
	topic map[string]string
}

// NewLabels indexes the set's memories. Vectors are read when a ranking is
// scored, so a set whose texts are embedded after NewLabels works too.
func NewLabels(s *Set) *Labels {
	l := &Labels{set: s, fact: make(map[string]string, len(s.Memories)), topic: make(map[string]string, len(s.Memories))}
	for i := range s.Memories {
		m := &s.Memories[i]
		if m.Fact != "" {
			l.fact[m.ID] = "fact:" + m.Fact
		}
		l.topic[m.ID] = m.Topic
	}
	return l
}

// similarity is the cosine of memory id's vector with vec; NaN when either
// is unknown.
func (l *Labels) similarity(id string, vec []float32) float64 {
	m, ok := l.set.Memory(id)
	if !ok || len(m.Vector) != len(vec) || len(vec) == 0 {
		return math.NaN()
	}
	var dot, a, b float64
	for i := range vec {
		x, y := float64(m.Vector[i]), float64(vec[i])
		dot, a, b = dot+x*y, a+x*x, b+y*y
	}
	return dot / math.Sqrt(a*b)
}

// Fact is the fact key of a memory: its fact, else its own id (an id the
// set does not hold is its own fact too). The prefixes keep a fact named
// "17" apart from memory 17.
func (l *Labels) Fact(id string) string {
	if f, ok := l.fact[id]; ok {
		return f
	}
	return "id:" + id
}

// Judgement is one query's labels at the fact level.
type Judgement struct {
	Topic  string
	Vector []float32 // the query's
	// Grades are the best grade of each relevant fact (>= 1); other facts
	// are grade 0.
	Grades map[string]int
	// ideal is the ideal DCG@10: the facts by grade, best first.
	ideal float64
}

// Relevant reports whether the query has a relevant memory.
func (j *Judgement) Relevant() bool { return len(j.Grades) > 0 }

// Judge builds a query's judgement.
func (l *Labels) Judge(q *Query) Judgement {
	j := Judgement{Topic: q.Topic, Vector: q.Vector, Grades: make(map[string]int, len(q.Relevant))}
	for id, g := range q.Relevant {
		f := l.Fact(id)
		j.Grades[f] = max(j.Grades[f], g)
	}
	grades := make([]int, 0, len(j.Grades))
	for _, g := range j.Grades {
		grades = append(grades, g)
	}
	slices.SortFunc(grades, func(a, b int) int { return cmp.Compare(b, a) })
	for i, g := range grades[:min(len(grades), 10)] {
		j.ideal += gain(g) / math.Log2(float64(i+2))
	}
	return j
}

func gain(grade int) float64 { return math.Exp2(float64(grade)) - 1 }

// Listing is a ranking read as facts: the first position of each fact.
type Listing struct {
	first []listed       // the first result of each fact, in list order
	pos   map[string]int // fact -> its first position, from 1
}

type listed struct {
	fact, id string
	pos      int // from 1
}

// List reads a ranking (ids, best first).
func (l *Labels) List(ids []string) Listing {
	ls := Listing{pos: make(map[string]int, len(ids))}
	for i, id := range ids {
		f := l.Fact(id)
		if _, dup := ls.pos[f]; dup {
			continue
		}
		ls.pos[f] = i + 1
		ls.first = append(ls.first, listed{fact: f, id: id, pos: i + 1})
	}
	return ls
}

// QueryMetrics are one ranking's numbers.
type QueryMetrics struct {
	P5     float64 `json:"p_at_5"`
	P10    float64 `json:"p_at_10"`
	NDCG10 float64 `json:"ndcg_at_10"`
	MRR    float64 `json:"mrr"`
	// Inversions are the (irrelevant, relevant) fact pairs both listed with
	// the irrelevant one higher; OffTopic those whose irrelevant memory is
	// off the query's topic; Lifted those where the relevant memory is the
	// more similar to the query: the ranking, not the similarity, put the
	// irrelevant one above it (raw similarity order lifts none).
	Inversions int `json:"inversions"`
	OffTopic   int `json:"off_topic"`
	Lifted     int `json:"lifted"`
	// Withheld are the relevant facts the raw ranking lists and this one
	// does not (excluded, gated, folded into another fact, or pushed out).
	Withheld int `json:"withheld"`
	// ReadsRelevant and ReadsIrrelevant are the results memrank would
	// count as accessed, relevant and irrelevant ones: reads of irrelevant
	// memories raise their access boost and feed the popularity loop.
	ReadsRelevant   int `json:"reads_relevant"`
	ReadsIrrelevant int `json:"reads_irrelevant"`
}

// Reads adds the counted results of a ranking to m.
func (j *Judgement) Reads(l *Labels, counted []string, m *QueryMetrics) {
	for _, id := range counted {
		if j.Grades[l.Fact(id)] > 0 {
			m.ReadsRelevant++
		} else {
			m.ReadsIrrelevant++
		}
	}
}

// Score computes the metrics of list for the query judged by j; raw is the
// raw similarity ranking of the same query, for the relevant facts
// withheld.
func (j *Judgement) Score(l *Labels, list, raw Listing) QueryMetrics {
	var m QueryMetrics
	var rel5, rel10 int
	var dcg float64
	for _, e := range list.first {
		g := j.Grades[e.fact]
		if g == 0 {
			continue
		}
		if e.pos <= 5 {
			rel5++
		}
		if e.pos <= 10 {
			rel10++
			dcg += gain(g) / math.Log2(float64(e.pos+1))
		}
		if m.MRR == 0 {
			m.MRR = 1 / float64(e.pos)
		}
	}
	m.P5, m.P10 = float64(rel5)/5, float64(rel10)/10
	if j.ideal > 0 {
		m.NDCG10 = dcg / j.ideal
	}
	for a, i := range list.first {
		if j.Grades[i.fact] > 0 {
			continue
		}
		offTopic := j.Topic != "" && l.topic[i.id] != j.Topic
		simI := l.similarity(i.id, j.Vector)
		for _, r := range list.first[a+1:] {
			if j.Grades[r.fact] == 0 {
				continue
			}
			m.Inversions++
			if offTopic {
				m.OffTopic++
			}
			if l.similarity(r.id, j.Vector) > simI {
				m.Lifted++
			}
		}
	}
	for _, e := range raw.first {
		if _, listed := list.pos[e.fact]; j.Grades[e.fact] > 0 && !listed {
			m.Withheld++
		}
	}
	return m
}

// Summary is a variant's numbers over the queries.
type Summary struct {
	// Queries is the queries asked, WithRelevant those with a relevant
	// memory: the metrics are their means. Without = Queries - WithRelevant.
	Queries      int     `json:"queries"`
	WithRelevant int     `json:"queries_with_relevant"`
	Without      int     `json:"queries_without_relevant"`
	P5           float64 `json:"p_at_5"`
	P10          float64 `json:"p_at_10"`
	NDCG10       float64 `json:"ndcg_at_10"`
	MRR          float64 `json:"mrr"`
	// Inversions, OffTopic, Lifted and Withheld are totals over every
	// query.
	Inversions int `json:"inversions"`
	OffTopic   int `json:"off_topic"`
	Lifted     int `json:"lifted"`
	Withheld   int `json:"withheld"`
	// ReadsRelevant and ReadsIrrelevant are totals too; Reads says whether
	// the ranker reports them.
	Reads           bool `json:"reads"`
	ReadsRelevant   int  `json:"reads_relevant"`
	ReadsIrrelevant int  `json:"reads_irrelevant"`
}

// Summarise averages ms (one per query, judged by js) over the queries with
// a relevant memory and adds up the inversions.
func Summarise(js []Judgement, ms []QueryMetrics) Summary {
	var s Summary
	s.Queries = len(ms)
	for i, m := range ms {
		s.Inversions += m.Inversions
		s.OffTopic += m.OffTopic
		s.Lifted += m.Lifted
		s.Withheld += m.Withheld
		s.ReadsRelevant += m.ReadsRelevant
		s.ReadsIrrelevant += m.ReadsIrrelevant
		if !js[i].Relevant() {
			continue
		}
		s.WithRelevant++
		s.P5 += m.P5
		s.P10 += m.P10
		s.NDCG10 += m.NDCG10
		s.MRR += m.MRR
	}
	s.Without = s.Queries - s.WithRelevant
	if n := float64(s.WithRelevant); n > 0 {
		s.P5 /= n
		s.P10 /= n
		s.NDCG10 /= n
		s.MRR /= n
	}
	return s
}
