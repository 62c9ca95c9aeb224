package grpcfront

import (
	"sync/atomic"
	"testing"

	"github.com/qdrant/go-client/qdrant"
)

// TestCollectionsChanged: every call that may make a collection name
// stand for other points tells CollectionsChanged before its answer
// arrives; point reads and writes do not.
func TestCollectionsChanged(t *testing.T) {
	_, up := openStore(t)
	var n atomic.Int64
	addr := startFront(t, up, Config{CollectionsChanged: func() { n.Add(1) }})
	c := client(t, addr, qdrant.Config{})
	ctx := testCtx(t)
	wait := true
	tests := []struct {
		name    string
		call    func() error
		changes bool
	}{
		{name: "create", changes: true, call: func() error {
			return c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "a",
				VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})})
		}},
		{name: "upsert", call: func() error {
			_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "a", Wait: &wait,
				Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectorsDense([]float32{1, 0})}}})
			return err
		}},
		{name: "query", call: func() error {
			_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "a", Query: qdrant.NewQueryDense([]float32{1, 0})})
			return err
		}},
		{name: "update", changes: true, call: func() error {
			return c.UpdateCollection(ctx, &qdrant.UpdateCollection{CollectionName: "a",
				OptimizersConfig: &qdrant.OptimizersConfigDiff{IndexingThreshold: qdrant.PtrOf(uint64(1000))}})
		}},
		{name: "alias", changes: true, call: func() error {
			return c.CreateAlias(ctx, "live", "a")
		}},
		{name: "delete", changes: true, call: func() error { return c.DeleteCollection(ctx, "a") }},
		{name: "delete again (fails)", changes: true, call: func() error { _ = c.DeleteCollection(ctx, "a"); return nil }},
	}
	for _, tc := range tests {
		before := n.Load()
		if err := tc.call(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// The answer has arrived: whatever the front calls, it has called.
		if got := n.Load() > before; got != tc.changes {
			t.Errorf("%s: CollectionsChanged called %v, want %v", tc.name, got, tc.changes)
		}
	}
}
