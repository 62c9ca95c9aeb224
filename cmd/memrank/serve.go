package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/admission"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/internal/demo"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/server/grpcfront"
	"github.com/memrank/memrank/server/hostguard"
	"github.com/memrank/memrank/server/restapi"
	"github.com/memrank/memrank/server/ui"
	"github.com/memrank/memrank/tenancy"
	"github.com/memrank/memrank/tlsfiles"
	"github.com/memrank/memrank/upstream"
)

// serveFlagKeys maps serve's flags to the configuration keys they set.
var serveFlagKeys = map[string]string{
	"http":             "listen.http",
	"grpc":             "listen.grpc",
	"upstream":         "upstream.grpc",
	"upstream-rest":    "upstream.rest",
	"upstream-api-key": "upstream.api_key",
	"replica-id":       "replica_id",
	"data":             "store.data_dir",
}

// demoFlags are serve's --demo and --demo-reset.
type demoFlags struct{ load, reset bool }

func newServeCmd(e *env) *cobra.Command {
	var df demoFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the re-ranking proxy: Qdrant's REST and gRPC APIs, the native API, metrics",
		Long: `Serve memrank in front of Qdrant (--upstream, its gRPC port) or, without --upstream, in front
of the embedded store in --data. Qdrant's REST API, memrank's native API (/v1/retrieve),
/healthz, /readyz and /metrics listen on --http; Qdrant's gRPC API on --grpc. Queries on memory
collections are re-ranked; everything else goes to the upstream unchanged.

--demo loads a bundled set of about 200 memories into the collection dana_memories (once: an
existing collection is kept, with what was observed into it and its access counts) and prints an
example request. --demo-reset drops dana_memories and its audit trail first and loads the set
afresh.

Stops gracefully on SIGINT or SIGTERM: /readyz and gRPC health fail for shutdown.drain (3s)
while requests are still served, so load balancers stop sending; then the listeners close,
in-flight requests finish, the access counts are flushed. A second signal stops at once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := e.loadConfig(cmd.Flags(), serveFlagKeys)
			if err != nil {
				return err
			}
			return serve(cmd.Context(), e, c, df)
		},
	}
	f := cmd.Flags()
	d := defaultConfig()
	f.String("http", d.Listen.HTTP, "address of Qdrant's REST API, the native API (/v1) and /metrics")
	f.String("grpc", d.Listen.GRPC, "address of Qdrant's gRPC API")
	f.String("upstream", "", "Qdrant's gRPC address HOST:PORT (empty: the embedded store in --data)")
	f.String("upstream-rest", "", "Qdrant's REST base URL, for the REST routes memrank does not translate")
	f.String("upstream-api-key", "", "memrank's own API key for the upstream (or MEMRANK_UPSTREAM__API_KEY)")
	f.String("replica-id", "", "this replica's key in access_counts (default: the hostname)")
	f.String("data", d.Store.DataDir, "data directory of the embedded store")
	f.BoolVar(&df.load, "demo", false, "load the bundled demo memories into dana_memories and print an example request")
	f.BoolVar(&df.reset, "demo-reset", false, "drop dana_memories and its audit trail, then load the demo afresh (implies --demo)")
	return cmd
}

// serve runs memrank until ctx ends, then shuts down in order: /readyz
// fails for shutdown.drain while requests are still served, then the
// listeners close and in-flight requests finish, the access counts are
// flushed, the upstream is closed.
func serve(ctx context.Context, e *env, c Config, df demoFlags) (err error) {
	rest, err := c.Upstream.RESTURL()
	if err != nil {
		return usageError{err}
	}
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	s, err := newStack(runCtx, c, e.stderr, true)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.close(context.Background())) }()
	tel := s.tel.Settings()

	httpLis, err := s.listen("--http", c.Listen.HTTP)
	if err != nil {
		return err
	}
	grpcLis, err := s.listen("--grpc", c.Listen.GRPC)
	if err != nil {
		return err
	}
	startupWarnings(e.stderr, e.environ, c, tel.Logger)
	loadDemo := df.load || df.reset
	if df.reset {
		if err := s.resetDemo(ctx, e.stderr); err != nil {
			return err
		}
	}
	if loadDemo {
		if err := s.reportDemo(ctx, e.stderr); err != nil {
			return err
		}
	}

	var draining atomic.Bool
	healthSrv := health.NewServer()
	grpcLimits, err := admission.New(c.Limits, "grpc", tel)
	if err != nil {
		return err
	}
	httpLimits, err := admission.New(c.Limits, "http", tel)
	if err != nil {
		return err
	}
	frontCfg := s.frontConfig(healthSrv)
	// Two servers of one front: the one on the gRPC port is limited; the
	// REST front's in-process one is not, since its requests were
	// admitted at the HTTP port already.
	restFront, err := grpcfront.New(frontCfg)
	if err != nil {
		return usageError{err}
	}
	frontCfg.ServerOptions = grpcLimits.ServerOptions()
	serverTLS, err := listenTLS(c.Listen.TLS, tel.Logger)
	if err != nil {
		return err
	}
	if serverTLS != nil {
		frontCfg.ServerOptions = append(frontCfg.ServerOptions, grpc.Creds(credentials.NewTLS(serverTLS)))
	}
	front, err := grpcfront.New(frontCfg)
	if err != nil {
		return usageError{err}
	}
	restHandler, err := s.startRESTFront(runCtx, restFront, rest)
	if err != nil {
		return err
	}
	page, err := explainPage(c.UI)
	if err != nil {
		return err
	}
	guard, err := newHostGuard(c, tel.Logger)
	if err != nil {
		return err
	}
	fail := func(err error) { stop(err) }
	httpSrv := &http.Server{
		Handler:           httpLimits.Handler(guard.Handler(s.mux(restHandler, page, &draining))),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	servers := together{
		&grpcServer{srv: front, lis: grpcLimits.Listener(grpcLis), fail: fail},
		&httpServer{srv: httpSrv, lis: httpLimits.Listener(httpLis), fail: fail},
	}
	if serverTLS != nil {
		// Both ports serve TLS; the limits count connections before the
		// handshake, so a flood of half-open handshakes is bounded too.
		servers[1].(*httpServer).lis = tls.NewListener(httpLimits.Listener(httpLis), serverTLS)
	}
	if err := s.life.start(runCtx, "servers", servers); err != nil {
		return err
	}
	if err := s.startUpkeep(runCtx); err != nil {
		return err
	}
	s.announce(e.stderr, httpLis.Addr(), grpcLis.Addr(), loadDemo)

	<-runCtx.Done()
	draining.Store(true)
	healthSrv.Shutdown() // NOT_SERVING to every watcher, for good
	if cause := context.Cause(runCtx); !errors.Is(cause, context.Canceled) {
		return cause // a server failed: no drain
	}
	if d := c.Shutdown.Drain; d > 0 {
		tel.Logger.Info("draining: /readyz fails, requests are still served", "for", d.String())
		time.Sleep(d)
	}
	tel.Logger.Info("shutting down")
	return nil
}

// newHostGuard is the guard in front of the HTTP port: browsers of other
// sites, and names rebound to this address, are refused before any route
// runs; on a port that needs no credential, any request by a name memrank
// was not given.
func newHostGuard(c Config, log *slog.Logger) (*hostguard.Guard, error) {
	g, err := hostguard.New(hostguard.Config{AllowedHosts: c.Listen.AllowedHosts, Pages: browserPages(),
		Open: !needsCredential(c), Logger: log})
	if err != nil {
		return nil, usageError{err}
	}
	return g, nil
}

// needsCredential says whether every request that reads or changes data
// must carry a credential memrank checks: tenants by API key or JWT, or the
// embedded store with a key. Tenancy by header is a header anyone can set
// (a DNS rebinding page too). An external Qdrant checks the callers' own
// keys (memrank never lends its upstream.api_key to them), but memrank
// cannot know whether that Qdrant has keys at all, so it counts as open.
func needsCredential(c Config) bool {
	if c.Tenancy.Key != "" && c.Tenancy.Header == "" {
		return true
	}
	return c.Upstream.GRPC == "" && c.Store.Auth().Enabled()
}

// startupWarnings says what serve's settings leave open, and that
// $MEMRANK_API_KEY, which it used to refuse as an unknown key and now
// ignores, is not a key this server requires.
func startupWarnings(w io.Writer, environ []string, c Config, log *slog.Logger) {
	warnOpenStore(w, c, log)
	if lookupEnv(environ, envAPIKey) != "" {
		fmt.Fprintf(w, "memrank: note: $%s is a client's key (memrank mcp --url) and serve does not read it; the keys serve requires are store.api_key and tenancy.api_keys\n", envAPIKey)
	}
}

// warnOpenStore warns when the embedded store answers anyone on a
// non-loopback address.
func warnOpenStore(w io.Writer, c Config, log *slog.Logger) {
	if c.Upstream.GRPC != "" || needsCredential(c) {
		return
	}
	for _, addr := range []string{c.Listen.HTTP, c.Listen.GRPC} {
		if !loopback(addr) {
			fmt.Fprintf(w, "memrank: WARNING: the embedded store is open (no store.api_key; no tenancy, or tenants from a header anyone can set) and %s is not a loopback address: anyone who reaches it can read and change every collection\n", addr)
			log.Warn("the embedded store is open on a non-loopback address", "listen", addr)
			return
		}
	}
}

// listen opens a listener the lifecycle closes (after the server on it has
// stopped, or alone if serve fails before starting it).
func (s *stack) listen(flag, addr string) (net.Listener, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s %s: %w", flag, addr, err)}
	}
	s.life.opened(flag+" listener", closingListener(lis))
	return lis, nil
}

// frontConfig is the gRPC front's configuration on the stack, without
// admission limits or TLS; health nil: a front that always serves.
func (s *stack) frontConfig(health *health.Server) grpcfront.Config {
	return grpcfront.Config{
		Upstream:             s.upstream,
		Ranker:               s.ranker,
		CollectionsChanged:   s.ranker.CollectionsChanged,   // the candidate cache starts over
		CollectionsUnsettled: s.ranker.CollectionsUnsettled, // ... and is off while the change may still apply
		Tenancy:              s.policy,
		Health:               health,
		MaxMessageSize:       s.cfg.Limits.MaxBodyBytes,
		CallTimeout:          s.cfg.Upstream.Timeout,
		LongCallTimeout:      s.cfg.Upstream.LongTimeout,
		// A request message slower than a body: the same bound.
		FirstMessageTimeout: s.cfg.Limits.BodyTimeout,
		Telemetry:           s.tel.Settings(),
	}
}

// startRESTFront serves the gRPC front in process for the REST front, which
// reaches data only through it, so re-ranking, tenancy and forwarding
// happen in one place; it returns the REST front's handler.
func (s *stack) startRESTFront(ctx context.Context, front *grpc.Server, rest *url.URL) (http.Handler, error) {
	frontIP := upstream.ServeInProcess(front)
	s.life.opened("grpc front, in process", frontIP.Shutdown)
	frontConn, err := upstream.DialInProcess(ctx, frontIP, upstream.ClientTelemetry(s.tel.Settings()))
	if err != nil {
		return nil, err
	}
	s.life.opened("rest front's connection", closing(frontConn.Close))
	restTransport, err := s.cfg.Upstream.RESTTransport()
	if err != nil {
		return nil, usageError{fmt.Errorf("upstream.%w", err)}
	}
	var forward []string
	if h := s.cfg.Tenancy.Header; h != "" {
		forward = append(forward, h)
	}
	h, err := restapi.New(restapi.Config{
		Points:               qdrant.NewPointsClient(frontConn),
		Collections:          qdrant.NewCollectionsClient(frontConn),
		Qdrant:               qdrant.NewQdrantClient(frontConn),
		UpstreamREST:         rest,
		EmbeddedStore:        s.cfg.Upstream.GRPC == "",
		MaxBodyBytes:         int64(s.cfg.Limits.MaxBodyBytes),
		UpstreamTransport:    restTransport,
		MayForward:           forwardRule(s.policy),
		CollectionsChanged:   s.ranker.CollectionsChanged,
		CollectionsUnsettled: s.ranker.CollectionsUnsettled,
		ForwardHeaders:       forward,
		CallTimeout:          s.cfg.Upstream.Timeout,
		LongCallTimeout:      s.cfg.Upstream.LongTimeout,
		Telemetry:            s.tel.Settings(),
	})
	if err != nil {
		return nil, usageError{err}
	}
	return h, nil
}

// loopback says whether a listen address is on loopback only (an empty
// host is every interface).
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// listenTLS is the listeners' TLS configuration; nil when off.
func listenTLS(c tlsfiles.Server, log *slog.Logger) (*tls.Config, error) {
	if !c.Enabled() {
		return nil, nil
	}
	r, err := tlsfiles.NewReloader(c, log)
	if err != nil {
		return nil, usageError{fmt.Errorf("listen.%w", err)}
	}
	return r.ServerConfig(), nil
}

// forwardRule is what the REST front may forward raw to --upstream-rest.
// Never a write to an audit companion (memrank's record of every
// decision: read-only to callers). With tenancy on, a raw request would
// reach Qdrant with no tenant filter, so only an administrator's may go;
// every other is refused (fail closed).
func forwardRule(p *tenancy.Policy) func(*http.Request, []byte) error {
	return func(r *http.Request, body []byte) error {
		if err := companionWrite(r, body); err != nil {
			return err
		}
		if !p.Enabled() {
			return nil
		}
		md := metadata.MD{}
		for _, name := range []string{"api-key", "authorization", p.Header} {
			if vals := r.Header.Values(name); name != "" && len(vals) > 0 {
				md[strings.ToLower(name)] = vals
			}
		}
		err := p.Admin(md)
		if err == nil {
			return nil
		}
		class := qdrantjson.ClassForbidden
		if errors.Is(err, tenancy.ErrUnauthenticated) {
			class = qdrantjson.ClassUnauthorized
		}
		return qdrantjson.Errorf(class, "%s %.200s cannot be scoped to a tenant (memrank does not translate it, and would forward it to Qdrant unscoped): %v",
			r.Method, r.URL.Path, err)
	}
}

// companionWrite refuses a forwarded request that could change an audit
// companion: any method but GET and HEAD on a path naming one, or an alias
// made for one.
func companionWrite(r *http.Request, body []byte) error {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	segs := strings.Split(r.URL.Path, "/")
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == "collections" && memory.IsCompanion(segs[i+1]) {
			return qdrantjson.Errorf(qdrantjson.ClassForbidden, "%.200q is memrank's %s, read-only to callers (memrank alone writes it)", segs[i+1], memory.CompanionWhat(segs[i+1]))
		}
	}
	if r.URL.Path == "/collections/aliases" && aliasNamesCompanion(r, body) {
		return qdrantjson.Errorf(qdrantjson.ClassForbidden, "an alias cannot name memrank's audit trail or job state (a collection ending in %s, %s or %s)",
			memory.AuditSuffix, memory.BackfillSuffix, memory.ReembedSuffix)
	}
	return nil
}

// aliasNamesCompanion reads an alias change as Qdrant would (JSON escapes
// decoded) and reports whether any string in it names an audit companion.
// What cannot be read here (another Content-Encoding, not JSON) is refused
// too: Qdrant might read it.
func aliasNamesCompanion(r *http.Request, body []byte) bool {
	if enc := r.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		return true
	}
	v, err := qdrantjson.Parse(string(body))
	if err != nil {
		return true
	}
	var walk func(v qdrantjson.Value) bool
	walk = func(v qdrantjson.Value) bool {
		switch v.Kind {
		case qdrantjson.KindString:
			return memory.IsCompanion(v.Text)
		case qdrantjson.KindArray:
			for _, e := range v.Items() {
				if walk(e) {
					return true
				}
			}
		case qdrantjson.KindObject:
			for _, m := range v.Members {
				if walk(m.Val) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// mux routes the HTTP listener: Qdrant's REST API, the native API, the
// MCP server (/mcp, unless mcp.enabled is false), the explain page (page;
// nil: not served), and a /readyz that fails while draining, so load
// balancers stop sending requests before the listeners close.
func (s *stack) mux(rest, page http.Handler, draining *atomic.Bool) *http.ServeMux {
	nativeHandler := s.native.Handler()
	mux := http.NewServeMux()
	mux.Handle("/", rest)
	for _, p := range nativeRoutes() {
		mux.Handle(p, nativeHandler)
	}
	if h := s.mcpHTTP(nativeHandler); h != nil {
		mux.Handle("/mcp", h)
	}
	if page != nil {
		for _, p := range ui.Routes() {
			mux.Handle(p, page)
		}
	}
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if draining.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"status":{"error":"Service unavailable: memrank is shutting down"},"time":0}`)
			return
		}
		nativeHandler.ServeHTTP(w, r)
	})
	return mux
}

