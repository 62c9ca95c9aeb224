// Package storebench measures the embedded store (package store) the way
// memrank uses it: exact search over a collection of random cosine vectors,
// unfiltered and with a keyword filter on an indexed field, through the
// engine API and through the in-process gRPC path with the official
// go-client; upsert throughput in batches; and memory after loading (Go
// heap in use after a GC, and the process RSS beside it).
//
// The same code serves `go test -bench` in package store and the
// `memrank bench store` command: Load builds a Fixture, whose Scenarios are
// what both time; Run does the whole measurement and returns a Report that
// prints itself as a table.
package storebench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"github.com/viterin/vek"

	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// Options sizes a run. The zero value gives the reference run: 100k
// vectors of 384 dimensions.
type Options struct {
	// Points is how many points to load (default 100000).
	Points int
	// Dim is the vector dimension (default 384).
	Dim int
	// BatchSize is the number of points per upsert (default 1000).
	BatchSize int
	// Queries is how many timed queries each scenario runs (default 200).
	Queries int
	// Limit is the top-k of each query (default 10).
	Limit int
	// Tags is the number of distinct values of the indexed keyword field;
	// the filtered scenarios select one of them, so 1/Tags of the points
	// (default 10).
	Tags int
	// Seed makes vectors and queries reproducible (default 1).
	Seed uint64
	// Dir is the data directory. Empty: a temporary directory, removed by
	// Close.
	Dir string
}

// Validate reports a bad option.
func (o Options) Validate() error {
	switch {
	case o.Points < 0, o.Dim < 0, o.BatchSize < 0, o.Queries < 0, o.Limit < 0, o.Tags < 0:
		return errors.New("storebench: sizes must not be negative")
	case o.Dim > 65536:
		return errors.New("storebench: Dim must be at most 65536")
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
	def(&o.Points, 100_000)
	def(&o.Dim, 384)
	def(&o.BatchSize, 1000)
	def(&o.Queries, 200)
	def(&o.Limit, 10)
	def(&o.Tags, 10)
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Collection is the name of the benchmark collection.
const Collection = "storebench"

// LoadStats describes the load phase.
type LoadStats struct {
	Points       int
	Elapsed      time.Duration
	PointsPerSec float64
	VectorBytes  uint64 // Points x Dim x 4
	HeapInUse    uint64 // runtime.MemStats.HeapInuse after loading and a GC
	RSS          uint64 // VmRSS from /proc/self/status (0 where unavailable)
	// Reopen is the time to close the store and open it again (what a
	// restart costs: every vector read back, indexes rebuilt), and
	// ReopenHeapInUse the heap in use after that and a GC.
	Reopen          time.Duration
	ReopenHeapInUse uint64
}

// HeapRatio is heap in use over raw vector bytes.
func (l LoadStats) HeapRatio() float64 {
	if l.VectorBytes == 0 {
		return 0
	}
	return float64(l.HeapInUse) / float64(l.VectorBytes)
}

// Fixture is a loaded store ready to be queried.
type Fixture struct {
	opts    Options
	dir     string
	ownDir  bool
	db      *store.DB
	inproc  *upstream.InProcess
	client  *qdrant.Client
	queries [][]float32
	load    LoadStats
}

// Load opens a store, loads it with random points in batches and measures
// throughput and memory. The caller must Close the fixture.
func Load(ctx context.Context, opts Options) (*Fixture, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	f := &Fixture{opts: opts, dir: opts.Dir}
	if f.dir == "" {
		d, err := os.MkdirTemp("", "storebench-")
		if err != nil {
			return nil, fmt.Errorf("storebench: %w", err)
		}
		f.dir, f.ownDir = d, true
	}
	if err := f.open(ctx); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

func (f *Fixture) open(ctx context.Context) error {
	var err error
	if f.db, err = store.Open(f.dir, store.Options{}); err != nil {
		return fmt.Errorf("storebench: %w", err)
	}
	_, _ = f.db.DeleteCollection(ctx, Collection) // a reused Dir starts over
	err = f.db.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: Collection,
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(f.opts.Dim), Distance: qdrant.Distance_Cosine})})
	if err != nil {
		return fmt.Errorf("storebench: create collection: %w", err)
	}
	if _, err := f.db.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: Collection, FieldName: "tag",
		FieldType: qdrant.FieldType_FieldTypeKeyword.Enum()}); err != nil {
		return fmt.Errorf("storebench: create index: %w", err)
	}
	r := rand.New(rand.NewPCG(f.opts.Seed, 0x5eed))
	start := time.Now()
	for done := 0; done < f.opts.Points; done += f.opts.BatchSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(f.opts.BatchSize, f.opts.Points-done)
		req := &qdrant.UpsertPoints{CollectionName: Collection, Points: make([]*qdrant.PointStruct, n)}
		for i := range n {
			id := done + i
			req.Points[i] = &qdrant.PointStruct{
				Id:      qdrant.NewIDNum(uint64(id)),
				Vectors: qdrant.NewVectorsDense(randomVector(r, f.opts.Dim)),
				Payload: map[string]*qdrant.Value{
					"tag":        qdrant.NewValueString("tag-" + strconv.Itoa(id%f.opts.Tags)),
					"n":          qdrant.NewValueInt(int64(id)),
					"confidence": qdrant.NewValueDouble(r.Float64()),
					"text":       qdrant.NewValueString(fmt.Sprintf("memory %d: the user prefers dark mode in every editor they use", id)),
				},
			}
		}
		if _, err := f.db.Upsert(ctx, req); err != nil {
			return fmt.Errorf("storebench: upsert: %w", err)
		}
	}
	elapsed := time.Since(start)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f.load = LoadStats{
		Points: f.opts.Points, Elapsed: elapsed,
		PointsPerSec: float64(f.opts.Points) / elapsed.Seconds(),
		VectorBytes:  uint64(f.opts.Points) * uint64(f.opts.Dim) * 4,
		HeapInUse:    ms.HeapInuse,
		RSS:          readRSS(),
	}
	if err := f.db.Close(); err != nil {
		return fmt.Errorf("storebench: close: %w", err)
	}
	f.db = nil
	runtime.GC()
	start = time.Now()
	if f.db, err = store.Open(f.dir, store.Options{}); err != nil {
		return fmt.Errorf("storebench: reopen: %w", err)
	}
	f.load.Reopen = time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	f.load.ReopenHeapInUse = ms.HeapInuse

	f.queries = make([][]float32, f.opts.Queries)
	for i := range f.queries {
		f.queries[i] = randomVector(r, f.opts.Dim)
	}
	f.inproc = upstream.ServeInProcess(store.NewServer(f.db))
	cfg := f.inproc.ClientConfig()
	cfg.PoolSize = 1
	if f.client, err = qdrant.NewClient(cfg); err != nil {
		return fmt.Errorf("storebench: client: %w", err)
	}
	return nil
}

