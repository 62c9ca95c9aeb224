// Package proxybench measures what memrank's gRPC front costs a caller:
// the same queries, in the same run, sent by the official go-client
// directly to the embedded store served on loopback TCP, and through
// memrank (the front, the ranker with oversampling, dedup and gating, and
// the access recorder flushing to the store). With Options.REST it
// measures the REST paths instead: the store's REST front against
// memrank's, queried as JSON over loopback HTTP.
//
// It reports the latency memrank adds at the median and the 99th
// percentile with one request in flight, and the throughput of each path
// with several in flight. The same code serves `memrank bench proxy` (Run)
// and `go test -bench` (Load, then Fixture.Query).
package proxybench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"

	"github.com/memrank/memrank/admission"
	"github.com/memrank/memrank/internal/bench/randvec"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantwire"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/server/grpcfront"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/telemetry"
	"github.com/memrank/memrank/telemetry/settings"
	"github.com/memrank/memrank/upstream"
)

// Goals of the issue for this 2-core machine.
const (
	GoalAddedP50 = time.Millisecond
	GoalAddedP99 = 3 * time.Millisecond
	// GoalScoreGateSort is issue #5's goal for score + gate + sort on the
	// reference read (40 candidates), per candidate.
	GoalScoreGateSort = 250 * time.Nanosecond
)

// Collection is the benchmark's collection.
const Collection = "proxybench"

// Options sizes a run. The zero value is the reference run of the issue.
type Options struct {
	Memories   int           // points loaded (default 10000)
	Dim        int           // vector dimension (default 384)
	Limit      int           // top-k of every query (default 10)
	Oversample int           // the ranker's oversampling (default 4)
	InFlight   int           // concurrent requests of the throughput phase (default 8)
	Queries    int           // distinct query vectors, cycled (default 256)
	Duplicates float64       // share of memories that restate an earlier one (default 0.05)
	Duration   time.Duration // total measuring time, load excluded (default 30s)
	Seed       uint64        // default 1
	Dir        string        // data directory; empty: a temporary one, removed by Close
	Logger     *slog.Logger  // nil: discard
	// TelemetryOff runs memrank with no-op tracing and metrics, for
	// comparison; by default it has serve's: Prometheus metrics, and
	// tracing as serve sets it up without an OTLP endpoint.
	TelemetryOff bool
	// NoFlush leaves the access recorder unstarted: queries still record
	// accesses, but nothing flushes them to the store while measuring, so
	// a run with and one without it show what the flush's writes cost reads.
	NoFlush bool
	// REST measures the REST paths instead of gRPC (see restPaths): the
	// same queries as JSON over loopback HTTP.
	REST bool
}

// Validate reports a bad option.
func (o Options) Validate() error {
	switch {
	case o.Memories < 0, o.Dim < 0, o.Limit < 0, o.Oversample < 0, o.InFlight < 0, o.Queries < 0, o.Duration < 0:
		return errors.New("proxybench: sizes and durations must not be negative")
	case o.Duplicates < 0 || o.Duplicates >= 1 || math.IsNaN(o.Duplicates):
		return errors.New("proxybench: Duplicates must be in [0, 1)")
	case o.Dim > 65536:
		return errors.New("proxybench: Dim must be at most 65536")
	case o.Oversample > 100:
		return errors.New("proxybench: Oversample must be at most 100")
	}
	return nil
}

