package qdrantjson

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// Fuzz targets for the decoders of this package: the parser (with payload
// conversion), the filter codec, DecodePayload, and point ids. Properties:
// no panic; every refusal is an *Error with a 400 or 422 and a UTF-8 text;
// whatever is accepted marshals as a valid proto.

// bodySeeds are request bodies of the REST front's tests that carry a
// filter or a payload.
var bodySeeds = []string{
	`{"filter":{"must":[{"key":"kind","match":{"value":"note"}}]},"score_threshold":0.2,"limit":5,"with_payload":true}`,
	`{"points":[{"id":1,"vector":[1,0,0,0],"payload":{"k":"v","n":3,"f":3.0,"big":18446744073709551615}}]}`,
	`{"payload":{"a":{"b":[1,2.5,"x",null,true]}},"filter":{"must":{"has_id":[1]}}}`,
	`{"query":[0.1,0.2],"filter":{"must_not":[{"key":"a","matches":{"value":1}}]}}`,
	"{\n  \"limit\": x}",
	`{"using":"\ud800"}`,
}

// filterSeeds are the filters of the package's tests.
func filterSeeds() []string {
	out := []string{
		`{"must":{"key":"kind","match":{"value":"note"}}}`,
		`{"must":[{"nested":{"key":"diet","filter":{"must":[{"key":"food","match":{"value":"meat"}}]}}}],"min_should":{"conditions":[{"is_null":{"key":"b"}}],"min_count":1}}`,
		`{"should":[{"key":"t","match":{"text":"a b"}},{"key":"at","range":{"gte":"2024-01-01T00:00:00Z"}},{"has_id":[1,18446744073709551615]},{"key":"tags","values_count":{"gte":2}}]}`,
		`{"must_not":[{"is_empty":{"key":"a"}},{"key":"loc","geo_bounding_box":{"top_left":{"lon":1,"lat":2},"bottom_right":{"lon":3,"lat":1}}},{"key":"p","geo_polygon":{"exterior":{"points":[{"lon":0,"lat":0},{"lon":1,"lat":1},{"lon":0,"lat":0}]}}}]}`,
		`{"must":[{"slice":{"total":4,"index":1}},{"has_vector":"v"},{"key":"a","match":{"except":[1,2]}}]}`,
	}
	for _, c := range filterErrorCases {
		out = append(out, c.in)
	}
	return append(out, bodySeeds...) // whole bodies: a filter's unknown-field path
}

// checkRefusal asserts err is one of the package's refusals.
func checkRefusal(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v is not an *Error", err, err)
	}
	if st := e.Status(); st != http.StatusBadRequest && st != http.StatusUnprocessableEntity || e.Error() == "" {
		t.Fatalf("refusal with status %d and message %q", st, e.Error())
	}
	if !utf8.ValidString(e.Error()) {
		t.Fatalf("refusal message is not UTF-8: %q", e.Error())
	}
}

func checkProto(t *testing.T, m proto.Message) {
	t.Helper()
	if _, err := proto.Marshal(m); err != nil {
		t.Fatalf("accepted value does not marshal: %v: %v", err, m)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range filterSeeds() {
		f.Add(s)
	}
	f.Add(`"\ud83d\ude00 \u00e9"`)
	f.Add(`[1e400, -0, 0.5E-3]`)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Column < 0 {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		// Whatever the parser accepts is JSON, and valid UTF-8.
		if !json.Valid([]byte(s)) || !utf8.ValidString(s) {
			t.Fatalf("parsed %q, which is not valid JSON", s)
		}
		_ = v.Describe()
		// Payload conversion of any accepted value neither panics nor
		// loses the integer / float distinction of a top-level number.
		pv, err := PayloadValue(v, "")
		if err != nil {
			checkRefusal(t, err)
			return
		}
		if v.Kind == KindNumber {
			_, isInt := pv.GetKind().(*qdrant.Value_IntegerValue)
			_, fitsI64 := strconv.ParseInt(v.Text, 10, 64)
			if isInt != (fitsI64 == nil) {
				t.Fatalf("the number %s became %v", v.Text, pv)
			}
		}
		checkProto(t, pv)
	})
}

func FuzzDecodeFilter(f *testing.F) {
	for _, s := range filterSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		flt, err := DecodeFilter(b)
		if err != nil {
			checkRefusal(t, err)
			if flt != nil {
				t.Fatalf("a filter with the error %v", err)
			}
			return
		}
		if flt != nil {
			checkProto(t, flt)
		}
	})
}

// FuzzDecodePayload: whatever DecodePayload accepts, AppendPayload writes
// as JSON that decodes to the same payload (NaN aside: JSON has no NaN, and
// no number literal decodes to one).
func FuzzDecodePayload(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{}`, `{"a":1e400}`, `{"a":-0.0,"b":1e-7,"c":"\u2028<&>"}`, `[1,2]`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePayload(data)
		if err != nil {
			return
		}
		out := AppendPayload(nil, p)
		if !json.Valid(out) {
			t.Fatalf("AppendPayload wrote %s, which is not JSON", out)
		}
		again, err := DecodePayload(out)
		if err != nil {
			t.Fatalf("re-reading %s: %v", out, err)
		}
		if diff := cmp.Diff(p, again, protocmp.Transform()); diff != "" {
			t.Fatalf("round trip of %s (-first +second):\n%s", data, diff)
		}
	})
}

// FuzzPointID: an id is read from any value or refused with Qdrant's text;
// what is read is written back as a JSON value that reads as the same id.
func FuzzPointID(f *testing.F) {
	for _, s := range []string{`1`, `18446744073709551615`, `18446744073709551616`, `-1`, `1.0`, `1e3`,
		`"550E8400-E29B-41D4-A716-446655440000"`, `"550e8400e29b41d4a716446655440000"`, `"{550e8400-e29b-41d4-a716-446655440000}"`,
		`"x"`, `null`, `[1,"550e8400-e29b-41d4-a716-446655440000",2]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			return
		}
		if v.Kind == KindArray {
			if _, err := PointIDs(v, "ids"); err != nil {
				checkRefusal(t, err)
			}
			return
		}
		id, err := PointID(v, "id")
		if err != nil {
			checkRefusal(t, err)
			return
		}
		w, err := Parse(string(AppendPointID(nil, id)))
		if err != nil {
			t.Fatalf("AppendPointID(%v): %v", id, err)
		}
		again, err := PointID(w, "id")
		if err != nil || !proto.Equal(id, again) {
			t.Fatalf("%s read as %v, written and read again as %v (%v)", s, id, again, err)
		}
		// A path segment takes what a body takes (a UUID of digits only
		// reads there as the integer, as Qdrant's FromStr tries u64 first).
		if v.Kind == KindString {
			if _, ok := ParsePointID(v.Text); !ok {
				t.Fatalf("ParsePointID(%q) refuses the id %v", v.Text, id)
			}
		}
	})
}
