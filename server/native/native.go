// Package native is memrank's own HTTP API (docs/architecture.md): POST
// /v1/retrieve, which runs a query through the ranker and answers every
// factor of every score; the write path's routes, which hand observations to
// the dedup engine and show what it stored; and the operational endpoints
// /healthz (and /livez), /readyz and /metrics.
//
// /v1/retrieve takes a query vector or a text (embedded with the configured
// embedder), a Qdrant REST filter, limit, offset, an optional score threshold
// and whether to explain; see RetrieveRequest.
//
// The write path (Config.Writer and Config.Inspector; without them these
// routes answer 501):
//
//	POST /v1/observe                      one observation (DecodeObserveRequest) -> its decision
//	POST /v1/memories/{id}/confirm        {collection, observation_id?, session_id?, turn_id?, at?}
//	POST /v1/memories/{id}/used           {collection, observation_id?, session_id?, turn_id?, at?}
//	POST /v1/memories/used                {collection, ids, observation_id?, session_id?, turn_id?, at?}
//	POST /v1/memories/{id}/correct        an observe body: the correction supersedes {id}
//	GET  /v1/memories/{id}?collection=C   the stored payload and its audit trail
//	GET  /v1/stats?collection=C           counts per bucket, tier, type and decision; the judge's work
//	DELETE /v1/sessions/{id}?collection=C  forget a session's evidence (docs/forgetting.md)
//	DELETE /v1/memories/{id}?collection=C  delete one memory
//	PUT /v1/collections/{name}            make a memory collection before its first observation
//	                                      (Config.Collections; administrators only under tenancy)
//
// POST /v1/embeddings is OpenAI's embeddings API over the configured and
// the built-in embedders (EmbeddingsRequest): the vectors /v1/observe
// stores for the same texts, answered and refused in OpenAI's shapes.
//
// A rejected observation is a decision (200, "decision": "rejected"), not an
// error. Bodies are decoded strictly: an unknown key or a value of the wrong
// type is a 400 naming the field.
//
// Every route answers in Qdrant's envelope, {"result": ..., "status": "ok",
// "time": seconds}, with u64 ids as JSON integers and payload integers and
// floats kept apart; errors use Qdrant's {"status": {"error": "..."}} shape
// and its HTTP codes, whether memrank refused the request or the upstream
// did. Envelopes, the retrieve body's parser and filter, payloads and the
// table from errors to statuses and texts are package qdrantjson's, shared
// with the REST front, so that the same error reads the same on both.
//
// When tenancy is on, the tenant comes from the HTTP request (the configured
// header, or the API key): it scopes the filter of a retrieve, exactly as on
// the gRPC and REST fronts, and every write and read of the write path.
package native

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/telemetry/settings"
	"github.com/memrank/memrank/tenancy"
)

// Retriever runs a query through the ranking pipeline, in the collection's
// mode or the one a request asks for (rank.ModeAuto: the collection's);
// *rank.Ranker satisfies it.
type Retriever interface {
	QueryAs(ctx context.Context, req *qdrant.QueryPoints, mode rank.Mode) (*rank.Result, error)
}

var _ Retriever = (*rank.Ranker)(nil)

// Defaults.
const (
	DefaultMaxBodyBytes   = 32 << 20
	DefaultMaxTextBytes   = 64 << 10
	DefaultReadyTimeout   = 2 * time.Second
	DefaultRequestTimeout = 30 * time.Second
)

