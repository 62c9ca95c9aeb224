package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// filterPayloads is the data every filter case runs over. Each point exercises several edges:
// an integer stored as a float (3: n = 3.0), arrays of scalars and of objects, null, [] and
// [null], a datetime with a UTC offset and one that is not a datetime, and an empty payload (6).
func filterPayloads() map[uint64]map[string]any {
	return map[uint64]map[string]any{
		1: {
			"city": "Berlin", "n": 1, "price": 10.5, "tags": []any{"a", "b"}, "flag": true,
			"text": "the quick brown fox", "obj": map[string]any{"k": "v", "deep": map[string]any{"x": 1}},
			"diet": []any{map[string]any{"food": "meat", "likes": true}, map[string]any{"food": "leaves", "likes": false}},
			"ts":   "2024-01-01T00:00:00Z", "e": "x", "cnt": []any{"a", "b", "c"},
			"dt": "2024-03-01T10:00:00.123456789Z", "code": "3",
		},
		2: {
			"city": "London", "n": 2, "price": 20.0, "tags": []any{"b", "c"}, "flag": false,
			"text": "Lazy dog", "obj": map[string]any{"k": "w"},
			"diet": []any{map[string]any{"food": "meat", "likes": false}, map[string]any{"food": "leaves", "likes": true}},
			"ts":   "2024-06-01T12:00:00+02:00", "e": nil, "cnt": []any{"a"},
			"dt": "2024-03-01 11:00:00", "code": 3,
		},
		3: {
			"city": "Berlin", "n": 3.0, "price": 30, "tags": []any{}, "flag": true,
			"diet": []any{map[string]any{"food": "meat", "likes": true}},
			"ts":   "2025-01-01T00:00:00Z", "e": []any{}, "cnt": "x",
			"dt": "2024-03-02",
		},
		4: {
			"city": "Paris", "n": 3, "tags": []any{"c"}, "e": []any{nil}, "ts": "not a date",
			"cnt": []any{"a", "b"}, "arr": []any{map[string]any{"b": "x"}, map[string]any{"b": "y"}},
			"dt": "2024-03-01T12:30:00-0100",
		},
		5: {
			"city": []any{"Berlin", "Paris"}, "n": []any{5, 6}, "e": "v", "obj": []any{map[string]any{"k": "v"}},
			"cnt": []any{"a", "b", "c", "d"},
		},
		6: {},
	}
}

// filterCase is one filter and the ids it selects from filterPayloads.
type filterCase struct {
	name   string
	filter *qdrant.Filter
	want   []uint64
}

func must(conds ...*qdrant.Condition) *qdrant.Filter { return &qdrant.Filter{Must: conds} }

// ts is a UTC instant as a gRPC Timestamp.
func ts(year int, month time.Month, day, hour, minute int) *timestamppb.Timestamp {
	return timestamppb.New(time.Date(year, month, day, hour, minute, 0, 0, time.UTC))
}

