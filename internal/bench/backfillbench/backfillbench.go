// Package backfillbench measures `memrank backfill`: a generated
// mem0-shaped collection on the embedded store, backfilled dry, for real
// and rolled back, in points per second. `memrank bench backfill` and its
// tests run it; the README records its figures.
package backfillbench

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/batchjob"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/foreign"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// Options configures a run. The zero value of each field means its default.
type Options struct {
	Points     int  // points of the generated collection; default 10000
	Dimensions int  // vector size; default 64
	BatchSize  int  // points per page; default batchjob.DefaultBatchSize
	Merge      bool // --merge-duplicates (a fifth of the texts repeat)
	// NoSync skips the fsync of each commit (not durable).
	NoSync bool
	Dir    string // data directory; "" is a temporary one, removed afterwards
	Seed   uint64 // default 1
}

// DefaultOptions are the options a zero Options stands for.
func DefaultOptions() Options { return Options{}.withDefaults() }

func (o Options) withDefaults() Options {
	if o.Points == 0 {
		o.Points = 10000
	}
	if o.Dimensions == 0 {
		o.Dimensions = 64
	}
	if o.BatchSize == 0 {
		o.BatchSize = batchjob.DefaultBatchSize
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Validate checks the options.
func (o Options) Validate() error {
	switch {
	case o.Points < 0 || o.Points > 1_000_000:
		return fmt.Errorf("backfillbench: --points %d: want 1 to 1000000", o.Points)
	case o.Dimensions < 0 || o.Dimensions > 4096:
		return fmt.Errorf("backfillbench: --dim %d: want 1 to 4096", o.Dimensions)
	case o.BatchSize < 0 || o.BatchSize > batchjob.MaxBatchSize:
		return fmt.Errorf("backfillbench: --batch %d: want 1 to %d", o.BatchSize, batchjob.MaxBatchSize)
	}
	return nil
}

// Phase is one timed pass over the collection.
type Phase struct {
	Points  int
	Elapsed time.Duration
}

// PerSecond is the phase's throughput.
func (p Phase) PerSecond() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Points) / p.Elapsed.Seconds()
}

// Result is what a run measured.
type Result struct {
	Options  Options
	CPUs     int
	DryRun   Phase
	Run      Phase
	Rollback Phase
	Report   dedup.BackfillReport
}

// WriteTo prints the result for people.
func (r Result) WriteTo(w io.Writer) (int64, error) {
	n, err := fmt.Fprintf(w, "backfill of a generated mem0-shaped collection: %d points, %d dimensions, pages of %d, merge %t, fsync %t, %d CPUs\n"+
		"  dry run   %8.0f points/s  (%s)\n  backfill  %8.0f points/s  (%s; %d memories, %d merged)\n  rollback  %8.0f points/s  (%s)\n",
		r.Options.Points, r.Options.Dimensions, r.Options.BatchSize, r.Options.Merge, !r.Options.NoSync, r.CPUs,
		r.DryRun.PerSecond(), r.DryRun.Elapsed.Round(time.Millisecond),
		r.Run.PerSecond(), r.Run.Elapsed.Round(time.Millisecond), r.Report.Backfilled, r.Report.Merged,
		r.Rollback.PerSecond(), r.Rollback.Elapsed.Round(time.Millisecond))
	return int64(n), err
}