// Config configures the native API. Ranker is required; the zero value of
// every other field means its default.
type Config struct {
	Ranker Retriever
	// Embedder embeds text queries; nil refuses them (vectors still work).
	Embedder embed.Embedder
	// Records says which embedder a collection's audit companion records
	// (*rank.Ranker), and Embedders gives that embedder (*embed.Service):
	// a text query about a collection written with another model than
	// Embedder's (a built-in local model written before the default
	// changed) is embedded with that model. A recorded model Embedders
	// cannot give, a record that cannot be read, and a collection being
	// re-embedded are refused, never queried with vectors of another
	// model. Both nil: every text query uses Embedder.
	Records   RecordLookup
	Embedders interface {
		For(model string) (embed.Embedder, bool)
	}
	// Ready reports whether the upstream is reachable (e.g. Qdrant's
	// HealthCheck); /readyz calls it under ReadyTimeout and answers 503 when
	// it fails. nil: always ready. The wiring also makes it fail while
	// draining, so load balancers stop sending traffic before the stop.
	Ready func(ctx context.Context) error
	// Metrics serves /metrics (telemetry.MetricsHandler); nil: 404.
	Metrics http.Handler
	// Writer serves observe, confirm and correct; nil: those routes answer
	// 501 (the write path is not configured).
	Writer Writer
	// Inspector serves /v1/memories/{id} and /v1/stats; nil: 501.
	Inspector Inspector
	// Forgetter serves DELETE /v1/sessions/{id} and DELETE
	// /v1/memories/{id}; nil: 501.
	Forgetter Forgetter
	// Collections serves PUT /v1/collections/{name}; nil: 501.
	Collections Collections
	// Authenticate checks the caller's credentials (ctx carries them, as
	// AuthContext put them) on routes that reach no collection, POST
	// /v1/embeddings, as the upstream would check them on a retrieve:
	// e.g. a cheap upstream call. nil: tenancy's check alone.
	Authenticate func(ctx context.Context) error
	// Review serves GET /v1/review and the archive answer of POST
	// /v1/review/{id} (confirm and correct go to Writer); nil: 501.
	Review Reviewer
	// Tenancy scopes every retrieve to the request's tenant; nil or
	// disabled: off.
	Tenancy *tenancy.Policy
	// AuthContext carries the caller's credentials upstream; nil means
	// ForwardCredentials (the api-key and authorization headers become
	// outgoing gRPC metadata).
	AuthContext func(ctx context.Context, r *http.Request) context.Context

	MaxBodyBytes int64         // default 32 MiB; larger bodies get 413
	MaxTextBytes int           // default 64 KiB; longer texts get 400
	ReadyTimeout time.Duration // default 2s
	// ReadyCache is how long a successful readiness check answers /readyz
	// (default 1s; negative: every probe checks). Failures are checked
	// again, one check at a time.
	ReadyCache     time.Duration
	RequestTimeout time.Duration // bounds a retrieve that has no earlier deadline; default 30s
	// MaxEmbeddingInputs is the most texts one POST /v1/embeddings
	// embeds (default 2048, OpenAI's limit); more get 400.
	MaxEmbeddingInputs int

	// Telemetry is where the API's logs, spans and metrics go; its
	// Propagator reads the caller's trace context. Nil members record
	// nothing (the propagator: W3C trace context and baggage).
	Telemetry settings.Settings
}

// Validate reports a configuration New cannot use.
func (c Config) Validate() error {
	var errs []error
	if c.Ranker == nil {
		errs = append(errs, errors.New("native: Ranker is required"))
	}
	if c.MaxBodyBytes < 0 || c.MaxTextBytes < 0 || c.MaxEmbeddingInputs < 0 || c.ReadyTimeout < 0 || c.RequestTimeout < 0 {
		errs = append(errs, errors.New("native: limits and timeouts must not be negative"))
	}
	if c.Tenancy != nil {
		if err := c.Tenancy.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("native: %w", err))
		}
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxTextBytes == 0 {
		c.MaxTextBytes = DefaultMaxTextBytes
	}
	if c.MaxEmbeddingInputs == 0 {
		c.MaxEmbeddingInputs = DefaultMaxEmbeddingInputs
	}
	if c.ReadyCache == 0 {
		c.ReadyCache = time.Second
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = DefaultReadyTimeout
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.AuthContext == nil {
		c.AuthContext = ForwardCredentials
	}
	c.Telemetry = c.Telemetry.WithDefaults()
	return c
}

// Service is the native API: Retrieve for in-process callers (memrank
// explain), Handler for HTTP.
type Service struct {
	cfg       Config
	tracer    trace.Tracer
	embedTime metric.Float64Histogram
	ready     readyCache
}

// readyCache keeps a successful readiness check for a while: probes are
// not counted by the admission limit, so a flood of them must not become
// a flood of upstream calls. Checks run one at a time; concurrent probes
// wait for the one in progress.
type readyCache struct {
	mu sync.Mutex
	ok time.Time // the last successful check
}

func (c *readyCache) check(ctx context.Context, ttl time.Duration, fn func(context.Context) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ttl > 0 && !c.ok.IsZero() && time.Since(c.ok) < ttl {
		return nil
	}
	err := fn(ctx)
	if err == nil {
		c.ok = time.Now()
	}
	return err
}

const scope = "github.com/memrank/memrank/server/native"

