package qdrantjson

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func match(key string, m *qdrant.Match) *qdrant.Condition {
	return &qdrant.Condition{ConditionOneOf: &qdrant.Condition_Field{Field: &qdrant.FieldCondition{Key: key, Match: m}}}
}

func field(fc *qdrant.FieldCondition) *qdrant.Condition {
	return &qdrant.Condition{ConditionOneOf: &qdrant.Condition_Field{Field: fc}}
}

func boolPtr(b bool) *bool { return &b }

func ts(s string) *timestamppb.Timestamp {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return timestamppb.New(t)
}

// DecodeFilter reads the whole REST filter grammar into the gRPC Filter the
// store (and Qdrant) would build from it.
func TestDecodeFilter(t *testing.T) {
	f64 := func(f float64) *float64 { return &f }
	u64 := func(n uint64) *uint64 { return &n }
	cases := []struct {
		name string
		in   string
		want *qdrant.Filter
	}{
		{"empty input", ``, nil},
		{"null", `null`, nil},
		{"empty object", `{}`, &qdrant.Filter{}},
		{"must one condition", `{"must":{"key":"kind","match":{"value":"note"}}}`,
			&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "note")}}},
		{"must should must_not", `{"must":[{"key":"a","match":{"value":1}}],"should":[{"key":"b","match":{"value":true}},{"key":"c","match":{"value":"x"}}],"must_not":{"key":"d","match":{"value":-9223372036854775808}}}`,
			&qdrant.Filter{
				Must:    []*qdrant.Condition{qdrant.NewMatchInt("a", 1)},
				Should:  []*qdrant.Condition{qdrant.NewMatchBool("b", true), qdrant.NewMatchKeyword("c", "x")},
				MustNot: []*qdrant.Condition{qdrant.NewMatchInt("d", -9223372036854775808)},
			}},
		{"match value above 2^53", `{"must":[{"key":"n","match":{"value":9007199254740993}}]}`,
			&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("n", 9007199254740993)}}},
		{"min_should", `{"min_should":{"conditions":[{"key":"a","match":{"value":"x"}},{"is_null":{"key":"b"}}],"min_count":1}}`,
			&qdrant.Filter{MinShould: &qdrant.MinShould{MinCount: 1, Conditions: []*qdrant.Condition{qdrant.NewMatchKeyword("a", "x"), qdrant.NewIsNull("b")}}}},
		{"nested filter as a condition", `{"must":[{"should":[{"key":"a","match":{"value":"x"}}],"must_not":[{"is_empty":{"key":"b"}}]}]}`,
			&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewFilterAsCondition(&qdrant.Filter{
				Should:  []*qdrant.Condition{qdrant.NewMatchKeyword("a", "x")},
				MustNot: []*qdrant.Condition{qdrant.NewIsEmpty("b")},
			})}}},
		{"nested", `{"must":[{"nested":{"key":"diet","filter":{"must":[{"key":"food","match":{"value":"meat"}},{"key":"likes","match":{"value":true}}]}}}]}`,
			&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewNestedFilter("diet", &qdrant.Filter{Must: []*qdrant.Condition{
				qdrant.NewMatchKeyword("food", "meat"), qdrant.NewMatchBool("likes", true)}})}}},
		{"match any and except", `{"must":[{"key":"a","match":{"any":["x","y"]}},{"key":"b","match":{"any":[1,2]}},{"key":"c","match":{"except":["z"]}},{"key":"d","match":{"except":[3]}},{"key":"e","match":{"any":[]}}]}`,
			&qdrant.Filter{Must: []*qdrant.Condition{
				qdrant.NewMatchKeywords("a", "x", "y"), qdrant.NewMatchInts("b", 1, 2),
				qdrant.NewMatchExcept("c", "z"), qdrant.NewMatchExceptInts("d", 3),
				qdrant.NewMatchKeywords("e"),
			}}},
		{"match text forms", `{"should":[{"key":"t","match":{"text":"good cheap"}},{"key":"t","match":{"text_any":"good cheap"}},{"key":"t","match":{"phrase":"good cheap"}},{"key":"t","match":{"prefix":"goo"}}]}`,
			&qdrant.Filter{Should: []*qdrant.Condition{
				qdrant.NewMatchText("t", "good cheap"), qdrant.NewMatchTextAny("t", "good cheap"),
				qdrant.NewMatchPhrase("t", "good cheap"), match("t", &qdrant.Match{MatchValue: &qdrant.Match_Prefix{Prefix: "goo"}}),
			}}},
		{"range", `{"must":[{"key":"price","range":{"gte":1,"lt":2.5}},{"key":"n","range":{"gt":-1e3,"lte":7}}]}`,
			&qdrant.Filter{Must: []*qdrant.Condition{
				qdrant.NewRange("price", &qdrant.Range{Gte: f64(1), Lt: f64(2.5)}),
				qdrant.NewRange("n", &qdrant.Range{Gt: f64(-1000), Lte: f64(7)}),
			}}},
		{"datetime range", `{"must":[{"key":"at","range":{"gte":"2024-01-01T00:00:00Z","lt":"2024-02-01 12:30:00","gt":"2023-12-31T23:00:00+01:00","lte":"2024-03-01"}}]}`,
			&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewDatetimeRange("at", &qdrant.DatetimeRange{
				Gte: ts("2024-01-01T00:00:00Z"), Lt: ts("2024-02-01T12:30:00Z"), Gt: ts("2023-12-31T22:00:00Z"), Lte: ts("2024-03-01T00:00:00Z"),
			})}}},
		{"is_empty and is_null", `{"must":[{"is_empty":{"key":"a"}},{"is_null":{"key":"b"}},{"key":"c","is_empty":true},{"key":"d","is_null":false}]}`,
			&qdrant.Filter{Must: []*qdrant.Condition{
				qdrant.NewIsEmpty("a"), qdrant.NewIsNull("b"),
				field(&qdrant.FieldCondition{Key: "c", IsEmpty: boolPtr(true)}),
				field(&qdrant.FieldCondition{Key: "d", IsNull: boolPtr(false)}),
			}}},
		{"has_id", `{"must":[{"has_id":[1,18446744073709551615,"550E8400-E29B-41D4-A716-446655440000"]}]}`,
			&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(qdrant.NewIDNum(1), qdrant.NewIDNum(18446744073709551615), qdrant.NewIDUUID("550e8400-e29b-41d4-a716-446655440000"))}}},
		{"values_count", `{"must":{"key":"tags","values_count":{"gte":2,"lt":5}}}`,
			&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewValuesCount("tags", &qdrant.ValuesCount{Gte: u64(2), Lt: u64(5)})}}},
		{"has_vector", `{"must":{"has_vector":"image"}}`,
			&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasVector("image")}}},
		{"geo radius", `{"must":{"key":"loc","geo_radius":{"center":{"lon":13.4,"lat":52.5},"radius":1000.0}}}`,
			&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewGeoRadius("loc", 52.5, 13.4, 1000)}}},
		{"null members are absent", `{"must":null,"should":[{"key":"a","match":{"value":"x"}}]}`,
			&qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatchKeyword("a", "x")}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeFilter([]byte(c.in))
			if err != nil {
				t.Fatalf("DecodeFilter(%s): %v", c.in, err)
			}
			if diff := cmp.Diff(c.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("DecodeFilter(%s) (-want +got):\n%s", c.in, diff)
			}
		})
	}
}

