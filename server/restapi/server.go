package restapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/telemetry/settings"
)

// Config is what the REST front needs. The three stubs are the only way it
// reaches data: the wiring points them at memrank's own gRPC front (so
// re-ranking, tenancy and forwarding happen once, there) or, for
// `memrank qdrant-compat`, straight at the embedded store.
type Config struct {
	Points      qdrant.PointsClient      // required
	Collections qdrant.CollectionsClient // required
	Qdrant      qdrant.QdrantClient      // required: GET / answers from its HealthCheck

	// UpstreamREST is Qdrant's REST API. Routes and body features this
	// front does not translate are forwarded there raw (method, path,
	// query, headers and body unchanged). Nil: they are answered with a
	// Qdrant-shaped 404 (route) or 400 (field) that names them.
	UpstreamREST *url.URL
	// EmbeddedStore says the store behind the stubs is memrank's embedded
	// store, which has no REST API of its own: with no UpstreamREST, a
	// route the front does not translate is answered saying the store
	// does not serve it, since suggesting --upstream-rest alone would send
	// the caller looking for a Qdrant that is not there.
	EmbeddedStore bool
	// MayForward, when set, is asked before a request is forwarded raw to
	// UpstreamREST, with its body when the front read one (a translated
	// route's, or /collections/aliases', the one untranslated body that
	// names collections; nil otherwise, streamed); its error is the answer (a
	// *qdrantjson.Error keeps its class). The wiring refuses writes to
	// memrank's audit companions, and everyone but administrators when
	// tenancy is on, since a raw request reaches Qdrant with no tenant
	// filter.
	MayForward func(r *http.Request, body []byte) error
	// CollectionsChanged, when set, is called for every request forwarded
	// raw (not one refused before) that may change a collection or move
	// an alias (an alias change, a collection's PATCH, a snapshot
	// recovered or uploaded), before its answer is written, and once more
	// when it ends. The translated
	// collection routes go through Collections, whose front tells it
	// itself.
	CollectionsChanged func()
	// CollectionsUnsettled, when set with CollectionsChanged, is called
	// instead of it for such a request whose answer does not say the
	// change was refused or made (a 5xx, a 408, a 499 for a caller gone,
	// or no answer written: see settledStatus): the upstream may still
	// apply it.
	CollectionsUnsettled func()
	// UpstreamTransport carries forwarded requests; nil = a clone of
	// http.DefaultTransport. It is wrapped with otelhttp.
	UpstreamTransport http.RoundTripper

	// ForwardHeaders are request headers copied into the outgoing gRPC
	// metadata besides api-key and authorization (e.g. the tenancy header).
	ForwardHeaders []string

	MaxBodyBytes int64 // request body limit; default 32 MiB
	// CallTimeout is the deadline of a stub call when the request sets no
	// timeout (default 10s); LongCallTimeout that of a write, an index or a
	// collection change (default 10m).
	CallTimeout, LongCallTimeout time.Duration

	// Telemetry is where the front's logs, spans and metrics go; its
	// Propagator reads the caller's trace context and writes it into
	// forwarded requests. Nil members record nothing (the propagator: W3C
	// trace context and baggage).
	Telemetry settings.Settings
}

// Defaults.
const (
	DefaultMaxBodyBytes    = 32 << 20
	DefaultCallTimeout     = 10 * time.Second
	DefaultLongCallTimeout = 10 * time.Minute
)

