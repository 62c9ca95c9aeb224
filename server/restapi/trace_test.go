package restapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/memrank/memrank/telemetry/settings"
)

// spanPoints records the span context its Query call ran under.
type spanPoints struct {
	qdrant.PointsClient
	sc trace.SpanContext
}

func (s *spanPoints) Query(ctx context.Context, _ *qdrant.QueryPoints, _ ...grpc.CallOption) (*qdrant.QueryResponse, error) {
	s.sc = trace.SpanContextFromContext(ctx)
	return &qdrant.QueryResponse{Result: []*qdrant.ScoredPoint{{Id: qdrant.NewIDNum(1), Score: 0.5, Version: 3}}}, nil
}

// The REST front continues the caller's W3C trace: its server span is named
// after the route and carries the collection, the stub call runs under it
// (so otelgrpc on the connection carries the trace on), and a forwarded
// request takes the trace to the upstream REST API.
func TestTraceContinues(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	up := newUpstreamREST(t)
	sp := &spanPoints{}
	h, err := New(Config{Points: sp, Collections: qdrant.NewCollectionsClient(nil), Qdrant: fakeQdrant{},
		Telemetry: settings.Settings{TracerProvider: tp}, UpstreamREST: mustURL(t, up.srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	parent := "00-" + traceID + "-00f067aa0ba902b7-01"

	r := serveOnce(t, h, "POST", "/collections/c/points/query", `{"query":[1,0]}`, "traceparent", parent)
	if r.status != 200 {
		t.Fatalf("HTTP %d: %s", r.status, r.body)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want the server span", len(spans))
	}
	s := spans[0]
	if s.Name != "POST /collections/{collection_name}/points/query" || s.SpanKind != trace.SpanKindServer {
		t.Errorf("span %q kind %v", s.Name, s.SpanKind)
	}
	if s.SpanContext.TraceID().String() != traceID || s.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("span in trace %s under %s, want the caller's", s.SpanContext.TraceID(), s.Parent.SpanID())
	}
	if !hasAttr(s.Attributes, attribute.String("db.collection.name", "c")) {
		t.Errorf("attributes %v lack the collection", s.Attributes)
	}
	if sp.sc.SpanID() != s.SpanContext.SpanID() {
		t.Errorf("the stub call ran under span %s, not the server span %s", sp.sc.SpanID(), s.SpanContext.SpanID())
	}

	r = serveOnce(t, h, "GET", "/cluster", "", "traceparent", parent)
	if r.status != http.StatusAccepted {
		t.Fatalf("forwarded: HTTP %d: %s", r.status, r.body)
	}
	got := up.requests()
	if len(got) != 1 || !strings.Contains(got[0].header.Get("traceparent"), traceID) {
		t.Errorf("the upstream REST API got traceparent %q, want trace %s", got[0].header.Get("traceparent"), traceID)
	}
}

func hasAttr(attrs []attribute.KeyValue, want attribute.KeyValue) bool {
	for _, a := range attrs {
		if a == want {
			return true
		}
	}
	return false
}
