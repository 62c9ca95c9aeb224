package store_test

import (
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/memrank/memrank/store"
)

// filterPoints is a small collection whose payloads exercise Qdrant's
// filter semantics: integers vs floats, arrays, nulls, nesting, text.
var filterPoints = map[uint64]map[string]any{
	1: {"i": 3, "f": 3.0, "s": "red", "b": true, "arr": []any{1, 2}, "txt": "Hello World",
		"dt": "2024-01-15T10:00:00Z", "obj": map[string]any{"k": "v"},
		"list": []any{map[string]any{"c": "x", "q": 1}, map[string]any{"c": "y", "q": 2}}},
	2: {"i": 4, "f": 4.5, "s": "blue", "b": false, "arr": []any{}, "txt": "hello there",
		"dt": "2024-02-01", "nul": nil, "list": []any{map[string]any{"c": "x", "q": 2}}},
	3: {"i": 3.0, "s": "red", "arr": []any{nil}, "nul": []any{nil}, "dt": "not a date", "obj": map[string]any{"k": "w"}},
	4: {"s": []any{"red", "green"}, "i": []any{5, 6}, "b": []any{true, false}, "txt": "WORLD",
		"mixed": []any{1, "1", true, nil, map[string]any{"a": 1}, []any{2}}},
	5: {},
}

func must(cs ...*qdrant.Condition) *qdrant.Filter { return &qdrant.Filter{Must: cs} }

func ts(s string) *timestamppb.Timestamp {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return timestamppb.New(t)
}

func fieldCond(fc *qdrant.FieldCondition) *qdrant.Condition {
	return &qdrant.Condition{ConditionOneOf: &qdrant.Condition_Field{Field: fc}}
}

type filterCase struct {
	name   string
	filter *qdrant.Filter
	want   []uint64
}