// Run generates the collection in a fresh embedded store and times a dry
// run, a backfill and a rollback of it.
func Run(ctx context.Context, opts Options) (_ Result, err error) {
	if err := opts.Validate(); err != nil {
		return Result{}, err
	}
	opts = opts.withDefaults()
	res := Result{Options: opts, CPUs: runtime.GOMAXPROCS(0)}
	dir := opts.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "memrank-bench-backfill-")
		if err != nil {
			return res, fmt.Errorf("backfillbench: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	db, err := store.Open(dir, store.Options{NoSync: opts.NoSync})
	if err != nil {
		return res, fmt.Errorf("backfillbench: %w", err)
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	ip := upstream.ServeInProcess(store.NewServer(db))
	defer ip.Close()
	client, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		return res, fmt.Errorf("backfillbench: client: %w", err)
	}
	defer client.Close()
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		return res, err
	}
	emb, err := embed.NewLocal(opts.Dimensions)
	if err != nil {
		return res, err
	}
	eng, err := dedup.New(client, dedup.Config{Codec: codec, Embedder: emb})
	if err != nil {
		return res, err
	}
	const coll = "mem0"
	if err := Seed(ctx, client, coll, opts); err != nil {
		return res, err
	}
	b := dedup.Backfill{Collection: coll, Mapping: foreign.Mem0(), EmbedderModel: "text-embedding-3-small",
		ExtractorModel: "gpt-4o-mini", BatchSize: opts.BatchSize, MergeDuplicates: opts.Merge, DryRun: true}
	start := time.Now()
	if _, err := eng.Backfill(ctx, b); err != nil {
		return res, err
	}
	res.DryRun = Phase{opts.Points, time.Since(start)}
	b.DryRun = false
	start = time.Now()
	if res.Report, err = eng.Backfill(ctx, b); err != nil {
		return res, err
	}
	res.Run = Phase{opts.Points, time.Since(start)}
	start = time.Now()
	rb, err := eng.RollbackBackfill(ctx, dedup.BackfillRollback{Collection: coll, BatchSize: opts.BatchSize})
	if err != nil {
		return res, err
	}
	res.Rollback = Phase{rb.Restored, time.Since(start)}
	return res, nil
}

// Seed writes a mem0-shaped collection: the fact in "data", its md5 in
// "hash", times in US Pacific with microseconds, a fifth of them updated,
// user, agent and run ids; a fifth of the texts repeat one of the same user.
func Seed(ctx context.Context, c *qdrant.Client, coll string, opts Options) error {
	opts = opts.withDefaults()
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: coll,
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(opts.Dimensions), Distance: qdrant.Distance_Cosine})}); err != nil {
		return fmt.Errorf("backfillbench: create %s: %w", coll, err)
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 3))
	pacific := time.FixedZone("PST", -8*3600)
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	const iso = "2006-01-02T15:04:05.000000-07:00"
	users := make([]int, opts.Points)
	for start := 0; start < opts.Points; start += 1000 {
		var pts []*qdrant.PointStruct
		for i := start; i < min(start+1000, opts.Points); i++ {
			user, fact := rng.IntN(200), i
			if rng.IntN(5) == 0 && i > 0 {
				fact = rng.IntN(i) // a repeat of an earlier fact, by its user
				user = users[fact]
			}
			users[i] = user
			text := fmt.Sprintf("User %d said fact number %d", user, fact)
			sum := md5.Sum([]byte(text))
			created := now.Add(-time.Duration(rng.IntN(700*24)) * time.Hour).In(pacific)
			p := map[string]any{"data": text, "hash": hex.EncodeToString(sum[:]), "user_id": fmt.Sprintf("user-%d", user),
				"created_at": created.Format(iso), "run_id": nil}
			if rng.IntN(5) == 0 {
				p["updated_at"] = created.Add(time.Duration(rng.IntN(90*24)) * time.Hour).Format(iso)
			}
			if rng.IntN(3) == 0 {
				p["agent_id"] = "assistant-1"
			}
			v := make([]float32, opts.Dimensions)
			for j := range v {
				v[j] = rng.Float32() - 0.5
			}
			pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i + 1)), Vectors: qdrant.NewVectorsDense(v), Payload: qdrant.NewValueMap(p)})
		}
		wait := true
		if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: coll, Wait: &wait, Points: pts}); err != nil {
			return fmt.Errorf("backfillbench: seed %s: %w", coll, err)
		}
	}
	return nil
}
