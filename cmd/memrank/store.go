package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"github.com/spf13/cobra"

	"github.com/memrank/memrank/admission"
	"github.com/memrank/memrank/internal/bench/loadbench"
	"github.com/memrank/memrank/internal/bench/observebench"
	"github.com/memrank/memrank/internal/bench/proxybench"
	"github.com/memrank/memrank/internal/bench/statsbench"
	"github.com/memrank/memrank/internal/bench/storebench"
	"github.com/memrank/memrank/server/hostguard"
	"github.com/memrank/memrank/server/restapi"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/telemetry/settings"
	"github.com/memrank/memrank/upstream"
)

func newQdrantCompatCmd(e *env) *cobra.Command {
	var f storeFlags
	cmd := &cobra.Command{
		Use:   "qdrant-compat",
		Short: "Serve memrank's embedded store over Qdrant's gRPC protocol, and REST with --http (no re-ranking)",
		Long: `Serve the embedded store in --data over Qdrant's gRPC protocol on --grpc and, with --http,
over Qdrant's REST API too, for tests and local work with any Qdrant client. It is memrank's own
engine, not Qdrant: its HealthCheck title (and GET / on --http) says so. Nothing is re-ranked:
the REST API is memrank's REST front wired straight to the store, with no ranker and no tenancy,
so both protocols answer exactly what the store holds. Every acknowledged write is committed to
disk first (wait=false behaves like wait=true). Stops gracefully on SIGINT or SIGTERM: calls in
flight on either listener finish first.

The REST port refuses requests from other web sites' pages, and (without an API key) requests
by a host name other than localhost, an IP address or one of --allowed-hosts, as a DNS
rebinding page would send them. Clients that reach it by a name (a container's service name,
or serve's --upstream-rest http://store:6333) need that name in --allowed-hosts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serveStore(cmd.Context(), e, f)
		},
	}
	cmd.Flags().StringVar(&f.data, "data", defaultConfig().Store.DataDir, "data directory of the embedded store")
	cmd.Flags().StringVar(&f.grpc, "grpc", "127.0.0.1:6334", "address to serve Qdrant's gRPC protocol on")
	cmd.Flags().StringVar(&f.http, "http", "", "address to serve Qdrant's REST API on (empty: no REST)")
	cmd.Flags().StringSliceVar(&f.allowedHosts, "allowed-hosts", nil,
		`host names, besides localhost and IP addresses, by which --http may be reached ("*": any; ".example.com": every name under it)`)
	return cmd
}

// storeFlags are qdrant-compat's flags.
type storeFlags struct {
	data, grpc, http string
	allowedHosts     []string
}

// check refuses --allowed-hosts entries that are not host names, and the
// flag without --http, whose port is the only one it guards.
func (f storeFlags) check() error {
	if len(f.allowedHosts) == 0 {
		return nil
	}
	if f.http == "" {
		return usageError{errors.New("--allowed-hosts: only with --http (it guards the REST port)")}
	}
	for _, h := range f.allowedHosts {
		if err := hostguard.ValidHost(h); err != nil {
			return usageError{fmt.Errorf("--allowed-hosts: %w", err)}
		}
	}
	if err := hostguard.ValidAny(f.allowedHosts); err != nil {
		return usageError{fmt.Errorf("--allowed-hosts: %w", err)}
	}
	return nil
}

// warnOpen says what an open store (no key) leaves exposed, and that a
// REST port reachable from other hosts answers no names it was not given.
func (f storeFlags) warnOpen(w io.Writer, auth store.Auth) {
	if auth.Enabled() {
		return
	}
	for _, addr := range []string{f.grpc, f.http} {
		if addr != "" && !loopback(addr) {
			fmt.Fprintf(w, "memrank qdrant-compat: WARNING: open (no $MEMRANK_STORE__API_KEY) on %s, which is not a loopback address: anyone who reaches it can read and change every collection\n", addr)
		}
	}
	if f.http != "" && !loopback(f.http) && len(f.allowedHosts) == 0 {
		fmt.Fprintf(w, "memrank qdrant-compat: WARNING: --http %s answers requests by IP address or localhost only: give the names clients use (a service name, serve's --upstream-rest host) in --allowed-hosts\n", f.http)
	}
}

// serveStore is qdrant-compat: the store in f.data on f.grpc and, unless
// f.http is empty, its REST API on f.http, until ctx ends; then both stop
// accepting, calls in flight finish, the store closes.
func serveStore(ctx context.Context, e *env, f storeFlags) (err error) {
	if err := f.check(); err != nil {
		return err
	}
	life := lifecycle{grace: defaultConfig().Shutdown.Grace}
	defer func() { err = errors.Join(err, life.shutdown(context.Background())) }()
	db, err := store.Open(f.data, store.Options{})
	if err != nil {
		return err
	}
	life.opened("store", closing(db.Close))
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	fail := func(err error) { stop(err) }

	lis, err := net.Listen("tcp", f.grpc)
	if err != nil {
		return usageError{fmt.Errorf("--grpc %s: %w", f.grpc, err)}
	}
	life.opened("--grpc listener", closingListener(lis))
	// The store sheds load as serve does, with the default limits.
	grpcLimits, err := admission.New(admission.DefaultConfig(), "grpc", settings.Settings{})
	if err != nil {
		return err
	}
	httpLimits, err := admission.New(admission.DefaultConfig(), "http", settings.Settings{})
	if err != nil {
		return err
	}
	// Qdrant's own model: open unless a key is set (in the environment,
	// never on the command line, where ps shows it).
	auth := store.Auth{APIKey: lookupEnv(e.environ, "MEMRANK_STORE__API_KEY"), ReadOnlyAPIKey: lookupEnv(e.environ, "MEMRANK_STORE__READ_ONLY_API_KEY")}
	if err := auth.Validate(); err != nil {
		return usageError{fmt.Errorf("$MEMRANK_STORE__READ_ONLY_API_KEY: %w", err)}
	}
	f.warnOpen(e.stderr, auth)
	opts := append(grpcLimits.ServerOptions(), auth.ServerOptions()...)
	servers := together{&grpcServer{srv: store.NewServer(db, opts...), lis: grpcLimits.Listener(lis), fail: fail}}
	var httpLis net.Listener
	if f.http != "" {
		if httpLis, err = net.Listen("tcp", f.http); err != nil {
			return usageError{fmt.Errorf("--http %s: %w", f.http, err)}
		}
		life.opened("--http listener", closingListener(httpLis))
		h, err := storeREST(&life, db, auth)
		if err != nil {
			return err
		}
		// On a port open to anyone who can name it, a rebinding page can
		// name it too: the same guard as serve's HTTP port.
		guard, err := hostguard.New(hostguard.Config{AllowedHosts: f.allowedHosts, Open: !auth.Enabled(),
			Setting: "--allowed-hosts", Logger: slog.New(slog.NewTextHandler(e.stderr, nil))})
		if err != nil {
			return err // f.check refused bad names already
		}
		srv := &http.Server{Handler: httpLimits.Handler(guard.Handler(h)), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
		servers = append(servers, &httpServer{srv: srv, lis: httpLimits.Listener(httpLis), fail: fail})
	}
	if err := life.start(runCtx, "servers", servers); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "memrank qdrant-compat: serving %s on %s (gRPC)\n", f.data, lis.Addr())
	if httpLis != nil {
		fmt.Fprintf(e.stderr, "memrank qdrant-compat: serving %s on %s (REST)\n", f.data, httpLis.Addr())
	}
	<-runCtx.Done()
	if cause := context.Cause(runCtx); !errors.Is(cause, context.Canceled) {
		return cause
	}
	return nil
}

// storeREST is the REST front wired straight to the store: it reaches the
// store the way serve's reaches memrank's gRPC front, over the real gRPC
// stack in process, so both protocols share one engine and one set of
// conversions.
func storeREST(life *lifecycle, db *store.DB, auth store.Auth) (http.Handler, error) {
	// The REST front forwards each caller's api-key and authorization to
	// the store, whose keys it checks like the gRPC port's.
	ip := upstream.ServeInProcess(store.NewServer(db, auth.ServerOptions()...))
	life.opened("store, in process", ip.Shutdown)
	client, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		return nil, fmt.Errorf("in-process store client: %w", err)
	}
	life.opened("store client", closing(client.Close))
	return restapi.New(restapi.Config{
		Points:      client.GetPointsClient(),
		Collections: client.GetCollectionsClient(),
		Qdrant:      client.GetQdrantClient(),

		EmbeddedStore: true,
	})
}

func newBenchCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure memrank's speed and memory on this machine",
	}
	var o storebench.Options
	st := &cobra.Command{
		Use:   "store",
		Short: "Exact search, upsert throughput and memory of the embedded store",
		Long: `Load random cosine vectors into a temporary embedded store and report: exact search p50/p99
unfiltered and with a keyword filter on an indexed field (through the engine and through the
in-process gRPC path), upsert throughput, Go heap after loading and a GC against the raw vector
bytes, RSS, and the time to reopen the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return usageError{err}
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			rep, err := storebench.Run(ctx, o)
			if err != nil {
				return err
			}
			_, err = rep.WriteTo(e.stdout)
			return err
		},
	}
	d := storebench.DefaultOptions()
	st.Flags().IntVar(&o.Points, "points", d.Points, "points to load")
	st.Flags().IntVar(&o.Dim, "dim", d.Dim, "vector dimensions")
	st.Flags().IntVar(&o.Queries, "queries", d.Queries, "timed queries per scenario")
	st.Flags().IntVar(&o.Limit, "limit", d.Limit, "top-k of each query")
	st.Flags().StringVar(&o.Dir, "dir", "", "data directory (default: a temporary one, removed afterwards)")
	cmd.AddCommand(st, newBenchProxyCmd(e), newBenchObserveCmd(e), newBenchLoadCmd(e), newBenchStatsCmd(e), newBenchBackfillCmd(e))
	cmd.AddCommand(newBenchConsolidateCmd(e))
	return cmd
}