// NewService checks cfg and builds the service.
func NewService(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Service{cfg: cfg, tracer: cfg.Telemetry.TracerProvider.Tracer(scope)}
	var err error
	s.embedTime, err = cfg.Telemetry.MeterProvider.Meter(scope).Float64Histogram("memrank.embed.duration",
		metric.WithUnit("s"), metric.WithDescription("Time to embed a /v1/retrieve text query."))
	if err != nil {
		return nil, fmt.Errorf("native: metrics: %w", err)
	}
	return s, nil
}

// New builds the HTTP handler of the native API: POST /v1/retrieve, the
// write path's routes, GET /healthz, /livez, /readyz and /metrics (see
// Routes).
func New(cfg Config) (http.Handler, error) {
	s, err := NewService(cfg)
	if err != nil {
		return nil, err
	}
	return s.Handler(), nil
}

// Routes are the path patterns the handler serves, for mounting it on a
// shared mux next to the REST front: mux.Handle(p, h) for each. "/v1/"
// covers retrieve and every route of the write path (observe, memories,
// confirm, correct, stats), and answers 404 in Qdrant's envelope for the
// rest of /v1.
func Routes() []string {
	return []string{"/v1/", "/healthz", "/livez", "/readyz", "/metrics"}
}

// Handler is the HTTP handler; see New.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	// Patterns without a method: a wrong method gets allow's 405 in
	// Qdrant's envelope instead of the mux's plain-text one.
	route := func(pattern, spanName string, h http.HandlerFunc) {
		mux.Handle(pattern, otelhttp.NewHandler(h, spanName,
			otelhttp.WithTracerProvider(s.cfg.Telemetry.TracerProvider),
			otelhttp.WithMeterProvider(s.cfg.Telemetry.MeterProvider),
			otelhttp.WithPropagators(s.cfg.Telemetry.Propagator),
		))
	}
	route("/v1/retrieve", "POST /v1/retrieve", s.serveRetrieve)
	route("/v1/observe", "POST /v1/observe", s.serveObserve)
	route("/v1/memories/{id}", "/v1/memories/{id}", s.serveMemoryMethods)
	route("/v1/sessions/{id}", "DELETE /v1/sessions/{id}", s.serveForgetSession)
	route("/v1/memories/{id}/confirm", "POST /v1/memories/{id}/confirm", s.serveConfirm)
	route("/v1/memories/{id}/correct", "POST /v1/memories/{id}/correct", s.serveCorrect)
	route("/v1/memories/{id}/used", "POST /v1/memories/{id}/used", s.serveUsed)
	route("/v1/memories/used", "POST /v1/memories/used", s.serveUsedBatch)
	route("/v1/stats", "GET /v1/stats", s.serveStats)
	route("/v1/review", "GET /v1/review", s.serveReview)
	route("/v1/review/{id}", "POST /v1/review/{id}", s.serveReviewAnswer)
	route("/v1/collections/{name}", "PUT /v1/collections/{name}", s.serveCreateCollection)
	route("/v1/embeddings", "POST /v1/embeddings", s.serveEmbeddings)
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		qdrantjson.WriteError(w, time.Now(), qdrantjson.Errorf(qdrantjson.ClassNotFound, "no route %s %s (memrank's native API has "+
			"POST /v1/retrieve, POST /v1/observe, GET /v1/memories/{id}, POST /v1/memories/{id}/confirm, "+
			"POST /v1/memories/{id}/correct, POST /v1/memories/{id}/used, POST /v1/memories/used, GET /v1/stats, DELETE /v1/memories/{id}, DELETE /v1/sessions/{id}, PUT /v1/collections/{name} and POST /v1/embeddings)", r.Method, r.URL.Path))
	})
	mux.HandleFunc("/healthz", s.serveLive)
	mux.HandleFunc("/livez", s.serveLive)
	mux.HandleFunc("/readyz", s.serveReady)
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if !allow(w, r, http.MethodGet) {
			return
		}
		if s.cfg.Metrics == nil {
			qdrantjson.WriteError(w, time.Now(), qdrantjson.Errorf(qdrantjson.ClassNotFound, "metrics are not enabled"))
			return
		}
		s.cfg.Metrics.ServeHTTP(w, r)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		qdrantjson.WriteError(w, time.Now(), qdrantjson.Errorf(qdrantjson.ClassNotFound, "no route %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// allow answers 405 in Qdrant's shape unless r uses method (GET admits
// HEAD).
func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || method == http.MethodGet && r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", method)
	qdrantjson.WriteError(w, time.Now(), qdrantjson.Errorf(qdrantjson.ClassMethodNotAllowed, "%s %s accepts %s", r.Method, r.URL.Path, method))
	return false
}

// serveLive is liveness only: the process serves HTTP. It never looks at
// the upstream, so an unreachable Qdrant does not get memrank restarted.
func (s *Service) serveLive(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "healthz check passed")
}

