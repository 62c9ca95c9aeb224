// Package admission bounds the work memrank takes on at once, so that
// overload is answered instead of absorbed: a limit on requests in flight,
// on the bytes of request bodies held in memory, on how long a body may
// take to arrive, on connections per listener and on gRPC streams per
// connection. What does not fit is refused at once (HTTP 503, gRPC
// ResourceExhausted, both with Retry-After), never queued without bound:
// a refused request costs microseconds, a queued one memory and latency
// for everyone behind it.
package admission

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"golang.org/x/net/netutil"
	"golang.org/x/sync/semaphore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/config/check"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/telemetry/settings"
)

// Config is the limits section of memrank's configuration.
type Config struct {
	// MaxInFlight is the requests served at once per front (HTTP, gRPC);
	// one more is refused. Health, readiness and metrics are not counted.
	MaxInFlight int `koanf:"max_in_flight"`
	// MaxBodyBytes bounds one request body; MaxBodyBytesInFlight all the
	// bodies being read or held at once.
	MaxBodyBytes         int `koanf:"max_body_bytes"`
	MaxBodyBytesInFlight int `koanf:"max_body_bytes_in_flight"`
	// BodyTimeout is how long a request body may take to arrive once its
	// headers have (a slow client holds memory and a connection).
	BodyTimeout time.Duration `koanf:"body_timeout"`
	// MaxConnections bounds open connections per listener; past it new
	// ones wait in the kernel's backlog.
	MaxConnections int `koanf:"max_connections"`
	// MaxStreams bounds concurrent gRPC streams per connection.
	MaxStreams int `koanf:"max_streams"`
	// RetryAfter is what a refused caller is told to wait.
	RetryAfter time.Duration `koanf:"retry_after"`
}

// DefaultConfig returns the limits' defaults.
func DefaultConfig() Config {
	return Config{
		MaxInFlight:          32,
		MaxBodyBytes:         32 << 20,
		MaxBodyBytesInFlight: 256 << 20,
		BodyTimeout:          10 * time.Second,
		MaxConnections:       4096,
		MaxStreams:           100,
		RetryAfter:           time.Second,
	}
}

// Validate checks the section's values.
func (c Config) Validate() error {
	var k check.Checker
	k.AtLeast("max_in_flight", c.MaxInFlight, 1)
	k.AtLeast("max_body_bytes", c.MaxBodyBytes, 1)
	k.AtLeast("max_connections", c.MaxConnections, 1)
	k.AtLeast("max_streams", c.MaxStreams, 1)
	k.Timeout("body_timeout", c.BodyTimeout)
	k.Timeout("retry_after", c.RetryAfter)
	if c.MaxBodyBytesInFlight < c.MaxBodyBytes {
		k.Add("max_body_bytes_in_flight", "%d is less than %s (%d): no body of the largest size could be read",
			c.MaxBodyBytesInFlight, check.Ref("max_body_bytes"), c.MaxBodyBytes)
	}
	return k.Err()
}

// Limiter applies a Config to one front. Its methods are safe for
// concurrent use.
type Limiter struct {
	cfg   Config
	front string
	slots chan struct{}
	bytes *semaphore.Weighted
	shed  metric.Int64Counter
	retry string // Retry-After, in whole seconds (at least 1)
}

// New returns the limiter of one front ("http" or "grpc", the value of the
// front attribute on the memrank.admission.shed counter).
func New(cfg Config, front string, tel settings.Settings) (*Limiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("admission: %w", err)
	}
	tel = tel.WithDefaults()
	shed, err := tel.MeterProvider.Meter("github.com/memrank/memrank/admission").Int64Counter("memrank.admission.shed",
		metric.WithDescription("Requests refused because the front was at a limit"), metric.WithUnit("{request}"))
	if err != nil {
		return nil, fmt.Errorf("admission: metrics: %w", err)
	}
	secs := max(1, int((cfg.RetryAfter+time.Second-1)/time.Second))
	return &Limiter{
		cfg:   cfg,
		front: front,
		slots: make(chan struct{}, cfg.MaxInFlight),
		bytes: semaphore.NewWeighted(int64(cfg.MaxBodyBytesInFlight)),
		shed:  shed,
		retry: strconv.Itoa(secs),
	}, nil
}

