package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/store"
)

// fuzzStore opens a store holding the filter points twice, once plain and
// once behind payload indexes. It is shared by every input the fuzzing
// process runs and closed when the fuzz target ends.
func fuzzStore(f *testing.F) *store.DB {
	db, err := store.Open(f.TempDir(), store.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = db.Close() })
	bg := context.Background()
	for _, coll := range []string{"plain", "indexed"} {
		if err := db.CreateCollection(bg, &qdrant.CreateCollection{CollectionName: coll,
			VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})}); err != nil {
			f.Fatal(err)
		}
		req := &qdrant.UpsertPoints{CollectionName: coll}
		for id, p := range filterPoints {
			req.Points = append(req.Points, &qdrant.PointStruct{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectors(float32(id), 1), Payload: qdrant.NewValueMap(p)})
		}
		if _, err := db.Upsert(bg, req); err != nil {
			f.Fatal(err)
		}
	}
	for field, typ := range map[string]qdrant.FieldType{"s": qdrant.FieldType_FieldTypeKeyword, "i": qdrant.FieldType_FieldTypeInteger,
		"b": qdrant.FieldType_FieldTypeBool, "f": qdrant.FieldType_FieldTypeFloat, "dt": qdrant.FieldType_FieldTypeDatetime} {
		if _, err := db.CreateFieldIndex(bg, &qdrant.CreateFieldIndexCollection{CollectionName: "indexed",
			FieldName: field, FieldType: typ.Enum()}); err != nil {
			f.Fatal(err)
		}
	}
	return db
}

// FuzzFilter feeds arbitrary protobuf-encoded filters to the evaluator
// (nil and empty conditions, nil values, deep nesting, odd paths and
// ranges): no input may panic, and a payload index may never change the
// answer: the indexed collection answers exactly as the plain one.
func FuzzFilter(f *testing.F) {
	db := fuzzStore(f)
	for _, tc := range filterCases() {
		b, err := proto.Marshal(tc.filter)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var filter qdrant.Filter
		if err := proto.Unmarshal(b, &filter); err != nil {
			return
		}
		ctx := context.Background()
		n1, err1 := db.Count(ctx, &qdrant.CountPoints{CollectionName: "plain", Filter: &filter})
		n2, err2 := db.Count(ctx, &qdrant.CountPoints{CollectionName: "indexed", Filter: &filter})
		if (err1 == nil) != (err2 == nil) || n1 != n2 {
			t.Fatalf("plain: %d, %v; indexed: %d, %v", n1, err1, n2, err2)
		}
		if err1 != nil {
			return
		}
		if _, err := db.Query(ctx, &qdrant.QueryPoints{CollectionName: "indexed", Query: qdrant.NewQuery(1, 1), Filter: &filter}); err != nil {
			t.Fatalf("query failed where count did not: %v", err)
		}
	})
}