func (s *Service) serveReady(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	start := time.Now()
	if s.cfg.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.ReadyTimeout)
		err := s.ready.check(ctx, s.cfg.ReadyCache, s.cfg.Ready)
		cancel()
		if err != nil {
			s.cfg.Telemetry.Logger.LogAttrs(r.Context(), slog.LevelWarn, "not ready", slog.String("error", err.Error()))
			qdrantjson.WriteError(w, start, qdrantjson.Errorf(qdrantjson.ClassUnavailable, "memrank is not ready (the upstream is not reachable or memrank is stopping)"))
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "all shards are ready")
}

func (s *Service) serveRetrieve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if !allow(w, r, http.MethodPost) {
		return
	}
	body, err := qdrantjson.ReadBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		s.writeError(w, r, start, err)
		return
	}
	req, err := DecodeRetrieveRequest(body)
	if err != nil {
		s.writeError(w, r, start, err)
		return
	}
	span := trace.SpanFromContext(r.Context())
	kind := "vector"
	if req.HasText {
		kind = "text"
	}
	span.SetAttributes(
		attribute.String("db.collection.name", req.Collection),
		attribute.String("memrank.query.kind", kind),
		attribute.Int64("memrank.request.limit", int64(req.Limit)),
		attribute.Int64("memrank.request.offset", int64(req.Offset)),
	)
	ctx := s.cfg.AuthContext(r.Context(), r)
	resp, err := s.Retrieve(ctx, req, headerMetadata(r.Header))
	if err != nil {
		s.writeError(w, r, start, err)
		return
	}
	span.SetAttributes(
		attribute.Int("db.response.returned_rows", len(resp.Result)),
		attribute.Bool("memrank.reranked", resp.Reranked),
	)
	resp.Time = time.Since(start).Seconds()
	b, err := encode(resp)
	if err != nil {
		s.writeError(w, r, start, fmt.Errorf("native: encoding the response: %w", err))
		return
	}
	qdrantjson.WriteJSON(w, http.StatusOK, b)
}

// Retrieve runs one retrieve: tenancy, embedding, the ranker. md is the
// caller's request metadata (HTTP headers with lower-case names), where the
// tenant is found when tenancy is on. Errors are classified by the HTTP
// front's table (clientError, then qdrantjson.Classify); in-process callers
// can show err.Error().
func (s *Service) Retrieve(ctx context.Context, req *RetrieveRequest, md metadata.MD) (*RetrieveResponse, error) {
	start := time.Now()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.RequestTimeout)
		defer cancel()
	}
	filter := req.Filter
	if s.cfg.Tenancy.Enabled() {
		tenant, err := s.cfg.Tenancy.Tenant(md)
		if err != nil {
			return nil, err
		}
		if filter, err = s.cfg.Tenancy.ScopeFilter(filter, tenant); err != nil {
			return nil, err
		}
	}
	vector := req.Vector
	if req.HasText {
		v, err := s.embed(ctx, req.Collection, req.Text)
		if err != nil {
			return nil, err
		}
		vector = v
	}
	if req.IncludeArchived {
		ctx = rank.WithArchived(ctx)
	}
	if !req.CountAccess {
		ctx = rank.WithoutAccess(ctx)
	}
	var at string
	if !req.At.IsZero() {
		ctx = rank.AsOf(ctx, req.At)
		at = req.At.Format(time.RFC3339Nano)
	}
	res, err := s.cfg.Ranker.QueryAs(ctx, req.Query(vector, filter), req.Mode)
	if err != nil {
		return nil, err
	}
	return &RetrieveResponse{
		At:          at,
		Empty:       res.Empty,
		Result:      buildResults(res, req.Explain),
		Status:      "ok",
		Time:        time.Since(start).Seconds(),
		Reranked:    res.Reranked,
		PassThrough: res.PassThrough,
		Mode:        res.Detection.Mode.String(),
		Detection:   s.detectionRule(res),
		Embedder:    newEmbedderReport(res.Detection),
		Guard:       newGuardReport(res),
		Shadow:      newShadowReport(res.Shadow),
		Dropped:     newDropped(res),
	}, nil
}