// filterErrorCases are bad filters and what DecodeFilter says of them;
// they also seed FuzzDecodeFilter.
var filterErrorCases = []struct {
	name, in string
	status   int
	want     string
}{
	{"malformed", `{"must":`, 400, "Format error in JSON body: filter: EOF while parsing a value at line 1 column 8"},
	{"invalid UTF-8", "{\"must\":{\"key\":\"\xff\",\"match\":{\"value\":1}}}", 400, "invalid unicode code point"},
	{"not an object", `[]`, 400, "filter: invalid type: sequence, expected a map"},
	{"unknown clause", `{"musts":[]}`, 400, "filter: unknown field `musts`, expected one of `should`, `min_should`, `must`, `must_not`"},
	{"condition not an object", `{"must":[1]}`, 400, "filter.must[0]: Expected some form of condition"},
	{"unknown condition", `{"must":[{"fuzzy":{"key":"a"}}]}`, 400, "filter.must[0]: Expected some form of condition, which can be a field condition (like {\"key\": ..., \"match\": ... }), or some other mentioned in the documentation: https://qdrant.tech/documentation/concepts/filtering/#filtering-conditions (unknown key `fuzzy`)"},
	{"key not a string", `{"must":[{"key":1,"match":{"value":1}}]}`, 400, "Filter condition 'key' must be a string"},
	{"no field condition", `{"should":{"key":"a"}}`, 422, "Validation error in JSON body: [filter.should: At least one field condition must be specified]"},
	{"unknown field condition", `{"must":[{"key":"a","matches":{"value":1}}]}`, 400, "filter.must[0]: unknown field `matches`"},
	{"float match value", `{"must":[{"key":"a","match":{"value":1.5}}]}`, 400, "filter.must[0].match.value: invalid type: floating point `1.5`, expected a string, an integer or a boolean"},
	{"two matches", `{"must":[{"key":"a","match":{"value":"x","text":"y"}}]}`, 400, "filter.must[0].match: expected exactly one of `value`, `text`, `text_any`, `phrase`, `prefix`, `any`, `except`"},
	{"unknown match", `{"must":[{"key":"a","match":{"fuzzy":"y"}}]}`, 400, "unknown match `fuzzy`"},
	{"mixed any", `{"must":[{"key":"a","match":{"any":[1,"x"]}}]}`, 400, "untagged enum AnyVariants"},
	{"range of strings and numbers", `{"must":[{"key":"a","range":{"gte":"2024-01-01","lt":3}}]}`, 400, "filter.must[0].range.lt: invalid type: integer `3`, expected a datetime string"},
	{"bad datetime", `{"must":[{"key":"a","range":{"gte":"yesterday"}}]}`, 400, "'yesterday' does not match accepted datetime format (RFC3339). Example: 2014-01-01T00:00:00Z"},
	{"bad range key", `{"must":[{"key":"a","range":{"from":1}}]}`, 400, "filter.must[0].range: unknown field `from`"},
	{"negative values_count", `{"must":[{"key":"a","values_count":{"gt":-1}}]}`, 400, "filter.must[0].values_count.gt"},
	{"bad has_id", `{"must":[{"has_id":[-1]}]}`, 400, "filter.must[0].has_id[0]: value integer `-1` is not a valid point ID"},
	{"has_id not a list", `{"must":[{"has_id":1}]}`, 400, "filter.must[0].has_id: invalid type: integer `1`, expected a sequence of point ids"},
	{"is_empty without key", `{"must":[{"is_empty":{}}]}`, 400, "filter.must[0].is_empty: missing field `key`"},
	{"nested without filter", `{"must":[{"nested":{"key":"a"}}]}`, 400, "filter.must[0].nested: missing field `filter`"},
	{"nested bad inner", `{"must":[{"nested":{"key":"a","filter":{"must":[{"key":"b"}]}}}]}`, 422, "[filter.must[0].nested.filter.must[0]: At least one field condition must be specified]"},
	{"min_count 0", `{"min_should":{"conditions":[],"min_count":0}}`, 422, "min_count must be greater than 0"},
	{"min_should without count", `{"min_should":{"conditions":[]}}`, 400, "filter.min_should: missing field `min_count`"},
	{"duplicate clause", `{"must":[],"must":[]}`, 400, "filter: duplicate field `must`"},
}

// A bad filter is an *Error naming the offending field, in Qdrant's
// words and with Qdrant's status.
func TestDecodeFilterErrors(t *testing.T) {
	for _, c := range filterErrorCases {
		t.Run(c.name, func(t *testing.T) {
			f, err := DecodeFilter([]byte(c.in))
			if err == nil {
				t.Fatalf("DecodeFilter(%s) = %v, want an error", c.in, f)
			}
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			if fe.Status() != c.status || !strings.Contains(fe.Error(), c.want) {
				t.Errorf("DecodeFilter(%s) = %d %q, want %d containing %q", c.in, fe.Status(), fe.Error(), c.status, c.want)
			}
			if f != nil {
				t.Errorf("a filter came back with the error: %v", f)
			}
		})
	}
}