// Validate reports a missing dependency or a bad setting.
func (c Config) Validate() error {
	switch {
	case c.Points == nil:
		return errors.New("restapi: Config.Points is required")
	case c.Collections == nil:
		return errors.New("restapi: Config.Collections is required")
	case c.Qdrant == nil:
		return errors.New("restapi: Config.Qdrant is required")
	case c.MaxBodyBytes < 0:
		return errors.New("restapi: Config.MaxBodyBytes must not be negative")
	case c.CallTimeout < 0 || c.LongCallTimeout < 0:
		return errors.New("restapi: Config.CallTimeout and LongCallTimeout must not be negative")
	}
	if u := c.UpstreamREST; u != nil && (u.Scheme != "http" && u.Scheme != "https" || u.Host == "") {
		return fmt.Errorf("restapi: Config.UpstreamREST %q must be an absolute http(s) URL", u.Redacted())
	}
	for _, h := range c.ForwardHeaders {
		if h == "" || strings.ContainsAny(h, " :\t\r\n") {
			return fmt.Errorf("restapi: Config.ForwardHeaders: %q is not a header name", h)
		}
	}
	return nil
}

func (c *Config) setDefaults() {
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.LongCallTimeout == 0 {
		c.LongCallTimeout = DefaultLongCallTimeout
	}
	c.Telemetry = c.Telemetry.WithDefaults()
}

type handler struct {
	cfg     Config
	mux     *http.ServeMux
	proxy   *httputil.ReverseProxy // nil without UpstreamREST
	headers []string               // lower-case names copied into metadata
	log     *slog.Logger
}

// New returns the REST front: Qdrant's REST routes translated to gRPC calls
// on the configured stubs, wrapped in otelhttp (server spans under the
// caller's W3C trace context, named after the route; HTTP server metrics).
// It does not register /healthz, /readyz, /metrics or /v1 (server/native
// owns them): mount both on one mux, the native routes being more specific.
func New(cfg Config) (http.Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	h := &handler{cfg: cfg, mux: http.NewServeMux(), log: cfg.Telemetry.Logger}
	h.headers = []string{"api-key", "authorization"}
	for _, name := range cfg.ForwardHeaders {
		name = strings.ToLower(name)
		if name != "api-key" && name != "authorization" {
			h.headers = append(h.headers, name)
		}
	}
	if cfg.UpstreamREST != nil {
		h.proxy = h.newProxy()
	}
	h.routes()
	return otelhttp.NewHandler(http.HandlerFunc(h.serveHTTP), "qdrant-rest",
		otelhttp.WithTracerProvider(cfg.Telemetry.TracerProvider),
		otelhttp.WithMeterProvider(cfg.Telemetry.MeterProvider),
		otelhttp.WithPropagators(cfg.Telemetry.Propagator),
		otelhttp.WithSpanNameFormatter(func(op string, r *http.Request) string {
			if r.Pattern != "" {
				return r.Pattern
			}
			return op + " " + r.Method
		}),
	), nil
}

// serveHTTP normalises the path the way Qdrant's NormalizePath::trim does
// (a trailing slash is ignored) and routes.
func (h *handler) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
		r.URL.Path = strings.TrimRight(p, "/")
		if r.URL.Path == "" {
			r.URL.Path = "/"
		}
		r.URL.RawPath = ""
	}
	h.mux.ServeHTTP(w, r)
}

// call is one translated request.
type call struct {
	r          *http.Request
	ctx        context.Context
	body       []byte           // raw body, kept for forwarding
	val        qdrantjson.Value // parsed body (null when the route takes none)
	collection string
	trailer    metadata.MD
	timeout    *uint64 // the timeout query parameter, seconds
}

// opts are the call options of every stub call: the trailer is kept for
// Retry-After.
func (c *call) opts() []grpc.CallOption { return []grpc.CallOption{grpc.Trailer(&c.trailer)} }

// routeFunc translates one request; it returns the JSON of "result".
type routeFunc func(c *call) ([]byte, error)

type routeOpts uint8

const (
	withBody  routeOpts = 1 << iota // the route reads a JSON body
	unwrapped                       // the result is written without the envelope
	long                            // a write, index or collection change: LongCallTimeout
)

func (h *handler) handle(pattern string, opts routeOpts, fn routeFunc) {
	h.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		h.serveRoute(w, r, opts, fn)
	})
}

