package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

// Points/UpdateBatch as Qdrant v1.19 runs it (src/tonic/api/update_common.rs update_batch): each
// operation goes through the same path as its single-operation method, in order, and answers its
// own UpdateResult; an error stops the batch and is returned alone.

func testUpdateBatch(t *testing.T, target Target) {
	c := connect(t, target)

	t.Run("operations apply in order", func(t *testing.T) {
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		upsert(t, c, coll, point(t, num(9), []float32{1, 1}, map[string]any{"keep": true}))
		ops := []*qdrant.PointsUpdateOperation{
			{Operation: &qdrant.PointsUpdateOperation_Upsert{Upsert: &qdrant.PointsUpdateOperation_PointStructList{Points: []*qdrant.PointStruct{
				point(t, num(1), []float32{1, 0}, map[string]any{"a": 1}),
				point(t, num(2), []float32{0, 1}, map[string]any{"b": 2}),
				point(t, num(3), []float32{1, 1}, nil),
			}}}},
			// Point 1 exists only thanks to the operation before.
			{Operation: &qdrant.PointsUpdateOperation_SetPayload_{SetPayload: &qdrant.PointsUpdateOperation_SetPayload{
				Key: qdrant.PtrOf("counts"), Payload: payload(t, map[string]any{"r1": 5}), PointsSelector: qdrant.NewPointsSelector(num(1))}}},
			{Operation: &qdrant.PointsUpdateOperation_SetPayload_{SetPayload: &qdrant.PointsUpdateOperation_SetPayload{
				Key: qdrant.PtrOf("counts"), Payload: payload(t, map[string]any{"r2": 6}), PointsSelector: qdrant.NewPointsSelector(num(1))}}},
			{Operation: &qdrant.PointsUpdateOperation_OverwritePayload_{OverwritePayload: &qdrant.PointsUpdateOperation_OverwritePayload{
				Payload: payload(t, map[string]any{"x": "y", "z": 1}), PointsSelector: qdrant.NewPointsSelector(num(2))}}},
			{Operation: &qdrant.PointsUpdateOperation_DeletePayload_{DeletePayload: &qdrant.PointsUpdateOperation_DeletePayload{
				Keys: []string{"z"}, PointsSelector: qdrant.NewPointsSelector(num(2))}}},
			{Operation: &qdrant.PointsUpdateOperation_ClearPayload_{ClearPayload: &qdrant.PointsUpdateOperation_ClearPayload{
				Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchBool("keep", true)}})}}},
			{Operation: &qdrant.PointsUpdateOperation_UpdateVectors_{UpdateVectors: &qdrant.PointsUpdateOperation_UpdateVectors{
				Points: []*qdrant.PointVectors{{Id: num(2), Vectors: qdrant.NewVectorsDense([]float32{5, 5})}}}}},
			{Operation: &qdrant.PointsUpdateOperation_DeletePoints_{DeletePoints: &qdrant.PointsUpdateOperation_DeletePoints{
				Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(num(3))}})}}},
		}
		res, err := c.UpdateBatch(opContext(t), &qdrant.UpdateBatchPoints{CollectionName: coll, Wait: waitApplied(), Operations: ops})
		if err != nil {
			t.Fatalf("update batch: %v", err)
		}
		if len(res) != len(ops) {
			t.Fatalf("got %d results for %d operations", len(res), len(ops))
		}
		for i, r := range res {
			if r.GetStatus() != qdrant.UpdateStatus_Completed {
				t.Errorf("operation %d: status %v, want Completed", i, r.GetStatus())
			}
			if i > 0 && r.GetOperationId() <= res[i-1].GetOperationId() {
				t.Errorf("operation ids not increasing: %d then %d", res[i-1].GetOperationId(), r.GetOperationId())
			}
		}
		got := map[string]*qdrant.RetrievedPoint{}
		for _, p := range scrollAll(t, c, coll, nil) {
			got[idString(p.GetId())] = p
		}
		if diff := cmp.Diff(numStrings(1, 2, 9), sortedIDs(scrollAll(t, c, coll, nil))); diff != "" {
			t.Fatalf("ids (-want +got):\n%s", diff)
		}
		wantPayload(t, got["1"].GetPayload(), map[string]any{"a": 1, "counts": map[string]any{"r1": 5, "r2": 6}})
		wantPayload(t, got["2"].GetPayload(), map[string]any{"x": "y"})
		wantPayload(t, got["9"].GetPayload(), nil)
		if diff := cmp.Diff([]float32{5, 5}, dense(getPoint(t, c, coll, num(2)).GetVectors()), approx()); diff != "" {
			t.Errorf("vector of 2 (-want +got):\n%s", diff)
		}
	})

	t.Run("a failing operation", func(t *testing.T) {
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		_, err := c.UpdateBatch(opContext(t), &qdrant.UpdateBatchPoints{CollectionName: coll, Wait: waitApplied(), Operations: []*qdrant.PointsUpdateOperation{
			{Operation: &qdrant.PointsUpdateOperation_Upsert{Upsert: &qdrant.PointsUpdateOperation_PointStructList{Points: []*qdrant.PointStruct{
				point(t, num(7), []float32{1, 0}, nil)}}}},
			{Operation: &qdrant.PointsUpdateOperation_SetPayload_{SetPayload: &qdrant.PointsUpdateOperation_SetPayload{
				Payload: payload(t, map[string]any{"a": 1}), PointsSelector: qdrant.NewPointsSelector(num(42))}}},
		}})
		wantStatus(t, err, codes.NotFound, "No point with id 42 found")
		want := uint64(1) // Qdrant: the upsert before the failing operation stays applied
		if target.AtomicUpdateBatch {
			want = 0
		}
		if got := count(t, c, coll, nil); got != want {
			t.Errorf("points after the failed batch = %d, want %d (AtomicUpdateBatch=%v)", got, want, target.AtomicUpdateBatch)
		}
	})

	t.Run("an empty batch is InvalidArgument", func(t *testing.T) {
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		// lib/api/build.rs: UpdateBatchPoints.operations length(min = 1).
		_, err := c.UpdateBatch(opContext(t), &qdrant.UpdateBatchPoints{CollectionName: coll, Wait: waitApplied()})
		wantStatus(t, err, codes.InvalidArgument, "operations")
	})
}

