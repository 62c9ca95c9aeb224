package batchjob_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/batchjob"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

func newClient(t *testing.T) *qdrant.Client {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	p := upstream.ServeInProcess(store.NewServer(db))
	c, err := qdrant.NewClient(p.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		_ = p.Close()
		_ = db.Close()
	})
	return c
}

// odd payloads: integers and whole floats, nulls, nesting, empty lists and
// objects, a UUID id next to numeric ones.
func seed(t *testing.T, c *qdrant.Client) []*qdrant.RetrievedPoint {
	t.Helper()
	ctx := context.Background()
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	ids := []*qdrant.PointId{qdrant.NewIDNum(1), qdrant.NewIDNum(2), qdrant.NewID("9b2e1a4c-5d6f-4e7a-8b9c-0d1e2f3a4b5c"), qdrant.NewIDNum(40)}
	var pts []*qdrant.PointStruct
	for i, id := range ids {
		pts = append(pts, &qdrant.PointStruct{Id: id, Vectors: qdrant.NewVectorsDense([]float32{1, float32(i)}),
			Payload: map[string]*qdrant.Value{
				"n": qdrant.NewValueInt(int64(i)), "f": qdrant.NewValueDouble(3.0), "null": qdrant.NewValueNull(),
				"nested": qdrant.NewValueStruct(&qdrant.Struct{Fields: map[string]*qdrant.Value{
					"list": qdrant.NewValueFromList(qdrant.NewValueString("a"), qdrant.NewValueBool(false)), "empty": qdrant.NewValueFromList()}}),
				"obj": qdrant.NewValueStruct(&qdrant.Struct{}),
			}})
	}
	wait := true
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Wait: &wait, Points: pts}); err != nil {
		t.Fatal(err)
	}
	return scroll(t, c)
}

func scroll(t *testing.T, c *qdrant.Client) []*qdrant.RetrievedPoint {
	t.Helper()
	limit := uint32(100)
	pts, err := c.Scroll(context.Background(), &qdrant.ScrollPoints{CollectionName: "c", Limit: &limit, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		t.Fatal(err)
	}
	return pts
}

// TestRunKeepRollback: a job that rewrites every payload, interrupted and
// resumed, then rolled back to payloads equal to the originals.
func TestRunKeepRollback(t *testing.T) {
	c := newClient(t)
	before := seed(t, c)
	r, err := batchjob.New(c, batchjob.Config{Collection: "c", Job: "test", BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	type state struct{ Seen, Redone int }
	page := func(st *state, fail bool) batchjob.Page {
		return func(ctx context.Context, pts []*qdrant.RetrievedPoint, redo bool) error {
			st.Seen += len(pts)
			if redo {
				st.Redone += len(pts)
			}
			if err := r.Keep(ctx, pts, true); err != nil {
				return err
			}
			var ops []*qdrant.PointsUpdateOperation
			for _, p := range pts {
				ops = append(ops, qdrant.NewPointsUpdateOverwritePayload(&qdrant.PointsUpdateOperation_OverwritePayload{
					Payload: map[string]*qdrant.Value{"rewritten": qdrant.NewValueBool(true)}, PointsSelector: qdrant.NewPointsSelector(p.GetId())}))
			}
			wait := true
			if _, err := c.UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: "c", Wait: &wait, Operations: ops}); err != nil {
				return err
			}
			if fail {
				return errors.New("interrupted")
			}
			return nil
		}
	}
	var st state
	if _, err := r.Run(context.Background(), "v1", &st, page(&st, true), nil); err == nil {
		t.Fatal("the failing page did not stop the run")
	}
	if _, err := r.Run(context.Background(), "v2", &st, page(&st, false), nil); !errors.Is(err, batchjob.ErrOptions) {
		t.Fatalf("resume with other options: %v, want ErrOptions", err)
	}
	st = state{}
	res, err := r.Run(context.Background(), "v1", &st, page(&st, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resumed || res.Points != 4 || st.Seen != 4 || st.Redone != 3 {
		t.Errorf("resumed run %+v, state %+v", res, st)
	}
	cp, found, err := r.Checkpoint(context.Background())
	if err != nil || !found || !cp.Finished || cp.Points != 4 {
		t.Errorf("checkpoint %+v, %t, %v", cp, found, err)
	}
	var done []string
	n, err := r.Rollback(context.Background(), func(_ context.Context, rs []batchjob.Restored) error {
		for _, x := range rs {
			done = append(done, x.ID.String())
		}
		return nil
	}, nil)
	if err != nil || n != 4 || len(done) != 4 {
		t.Fatalf("rollback: %d restored, %d undone, %v", n, len(done), err)
	}
	if diff := cmp.Diff(before, scroll(t, c), protocmp.Transform()); diff != "" {
		t.Errorf("after rollback (-orig +now):\n%s", diff)
	}
	if err := r.Drop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.CollectionExists(context.Background(), r.Companion()); ok {
		t.Error("the companion is still there")
	}
}

func TestScanWritesNothing(t *testing.T) {
	c := newClient(t)
	before := seed(t, c)
	r, err := batchjob.New(c, batchjob.Config{Collection: "c", Job: "scan", BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	var pages []int
	n, err := r.Scan(context.Background(), func(_ context.Context, pts []*qdrant.RetrievedPoint, _ bool) error {
		pages = append(pages, len(pts))
		return nil
	}, nil)
	if err != nil || n != 4 || !cmp.Equal(pages, []int{1, 1, 1, 1}) {
		t.Errorf("scan: %d points, pages %v, %v", n, pages, err)
	}
	if ok, _ := c.CollectionExists(context.Background(), r.Companion()); ok {
		t.Error("a scan created the companion")
	}
	if diff := cmp.Diff(before, scroll(t, c), protocmp.Transform()); diff != "" {
		t.Errorf("a scan changed points:\n%s", diff)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		c    batchjob.Config
	}{
		{"no collection", batchjob.Config{Job: "j"}},
		{"no job", batchjob.Config{Collection: "c"}},
		{"batch too big", batchjob.Config{Collection: "c", Job: "j", BatchSize: batchjob.MaxBatchSize + 1}},
		{"negative timeout", batchjob.Config{Collection: "c", Job: "j", Timeout: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.c.Validate() == nil {
				t.Error("accepted")
			}
		})
	}
}