func filterCases() []filterCase {
	return []filterCase{
		{"match keyword", must(qdrant.NewMatchKeyword("s", "red")), []uint64{1, 3, 4}},
		{"match integer does not match a stored float", must(qdrant.NewMatchInt("i", 3)), []uint64{1}},
		{"match integer in an array", must(qdrant.NewMatchInt("i", 5)), []uint64{4}},
		{"match bool true", must(qdrant.NewMatchBool("b", true)), []uint64{1, 4}},
		{"match bool false", must(qdrant.NewMatchBool("b", false)), []uint64{2, 4}},
		{"match any keywords", must(qdrant.NewMatchKeywords("s", "blue", "green")), []uint64{2, 4}},
		{"match any of nothing", must(qdrant.NewMatchKeywords("s")), nil},
		{"match any integers", must(qdrant.NewMatchInts("i", 4, 6)), []uint64{2, 4}},
		{"except keywords: missing never matches, arrays match on any other element", must(qdrant.NewMatchExcept("s", "red")), []uint64{2, 4}},
		{"except nothing: every point that has the field", must(qdrant.NewMatchExcept("s")), []uint64{1, 2, 3, 4}},
		{"except integers: a float is not in an integer list", must(qdrant.NewMatchExceptInts("i", 3)), []uint64{2, 3, 4}},
		{"except on null and [null] is false", must(qdrant.NewMatchExcept("nul", "x")), nil},
		{"text is a case-sensitive substring", must(qdrant.NewMatchText("txt", "World")), []uint64{1}},
		{"text lower case", must(qdrant.NewMatchText("txt", "hello")), []uint64{2}},
		{"text_any: any token is a substring", must(qdrant.NewMatchTextAny("txt", "there WORLD")), []uint64{2, 4}},
		{"phrase is a substring", must(qdrant.NewMatchPhrase("txt", "lo Wo")), []uint64{1}},
		{"prefix", must(qdrant.NewMatchPrefix("txt", "Hel")), []uint64{1}},
		{"range compares ints and floats as f64", must(qdrant.NewRange("i", &qdrant.Range{Gte: qdrant.PtrOf(3.0), Lte: qdrant.PtrOf(3.0)})), []uint64{1, 3}},
		{"range over array elements", must(qdrant.NewRange("i", &qdrant.Range{Gte: qdrant.PtrOf(3.5)})), []uint64{2, 4}},
		{"range strict", must(qdrant.NewRange("f", &qdrant.Range{Gt: qdrant.PtrOf(3.0)})), []uint64{2}},
		{"datetime range parses a bare date", must(qdrant.NewDatetimeRange("dt", &qdrant.DatetimeRange{Gte: ts("2024-01-20T00:00:00Z")})), []uint64{2}},
		{"datetime range below", must(qdrant.NewDatetimeRange("dt", &qdrant.DatetimeRange{Lt: ts("2024-01-16T00:00:00Z")})), []uint64{1}},
		{"is_empty: missing, null or [] but not [null]", must(qdrant.NewIsEmpty("arr")), []uint64{2, 4, 5}},
		{"is_empty on null", must(qdrant.NewIsEmpty("nul")), []uint64{1, 2, 4, 5}},
		{"is_null: null only", must(qdrant.NewIsNull("nul")), []uint64{2}},
		{"field is_null flag counts [null]", must(fieldCond(&qdrant.FieldCondition{Key: "nul", IsNull: qdrant.PtrOf(true)})), []uint64{2, 3}},
		{"field is_empty flag", must(fieldCond(&qdrant.FieldCondition{Key: "arr", IsEmpty: qdrant.PtrOf(true)})), []uint64{2, 4, 5}},
		{"values_count gte", must(qdrant.NewValuesCount("arr", &qdrant.ValuesCount{Gte: qdrant.PtrOf(uint64(2))})), []uint64{1}},
		{"values_count of missing is 0", must(qdrant.NewValuesCount("arr", &qdrant.ValuesCount{Lt: qdrant.PtrOf(uint64(1))})), []uint64{2, 4, 5}},
		{"values_count mixed array", must(qdrant.NewValuesCount("mixed", &qdrant.ValuesCount{Gte: qdrant.PtrOf(uint64(6)), Lte: qdrant.PtrOf(uint64(6))})), []uint64{4}},
		{"has_id", must(qdrant.NewHasID(num(1), num(3), num(99))), []uint64{1, 3}},
		{"nested: one element must satisfy every condition", must(qdrant.NewNestedFilter("list", must(qdrant.NewMatchKeyword("c", "x"), qdrant.NewMatchInt("q", 2)))), []uint64{2}},
		{"array path with []", must(qdrant.NewMatchKeyword("list[].c", "y")), []uint64{1}},
		{"array path with [0]", must(qdrant.NewMatchKeyword("list[0].c", "y")), nil},
		{"dotted path", must(qdrant.NewMatchKeyword("obj.k", "v")), []uint64{1}},
		{"dots do not enter arrays", must(qdrant.NewMatchKeyword("list.c", "x")), nil},
		{"must_not", &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatchKeyword("s", "red")}}, []uint64{2, 5}},
		{"should", &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatchKeyword("s", "blue"), qdrant.NewMatchBool("b", true)}}, []uint64{1, 2, 4}},
		{"empty should is no constraint", &qdrant.Filter{Should: []*qdrant.Condition{}}, []uint64{1, 2, 3, 4, 5}},
		{"empty condition messages are dropped", &qdrant.Filter{Should: []*qdrant.Condition{{}}, Must: []*qdrant.Condition{{}}}, []uint64{1, 2, 3, 4, 5}},
		{"min_should", &qdrant.Filter{MinShould: &qdrant.MinShould{MinCount: 2, Conditions: []*qdrant.Condition{
			qdrant.NewMatchKeyword("s", "red"), qdrant.NewMatchBool("b", true), qdrant.NewMatchInt("i", 3)}}}, []uint64{1, 4}},
		{"nested filter condition", must(qdrant.NewFilterAsCondition(&qdrant.Filter{Should: []*qdrant.Condition{
			qdrant.NewMatchKeyword("s", "blue"), qdrant.NewMatchInt("i", 5)}})), []uint64{2, 4}},
		{"mixed array keyword", must(qdrant.NewMatchKeyword("mixed", "1")), []uint64{4}},
		{"mixed array integer", must(qdrant.NewMatchInt("mixed", 1)), []uint64{4}},
		{"has_vector of the unnamed vector", must(qdrant.NewHasVector("")), []uint64{1, 2, 3, 4, 5}},
		{"has_vector of another name", must(qdrant.NewHasVector("text")), nil},
		{"nil filter", nil, []uint64{1, 2, 3, 4, 5}},
	}
}

func loadFilterPoints(t *testing.T, db *store.DB, coll string) {
	t.Helper()
	createColl(t, db, coll, 2, qdrant.Distance_Dot)
	var pts []pt
	for id, p := range filterPoints {
		pts = append(pts, pt{num(id), []float32{float32(id), 1}, p})
	}
	upsert(t, db, coll, pts...)
}

