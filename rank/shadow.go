package rank

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ShadowReport compares, for one query in shadow mode, the store's answer
// (what the caller got) with the answer memrank would have given.
type ShadowReport struct {
	Store, Memrank []*qdrant.PointId
	// Overlap is the fraction of the store's results that memrank also
	// returns (1 when the store returned nothing).
	Overlap float64
	// TopChanged is true when the two first results differ.
	TopChanged bool
	// Moved counts the store's results that memrank returns at another
	// position, and Dropped those it does not return at all (excluded,
	// gated, folded, or pushed out by better memories).
	Moved, Dropped int
}

// shadowMetrics are shadow mode's instruments; every comparison is counted,
// and one in LogInterval is also logged.
type shadowMetrics struct {
	queries  metric.Int64Counter
	changed  metric.Int64Counter
	failures metric.Int64Counter
	overlap  metric.Float64Histogram
	dropped  metric.Int64Counter
}

func newShadowMetrics(m metric.Meter) (shadowMetrics, error) {
	var s shadowMetrics
	var err error
	if s.queries, err = m.Int64Counter("memrank.rank.shadow.queries",
		metric.WithUnit("{query}"), metric.WithDescription("Shadow-mode queries memrank ranked beside the store's answer.")); err != nil {
		return s, err
	}
	if s.changed, err = m.Int64Counter("memrank.rank.shadow.top_changed",
		metric.WithUnit("{query}"), metric.WithDescription("Shadow-mode queries whose first result memrank would change.")); err != nil {
		return s, err
	}
	if s.failures, err = m.Int64Counter("memrank.rank.shadow.failures",
		metric.WithUnit("{query}"), metric.WithDescription("Shadow-mode queries memrank could not rank (the caller still got the store's answer).")); err != nil {
		return s, err
	}
	if s.overlap, err = m.Float64Histogram("memrank.rank.shadow.overlap",
		metric.WithUnit("1"), metric.WithDescription("Fraction of the store's results memrank would also return."),
		metric.WithExplicitBucketBoundaries(0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1)); err != nil {
		return s, err
	}
	if s.dropped, err = m.Int64Counter("memrank.rank.shadow.dropped",
		metric.WithUnit("{result}"), metric.WithDescription("Store results memrank would not return (excluded, gated, folded or outranked).")); err != nil {
		return s, err
	}
	return s, nil
}

// shadowQuery answers with the store's own answer to the caller's request
// and, for a sampled share of queries, runs memrank's pipeline beside it
// (concurrently, so the caller waits for the slower of the two, not their
// sum) and reports how the two differ. It records no access.
func (r *Ranker) shadowQuery(ctx context.Context, span trace.Span, req *qdrant.QueryPoints, p plan) (*Result, error) {
	if rand.Float64() >= r.cfg.Shadow.SampleRate {
		return r.passQuery(ctx, span, req, PassThroughShadow)
	}
	var (
		wg      sync.WaitGroup
		ranked  *Result
		rankErr error
	)
	wg.Go(func() {
		sctx, sspan := r.tracer.Start(ctx, "rank.shadow")
		defer sspan.End()
		ranked, rankErr = r.rerank(sctx, sspan, req, p, false)
	})
	res, err := r.passQuery(ctx, span, req, PassThroughShadow)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	coll := metric.WithAttributes(attrCollection.String(req.GetCollectionName()))
	if rankErr != nil {
		r.metrics.shadow.failures.Add(ctx, 1, coll)
		return res, nil
	}
	rep := compareShadow(res.Points, ranked.Points)
	res.Shadow = rep
	sm := &r.metrics.shadow
	sm.queries.Add(ctx, 1, coll)
	if rep.TopChanged {
		sm.changed.Add(ctx, 1, coll)
	}
	sm.overlap.Record(ctx, rep.Overlap, coll)
	if rep.Dropped > 0 {
		sm.dropped.Add(ctx, int64(rep.Dropped), coll)
	}
	span.SetAttributes(attribute.Float64("memrank.shadow.overlap", rep.Overlap), attribute.Bool("memrank.shadow.top_changed", rep.TopChanged))
	r.shadowLog.Do(func() {
		r.cfg.Telemetry.Logger.LogAttrs(ctx, slog.LevelInfo, "shadow ranking",
			slog.String("collection", req.GetCollectionName()),
			slog.Any("store", idStrings(rep.Store)),
			slog.Any("memrank", idStrings(rep.Memrank)),
			slog.Float64("overlap", rep.Overlap),
			slog.Bool("top_changed", rep.TopChanged),
			slog.Int("moved", rep.Moved),
			slog.Int("dropped", rep.Dropped))
	})
	return res, nil
}

// compareShadow compares the store's results with memrank's.
func compareShadow(store, ranked []*qdrant.ScoredPoint) *ShadowReport {
	rep := &ShadowReport{Overlap: 1}
	pos := make(map[string]int, len(ranked))
	for i, p := range ranked {
		rep.Memrank = append(rep.Memrank, p.GetId())
		if k, ok := idKey(p.GetId()); ok {
			pos[k] = i
		}
	}
	for i, p := range store {
		rep.Store = append(rep.Store, p.GetId())
		k, _ := idKey(p.GetId())
		switch j, ok := pos[k]; {
		case !ok:
			rep.Dropped++
		case j != i:
			rep.Moved++
		}
	}
	if len(store) > 0 {
		rep.Overlap = float64(len(store)-rep.Dropped) / float64(len(store))
	}
	switch {
	case len(store) == 0 && len(ranked) == 0:
	case len(store) == 0 || len(ranked) == 0:
		rep.TopChanged = true
	default:
		a, _ := idKey(store[0].GetId())
		b, _ := idKey(ranked[0].GetId())
		rep.TopChanged = a != b
	}
	return rep
}

// idStrings writes ids as Qdrant does: numbers in decimal, UUIDs as text.
func idStrings(ids []*qdrant.PointId) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		if u, ok := id.GetPointIdOptions().(*qdrant.PointId_Uuid); ok {
			out[i] = u.Uuid
		} else {
			out[i] = strconv.FormatUint(id.GetNum(), 10)
		}
	}
	return out
}