// filterCases follow Qdrant's checker (lib/segment/src/payload_storage/condition_checker.rs,
// query_checker.rs) and JSON paths (lib/segment/src/json_path/mod.rs); notes section 3.4.
func filterCases() []filterCase {
	return []filterCase{
		// match value
		{"keyword", must(qdrant.NewMatchKeyword("city", "Berlin")), []uint64{1, 3, 5}},
		{"keyword is case sensitive", must(qdrant.NewMatchKeyword("city", "berlin")), nil},
		// Match::Value on a number compares as_i64(): a stored 3.0 is a float and never matches.
		{"integer does not match a stored float", must(qdrant.NewMatchInt("n", 3)), []uint64{4}},
		{"integer in an array", must(qdrant.NewMatchInt("n", 5)), []uint64{5}},
		{"bool true", must(qdrant.NewMatchBool("flag", true)), []uint64{1, 3}},
		{"bool false", must(qdrant.NewMatchBool("flag", false)), []uint64{2}},
		{"array matches if any element matches", must(qdrant.NewMatchKeyword("tags", "b")), []uint64{1, 2}},
		{"keyword does not match a number", must(qdrant.NewMatchKeyword("code", "3")), []uint64{1}},
		{"integer does not match a string", must(qdrant.NewMatchInt("code", 3)), []uint64{2}},

		// match any / except
		{"any keywords", must(qdrant.NewMatchKeywords("city", "London", "Paris")), []uint64{2, 4, 5}},
		{"any integers", must(qdrant.NewMatchInts("n", 1, 3)), []uint64{1, 4}},
		// Except: true for values not listed (any array element), false for null and for a missing
		// field; [] and [null] have no element that passes.
		{"except keywords", must(qdrant.NewMatchExcept("city", "Berlin")), []uint64{2, 4, 5}},
		{"except is false on missing, null, [] and [null]", must(qdrant.NewMatchExcept("e", "x")), []uint64{5}},
		// A number that is not an i64 (3.0) is "not in" an integer list: unwrap_or(true).
		{"except integers", must(qdrant.NewMatchExceptInts("n", 1, 2)), []uint64{3, 4, 5}},
		// Empty lists: any [] matches nothing, except [] every point that has the field
		// (tests/openapi/test_match_any_empty.py, test_match_except_empty.py).
		{"any of nothing", must(qdrant.NewMatchKeywords("city")), nil},
		{"must_not any of nothing", &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatchKeywords("city")}}, []uint64{1, 2, 3, 4, 5, 6}},
		{"except nothing", must(qdrant.NewMatchExcept("city")), []uint64{1, 2, 3, 4, 5}},

		// text without a full-text index: case-sensitive substring
		{"text substring", must(qdrant.NewMatchText("text", "quick")), []uint64{1}},
		{"text substring across words", must(qdrant.NewMatchText("text", "brown fox")), []uint64{1}},
		{"text is case sensitive", must(qdrant.NewMatchText("text", "Quick")), nil},
		{"text at the end", must(qdrant.NewMatchText("text", "dog")), []uint64{2}},

		// range: integers and floats compare as f64
		{"range over ints and floats", must(qdrant.NewRange("n", &qdrant.Range{Gte: qdrant.PtrOf(2.0), Lte: qdrant.PtrOf(3.0)})), []uint64{2, 3, 4}},
		{"range strict bounds", must(qdrant.NewRange("price", &qdrant.Range{Gt: qdrant.PtrOf(10.5), Lt: qdrant.PtrOf(30.0)})), []uint64{2}},
		{"range inclusive bound", must(qdrant.NewRange("price", &qdrant.Range{Gte: qdrant.PtrOf(10.5)})), []uint64{1, 2, 3}},
		{"range over array elements", must(qdrant.NewRange("n", &qdrant.Range{Gte: qdrant.PtrOf(5.5)})), []uint64{5}},

		// datetime_range: Timestamp bounds against RFC 3339 strings, offsets honoured
		// (DateTimeWrapper::from_str in lib/segment/src/types.rs); "not a date" never matches.
		{"datetime range honours the offset", must(qdrant.NewDatetimeRange("ts", &qdrant.DatetimeRange{
			Gte: ts(2024, time.June, 1, 9, 30), Lt: ts(2024, time.June, 1, 11, 0)})), []uint64{2}},
		{"datetime gt", must(qdrant.NewDatetimeRange("ts", &qdrant.DatetimeRange{Gt: ts(2024, time.January, 1, 0, 0)})), []uint64{2, 3}},
		{"datetime lte", must(qdrant.NewDatetimeRange("ts", &qdrant.DatetimeRange{Lte: ts(2024, time.January, 1, 0, 0)})), []uint64{1}},
		// Other formats DateTimeWrapper::from_str reads in v1.17 and v1.19: nanoseconds (Go's
		// RFC3339Nano), a space and no zone (UTC), a bare date (midnight UTC), an offset without colon.
		{"datetime formats", must(qdrant.NewDatetimeRange("dt", &qdrant.DatetimeRange{
			Gte: ts(2024, time.March, 1, 10, 0), Lt: ts(2024, time.March, 1, 13, 0)})), []uint64{1, 2}},
		{"datetime formats later", must(qdrant.NewDatetimeRange("dt", &qdrant.DatetimeRange{Gt: ts(2024, time.March, 1, 13, 0)})), []uint64{3, 4}},

		// is_empty: missing, null and [] (not [null]); is_null: only null (lib/segment/src/common/utils.rs)
		{"is_empty", must(qdrant.NewIsEmpty("e")), []uint64{2, 3, 6}},
		{"is_null", must(qdrant.NewIsNull("e")), []uint64{2}},

		{"has_id", must(qdrant.NewHasID(ids(1, 3, 999)...)), []uint64{1, 3}},

		// values_count counts array elements, a scalar as 1. Whether a missing field counts as 0
		// changed after v1.17, so point 6 is kept out of the lt case.
		{"values_count gte", must(qdrant.NewValuesCount("cnt", &qdrant.ValuesCount{Gte: qdrant.PtrOf(uint64(3))})), []uint64{1, 5}},
		{"values_count lt", must(
			qdrant.NewValuesCount("cnt", &qdrant.ValuesCount{Lt: qdrant.PtrOf(uint64(2))}),
			qdrant.NewHasID(ids(1, 2, 3, 4, 5)...),
		), []uint64{2, 3}},

		// key paths: a.b descends objects only (an array under obj is not traversed); a[].b each element
		{"object path", must(qdrant.NewMatchKeyword("obj.k", "v")), []uint64{1}},
		{"deep object path", must(qdrant.NewMatchInt("obj.deep.x", 1)), []uint64{1}},
		{"array path", must(qdrant.NewMatchKeyword("obj[].k", "v")), []uint64{5}},
		{"array of objects path", must(qdrant.NewMatchKeyword("arr[].b", "y")), []uint64{4}},

		// nested: all conditions must hold for the same element
		{"nested same element", must(qdrant.NewNestedFilter("diet", must(
			qdrant.NewMatchKeyword("food", "meat"), qdrant.NewMatchBool("likes", true)))), []uint64{1, 3}},
		{"nested other element", must(qdrant.NewNestedFilter("diet", must(
			qdrant.NewMatchKeyword("food", "leaves"), qdrant.NewMatchBool("likes", true)))), []uint64{2}},
		{"flattened paths match across elements", must(
			qdrant.NewMatchKeyword("diet[].food", "meat"), qdrant.NewMatchBool("diet[].likes", true)), []uint64{1, 2, 3}},

		// clauses
		{"must_not keeps points without the field", &qdrant.Filter{MustNot: []*qdrant.Condition{
			qdrant.NewMatchKeyword("city", "Berlin")}}, []uint64{2, 4, 6}},
		{"must_not bool", &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatchBool("flag", true)}}, []uint64{2, 4, 5, 6}},
		{"should", &qdrant.Filter{Should: []*qdrant.Condition{
			qdrant.NewMatchKeyword("city", "London"), qdrant.NewMatchInt("n", 1)}}, []uint64{1, 2}},
		{"min_should", &qdrant.Filter{MinShould: &qdrant.MinShould{MinCount: 2, Conditions: []*qdrant.Condition{
			qdrant.NewMatchBool("flag", true), qdrant.NewMatchKeyword("city", "Berlin"), qdrant.NewMatchKeyword("tags", "c"),
		}}}, []uint64{1, 3}},
		{"nested filter objects", must(
			qdrant.NewFilterAsCondition(&qdrant.Filter{Should: []*qdrant.Condition{
				qdrant.NewMatchKeyword("city", "London"), qdrant.NewMatchKeyword("city", "Paris")}}),
			qdrant.NewFilterAsCondition(&qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatchInt("n", 2)}}),
		), []uint64{4, 5}},
		{"must, must_not and should together", &qdrant.Filter{
			Must:    []*qdrant.Condition{qdrant.NewMatchBool("flag", true)},
			MustNot: []*qdrant.Condition{qdrant.NewMatchInt("n", 1)},
			Should:  []*qdrant.Condition{qdrant.NewMatchKeyword("tags", "a"), qdrant.NewMatchKeyword("city", "Berlin")},
		}, []uint64{3}},
		// An empty should is no constraint (gRPC drops empty lists; the optimiser skips it).
		{"empty should alone", &qdrant.Filter{Should: []*qdrant.Condition{}}, []uint64{1, 2, 3, 4, 5, 6}},
		{"empty should with must", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("city", "Berlin")},
			Should: []*qdrant.Condition{}}, []uint64{1, 3, 5}},
	}
}

