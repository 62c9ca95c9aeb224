package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/qdrant/go-client/qdrant"
)

const (
	writers       = 8
	readers       = 8
	opsPerWriter  = 40
	maxReadsEach  = 150
	sharedPointID = 1
)

// errorLog collects errors from goroutines, which must not call t.Fatal.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *errorLog) report(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, err := range l.errs {
		if i == 10 {
			t.Errorf("... and %d more errors", len(l.errs)-i)
			break
		}
		t.Error(err)
	}
}

func writerPointID(w, i int) uint64 { return uint64(1000*(w+1) + i) }

func replicaKey(w int) string { return fmt.Sprintf("replica-%d", w) }

// testConcurrency runs writers and readers against one collection at once. Each writer upserts
// its own points and, like a memrank replica flushing access counts, sets its own key inside the
// shared point's access_counts object. Qdrant applies a shard's updates one at a time, so every
// acknowledged write must be readable afterwards and no writer's key may be lost to another's.
func testConcurrency(t *testing.T, target Target) {
	c := connect(t, target)
	coll := newCollection(t, c, 4, qdrant.Distance_Cosine)
	upsert(t, c, coll, point(t, num(sharedPointID), []float32{1, 1, 1, 1}, map[string]any{"access_counts": map[string]any{}}))

	ctx := opContext(t)
	var (
		errs      errorLog
		writersWG sync.WaitGroup
		readersWG sync.WaitGroup
		done      = make(chan struct{})
		mu        sync.Mutex
		acked     = map[uint64]int{} // point id -> writer, for acknowledged upserts
		lastCount = map[int]int{}    // writer -> last acknowledged access count
	)
	for w := range writers {
		writersWG.Go(func() {
			for i := range opsPerWriter {
				if ctx.Err() != nil {
					return
				}
				id := writerPointID(w, i)
				vec := []float32{float32(w + 1), float32(i + 1), 1, 0}
				pl, err := qdrant.TryValueMap(map[string]any{"w": w, "i": i})
				if err != nil {
					errs.add(fmt.Errorf("writer %d: payload: %w", w, err))
					return
				}
				_, err = c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: coll, Wait: waitApplied(),
					Points: []*qdrant.PointStruct{{Id: num(id), Vectors: qdrant.NewVectorsDense(vec), Payload: pl}}})
				if err != nil {
					errs.add(fmt.Errorf("writer %d: upsert %d: %w", w, id, err))
					continue
				}
				mu.Lock()
				acked[id] = w
				mu.Unlock()
				_, err = c.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: coll, Wait: waitApplied(),
					PointsSelector: qdrant.NewPointsSelector(num(sharedPointID)),
					Key:            qdrant.PtrOf("access_counts"),
					Payload:        map[string]*qdrant.Value{replicaKey(w): qdrant.NewValueInt(int64(i))}})
				if err != nil {
					errs.add(fmt.Errorf("writer %d: set access count %d: %w", w, i, err))
					continue
				}
				mu.Lock()
				lastCount[w] = i
				mu.Unlock()
			}
		})
	}
	for r := range readers {
		readersWG.Go(func() {
			for n := range maxReadsEach {
				select {
				case <-done:
					return
				default:
				}
				if err := readOnce(ctx, c, coll, r, n); err != nil {
					errs.add(fmt.Errorf("reader %d, read %d: %w", r, n, err))
				}
			}
		})
	}
	writersWG.Wait()
	close(done)
	readersWG.Wait()
	errs.report(t)
	if ctx.Err() != nil {
		t.Fatalf("concurrent phase did not finish within %v", opTimeout)
	}

	t.Run("every acknowledged upsert is readable", func(t *testing.T) {
		want := make([]uint64, 0, len(acked))
		for id := range acked {
			want = append(want, id)
		}
		got, err := c.Get(opContext(t), &qdrant.GetPoints{CollectionName: coll, Ids: ids(want...),
			WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		seen := map[uint64]bool{}
		for _, p := range got {
			id := p.GetId().GetNum()
			seen[id] = true
			w := acked[id]
			wantPayload(t, p.GetPayload(), map[string]any{"w": w, "i": int(id) - 1000*(w+1)})
		}
		for _, id := range want {
			if !seen[id] {
				t.Errorf("acknowledged point %d is missing", id)
			}
		}
		if n := count(t, c, coll, nil); n != uint64(len(acked)+1) {
			t.Errorf("count = %d, want %d", n, len(acked)+1)
		}
	})

	t.Run("no replica's access count is lost", func(t *testing.T) {
		want := map[string]any{}
		for w, n := range lastCount {
			want[replicaKey(w)] = n
		}
		wantPayload(t, getPoint(t, c, coll, num(sharedPointID)).GetPayload(), map[string]any{"access_counts": want})
		if len(lastCount) != writers {
			t.Errorf("%d writers had an access count acknowledged, want %d", len(lastCount), writers)
		}
	})
}

// readOnce performs one of the read operations memrank issues, chosen by n.
func readOnce(ctx context.Context, c *qdrant.Client, coll string, r, n int) error {
	switch (r + n) % 4 {
	case 0:
		_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQuery(1, float32(n%7), 1, 0),
			Limit: qdrant.PtrOf(uint64(10)), WithPayload: qdrant.NewWithPayload(true),
			Filter: &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatchInt("w", int64(r))}}})
		return err
	case 1:
		_, err := c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: coll, Limit: qdrant.PtrOf(uint32(20)),
			Offset: num(writerPointID(r, 0))})
		return err
	case 2:
		_, err := c.Get(ctx, &qdrant.GetPoints{CollectionName: coll, WithPayload: qdrant.NewWithPayload(true),
			Ids: ids(sharedPointID, writerPointID(r, n%opsPerWriter))})
		return err
	default:
		_, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: coll, Exact: qdrant.PtrOf(true)})
		return err
	}
}
