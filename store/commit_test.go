package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/store"
)

// genBatch is the access flush's shape: one set_payload per point, by id.
func genBatch(coll string, n int, gen int64, extra map[string]any) *qdrant.UpdateBatchPoints {
	req := &qdrant.UpdateBatchPoints{CollectionName: coll}
	for i := range n {
		m := map[string]any{"gen": gen}
		for k, v := range extra {
			m[k] = v
		}
		req.Operations = append(req.Operations, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
			Payload: qdrant.NewValueMap(m), PointsSelector: qdrant.NewPointsSelector(qdrant.NewIDNum(uint64(i))),
		}))
	}
	return req
}

func seedGens(t *testing.T, db *store.DB, coll string, n int) {
	t.Helper()
	createColl(t, db, coll, 2, qdrant.Distance_Dot)
	if _, err := db.CreateFieldIndex(context.Background(), &qdrant.CreateFieldIndexCollection{CollectionName: coll, FieldName: "gen",
		FieldType: qdrant.FieldType_FieldTypeInteger.Enum()}); err != nil {
		t.Fatal(err)
	}
	pts := make([]pt, n)
	for i := range pts {
		pts[i] = pt{id: num(uint64(i)), vec: []float32{1, float32(i)}, payload: map[string]any{"gen": 0}}
	}
	upsert(t, db, coll, pts...)
}

// checkOneGen reads the collection in one request and checks that it saw
// one batch entirely or not at all: one gen for every point, the index
// agreeing with the payloads, and each version always paired with the same
// gen.
func checkOneGen(ctx context.Context, db *store.DB, coll string, n int, seen map[uint64]int64) error {
	all, err := db.Query(ctx, &qdrant.QueryPoints{CollectionName: coll, Limit: qdrant.PtrOf(uint64(n)),
		Query: qdrant.NewQueryDense([]float32{1, 0}), WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		return err
	}
	if len(all) != n {
		return fmt.Errorf("query saw %d points, want %d", len(all), n)
	}
	gen := all[0].GetPayload()["gen"].GetIntegerValue()
	for _, p := range all {
		g := p.GetPayload()["gen"].GetIntegerValue()
		if g != gen {
			return fmt.Errorf("one read saw gens %d and %d: half a batch", gen, g)
		}
		v := p.GetVersion()
		if old, ok := seen[v]; ok && old != g {
			return fmt.Errorf("version %d came with gen %d and later with gen %d", v, old, g)
		}
		seen[v] = g
	}
	byIndex, err := db.Query(ctx, &qdrant.QueryPoints{CollectionName: coll, Limit: qdrant.PtrOf(uint64(n)),
		Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("gen", gen)}}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		return err
	}
	if len(byIndex) != 0 && len(byIndex) != n {
		return fmt.Errorf("index found %d of %d points with gen %d", len(byIndex), n, gen)
	}
	for _, p := range byIndex {
		if g := p.GetPayload()["gen"].GetIntegerValue(); g != gen {
			return fmt.Errorf("index answered gen %d for a point whose payload has %d", gen, g)
		}
	}
	return nil
}

// Readers running beside payload-only batches (committed without holding
// them) and beside upserts (grouped into the same commits) see every batch
// entirely or not at all.
func TestReadsSeePayloadBatchesWhole(t *testing.T) {
	cases := []struct {
		name string
		opts store.Options
		pad  int // bytes of padding per point and batch
	}{
		{name: "default"},
		// A small map makes the payload writes grow the file past it, so
		// bbolt remaps (waiting for read transactions) while readers run.
		{name: "file growth remaps", opts: store.Options{InitialMmapSize: 1 << 16}, pad: 16 << 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db, err := store.Open(t.TempDir(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			const n, batches = 32, 40
			seedGens(t, db, "c", n)
			createColl(t, db, "other", 2, qdrant.Distance_Dot)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			wg.Add(2)
			go func() { // the flush
				defer wg.Done()
				for k := int64(1); k <= batches; k++ {
					extra := map[string]any{}
					if tc.pad > 0 {
						extra["pad"] = strings.Repeat(string(rune('a'+k%26)), tc.pad)
					}
					if _, err := db.UpdateBatch(ctx, genBatch("c", n, k, extra)); err != nil {
						errs <- err
						return
					}
				}
			}()
			go func() { // other writers, grouped with the flush
				defer wg.Done()
				for i := range uint64(batches) {
					_, err := db.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "other",
						Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(i), Vectors: qdrant.NewVectors(1, 1)}}})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
			var rg sync.WaitGroup
			for range 2 {
				rg.Add(1)
				go func() {
					defer rg.Done()
					seen := map[uint64]int64{}
					for i := 0; i < 100000 && ctx.Err() == nil; i++ {
						if err := checkOneGen(ctx, db, "c", n, seen); err != nil {
							if ctx.Err() == nil {
								errs <- err
							}
							return
						}
					}
				}()
			}
			wg.Wait()
			cancel()
			rg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if err := checkOneGen(context.Background(), db, "c", n, map[uint64]int64{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCommitStats: each committed point write counts one transaction with
// the pages and writes it made; a write that failed (rolled back) counts
// nothing.
func TestCommitStats(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	createColl(t, db, "c", 2, qdrant.Distance_Cosine)
	before := db.CommitStats()
	upsert(t, db, "c", pt{id: num(1), vec: []float32{1, 0}, payload: map[string]any{"k": "v"}})
	one := db.CommitStats()
	if got := one.Commits - before.Commits; got != 1 {
		t.Errorf("one upsert: %d commits, want 1", got)
	}
	if one.Pages <= before.Pages || one.Writes <= before.Writes || one.Time <= before.Time {
		t.Errorf("one upsert counted no pages, writes or time: %+v -> %+v", before, one)
	}
	_, err := db.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "c",
		Payload: valueMap(t, map[string]any{"k": "w"}), PointsSelector: qdrant.NewPointsSelector(num(99))})
	if err == nil {
		t.Fatal("set_payload on a missing point succeeded")
	}
	if failed := db.CommitStats(); failed != one {
		t.Errorf("a failed write changed the totals: %+v -> %+v", one, failed)
	}
}
