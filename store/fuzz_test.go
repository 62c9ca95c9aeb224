package store_test

import (
	"context"
	"testing"

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