// detectionRule is how the collection was recognised, as the answer says it.
// With tenancy on it is left out: a rule read from an unscoped sample ("3 of
// 32 sampled points ...") would tell one tenant about the others' points.
func (s *Service) detectionRule(res *rank.Result) string {
	if s.cfg.Tenancy.Enabled() {
		return ""
	}
	return res.Detection.Rule
}

// errNoEmbedder refuses text queries on a server without an embedder.
var errNoEmbedder = qdrantjson.Errorf(qdrantjson.ClassBadRequest, "text queries need an embedder and none is configured; send a vector")

// RecordLookup reads the embedder a collection records; *rank.Ranker
// satisfies it.
type RecordLookup interface {
	RecordedEmbedder(ctx context.Context, collection string) (rank.Recorded, error)
}

var _ RecordLookup = (*rank.Ranker)(nil)

// embedderFor is the embedder of collection's text queries: the one its
// audit companion records when that is another than the configured one.
func (s *Service) embedderFor(ctx context.Context, collection string) (embed.Embedder, error) {
	if s.cfg.Records == nil || s.cfg.Embedders == nil {
		return s.cfg.Embedder, nil
	}
	rec, err := s.cfg.Records.RecordedEmbedder(ctx, collection)
	switch {
	case errors.Is(err, rank.ErrNoRecord):
		return nil, qdrantjson.Errorf(qdrantjson.ClassUnavailable,
			"the embedder of collection %s cannot be read from its audit companion; retry, or send a vector", collection)
	case err != nil:
		return nil, err
	case rec.MigratingTo != "":
		return nil, qdrantjson.Errorf(qdrantjson.ClassConflict,
			"collection %s is being re-embedded from %s to %s (memrank reembed): send a vector, or retry when it has finished", collection, rec.Model, rec.MigratingTo)
	case rec.Model == "" || rec.Model == s.cfg.Embedder.Model():
		return s.cfg.Embedder, nil
	}
	if e, ok := s.cfg.Embedders.For(rec.Model); ok {
		return e, nil
	}
	return nil, qdrantjson.Errorf(qdrantjson.ClassBadRequest,
		"collection %s was written with the embedder %s, which this server is not configured with; send a vector", collection, rec.Model)
}

func (s *Service) embed(ctx context.Context, collection, text string) ([]float32, error) {
	if s.cfg.Embedder == nil {
		return nil, errNoEmbedder
	}
	if len(text) > s.cfg.MaxTextBytes {
		return nil, qdrantjson.ValidationError("text", "at most %d bytes, got %d", s.cfg.MaxTextBytes, len(text))
	}
	emb, err := s.embedderFor(ctx, collection)
	if err != nil {
		return nil, err
	}
	model := emb.Model()
	ctx, span := s.tracer.Start(ctx, "memrank.embed", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "embeddings"),
		attribute.String("gen_ai.request.model", model),
		attribute.Int("gen_ai.embeddings.dimension.count", emb.Dimensions()),
		attribute.Int("memrank.text.bytes", len(text)),
	))
	defer span.End()
	start := time.Now()
	vecs, err := emb.Embed(ctx, []string{text})
	s.embedTime.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(attribute.String("gen_ai.request.model", model)))
	if err == nil && (len(vecs) != 1 || len(vecs[0]) == 0) {
		err = fmt.Errorf("native: the embedder returned %d vectors for 1 text", len(vecs))
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "embedding failed")
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &embedError{err}
	}
	return vecs[0], nil
}

// embedError is an embedder failure: logged, answered as a 500 without its
// text (which may name a provider's URL or key problems).
type embedError struct{ err error }

func (e *embedError) Error() string { return "embedding the text failed: " + e.err.Error() }
func (e *embedError) Unwrap() error { return e.err }

// ForwardCredentials is the default AuthContext: the caller's api-key and
// authorization headers become outgoing gRPC metadata, so the upstream
// checks the caller's own credentials, as on the gRPC and REST fronts.
func ForwardCredentials(ctx context.Context, r *http.Request) context.Context {
	var kv []string
	for _, h := range []string{"Api-Key", "Authorization"} {
		for _, v := range r.Header.Values(h) {
			kv = append(kv, strings.ToLower(h), v)
		}
	}
	if len(kv) == 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// headerMetadata is the request's headers as gRPC metadata (lower-case
// names), which is what tenancy reads.
func headerMetadata(h http.Header) metadata.MD {
	md := make(metadata.MD, len(h))
	for k, vs := range h {
		md[strings.ToLower(k)] = vs
	}
	return md
}

// encode is v in JSON, without HTML escaping (answers are not HTML).
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
