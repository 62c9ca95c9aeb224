// Package grpcfront is memrank's Qdrant gRPC front: a proxy that speaks
// Qdrant's gRPC protocol to the caller (an unmodified Qdrant client) and to
// the upstream (Qdrant, or memrank's embedded store).
//
// No Qdrant service is registered on the server. Every call is routed by
// grpc.UnknownServiceHandler, which grpc-go also calls for unknown methods
// of known services, with a raw codec: messages are frames of protobuf
// bytes, decoded only where the front must look inside them.
//
//   - /qdrant.Points/{Query,QueryBatch,QueryGroups,Search,SearchBatch,
//     SearchGroups} on a memory collection are decoded and answered by the
//     ranker (package rank); batches run their sub-requests through it a
//     few at a time. On other collections they are forwarded as they came.
//   - Every other method, streams included, is forwarded byte for byte:
//     the caller's metadata (api-key, authorization, and the rest), its
//     deadline and cancellation go upstream; the upstream's headers,
//     messages, trailers and status come back unchanged.
//   - With tenancy on (package tenancy), every point method is decoded and
//     scoped to the caller's tenant instead, administration methods are
//     kept to administrators and methods that cannot be scoped are refused.
//   - grpc.health.v1 is served by memrank itself (it is memrank's own
//     liveness); Qdrant's HealthCheck and server reflection are forwarded.
//
// The upstream's errors pass through with their status unchanged;
// memrank's own refusals map to gRPC codes through one table (errors.go).
package grpcfront

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // accept gzip-compressed calls, as Qdrant does
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/telemetry/settings"
	"github.com/memrank/memrank/tenancy"
	"github.com/memrank/memrank/upstream"
)

// Defaults.
const (
	DefaultMaxMessageSize   = upstream.MaxMessageSize
	DefaultBatchConcurrency = 4
	DefaultCallTimeout      = 10 * time.Second
	DefaultLongCallTimeout  = 10 * time.Minute
	// DefaultFirstMessageTimeout is Config.FirstMessageTimeout's default.
	DefaultFirstMessageTimeout = 10 * time.Second
)

// Ranker is what the front needs of the read pipeline; *rank.Ranker is one.
type Ranker interface {
	Query(ctx context.Context, req *qdrant.QueryPoints) (*rank.Result, error)
	Search(ctx context.Context, req *qdrant.SearchPoints) (*rank.Result, error)
	QueryGroups(ctx context.Context, req *qdrant.QueryPointGroups) (*rank.GroupsResult, error)
	Reranks(ctx context.Context, collection string) bool
}

var _ Ranker = (*rank.Ranker)(nil)

// Config configures the front.
type Config struct {
	// Upstream is the connection to Qdrant or the embedded store
	// (upstream.Dial, upstream.DialInProcess). Required. The front forces its raw
	// codec per call, so any connection works.
	Upstream *grpc.ClientConn
	// Ranker answers the intercepted methods on memory collections. Nil:
	// nothing is re-ranked (a plain proxy, with tenancy if configured).
	Ranker *rank.Ranker
	// Tenancy scopes requests to tenants; nil or disabled: off.
	Tenancy *tenancy.Policy
	// MaxMessageSize bounds messages both ways (default 32 MiB, Qdrant's
	// usual request limit).
	MaxMessageSize int
	// BatchConcurrency is how many sub-requests of one batch are ranked at
	// once (default 4).
	BatchConcurrency int
	// Health is the grpc.health.v1 server registered on the front; nil: a
	// new one, SERVING. Pass one to report NOT_SERVING while draining.
	Health *health.Server
	// FirstMessageTimeout bounds the wait for a call's request message
	// (default 10s), whatever the caller's deadline: a client that opens a
	// stream and sends nothing must not hold a slot of the admission limit.
	FirstMessageTimeout time.Duration
	// CallTimeout is the deadline of a Qdrant call that comes without one
	// (default 10s); LongCallTimeout that of a write, an index, collection
	// or snapshot operation (default 10m). A caller's own deadline, longer
	// or shorter, is kept.
	CallTimeout, LongCallTimeout time.Duration
	// ServerOptions are appended to the front's (credentials, extra
	// interceptors...).
	ServerOptions []grpc.ServerOption
	// CollectionsChanged, when set, is called for every call that may
	// create, delete or change a collection or move an alias and is sent
	// upstream, before its answer reaches the caller (and once more when
	// the call ends, for one that fails without an answer): the ranker's
	// candidate cache must not serve one collection's points for another's
	// once the caller can know of the change.
	CollectionsChanged func()
	// CollectionsUnsettled, when set with CollectionsChanged, is called
	// instead of it when such a call ends with a status that does not say
	// the change was refused (a deadline, a lost or failing upstream: see
	// settled), before that status reaches the caller: the upstream may
	// still apply the change after the caller was answered.
	CollectionsUnsettled func()

	// Telemetry is where the front's logs, spans and metrics go; its
	// Propagator reads the caller's trace context. Nil members record
	// nothing (the propagator: W3C trace context and baggage).
	Telemetry settings.Settings

	// ranker, when set, replaces Ranker (tests).
	ranker Ranker
}

