package rank

import (
	"context"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/internal/vecmath"
	"github.com/memrank/memrank/rank/internal/fold"
	"github.com/memrank/memrank/scoring"
)

// StageCosts are the read path's CPU stages' mean costs per candidate, in
// nanoseconds, as MeasureStages reports them.
type StageCosts struct {
	Candidates    int
	Decode        float64
	ScoreGateSort float64
	Tier2         float64
}

// MeasureStages exists for measurement only (`memrank bench proxy`), not
// for serving: it runs each CPU stage of the read path on its own, with the
// pipeline's own code, over points taken as the answer of a nearest query
// on a collection with the given distance (Cosine or Dot) whose unnamed
// dense vector the points carry, scored at now. Each stage runs repeatedly
// for about perStage (at least once); it stops early when ctx ends. The
// stages are unexported, so that measuring them adds one method to the
// package's API rather than a copy of the pipeline outside it.
func (r *Ranker) MeasureStages(ctx context.Context, points []*qdrant.ScoredPoint, distance qdrant.Distance, now time.Time, perStage time.Duration) StageCosts {
	s := r.newStageBench(points, distance, now)
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
		Decode:        run(s.decode),
		ScoreGateSort: run(func() { s.scoreGateSort() }),
		Tier2:         run(func() { s.tier2() }),
	}
}

// stageBench holds a fixed candidate set and the pipeline's scratch space,
// so that each CPU stage can be run on its own: payload decode, score +
// gate + sort, and duplicate folding (tier-2 vector math). MeasureStages
// and rank's benchmarks (through export_test.go) time it. It is not safe
// for concurrent use.
type stageBench struct {
	r      *Ranker
	points []*qdrant.ScoredPoint
	p      plan
	now    time.Time
	span   trace.Span
	w      work
	items  []fold.Item
	res    fold.Result
}

func (r *Ranker) newStageBench(points []*qdrant.ScoredPoint, distance qdrant.Distance, now time.Time) *stageBench {
	s := &stageBench{
		r: r, points: points, now: now,
		p: plan{tier2: true, unit: distance == qdrant.Distance_Cosine,
			det: Detection{Mode: ModeRerank, Guard: r.cfg.Guard, GuardFrom: "default"}},
		span: trace.SpanFromContext(context.Background()),
	}
	n := len(points)
	s.w.mem = resize(s.w.mem, n)
	s.w.mems = resize(s.w.mems, n)
	s.w.ins = resize(s.w.ins, n)
	s.w.bases = resize(s.w.bases, n)
	s.w.scores = resize(s.w.scores, n)
	s.w.claims = resize(s.w.claims, n)
	s.decode()
	kept := s.scoreGateSort()
	// The items folding sees: the kept candidates best first.
	s.items = make([]fold.Item, len(kept))
	for j, sc := range kept {
		it := s.w.foldItem(sc.Seq)
		if v := denseVector(points[sc.Seq].GetVectors(), ""); len(v) > 0 {
			it.Vector, it.InvNorm = v, 1
			if !s.p.unit {
				it.InvNorm = vecmath.InvNorm(v)
			}
		}
		s.items[j] = it
	}
	return s
}

// decode decodes every candidate's payload into the scoring inputs.
func (s *stageBench) decode() {
	for i, pt := range s.points {
		m := &s.w.mems[i]
		s.w.mem[i] = m
		s.r.codec.DecodeRank(pt.GetPayload(), m)
		s.w.ins[i] = s.r.codec.Inputs(m)
		s.w.ins[i].Seq = i
	}
}

// scoreGateSort scores every decoded candidate, drops the excluded ones,
// applies the retrieval gate and the relevance guard and sorts what is left
// best first.
func (s *stageBench) scoreGateSort() []scoring.Score {
	w := &s.w
	w.scores = w.scores[:len(s.points)]
	for i, pt := range s.points {
		base := float64(pt.GetScore())
		w.bases[i] = base
		w.scores[i] = s.r.params.Evaluate(&w.ins[i], base, s.now)
	}
	kept := s.r.gate(context.Background(), s.span, w, s.points, s.p)
	s.r.refocus(w, kept)
	s.r.guard(context.Background(), s.span, w, kept, s.p)
	w.order(kept, s.points)
	return kept
}

// tier2 folds the kept candidates (tier 1 keys compared, tier-2 cosines
// computed, tier 3 looked up when the ranker has a verdict cache) and
// returns the number of groups.
func (s *stageBench) tier2() int {
	fold.Fold(s.items, s.r.foldOpt, &s.res)
	return len(s.res.Leaders)
}
