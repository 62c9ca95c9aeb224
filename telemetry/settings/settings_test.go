package settings

import (
	"log/slog"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func TestWithDefaultsFillsNil(t *testing.T) {
	s := Settings{}.WithDefaults()
	if s.Logger == nil || s.TracerProvider == nil || s.MeterProvider == nil || s.Propagator == nil {
		t.Fatalf("WithDefaults left a nil member: %+v", s)
	}
	// Components rely on the default reading both W3C headers.
	fields := s.Propagator.Fields()
	for _, f := range []string{"traceparent", "tracestate", "baggage"} {
		if !slices.Contains(fields, f) {
			t.Errorf("default propagator fields %v lack %q", fields, f)
		}
	}
	if s.Logger.Enabled(t.Context(), slog.LevelError) {
		t.Error("the default logger records")
	}
	if s.TracerProvider.Tracer("t") == nil {
		t.Error("no tracer")
	}
}

func TestWithDefaultsKeepsMembers(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	log := slog.New(slog.DiscardHandler)
	prop := propagation.TraceContext{}
	s := Settings{Logger: log, TracerProvider: tp, Propagator: prop}.WithDefaults()
	if s.Logger != log || s.TracerProvider != tp || s.Propagator != prop {
		t.Errorf("WithDefaults replaced a member that was set: %+v", s)
	}
	if s.MeterProvider == nil {
		t.Error("WithDefaults left MeterProvider nil")
	}
}

func TestNop(t *testing.T) {
	s := Nop()
	if s.Logger == nil || s.TracerProvider == nil || s.MeterProvider == nil || s.Propagator == nil {
		t.Fatalf("Nop has a nil member: %+v", s)
	}
}