func (h *handler) routes() {
	h.handle("GET /{$}", unwrapped, h.root)

	h.handle("GET /collections", 0, h.listCollections)
	h.handle("GET /collections/{collection_name}", 0, h.getCollection)
	h.handle("PUT /collections/{collection_name}", withBody|long, h.createCollection)
	h.handle("DELETE /collections/{collection_name}", long, h.deleteCollection)
	h.handle("GET /collections/{collection_name}/exists", 0, h.collectionExists)

	h.handle("PUT /collections/{collection_name}/index", withBody|long, h.createFieldIndex)
	h.handle("DELETE /collections/{collection_name}/index/{field_name}", long, h.deleteFieldIndex)

	h.handle("PUT /collections/{collection_name}/points", withBody|long, h.upsertPoints)
	h.handle("POST /collections/{collection_name}/points", withBody, h.retrievePoints)
	h.handle("GET /collections/{collection_name}/points/{id}", 0, h.getPoint)
	h.handle("POST /collections/{collection_name}/points/delete", withBody|long, h.deletePoints)
	h.handle("PUT /collections/{collection_name}/points/vectors", withBody|long, h.updateVectors)
	h.handle("POST /collections/{collection_name}/points/vectors/delete", withBody|long, h.deleteVectors)
	h.handle("POST /collections/{collection_name}/points/payload", withBody|long, h.setPayload)
	h.handle("PUT /collections/{collection_name}/points/payload", withBody|long, h.overwritePayload)
	h.handle("POST /collections/{collection_name}/points/payload/delete", withBody|long, h.deletePayload)
	h.handle("POST /collections/{collection_name}/points/payload/clear", withBody|long, h.clearPayload)
	h.handle("POST /collections/{collection_name}/points/scroll", withBody, h.scroll)
	h.handle("POST /collections/{collection_name}/points/count", withBody, h.count)

	h.handle("POST /collections/{collection_name}/points/search", withBody, h.search)
	h.handle("POST /collections/{collection_name}/points/search/batch", withBody, h.searchBatch)
	h.handle("POST /collections/{collection_name}/points/search/groups", withBody, h.searchGroups)
	h.handle("POST /collections/{collection_name}/points/query", withBody, h.query)
	h.handle("POST /collections/{collection_name}/points/query/batch", withBody, h.queryBatch)
	h.handle("POST /collections/{collection_name}/points/query/groups", withBody, h.queryGroups)

	// Everything else: forwarded raw, or a 404 naming the route.
	h.mux.HandleFunc("/", h.notTranslated)
}

func (h *handler) serveRoute(w http.ResponseWriter, r *http.Request, opts routeOpts, fn routeFunc) {
	start := time.Now()
	if !utf8.ValidString(r.URL.Path) {
		// Names travel as protobuf strings, which must be UTF-8.
		h.writeError(w, start, qdrantjson.Errorf(qdrantjson.ClassBadInput, "the path is not valid UTF-8 once decoded (collection and alias names are UTF-8)"))
		return
	}
	c := &call{r: r, val: qdrantjson.Value{Kind: qdrantjson.KindNull}, collection: r.PathValue("collection_name")}
	span := trace.SpanFromContext(r.Context())
	if c.collection != "" {
		span.SetAttributes(attribute.String("db.collection.name", c.collection))
	}
	if opts&withBody != 0 {
		body, err := qdrantjson.ReadBody(w, r, h.cfg.MaxBodyBytes)
		if err != nil {
			h.writeError(w, start, err)
			return
		}
		c.body = body
		if c.val, err = qdrantjson.ParseBody(body); err != nil {
			h.writeError(w, start, err)
			return
		}
	}
	timeout, err := timeoutParam(r)
	if err != nil {
		h.writeError(w, start, err)
		return
	}
	c.timeout = timeout
	ctx, cancel := h.callContext(r, timeout, opts&long != 0)
	defer cancel()
	c.ctx = ctx

	result, err := fn(c)
	if err != nil {
		var de *qdrantjson.Error
		if errors.As(err, &de) && de.Unsupported && h.proxy != nil {
			if ferr := h.mayForward(r, c.body); ferr != nil {
				h.writeError(w, start, ferr)
				return
			}
			span.SetAttributes(attribute.String("memrank.rest.forwarded", de.Error()))
			h.forward(w, r, c.body)
			return
		}
		h.writeError(w, start, qdrantjson.WithTrailer(err, c.trailer))
		return
	}
	if opts&unwrapped != 0 {
		qdrantjson.WriteJSON(w, http.StatusOK, result)
		return
	}
	qdrantjson.WriteResult(w, start, result)
}