// Points/DeleteVectors: a name the collection has no vector under is refused by the segment
// (check_vector_name in lib/segment/src/segment/entry.rs, VectorNameNotExists, a bad input); listed
// points that do not exist are NotFound (check_unprocessed_points in
// lib/shard/src/update/vectors.rs).
func testDeleteVectors(t *testing.T, target Target) {
	c := connect(t, target)
	coll := newCollection(t, c, 2, qdrant.Distance_Dot)
	upsert(t, c, coll, point(t, num(1), []float32{1, 0}, nil))
	_, err := c.DeleteVectors(opContext(t), &qdrant.DeletePointVectors{CollectionName: coll, Wait: waitApplied(),
		PointsSelector: qdrant.NewPointsSelector(num(1)), Vectors: &qdrant.VectorsSelector{Names: []string{"text"}}})
	skipIfUnimplemented(t, err, "Points/DeleteVectors")
	wantStatus(t, err, codes.InvalidArgument, "Not existing vector name error: text")
	_, err = c.DeleteVectors(opContext(t), &qdrant.DeletePointVectors{CollectionName: coll, Wait: waitApplied(),
		PointsSelector: qdrant.NewPointsSelector(num(5)), Vectors: &qdrant.VectorsSelector{Names: []string{"text"}}})
	wantStatus(t, err, codes.NotFound, "No point with id 5 found")
	if diff := cmp.Diff([]float32{1, 0}, dense(getPoint(t, c, coll, num(1)).GetVectors()), approx()); diff != "" {
		t.Errorf("vector after refused deletes (-want +got):\n%s", diff)
	}
}
