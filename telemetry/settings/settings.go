// Package settings holds what every memrank component needs to log, trace
// and measure: a logger, a tracer provider, a meter provider and a
// propagator, passed as one value instead of four fields per component.
//
// It is a leaf of its own, apart from package telemetry, so that components
// depend on the slog and OpenTelemetry API types only: telemetry builds the
// SDK providers and the Prometheus exporter, and importing it would make
// every component (embed included) depend on them.
package settings

import (
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Settings is where a component's logs, spans and metrics go. The zero value
// records nothing: WithDefaults fills it. Components never read or set the
// OpenTelemetry globals; they use these members, which telemetry.Telemetry's
// Settings method fills for the whole process.
type Settings struct {
	Logger         *slog.Logger         // nil: discard
	TracerProvider trace.TracerProvider // nil: noop
	MeterProvider  metric.MeterProvider // nil: noop
	// Propagator reads and writes the trace context carried by requests
	// (otelhttp, otelgrpc); nil: W3C trace context and baggage.
	Propagator propagation.TextMapPropagator
}

// Nop returns Settings that record nothing, every member filled: for tests
// and tools.
func Nop() Settings { return Settings{}.WithDefaults() }

// WithDefaults returns s with every nil member replaced by one that records
// nothing (a discarding logger, no-op providers) or, for the propagator,
// by W3C trace context and baggage, so that a component never checks for
// nil.
func (s Settings) WithDefaults() Settings {
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.TracerProvider == nil {
		s.TracerProvider = tracenoop.NewTracerProvider()
	}
	if s.MeterProvider == nil {
		s.MeterProvider = metricnoop.NewMeterProvider()
	}
	if s.Propagator == nil {
		s.Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	return s
}
