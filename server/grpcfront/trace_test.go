package grpcfront

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/memrank/memrank/telemetry/settings"
	"github.com/memrank/memrank/upstream"
)

// One trace runs from the caller's span through the front's server span,
// the ranker's stage spans and its client span to the store's server span;
// a forwarded call makes one trace the same way.
func TestOneTraceThroughTheFront(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel := settings.Settings{TracerProvider: tp}.WithDefaults()
	prop := tel.Propagator
	serverHandler := func() grpc.ServerOption {
		return grpc.StatsHandler(otelgrpc.NewServerHandler(otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(prop)))
	}
	_, addr := openStore(t, serverHandler())
	ranker, codec := newRanker(t, addr, tel, upstream.ClientTelemetry(tel))
	front := startFront(t, addr, Config{Ranker: ranker, Telemetry: tel}, upstream.ClientTelemetry(tel))
	caller := client(t, front, qdrant.Config{GrpcOptions: []grpc.DialOption{
		grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(prop))),
	}})
	loadRankedFixture(t, client(t, addr, qdrant.Config{}), codec)
	// The store's spans of the loading end after its answers: let them
	// arrive before the subtests reset the exporter.
	for range 200 {
		if n := len(exp.GetSpans()); n >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	for _, tc := range []struct {
		name   string
		call   func(ctx context.Context) error
		stages bool // the ranker answers: its stage spans are in the trace
	}{
		{"ranked query", func(ctx context.Context) error {
			_, err := caller.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(fixtureQuery), Limit: qdrant.PtrOf(uint64(3))})
			return err
		}, true},
		{"forwarded count", func(ctx context.Context) error {
			_, err := caller.Count(ctx, &qdrant.CountPoints{CollectionName: "mem"})
			return err
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp.Reset()
			ctx, root := tp.Tracer("agent").Start(testCtx(t), "agent turn")
			if err := tc.call(ctx); err != nil {
				t.Fatal(err)
			}
			root.End()
			traceID := root.SpanContext().TraceID()
			// Server spans end after their answer is sent: wait (bounded)
			// until every client span of the trace has its server span.
			var spans tracetest.SpanStubs
			for range 200 {
				if spans = exp.GetSpans(); complete(spans) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			byID := map[trace.SpanID]tracetest.SpanStub{}
			for _, s := range spans {
				if s.SpanContext.TraceID() != traceID {
					t.Errorf("span %q (%s) is in trace %s, not the caller's %s", s.Name, s.InstrumentationScope.Name, s.SpanContext.TraceID(), traceID)
				}
				byID[s.SpanContext.SpanID()] = s
			}
			// ancestors lists a span's chain up to the root, nearest first.
			ancestors := func(s tracetest.SpanStub) []tracetest.SpanStub {
				var out []tracetest.SpanStub
				for p, ok := byID[s.Parent.SpanID()]; ok; p, ok = byID[p.Parent.SpanID()] {
					out = append(out, p)
				}
				return out
			}
			var storeServer, frontServer []tracetest.SpanStub
			var stageSpans int
			for _, s := range spans {
				switch {
				case s.SpanKind == trace.SpanKindServer:
					// The front's server span's parent is the caller's
					// client span; the store's is memrank's client span.
					parent, ok := byID[s.Parent.SpanID()]
					if !ok || parent.SpanKind != trace.SpanKindClient {
						t.Fatalf("server span %q has no client parent in the trace", s.Name)
					}
					if up := ancestors(parent); len(up) > 0 && up[0].Name == "agent turn" {
						frontServer = append(frontServer, s)
					} else {
						storeServer = append(storeServer, s)
					}
				case strings.Contains(s.InstrumentationScope.Name, "rank"):
					stageSpans++
				}
			}
			if len(frontServer) != 1 {
				t.Fatalf("%d front server spans, want 1 (spans: %v)", len(frontServer), names(spans))
			}
			if len(storeServer) == 0 {
				t.Fatalf("no store server span under memrank's client span (spans: %v)", names(spans))
			}
			for _, s := range storeServer {
				chain := ancestors(s)
				found := false
				for _, a := range chain {
					found = found || a.SpanContext.SpanID() == frontServer[0].SpanContext.SpanID()
				}
				if !found {
					t.Errorf("the store's span %q does not descend from the front's server span", s.Name)
				}
			}
			if tc.stages && stageSpans == 0 {
				t.Errorf("no rank stage spans in the trace (spans: %v)", names(spans))
			}
		})
	}
}

// complete reports whether every client span has a server span under it.
func complete(spans tracetest.SpanStubs) bool {
	served := map[trace.SpanID]bool{}
	for _, s := range spans {
		if s.SpanKind == trace.SpanKindServer {
			served[s.Parent.SpanID()] = true
		}
	}
	clients := 0
	for _, s := range spans {
		if s.SpanKind == trace.SpanKindClient {
			clients++
			if !served[s.SpanContext.SpanID()] {
				return false
			}
		}
	}
	return clients > 0
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name+" ("+s.InstrumentationScope.Name+")")
	}
	return out
}