// loadFilterSet creates a collection holding filterPayloads.
func loadFilterSet(t *testing.T, c *qdrant.Client) string {
	t.Helper()
	coll := newCollection(t, c, 2, qdrant.Distance_Dot)
	var pts []*qdrant.PointStruct
	for id, pl := range filterPayloads() {
		pts = append(pts, point(t, num(id), []float32{1, float32(id)}, pl))
	}
	upsert(t, c, coll, pts...)
	return coll
}

// checkFilter asserts that count, scroll and a search for probe all select exactly want: the
// three read paths must agree. probe must have the collection's dimension; the search asks for
// more points than any case's collection holds, so it returns every match.
func checkFilter(t *testing.T, c *qdrant.Client, coll string, probe []float32, filter *qdrant.Filter, want []uint64) {
	t.Helper()
	wantIDs := numStrings(want...)
	slices.Sort(wantIDs)
	if got := count(t, c, coll, filter); got != uint64(len(want)) {
		t.Errorf("count = %d, want %d", got, len(want))
	}
	if diff := cmp.Diff(wantIDs, sortedIDs(scrollAll(t, c, coll, filter))); diff != "" {
		t.Errorf("scroll ids (-want +got):\n%s", diff)
	}
	got := query(t, c, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryDense(probe),
		Filter: filter, Limit: qdrant.PtrOf(uint64(100))})
	if diff := cmp.Diff(wantIDs, sortedIDs(got)); diff != "" {
		t.Errorf("query ids (-want +got):\n%s", diff)
	}
}

func testFilters(t *testing.T, target Target) {
	c := connect(t, target)
	coll := loadFilterSet(t, c)
	for _, tc := range filterCases() {
		t.Run(tc.name, func(t *testing.T) {
			checkFilter(t, c, coll, []float32{0, 1}, tc.filter, tc.want)
		})
	}
}