func randomVector(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// readRSS returns the resident set size from /proc/self/status, or 0.
func readRSS() uint64 {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 2 && fields[1] == "kB" {
				kb, err := strconv.ParseUint(fields[0], 10, 64)
				if err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

// LoadStats reports the load phase.
func (f *Fixture) LoadStats() LoadStats { return f.load }

// DB returns the loaded store.
func (f *Fixture) DB() *store.DB { return f.db }

// Scenario is one kind of query; Run runs its i-th query.
type Scenario struct {
	Name string
	Run  func(ctx context.Context, i int) error
}

// filter selects the points of one tag (1/Tags of the collection) through
// the keyword index.
func (f *Fixture) filter() *qdrant.Filter {
	return &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("tag", "tag-3")}}
}

// Scenarios returns the timed query kinds: engine and gRPC, each
// unfiltered and filtered, then a fused query and a grouped one (engine).
func (f *Fixture) Scenarios() []Scenario {
	limit := uint64(f.opts.Limit)
	req := func(i int, filtered bool) *qdrant.QueryPoints {
		q := &qdrant.QueryPoints{CollectionName: Collection, Query: qdrant.NewQueryDense(f.queries[i%len(f.queries)]), Limit: &limit}
		if filtered {
			q.Filter = f.filter()
		}
		return q
	}
	engine := func(filtered bool) func(context.Context, int) error {
		return func(ctx context.Context, i int) error {
			res, err := f.db.Query(ctx, req(i, filtered))
			return check(res, err, f.opts.Limit)
		}
	}
	grpc := func(filtered bool) func(context.Context, int) error {
		return func(ctx context.Context, i int) error {
			res, err := f.client.Query(ctx, req(i, filtered))
			return check(res, err, f.opts.Limit)
		}
	}
	// Two prefetches of 4 x limit candidates each, fused by RRF: the shape
	// of a hybrid query that memrank re-ranks.
	rrf := func(ctx context.Context, i int) error {
		pl := 4 * limit
		res, err := f.db.Query(ctx, &qdrant.QueryPoints{CollectionName: Collection, Limit: &limit,
			Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF), Prefetch: []*qdrant.PrefetchQuery{
				{Query: qdrant.NewQueryDense(f.queries[i%len(f.queries)]), Limit: &pl},
				{Query: qdrant.NewQueryDense(f.queries[(i+1)%len(f.queries)]), Limit: &pl},
			}})
		return check(res, err, f.opts.Limit)
	}
	// Groups by tag, 3 hits each: Qdrant's group-by driver over the
	// unindexed is_empty condition it adds, so every round reads payloads.
	groups := func(ctx context.Context, i int) error {
		gs, err := f.db.QueryGroups(ctx, &qdrant.QueryPointGroups{CollectionName: Collection, GroupBy: "tag",
			Query: qdrant.NewQueryDense(f.queries[i%len(f.queries)]), Limit: &limit, GroupSize: qdrant.PtrOf(uint64(3))})
		if err != nil {
			return err
		}
		if len(gs) == 0 || len(gs) > f.opts.Limit {
			return fmt.Errorf("storebench: query groups returned %d groups", len(gs))
		}
		return nil
	}
	return []Scenario{
		{"engine", engine(false)},
		{"engine+filter", engine(true)},
		{"grpc", grpc(false)},
		{"grpc+filter", grpc(true)},
		{"engine+rrf", rrf},
		{"engine+groups", groups},
	}
}

