package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/internal/bench/randvec"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// latencies collects per-call durations from several goroutines.
type latencies struct {
	mu  sync.Mutex
	all []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.all = append(l.all, d)
	l.mu.Unlock()
}

func (l *latencies) report(b *testing.B, prefix string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.all) == 0 {
		return
	}
	slices.Sort(l.all)
	q := func(p float64) float64 {
		return float64(l.all[min(len(l.all)-1, int(p*float64(len(l.all))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.5), prefix+"p50-ms")
	b.ReportMetric(q(0.99), prefix+"p99-ms")
}

// BenchmarkGroupCommit: N concurrent writers of single-point upserts,
// fsync on, with and without group commit; b.N writes in all. It reports
// the writes' throughput and median latency, and the disk's single-commit
// floor measured in the same directory just before.
func BenchmarkGroupCommit(b *testing.B) {
	for _, writers := range []int{1, 8} {
		for _, group := range []bool{true, false} {
			b.Run(fmt.Sprintf("writers=%d/group=%v", writers, group), func(b *testing.B) {
				dir := b.TempDir()
				floor, err := store.CommitFloor(dir, 50)
				if err != nil {
					b.Fatal(err)
				}
				db, err := store.Open(dir, store.Options{NoGroupCommit: !group})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				createColl(b, db, "w", 384, qdrant.Distance_Cosine)
				ctx := context.Background()
				var lat latencies
				var wg sync.WaitGroup
				var next sync.Mutex
				n := 0
				b.ResetTimer()
				start := time.Now()
				for w := range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r := rand.New(rand.NewPCG(uint64(w), 1))
						for {
							next.Lock()
							i := n
							n++
							next.Unlock()
							if i >= b.N {
								return
							}
							t0 := time.Now()
							_, err := db.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "w", Points: []*qdrant.PointStruct{{
								Id: qdrant.NewIDNum(uint64(i)), Vectors: qdrant.NewVectorsDense(randvec.Unit(r, 384)),
								Payload: qdrant.NewValueMap(map[string]any{"text": "a memory", "i": int64(i)})}}})
							if err != nil {
								b.Error(err)
								return
							}
							lat.add(time.Since(t0))
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
				lat.report(b, "")
				b.ReportMetric(float64(floor.Microseconds())/1000, "floor-ms")
			})
		}
	}
}

// BenchmarkPayloadWrite: one writer's set_payload of two keys on a point of
// 10k (384 dims, 20-key payloads), fsync on, called on the engine and
// through in-process gRPC with go-client, against the disk's single-commit
// floor measured in the same directory: how much of a payload write is the
// commit, and how much the call around it.
func BenchmarkPayloadWrite(b *testing.B) {
	dir := b.TempDir()
	floor, err := store.CommitFloor(dir, 50)
	if err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const points = 10_000
	createColl(b, db, "m", 384, qdrant.Distance_Cosine)
	payload := map[string]any{}
	for i := range 20 {
		payload[fmt.Sprintf("key_%d", i)] = fmt.Sprintf("value number %d of the payload", i)
	}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	for start := 0; start < points; start += 1000 {
		pts := make([]*qdrant.PointStruct, 0, 1000)
		for i := start; i < start+1000; i++ {
			pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i)), Vectors: qdrant.NewVectorsDense(randvec.Unit(r, 384)), Payload: qdrant.NewValueMap(payload)})
		}
		if _, err := db.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "m", Points: pts}); err != nil {
			b.Fatal(err)
		}
	}
	ip := upstream.ServeInProcess(store.NewServer(db))
	defer ip.Close()
	client, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	calls := []struct {
		name string
		set  func(*qdrant.SetPayloadPoints) error
	}{
		{"engine", func(req *qdrant.SetPayloadPoints) error { _, err := db.SetPayload(ctx, req); return err }},
		{"grpc", func(req *qdrant.SetPayloadPoints) error { _, err := client.SetPayload(ctx, req); return err }},
	}
	for _, c := range calls {
		b.Run(c.name, func(b *testing.B) {
			var lat latencies
			i := 0
			for b.Loop() {
				req := &qdrant.SetPayloadPoints{CollectionName: "m", PointsSelector: qdrant.NewPointsSelector(qdrant.NewIDNum(uint64(r.IntN(points)))),
					Payload: qdrant.NewValueMap(map[string]any{"key_3": fmt.Sprint(i), "key_5": int64(i)})}
				t0 := time.Now()
				if err := c.set(req); err != nil {
					b.Fatal(err)
				}
				lat.add(time.Since(t0))
				i++
			}
			lat.report(b, "")
			b.ReportMetric(float64(floor.Microseconds())/1000, "floor-ms")
		})
	}
}
