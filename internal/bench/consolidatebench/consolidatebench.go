// Package consolidatebench times the consolidation job (memrank bench
// consolidate): a collection of generated memories with realistic ages,
// sources and uses is loaded into an embedded store, consolidated once
// (the writes of a first run over a collection whose stored tiers are all
// active), then again at the same clock (the idempotent re-run: reads
// only).
package consolidatebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// Options size the run.
type Options struct {
	Memories  int    // default 50000
	BatchSize int    // consolidation batch size; default consolidate.DefaultBatchSize
	Seed      uint64 // default 1
}

// Embedded says where the store lives.
type Embedded struct {
	Dir    string // "" is a temporary directory, removed afterwards
	NoSync bool   // skip fsync per commit
}

// Result is what was measured.
type Result struct {
	Memories    int
	Load        time.Duration
	First       consolidate.Report
	Second      consolidate.Report
	FirstWrites int // point writes and audit records of the first run
}

// now is the clock of the generated collection.
var now = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

const coll = "bench"

// RunEmbedded loads and consolidates on an embedded store reached as
// memrank reaches it (go-client over gRPC, in process).
func RunEmbedded(ctx context.Context, where Embedded, o Options) (_ Result, err error) {
	if o.Memories == 0 {
		o.Memories = 50000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Memories < 0 || o.BatchSize < 0 {
		return Result{}, errors.New("consolidatebench: sizes must not be negative")
	}
	dir := where.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "memrank-bench-consolidate-")
		if err != nil {
			return Result{}, fmt.Errorf("consolidatebench: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	db, err := store.Open(dir, store.Options{NoSync: where.NoSync})
	if err != nil {
		return Result{}, fmt.Errorf("consolidatebench: %w", err)
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	ip := upstream.ServeInProcess(store.NewServer(db))
	defer ip.Close()
	client, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		return Result{}, fmt.Errorf("consolidatebench: client: %w", err)
	}
	defer client.Close()
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		return Result{}, err
	}
	res := Result{Memories: o.Memories}
	start := time.Now()
	if err := load(ctx, client, codec, o); err != nil {
		return res, err
	}
	res.Load = time.Since(start)
	cfg := consolidate.DefaultConfig()
	cfg.Rate = 0 // measure the job, not the pacing
	if o.BatchSize > 0 {
		cfg.BatchSize = o.BatchSize
	}
	job, err := consolidate.New(client, consolidate.Options{Config: cfg, Codec: codec, Replica: "bench",
		Now: func() time.Time { return now }})
	if err != nil {
		return res, err
	}
	if res.First, err = job.Run(ctx, consolidate.Request{Collection: coll}); err != nil {
		return res, err
	}
	res.FirstWrites = res.First.Written + res.First.Audited
	if res.Second, err = job.Run(ctx, consolidate.Request{Collection: coll}); err != nil {
		return res, err
	}
	return res, nil
}

// load writes the memories: ages spread over two years, a mix of sources
// and types, a fifth of them read in the last month.
func load(ctx context.Context, client *qdrant.Client, codec *memory.Codec, o Options) error {
	for _, c := range []string{coll, memory.AuditCollection(coll)} {
		dims := uint64(8)
		if c != coll {
			dims = 1
		}
		if err := client.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: c,
			VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: dims, Distance: qdrant.Distance_Cosine})}); err != nil {
			return fmt.Errorf("consolidatebench: create %s: %w", c, err)
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 7))
	sources := []string{"direct", "direct", "confirmed", "strong_inference", "strong_inference", "weak_inference"}
	types := []string{"fact", "fact", "preference", "event", "entity", "relation"}
	wait := true
	const batch = 1000
	for lo := 0; lo < o.Memories; lo += batch {
		var pts []*qdrant.PointStruct
		for i := lo; i < min(lo+batch, o.Memories); i++ {
			seen := now.Add(-time.Duration(rng.Float64() * 730 * 24 * float64(time.Hour)))
			m := memory.Memory{Text: fmt.Sprintf("generated fact %d", i), Source: sources[rng.IntN(len(sources))],
				MemoryType: types[rng.IntN(len(types))], ExtractorModel: "gpt-4o", Observations: rng.IntN(4),
				CreatedAt: seen, LastObservedAt: seen, Retrievable: true, Tier: scoring.TierActive, Schema: memory.SchemaVersion}
			if rng.IntN(5) == 0 {
				m.LastAccessedAt = now.Add(-time.Duration(rng.Float64() * 30 * 24 * float64(time.Hour)))
				m.AccessCounts = []memory.AccessCount{{Replica: "pod-1", Count: int64(1 + rng.IntN(20))}}
			}
			in := codec.DecodeQdrant(codec.Encode(&m))
			p := codec.Params()
			m.Confidence, m.HasConfidence = p.Grounded(scoring.Components{Source: in.Levels.Source, Observations: m.Observations,
				Extractor: in.Levels.Extractor, Type: in.Levels.Type}, scoring.GroundingSupported), true
			vec := make([]float32, 8)
			for k := range vec {
				vec[k] = float32(rng.NormFloat64())
			}
			pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i + 1)), Vectors: qdrant.NewVectorsDense(vec),
				Payload: codec.Encode(&m)})
		}
		if _, err := client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: coll, Wait: &wait, Points: pts}); err != nil {
			return fmt.Errorf("consolidatebench: load: %w", err)
		}
	}
	return nil
}

// WriteTo prints the result.
func (r Result) WriteTo(w io.Writer) (int64, error) {
	var n int64
	p := func(format string, args ...any) {
		k, _ := fmt.Fprintf(w, format, args...)
		n += int64(k)
	}
	p("memories: %d (loaded in %s)\n", r.Memories, r.Load.Round(time.Millisecond))
	p("first run: %s, %.0f memories/s; %d tier writes, %d audit records (%d writes)\n",
		r.First.Duration.Round(time.Millisecond), float64(r.First.Examined)/r.First.Duration.Seconds(),
		r.First.Written, r.First.Audited, r.FirstWrites)
	for _, k := range slices.Sorted(maps.Keys(r.First.Transitions)) {
		p("  %-20s %d\n", k, r.First.Transitions[k])
	}
	p("  review queue %d, archived %d\n", r.First.ReviewQueue, r.First.Archived)
	p("second run (same clock): %s, %d writes\n", r.Second.Duration.Round(time.Millisecond), r.Second.Written+r.Second.Audited)
	return n, nil
}
