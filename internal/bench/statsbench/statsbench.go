// Package statsbench measures /v1/stats on the embedded store: the counted
// answer (payload indexes) against the scan that reads every memory, on a
// collection of a chosen size, reached as memrank reaches it (go-client over
// gRPC, in process).
package statsbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// Options size the run; a zero field takes its default.
type Options struct {
	Memories int    // memories loaded; default 50000
	Queries  int    // timed counted stats calls; default 50
	Scans    int    // timed scans; default 3
	Dir      string // data directory; "" is a temporary one, removed afterwards
}

// DefaultOptions are the options a zero Options stands for.
func DefaultOptions() Options { return Options{}.withDefaults() }

func (o Options) withDefaults() Options {
	if o.Memories == 0 {
		o.Memories = 50000
	}
	if o.Queries == 0 {
		o.Queries = 50
	}
	if o.Scans == 0 {
		o.Scans = 3
	}
	return o
}

// Validate refuses negative sizes.
func (o Options) Validate() error {
	if o.Memories < 0 || o.Queries < 0 || o.Scans < 0 {
		return errors.New("statsbench: --memories, --queries and --scans must not be negative")
	}
	return nil
}

// Report is what Run measured.
type Report struct {
	Memories               int
	CountedP50, CountedP99 time.Duration
	ScanMean               time.Duration
	Counted, Scanned       dedup.Stats
}

const dims = 64

// Run loads the memories and times both answers.
func Run(ctx context.Context, o Options) (_ Report, err error) {
	o = o.withDefaults()
	f, err := open(ctx, o.Dir, o.Memories)
	if err != nil {
		return Report{}, err
	}
	defer func() { err = errors.Join(err, f.close()) }()
	rep := Report{Memories: o.Memories}
	times := make([]time.Duration, 0, o.Queries)
	for range o.Queries {
		start := time.Now()
		if rep.Counted, err = f.eng.Stats(ctx, "bench", ""); err != nil {
			return Report{}, err
		}
		times = append(times, time.Since(start))
	}
	if len(times) > 0 {
		slices.Sort(times)
		rep.CountedP50 = times[len(times)/2]
		rep.CountedP99 = times[min(len(times)-1, int(math.Ceil(float64(len(times))*0.99))-1)]
	}
	start := time.Now()
	for range o.Scans {
		if rep.Scanned, err = f.eng.ScanStats(ctx, "bench", ""); err != nil {
			return Report{}, err
		}
	}
	rep.ScanMean = time.Since(start) / time.Duration(max(o.Scans, 1))
	return rep, nil
}

// fixture is a loaded store and the engine over it.
type fixture struct {
	eng   *dedup.Engine
	close func() error
}

func open(ctx context.Context, dir string, memories int) (_ *fixture, err error) {
	var cleanup []func() error
	closeAll := func() error {
		var errs []error
		for i := len(cleanup) - 1; i >= 0; i-- {
			errs = append(errs, cleanup[i]())
		}
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, closeAll())
		}
	}()
	if dir == "" {
		tmp, err := os.MkdirTemp("", "memrank-bench-stats-")
		if err != nil {
			return nil, fmt.Errorf("statsbench: %w", err)
		}
		cleanup = append(cleanup, func() error { return os.RemoveAll(tmp) })
		dir = tmp
	}
	db, err := store.Open(dir, store.Options{NoSync: true})
	if err != nil {
		return nil, fmt.Errorf("statsbench: %w", err)
	}
	cleanup = append(cleanup, db.Close)
	ip := upstream.ServeInProcess(store.NewServer(db))
	cleanup = append(cleanup, ip.Close)
	client, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		return nil, fmt.Errorf("statsbench: client: %w", err)
	}
	cleanup = append(cleanup, client.Close)
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		return nil, err
	}
	emb, err := embed.NewLocal(dims)
	if err != nil {
		return nil, err
	}
	eng, err := dedup.New(client, dedup.Config{Codec: codec, Embedder: emb, Timeout: 5 * time.Minute})
	if err != nil {
		return nil, err
	}
	if err := load(ctx, client, eng, codec, memories); err != nil {
		return nil, err
	}
	return &fixture{eng: eng, close: closeAll}, nil
}

// load writes n memories of mixed types, ages and confidences, a tenth
// superseded, with the tier a consolidation would have stored.
func load(ctx context.Context, client *qdrant.Client, eng *dedup.Engine, codec *memory.Codec, n int) error {
	// The first observation creates the collection with memrank's indexes.
	if _, err := eng.Observe(ctx, dedup.Observation{Collection: "bench", Text: "the collection's first memory"}); err != nil {
		return fmt.Errorf("statsbench: create: %w", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	types := []string{"fact", "preference", "event", "entity", "relation"}
	now := time.Now()
	params := codec.Params()
	const batch = 1000
	wait := true
	for lo := 0; lo < n; lo += batch {
		pts := make([]*qdrant.PointStruct, 0, batch)
		for i := lo; i < min(lo+batch, n); i++ {
			created := now.Add(-time.Duration(rng.IntN(720*24)) * time.Hour)
			m := memory.Memory{Text: fmt.Sprintf("memory %d", i), MemoryType: types[rng.IntN(len(types))],
				Source: "direct", ExtractorModel: "gpt-4o", Confidence: rng.Float64(), HasConfidence: true,
				CreatedAt: created, LastObservedAt: created, Retrievable: true, Schema: 1}
			if i%10 == 0 {
				m.SupersededBy, m.Retrievable = "1", false
			}
			payload := codec.Encode(&m)
			if m.SupersededBy == "" {
				stored := codec.DecodeQdrant(payload)
				in := codec.Inputs(&stored)
				s := params.Evaluate(&in, 1, now)
				// As consolidation stores it: the tier a label, retrievable.
				payload[codec.Key(memory.FieldTier)] = qdrant.NewValueString(s.Tier.String())
				payload[codec.Key(memory.FieldRetrievable)] = qdrant.NewValueBool(true)
			}
			vec := make([]float32, dims)
			vec[i%dims] = 1
			pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i + 1)), Vectors: qdrant.NewVectorsDense(vec), Payload: payload})
		}
		if _, err := client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "bench", Points: pts, Wait: &wait}); err != nil {
			return fmt.Errorf("statsbench: load: %w", err)
		}
	}
	return nil
}

// WriteTo prints the report.
func (r Report) WriteTo(w io.Writer) (int64, error) {
	n, err := fmt.Fprintf(w, "stats of %d memories on the embedded store (go-client over in-process gRPC)\n"+
		"counted (payload indexes): p50 %v  p99 %v\n"+
		"scanned (every payload):   mean %v\n"+
		"memories %d  archived %d  superseded %d  average confidence %.4f (scan %.4f)\n",
		r.Memories, r.CountedP50.Round(10*time.Microsecond), r.CountedP99.Round(10*time.Microsecond),
		r.ScanMean.Round(time.Millisecond), r.Counted.Memories, r.Counted.Archived, r.Counted.Superseded,
		r.Counted.Average, r.Scanned.Average)
	return int64(n), err
}
