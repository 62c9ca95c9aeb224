// Package telemetry sets up memrank's logs, traces and metrics (docs/operations.md) and hands the providers to whoever needs them: no package reads
// or sets the OpenTelemetry globals, every component receives them as one
// settings.Settings (Telemetry.Settings), whose type lives in the leaf
// package telemetry/settings so that components do not depend on the SDK.
//
//   - Logs: log/slog, JSON or text, at the configured level; every record
//     logged with a context that holds a span carries that span's trace_id and
//     span_id, so a log line leads to its trace.
//   - Traces: an SDK tracer provider whose spans go to an OTLP gRPC collector
//     when an endpoint is configured (the exporter still reads the other
//     OTEL_EXPORTER_OTLP_* settings, such as headers, certificates and
//     compression, itself), or to a test exporter when one is given. With
//     neither, no span is recorded or even built (idsOnlyProvider), metrics
//     stay on, and a request keeps its caller's trace context or gets fresh
//     ids, so logs carry trace ids in every setup at no per-span cost.
//   - Metrics: an SDK meter provider read by the OpenTelemetry Prometheus
//     exporter, registered on a registry of its own (with the Go and process
//     collectors), served by MetricsHandler.
//   - Propagation: W3C trace context and baggage, handed to otelhttp and
//     otelgrpc explicitly.
package telemetry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/config/check"
	"github.com/memrank/memrank/telemetry/settings"
)

// Log formats.
const (
	FormatJSON = "json"
	FormatText = "text"
)

// Log levels.
const (
	LevelDebug = "debug"
	LevelInfo  = "info"
	LevelWarn  = "warn"
	LevelError = "error"
)

// Config configures Setup. The fields with a koanf tag are the telemetry
// section of memrank's configuration (DefaultConfig, Validate). Setup
// accepts the zero value (service "memrank", info level, JSON logs, no
// trace export), any case, and "warning" for warn.
type Config struct {
	ServiceName string `koanf:"service_name"` // resource service.name
	LogLevel    string `koanf:"log_level"`    // debug | info | warn | error (slog's level names)
	LogFormat   string `koanf:"log_format"`   // json | text
	// OTLPEndpoint is the OTLP gRPC collector: a URL ("http://collector:4317"
	// is plain text, "https://..." TLS) or host:port (TLS unless
	// OTEL_EXPORTER_OTLP_INSECURE says otherwise, which the exporter reads).
	// "" = no OTLP export.
	OTLPEndpoint string `koanf:"otlp_endpoint"`

	// ServiceVersion and InstanceID (the replica id) go into the resource
	// when set.
	ServiceVersion string
	InstanceID     string
	// SpanExporter receives every span synchronously (tests: an in-memory
	// exporter). It is used only when OTLPEndpoint is empty.
	SpanExporter sdktrace.SpanExporter
}

// ErrConfig is wrapped by Setup's errors about its Config.
var ErrConfig = errors.New("telemetry: invalid config")

// DefaultConfig returns the telemetry section's defaults.
func DefaultConfig() Config {
	return Config{ServiceName: "memrank", LogLevel: LevelInfo, LogFormat: FormatJSON}
}

// Validate checks the telemetry section's values as they are.
func (c Config) Validate() error {
	var k check.Checker
	k.NonEmpty("service_name", c.ServiceName)
	k.OneOf("log_level", c.LogLevel, LevelDebug, LevelInfo, LevelWarn, LevelError)
	k.OneOf("log_format", c.LogFormat, FormatJSON, FormatText)
	return k.Err()
}

// withDefaults fills what is empty and reads names in any case.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	c.ServiceName = cmp.Or(c.ServiceName, d.ServiceName)
	c.LogLevel = strings.ToLower(cmp.Or(c.LogLevel, d.LogLevel))
	if c.LogLevel == "warning" {
		c.LogLevel = LevelWarn
	}
	c.LogFormat = strings.ToLower(cmp.Or(c.LogFormat, d.LogFormat))
	return c
}