// explainPage is the explain page's handler, nil when ui.enabled is off.
func explainPage(c ui.Config) (http.Handler, error) {
	if !c.Enabled {
		return nil, nil
	}
	h, err := ui.New()
	if err != nil {
		return nil, err
	}
	return h, nil
}

// resetDemo drops the demo collection and memrank's companions of it, so
// that reportDemo loads the set afresh: otherwise a restarted demo keeps
// what was observed into it and its access counts. It drops nothing when
// the embedder cannot load the demo, which reportDemo then refuses.
func (s *stack) resetDemo(ctx context.Context, w io.Writer) error {
	if d := s.cfg.Embedder.Driver; d != embed.DriverSemantic && d != embed.DriverLocal {
		return nil
	}
	ctx, cancel := context.WithTimeout(s.cfg.Upstream.OwnContext(ctx), time.Minute)
	defer cancel()
	coll := demo.Collection
	dropped := false
	for _, name := range []string{coll, memory.AuditCollection(coll), coll + memory.BackfillSuffix, coll + memory.ReembedSuffix} {
		exists, err := s.source.CollectionExists(ctx, name)
		if err != nil {
			return fmt.Errorf("demo: collection %s: %w", name, err)
		}
		if !exists {
			continue
		}
		if err := s.source.DeleteCollection(ctx, name); err != nil {
			return fmt.Errorf("demo: dropping %s: %w", name, err)
		}
		dropped = dropped || name == coll
	}
	if dropped {
		// The read path may have recognised the old collection.
		s.ranker.CollectionsChanged()
		fmt.Fprintf(w, "memrank: demo: dropped %s to load it afresh\n", coll)
	}
	return nil
}

