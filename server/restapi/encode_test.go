package restapi

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"
)

// Vector forms the embedded store does not hold (named, sparse, multi)
// still translate both ways, for a Qdrant upstream.
func TestVectorForms(t *testing.T) {
	decode := []struct {
		name, in string
		want     *qdrant.Vectors
	}{
		{"dense", `[1,0.5,-2e-3]`, qdrant.NewVectorsDense([]float32{1, 0.5, -0.002})},
		{"multi", `[[1,2],[3,4]]`, qdrant.NewVectorsMulti([][]float32{{1, 2}, {3, 4}})},
		{"named", `{"a":[1,2],"s":{"indices":[4,4294967295],"values":[0.5,0.25]},"m":[[1],[2]]}`, qdrant.NewVectorsMap(map[string]*qdrant.Vector{
			"a": qdrant.NewVectorDense([]float32{1, 2}),
			"s": qdrant.NewVectorSparse([]uint32{4, 4294967295}, []float32{0.5, 0.25}),
			"m": qdrant.NewVectorMulti([][]float32{{1}, {2}}),
		})},
		{"document", `{"text":"hello","model":"m","options":{"lang":"en"}}`, qdrant.NewVectorsDocument(&qdrant.Document{Text: "hello", Model: "m", Options: map[string]*qdrant.Value{"lang": qdrant.NewValueString("en")}})},
	}
	for _, c := range decode {
		v, err := parseJSON(c.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := toVectors(v, "vector")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if diff := cmp.Diff(c.want, got, protocmp.Transform()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	for _, bad := range []struct{ in, want string }{
		{`{"s":{"indices":[4294967296],"values":[1]}}`, "vector.s.indices[0]: invalid value: integer `4294967296`, expected u32"},
		{`[1,"x"]`, "vector[1]: invalid type: string \"x\", expected a number"},
		{`"v"`, "vector: invalid type: string \"v\", expected a vector"},
		{`[1e39]`, "vector[0]: number out of range"},
	} {
		v, err := parseJSON(bad.in)
		if err != nil {
			t.Fatal(err)
		}
		_, err = toVectors(v, "vector")
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("toVectors(%s) = %v, want %q", bad.in, err, bad.want)
		}
	}

	out := &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vectors{Vectors: &qdrant.NamedVectorsOutput{Vectors: map[string]*qdrant.VectorOutput{
		"z": {Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: []float32{0.9, 1, float32(math.Inf(1))}}}},
		"a": {Vector: &qdrant.VectorOutput_Sparse{Sparse: &qdrant.SparseVector{Indices: []uint32{1, 7}, Values: []float32{0.1, 2}}}},
		"m": {Vector: &qdrant.VectorOutput_MultiDense{MultiDense: &qdrant.MultiDenseVector{Vectors: []*qdrant.DenseVector{{Data: []float32{1}}, {Data: []float32{2.5}}}}}},
		"d": {Data: []float32{1, 2, 3, 4}, VectorsCount: ptr(uint32(2))}, // the deprecated flat form
	}}}}
	want := `{"a":{"indices":[1,7],"values":[0.1,2.0]},"d":[[1.0,2.0],[3.0,4.0]],"m":[[1.0],[2.5]],"z":[0.9,1.0,null]}`
	if got := string(appendVectors(nil, out)); got != want {
		t.Errorf("appendVectors = %s, want %s", got, want)
	}
}

func ptr[T any](v T) *T { return &v }

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
	if got := string(appendFloat32(nil, 0.9)); got != "0.9" {
		t.Errorf("score 0.9 written as %s", got)
	}
	if got := string(appendPointID(nil, qdrant.NewIDNum(math.MaxUint64))); got != "18446744073709551615" {
		t.Errorf("id written as %s", got)
	}
}