func check(res []*qdrant.ScoredPoint, err error, limit int) error {
	if err != nil {
		return err
	}
	if len(res) == 0 || len(res) > limit {
		return fmt.Errorf("storebench: query returned %d points", len(res))
	}
	return nil
}

// Close stops the client and server, closes the store and removes a
// temporary data directory. It is safe to call more than once.
func (f *Fixture) Close() error {
	var errs []error
	if f.client != nil {
		errs = append(errs, f.client.Close())
		f.client = nil
	}
	if f.inproc != nil {
		errs = append(errs, f.inproc.Close())
		f.inproc = nil
	}
	if f.db != nil {
		errs = append(errs, f.db.Close())
		f.db = nil
	}
	if f.ownDir && f.dir != "" {
		errs = append(errs, os.RemoveAll(f.dir))
		f.dir = ""
	}
	return errors.Join(errs...)
}

// Latency summarises one scenario.
type Latency struct {
	Name     string
	Queries  int
	P50, P99 time.Duration
	Mean     time.Duration
}

// Goals on the 2-core reference machine (issue #4).
const (
	GoalSearch    = 15 * time.Millisecond
	GoalHeapRatio = 1.5
)

// Report is the result of Run.
type Report struct {
	Options    Options
	GOMAXPROCS int
	SIMD       bool
	Load       LoadStats
	Search     []Latency
}

// Run loads a store, times every scenario and reports.
func Run(ctx context.Context, opts Options) (Report, error) {
	f, err := Load(ctx, opts)
	if err != nil {
		return Report{}, err
	}
	defer f.Close()
	rep := Report{Options: f.opts, GOMAXPROCS: runtime.GOMAXPROCS(0), SIMD: vek.Info().Acceleration, Load: f.load}
	for _, sc := range f.Scenarios() {
		for i := 0; i < min(10, f.opts.Queries); i++ { // warm-up
			if err := sc.Run(ctx, i); err != nil {
				return rep, fmt.Errorf("storebench: %s: %w", sc.Name, err)
			}
		}
		lat := make([]time.Duration, f.opts.Queries)
		for i := range lat {
			t := time.Now()
			if err := sc.Run(ctx, i); err != nil {
				return rep, fmt.Errorf("storebench: %s: %w", sc.Name, err)
			}
			lat[i] = time.Since(t)
		}
		rep.Search = append(rep.Search, summarize(sc.Name, lat))
	}
	return rep, nil
}

func summarize(name string, lat []time.Duration) Latency {
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	n := len(lat)
	if n == 0 {
		return Latency{Name: name}
	}
	return Latency{
		Name: name, Queries: n,
		P50:  lat[(n-1)*50/100],
		P99:  lat[int(math.Ceil(float64(n)*0.99))-1],
		Mean: sum / time.Duration(n),
	}
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// WriteTo prints the report as a table.
func (r Report) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "store benchmark: %d points x %d dims (cosine), top-%d, %d queries per scenario, GOMAXPROCS=%d, SIMD=%v\n\n",
		r.Options.Points, r.Options.Dim, r.Options.Limit, r.Options.Queries, r.GOMAXPROCS, r.SIMD)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "search\tp50\tp99\tmean\tgoal (p99)\t")
	for _, l := range r.Search {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t<= %s %s\t\n", l.Name, ms(l.P50), ms(l.P99), ms(l.Mean), ms(GoalSearch), verdict(l.P99 <= GoalSearch))
	}
	_ = tw.Flush()
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "load\tvalue\tgoal\t")
	fmt.Fprintf(tw, "upsert (batches of %d)\t%.0f points/s (%s total)\t\t\n", r.Options.BatchSize, r.Load.PointsPerSec, r.Load.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(tw, "raw vector bytes\t%s\t\t\n", mib(r.Load.VectorBytes))
	fmt.Fprintf(tw, "Go heap in use after GC\t%s (%.2fx vectors)\t<= %.1fx %s\t\n", mib(r.Load.HeapInUse), r.Load.HeapRatio(), GoalHeapRatio, verdict(r.Load.HeapRatio() <= GoalHeapRatio))
	fmt.Fprintf(tw, "reopen (restart)\t%s, heap %s after\t\t\n", r.Load.Reopen.Round(time.Millisecond), mib(r.Load.ReopenHeapInUse))
	rss := "n/a"
	if r.Load.RSS > 0 {
		rss = mib(r.Load.RSS)
	}
	fmt.Fprintf(tw, "process RSS\t%s\t\t\n", rss)
	_ = tw.Flush()
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// String returns the table WriteTo prints.
func (r Report) String() string {
	var b strings.Builder
	_, _ = r.WriteTo(&b)
	return b.String()
}