// DefaultOptions are the options a zero Options stands for.
func DefaultOptions() Options { return Options{}.withDefaults() }

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Memories, 10_000)
	def(&o.Dim, 384)
	def(&o.Limit, 10)
	def(&o.Oversample, 4)
	def(&o.InFlight, 8)
	def(&o.Queries, 256)
	if o.Duplicates == 0 {
		o.Duplicates = 0.05
	}
	if o.Duration == 0 {
		o.Duration = 30 * time.Second
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Fixture is a loaded store served on loopback TCP and memrank's front
// over it, with a go-client on each.
type Fixture struct {
	opts    Options
	dir     string
	ownDir  bool
	queries [][]float32
	load    time.Duration

	db        *store.DB
	cancel    context.CancelFunc
	serving   sync.WaitGroup
	serveErrs chan error
	upstream  *grpc.ClientConn
	source    *qdrant.Client
	tel       *telemetry.Telemetry
	recorder  *rank.Recorder
	ranker    *rank.Ranker
	rest      *restPaths // Options.REST

	// Direct reaches the store, Proxied memrank; both are the official
	// go-client over loopback TCP.
	Direct, Proxied *qdrant.Client
	closeOnce       sync.Once
	closeErr        error
}

// Load builds a fixture: the store loaded with memories, served on
// loopback TCP, and memrank's front (ranker, recorder) served beside it.
// The caller must Close it.
func Load(ctx context.Context, opts Options) (*Fixture, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	f := &Fixture{opts: opts, dir: opts.Dir, serveErrs: make(chan error, 2)}
	if f.dir == "" {
		d, err := os.MkdirTemp("", "proxybench-")
		if err != nil {
			return nil, fmt.Errorf("proxybench: %w", err)
		}
		f.dir, f.ownDir = d, true
	}
	if err := f.start(ctx); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

func (f *Fixture) start(ctx context.Context) error {
	var err error
	if f.db, err = store.Open(f.dir, store.Options{}); err != nil {
		return fmt.Errorf("proxybench: %w", err)
	}
	start := time.Now()
	if err := f.loadMemories(ctx); err != nil {
		return err
	}
	f.load = time.Since(start)

	sctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	storeAddr, err := f.serve(sctx, store.NewServer(f.db), nil)
	if err != nil {
		return err
	}
	tel, err := f.telemetry(ctx)
	if err != nil {
		return err
	}
	// The upstream connections as serve opens them for a Qdrant at
	// upstream.grpc (plain text).
	clientTel := upstream.ClientTelemetry(tel)
	if f.upstream, err = upstream.Dial(ctx, storeAddr, clientTel); err != nil {
		return err
	}
	scfg, err := upstream.ClientConfig(storeAddr, clientTel)
	if err != nil {
		return err
	}
	if f.source, err = qdrant.NewClient(scfg); err != nil {
		return fmt.Errorf("proxybench: source client: %w", err)
	}
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		return err
	}
	f.recorder, err = rank.NewRecorder(f.source, rank.RecorderConfig{
		ReplicaID: "proxybench", Keys: memory.DefaultKeys(), Telemetry: tel,
	})
	if err != nil {
		return err
	}
	if !f.opts.NoFlush {
		_ = f.recorder.Start(sctx)
	}
	f.ranker, err = rank.New(qdrantwire.NewClient(f.source), rank.Config{Codec: codec, Oversample: f.opts.Oversample, Recorder: f.recorder,
		Telemetry: tel, CandidateCache: rank.DefaultConfig().CandidateCache}) // as serve runs it
	if err != nil {
		return err
	}
	front, frontAddr, err := f.serveFront(sctx, tel)
	if err != nil {
		return err
	}
	if f.opts.REST {
		if err := f.startREST(sctx, front, tel); err != nil {
			return err
		}
	}
	if f.Direct, err = newClient(storeAddr); err != nil {
		return err
	}
	if f.Proxied, err = newClient(frontAddr); err != nil {
		return err
	}
	return nil
}

// telemetry is serve's telemetry (telemetry.Setup on the default section:
// no OTLP endpoint), or none with TelemetryOff.
func (f *Fixture) telemetry(ctx context.Context) (settings.Settings, error) {
	if f.opts.TelemetryOff {
		return settings.Settings{Logger: f.opts.Logger}.WithDefaults(), nil
	}
	tel, err := telemetry.Setup(ctx, telemetry.DefaultConfig(), nil)
	if err != nil {
		return settings.Settings{}, fmt.Errorf("proxybench: %w", err)
	}
	f.tel = tel
	set := tel.Settings()
	set.Logger = f.opts.Logger
	return set, nil
}

// serveFront serves memrank's gRPC front as serve does on its gRPC port:
// the admission limits' server options and listener, the default limits'
// message size and first-message timeout.
func (f *Fixture) serveFront(ctx context.Context, tel settings.Settings) (*grpc.Server, string, error) {
	limits := admission.DefaultConfig()
	lim, err := admission.New(limits, "grpc", tel)
	if err != nil {
		return nil, "", err
	}
	front, err := grpcfront.New(grpcfront.Config{
		Upstream:            f.upstream,
		Ranker:              f.ranker,
		MaxMessageSize:      limits.MaxBodyBytes,
		FirstMessageTimeout: limits.BodyTimeout,
		ServerOptions:       lim.ServerOptions(),
		Telemetry:           tel,
	})
	if err != nil {
		return nil, "", err
	}
	addr, err := f.serve(ctx, front, lim.Listener)
	return front, addr, err
}

// newClient is an agent's client: go-client's defaults, one connection,
// none of the dial options memrank gives its own upstream connections (so
// tuning those never flatters the direct path).
func newClient(addr string) (*qdrant.Client, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("proxybench: %w", err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("proxybench: port of %s: %w", addr, err)
	}
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, SkipCompatibilityCheck: true, PoolSize: 1})
	if err != nil {
		return nil, fmt.Errorf("proxybench: client: %w", err)
	}
	return c, nil
}