// Validate reports a configuration New cannot work with.
func (c Config) Validate() error {
	var errs []error
	if c.Upstream == nil {
		errs = append(errs, errors.New("grpcfront: Upstream is required"))
	}
	if c.MaxMessageSize < 0 {
		errs = append(errs, fmt.Errorf("grpcfront: MaxMessageSize %d is negative", c.MaxMessageSize))
	}
	if c.BatchConcurrency < 0 {
		errs = append(errs, fmt.Errorf("grpcfront: BatchConcurrency %d is negative", c.BatchConcurrency))
	}
	if c.CallTimeout < 0 || c.LongCallTimeout < 0 {
		errs = append(errs, errors.New("grpcfront: CallTimeout and LongCallTimeout must not be negative"))
	}
	if err := c.Tenancy.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.MaxMessageSize == 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.BatchConcurrency == 0 {
		c.BatchConcurrency = DefaultBatchConcurrency
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.LongCallTimeout == 0 {
		c.LongCallTimeout = DefaultLongCallTimeout
	}
	if c.FirstMessageTimeout == 0 {
		c.FirstMessageTimeout = DefaultFirstMessageTimeout
	}
	c.Telemetry = c.Telemetry.WithDefaults()
	if c.ranker == nil && c.Ranker != nil {
		c.ranker = c.Ranker
	}
	return c
}

type front struct {
	budget   [2]time.Duration // calls without a deadline: short, long
	firstMsg time.Duration
	up       *grpc.ClientConn
	ranker   Ranker
	tenancy  *tenancy.Policy
	maxMsg   int
	batch    int
	log      *slog.Logger
	metrics  *metrics
	callOpts []grpc.CallOption
	changed  func() // nil: nobody to tell
	// unsettled replaces changed at the end of a call whose outcome is
	// unknown; nil: changed.
	unsettled func()
}

// New returns the front's gRPC server: every call is routed by the front
// (see the package comment), grpc.health.v1 is registered. The caller
// serves it (upstream.GracefulStop stops it with a deadline) and owns
// Upstream.
func New(cfg Config) (*grpc.Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	m, err := newMetrics(cfg.Telemetry.MeterProvider)
	if err != nil {
		return nil, err
	}
	f := &front{
		budget:    [2]time.Duration{cfg.CallTimeout, cfg.LongCallTimeout},
		firstMsg:  cfg.FirstMessageTimeout,
		up:        cfg.Upstream,
		ranker:    cfg.ranker,
		tenancy:   cfg.Tenancy,
		maxMsg:    cfg.MaxMessageSize,
		batch:     cfg.BatchConcurrency,
		log:       cfg.Telemetry.Logger,
		metrics:   m,
		changed:   cfg.CollectionsChanged,
		unsettled: cfg.CollectionsUnsettled,
		callOpts: []grpc.CallOption{
			grpc.ForceCodecV2(rawCodec{}),
			grpc.MaxCallRecvMsgSize(cfg.MaxMessageSize),
			grpc.MaxCallSendMsgSize(cfg.MaxMessageSize),
		},
	}
	if !f.tenancy.Enabled() {
		f.tenancy = nil
	}
	opts := []grpc.ServerOption{
		grpc.ForceServerCodecV2(rawCodec{}),
		grpc.UnknownServiceHandler(f.handle),
		grpc.MaxRecvMsgSize(cfg.MaxMessageSize),
		grpc.MaxSendMsgSize(cfg.MaxMessageSize),
		grpc.KeepaliveEnforcementPolicy(upstream.ServerKeepalive()),
		grpc.StatsHandler(otelgrpc.NewServerHandler(
			otelgrpc.WithTracerProvider(cfg.Telemetry.TracerProvider),
			otelgrpc.WithMeterProvider(cfg.Telemetry.MeterProvider),
			otelgrpc.WithPropagators(cfg.Telemetry.Propagator),
		)),
	}
	// grpc.NumStreamWorkers is left off: 2 and 8 workers (2 cores) were
	// measured within the noise of a goroutine per stream (a forwarded
	// HealthCheck: 172-242 us of CPU per call against 182-213, interleaved
	// runs), not worth goroutines that outlive every call. Write buffers are
	// shared and receive buffers pooled by grpc's defaults; flow control
	// windows come with the admission limits' ServerOptions.
	srv := grpc.NewServer(append(opts, cfg.ServerOptions...)...)
	hs := cfg.Health
	if hs == nil {
		hs = health.NewServer()
	}
	healthpb.RegisterHealthServer(srv, hs)
	return srv, nil
}

// Routes, as reported in metrics.
const (
	routeForwarded   = "forwarded"   // byte for byte
	routeReranked    = "reranked"    // answered by the ranker, re-ranked
	routePassThrough = "passthrough" // answered by the ranker, not re-ranked
	routeScoped      = "scoped"      // decoded, scoped to a tenant, forwarded
	routeRefused     = "refused"     // refused by memrank
)

// call is one call through the front.
type call struct {
	f      *front
	ss     grpc.ServerStream
	method string
	md     metadata.MD     // the caller's metadata
	ctx    context.Context // the server stream's, with md as outgoing metadata
	route  string
	tenant string
	scoped bool // tenancy on: requests are re-encoded, never forwarded raw
	// reached says the call was sent upstream (or its sending began).
	reached bool
}

func (f *front) handle(_ any, ss grpc.ServerStream) error {
	start := time.Now()
	method, ok := grpc.MethodFromServerStream(ss)
	if !ok {
		return status.Error(codes.Internal, internalText)
	}
	if d, ok := f.deadline(ss.Context(), method); ok {
		ctx, cancel := context.WithTimeout(ss.Context(), d)
		defer cancel()
		ss = &budgetStream{ServerStream: ss, ctx: ctx}
	}
	if strings.HasPrefix(method, "/qdrant.") {
		ss = &firstMessageStream{ServerStream: ss, timeout: f.firstMsg}
	}
	md, _ := metadata.FromIncomingContext(ss.Context())
	c := &call{f: f, ss: ss, method: method, md: md, route: routeForwarded}
	c.ctx = metadata.NewOutgoingContext(ss.Context(), upstreamMD(md))
	err := c.serve()
	f.metrics.observe(ss.Context(), method, c.route, status.Code(err), time.Since(start))
	return err
}

// deadline is the budget of a Qdrant call that came without a deadline:
// none for the health and reflection streams, which live as long as their
// caller wants.
func (f *front) deadline(ctx context.Context, method string) (time.Duration, bool) {
	if _, ok := ctx.Deadline(); ok || !strings.HasPrefix(method, "/qdrant.") {
		return 0, false
	}
	if upstream.Writes(method) || strings.HasPrefix(method, "/qdrant.Snapshots/") {
		return f.budget[1], true
	}
	return f.budget[0], true
}

// firstMessageStream bounds the wait for the first message: grpc-go's
// RecvMsg waits on the transport's own context, not on the handler's, so
// the wait runs in a goroutine that ends when the stream does (grpc
// cancels it as the handler returns).
type firstMessageStream struct {
	grpc.ServerStream
	timeout time.Duration
	got     bool
}

func (s *firstMessageStream) RecvMsg(m any) error {
	if s.got {
		return s.ServerStream.RecvMsg(m)
	}
	s.got = true
	errc := make(chan error, 1)
	go func() { errc <- s.ServerStream.RecvMsg(m) }()
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	select {
	case err := <-errc:
		return err
	case <-t.C:
		return status.Errorf(codes.DeadlineExceeded, "Timeout error: the request message did not arrive within %v", s.timeout)
	case <-s.Context().Done():
		return status.FromContextError(s.Context().Err()).Err()
	}
}

// budgetStream is a server stream with the front's deadline.
type budgetStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *budgetStream) Context() context.Context { return s.ctx }