// level is LogLevel (valid) as slog's.
func (c Config) level() slog.Level {
	var l slog.Level
	_ = l.UnmarshalText([]byte(c.LogLevel))
	return l
}

// Telemetry holds the providers built by Setup.
type Telemetry struct {
	// Logger writes JSON or text records at the configured level; records
	// logged with a context holding a span carry its trace_id and span_id.
	Logger         *slog.Logger
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider

	tp         *sdktrace.TracerProvider // nil in Nop
	otlp       sdktrace.SpanExporter    // the OTLP exporter, when there is one
	mp         *sdkmetric.MeterProvider // nil in Nop
	registry   *prometheus.Registry
	propagator propagation.TextMapPropagator

	once sync.Once
	err  error
}

// Setup builds the logger and the providers. Logs go to logOut (nil =
// discarded). Call Shutdown to flush spans and stop the exporters.
func Setup(ctx context.Context, cfg Config, logOut io.Writer) (*Telemetry, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	level := cfg.level()
	if logOut == nil {
		logOut = io.Discard
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if cfg.LogFormat == FormatText {
		h = slog.NewTextHandler(logOut, opts)
	} else {
		h = slog.NewJSONHandler(logOut, opts)
	}

	attrs := []attribute.KeyValue{semconv.ServiceName(cfg.ServiceName)}
	if cfg.ServiceVersion != "" {
		attrs = append(attrs, semconv.ServiceVersion(cfg.ServiceVersion))
	}
	if cfg.InstanceID != "" {
		attrs = append(attrs, semconv.ServiceInstanceID(cfg.InstanceID))
	}
	// resource.New with explicit detectors only: resource.Default would read
	// OTEL_RESOURCE_ATTRIBUTES, and configuration is read in one place.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithSchemaURL(semconv.SchemaURL), resource.WithAttributes(attrs...))
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}

	tp, otlp, err := tracerProvider(ctx, cfg, res)
	if err != nil {
		return nil, err
	}
	var tracers trace.TracerProvider = idsOnlyProvider{}
	if tp != nil {
		tracers = tp
	}
	reg, mp, err := meterProvider(res)
	if err != nil {
		if tp != nil {
			_ = tp.Shutdown(ctx)
		}
		return nil, err
	}

	// WithDefaults supplies the propagator, so the process and a component
	// left without Settings agree on it.
	set := settings.Settings{Logger: slog.New(NewTraceHandler(h)), TracerProvider: tracers, MeterProvider: mp}.WithDefaults()
	return &Telemetry{
		Logger:         set.Logger,
		TracerProvider: set.TracerProvider,
		MeterProvider:  set.MeterProvider,
		tp:             tp,
		otlp:           otlp,
		mp:             mp,
		registry:       reg,
		propagator:     set.Propagator,
	}, nil
}

// tracerProvider is the SDK provider feeding the configured exporter, and
// the OTLP exporter when that is the one; nil when no span goes anywhere,
// for Setup then installs idsOnlyProvider, which builds no span at all.
func tracerProvider(ctx context.Context, cfg Config, res *resource.Resource) (*sdktrace.TracerProvider, sdktrace.SpanExporter, error) {
	switch {
	case cfg.OTLPEndpoint != "":
		exp, err := otlptracegrpc.New(ctx, endpointOption(cfg.OTLPEndpoint))
		if err != nil {
			return nil, nil, fmt.Errorf("telemetry: OTLP exporter for %q: %w", cfg.OTLPEndpoint, err)
		}
		return sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(exp)), exp, nil
	case cfg.SpanExporter != nil:
		return sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSyncer(cfg.SpanExporter)), nil, nil
	}
	return nil, nil, nil
}