// writeError answers err in Qdrant's error envelope and logs what the
// client is not told.
func (h *handler) writeError(w http.ResponseWriter, start time.Time, err error) {
	a := qdrantjson.WriteError(w, start, err)
	if !a.Withheld {
		return
	}
	level := slog.LevelWarn
	if a.Status == http.StatusInternalServerError {
		level = slog.LevelError
	}
	h.log.LogAttrs(context.Background(), level, "REST request failed",
		slog.Int("status", a.Status), slog.String("error", err.Error()))
}

// callContext carries the caller's credentials (and the configured extra
// headers) as outgoing gRPC metadata, and bounds the stub call: by the
// request's timeout parameter (plus a little, so that the store's own
// timeout answer wins the race) or by CallTimeout (LongCallTimeout for a
// long route).
func (h *handler) callContext(r *http.Request, timeout *uint64, long bool) (context.Context, context.CancelFunc) {
	ctx := r.Context()
	md := metadata.MD{}
	for _, name := range h.headers {
		if vals := r.Header.Values(name); len(vals) > 0 {
			md[name] = append([]string(nil), vals...)
		}
	}
	if len(md) > 0 {
		if prev, ok := metadata.FromOutgoingContext(ctx); ok {
			md = metadata.Join(prev, md)
		}
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	d := h.cfg.CallTimeout
	if long {
		d = h.cfg.LongCallTimeout
	}
	if timeout != nil {
		// Seconds beyond what a Duration holds mean "no deadline" in
		// practice; multiplying them would overflow into the past.
		const maxSecs = uint64(math.MaxInt64/int64(time.Second)) - 1
		d = time.Duration(min(*timeout, maxSecs))*time.Second + time.Second
	}
	return context.WithTimeout(ctx, d)
}

// notTranslated answers a route outside the translated set.
func (h *handler) notTranslated(w http.ResponseWriter, r *http.Request) {
	if h.proxy != nil {
		start := time.Now()
		var cw *changeWriter
		if fn := h.cfg.CollectionsChanged; fn != nil && changesCollections(r) {
			cw = &changeWriter{ResponseWriter: w, changed: fn, unsettled: h.cfg.CollectionsUnsettled}
			defer cw.end()
			w = cw
		}
		if r.URL.Path != "/collections/aliases" {
			// Streamed: a snapshot upload may be far larger than any
			// JSON body.
			if err := h.mayForward(r, nil); err != nil {
				h.writeError(w, start, err)
				return
			}
			cw.forwarding()
			h.proxy.ServeHTTP(w, r)
			return
		}
		body, err := qdrantjson.ReadBody(w, r, h.cfg.MaxBodyBytes)
		if err != nil {
			h.writeError(w, start, err)
			return
		}
		if err := h.mayForward(r, body); err != nil {
			h.writeError(w, start, err)
			return
		}
		cw.forwarding()
		h.forward(w, r, body)
		return
	}
	if h.cfg.EmbeddedStore {
		qdrantjson.WriteError(w, time.Time{}, qdrantjson.Errorf(qdrantjson.ClassNotFound,
			"memrank's REST front does not serve %s %s: the embedded store has only the routes the front translates; "+
				"run Qdrant, and memrank serve with --upstream and --upstream-rest to forward it there", r.Method, r.URL.Path))
		return
	}
	qdrantjson.WriteError(w, time.Time{}, qdrantjson.Errorf(qdrantjson.ClassNotFound,
		"memrank's REST front does not translate %s %s (configure --upstream-rest to forward it to Qdrant)", r.Method, r.URL.Path))
}

func (h *handler) newProxy() *httputil.ReverseProxy {
	target := h.cfg.UpstreamREST
	base := h.cfg.UpstreamTransport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
		},
		Transport: otelhttp.NewTransport(base,
			otelhttp.WithTracerProvider(h.cfg.Telemetry.TracerProvider),
			otelhttp.WithMeterProvider(h.cfg.Telemetry.MeterProvider),
			otelhttp.WithPropagators(h.cfg.Telemetry.Propagator)),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			h.log.LogAttrs(r.Context(), slog.LevelWarn, "upstream REST request failed",
				slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("error", err.Error()))
			if errors.Is(err, context.Canceled) {
				// The client went away; nobody reads the answer.
				qdrantjson.WriteError(w, time.Time{}, err)
				return
			}
			qdrantjson.WriteError(w, time.Time{}, qdrantjson.Errorf(qdrantjson.ClassBadGateway, "the upstream Qdrant REST API did not answer"))
		},
		ErrorLog: slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
	}
}