// reportDemo loads the demo set and says what it did.
func (s *stack) reportDemo(ctx context.Context, w io.Writer) error {
	res, err := s.loadDemo(ctx)
	if err != nil {
		return err
	}
	if res.Existed {
		fmt.Fprintf(w, "memrank: demo: collection %s already exists, kept as it is (--demo-reset loads it afresh)\n", res.Collection)
	} else {
		fmt.Fprintf(w, "memrank: demo: loaded %d memories into %s\n", res.Points, res.Collection)
	}
	return nil
}

// announce says where memrank serves, on stderr and in the log.
func (s *stack) announce(w io.Writer, httpAddr, grpcAddr net.Addr, demoLoaded bool) {
	fmt.Fprintf(w, "memrank: serving %s\n", s.upstreamName)
	routes := "Qdrant REST API, /v1/retrieve, /v1/observe, "
	if s.cfg.MCP.Enabled {
		routes += "/mcp, "
	}
	fmt.Fprintf(w, "memrank: http %s (%s/metrics), grpc %s (Qdrant gRPC API), replica %s\n",
		httpAddr, routes, grpcAddr, s.replicaID)
	fmt.Fprintf(w, "memrank: %s\n", tenancyLine(s.cfg.Tenancy))
	if s.cfg.UI.Enabled {
		fmt.Fprintf(w, "memrank: explain page %s/ui\n", localURL(httpAddr.String(), s.cfg.Listen.TLS.CertFile != ""))
	}
	if demoLoaded {
		fmt.Fprintf(w, "memrank: try:\n  curl -s %s/v1/retrieve -H 'content-type: application/json' \\\n    -d '{\"collection\": \"%s\", \"text\": \"%s\", \"limit\": 3}'\n",
			localURL(httpAddr.String(), s.cfg.Listen.TLS.CertFile != ""), demo.Collection, exampleQuestion())
	}
	s.tel.Settings().Logger.Info("serving", "http", httpAddr.String(), "grpc", grpcAddr.String(),
		"upstream", s.upstreamName, "replica_id", s.replicaID, "tenancy", tenancyLine(s.cfg.Tenancy))
}

