package restapi

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/qdrantjson"
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
		v, err := qdrantjson.Parse(c.in)
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
		v, err := qdrantjson.Parse(bad.in)
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
