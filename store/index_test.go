package store_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
)

// is_empty and match except are answered from a payload index on their
// key (the group-by driver adds both to every round); the answer must be
// exactly what the payloads give, whatever types the key holds.
func TestIndexAnswersExceptAndIsEmpty(t *testing.T) {
	db := newDB(t)
	loadFilterPoints(t, db, "plain")
	loadFilterPoints(t, db, "indexed")
	for key, ft := range map[string]qdrant.FieldType{"s": qdrant.FieldType_FieldTypeKeyword, "mixed": qdrant.FieldType_FieldTypeKeyword,
		"nul": qdrant.FieldType_FieldTypeKeyword, "arr": qdrant.FieldType_FieldTypeInteger, "i": qdrant.FieldType_FieldTypeInteger,
		"obj": qdrant.FieldType_FieldTypeKeyword} {
		if _, err := db.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: "indexed", FieldName: key, FieldType: ft.Enum()}); err != nil {
			t.Fatal(err)
		}
	}
	conds := map[string]*qdrant.Condition{}
	for _, key := range []string{"s", "mixed", "nul", "arr", "i", "obj", "missing"} {
		conds["is_empty "+key] = qdrant.NewIsEmpty(key)
		conds["except red "+key] = qdrant.NewMatchExceptKeywords(key, "red", "1")
		conds["except 1 3 5 "+key] = qdrant.NewMatchExceptInts(key, 1, 3, 5)
	}
	for name, c := range conds {
		t.Run(name, func(t *testing.T) {
			for _, f := range []*qdrant.Filter{must(c), {MustNot: []*qdrant.Condition{c}}} {
				want := matching(t, db, "plain", f)
				if diff := cmp.Diff(want, matching(t, db, "indexed", f)); diff != "" {
					t.Fatalf("indexed answer differs (-payloads +index):\n%s", diff)
				}
			}
		})
	}
	// Writes keep the index's view right.
	if _, err := db.OverwritePayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "indexed", PointsSelector: qdrant.NewPointsSelector(num(4)),
		Payload: valueMap(t, map[string]any{"s": nil})}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint64{4, 5}, matching(t, db, "indexed", must(qdrant.NewIsEmpty("s")))); diff != "" {
		t.Fatalf("is_empty after an overwrite (-want +got):\n%s", diff)
	}
}

// A payload write that edits a nested object in place (set_payload with a
// key) moves the point in the index of a path below that object: the old
// value is unindexed as it was before the edit.
func TestIndexFollowsNestedEdit(t *testing.T) {
	db := newDB(t)
	createColl(t, db, "c", 2, qdrant.Distance_Dot)
	upsert(t, db, "c",
		pt{id: num(1), vec: []float32{1, 0}, payload: map[string]any{"meta": map[string]any{"kind": "a", "n": 1}}},
		pt{id: num(2), vec: []float32{0, 1}, payload: map[string]any{"meta": map[string]any{"kind": "a"}}})
	if _, err := db.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: "c", FieldName: "meta.kind", FieldType: qdrant.FieldType_FieldTypeKeyword.Enum()}); err != nil {
		t.Fatal(err)
	}
	key := "meta"
	if _, err := db.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "c", PointsSelector: qdrant.NewPointsSelector(num(1)),
		Key: &key, Payload: valueMap(t, map[string]any{"kind": "b"})}); err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[string][]uint64{"a": {2}, "b": {1}} {
		if diff := cmp.Diff(want, matching(t, db, "c", must(qdrant.NewMatchKeyword("meta.kind", kind)))); diff != "" {
			t.Errorf("meta.kind = %s (-want +got):\n%s", kind, diff)
		}
	}
}
