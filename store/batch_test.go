package store_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/store"
)

func batchUpsert(pts ...*qdrant.PointStruct) *qdrant.PointsUpdateOperation {
	return &qdrant.PointsUpdateOperation{Operation: &qdrant.PointsUpdateOperation_Upsert{
		Upsert: &qdrant.PointsUpdateOperation_PointStructList{Points: pts}}}
}

func batchSetPayload(key *string, payload map[string]*qdrant.Value, ids ...uint64) *qdrant.PointsUpdateOperation {
	return &qdrant.PointsUpdateOperation{Operation: &qdrant.PointsUpdateOperation_SetPayload_{
		SetPayload: &qdrant.PointsUpdateOperation_SetPayload{Payload: payload, Key: key, PointsSelector: qdrant.NewPointsSelector(numIDs(ids...)...)}}}
}

func numIDs(ns ...uint64) []*qdrant.PointId {
	out := make([]*qdrant.PointId, len(ns))
	for i, n := range ns {
		out[i] = num(n)
	}
	return out
}

func getAll(t *testing.T, db *store.DB, coll string) map[string]map[string]*qdrant.Value {
	t.Helper()
	pts, _, err := db.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: coll, Limit: qdrant.PtrOf(uint32(100))})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]*qdrant.Value{}
	for _, p := range pts {
		out[idString(p.GetId())] = p.GetPayload()
	}
	return out
}

func TestUpdateBatchAppliesInOrder(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	createColl(t, db, "c", 2, qdrant.Distance_Dot)
	before := upsert(t, db, "c", pt{num(9), []float32{1, 1}, map[string]any{"keep": true}}).GetOperationId()
	mk := func(id uint64, v []float32, pl map[string]any) *qdrant.PointStruct {
		return &qdrant.PointStruct{Id: num(id), Vectors: qdrant.NewVectorsDense(v), Payload: valueMap(t, pl)}
	}
	ops := []*qdrant.PointsUpdateOperation{
		batchUpsert(mk(1, []float32{1, 0}, map[string]any{"a": 1}), mk(2, []float32{0, 1}, map[string]any{"b": 2}), mk(3, []float32{1, 1}, nil)),
		// Sees point 1 from the upsert above (it would be NotFound otherwise).
		batchSetPayload(qdrant.PtrOf("counts"), valueMap(t, map[string]any{"r1": 5}), 1),
		batchSetPayload(qdrant.PtrOf("counts"), valueMap(t, map[string]any{"r2": 6}), 1),
		{Operation: &qdrant.PointsUpdateOperation_OverwritePayload_{OverwritePayload: &qdrant.PointsUpdateOperation_OverwritePayload{
			Payload: valueMap(t, map[string]any{"x": "y", "z": 1}), PointsSelector: qdrant.NewPointsSelector(num(2))}}},
		{Operation: &qdrant.PointsUpdateOperation_DeletePayload_{DeletePayload: &qdrant.PointsUpdateOperation_DeletePayload{
			Keys: []string{"z"}, PointsSelector: qdrant.NewPointsSelector(num(2))}}},
		{Operation: &qdrant.PointsUpdateOperation_ClearPayload_{ClearPayload: &qdrant.PointsUpdateOperation_ClearPayload{
			Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchBool("keep", true)}})}}},
		{Operation: &qdrant.PointsUpdateOperation_UpdateVectors_{UpdateVectors: &qdrant.PointsUpdateOperation_UpdateVectors{
			Points: []*qdrant.PointVectors{{Id: num(2), Vectors: qdrant.NewVectorsDense([]float32{5, 5})}}}}},
		{Operation: &qdrant.PointsUpdateOperation_DeletePoints_{DeletePoints: &qdrant.PointsUpdateOperation_DeletePoints{
			Points: qdrant.NewPointsSelector(num(3))}}},
	}
	res, err := db.UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: "c", Operations: ops})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(ops) {
		t.Fatalf("%d results for %d operations", len(res), len(ops))
	}
	for i, r := range res {
		if r.GetOperationId() != before+1+uint64(i) || r.GetStatus() != qdrant.UpdateStatus_Completed {
			t.Errorf("result %d = %v, want operation id %d, Completed", i, r, before+1+uint64(i))
		}
	}
	check := func(db *store.DB) {
		t.Helper()
		want := map[string]map[string]*qdrant.Value{
			"1": valueMap(t, map[string]any{"a": 1, "counts": map[string]any{"r1": 5, "r2": 6}}),
			"2": valueMap(t, map[string]any{"x": "y"}),
			"9": {},
		}
		if diff := cmp.Diff(want, getAll(t, db, "c"), protocmp.Transform()); diff != "" {
			t.Fatalf("payloads (-want +got):\n%s", diff)
		}
		got := query(t, db, &qdrant.QueryPoints{CollectionName: "c", Query: qdrant.NewQuery(1, 0), Limit: qdrant.PtrOf(uint64(1))})
		if got[0].GetId().GetNum() != 2 || got[0].GetScore() != 5 || got[0].GetVersion() != before+7 {
			t.Fatalf("nearest = %v, want point 2 (updated vector) at version %d", got[0], before+7)
		}
	}
	check(db)
	// Durable, and the operation counter goes on from the batch's last id.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openDB(t, dir)
	check(db)
	if op := upsert(t, db, "c", pt{num(10), []float32{0, 0}, nil}).GetOperationId(); op != before+uint64(len(ops))+1 {
		t.Fatalf("next operation id %d, want %d", op, before+uint64(len(ops))+1)
	}
}

