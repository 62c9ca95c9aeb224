package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// Log attribute keys of the trace handler.
const (
	TraceIDKey = "trace_id"
	SpanIDKey  = "span_id"
)

// NewTraceHandler wraps h so that a record logged with a context holding a
// valid span context (Logger.InfoContext(ctx, ...)) carries trace_id and
// span_id, as hex, the way tracing back ends print them.
//
// Under a group opened with WithGroup the two ids land inside that group,
// like every attribute added at Handle time.
func NewTraceHandler(h slog.Handler) slog.Handler { return traceHandler{h} }

type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			// Clone: the caller's record may share attribute storage with
			// other copies.
			r = r.Clone()
			r.AddAttrs(
				slog.String(TraceIDKey, sc.TraceID().String()),
				slog.String(SpanIDKey, sc.SpanID().String()),
			)
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}
