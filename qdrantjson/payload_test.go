package qdrantjson

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"
)

// Numbers are written so that they read back as what they were: integers
// exactly, floats always with a fraction or exponent, f32 scores and vector
// components in their shortest f32 form.
func TestNumberFormats(t *testing.T) {
	cases := []struct {
		v    *qdrant.Value
		want string
	}{
		{qdrant.NewValueInt(3), `3`},
		{qdrant.NewValueInt(math.MinInt64), `-9223372036854775808`},
		{qdrant.NewValueDouble(3), `3.0`},
		{qdrant.NewValueDouble(-0.5), `-0.5`},
		{qdrant.NewValueDouble(1e21), `1e+21`},
		{qdrant.NewValueDouble(1e-7), `1e-07`},
		{qdrant.NewValueDouble(math.NaN()), `null`},
		{qdrant.NewValueString("a\"b\\c\n\x01\u2028"), `"a\"b\\c\n\u0001` + "\u2028" + `"`},
		{qdrant.NewValueString("bad \xff utf8"), `"bad \ufffd utf8"`},
		{qdrant.NewValueFromList(qdrant.NewValueInt(1), qdrant.NewValueDouble(1), qdrant.NewValueNull()), `[1,1.0,null]`},
	}
	for _, c := range cases {
		if got := string(appendValue(nil, c.v)); got != c.want {
			t.Errorf("appendValue(%v) = %s, want %s", c.v, got, c.want)
		}
	}
	if got := string(AppendFloat32(nil, 0.9)); got != "0.9" {
		t.Errorf("score 0.9 written as %s", got)
	}
	if got := string(AppendPointID(nil, qdrant.NewIDNum(math.MaxUint64))); got != "18446744073709551615" {
		t.Errorf("id written as %s", got)
	}
}

func TestPayloadJSONKeepsIntsAndFloats(t *testing.T) {
	p, err := DecodePayload([]byte(`{"i": 3, "f": 3.0, "e": 1e2, "big": 9223372036854775807, "huge": 18446744073709551616, "nested": {"x": [1, 2.5]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p["i"].GetKind().(*qdrant.Value_IntegerValue); !ok {
		t.Errorf("3 must decode as an integer: %v", p["i"])
	}
	for _, k := range []string{"f", "e", "huge"} {
		if _, ok := p[k].GetKind().(*qdrant.Value_DoubleValue); !ok {
			t.Errorf("%s must decode as a float: %v", k, p[k])
		}
	}
	if p["big"].GetIntegerValue() != math.MaxInt64 {
		t.Errorf("big = %v", p["big"])
	}
	want := `{"big":9223372036854775807,"e":100.0,"f":3.0,"huge":1.8446744073709552e+19,"i":3,"nested":{"x":[1,2.5]}}`
	if got := string(AppendPayload(nil, p)); got != want {
		t.Errorf("AppendPayload = %s, want %s", got, want)
	}
}

// DecodePayload refuses what is not one JSON object, saying what it got,
// and reads a payload whose values nest too deeply with those values cut
// to null, not refused.
func TestDecodePayload(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, "not a JSON object: EOF while parsing a value at line 1 column 0"},
		{`[1]`, "not a JSON object: got an array"},
		{`"x"`, "not a JSON object: got a string"},
		{`null`, "not a JSON object: got null"},
		{`{"a":`, "not a JSON object: EOF while parsing a value at line 1 column 5"},
		{`{} {}`, "not a JSON object: trailing characters at line 1 column 4"},
		{"{\"a\":\"\xff\"}", "not a JSON object: invalid unicode code point"},
	} {
		_, err := DecodePayload([]byte(c.in))
		if !errors.Is(err, ErrNotObject) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodePayload(%q) = %v, want ErrNotObject saying %q", c.in, err, c.want)
		}
	}
	if _, err := DecodePayload([]byte(`{"a": {"b": [1, 1e400]}}`)); err == nil || err.Error() != "a.b[1]: number out of range" {
		t.Errorf("an out-of-range number: %v", err)
	}

	deep := strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200)
	p, err := DecodePayload([]byte(`{"text": "ok", "x": ` + deep + `, "v": [[[1]]]}`))
	if err != nil {
		t.Fatalf("a deep value must not cost the record: %v", err)
	}
	if p["text"].GetStringValue() != "ok" {
		t.Errorf("text = %v", p["text"])
	}
	v := p["x"]
	for range maxKeptDepth {
		v = v.GetStructValue().GetFields()["a"]
	}
	if _, ok := v.GetKind().(*qdrant.Value_NullValue); !ok {
		t.Errorf("the value at depth %d is %v, want null", maxKeptDepth+1, v)
	}
	want := qdrant.NewValueFromList(qdrant.NewValueFromList(qdrant.NewValueFromList(qdrant.NewValueInt(1))))
	if diff := cmp.Diff(want, p["v"], protocmp.Transform()); diff != "" {
		t.Errorf("shallow lists (-want +got):\n%s", diff)
	}
}

// A request's payload is strict: what the parser bounds is refused, not
// cut, and the path of a bad number is named.
func TestPayload(t *testing.T) {
	v, err := Parse(`{"k": [1, 2, 1e400]}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Payload(v, "points[0].payload")
	var e *Error
	if !errors.As(err, &e) || e.Error() != "Format error in JSON body: points[0].payload.k[2]: number out of range" {
		t.Errorf("Payload: %v", err)
	}
	if _, err := Payload(Value{Kind: KindArray}, "payload"); err == nil || err.Error() != "Format error in JSON body: payload: invalid type: sequence, expected a map" {
		t.Errorf("Payload of an array: %v", err)
	}
}
