package storetest

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

func testUpsert(t *testing.T, target Target) {
	testUpsertIDs(t, target)
	testUpsertWrites(t, target)
	testUpsertConditional(t, target)
	testUpsertInvalidVectors(t, target)
}

// testUpsertIDs covers u64 and UUID point ids and the rejection of bad ones.
func testUpsertIDs(t *testing.T, target Target) {
	t.Run("u64 ids above 2^53 round-trip exactly", func(t *testing.T) {
		c := connect(t, target)
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		// 2^53+1 is the first integer a float64 (a JSON number in many clients) cannot hold.
		big := []uint64{0, 1, 1<<53 + 1, 1<<63 + 7, math.MaxUint64}
		var pts []*qdrant.PointStruct
		for i, n := range big {
			pts = append(pts, point(t, num(n), []float32{float32(i), 1}, map[string]any{"i": i}))
		}
		upsert(t, c, coll, pts...)
		got, err := c.Get(opContext(t), &qdrant.GetPoints{CollectionName: coll, Ids: ids(big...),
			WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if diff := cmp.Diff(numStrings(big...), pointIDs(scrollAll(t, c, coll, nil))); diff != "" {
			t.Errorf("scroll ids (-want +got):\n%s", diff)
		}
		if len(got) != len(big) {
			t.Fatalf("get returned %d points, want %d", len(got), len(big))
		}
		for _, p := range got {
			// Each id must come back with its own payload, not a neighbour's.
			i := p.GetPayload()["i"].GetIntegerValue()
			if i < 0 || int(i) >= len(big) || p.GetId().GetNum() != big[i] {
				t.Errorf("point %s carries payload i=%d", idString(p.GetId()), i)
			}
		}
	})

	t.Run("UUID ids come back lower-case hyphenated", func(t *testing.T) {
		c := connect(t, target)
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		// Qdrant parses UUID ids with uuid::Uuid::parse_str (upper case and the simple form are
		// accepted) and prints them hyphenated in lower case (lib/api/src/grpc/conversions.rs).
		upsert(t, c, coll,
			point(t, qdrant.NewID("6F9619FF-8B86-D011-B42D-00C04FC964FF"), []float32{1, 0}, map[string]any{"n": "upper"}),
			point(t, qdrant.NewID("a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5"), []float32{0, 1}, map[string]any{"n": "simple"}),
		)
		want := []string{"6f9619ff-8b86-d011-b42d-00c04fc964ff", "a0b1c2d3-e4f5-a6b7-c8d9-e0f1a2b3c4d5"}
		if diff := cmp.Diff(want, sortedIDs(scrollAll(t, c, coll, nil))); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
		// The canonical form finds the point written with the other spelling.
		p := getPoint(t, c, coll, qdrant.NewID("6f9619ff-8b86-d011-b42d-00c04fc964ff"))
		wantPayload(t, p.GetPayload(), map[string]any{"n": "upper"})
		// A UUID and a number are different ids even when the number is the UUID's value.
		upsert(t, c, coll, point(t, num(1), []float32{1, 1}, nil))
		if got := count(t, c, coll, nil); got != 3 {
			t.Errorf("count = %d, want 3", got)
		}
	})

	t.Run("bad ids are InvalidArgument", func(t *testing.T) {
		c := connect(t, target)
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		// PointId conversion in lib/api/src/grpc/conversions.rs: "Unable to parse UUID: <s>"
		// for a string that is no UUID, "Empty ID is not allowed" for a point without id.
		for _, tc := range []struct {
			name string
			id   *qdrant.PointId
			text string
		}{
			{"not a UUID", qdrant.NewID("not-a-uuid"), "Unable to parse UUID: not-a-uuid"},
			{"no id", nil, ""},
			{"empty PointId", &qdrant.PointId{}, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := c.Upsert(opContext(t), &qdrant.UpsertPoints{CollectionName: coll, Wait: waitApplied(),
					Points: []*qdrant.PointStruct{point(t, tc.id, []float32{1, 0}, nil)}})
				wantStatus(t, err, codes.InvalidArgument, tc.text)
			})
		}
		if got := count(t, c, coll, nil); got != 0 {
			t.Errorf("count after refused upserts = %d, want 0", got)
		}
	})
}

// testUpsertWrites covers the data field, wait, overwrites and duplicate ids in one batch.
func testUpsertWrites(t *testing.T, target Target) {
	t.Run("the deprecated data field is accepted", func(t *testing.T) {
		c := connect(t, target)
		coll := newCollection(t, c, 3, qdrant.Distance_Dot)
		// Clients older than the dense oneof send Vector.data (lib/api/src/conversions/vectors.rs
		// still reads it).
		old := &qdrant.Vectors{VectorsOptions: &qdrant.Vectors_Vector{Vector: &qdrant.Vector{Data: []float32{1, 2, 3}}}}
		upsert(t, c, coll, &qdrant.PointStruct{Id: num(1), Vectors: old})
		if diff := cmp.Diff([]float32{1, 2, 3}, dense(getPoint(t, c, coll, num(1)).GetVectors()), approx()); diff != "" {
			t.Errorf("vector (-want +got):\n%s", diff)
		}
	})

	t.Run("writes with wait answer Completed", func(t *testing.T) {
		c := connect(t, target)
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		res, err := c.Upsert(opContext(t), &qdrant.UpsertPoints{CollectionName: coll, Wait: waitApplied(),
			Points: []*qdrant.PointStruct{point(t, num(1), []float32{1, 0}, nil)}})
		if err != nil {
			t.Fatalf("upsert: %v", err)
		}
		if res.GetStatus() != qdrant.UpdateStatus_Completed {
			t.Errorf("upsert status = %v, want Completed", res.GetStatus())
		}
		res, err = c.SetPayload(opContext(t), &qdrant.SetPayloadPoints{CollectionName: coll, Wait: waitApplied(),
			PointsSelector: qdrant.NewPointsSelector(num(1)), Payload: payload(t, map[string]any{"a": 1})})
		if err != nil {
			t.Fatalf("set payload: %v", err)
		}
		if res.GetStatus() != qdrant.UpdateStatus_Completed {
			t.Errorf("set payload status = %v, want Completed", res.GetStatus())
		}
	})

	t.Run("overwrite replaces the whole point", func(t *testing.T) {
		c := connect(t, target)
		coll := newCollection(t, c, 3, qdrant.Distance_Dot)
		upsert(t, c, coll, point(t, num(7), []float32{1, 2, 3}, map[string]any{"a": 1, "b": "x"}))
		upsert(t, c, coll, point(t, num(7), []float32{4, 5, 6}, map[string]any{"c": true}))
		p := getPoint(t, c, coll, num(7))
		wantPayload(t, p.GetPayload(), map[string]any{"c": true})
		if diff := cmp.Diff([]float32{4, 5, 6}, dense(p.GetVectors()), approx()); diff != "" {
			t.Errorf("vector (-want +got):\n%s", diff)
		}
		// An upsert without payload clears the old one (test_payload_operations.py,
		// test_payload_index_overwrite).
		upsert(t, c, coll, point(t, num(7), []float32{4, 5, 6}, nil))
		wantPayload(t, getPoint(t, c, coll, num(7)).GetPayload(), nil)
		if got := count(t, c, coll, nil); got != 1 {
			t.Errorf("count = %d, want 1", got)
		}
	})

	t.Run("the last of duplicate ids in one batch wins", func(t *testing.T) {
		c := connect(t, target)
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		// upsert_points_impl collects the batch into a map by id, so a later entry replaces an
		// earlier one (lib/shard/src/update/points/upsert.rs; lib/shard/src/update.rs in v1.17).
		upsert(t, c, coll,
			point(t, num(1), []float32{1, 0}, map[string]any{"v": "first"}),
			point(t, num(1), []float32{0, 1}, map[string]any{"v": "last"}),
		)
		p := getPoint(t, c, coll, num(1))
		wantPayload(t, p.GetPayload(), map[string]any{"v": "last"})
		if diff := cmp.Diff([]float32{0, 1}, dense(p.GetVectors()), approx()); diff != "" {
			t.Errorf("vector (-want +got):\n%s", diff)
		}
		if got := count(t, c, coll, nil); got != 1 {
			t.Errorf("count = %d, want 1", got)
		}
	})
}

// testUpsertConditional covers update_mode and update_filter.
func testUpsertConditional(t *testing.T, target Target) {
	// update_mode and update_filter: lib/shard/src/update/points/upsert.rs
	// (retain_conditional_upsert_points); tests/openapi/test_update_mode.py and
	// test_conditional_update.py.
	t.Run("update_mode", func(t *testing.T) {
		cases := []struct {
			name      string
			mode      qdrant.UpdateMode
			want1     map[string]any // payload of the existing point 1 afterwards
			want2     bool           // whether the new point 2 exists afterwards
			wantCount uint64
		}{
			{"upsert", qdrant.UpdateMode_Upsert, map[string]any{"v": "new"}, true, 2},
			{"insert_only", qdrant.UpdateMode_InsertOnly, map[string]any{"v": "old"}, true, 2},
			{"update_only", qdrant.UpdateMode_UpdateOnly, map[string]any{"v": "new"}, false, 1},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				c := connect(t, target)
				coll := newCollection(t, c, 2, qdrant.Distance_Dot)
				upsert(t, c, coll, point(t, num(1), []float32{1, 0}, map[string]any{"v": "old"}))
				_, err := c.Upsert(opContext(t), &qdrant.UpsertPoints{
					CollectionName: coll,
					Wait:           waitApplied(),
					UpdateMode:     tc.mode.Enum(),
					Points: []*qdrant.PointStruct{
						point(t, num(1), []float32{0, 1}, map[string]any{"v": "new"}),
						point(t, num(2), []float32{1, 1}, map[string]any{"v": "new"}),
					},
				})
				if err != nil {
					t.Fatalf("upsert with update_mode %v: %v", tc.mode, err)
				}
				wantPayload(t, getPoint(t, c, coll, num(1)).GetPayload(), tc.want1)
				got, err := c.Get(opContext(t), &qdrant.GetPoints{CollectionName: coll, Ids: ids(2)})
				if err != nil {
					t.Fatalf("get: %v", err)
				}
				if (len(got) == 1) != tc.want2 {
					t.Errorf("new point 2 exists = %v, want %v", len(got) == 1, tc.want2)
				}
				if n := count(t, c, coll, nil); n != tc.wantCount {
					t.Errorf("count = %d, want %d", n, tc.wantCount)
				}
			})
		}
	})

	t.Run("update_filter updates only matching points and inserts new ones", func(t *testing.T) {
		c := connect(t, target)
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		upsert(t, c, coll,
			point(t, num(1), []float32{1, 0}, map[string]any{"version": 5}),
			point(t, num(2), []float32{1, 0}, map[string]any{"version": 3}),
		)
		_, err := c.Upsert(opContext(t), &qdrant.UpsertPoints{
			CollectionName: coll,
			Wait:           waitApplied(),
			UpdateFilter: &qdrant.Filter{Must: []*qdrant.Condition{
				qdrant.NewRange("version", &qdrant.Range{Lt: qdrant.PtrOf(5.0)}),
			}},
			Points: []*qdrant.PointStruct{
				point(t, num(1), []float32{0, 1}, map[string]any{"version": 6}),
				point(t, num(2), []float32{0, 1}, map[string]any{"version": 6}),
				point(t, num(3), []float32{0, 1}, map[string]any{"version": 6}),
			},
		})
		if err != nil {
			t.Fatalf("conditional upsert: %v", err)
		}
		p1 := getPoint(t, c, coll, num(1))
		wantPayload(t, p1.GetPayload(), map[string]any{"version": 5})
		if diff := cmp.Diff([]float32{1, 0}, dense(p1.GetVectors()), approx()); diff != "" {
			t.Errorf("point 1 (did not match) vector changed (-want +got):\n%s", diff)
		}
		p2 := getPoint(t, c, coll, num(2))
		wantPayload(t, p2.GetPayload(), map[string]any{"version": 6})
		if diff := cmp.Diff([]float32{0, 1}, dense(p2.GetVectors()), approx()); diff != "" {
			t.Errorf("point 2 (matched) vector (-want +got):\n%s", diff)
		}
		wantPayload(t, getPoint(t, c, coll, num(3)).GetPayload(), map[string]any{"version": 6})
	})
}