// upstreamMD is the caller's metadata to send upstream: all of it, minus
// what belongs to this hop (pseudo-headers and grpc-* transport headers,
// which grpc-go would drop or replace anyway).
func upstreamMD(md metadata.MD) metadata.MD {
	out := make(metadata.MD, len(md))
	for k, v := range md {
		if strings.HasPrefix(k, ":") || strings.HasPrefix(k, "grpc-") {
			continue
		}
		switch k {
		case "content-type", "user-agent", "te", "connection":
			continue
		}
		out[k] = append([]string(nil), v...)
	}
	return out
}

func (c *call) serve() (err error) {
	if c.f.changed != nil && collectionChanges[c.method] {
		defer func() { c.f.changeEnded(c.reached, err) }()
		c.ss = &changeStream{ServerStream: c.ss, changed: c.f.changed}
	}
	if upstream.Writes(c.method) {
		if err := c.guardCompanions(); err != nil {
			switch {
			case errors.Is(err, errCompanion):
				return c.refuse(err)
			case errors.Is(err, errNoRequest):
				return c.fail(err)
			}
			return err // the stream's own status (cancelled, too large...)
		}
	}
	if c.f.tenancy != nil {
		return c.serveTenant()
	}
	if h := intercepted[c.method]; h != nil && c.f.ranker != nil {
		return c.unary(h)
	}
	return c.forwardStream()
}

