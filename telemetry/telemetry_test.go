package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func setup(t *testing.T, cfg Config, out io.Writer) *Telemetry {
	t.Helper()
	tel, err := Setup(context.Background(), cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return tel
}

// TestSetupConfig: Setup takes the zero value, any case and "warning";
// it refuses names it does not know, wrapping ErrConfig.
func TestSetupConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero value", Config{}, true},
		{"debug text", Config{LogLevel: "debug", LogFormat: "text"}, true},
		{"upper case", Config{LogLevel: "WARN", LogFormat: "JSON"}, true},
		{"warning alias", Config{LogLevel: "warning"}, true},
		{"bad level", Config{LogLevel: "loud"}, false},
		{"bad format", Config{LogFormat: "xml"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel, err := Setup(context.Background(), tt.cfg, nil)
			if (err == nil) != tt.ok {
				t.Fatalf("Setup() = %v, want ok %v", err, tt.ok)
			}
			if err != nil {
				if !errors.Is(err, ErrConfig) {
					t.Errorf("error %v does not wrap ErrConfig", err)
				}
				return
			}
			if err := tel.Shutdown(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestConfigValidate: the section as a user writes it, keys named.
func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		want string // the key at fault; "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"text", func(c *Config) { c.LogFormat = "text" }, ""},
		{"no service name", func(c *Config) { c.ServiceName = "" }, "service_name"},
		{"bad level", func(c *Config) { c.LogLevel = "loud" }, "log_level"},
		{"bad format", func(c *Config) { c.LogFormat = "xml" }, "log_format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.edit(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want+":")):
				t.Errorf("Validate() = %v, want an error about %s", err, tt.want)
			}
		})
	}
}

// TestLogCarriesTraceID: a record logged under an active span names that
// span, so a log line leads to its trace; one logged without a span does not.
func TestLogCarriesTraceID(t *testing.T) {
	var buf bytes.Buffer
	exp := tracetest.NewInMemoryExporter()
	tel := setup(t, Config{SpanExporter: exp}, &buf)

	ctx, span := tel.TracerProvider.Tracer("test").Start(context.Background(), "op")
	tel.Logger.With("component", "rank").InfoContext(ctx, "ranked", "candidates", 40)
	span.End()
	tel.Logger.InfoContext(context.Background(), "no span")
	tel.Logger.DebugContext(ctx, "below the level")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", len(lines), buf.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("not JSON: %v: %s", err, lines[0])
	}
	sc := span.SpanContext()
	if rec[TraceIDKey] != sc.TraceID().String() || rec[SpanIDKey] != sc.SpanID().String() {
		t.Errorf("log ids %v/%v, span %s/%s", rec[TraceIDKey], rec[SpanIDKey], sc.TraceID(), sc.SpanID())
	}
	if rec["component"] != "rank" || rec["candidates"] != float64(40) || rec["msg"] != "ranked" {
		t.Errorf("record lost its attributes: %v", rec)
	}
	if strings.Contains(lines[1], TraceIDKey) {
		t.Errorf("a record without a span has a trace id: %s", lines[1])
	}
	// The span reached the test exporter synchronously.
	if got := exp.GetSpans(); len(got) != 1 || got[0].SpanContext.TraceID() != sc.TraceID() {
		t.Errorf("exporter holds %d spans", len(got))
	}
	if res := exp.GetSpans()[0].Resource; res == nil || !strings.Contains(res.String(), "service.name=memrank") {
		t.Errorf("resource %v lacks service.name=memrank", res)
	}
}

func TestTextLogFormat(t *testing.T) {
	var buf bytes.Buffer
	tel := setup(t, Config{LogFormat: "text", LogLevel: "debug"}, &buf)
	ctx, span := tel.TracerProvider.Tracer("test").Start(context.Background(), "op")
	tel.Logger.DebugContext(ctx, "hello")
	span.End()
	line := buf.String()
	if !strings.Contains(line, "level=DEBUG") || !strings.Contains(line, "trace_id="+span.SpanContext().TraceID().String()) {
		t.Errorf("text record %q lacks the level or the trace id", line)
	}
}