// meterProvider is the SDK meter provider read by the Prometheus exporter,
// and the registry that exporter and the Go and process collectors are on.
func meterProvider(res *resource.Resource) (*prometheus.Registry, *sdkmetric.MeterProvider, error) {
	reg := prometheus.NewRegistry()
	if err := errors.Join(
		reg.Register(collectors.NewGoCollector()),
		reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})),
	); err != nil {
		return nil, nil, fmt.Errorf("telemetry: Prometheus collectors: %w", err)
	}
	exp, err := otelprom.New(
		otelprom.WithRegisterer(reg),
		// Pinned rather than left to the exporter's default, which is
		// announced to change: dashboards depend on these names.
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("telemetry: Prometheus exporter: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(
		sdkmetric.WithResource(res),
		sdkmetric.WithReader(exp),
		sdkmetric.WithView(secondsView()),
	)
	return reg, mp, nil
}

// endpointOption reads the endpoint as a URL when it has a scheme, else as
// host:port.
func endpointOption(endpoint string) otlptracegrpc.Option {
	if strings.Contains(endpoint, "://") {
		return otlptracegrpc.WithEndpointURL(endpoint)
	}
	return otlptracegrpc.WithEndpoint(endpoint)
}

// LatencyBuckets are the histogram boundaries, in seconds, of every
// histogram measured in seconds: the SDK's defaults (0 to 10000) suit
// milliseconds, and memrank's stages take from tens of microseconds (score
// and gate) to seconds (an upstream call under load).
func LatencyBuckets() []float64 {
	return []float64{
		0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
		0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
	}
}

func secondsView() sdkmetric.View {
	return sdkmetric.NewView(
		sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram, Unit: "s"},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: LatencyBuckets()}},
	)
}

// Nop returns a Telemetry that records nothing: a discarding logger and no-op
// providers. For tests and tools that need the fields filled.
func Nop() *Telemetry {
	set := settings.Nop()
	return &Telemetry{
		Logger:         set.Logger,
		TracerProvider: set.TracerProvider,
		MeterProvider:  set.MeterProvider,
		registry:       prometheus.NewRegistry(),
		propagator:     set.Propagator,
	}
}

// Settings is what every component takes (its Config's Telemetry field):
// the logger, the providers and the propagator, handed over as one value.
func (t *Telemetry) Settings() settings.Settings {
	return settings.Settings{
		Logger:         t.Logger,
		TracerProvider: t.TracerProvider,
		MeterProvider:  t.MeterProvider,
		Propagator:     t.propagator,
	}
}

// Propagator is the W3C trace-context (and baggage) propagator to hand to
// otelhttp (otelhttp.WithPropagators) and otelgrpc (otelgrpc.WithPropagators),
// since memrank never installs a global one.
func (t *Telemetry) Propagator() propagation.TextMapPropagator { return t.propagator }

// MetricsHandler serves the Prometheus exposition of every instrument
// recorded through MeterProvider, plus the Go runtime and process
// collectors.
func (t *Telemetry) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{
		// One failing collector must not hide the others.
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// ForceFlush exports the spans still buffered, e.g. before a test reads its
// exporter or before a planned stop.
func (t *Telemetry) ForceFlush(ctx context.Context) error {
	if t.tp == nil {
		return nil
	}
	return t.tp.ForceFlush(ctx)
}

// Shutdown flushes buffered spans and stops the exporters, within ctx's
// deadline. It is safe to call twice; the second call returns the first's
// result.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	t.once.Do(func() {
		var errs []error
		if t.tp != nil {
			if err := t.tp.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("telemetry: tracer provider shutdown: %w", err))
			}
			// When ctx ran out first, the batch processor gave up waiting but
			// its export is still retrying against the collector; stopping
			// the exporter (a no-op when already stopped) cancels it, so no
			// goroutine outlives Shutdown by more than a moment.
			if t.otlp != nil {
				if err := t.otlp.Shutdown(ctx); err != nil && ctx.Err() == nil {
					errs = append(errs, fmt.Errorf("telemetry: OTLP exporter shutdown: %w", err))
				}
			}
		}
		if t.mp != nil {
			if err := t.mp.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("telemetry: meter provider shutdown: %w", err))
			}
		}
		t.err = errors.Join(errs...)
	})
	return t.err
}