// matching returns the ids a filter selects through Count, Scroll and a
// filtered Query, failing if the three disagree.
func matching(t *testing.T, db *store.DB, coll string, f *qdrant.Filter) []uint64 {
	t.Helper()
	n, err := db.Count(ctx, &qdrant.CountPoints{CollectionName: coll, Filter: f})
	if err != nil {
		t.Fatalf("count: %v", err)
	}
	pts, _, err := db.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: coll, Filter: f, Limit: qdrant.PtrOf(uint32(100))})
	if err != nil {
		t.Fatalf("scroll: %v", err)
	}
	res := query(t, db, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQuery(1, 0), Filter: f, Limit: qdrant.PtrOf(uint64(100))})
	var fromScroll, fromQuery []uint64
	for _, p := range pts {
		fromScroll = append(fromScroll, p.GetId().GetNum())
	}
	for _, p := range res {
		fromQuery = append(fromQuery, p.GetId().GetNum())
	}
	sort.Slice(fromQuery, func(i, j int) bool { return fromQuery[i] < fromQuery[j] })
	if !cmp.Equal(fromScroll, fromQuery) || uint64(len(fromScroll)) != n {
		t.Fatalf("count %d, scroll %v and query %v disagree", n, fromScroll, fromQuery)
	}
	return fromScroll
}

// Qdrant's filter semantics, evaluated on payloads and, for the same
// conditions, through payload indexes: an index never changes a result.
func TestFilterSemantics(t *testing.T) {
	db := newDB(t)
	loadFilterPoints(t, db, "plain")
	loadFilterPoints(t, db, "indexed")
	for field, typ := range map[string]qdrant.FieldType{
		"s": qdrant.FieldType_FieldTypeKeyword, "i": qdrant.FieldType_FieldTypeInteger, "b": qdrant.FieldType_FieldTypeBool,
		"f": qdrant.FieldType_FieldTypeFloat, "dt": qdrant.FieldType_FieldTypeDatetime, "list[].c": qdrant.FieldType_FieldTypeKeyword,
		"mixed": qdrant.FieldType_FieldTypeInteger, "txt": qdrant.FieldType_FieldTypeText, "nul": qdrant.FieldType_FieldTypeKeyword,
	} {
		if _, err := db.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: "indexed", FieldName: field, FieldType: typ.Enum()}); err != nil {
			t.Fatalf("index %s: %v", field, err)
		}
	}
	for _, tc := range filterCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, coll := range []string{"plain", "indexed"} {
				got := matching(t, db, coll, tc.filter)
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", coll, diff)
				}
			}
		})
	}
}

// Indexes follow writes: updates, payload edits and deletes move points in
// and out of the postings.
func TestIndexFollowsWrites(t *testing.T) {
	db := newDB(t)
	createColl(t, db, "c", 2, qdrant.Distance_Dot)
	if _, err := db.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: "c", FieldName: "tag", FieldType: qdrant.FieldType_FieldTypeKeyword.Enum()}); err != nil {
		t.Fatal(err)
	}
	red := must(qdrant.NewMatchKeyword("tag", "red"))
	for i := uint64(1); i <= 20; i++ {
		tag := "blue"
		if i%2 == 0 {
			tag = "red"
		}
		upsert(t, db, "c", pt{num(i), []float32{1, float32(i)}, map[string]any{"tag": tag}})
	}
	steps := []struct {
		name string
		do   func()
		want int
	}{
		{"initial", func() {}, 10},
		{"overwrite by upsert", func() { upsert(t, db, "c", pt{num(1), []float32{1, 1}, map[string]any{"tag": "red"}}) }, 11},
		{"set payload", func() {
			if _, err := db.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "c", PointsSelector: qdrant.NewPointsSelector(num(2)),
				Payload: valueMap(t, map[string]any{"tag": []any{"green"}})}); err != nil {
				t.Fatal(err)
			}
		}, 10},
		{"delete", func() {
			if _, err := db.Delete(ctx, &qdrant.DeletePoints{CollectionName: "c", Points: qdrant.NewPointsSelector(num(4), num(6))}); err != nil {
				t.Fatal(err)
			}
		}, 8},
		{"slot reuse", func() { upsert(t, db, "c", pt{num(100), []float32{1, 1}, map[string]any{"tag": "blue"}}) }, 8},
		{"clear", func() {
			if _, err := db.ClearPayload(ctx, &qdrant.ClearPayloadPoints{CollectionName: "c", Points: qdrant.NewPointsSelectorFilter(red)}); err != nil {
				t.Fatal(err)
			}
		}, 0},
	}
	for _, s := range steps {
		s.do()
		if got := len(matching(t, db, "c", red)); got != s.want {
			t.Fatalf("after %s: %d red points, want %d", s.name, got, s.want)
		}
	}
	if _, err := db.DeleteFieldIndex(ctx, &qdrant.DeleteFieldIndexCollection{CollectionName: "c", FieldName: "tag"}); err != nil {
		t.Fatal(err)
	}
	if got := len(matching(t, db, "c", must(qdrant.NewMatchKeyword("tag", "blue")))); got != 10 {
		t.Fatalf("without the index: %d blue points, want 10", got)
	}
}