// TestPropagatorContinuesTrace: what the fronts hand to otelhttp/otelgrpc
// reads a W3C traceparent, so memrank's spans join the caller's trace.
func TestPropagatorContinuesTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tel := setup(t, Config{SpanExporter: exp}, nil)
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := tel.Propagator().Extract(context.Background(), propagation.MapCarrier{"traceparent": parent})
	_, span := tel.TracerProvider.Tracer("test").Start(ctx, "child")
	span.End()
	if got := span.SpanContext().TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("child trace id %s, want the caller's", got)
	}
	out := propagation.MapCarrier{}
	tel.Propagator().Inject(trace.ContextWithSpan(context.Background(), span), out)
	if !strings.HasPrefix(out["traceparent"], "00-4bf92f3577b34da6a3ce929d0e0e4736-") {
		t.Errorf("injected traceparent %q", out["traceparent"])
	}
}

// TestMetricsEndpoint: an instrument recorded through MeterProvider shows up
// in the Prometheus exposition with its translated name, next to the Go
// runtime collector; histograms in seconds get the latency buckets.
func TestMetricsEndpoint(t *testing.T) {
	tel := setup(t, Config{ServiceName: "memrank-test", InstanceID: "replica-a"}, nil)
	m := tel.MeterProvider.Meter("github.com/memrank/memrank/rank")
	c, err := m.Int64Counter("memrank.gate.drops")
	if err != nil {
		t.Fatal(err)
	}
	c.Add(context.Background(), 3)
	sec, err := m.Float64Histogram("memrank.score.duration", metric.WithUnit("s"))
	if err != nil {
		t.Fatal(err)
	}
	sec.Record(context.Background(), 0.0003)

	srv := httptest.NewServer(tel.MetricsHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	for _, want := range []string{
		"memrank_gate_drops_total{",
		`} 3`,
		`memrank_score_duration_seconds_bucket{`,
		`le="0.0005"`,
		"go_goroutines ",
		`target_info{`,
		`service_name="memrank-test"`,
		`service_instance_id="replica-a"`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("exposition:\n%s", body)
	}
}

func TestShutdownTwice(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tel, err := Setup(context.Background(), Config{SpanExporter: exp}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, span := tel.TracerProvider.Tracer("t").Start(context.Background(), "op")
	span.End()
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	// After shutdown spans are no longer recorded.
	_, span = tel.TracerProvider.Tracer("t").Start(context.Background(), "late")
	span.End()
	if n := len(exp.GetSpans()); n != 0 {
		// The in-memory exporter is reset by its own Shutdown.
		t.Errorf("%d spans after shutdown", n)
	}
}

// TestOTLPWithoutCollector: with an endpoint and no collector listening,
// Setup still succeeds (export is best effort and asynchronous), spans can be
// recorded, and Shutdown returns within its deadline leaving no goroutine
// behind (goleak checks at the end of the package).
func TestOTLPWithoutCollector(t *testing.T) {
	// A listener that is closed at once: nothing answers on that port.
	l := httptest.NewUnstartedServer(nil).Listener
	addr := l.Addr().String()
	l.Close()
	for _, endpoint := range []string{"http://" + addr, addr} {
		t.Run(endpoint, func(t *testing.T) {
			tel, err := Setup(context.Background(), Config{OTLPEndpoint: endpoint}, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, span := tel.TracerProvider.Tracer("t").Start(context.Background(), "op")
			span.End()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_ = tel.Shutdown(ctx) // the export itself fails: nobody listens
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Shutdown took %v", d)
			}
		})
	}
}

func TestNop(t *testing.T) {
	tel := Nop()
	tel.Logger.Info("discarded")
	_, span := tel.TracerProvider.Tracer("t").Start(context.Background(), "op")
	span.End()
	rec := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("Nop metrics: %d", rec.Code)
	}
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestSettings: what components receive is the Telemetry's own logger,
// providers and propagator, not defaults standing in for them.
func TestSettings(t *testing.T) {
	tel := setup(t, Config{}, nil)
	s := tel.Settings()
	if s.Logger != tel.Logger || s.TracerProvider != tel.TracerProvider || s.MeterProvider != tel.MeterProvider {
		t.Errorf("Settings() = %+v, want the Telemetry's logger and providers", s)
	}
	// The composite propagator is a slice: compared by the headers it uses,
	// which it lists in no set order.
	if s.Propagator == nil || !slices.Equal(slices.Sorted(slices.Values(s.Propagator.Fields())), slices.Sorted(slices.Values(tel.Propagator().Fields()))) {
		t.Errorf("Settings().Propagator = %v, want the Telemetry's", s.Propagator)
	}
}

// TestNoExporterRecordsNoSpans: without an exporter nothing is recorded,
// yet a request still has trace ids for its logs (the caller's when it sent
// a traceparent, which then travels on unchanged, fresh ones otherwise),
// and metrics are still exported.
func TestNoExporterRecordsNoSpans(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name        string
		carrier     propagation.MapCarrier
		wantTraceID string // "": fresh ids
	}{
		{"caller's trace", propagation.MapCarrier{"traceparent": parent}, "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"no trace context", propagation.MapCarrier{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			tel := setup(t, Config{}, &logs)
			ctx := tel.Propagator().Extract(context.Background(), tt.carrier)
			tracer := tel.TracerProvider.Tracer("test")
			ctx, outer := tracer.Start(ctx, "server", trace.WithAttributes(attribute.String("k", "v")))
			inner, stage := tracer.Start(ctx, "stage")
			for _, s := range []trace.Span{outer, stage} {
				if s.IsRecording() {
					t.Errorf("span is recording without an exporter")
				}
			}
			sc := trace.SpanContextFromContext(inner)
			if !sc.IsValid() || !sc.Equal(outer.SpanContext()) {
				t.Errorf("inner span context %v, want the outer's valid %v", sc, outer.SpanContext())
			}
			if tt.wantTraceID != "" && sc.TraceID().String() != tt.wantTraceID {
				t.Errorf("trace id %s, want the caller's %s", sc.TraceID(), tt.wantTraceID)
			}
			out := propagation.MapCarrier{}
			tel.Propagator().Inject(inner, out)
			if tt.wantTraceID != "" && out["traceparent"] != parent {
				t.Errorf("injected traceparent %q, want the caller's %q unchanged", out["traceparent"], parent)
			}
			stage.End()
			outer.End()

			tel.Logger.InfoContext(inner, "ranked")
			if !strings.Contains(logs.String(), `"`+TraceIDKey+`":"`+sc.TraceID().String()+`"`) {
				t.Errorf("log %q lacks trace id %s", logs.String(), sc.TraceID())
			}

			c, err := tel.MeterProvider.Meter("test").Int64Counter("memrank.test.calls")
			if err != nil {
				t.Fatal(err)
			}
			c.Add(ctx, 2)
			rec := httptest.NewRecorder()
			tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			if !strings.Contains(rec.Body.String(), "memrank_test_calls_total{") {
				t.Errorf("metrics lack the counter:\n%s", rec.Body.String())
			}
		})
	}
}

// Two requests without a trace context get different trace ids.
func TestNoExporterFreshIDs(t *testing.T) {
	tracer := setup(t, Config{}, nil).TracerProvider.Tracer("test")
	_, a := tracer.Start(context.Background(), "a")
	_, b := tracer.Start(context.Background(), "b")
	if a.SpanContext().TraceID() == b.SpanContext().TraceID() || a.SpanContext().IsSampled() {
		t.Errorf("ids %v and %v: want distinct, unsampled", a.SpanContext(), b.SpanContext())
	}
}

// BenchmarkSpanNoExporter is the cost of a server span and a stage span
// under it without an exporter, attributes included.
func BenchmarkSpanNoExporter(b *testing.B) {
	tel, err := Setup(context.Background(), Config{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	tracer := tel.TracerProvider.Tracer("bench")
	b.ReportAllocs()
	for b.Loop() {
		ctx, outer := tracer.Start(context.Background(), "server")
		_, inner := tracer.Start(ctx, "stage")
		inner.SetAttributes(attribute.Int("n", 40))
		inner.End()
		outer.End()
	}
}