// serve serves srv on a loopback port until ctx ends, through wrap (nil:
// none).
func (f *Fixture) serve(ctx context.Context, srv *grpc.Server, wrap func(net.Listener) net.Listener) (string, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("proxybench: listen: %w", err)
	}
	addr := lis.Addr().String()
	if wrap != nil {
		lis = wrap(lis)
	}
	f.serving.Add(1)
	go func() {
		defer f.serving.Done()
		if err := upstream.Serve(ctx, srv, lis, 5*time.Second); err != nil {
			f.serveErrs <- err
		}
	}()
	return addr, nil
}

var (
	words = strings.Fields("user prefers dark mode tea coffee meetings mornings python golang rust editor vim emacs " +
		"travels berlin paris tokyo works remote office weekly standup allergic peanuts cat dog runs marathon " +
		"reads novels jazz classical deadline friday project atlas budget review quarterly birthday march")
	types    = []string{scoring.TypeFact, scoring.TypePreference, scoring.TypeEvent, scoring.TypeEntity, scoring.TypeRelation}
	sources  = []string{scoring.SourceDirect, scoring.SourceConfirmed, scoring.SourceStrongInference, scoring.SourceWeakInference, scoring.SourceSpeculation}
	replicas = []string{"replica-a", "replica-b", "replica-c"}
)

// loadMemories writes realistic memory payloads (varied types, sources,
// ages, access counts and observations; some restating earlier memories
// with a near-identical vector) through the engine API.
func (f *Fixture) loadMemories(ctx context.Context) error {
	o := f.opts
	_, _ = f.db.DeleteCollection(ctx, Collection) // a reused Dir starts over
	if err := f.db.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: Collection,
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(o.Dim), Distance: qdrant.Distance_Cosine})}); err != nil {
		return fmt.Errorf("proxybench: create collection: %w", err)
	}
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(o.Seed, 0xbe4c))
	now := time.Now()
	vectors := make([][]float32, 0, o.Memories)
	texts := make([]string, 0, o.Memories)
	const batch = 500
	for done := 0; done < o.Memories; done += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(batch, o.Memories-done)
		req := &qdrant.UpsertPoints{CollectionName: Collection, Points: make([]*qdrant.PointStruct, n)}
		for i := range n {
			id := done + i
			var vec []float32
			var text string
			if id > 0 && r.Float64() < o.Duplicates {
				j := r.IntN(id)
				vec, text = jitter(r, vectors[j], 0.05), texts[j]
				if r.IntN(2) == 0 {
					text = strings.ToUpper(text[:1]) + text[1:] + "." // same text_hash after normalising
				}
			} else {
				vec, text = randvec.Unit(r, o.Dim), sentence(r)
			}
			vectors, texts = append(vectors, vec), append(texts, text)
			created := now.Add(-time.Duration(r.Float64() * 365 * 24 * float64(time.Hour)))
			m := &memory.Memory{
				Text:           text,
				MemoryType:     types[r.IntN(len(types))],
				Source:         sources[r.IntN(len(sources))],
				ExtractorModel: "gpt-4o-mini",
				Grounding:      scoring.Grounding(r.IntN(3)),
				Observations:   r.IntN(6),
				CreatedAt:      created,
				LastObservedAt: created.Add(time.Duration(r.Float64() * float64(now.Sub(created)))),
				SessionIDs:     []string{fmt.Sprintf("s-%d", r.IntN(500))},
				Retrievable:    r.IntN(50) != 0,
			}
			if r.IntN(3) == 0 {
				m.HasLogprob, m.ExtractorLogprob = true, -r.Float64()
			}
			for _, rep := range replicas[:r.IntN(len(replicas)+1)] {
				m.AccessCounts = append(m.AccessCounts, memory.AccessCount{Replica: rep, Count: int64(r.IntN(40))})
			}
			if len(m.AccessCounts) > 0 {
				m.LastAccessedAt = now.Add(-time.Duration(r.Float64() * 30 * 24 * float64(time.Hour)))
			}
			if r.IntN(100) == 0 {
				m.Tier = scoring.TierArchived
			}
			req.Points[i] = &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(id + 1)), Vectors: qdrant.NewVectorsDense(vec), Payload: codec.Encode(m)}
		}
		if _, err := f.db.Upsert(ctx, req); err != nil {
			return fmt.Errorf("proxybench: upsert: %w", err)
		}
	}
	// Queries land near stored memories, as an agent's do.
	f.queries = make([][]float32, o.Queries)
	for i := range f.queries {
		f.queries[i] = jitter(r, vectors[r.IntN(len(vectors))], 0.3)
	}
	return nil
}