func TestFilterErrors(t *testing.T) {
	db := newDB(t)
	loadFilterPoints(t, db, "c")
	deep := must(qdrant.NewMatchKeyword("s", "red"))
	for i := 0; i < 100; i++ {
		deep = must(qdrant.NewFilterAsCondition(deep))
	}
	tests := []struct {
		name   string
		filter *qdrant.Filter
		msg    string
	}{
		{"bad path", must(qdrant.NewMatchKeyword("a..b", "x")), "Invalid json path: 'a..b'"},
		{"empty match", must(fieldCond(&qdrant.FieldCondition{Key: "s", Match: &qdrant.Match{}})), "Malformed Match condition"},
		{"no clause", must(fieldCond(&qdrant.FieldCondition{Key: "s"})), "Wrong input: At least one field condition must be specified"},
		{"min_count 0", &qdrant.Filter{MinShould: &qdrant.MinShould{}}, "Validation error in body: [filter.min_should.min_count: min_count must be greater than 0]"},
		{"nested without filter", must(&qdrant.Condition{ConditionOneOf: &qdrant.Condition_Nested{Nested: &qdrant.NestedCondition{Key: "list"}}}), "Nested condition must have a filter"},
		{"bad uuid", must(qdrant.NewHasID(qdrant.NewID("nope"))), "Unable to parse UUID: nope"},
		{"too deep", deep, "Wrong input: filter nesting is deeper than 64 levels"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := db.Count(ctx, &qdrant.CountPoints{CollectionName: "c", Filter: tc.filter})
			if err == nil || grpcStatus(err).Message() != tc.msg {
				t.Fatalf("got %v, want %q", err, tc.msg)
			}
		})
	}
}

func TestParseRoundTripOfIDs(t *testing.T) {
	for _, in := range []string{"{6F9619FF-8B86-D011-B42D-00C04FC964FF}", "6f9619ff8b86d011b42d00c04fc964ff", "urn:uuid:6f9619ff-8b86-d011-b42d-00c04fc964ff"} {
		id, err := store.PointIDFromProto(qdrant.NewID(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if id.String() != "6f9619ff-8b86-d011-b42d-00c04fc964ff" {
			t.Fatalf("%s -> %s", in, id)
		}
	}
	if got := store.NumID(18446744073709551615).String(); got != strconv.FormatUint(18446744073709551615, 10) {
		t.Fatal(got)
	}
}

// Long any/except lists (answered through a set) mean the same as short ones.
func TestLongMatchLists(t *testing.T) {
	db := newDB(t)
	loadFilterPoints(t, db, "c")
	pad := func(n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, "pad-"+strconv.Itoa(i))
		}
		return out
	}
	padInts := func(n int) []int64 {
		var out []int64
		for i := 0; i < n; i++ {
			out = append(out, int64(1000+i))
		}
		return out
	}
	tests := []filterCase{
		{"any keywords", must(qdrant.NewMatchKeywords("s", append(pad(40), "blue", "green")...)), []uint64{2, 4}},
		{"except keywords", must(qdrant.NewMatchExcept("s", append(pad(40), "red")...)), []uint64{2, 4}},
		{"any integers", must(qdrant.NewMatchInts("i", append(padInts(40), 4, 6)...)), []uint64{2, 4}},
		{"except integers", must(qdrant.NewMatchExceptInts("i", append(padInts(40), 3)...)), []uint64{2, 3, 4}},
		{"except integers on strings", must(qdrant.NewMatchExceptInts("s", padInts(40)...)), []uint64{1, 2, 3, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, matching(t, db, "c", tc.filter)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}