// admit takes a slot if one is free.
func (l *Limiter) admit() (release func(), ok bool) {
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, true
	default:
		return nil, false
	}
}

func (l *Limiter) count(ctx context.Context, reason string) {
	l.shed.Add(ctx, 1, metric.WithAttributes(attribute.String("front", l.front), attribute.String("reason", reason)))
}

// Listener bounds lis to MaxConnections open connections.
func (l *Limiter) Listener(lis net.Listener) net.Listener {
	return netutil.LimitListener(lis, l.cfg.MaxConnections)
}

// ServerOptions are the gRPC server's limits: streams per connection, flow
// control windows (Envoy's edge defaults: 64 KiB per stream, 1 MiB per
// connection), and the in-flight limit as stream and unary interceptors
// (the stream one also covers UnknownServiceHandler, which unary
// interceptors do not).
func (l *Limiter) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxConcurrentStreams(uint32(l.cfg.MaxStreams)),
		grpc.InitialWindowSize(64 << 10),
		grpc.InitialConnWindowSize(1 << 20),
		grpc.ChainStreamInterceptor(l.streamInterceptor),
		grpc.ChainUnaryInterceptor(l.unaryInterceptor),
	}
}

// refuseCall is a refused gRPC call's status, with the retry-after
// trailer go-client reads on a ResourceExhausted.
func (l *Limiter) refuseCall(ctx context.Context) error {
	l.count(ctx, "in_flight")
	_ = grpc.SetTrailer(ctx, metadata.Pairs("retry-after", l.retry))
	return status.Error(codes.ResourceExhausted, atCapacity+"; retry after "+l.retry+"s")
}

// unaryInterceptor covers servers with registered services (the embedded
// store); memrank's front serves everything as streams.
func (l *Limiter) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if exemptMethod(info.FullMethod) {
		return handler(ctx, req)
	}
	release, ok := l.admit()
	if !ok {
		return nil, l.refuseCall(ctx)
	}
	defer release()
	return handler(ctx, req)
}

// errAtCapacity is the text a refused caller reads.
const atCapacity = "memrank is at capacity"

func (l *Limiter) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if exemptMethod(info.FullMethod) {
		return handler(srv, ss)
	}
	release, ok := l.admit()
	if !ok {
		l.count(ss.Context(), "in_flight")
		ss.SetTrailer(metadata.Pairs("retry-after", l.retry))
		return status.Error(codes.ResourceExhausted, atCapacity+"; retry after "+l.retry+"s")
	}
	defer release()
	return handler(srv, ss)
}

// exemptMethod: grpc.health.v1 (answered locally, from a flag) and
// reflection are answered whatever the load, so that probes tell an
// overloaded replica from a dead one. Qdrant's own HealthCheck is not
// exempt: memrank forwards it to the upstream.
func exemptMethod(m string) bool {
	return strings.HasPrefix(m, "/grpc.health.v1.") || strings.HasPrefix(m, "/grpc.reflection.")
}

// exemptPath: probes and metrics are answered whatever the load.
func exemptPath(p string) bool {
	switch p {
	case "/healthz", "/readyz", "/livez", "/metrics":
		return true
	}
	return false
}

// Handler wraps an HTTP handler with the limits. A body (up to
// MaxBodyBytes) is read before the request takes a slot, within
// BodyTimeout and the in-flight byte budget, so that slow or large bodies
// hold neither a slot nor unbounded memory; the handler reads it from
// memory. A body announced larger than MaxBodyBytes is refused at once
// (413), and a snapshot upload is streamed.
func (l *Limiter) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if exemptPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		if release, ok := l.readBody(w, r); !ok {
			return
		} else if release != nil {
			defer release()
		}
		release, ok := l.admit()
		if !ok {
			l.count(r.Context(), "in_flight")
			l.refuse(w, http.StatusServiceUnavailable, "Service unavailable: "+atCapacity+"; retry after "+l.retry+"s")
			return
		}
		defer release()
		next.ServeHTTP(w, r)
	})
}

