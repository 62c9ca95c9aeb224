package rank_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/telemetry/settings"
)

// TestTelemetry: one span per stage under the caller's span, with the
// candidate counts, gate drops and folds as attributes; the upstream call
// runs inside the candidates span; counters for drops, exclusions, folds
// and flush results.
func TestTelemetry(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	pts := []*qdrant.ScoredPoint{
		dmem{id: 1, score: 0.9, text: "likes tea", vec: base}.point(),
		dmem{id: 2, score: 0.8, text: "Likes tea!", vec: other}.point(),
		dmem{id: 3, score: 0.7, text: "unsure", conf: 0.2, vec: cos79}.point(),
		scored(4, 0.95, func() map[string]any {
			p := memoryPayload("old claim", 0.9, 0, nil)
			p["superseded_by"] = "1"
			return p
		}(), nil),
	}
	var upstreamParent trace.SpanContext
	src := &ctxSource{fakeSource: fakeSource{info: cosineInfo(), points: pts}, seen: &upstreamParent}
	rec := newRecorder(t, &fakePayloads{}, func(c *rank.RecorderConfig) { c.Telemetry = settings.Settings{TracerProvider: tp, MeterProvider: mp} })
	r := newRanker(t, src, func(c *rank.Config) {
		c.Telemetry, c.Recorder = settings.Settings{TracerProvider: tp, MeterProvider: mp}, rec
	})
	ctx, caller := tp.Tracer("test").Start(context.Background(), "caller")
	if _, err := r.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: u64(5)}); err != nil {
		t.Fatal(err)
	}
	caller.End()
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byName[s.Name()] = s
	}
	query := byName["rank.Query"]
	if query == nil || query.Parent().SpanID() != caller.SpanContext().SpanID() {
		t.Fatalf("rank.Query span missing or not under the caller's: %v", byName)
	}
	for _, stage := range []string{"rank.candidates", "rank.decode", "rank.gate", "rank.dedup", "rank.rank"} {
		s := byName[stage]
		if s == nil {
			t.Errorf("no %s span", stage)
			continue
		}
		if s.Parent().SpanID() != query.SpanContext().SpanID() || s.SpanContext().TraceID() != caller.SpanContext().TraceID() {
			t.Errorf("%s is not a child of rank.Query in the caller's trace", stage)
		}
	}
	if c := byName["rank.candidates"]; c == nil || upstreamParent.SpanID() != c.SpanContext().SpanID() {
		t.Errorf("the upstream call did not run inside the candidates span")
	}
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range query.Attributes() {
		attrs[kv.Key] = kv.Value
	}
	got := map[string]int64{}
	for _, k := range []string{"memrank.oversample", "memrank.candidates.requested", "memrank.candidates.returned", "memrank.excluded", "memrank.gate.drops", "memrank.dedup.folded", "memrank.results"} {
		got[k] = attrs[attribute.Key(k)].AsInt64()
	}
	want := map[string]int64{
		"memrank.oversample": 4, "memrank.candidates.requested": 40, "memrank.candidates.returned": 4,
		"memrank.excluded": 1, "memrank.gate.drops": 1, "memrank.dedup.folded": 1, "memrank.results": 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rank.Query attributes (-want +got):\n%s", diff)
	}
	if byName["rank.access.flush"] == nil {
		t.Errorf("no rank.access.flush span")
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range s.DataPoints {
					key := m.Name
					for _, kv := range dp.Attributes.ToSlice() {
						key += " " + string(kv.Key) + "=" + kv.Value.Emit()
					}
					sums[key] += dp.Value
				}
			}
		}
	}
	wantSums := map[string]int64{
		"memrank.rank.gate.drops":                   1,
		"memrank.rank.exclusions reason=superseded": 1,
		"memrank.rank.dedup.folds tier=text_hash":   1,
		"memrank.rank.requests result=reranked":     1,
		"memrank.access.flush.writes result=ok":     1,
	}
	for k, v := range wantSums {
		if sums[k] != v {
			t.Errorf("metric %s = %d, want %d (all: %v)", k, sums[k], v, sums)
		}
	}
}

// ctxSource notes the span its Query runs under.
type ctxSource struct {
	fakeSource
	seen *trace.SpanContext
}

func (s *ctxSource) Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	*s.seen = trace.SpanContextFromContext(ctx)
	return s.fakeSource.Query(ctx, req)
}
