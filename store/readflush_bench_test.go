package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/internal/bench/randvec"
	"github.com/memrank/memrank/store"
)

// BenchmarkReadsUnderFlush: one reader querying 10k points of 384 dims
// (nearest 10 with payload, the shape memrank's candidate fetch has) while
// a flusher sends, back to back with a 20 ms pause, UpdateBatches of 256
// set_payload operations by id (the access flush's shape), fsync on: to
// the collection read (flush=same), to another one of the same size
// (flush=other: the same CPU and disk load without any lock in common, the
// floor for flush=same), or not at all (flush=none). It reports the reads'
// p50 and p99.
func BenchmarkReadsUnderFlush(b *testing.B) {
	const points, dim = 10000, 384
	dir := b.TempDir()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 7))
	for _, coll := range []string{"m", "other"} {
		createColl(b, db, coll, dim, qdrant.Distance_Cosine)
		for s := 0; s < points; s += 1000 {
			req := &qdrant.UpsertPoints{CollectionName: coll}
			for i := s; i < s+1000; i++ {
				req.Points = append(req.Points, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i)), Vectors: qdrant.NewVectorsDense(randvec.Unit(r, dim)),
					Payload: qdrant.NewValueMap(map[string]any{"text": fmt.Sprintf("memory number %d with some text", i), "tenant": "t1"})})
			}
			if _, err := db.Upsert(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	}
	queries := make([][]float32, 64)
	for i := range queries {
		queries[i] = randvec.Unit(r, dim)
	}
	for _, flush := range []string{"none", "same", "other"} {
		b.Run("flush="+flush, func(b *testing.B) {
			fctx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			var batches int
			target := map[string]string{"same": "m", "other": "other"}[flush]
			if target != "" {
				wg.Add(1)
				go func() {
					defer wg.Done()
					fr := rand.New(rand.NewPCG(9, 9))
					for k := int64(1); fctx.Err() == nil; k++ {
						req := &qdrant.UpdateBatchPoints{CollectionName: target}
						for range 256 {
							id := fr.Uint64N(points)
							req.Operations = append(req.Operations, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
								Key: qdrant.PtrOf("access_counts"), Payload: qdrant.NewValueMap(map[string]any{"replica-a": k}),
								PointsSelector: qdrant.NewPointsSelector(qdrant.NewIDNum(id))}))
						}
						if _, err := db.UpdateBatch(fctx, req); err != nil {
							if fctx.Err() == nil {
								b.Error(err)
							}
							return
						}
						batches++
						select {
						case <-fctx.Done():
						case <-time.After(20 * time.Millisecond):
						}
					}
				}()
			}
			var lat latencies
			i := 0
			for b.Loop() {
				t0 := time.Now()
				_, err := db.Query(ctx, &qdrant.QueryPoints{CollectionName: "m", Query: qdrant.NewQueryDense(queries[i%len(queries)]),
					Limit: qdrant.PtrOf(uint64(10)), WithPayload: qdrant.NewWithPayload(true)})
				if err != nil {
					b.Fatal(err)
				}
				lat.add(time.Since(t0))
				i++
			}
			stop()
			wg.Wait()
			lat.report(b, "read-")
			if target != "" {
				b.ReportMetric(float64(batches), "flushes")
			}
		})
	}
}
