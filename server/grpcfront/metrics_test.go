package grpcfront

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc/codes"
)

// TestMetricsAttributes: each call is counted under its method (short, or
// "other" for a name Qdrant does not have), route and status, whether its
// attribute set was built for it or an earlier call.
func TestMetricsAttributes(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := newMetrics(mp)
	if err != nil {
		t.Fatal(err)
	}
	type series struct {
		method, route, code string
		count               uint64
	}
	calls := []struct {
		name, method, route string
		code                codes.Code
	}{
		{"query", "/qdrant.Points/Query", routeReranked, codes.OK},
		{"the same query again", "/qdrant.Points/Query", routeReranked, codes.OK},
		{"another status", "/qdrant.Points/Query", routeReranked, codes.DeadlineExceeded},
		{"forwarded", "/qdrant.Collections/List", routeForwarded, codes.OK},
		{"made-up method", "/qdrant.Points/Nope", routeForwarded, codes.Unimplemented},
	}
	for _, c := range calls {
		m.observe(context.Background(), c.method, c.route, c.code, time.Millisecond)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[series]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, md := range sm.Metrics {
			h, ok := md.Data.(metricdata.Histogram[float64])
			if md.Name != "memrank.grpc.front.duration" || !ok {
				continue
			}
			for _, dp := range h.DataPoints {
				v := func(k string) string { s, _ := dp.Attributes.Value(attribute.Key(k)); return s.AsString() }
				got[series{v("rpc.method"), v("memrank.route"), v("rpc.grpc.status_code"), dp.Count}] = true
			}
		}
	}
	want := map[series]bool{
		{"Points/Query", routeReranked, "OK", 2}:               true,
		{"Points/Query", routeReranked, "DeadlineExceeded", 1}: true,
		{"Collections/List", routeForwarded, "OK", 1}:          true,
		{"other", routeForwarded, "Unimplemented", 1}:          true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}