// mayForward asks Config.MayForward, if any.
func (h *handler) mayForward(r *http.Request, body []byte) error {
	if h.cfg.MayForward == nil {
		return nil
	}
	return h.cfg.MayForward(r, body)
}

// forward sends a request this front read but does not translate to the
// upstream REST API, with the body it already consumed.
func (h *handler) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	h.proxy.ServeHTTP(w, r2)
}

// changesCollections says whether a request forwarded raw may make a
// collection name stand for other points.
func changesCollections(r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/collections/")
	if !ok {
		return false
	}
	return rest == "aliases" || !strings.Contains(rest, "/") || strings.Contains(rest, "/snapshots")
}

// changeWriter calls changed before the answer's header is written, so
// that a caller who reads it and then queries finds no entry stored
// before the change.
// When a forwarded request's answer does not say what became of the
// change (settledStatus), unsettled (when set) is called instead of
// changed. A request answered before it was forwarded (refused, or its
// body unreadable) changed nothing upstream, whatever its status, and
// tells nothing: otherwise anyone could empty the cache, or turn it off,
// at will.
type changeWriter struct {
	http.ResponseWriter
	changed, unsettled func()
	status             int  // the final answer's; 0 before it is written
	forwarded          bool // the request went (or began to go) upstream
}

// forwarding notes that the request goes upstream; nil (no change to
// tell of) does nothing.
func (w *changeWriter) forwarding() {
	if w != nil {
		w.forwarded = true
	}
}

func (w *changeWriter) tell(status int) {
	if w.status == 0 {
		w.status = status
		w.notify()
	}
}

func (w *changeWriter) notify() {
	switch {
	case !w.forwarded:
	case w.unsettled != nil && !settledStatus(w.status):
		w.unsettled()
	default:
		w.changed()
	}
}

// end tells once more as the request ends: a change may have been applied
// while the answer was written, or no answer was written at all.
func (w *changeWriter) end() { w.notify() }

func (w *changeWriter) WriteHeader(code int) {
	if code >= 200 { // a 1xx (100 Continue) is not the answer
		w.tell(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *changeWriter) Write(b []byte) (int, error) {
	w.tell(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// settledStatus says whether the status of a forwarded request's answer
// tells what became of a collection change: made (2xx, 3xx) or refused
// (4xx). A 5xx (the upstream failed, or the front could not reach it or
// gave up waiting), a 408 (a timeout), a 499 (the caller went away, and
// the request with it) and no answer at all (0) leave it possibly still to
// be applied.
func settledStatus(code int) bool {
	return code >= 200 && code < 500 && code != http.StatusRequestTimeout && code != qdrantjson.StatusClientClosed
}

// Unwrap lets http.ResponseController (the proxy's flushes) reach the
// connection's writer.
func (w *changeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