// testUpsertInvalidVectors covers vectors of the wrong dimension and non-finite vectors.
func testUpsertInvalidVectors(t *testing.T, target Target) {
	t.Run("wrong dimension is InvalidArgument", func(t *testing.T) {
		c := connect(t, target)
		coll := newCollection(t, c, 4, qdrant.Distance_Cosine)
		// OperationError::WrongVectorDimension through BadInput
		// (lib/segment/src/common/operation_error.rs); test_vector_dimension_validation.py.
		for _, tc := range []struct {
			name string
			vec  []float32
			text string
		}{
			{"shorter", []float32{1, 2, 3}, "Wrong input: Vector dimension error: expected dim: 4, got 3"},
			{"longer", []float32{1, 2, 3, 4, 5}, "Wrong input: Vector dimension error: expected dim: 4, got 5"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := c.Upsert(opContext(t), &qdrant.UpsertPoints{CollectionName: coll, Wait: waitApplied(),
					Points: []*qdrant.PointStruct{point(t, num(1), tc.vec, nil)}})
				wantStatus(t, err, codes.InvalidArgument, tc.text)
			})
		}
		if got := count(t, c, coll, nil); got != 0 {
			t.Errorf("count after refused upserts = %d, want 0", got)
		}
		// A batch with one bad point is refused too. Whether its good points are applied is
		// version-dependent (v1.18.1 moved the check before the WAL write, qdrant#9058; before,
		// chunks could be applied up to the bad point), so only the error is asserted.
		_, err := c.Upsert(opContext(t), &qdrant.UpsertPoints{CollectionName: coll, Wait: waitApplied(),
			Points: []*qdrant.PointStruct{
				point(t, num(1), []float32{1, 2, 3, 4}, nil),
				point(t, num(2), []float32{1, 2}, nil),
			}})
		wantStatus(t, err, codes.InvalidArgument, "Vector dimension error")
	})

	t.Run("non-finite vector is InvalidArgument", func(t *testing.T) {
		if !target.RejectsNonFiniteVectors {
			t.Skip("target does not claim to reject non-finite vectors: real Qdrant stores them (qdrant/qdrant#9201)")
		}
		c := connect(t, target)
		coll := newCollection(t, c, 3, qdrant.Distance_Cosine)
		for _, tc := range []struct {
			name string
			vec  []float32
		}{
			{"NaN", []float32{1, float32(math.NaN()), 0}},
			{"+Inf", []float32{float32(math.Inf(1)), 0, 0}},
			{"-Inf", []float32{0, 0, float32(math.Inf(-1))}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := c.Upsert(opContext(t), &qdrant.UpsertPoints{CollectionName: coll, Wait: waitApplied(),
					Points: []*qdrant.PointStruct{point(t, num(1), tc.vec, nil)}})
				wantStatus(t, err, codes.InvalidArgument, "")
			})
		}
		if got := count(t, c, coll, nil); got != 0 {
			t.Errorf("count after refused upserts = %d, want 0", got)
		}
	})
}