func sentence(r *rand.Rand) string {
	n := 6 + r.IntN(10)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[r.IntN(len(words))]
	}
	return strings.Join(ws, " ")
}

func jitter(r *rand.Rand, base []float32, amount float64) []float32 {
	v := make([]float32, len(base))
	scale := float32(amount / math.Sqrt(float64(len(base))))
	for i := range v {
		v[i] = base[i] + scale*float32(r.NormFloat64())
	}
	return randvec.Normalise(v)
}

// Query runs query i (cycled) through c, as an agent would: limit, payload.
func (f *Fixture) Query(ctx context.Context, c *qdrant.Client, i int) error {
	q := f.queries[i%len(f.queries)]
	pts, err := c.Query(ctx, &qdrant.QueryPoints{
		CollectionName: Collection,
		Query:          qdrant.NewQueryDense(q),
		Limit:          qdrant.PtrOf(uint64(f.opts.Limit)),
		WithPayload:    qdrant.NewWithPayload(true),
	})
	if err != nil {
		return err
	}
	if len(pts) == 0 {
		return errors.New("proxybench: a query returned no points")
	}
	return nil
}

// stageCosts measures the ranker's CPU stages per candidate on one real
// candidate set: what the ranker asks the store for (limit x oversample
// points with payload and vector), run through the pipeline's own code.
func (f *Fixture) stageCosts(ctx context.Context) (rank.StageCosts, error) {
	n := uint64(f.opts.Limit * f.opts.Oversample)
	pts, err := f.Direct.Query(ctx, &qdrant.QueryPoints{
		CollectionName: Collection,
		Query:          qdrant.NewQueryDense(f.queries[0]),
		Limit:          &n,
		WithPayload:    qdrant.NewWithPayload(true),
		WithVectors:    qdrant.NewWithVectors(true),
	})
	if err != nil {
		return rank.StageCosts{}, fmt.Errorf("proxybench: candidates for the stage costs: %w", err)
	}
	return f.ranker.MeasureStages(ctx, pts, qdrant.Distance_Cosine, time.Now(), StageTime), nil
}

// StageTime is how long each CPU stage is timed for the per-candidate costs.
const StageTime = 500 * time.Millisecond

// Close stops the servers and the recorder (after a final flush), closes
// the clients and the store, and removes a temporary directory. It is safe
// to call more than once.
func (f *Fixture) Close() error {
	f.closeOnce.Do(func() {
		var errs []error
		if f.rest != nil {
			errs = append(errs, f.rest.close())
		}
		for _, c := range []*qdrant.Client{f.Direct, f.Proxied} {
			if c != nil {
				_ = c.Close()
			}
		}
		if f.recorder != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			errs = append(errs, f.recorder.Shutdown(ctx))
			cancel()
		}
		if f.cancel != nil {
			f.cancel()
		}
		f.serving.Wait()
		close(f.serveErrs)
		for err := range f.serveErrs {
			errs = append(errs, err)
		}
		if f.source != nil {
			_ = f.source.Close()
		}
		if f.upstream != nil {
			_ = f.upstream.Close()
		}
		if f.db != nil {
			errs = append(errs, f.db.Close())
		}
		if f.tel != nil {
			errs = append(errs, f.tel.Shutdown(context.Background()))
		}
		if f.ownDir {
			errs = append(errs, os.RemoveAll(f.dir))
		}
		f.closeErr = errors.Join(errs...)
	})
	return f.closeErr
}