// refuse answers one of memrank's own refusals.
func (c *call) refuse(err error) error {
	c.route = routeRefused
	return c.fail(err)
}

// fail turns err into the caller's status (toStatus), logging what was not
// expected.
func (c *call) fail(err error) error {
	st, trailer, known := toStatus(err)
	if c.budgetSpent() && status.Code(st) == codes.DeadlineExceeded {
		// Which came first, the front's own timer or the upstream's
		// RST_STREAM on the deadline it was sent, is a race: the caller
		// gets the one timeout text either way.
		st = status.Error(codes.DeadlineExceeded, timeoutText)
	}
	if len(trailer) > 0 {
		c.ss.SetTrailer(trailer)
	}
	switch {
	case !known:
		c.f.log.ErrorContext(c.ss.Context(), "grpc front: call failed", "method", c.method, "err", err)
	case status.Code(st) == codes.Unavailable:
		c.f.log.WarnContext(c.ss.Context(), "grpc front: upstream unavailable", "method", c.method, "err", err)
	case c.route == routeRefused:
		c.f.log.DebugContext(c.ss.Context(), "grpc front: refused", "method", c.method, "err", err)
	}
	return st
}

// unary serves a unary call whose request the front must read: h gets the
// request bytes and returns the response bytes.
func (c *call) unary(h func(c *call, in []byte) ([]byte, error)) error {
	var in frame
	if err := c.ss.RecvMsg(&in); err != nil {
		if errors.Is(err, io.EOF) {
			return c.fail(errNoRequest)
		}
		return err // the stream's own status (cancelled, too large...)
	}
	out, err := h(c, in.b)
	if err != nil {
		return c.fail(err)
	}
	return c.ss.SendMsg(&frame{b: out})
}

// forwardUnary sends one request to the upstream and returns its response,
// passing its headers and trailers to the caller.
func (c *call) forwardUnary(method string, req []byte) ([]byte, error) {
	var out frame
	var hdr, trl metadata.MD
	opts := append(c.f.callOpts[:len(c.f.callOpts):len(c.f.callOpts)], grpc.Header(&hdr), grpc.Trailer(&trl))
	c.reached = true
	err := c.f.up.Invoke(c.ctx, method, &frame{b: req}, &out, opts...)
	if len(hdr) > 0 {
		_ = c.ss.SetHeader(hdr)
	}
	if len(trl) > 0 {
		c.ss.SetTrailer(trl)
	}
	return out.b, err
}

