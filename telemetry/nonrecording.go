package telemetry

import (
	"context"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// idsOnlyProvider is the tracer provider when no span goes anywhere. An SDK
// provider without a processor still samples and builds every span (its
// attributes, events and status) only to drop it at End: on the read path
// that was about a third of the gRPC hop's cost. This one records nothing
// and builds nothing, yet keeps what tracing gives without an exporter:
//
//   - a call that arrives with a trace context keeps it: every "span"
//     started under it is that context, so the upstream receives the
//     caller's traceparent (sampled flag included) and logs carry its ids;
//   - a call that arrives without one gets fresh, unsampled ids once, at
//     its outermost span, so every log line of one request still carries
//     the same trace_id.
//
// Span options (attributes, kind, links) are ignored unread: reading them
// is the cost this provider exists to avoid.
type idsOnlyProvider struct{ embedded.TracerProvider }

var _ trace.TracerProvider = idsOnlyProvider{}

func (idsOnlyProvider) Tracer(string, ...trace.TracerOption) trace.Tracer { return idsOnlyTracer{} }

type idsOnlyTracer struct{ embedded.Tracer }

func (idsOnlyTracer) Start(ctx context.Context, _ string, _ ...trace.SpanStartOption) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if sc := parent.SpanContext(); sc.IsValid() {
		if !parent.IsRecording() {
			return ctx, parent // nothing to build: the parent stands for its children
		}
		// A recording parent from another provider must not be ended or
		// annotated by this span's user: hand out its context only.
		ctx = trace.ContextWithSpanContext(ctx, sc)
		return ctx, trace.SpanFromContext(ctx)
	}
	ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: newTraceID(),
		SpanID:  newSpanID(),
	}))
	return ctx, trace.SpanFromContext(ctx)
}

// newTraceID and newSpanID draw from the runtime's per-thread generator:
// no lock, never zero (a zero id is invalid and would drop the ids from
// the logs).
func newTraceID() trace.TraceID {
	var id trace.TraceID
	binary.LittleEndian.PutUint64(id[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(id[8:], rand.Uint64()|1)
	return id
}

func newSpanID() trace.SpanID {
	var id trace.SpanID
	binary.LittleEndian.PutUint64(id[:], rand.Uint64()|1)
	return id
}
