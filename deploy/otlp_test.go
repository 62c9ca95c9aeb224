package deploy

import (
	"context"
	"net"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// otlpSink is an OTLP gRPC trace receiver on loopback, standing for the
// OpenTelemetry Collector: it records the service names of the spans it
// receives.
type otlpSink struct {
	collectortrace.UnimplementedTraceServiceServer
	addr string

	mu       sync.Mutex
	services map[string]int // service.name -> spans
}

func newOTLPSink(t testing.TB) *otlpSink {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &otlpSink{addr: l.Addr().String(), services: map[string]int{}}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, s)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return s
}

func (s *otlpSink) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		name := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				name = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			s.services[name] += len(ss.GetSpans())
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// spans returns how many spans of service arrived.
func (s *otlpSink) spans(service string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.services[service]
}
