package grpcfront

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	"github.com/memrank/memrank/telemetry/settings"
)

// UpstreamKeepalive pings an idle upstream every 10 s (go-client's and
// Qdrant's expectations) and gives up on it after 2 s without an answer.
// A function, not a variable, so no caller can change every dial's
// parameters.
func UpstreamKeepalive() keepalive.ClientParameters {
	return keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 2 * time.Second, PermitWithoutStream: true}
}

// UpstreamDefaults are DialUpstream's options before the caller's: plain
// text (add TLS credentials to override), the raw codec on every call,
// DefaultMaxMessageSize both ways, and UpstreamKeepalive.
func UpstreamDefaults() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(
			grpc.ForceCodecV2(rawCodec{}),
			grpc.MaxCallRecvMsgSize(DefaultMaxMessageSize),
			grpc.MaxCallSendMsgSize(DefaultMaxMessageSize),
		),
		grpc.WithKeepaliveParams(UpstreamKeepalive()),
	}
}

// DialUpstream connects to the upstream (Qdrant's gRPC port, or memrank
// qdrant-compat) at target ("host:port" or any grpc-go target) with
// UpstreamDefaults, then opts (which win). The connection is lazy, as
// grpc.NewClient's are (it connects on the first call): ctx is only
// checked. It never adds credentials: the caller's api-key travels with
// each call.
func DialUpstream(ctx context.Context, target string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	if target == "" {
		return nil, errors.New("grpcfront: upstream target is empty")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return grpc.NewClient(target, append(UpstreamDefaults(), opts...)...)
}

// Dialer is a raw connection factory; store.InProcess is one.
type Dialer interface {
	Dial(ctx context.Context) (net.Conn, error)
}

// InProcessTarget is the target of an in-process upstream: passthrough
// skips the DNS resolver, which would fail on a name that is no host.
const InProcessTarget = "passthrough:///embedded"

// DialInProcess connects to an in-process upstream, such as the embedded
// store served by store.NewInProcess(db), through its Dial.
func DialInProcess(ctx context.Context, d Dialer, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	if d == nil {
		return nil, errors.New("grpcfront: in-process dialer is nil")
	}
	dial := grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return d.Dial(ctx) })
	return DialUpstream(ctx, InProcessTarget, append([]grpc.DialOption{dial}, opts...)...)
}

// ClientTelemetry is the dial option that traces and measures upstream
// calls (otelgrpc's client handler) with tel's providers and propagator
// (nil members: noop providers, W3C trace context and baggage), so the
// upstream's spans join the caller's trace.
func ClientTelemetry(tel settings.Settings) grpc.DialOption {
	tel = tel.WithDefaults()
	return grpc.WithStatsHandler(otelgrpc.NewClientHandler(
		otelgrpc.WithTracerProvider(tel.TracerProvider),
		otelgrpc.WithMeterProvider(tel.MeterProvider),
		otelgrpc.WithPropagators(tel.Propagator),
	))
}

// SourceConfig is the go-client configuration of the ranker's source on the
// same upstream as DialUpstream(target): host and port from target, no API
// key (the caller's travels in each call's context), no version check (the
// front forwards the caller's own), one connection, DefaultMaxMessageSize,
// then opts (add ClientTelemetry, TLS credentials...). Build the client with
// qdrant.NewClient.
func SourceConfig(target string, opts ...grpc.DialOption) (*qdrant.Config, error) {
	host, portText, err := net.SplitHostPort(target)
	if err != nil {
		return nil, fmt.Errorf("grpcfront: upstream %q: %w", target, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return nil, fmt.Errorf("grpcfront: upstream %q: bad port", target)
	}
	return &qdrant.Config{
		Host:                   host,
		Port:                   port,
		SkipCompatibilityCheck: true,
		PoolSize:               1,
		GrpcOptions:            append(sourceDefaults(), opts...),
	}, nil
}

// SourceConfigInProcess is SourceConfig for an in-process upstream.
func SourceConfigInProcess(d Dialer, opts ...grpc.DialOption) (*qdrant.Config, error) {
	if d == nil {
		return nil, errors.New("grpcfront: in-process dialer is nil")
	}
	dial := grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return d.Dial(ctx) })
	return &qdrant.Config{
		Host:                   InProcessTarget,
		SkipCompatibilityCheck: true,
		PoolSize:               1,
		GrpcOptions:            append(append(sourceDefaults(), dial), opts...),
	}, nil
}

func sourceDefaults() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(DefaultMaxMessageSize),
		grpc.MaxCallSendMsgSize(DefaultMaxMessageSize),
	)}
}