// tenancyLine says whether requests are scoped to tenants, and how.
func tenancyLine(c tenancy.Config) string {
	if c.Key == "" {
		return "tenancy off: every caller sees every memory"
	}
	from := "the " + c.Header + " header (trusted: keep memrank behind a gateway that sets it)"
	switch {
	case len(c.APIKeys) > 0:
		from = fmt.Sprintf("%d API keys", len(c.APIKeys))
	case c.JWT.Enabled():
		from = "the " + c.JWT.Claim + " claim of verified tokens"
	}
	return fmt.Sprintf("tenancy on: payload key %s, tenants from %s, %d administrator keys", c.Key, from, len(c.AdminAPIKeys))
}

// browserPages are the paths only browsers load, whose Host the guard
// checks on every request.
func browserPages() []string { return []string{ui.Prefix} }

// nativeRoutes are the native API's paths on the shared mux; /readyz is
// mounted by serve itself so that it fails while draining.
func nativeRoutes() []string {
	return []string{"/v1/", "/healthz", "/livez", "/metrics"}
}

// localURL is a URL for the listen address hostport that works from the
// same machine: an unspecified host (":6333", "0.0.0.0:6333") becomes
// localhost; https when the listener serves TLS.
func localURL(hostport string, https bool) string {
	scheme := "http://"
	if https {
		scheme = "https://"
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return scheme + hostport
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return scheme + net.JoinHostPort(host, port)
}

// exampleQuestion is the first demo question, for the example request.
func exampleQuestion() string {
	if qs := demo.Queries(); len(qs) > 0 {
		return strings.ReplaceAll(qs[0].Text, "'", "")
	}
	return "what editor does Dana use"
}
