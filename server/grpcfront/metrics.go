package grpcfront

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
)

// knownMethods are the methods of Qdrant's public services and of the
// health and reflection services: the values the method attribute takes.
var knownMethods = func() map[string]bool {
	known := map[string]bool{}
	for _, sd := range []grpc.ServiceDesc{qdrant.Points_ServiceDesc, qdrant.Collections_ServiceDesc, qdrant.Snapshots_ServiceDesc,
		qdrant.Qdrant_ServiceDesc, healthpb.Health_ServiceDesc, reflectionpb.ServerReflection_ServiceDesc} {
		for _, m := range sd.Methods {
			known["/"+sd.ServiceName+"/"+m.MethodName] = true
		}
		for _, s := range sd.Streams {
			known["/"+sd.ServiceName+"/"+s.StreamName] = true
		}
	}
	return known
}()

// metrics are the front's own per-method metrics; otelgrpc adds the
// standard rpc.server.* ones beside them.
type metrics struct {
	duration metric.Float64Histogram

	// attrs holds each attribute set once built: building one sorts and
	// allocates on every call otherwise. Bounded by construction: known
	// methods (and "other") x routes x status codes.
	mu    sync.RWMutex
	attrs map[attrKey]metric.MeasurementOption
}

type attrKey struct {
	method, route string
	code          codes.Code
}

func newMetrics(mp metric.MeterProvider) (*metrics, error) {
	m := mp.Meter("github.com/memrank/memrank/server/grpcfront")
	d, err := m.Float64Histogram("memrank.grpc.front.duration",
		metric.WithDescription("Time to answer a call through the gRPC front, by method, route (forwarded, reranked, passthrough, scoped, refused) and status code."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
	if err != nil {
		return nil, fmt.Errorf("grpcfront: metrics: %w", err)
	}
	return &metrics{duration: d, attrs: map[attrKey]metric.MeasurementOption{}}, nil
}

func (m *metrics) observe(ctx context.Context, method, route string, code codes.Code, d time.Duration) {
	name := "other" // a caller's made-up method names must not grow the metric without bound
	if knownMethods[method] {
		name = shortMethod(method)
	}
	m.duration.Record(ctx, d.Seconds(), m.attributes(attrKey{name, route, code}))
}

func (m *metrics) attributes(k attrKey) metric.MeasurementOption {
	m.mu.RLock()
	opt, ok := m.attrs[k]
	m.mu.RUnlock()
	if ok {
		return opt
	}
	opt = metric.WithAttributeSet(attribute.NewSet(
		attribute.String("rpc.method", k.method),
		attribute.String("memrank.route", k.route),
		attribute.String("rpc.grpc.status_code", k.code.String()),
	))
	m.mu.Lock()
	m.attrs[k] = opt
	m.mu.Unlock()
	return opt
}
