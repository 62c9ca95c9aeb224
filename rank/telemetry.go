package rank

import (
	"context"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation is the scope name of rank's tracer and meter.
const instrumentation = "github.com/memrank/memrank/rank"

// Stage names: one span and one latency series per stage of the pipeline.
const (
	stageCandidates = "candidates"
	stageDecode     = "decode"
	stageGate       = "gate"
	stageDedup      = "dedup"
	stageRank       = "rank"
)

// Span attribute keys.
const (
	attrCollection    = attribute.Key("db.collection.name")
	attrOversample    = attribute.Key("memrank.oversample")
	attrCandidatesIn  = attribute.Key("memrank.candidates.requested")
	attrCandidatesOut = attribute.Key("memrank.candidates.returned")
	attrGateDrops     = attribute.Key("memrank.gate.drops")
	attrGateFallback  = attribute.Key("memrank.gate.fallback")
	attrExcluded      = attribute.Key("memrank.excluded")
	attrFolded        = attribute.Key("memrank.dedup.folded")
	attrPassThrough   = attribute.Key("memrank.passthrough")
	attrResults       = attribute.Key("memrank.results")
	attrStage         = attribute.Key("stage")
	attrTier          = attribute.Key("tier")
	attrReason        = attribute.Key("reason")
	attrResult        = attribute.Key("result")
	attrMode          = attribute.Key("memrank.mode")
	attrRule          = attribute.Key("memrank.detection")
	attrGuardBest     = attribute.Key("memrank.guard.best")
	attrGuardCutoff   = attribute.Key("memrank.guard.cutoff")
	attrGuardBeyond   = attribute.Key("memrank.guard.beyond")
)

// rankMetrics are the ranker's instruments.
type rankMetrics struct {
	stage      metric.Float64Histogram
	gateDrops  metric.Int64Counter
	folds      metric.Int64Counter
	exclusions metric.Int64Counter
	requests   metric.Int64Counter
	problems   metric.Int64Counter
	guarded    metric.Int64Counter
	shadow     shadowMetrics
	stageAttrs map[string]metric.MeasurementOption
	// exclusionAttrs are indexed like exclusionReasons.
	exclusionAttrs [len(exclusionReasons)]metric.MeasurementOption
	rerankedOpt    metric.MeasurementOption
}

// latencyBuckets suit stages that take microseconds to milliseconds.
var latencyBuckets = []float64{1e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1}

func newRankMetrics(m metric.Meter) (*rankMetrics, error) {
	var rm rankMetrics
	var err error
	if rm.stage, err = m.Float64Histogram("memrank.rank.stage.duration",
		metric.WithUnit("s"), metric.WithDescription("Time spent in each stage of the read pipeline."),
		metric.WithExplicitBucketBoundaries(latencyBuckets...)); err != nil {
		return nil, err
	}
	if rm.gateDrops, err = m.Int64Counter("memrank.rank.gate.drops",
		metric.WithUnit("{candidate}"), metric.WithDescription("Candidates dropped by the retrieval (confidence) gate.")); err != nil {
		return nil, err
	}
	if rm.folds, err = m.Int64Counter("memrank.rank.dedup.folds",
		metric.WithUnit("{candidate}"), metric.WithDescription("Candidates folded into a duplicate, by tier.")); err != nil {
		return nil, err
	}
	if rm.exclusions, err = m.Int64Counter("memrank.rank.exclusions",
		metric.WithUnit("{candidate}"), metric.WithDescription("Candidates left out as superseded, not retrievable or archived.")); err != nil {
		return nil, err
	}
	if rm.requests, err = m.Int64Counter("memrank.rank.requests",
		metric.WithUnit("{request}"), metric.WithDescription("Read requests, re-ranked or passed through (with the reason).")); err != nil {
		return nil, err
	}
	if rm.problems, err = m.Int64Counter("memrank.rank.decode.problems",
		metric.WithUnit("{problem}"), metric.WithDescription("Payload values that were missing, ill-typed or invalid, defaulted.")); err != nil {
		return nil, err
	}
	if rm.guarded, err = m.Int64Counter("memrank.rank.guard.beyond",
		metric.WithUnit("{candidate}"), metric.WithDescription("Candidates outside the relevance band: never counted as accessed.")); err != nil {
		return nil, err
	}
	if rm.shadow, err = newShadowMetrics(m); err != nil {
		return nil, err
	}
	rm.stageAttrs = map[string]metric.MeasurementOption{}
	for _, s := range []string{stageCandidates, stageDecode, stageGate, stageDedup, stageRank} {
		rm.stageAttrs[s] = metric.WithAttributes(attrStage.String(s))
	}
	rm.rerankedOpt = metric.WithAttributes(attrResult.String("reranked"))
	for i, reason := range exclusionReasons {
		rm.exclusionAttrs[i] = metric.WithAttributes(attrReason.String(reason))
	}
	return &rm, nil
}

// stageTimer is one stage's span and clock.
type stageTimer struct {
	span  trace.Span
	start time.Time
	name  string
}

func (r *Ranker) startStage(ctx context.Context, name string) (context.Context, stageTimer) {
	ctx, span := r.tracer.Start(ctx, stageSpanName(name))
	return ctx, stageTimer{span: span, start: time.Now(), name: name}
}

// stageSpanName is "rank."+name without building it on every query.
func stageSpanName(name string) string {
	switch name {
	case stageCandidates:
		return "rank." + stageCandidates
	case stageDecode:
		return "rank." + stageDecode
	case stageGate:
		return "rank." + stageGate
	case stageDedup:
		return "rank." + stageDedup
	case stageRank:
		return "rank." + stageRank
	}
	return "rank." + name
}

func (r *Ranker) endStage(ctx context.Context, st stageTimer, attrs ...attribute.KeyValue) {
	if len(attrs) > 0 && st.span.IsRecording() {
		// A copy, so that attrs does not escape: the callers' argument
		// lists stay on the stack when no span records.
		st.span.SetAttributes(slices.Clone(attrs)...)
	}
	st.span.End()
	r.metrics.stage.Record(ctx, time.Since(st.start).Seconds(), r.metrics.stageAttrs[st.name])
}
