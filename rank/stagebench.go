package rank

import (
	"context"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/rank/internal/fold"
	"github.com/memrank/memrank/scoring"
)

// StageBench runs the read path's CPU stages one at a time over a fixed
// candidate set, with the pipeline's own code, so that their cost per
// candidate can be measured apart: payload decode, score + gate + sort, and
// duplicate folding (tier-2 vector math). It serves rank's benchmarks and
// `memrank bench proxy` (wrap each method in testing.Benchmark and divide
// by Candidates). It is not safe for concurrent use.
type StageBench struct {
	r      *Ranker
	points []*qdrant.ScoredPoint
	p      plan
	now    time.Time
	span   trace.Span
	w      work
	items  []fold.Item
	res    fold.Result
}

// NewStageBench prepares points as the answer of a nearest query on a
// collection with the given distance (Cosine or Dot) whose unnamed dense
// vector the points carry, scored at now.
func (r *Ranker) NewStageBench(points []*qdrant.ScoredPoint, distance qdrant.Distance, now time.Time) *StageBench {
	s := &StageBench{
		r: r, points: points, now: now,
		p: plan{tier2: true, unit: distance == qdrant.Distance_Cosine,
			det: Detection{Mode: ModeRerank, Guard: r.cfg.Guard, GuardFrom: "default"}},
		span: trace.SpanFromContext(context.Background()),
	}
	n := len(points)
	s.w.mems = resize(s.w.mems, n)
	s.w.ins = resize(s.w.ins, n)
	s.w.bases = resize(s.w.bases, n)
	s.w.scores = resize(s.w.scores, n)
	s.Decode()
	kept := s.scoreGateSort()
	// The items folding sees: the kept candidates best first.
	s.items = make([]fold.Item, len(kept))
	for j, sc := range kept {
		it := fold.Item{Hash: s.w.textHash(sc.Seq)}
		if v := denseVector(points[sc.Seq].GetVectors(), ""); len(v) > 0 {
			it.Vector, it.InvNorm = v, 1
			if !s.p.unit {
				it.InvNorm = fold.InvNorm(v)
			}
		}
		s.items[j] = it
	}
	return s
}

// Candidates is the number of candidates Decode and ScoreGateSort process.
func (s *StageBench) Candidates() int { return len(s.points) }

// Kept is the number of candidates left after exclusions and the gate,
// which Tier2 folds.
func (s *StageBench) Kept() int { return len(s.items) }

// Decode decodes every candidate's payload into the scoring inputs.
func (s *StageBench) Decode() {
	for i, pt := range s.points {
		m := &s.w.mems[i]
		s.r.codec.DecodeRank(pt.GetPayload(), m)
		s.w.ins[i] = s.r.codec.Inputs(m)
		s.w.ins[i].Seq = i
	}
}

// ScoreGateSort scores every decoded candidate, drops the excluded ones,
// applies the retrieval gate and the relevance guard and sorts what is left
// best first; it returns how many were kept.
func (s *StageBench) ScoreGateSort() int { return len(s.scoreGateSort()) }

func (s *StageBench) scoreGateSort() []scoring.Score {
	w := &s.w
	w.scores = w.scores[:len(s.points)]
	for i, pt := range s.points {
		base := float64(pt.GetScore())
		w.bases[i] = base
		w.scores[i] = s.r.params.Evaluate(&w.ins[i], base, s.now)
	}
	kept := s.r.gate(context.Background(), s.span, w, s.points)
	s.r.guard(context.Background(), s.span, w, kept, s.p)
	w.order(kept, s.points)
	return kept
}

// Tier2 folds the kept candidates (tier 1 keys compared, tier-2 cosines
// computed, tier 3 looked up when the ranker has a verdict cache) and
// returns the number of groups.
func (s *StageBench) Tier2() int {
	fold.Fold(s.items, s.r.foldOpt, &s.res)
	return len(s.res.Leaders)
}

// GoalScoreGateSort is issue #5's goal for score + gate + sort on the
// reference read (40 candidates): at most 250 ns per candidate.
const GoalScoreGateSort = 250 * time.Nanosecond

// StageCosts are the stages' mean costs per candidate, in nanoseconds.
type StageCosts struct {
	Candidates    int
	Decode        float64
	ScoreGateSort float64
	Tier2         float64
}

// MeetsGoal reports whether score + gate + sort is within
// GoalScoreGateSort.
func (c StageCosts) MeetsGoal() bool {
	return c.ScoreGateSort <= float64(GoalScoreGateSort.Nanoseconds())
}

// Measure runs each stage repeatedly for about perStage (at least once)
// and returns its mean cost per candidate: what `memrank bench proxy`
// prints next to the latencies. It stops early when ctx ends.
func (s *StageBench) Measure(ctx context.Context, perStage time.Duration) StageCosts {
	n := float64(max(len(s.points), 1))
	run := func(stage func()) float64 {
		start := time.Now()
		rounds := 0
		for {
			// Batches keep the clock out of the measurement.
			for range 64 {
				stage()
			}
			rounds += 64
			if time.Since(start) >= perStage || ctx.Err() != nil {
				break
			}
		}
		return float64(time.Since(start).Nanoseconds()) / float64(rounds) / n
	}
	return StageCosts{
		Candidates:    len(s.points),
		Decode:        run(s.Decode),
		ScoreGateSort: run(func() { s.ScoreGateSort() }),
		Tier2:         run(func() { s.Tier2() }),
	}
}