// forwardStream forwards a call of any kind (unary, client, server or bidi
// streaming) to the upstream and pumps messages both ways. The pump from
// the caller runs in a goroutine that ends when the caller half-closes,
// the upstream stops taking messages, or the call ends (grpc cancels the
// stream's context when the handler returns).
func (c *call) forwardStream() error {
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	c.reached = true
	cs, err := c.f.up.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, c.method, c.f.callOpts...)
	if err != nil {
		return c.fail(err)
	}
	fromCaller := make(chan error, 1)
	go func() { fromCaller <- pumpToUpstream(c.ss, cs) }()

	toCaller := make(chan error, 1)
	go func() { toCaller <- pumpToCaller(cs, c.ss) }()

	for {
		select {
		case err := <-fromCaller:
			if err != nil {
				// The caller's side broke (cancelled, or sent too much):
				// stop the upstream call and wait for its pump.
				cancel()
				<-toCaller
				if c.budgetSpent() {
					return status.Error(codes.DeadlineExceeded, timeoutText)
				}
				return err
			}
			fromCaller = nil // half-closed: wait for the upstream to finish
		case err := <-toCaller:
			c.ss.SetTrailer(cs.Trailer())
			if errors.Is(err, io.EOF) {
				return nil
			}
			if c.budgetSpent() {
				return status.Error(codes.DeadlineExceeded, timeoutText)
			}
			return upstreamErr(err)
		}
	}
}

// budgetSpent says whether the call's deadline ran out: however the
// upstream stream then ended (a RST_STREAM, a deadline text), the caller
// gets the one timeout text.
func (c *call) budgetSpent() bool {
	if errors.Is(c.ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	// The context's timer may not have fired yet when grpc-go already
	// mapped the upstream's RST_STREAM to DeadlineExceeded by the clock.
	d, ok := c.ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// upstreamErr returns an upstream stream's error as the caller's status:
// the status unchanged when it has one.
func upstreamErr(err error) error {
	var gs grpcStatus
	if errors.As(err, &gs) && gs.GRPCStatus() != nil {
		return withheld(gs.GRPCStatus()).Err()
	}
	return status.Error(codes.Unavailable, unreachableText)
}

// pumpToUpstream copies the caller's messages upstream until the caller
// half-closes (nil, after CloseSend) or something fails.
func pumpToUpstream(ss grpc.ServerStream, cs grpc.ClientStream) error {
	for {
		var f frame
		if err := ss.RecvMsg(&f); err != nil {
			if errors.Is(err, io.EOF) {
				return cs.CloseSend()
			}
			return err
		}
		if err := cs.SendMsg(&f); err != nil {
			if errors.Is(err, io.EOF) {
				// The upstream ended the call: its status comes through
				// the other pump's RecvMsg.
				return nil
			}
			return err
		}
	}
}

// pumpToCaller sends the upstream's headers, then its messages, to the
// caller; io.EOF is a clean end.
func pumpToCaller(cs grpc.ClientStream, ss grpc.ServerStream) error {
	hdr, err := cs.Header()
	if err == nil && len(hdr) > 0 {
		if err := ss.SendHeader(hdr); err != nil {
			return err
		}
	}
	for {
		var f frame
		if err := cs.RecvMsg(&f); err != nil {
			return err
		}
		if err := ss.SendMsg(&f); err != nil {
			return err
		}
	}
}

// collectionChanges are the methods after which a collection name may
// stand for other points: a collection created, deleted or changed (its
// vectors' configuration), an alias created, deleted or moved.
var collectionChanges = map[string]bool{
	"/qdrant.Collections/Create":        true,
	"/qdrant.Collections/Delete":        true,
	"/qdrant.Collections/Update":        true,
	"/qdrant.Collections/UpdateAliases": true,
}

// changeEnded tells of the end of a call that may have changed
// collections, with the status its caller is about to get. A call refused
// or failed before it was sent upstream (no request message, no
// credentials) changed nothing and tells nothing: otherwise anyone could
// empty the cache, or turn it off, at will.
func (f *front) changeEnded(reached bool, err error) {
	switch {
	case !reached:
	case f.unsettled != nil && !settled(err):
		f.unsettled()
	default:
		f.changed()
	}
}

// changeStream calls changed before each answer it sends, so that a
// caller who reads the answer and then queries finds no entry stored
// before the change.
type changeStream struct {
	grpc.ServerStream
	changed func()
}

func (s *changeStream) SendMsg(m any) error {
	s.changed()
	return s.ServerStream.SendMsg(m)
}