// A failing operation leaves the collection exactly as it was, indexes
// included, though earlier operations of the batch had already run.
func TestUpdateBatchIsAtomic(t *testing.T) {
	db := newDB(t)
	orderColl(t, db)
	snapshot := func() (map[string]map[string]*qdrant.Value, []ordered, []string, uint64) {
		t.Helper()
		ob := query(t, db, &qdrant.QueryPoints{CollectionName: "o", Query: qdrant.NewQueryOrderBy(&qdrant.OrderBy{Key: "i"})})
		near := query(t, db, &qdrant.QueryPoints{CollectionName: "o", Query: qdrant.NewQuery(0, 1),
			Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewRange("f", &qdrant.Range{Gte: qdrant.PtrOf(-5.0)})}}})
		info, err := db.CollectionInfo(ctx, "o")
		if err != nil {
			t.Fatal(err)
		}
		return getAll(t, db, "o"), orders(ob), ids(near), info.GetPointsCount()
	}
	p0, o0, n0, c0 := snapshot()
	ops := []*qdrant.PointsUpdateOperation{
		batchUpsert(&qdrant.PointStruct{Id: num(7), Vectors: qdrant.NewVectorsDense([]float32{0, 1}), Payload: valueMap(t, map[string]any{"i": 1, "f": 0.5})}),
		{Operation: &qdrant.PointsUpdateOperation_DeletePoints_{DeletePoints: &qdrant.PointsUpdateOperation_DeletePoints{Points: qdrant.NewPointsSelector(num(1))}}},
		batchSetPayload(nil, valueMap(t, map[string]any{"i": 99}), 2),
		batchSetPayload(nil, valueMap(t, map[string]any{"x": 1}), 42), // no such point
	}
	_, err := db.UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: "o", Operations: ops})
	wantStatus(t, err, codes.NotFound, "Not found: No point with id 42 found")
	p1, o1, n1, c1 := snapshot()
	if diff := cmp.Diff(p0, p1, protocmp.Transform()); diff != "" {
		t.Errorf("payloads changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(o0, o1); diff != "" {
		t.Errorf("order_by changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(n0, n1); diff != "" {
		t.Errorf("indexed range filter changed (-before +after):\n%s", diff)
	}
	if c0 != c1 {
		t.Errorf("points count %d -> %d", c0, c1)
	}
	// The collection still takes writes.
	res, err := db.UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: "o", Operations: ops[:3]})
	if err != nil || len(res) != 3 {
		t.Fatalf("retry without the bad operation: %v, %v", res, err)
	}
	got := query(t, db, &qdrant.QueryPoints{CollectionName: "o", Query: qdrant.NewQueryOrderBy(&qdrant.OrderBy{Key: "i"})})
	if diff := cmp.Diff([]ordered{{"7", int64(1)}, {"3", int64(20)}, {"3", int64(40)}, {"2", int64(99)}}, orders(got)); diff != "" {
		t.Errorf("order_by after the retry (-want +got):\n%s", diff)
	}
}