func testPoints(t *testing.T, target Target) {
	c := connect(t, target)
	coll := newCollection(t, c, 2, qdrant.Distance_Dot)
	upsert(t, c, coll,
		point(t, num(1), []float32{1, 0}, map[string]any{"g": "a"}),
		point(t, num(2), []float32{0, 1}, map[string]any{"g": "b"}),
		point(t, num(3), []float32{1, 1}, map[string]any{"g": "a"}),
	)
	testPointsRead(t, c, coll)
	testPointsWrite(t, target)
}

// testPointsRead covers getting and counting points.
func testPointsRead(t *testing.T, c *qdrant.Client, coll string) {
	t.Run("get omits missing ids without error", func(t *testing.T) {
		got, err := c.Get(opContext(t), &qdrant.GetPoints{CollectionName: coll, Ids: ids(3, 999, 1)})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if diff := cmp.Diff([]string{"1", "3"}, sortedIDs(got)); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
	})

	t.Run("get with no ids returns nothing", func(t *testing.T) {
		// GetPoints.ids carries no validation; Collection::retrieve returns early on none.
		got, err := c.Get(opContext(t), &qdrant.GetPoints{CollectionName: coll})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if len(got) != 0 {
			t.Errorf("got %d points, want none", len(got))
		}
	})

	t.Run("get leaves payload and vectors out by default", func(t *testing.T) {
		// gRPC Get: with_payload defaults to false (Collection::retrieve), with_vectors to false.
		got, err := c.Get(opContext(t), &qdrant.GetPoints{CollectionName: coll, Ids: ids(1)})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if len(got) != 1 {
			t.Fatalf("got %d points, want 1", len(got))
		}
		if len(got[0].GetPayload()) != 0 {
			t.Errorf("payload = %v, want none by default", got[0].GetPayload())
		}
		if got[0].GetVectors() != nil {
			t.Errorf("vectors = %v, want none by default", got[0].GetVectors())
		}
	})

	t.Run("get with payload and vectors", func(t *testing.T) {
		got, err := c.Get(opContext(t), &qdrant.GetPoints{CollectionName: coll, Ids: ids(2),
			WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if len(got) != 1 {
			t.Fatalf("got %d points, want 1", len(got))
		}
		wantPayload(t, got[0].GetPayload(), map[string]any{"g": "b"})
		if diff := cmp.Diff([]float32{0, 1}, dense(got[0].GetVectors()), approx()); diff != "" {
			t.Errorf("vector (-want +got):\n%s", diff)
		}
	})

	t.Run("count with and without filter", func(t *testing.T) {
		if got := count(t, c, coll, nil); got != 3 {
			t.Errorf("count = %d, want 3", got)
		}
		f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("g", "a")}}
		if got := count(t, c, coll, f); got != 2 {
			t.Errorf("count g=a = %d, want 2", got)
		}
	})
}