// readBody reads r's body into memory when it should (see Handler),
// answering the request itself when it cannot; release returns the bytes
// to the budget.
func (l *Limiter) readBody(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 || snapshotUpload(r.URL.Path) {
		return nil, true
	}
	if r.ContentLength > int64(l.cfg.MaxBodyBytes) {
		l.count(r.Context(), "body_too_large")
		w.Header().Set("Connection", "close")
		l.refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("JSON payload (%d bytes) is larger than allowed (limit: %d bytes).", r.ContentLength, l.cfg.MaxBodyBytes))
		return nil, false
	}
	// The budget is taken as bytes arrive, not as announced: a client that
	// announces a large body and sends little holds little.
	br := &budgetReader{r: r.Body, sem: l.bytes}
	release = func() { l.bytes.Release(br.held) }
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(l.cfg.BodyTimeout)) // unsupported writers (tests) just have no deadline
	b, err := io.ReadAll(io.LimitReader(br, int64(l.cfg.MaxBodyBytes)+1))
	if err == nil {
		_ = rc.SetReadDeadline(time.Time{})
	}
	if errors.Is(err, errBudget) {
		release()
		l.count(r.Context(), "body_bytes")
		w.Header().Set("Connection", "close")
		l.refuse(w, http.StatusServiceUnavailable, "Service unavailable: "+atCapacity+" (request bodies in flight); retry after "+l.retry+"s")
		return nil, false
	}
	if err != nil { // the deadline stays: the connection is not read again
		release()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			l.count(r.Context(), "body_timeout")
			w.Header().Set("Connection", "close")
			l.refuse(w, http.StatusRequestTimeout, "Timeout error: the request body did not arrive within "+l.cfg.BodyTimeout.String())
			return nil, false
		}
		// The client went away or broke the connection: nobody reads an
		// answer.
		w.Header().Set("Connection", "close")
		l.refuse(w, http.StatusBadRequest, "Error that occur during reading payload: the body could not be read")
		return nil, false
	}
	if len(b) > l.cfg.MaxBodyBytes {
		release()
		l.refuse(w, http.StatusBadRequest, fmt.Sprintf("JSON payload has exceeded limit (%d bytes).", l.cfg.MaxBodyBytes))
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	return release, true
}

// errBudget is a body read past the bytes-in-flight budget.
var errBudget = errors.New("admission: request bodies in flight at the budget")

// budgetReader takes each chunk's bytes from the budget as it is read;
// held is what it took.
type budgetReader struct {
	r    io.Reader
	sem  *semaphore.Weighted
	held int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		if !b.sem.TryAcquire(int64(n)) {
			return 0, errBudget
		}
		b.held += int64(n)
	}
	return n, err
}

// snapshotUpload says whether path is one of Qdrant's snapshot uploads
// (/collections/{c}/snapshots/upload, /collections/{c}/shards/{s}/snapshots/upload),
// whose bodies are streamed, not read into memory.
func snapshotUpload(path string) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) == 4:
		return segs[0] == "collections" && segs[2] == "snapshots" && segs[3] == "upload"
	case len(segs) == 6:
		return segs[0] == "collections" && segs[2] == "shards" && segs[4] == "snapshots" && segs[5] == "upload"
	}
	return false
}

// refuse answers in Qdrant's error envelope, with Retry-After on a 503.
func (l *Limiter) refuse(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if code == http.StatusServiceUnavailable {
		h.Set("Retry-After", l.retry)
	}
	w.WriteHeader(code)
	_, _ = w.Write(append(qdrantjson.AppendString([]byte(`{"status":{"error":`), msg), `},"time":0}`...))
}
