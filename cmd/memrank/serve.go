package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/memrank/memrank/config"
	"github.com/memrank/memrank/internal/demo"
	"github.com/memrank/memrank/server/grpcfront"
	"github.com/memrank/memrank/server/restapi"
	"github.com/memrank/memrank/store"
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

func newServeCmd(e *env) *cobra.Command {
	var loadDemo bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the re-ranking proxy: Qdrant's REST and gRPC APIs, the native API, metrics",
		Long: `Serve memrank in front of Qdrant (--upstream, its gRPC port) or, without --upstream, in front
of the embedded store in --data. Qdrant's REST API, memrank's native API (/v1/retrieve),
/healthz, /readyz and /metrics listen on --http; Qdrant's gRPC API on --grpc. Queries on memory
collections are re-ranked; everything else goes to the upstream unchanged.

--demo loads a bundled set of about 200 memories into the collection dana_memories (once: an
existing collection is kept) and prints an example request.

Stops gracefully on SIGINT or SIGTERM: in-flight requests finish, then the access counts are
flushed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := e.loadConfig(cmd.Flags(), serveFlagKeys)
			if err != nil {
				return err
			}
			return serve(cmd.Context(), e, c, loadDemo)
		},
	}
	f := cmd.Flags()
	f.String("http", ":6333", "address of Qdrant's REST API, the native API (/v1) and /metrics")
	f.String("grpc", ":6334", "address of Qdrant's gRPC API")
	f.String("upstream", "", "Qdrant's gRPC address HOST:PORT (empty: the embedded store in --data)")
	f.String("upstream-rest", "", "Qdrant's REST base URL, for the REST routes memrank does not translate")
	f.String("upstream-api-key", "", "memrank's own API key for the upstream (or MEMRANK_UPSTREAM__API_KEY)")
	f.String("replica-id", "", "this replica's key in access_counts (default: the hostname)")
	f.String("data", "./memrank-data", "data directory of the embedded store")
	f.BoolVar(&loadDemo, "demo", false, "load the bundled demo memories into dana_memories and print an example request")
	return cmd
}

// serve runs memrank until ctx ends, then shuts down in order: stop taking
// requests, let in-flight ones finish, flush the access counts, close the
// upstream.
func serve(ctx context.Context, e *env, c config.Config, loadDemo bool) (err error) {
	rest, err := upstreamREST(c.Upstream.REST)
	if err != nil {
		return err
	}
	s, err := newStack(ctx, c, e.stderr, true)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		err = errors.Join(err, s.close(cctx))
	}()
	tel := s.tel.Settings()

	httpLis, err := net.Listen("tcp", c.Listen.HTTP)
	if err != nil {
		return usageError{fmt.Errorf("--http %s: %w", c.Listen.HTTP, err)}
	}
	defer httpLis.Close()
	grpcLis, err := net.Listen("tcp", c.Listen.GRPC)
	if err != nil {
		return usageError{fmt.Errorf("--grpc %s: %w", c.Listen.GRPC, err)}
	}
	defer grpcLis.Close()

	if loadDemo {
		res, err := s.loadDemo(ctx)
		if err != nil {
			return err
		}
		if res.Existed {
			fmt.Fprintf(e.stderr, "memrank: demo: collection %s already exists, kept as it is\n", res.Collection)
		} else {
			fmt.Fprintf(e.stderr, "memrank: demo: loaded %d memories into %s\n", res.Points, res.Collection)
		}
	}

	healthSrv := health.NewServer()
	front, err := grpcfront.New(grpcfront.Config{
		Upstream:  s.upstream,
		Ranker:    s.ranker,
		Tenancy:   s.policy,
		Health:    healthSrv,
		Telemetry: tel,
	})
	if err != nil {
		return usageError{err}
	}
	// The REST front reaches data only through memrank's own gRPC front, in
	// process, so re-ranking, tenancy and forwarding happen in one place.
	frontIP := grpcfront.ServeInProcess(front)
	defer frontIP.Close(shutdownGrace)
	frontConn, err := grpcfront.DialInProcess(ctx, frontIP, grpcfront.ClientTelemetry(tel))
	if err != nil {
		return err
	}
	defer frontConn.Close()
	var forward []string
	if c.Tenancy.Header != "" {
		forward = append(forward, c.Tenancy.Header)
	}
	restHandler, err := restapi.New(restapi.Config{
		Points:         qdrant.NewPointsClient(frontConn),
		Collections:    qdrant.NewCollectionsClient(frontConn),
		Qdrant:         qdrant.NewQdrantClient(frontConn),
		UpstreamREST:   rest,
		ForwardHeaders: forward,
		CallTimeout:    c.Upstream.Timeout,
		Telemetry:      tel,
	})
	if err != nil {
		return usageError{err}
	}

	// While draining, /readyz fails so that load balancers stop sending
	// requests before the listeners close.
	var draining atomic.Bool
	nativeHandler := s.native.Handler()
	mux := http.NewServeMux()
	mux.Handle("/", restHandler)
	for _, p := range nativeRoutes() {
		mux.Handle(p, nativeHandler)
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
	httpSrv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          nil,
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	s.start(runCtx)

	var wg sync.WaitGroup
	errc := make(chan error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := httpSrv.Serve(httpLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("http: %w", err)
			stop()
		}
	}()
	go func() {
		defer wg.Done()
		if err := store.Serve(runCtx, front, grpcLis, shutdownGrace); err != nil {
			errc <- fmt.Errorf("grpc: %w", err)
			stop()
		}
	}()

	fmt.Fprintf(e.stderr, "memrank: serving %s\n", s.upstreamName)
	fmt.Fprintf(e.stderr, "memrank: http %s (Qdrant REST API, /v1/retrieve, /v1/observe, /metrics), grpc %s (Qdrant gRPC API), replica %s\n",
		httpLis.Addr(), grpcLis.Addr(), s.replicaID)
	if loadDemo {
		fmt.Fprintf(e.stderr, "memrank: try:\n  curl -s %s/v1/retrieve -H 'content-type: application/json' \\\n    -d '{\"collection\": \"%s\", \"text\": \"%s\", \"limit\": 3}'\n",
			localURL(httpLis.Addr()), demo.Collection, exampleQuestion())
	}
	tel.Logger.Info("serving", "http", httpLis.Addr().String(), "grpc", grpcLis.Addr().String(),
		"upstream", s.upstreamName, "replica_id", s.replicaID)

	<-runCtx.Done()
	draining.Store(true)
	healthSrv.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	tel.Logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	herr := httpSrv.Shutdown(sctx)
	if herr != nil {
		herr = fmt.Errorf("http: shutdown: %w", herr)
		_ = httpSrv.Close()
	}
	wg.Wait()
	close(errc)
	errs := []error{herr}
	for err := range errc {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// nativeRoutes are the native API's paths on the shared mux; /readyz is
// mounted by serve itself so that it fails while draining.
func nativeRoutes() []string {
	return []string{"/v1/", "/healthz", "/livez", "/metrics"}
}

// localURL is an http URL for addr that works from the same machine: an
// unspecified host (":6333") becomes localhost.
func localURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// exampleQuestion is the first demo question, for the example request.
func exampleQuestion() string {
	if qs := demo.Queries(); len(qs) > 0 {
		return strings.ReplaceAll(qs[0].Text, "'", "")
	}
	return "what editor does Dana use"
}