// FuzzQuery feeds arbitrary protobuf-encoded QueryPoints (prefetch trees,
// fusion, order_by, sample, thresholds, offsets) to Query and, with a key to
// group by, to QueryGroups: no input may panic or fail with anything but a
// store error, and where the query draws nothing at random the indexed
// collection answers as the plain one does.
func FuzzQuery(f *testing.F) {
	db := fuzzStore(f)
	lim := func(n uint64) *uint64 { return &n }
	seeds := []*qdrant.QueryPoints{
		{Query: qdrant.NewQuery(1, 1), Limit: lim(3), Offset: lim(1)},
		{Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF), Prefetch: []*qdrant.PrefetchQuery{
			{Query: qdrant.NewQuery(1, 0), Limit: lim(4)}, {Query: qdrant.NewQuery(0, 1), Filter: must(qdrant.NewMatchKeyword("s", "a"))}}},
		{Query: qdrant.NewQueryRRF(&qdrant.Rrf{K: qdrant.PtrOf(uint32(3)), Weights: []float32{2, 0.5}}), Prefetch: []*qdrant.PrefetchQuery{
			{Query: qdrant.NewQueryID(qdrant.NewIDNum(1))}, {Query: qdrant.NewQuery(0, 1), ScoreThreshold: qdrant.PtrOf(float32(0.5))}}},
		{Query: qdrant.NewQueryFusion(qdrant.Fusion_DBSF), ScoreThreshold: qdrant.PtrOf(float32(0.3)), Prefetch: []*qdrant.PrefetchQuery{
			{Query: qdrant.NewQuery(1, 0), Prefetch: []*qdrant.PrefetchQuery{{Limit: lim(2)}}}}},
		{Query: qdrant.NewQueryOrderBy(&qdrant.OrderBy{Key: "i", Direction: qdrant.Direction_Desc.Enum(), StartFrom: qdrant.NewStartFromFloat(2)})},
		{Query: qdrant.NewQueryOrderBy(&qdrant.OrderBy{Key: "dt", StartFrom: qdrant.NewStartFromDatetime("2024-01-01")}), Limit: lim(2)},
		{Query: qdrant.NewQuerySample(qdrant.Sample_Random), Prefetch: []*qdrant.PrefetchQuery{{Query: qdrant.NewQuery(1, 1)}}},
		{Query: qdrant.NewQuery(1, 0), Prefetch: []*qdrant.PrefetchQuery{{Limit: lim(0)}}},
	}
	for _, q := range seeds {
		b, err := proto.Marshal(q)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "s")
		f.Add(b, "")
	}
	f.Fuzz(func(t *testing.T, b []byte, groupBy string) {
		var q qdrant.QueryPoints
		if err := proto.Unmarshal(b, &q); err != nil {
			return
		}
		ctx := context.Background()
		var res [2][]*qdrant.ScoredPoint
		var errs [2]error
		for i, coll := range []string{"plain", "indexed"} {
			q.CollectionName = coll
			res[i], errs[i] = db.Query(ctx, &q)
			var se *store.Error
			if errs[i] != nil && !errors.As(errs[i], &se) {
				t.Fatalf("%s: error %v (%T) is not a store error", coll, errs[i], errs[i])
			}
			g := &qdrant.QueryPointGroups{CollectionName: coll, Prefetch: q.Prefetch, Query: q.Query, Filter: q.Filter,
				ScoreThreshold: q.ScoreThreshold, Limit: q.Limit, GroupBy: groupBy, WithPayload: q.WithPayload}
			if _, err := db.QueryGroups(ctx, g); err != nil && !errors.As(err, &se) {
				t.Fatalf("%s: groups error %v (%T) is not a store error", coll, err, err)
			}
		}
		if errs[0] != nil || errs[1] != nil || usesSample(q.GetQuery(), q.GetPrefetch()) {
			return
		}
		if diff := cmp.Diff(res[0], res[1], protocmp.Transform()); diff != "" {
			t.Fatalf("plain and indexed differ (-plain +indexed):\n%s", diff)
		}
	})
}

func usesSample(q *qdrant.Query, ps []*qdrant.PrefetchQuery) bool {
	if _, ok := q.GetVariant().(*qdrant.Query_Sample); ok {
		return true
	}
	for _, p := range ps {
		if usesSample(p.GetQuery(), p.GetPrefetch()) {
			return true
		}
	}
	return false
}

// Nil messages anywhere in a request are treated as absent, never panic.
func TestNilInputs(t *testing.T) {
	db := newDB(t)
	loadFilterPoints(t, db, "c")
	filters := []*qdrant.Filter{
		nil,
		{Must: []*qdrant.Condition{nil}},
		{MustNot: []*qdrant.Condition{{ConditionOneOf: &qdrant.Condition_Field{Field: nil}}}},
		{Should: []*qdrant.Condition{{ConditionOneOf: &qdrant.Condition_Filter{Filter: nil}}}},
		{Must: []*qdrant.Condition{{ConditionOneOf: &qdrant.Condition_HasId{HasId: nil}}}},
		{Must: []*qdrant.Condition{{ConditionOneOf: &qdrant.Condition_IsEmpty{IsEmpty: nil}}}},
		{Must: []*qdrant.Condition{qdrant.NewRange("i", nil)}},
		{Must: []*qdrant.Condition{qdrant.NewMatchKeywords("s", []string{}...)}},
	}
	for i, f := range filters {
		// An error is fine (Qdrant rejects some of these); a panic is not.
		_, _ = db.Count(ctx, &qdrant.CountPoints{CollectionName: "c", Filter: f})
		_, _ = db.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Filter: f, Query: qdrant.NewQuery(1, 0)})
		_, _, _ = db.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c", Filter: f})
		_ = i
	}
	// A nil payload value is stored as null.
	_, err := db.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{{Id: num(9), Vectors: qdrant.NewVectors(1, 0),
		Payload: map[string]*qdrant.Value{"a": nil, "b": {}, "l": qdrant.NewValueFromList(nil)}}}})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := db.Count(ctx, &qdrant.CountPoints{CollectionName: "c", Filter: must(qdrant.NewIsNull("a"), qdrant.NewIsNull("b"))}); n != 1 {
		t.Fatalf("nil values not stored as null: %d", n)
	}
	// Nil requests are answered with errors.
	if _, err := db.Query(ctx, nil); err == nil {
		t.Fatal("nil query request accepted")
	}
	if _, err := db.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{nil}}); err == nil {
		t.Fatal("nil point accepted")
	}
}