// testPointsWrite covers UpdateVectors, a one-dimensional collection and deleting points.
func testPointsWrite(t *testing.T, target Target) {
	t.Run("UpdateVectors replaces the vector and keeps the payload", func(t *testing.T) {
		c := connect(t, target)
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		upsert(t, c, coll, point(t, num(1), []float32{1, 0}, map[string]any{"keep": true}))
		_, err := c.UpdateVectors(opContext(t), &qdrant.UpdatePointVectors{CollectionName: coll, Wait: waitApplied(),
			Points: []*qdrant.PointVectors{{Id: num(1), Vectors: qdrant.NewVectorsDense([]float32{0, 3})}}})
		skipIfUnimplemented(t, err, "Points/UpdateVectors")
		if err != nil {
			t.Fatalf("update vectors: %v", err)
		}
		p := getPoint(t, c, coll, num(1))
		wantPayload(t, p.GetPayload(), map[string]any{"keep": true})
		if diff := cmp.Diff([]float32{0, 3}, dense(p.GetVectors()), approx()); diff != "" {
			t.Errorf("vector (-want +got):\n%s", diff)
		}
		got := query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQuery(0, 1)})
		if diff := cmp.Diff([]hit{{"1", 3}}, hits(got), approx()); diff != "" {
			t.Errorf("search after the update (-want +got):\n%s", diff)
		}
		// Like payload writes, a vector update of a missing id is NotFound
		// (check_unprocessed_points in lib/shard/src/update/vectors.rs).
		_, err = c.UpdateVectors(opContext(t), &qdrant.UpdatePointVectors{CollectionName: coll, Wait: waitApplied(),
			Points: []*qdrant.PointVectors{{Id: num(999), Vectors: qdrant.NewVectorsDense([]float32{1, 1})}}})
		wantStatus(t, err, codes.NotFound, "No point with id 999 found")
		_, err = c.UpdateVectors(opContext(t), &qdrant.UpdatePointVectors{CollectionName: coll, Wait: waitApplied(),
			Points: []*qdrant.PointVectors{{Id: num(1), Vectors: qdrant.NewVectorsDense([]float32{1, 1, 1})}}})
		wantStatus(t, err, codes.InvalidArgument, "Vector dimension error: expected dim: 2, got 3")
		if got := count(t, c, coll, nil); got != 1 {
			t.Errorf("count = %d, want 1", got)
		}
	})

	t.Run("a one-dimensional collection works", func(t *testing.T) {
		// memrank's audit companion collections carry a 1-dim vector and are read by filter.
		c := connect(t, target)
		coll := newCollection(t, c, 1, qdrant.Distance_Dot)
		if _, err := c.CreateFieldIndex(opContext(t), &qdrant.CreateFieldIndexCollection{CollectionName: coll, Wait: waitApplied(),
			FieldName: "memory_id", FieldType: qdrant.FieldType_FieldTypeKeyword.Enum()}); err != nil {
			t.Fatalf("create field index: %v", err)
		}
		upsert(t, c, coll,
			point(t, num(1), []float32{1}, map[string]any{"memory_id": "m1", "seq": 1}),
			point(t, num(2), []float32{1}, map[string]any{"memory_id": "m2", "seq": 1}),
			point(t, num(3), []float32{1}, map[string]any{"memory_id": "m1", "seq": 2}),
		)
		got := scrollAll(t, c, coll, must(qdrant.NewMatchKeyword("memory_id", "m1")))
		if diff := cmp.Diff(numStrings(1, 3), pointIDs(got)); diff != "" {
			t.Errorf("scroll ids (-want +got):\n%s", diff)
		}
	})

	t.Run("delete by ids and by filter", func(t *testing.T) {
		c := connect(t, target)
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		for i := range uint64(6) {
			upsert(t, c, coll, point(t, num(i+1), []float32{1, float32(i)}, map[string]any{"odd": i%2 == 0}))
		}
		// Deleting ids that don't exist is not an error (lib/shard/src/update/points).
		_, err := c.Delete(opContext(t), &qdrant.DeletePoints{CollectionName: coll, Wait: waitApplied(),
			Points: qdrant.NewPointsSelector(num(2), num(999))})
		if err != nil {
			t.Fatalf("delete by ids: %v", err)
		}
		if diff := cmp.Diff(numStrings(1, 3, 4, 5, 6), pointIDs(scrollAll(t, c, coll, nil))); diff != "" {
			t.Errorf("after delete by ids (-want +got):\n%s", diff)
		}
		_, err = c.Delete(opContext(t), &qdrant.DeletePoints{CollectionName: coll, Wait: waitApplied(),
			Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchBool("odd", true)}})})
		if err != nil {
			t.Fatalf("delete by filter: %v", err)
		}
		if diff := cmp.Diff(numStrings(4, 6), pointIDs(scrollAll(t, c, coll, nil))); diff != "" {
			t.Errorf("after delete by filter (-want +got):\n%s", diff)
		}
		if got := count(t, c, coll, nil); got != 2 {
			t.Errorf("count = %d, want 2", got)
		}
		// A deleted id can be written again.
		upsert(t, c, coll, point(t, num(2), []float32{2, 2}, map[string]any{"again": true}))
		wantPayload(t, getPoint(t, c, coll, num(2)).GetPayload(), map[string]any{"again": true})
	})
}