func newBenchLoadCmd(e *env) *cobra.Command {
	o := loadbench.DefaultOptions()
	var soak bool
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Open-loop load against a running memrank: capacity, goodput and shedding under overload",
		Long: `Find the target's capacity (closed loop: --in-flight queries in flight for --capacity-for), then
send queries on a fixed schedule at --multiple times that (or --rate per second) for --duration,
whatever the answers, as many independent clients would. Reports goodput, what was shed
(ResourceExhausted), latency of successes and of refusals, the resident memory of each --pid
(Linux) and the target's goroutines from --metrics. --soak is 70% of capacity for 10 minutes,
for memory growth. --setup N first creates --collection with N random points.`,
		Example: `  memrank qdrant-compat --data /tmp/store --grpc 127.0.0.1:7334 &
  memrank serve --upstream 127.0.0.1:7334 &
  memrank bench load --grpc 127.0.0.1:6334 --setup 10000 --metrics http://127.0.0.1:6333/metrics --pid $(pgrep -f 'memrank serve')`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if soak {
				o.Multiple, o.Rate, o.Duration = 0.7, 0, 10*time.Minute
			}
			if err := o.Validate(); err != nil {
				return usageError{err}
			}
			rep, err := loadbench.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			_, err = rep.WriteTo(e.stdout)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.GRPC, "grpc", "127.0.0.1:6334", "the target's gRPC address")
	f.StringVar(&o.REST, "rest", "", "the target's REST base URL: queries go there (set-up still over --grpc)")
	f.StringVar(&o.MetricsURL, "metrics", "", "the target's /metrics URL, for its goroutines")
	f.IntSliceVar(&o.Pids, "pid", nil, "processes whose resident memory is sampled (repeatable)")
	f.StringVar(&o.Collection, "collection", o.Collection, "collection queried")
	f.IntVar(&o.Setup, "setup", 0, "create the collection with this many random memories first")
	f.BoolVar(&o.Plain, "plain", false, "with --setup: plain points, not memories (memrank serves them raw)")
	f.IntVar(&o.Dim, "dim", o.Dim, "vector dimensions")
	f.IntVar(&o.Limit, "limit", o.Limit, "top-k of each query")
	f.IntVar(&o.InFlight, "in-flight", o.InFlight, "queries in flight in the capacity phase")
	f.DurationVar(&o.CapacityFor, "capacity-for", o.CapacityFor, "length of the capacity phase")
	f.Float64Var(&o.Rate, "rate", 0, "open-loop queries per second (0: --multiple x capacity)")
	f.Float64Var(&o.Multiple, "multiple", o.Multiple, "open-loop rate as a multiple of the capacity")
	f.DurationVar(&o.Duration, "duration", o.Duration, "length of the open-loop phase")
	f.IntVar(&o.MaxOutstanding, "max-outstanding", o.MaxOutstanding, "the generator's bound on queries awaiting an answer")
	f.BoolVar(&soak, "soak", false, "70% of capacity for 10 minutes")
	return cmd
}