func TestUpdateBatchErrors(t *testing.T) {
	db := newDB(t)
	createColl(t, db, "c", 2, qdrant.Distance_Dot)
	tests := []struct {
		name string
		req  *qdrant.UpdateBatchPoints
		code codes.Code
		msg  string
	}{
		{"no operations", &qdrant.UpdateBatchPoints{CollectionName: "c"}, codes.InvalidArgument, "Validation error in body: [operations: must be at least 1 characters]"},
		{"empty operation", &qdrant.UpdateBatchPoints{CollectionName: "c", Operations: []*qdrant.PointsUpdateOperation{{}}}, codes.InvalidArgument, "Operation is missing"},
		{"bad vector", &qdrant.UpdateBatchPoints{CollectionName: "c", Operations: []*qdrant.PointsUpdateOperation{
			batchUpsert(&qdrant.PointStruct{Id: num(1), Vectors: qdrant.NewVectorsDense([]float32{1})})}},
			codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: 2, got 1"},
		{"missing collection", &qdrant.UpdateBatchPoints{CollectionName: "nope", Operations: []*qdrant.PointsUpdateOperation{batchUpsert()}},
			codes.NotFound, "Not found: Collection `nope` doesn't exist!"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := db.UpdateBatch(ctx, tc.req)
			wantStatus(t, err, tc.code, tc.msg)
		})
	}
}

func TestDeleteVectors(t *testing.T) {
	db := newDB(t)
	createColl(t, db, "c", 2, qdrant.Distance_Dot)
	upsert(t, db, "c", pt{num(1), []float32{1, 0}, nil})
	tests := []struct {
		name string
		req  *qdrant.DeletePointVectors
		code codes.Code
		msg  string
	}{
		{"no vectors", &qdrant.DeletePointVectors{PointsSelector: qdrant.NewPointsSelector(num(1))}, codes.InvalidArgument, "vectors is expected"},
		{"named", &qdrant.DeletePointVectors{PointsSelector: qdrant.NewPointsSelector(num(1)), Vectors: &qdrant.VectorsSelector{Names: []string{"text"}}},
			codes.InvalidArgument, "Wrong input: Not existing vector name error: text"},
		{"unnamed", &qdrant.DeletePointVectors{PointsSelector: qdrant.NewPointsSelector(num(1)), Vectors: &qdrant.VectorsSelector{Names: []string{""}}},
			codes.Unimplemented, "memrank embedded store: deleting the unnamed vector is not supported: every point here keeps one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.CollectionName = "c"
			_, err := db.DeleteVectors(ctx, tc.req)
			wantStatus(t, err, tc.code, tc.msg)
		})
	}
	if _, err := db.DeleteVectors(ctx, &qdrant.DeletePointVectors{CollectionName: "c", PointsSelector: qdrant.NewPointsSelector(num(1)),
		Vectors: &qdrant.VectorsSelector{}}); err != nil {
		t.Fatalf("deleting no vectors: %v", err)
	}
	_, err := db.DeleteVectors(ctx, &qdrant.DeletePointVectors{CollectionName: "c", PointsSelector: qdrant.NewPointsSelector(num(5)),
		Vectors: &qdrant.VectorsSelector{Names: []string{""}}})
	wantStatus(t, err, codes.NotFound, "Not found: No point with id 5 found")
	// A filter that matches nothing deletes nothing and refuses nothing.
	if _, err := db.DeleteVectors(ctx, &qdrant.DeletePointVectors{CollectionName: "c",
		PointsSelector: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(num(5))}}),
		Vectors:        &qdrant.VectorsSelector{Names: []string{""}}}); err != nil {
		t.Fatalf("delete by a filter matching nothing: %v", err)
	}
}