// Latency summarises one path's latencies.
type Latency struct {
	N             int
	P50, P99, Max time.Duration
}

func summarise(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(math.Ceil(q*float64(len(d))))-1)] }
	return Latency{N: len(d), P50: at(0.50), P99: at(0.99), Max: d[len(d)-1]}
}

// Report is the outcome of a run.
type Report struct {
	Options               Options
	Load                  time.Duration
	Direct, Proxied       Latency // one request in flight
	AddedP50, AddedP99    time.Duration
	DirectQPS, ProxiedQPS float64 // Options.InFlight requests in flight
	QPSRatio              float64 // ProxiedQPS / DirectQPS
	// Stages are the ranker's CPU costs per candidate (ns): payload
	// decode, score + gate + sort, tier-2 vector math.
	Stages  rank.StageCosts
	Elapsed time.Duration
}

// MeetsGoals reports whether the added latencies are within the goals.
func (r Report) MeetsGoals() bool { return r.AddedP50 <= GoalAddedP50 && r.AddedP99 <= GoalAddedP99 }

// stagesMeetGoal reports whether score + gate + sort is within
// GoalScoreGateSort.
func stagesMeetGoal(c rank.StageCosts) bool {
	return c.ScoreGateSort <= float64(GoalScoreGateSort.Nanoseconds())
}

// Run loads a fixture and measures it for Options.Duration: half of it
// with one request in flight (direct and proxied queries alternating, so
// both see the same machine), then a quarter each of direct and proxied
// throughput with Options.InFlight requests in flight.
func Run(ctx context.Context, opts Options) (Report, error) {
	f, err := Load(ctx, opts)
	if err != nil {
		return Report{}, err
	}
	rep, err := f.Measure(ctx)
	return rep, errors.Join(err, f.Close())
}