func newBenchProxyCmd(e *env) *cobra.Command {
	var o proxybench.Options
	var flush bool
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "What memrank adds to a query: latency and throughput against the store direct",
		Long: `Load memories into a temporary embedded store served on loopback TCP, serve memrank's gRPC
front over it, and query both with the official go-client in the same run: the added latency
p50/p99 with one request in flight (direct and proxied queries alternate, so both see the same
machine), and the proxied/direct QPS ratio with --in-flight requests in flight. --rest measures
the REST paths instead, as JSON clients (the JS client, LangChain.js) take them: the store's REST
front as qdrant-compat serves it, against memrank's REST front as serve runs it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.NoFlush = !flush
			if err := o.Validate(); err != nil {
				return usageError{err}
			}
			rep, err := proxybench.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			_, err = rep.WriteTo(e.stdout)
			return err
		},
	}
	d := proxybench.DefaultOptions()
	cmd.Flags().IntVar(&o.Memories, "memories", d.Memories, "memories loaded")
	cmd.Flags().IntVar(&o.Dim, "dim", d.Dim, "vector dimensions")
	cmd.Flags().IntVar(&o.Limit, "limit", d.Limit, "top-k of each query")
	cmd.Flags().IntVar(&o.Oversample, "oversample", d.Oversample, "the ranker's oversampling")
	cmd.Flags().IntVar(&o.InFlight, "in-flight", d.InFlight, "requests in flight in the throughput phase")
	cmd.Flags().DurationVar(&o.Duration, "duration", d.Duration, "measuring time, load excluded")
	cmd.Flags().StringVar(&o.Dir, "dir", "", "data directory (default: a temporary one, removed afterwards)")
	cmd.Flags().BoolVar(&o.TelemetryOff, "telemetry-off", false, "run memrank without metrics or tracing (default: serve's telemetry)")
	cmd.Flags().BoolVar(&flush, "flush", true, "flush recorded accesses to the store while measuring (--flush=false: reads without the flush's writes)")
	cmd.Flags().BoolVar(&o.REST, "rest", false, "query the REST paths (JSON over loopback HTTP) instead of gRPC")
	return cmd
}

func newBenchObserveCmd(e *env) *cobra.Command {
	var o observebench.Options
	var where observebench.Embedded
	cmd := &cobra.Command{
		Use:   "observe",
		Short: "Write-path latency and how often a mixed stream reaches the LLM judge",
		Long: `Load --memories memories into a temporary embedded store (fsync on, as in production) and
time --observations observations against them, half repeats and half new texts, with a local
embedder (--embedder) and no judge: p50, p99 and mean, where they go (each kind of upstream
call the write path makes: how many, p50, time per observation), against the disk's single-commit floor
measured in the same run (a tiny fsync'd commit in the store's directory), the store's own
commits in the timed phase (how many per observation, the pages and writes each made, their
mean time), the goal p50 <= floor x 2 + 0.3 ms, and what the calls every observation makes
cost at their medians (its tier-1 look-up plus two writes at the store floor). Then --writers writers observe at once into the same collection:
observations per second. Then run a mixed fixture of --mix observations (new
facts, repeats, paraphrases, near misses and contradictions) on a fresh collection with a
counting judge, and report how many reached it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Memories < 0 || o.Observations < 0 || o.MixSize < 0 {
				return usageError{errors.New("--memories, --observations and --mix must not be negative")}
			}
			res, err := observebench.RunEmbedded(cmd.Context(), where, o)
			if err != nil {
				return err
			}
			_, err = res.WriteTo(e.stdout)
			return err
		},
	}
	d := observebench.DefaultOptions()
	cmd.Flags().IntVar(&o.Memories, "memories", d.Memories, "memories stored before timing")
	cmd.Flags().IntVar(&o.Observations, "observations", d.Observations, "timed observations")
	cmd.Flags().IntVar(&o.MixSize, "mix", d.MixSize, "observations of the judge fixture")
	cmd.Flags().StringVar(&o.Embedder, "embedder", d.Embedder, "local embedder: semantic or local (lexical)")
	cmd.Flags().BoolVar(&o.ObservationIDs, "observation-ids", false, "send each observation with an observation_id (retry-safe callers): adds the look-up of earlier outcomes")
	cmd.Flags().IntVar(&o.Writers, "writers", d.Writers, "concurrent writers of the throughput phase (negative: none)")
	cmd.Flags().StringVar(&where.Dir, "dir", "", "data directory (default: a temporary one, removed afterwards)")
	cmd.Flags().BoolVar(&where.NoSync, "no-sync", false, "skip fsync on each commit (not durable): shows the write path's own cost")
	return cmd
}

func newBenchStatsCmd(e *env) *cobra.Command {
	var o statsbench.Options
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "/v1/stats latency: counted from payload indexes against a scan of every memory",
		Long: `Load --memories memories (mixed types, ages and confidences, a tenth superseded, tiers as a
consolidation stores them) into a temporary embedded store and time the write path's stats, as
/v1/stats answers them: counted from payload indexes (p50, p99 of --queries calls), and with
?exact=true, a scan that scores every memory (mean of --scans).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return usageError{err}
			}
			rep, err := statsbench.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			_, err = rep.WriteTo(e.stdout)
			return err
		},
	}
	d := statsbench.DefaultOptions()
	cmd.Flags().IntVar(&o.Memories, "memories", d.Memories, "memories loaded")
	cmd.Flags().IntVar(&o.Queries, "queries", d.Queries, "timed counted calls")
	cmd.Flags().IntVar(&o.Scans, "scans", d.Scans, "timed scans")
	cmd.Flags().StringVar(&o.Dir, "dir", "", "data directory (default: a temporary one, removed afterwards)")
	return cmd
}
