package storetest

import (
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
)

// indexPayloads has every indexed field in its index's type only. A value of another type
// (an integer stored as 3.0 under an integer index, say) is where Qdrant's results do depend on
// the index, so it is kept out: with clean data an index changes speed, never results.
func indexPayloads() map[uint64]map[string]any {
	return map[uint64]map[string]any{
		1: {"city": "Berlin", "n": 1, "price": 10.5, "flag": true, "ts": "2024-01-01T00:00:00Z"},
		2: {"city": "London", "n": 2, "price": 20.25, "flag": false, "ts": "2024-06-01T12:00:00+02:00"},
		3: {"city": []any{"Berlin", "Paris"}, "n": []any{3, 7}, "price": 30.75, "flag": true, "ts": "2025-01-01T00:00:00Z"},
		4: {"city": "Paris", "n": 4, "price": 40.5, "flag": false},
		5: {},
	}
}

type indexedField struct {
	name   string
	field  qdrant.FieldType
	schema qdrant.PayloadSchemaType
}

func indexedFields() []indexedField {
	return []indexedField{
		{"city", qdrant.FieldType_FieldTypeKeyword, qdrant.PayloadSchemaType_Keyword},
		{"n", qdrant.FieldType_FieldTypeInteger, qdrant.PayloadSchemaType_Integer},
		{"price", qdrant.FieldType_FieldTypeFloat, qdrant.PayloadSchemaType_Float},
		{"flag", qdrant.FieldType_FieldTypeBool, qdrant.PayloadSchemaType_Bool},
		{"ts", qdrant.FieldType_FieldTypeDatetime, qdrant.PayloadSchemaType_Datetime},
	}
}

func indexCases() []filterCase {
	return []filterCase{
		{"keyword", must(qdrant.NewMatchKeyword("city", "Berlin")), []uint64{1, 3}},
		{"keyword any", must(qdrant.NewMatchKeywords("city", "London", "Paris")), []uint64{2, 3, 4}},
		{"keyword must_not", &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatchKeyword("city", "Berlin")}}, []uint64{2, 4, 5}},
		{"keyword is_empty", must(qdrant.NewIsEmpty("city")), []uint64{5}},
		{"integer match", must(qdrant.NewMatchInt("n", 3)), []uint64{3}},
		{"integer range", must(qdrant.NewRange("n", &qdrant.Range{Gte: qdrant.PtrOf(2.0), Lt: qdrant.PtrOf(4.0)})), []uint64{2, 3}},
		{"float range gt", must(qdrant.NewRange("price", &qdrant.Range{Gt: qdrant.PtrOf(20.25)})), []uint64{3, 4}},
		{"float range lte", must(qdrant.NewRange("price", &qdrant.Range{Lte: qdrant.PtrOf(20.25)})), []uint64{1, 2}},
		{"bool true", must(qdrant.NewMatchBool("flag", true)), []uint64{1, 3}},
		{"bool false", must(qdrant.NewMatchBool("flag", false)), []uint64{2, 4}},
		{"datetime range with offset", must(qdrant.NewDatetimeRange("ts", &qdrant.DatetimeRange{
			Gte: ts(2024, time.June, 1, 9, 30), Lt: ts(2024, time.June, 1, 11, 0)})), []uint64{2}},
		{"datetime gt", must(qdrant.NewDatetimeRange("ts", &qdrant.DatetimeRange{Gt: ts(2024, time.January, 1, 0, 0)})), []uint64{2, 3}},
		{"should over two indexes", &qdrant.Filter{Should: []*qdrant.Condition{
			qdrant.NewMatchKeyword("city", "London"), qdrant.NewMatchInt("n", 4)}}, []uint64{2, 4}},
	}
}

func loadIndexSet(t *testing.T, c *qdrant.Client, coll string) {
	t.Helper()
	var pts []*qdrant.PointStruct
	for id, pl := range indexPayloads() {
		pts = append(pts, point(t, num(id), []float32{1, float32(id)}, pl))
	}
	upsert(t, c, coll, pts...)
}

func createIndexes(t *testing.T, c *qdrant.Client, coll string) {
	t.Helper()
	for _, f := range indexedFields() {
		_, err := c.CreateFieldIndex(opContext(t), &qdrant.CreateFieldIndexCollection{
			CollectionName: coll, Wait: waitApplied(), FieldName: f.name, FieldType: f.field.Enum(),
		})
		if err != nil {
			t.Fatalf("create %v index on %q: %v", f.field, f.name, err)
		}
	}
}

func testFieldIndex(t *testing.T, target Target) {
	c := connect(t, target)
	plain := newCollection(t, c, 2, qdrant.Distance_Dot)
	loadIndexSet(t, c, plain)
	// Indexes built before the data arrives and indexes built over existing data.
	before := newCollection(t, c, 2, qdrant.Distance_Dot)
	createIndexes(t, c, before)
	loadIndexSet(t, c, before)
	after := newCollection(t, c, 2, qdrant.Distance_Dot)
	loadIndexSet(t, c, after)
	createIndexes(t, c, after)

	t.Run("payload schema lists the indexes", func(t *testing.T) {
		for _, coll := range []string{before, after} {
			info, err := c.GetCollectionInfo(opContext(t), coll)
			if err != nil {
				t.Fatalf("get collection: %v", err)
			}
			schema := info.GetPayloadSchema()
			for _, f := range indexedFields() {
				if got := schema[f.name].GetDataType(); got != f.schema {
					t.Errorf("%s: payload_schema[%q] = %v, want %v", coll, f.name, got, f.schema)
				}
			}
		}
	})

	for _, tc := range indexCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, coll := range []struct{ name, coll string }{
				{"without index", plain}, {"index before data", before}, {"index after data", after},
			} {
				t.Run(coll.name, func(t *testing.T) {
					checkFilter(t, c, coll.coll, []float32{0, 1}, tc.filter, tc.want)
				})
			}
		})
	}
}