// Measure runs the measurements of Run on a loaded fixture.
func (f *Fixture) Measure(ctx context.Context) (Report, error) {
	o := f.opts
	rep := Report{Options: o, Load: f.load}
	start := time.Now()
	directQ, proxiedQ := f.queriers()
	// Warm both paths up: connections, the ranker's collection cache.
	for i := range 50 {
		for _, q := range []querier{directQ, proxiedQ} {
			if err := q(ctx, i); err != nil {
				return rep, fmt.Errorf("proxybench: warm-up: %w", err)
			}
		}
	}
	var direct, proxied []time.Duration
	deadline := time.Now().Add(o.Duration / 2)
	for i := 0; time.Now().Before(deadline); i++ {
		for _, p := range []struct {
			q   querier
			out *[]time.Duration
		}{{directQ, &direct}, {proxiedQ, &proxied}} {
			t := time.Now()
			if err := p.q(ctx, i); err != nil {
				return rep, fmt.Errorf("proxybench: query: %w", err)
			}
			*p.out = append(*p.out, time.Since(t))
		}
	}
	rep.Direct, rep.Proxied = summarise(direct), summarise(proxied)
	rep.AddedP50, rep.AddedP99 = rep.Proxied.P50-rep.Direct.P50, rep.Proxied.P99-rep.Direct.P99
	var err error
	if rep.DirectQPS, err = f.throughput(ctx, directQ, o.Duration/4); err != nil {
		return rep, err
	}
	if rep.ProxiedQPS, err = f.throughput(ctx, proxiedQ, o.Duration/4); err != nil {
		return rep, err
	}
	if rep.DirectQPS > 0 {
		rep.QPSRatio = rep.ProxiedQPS / rep.DirectQPS
	}
	if rep.Stages, err = f.stageCosts(ctx); err != nil {
		return rep, err
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// querier sends query i on one path.
type querier func(ctx context.Context, i int) error

// queriers are the direct and the proxied path of the run: go-client over
// gRPC, or the REST paths with Options.REST.
func (f *Fixture) queriers() (direct, proxied querier) {
	if f.rest != nil {
		return func(ctx context.Context, i int) error { return f.rest.query(ctx, f.rest.direct, i) },
			func(ctx context.Context, i int) error { return f.rest.query(ctx, f.rest.proxied, i) }
	}
	return func(ctx context.Context, i int) error { return f.Query(ctx, f.Direct, i) },
		func(ctx context.Context, i int) error { return f.Query(ctx, f.Proxied, i) }
}

// throughput runs queries with InFlight workers for d and returns queries
// per second.
func (f *Fixture) throughput(ctx context.Context, q querier, d time.Duration) (float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		done    atomic.Int64
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		firstEr error
	)
	stop := time.Now().Add(d)
	start := time.Now()
	for range f.opts.InFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) && ctx.Err() == nil {
				if err := q(ctx, int(next.Add(1))); err != nil {
					errOnce.Do(func() { firstEr = err; cancel() })
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	if firstEr != nil {
		return 0, fmt.Errorf("proxybench: throughput: %w", firstEr)
	}
	return float64(done.Load()) / time.Since(start).Seconds(), nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// WriteTo prints the report as a table.
func (r Report) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	o := r.Options
	tel := "as serve (Prometheus metrics, no trace exporter)"
	if o.TelemetryOff {
		tel = "off"
	}
	how := "loopback TCP, go-client both ways"
	if o.REST {
		how = "REST: JSON over loopback HTTP, net/http both ways; direct is the store's REST front as qdrant-compat serves it, memrank's as serve does"
	}
	fmt.Fprintf(&b, "memrank bench proxy: %d memories x %d dims (cosine), limit %d, oversample %d (%d candidates), %s\n",
		o.Memories, o.Dim, o.Limit, o.Oversample, o.Limit*o.Oversample, how)
	fmt.Fprintf(&b, "memrank's telemetry: %s\n", tel)
	fmt.Fprintf(&b, "load %v, measured %v\n", r.Load.Round(time.Millisecond), r.Elapsed.Round(time.Millisecond))
	if o.NoFlush {
		fmt.Fprintf(&b, "access flush: off (accesses recorded, never written while measuring)\n\n")
	} else {
		fmt.Fprintf(&b, "access flush: on, every %v\n\n", rank.DefaultFlushInterval)
	}
	tw := tabwriter.NewWriter(&b, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tdirect\tthrough memrank\tadded\tgoal\t\t")
	fmt.Fprintf(tw, "p50, 1 in flight\t%s\t%s\t%s\t<= %s\t%s\t\n", ms(r.Direct.P50), ms(r.Proxied.P50), ms(r.AddedP50), ms(GoalAddedP50), verdict(r.AddedP50 <= GoalAddedP50))
	fmt.Fprintf(tw, "p99, 1 in flight\t%s\t%s\t%s\t<= %s\t%s\t\n", ms(r.Direct.P99), ms(r.Proxied.P99), ms(r.AddedP99), ms(GoalAddedP99), verdict(r.AddedP99 <= GoalAddedP99))
	fmt.Fprintf(tw, "max, 1 in flight\t%s\t%s\t\t\t\t\n", ms(r.Direct.Max), ms(r.Proxied.Max))
	fmt.Fprintf(tw, "samples\t%d\t%d\t\t\t\t\n", r.Direct.N, r.Proxied.N)
	fmt.Fprintf(tw, "QPS, %d in flight\t%.0f\t%.0f\tratio %.2f\t\t\t\n", o.InFlight, r.DirectQPS, r.ProxiedQPS, r.QPSRatio)
	if err := tw.Flush(); err != nil {
		return 0, err
	}
	st := r.Stages
	fmt.Fprintf(&b, "\nper candidate (%d candidates, the pipeline's own code, one core):\n", st.Candidates)
	tw = tabwriter.NewWriter(&b, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "score + gate + sort\t%.0f ns\t<= %d ns\t%s\t\n", st.ScoreGateSort, GoalScoreGateSort.Nanoseconds(), verdict(stagesMeetGoal(st)))
	fmt.Fprintf(tw, "payload decode\t%.0f ns\t\t\t\n", st.Decode)
	fmt.Fprintf(tw, "tier-2 vector math\t%.0f ns\t\t\t\n", st.Tier2)
	if err := tw.Flush(); err != nil {
		return 0, err
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

func (r Report) String() string {
	var b strings.Builder
	_, _ = r.WriteTo(&b)
	return b.String()
}
