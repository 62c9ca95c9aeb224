package store

import (
	"math"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/internal/jsonpath"
)

// maxPayloadDepth bounds how deep a payload value may nest. Qdrant's gRPC
// decoder (prost) stops at 100 nested messages, and every JSON level costs
// it about two, so nothing deeper reaches real Qdrant either.
const maxPayloadDepth = 64

// cleanPayload deep-copies a request payload, turning nil values into JSON
// null (as Qdrant's proto-to-JSON conversion does) and rejecting non-finite
// doubles, which JSON cannot hold. The copy means the engine never mutates
// or retains the caller's messages.
func cleanPayload(in map[string]*qdrant.Value) (map[string]*qdrant.Value, error) {
	out := make(map[string]*qdrant.Value, len(in))
	for k, v := range in {
		c, err := cleanValue(v, 0)
		if err != nil {
			return nil, err
		}
		out[k] = c
	}
	return out, nil
}

func cleanValue(v *qdrant.Value, depth int) (*qdrant.Value, error) {
	if depth > maxPayloadDepth {
		return nil, wrongInput("payload nesting is deeper than %d levels", maxPayloadDepth)
	}
	switch k := v.GetKind().(type) {
	case nil, *qdrant.Value_NullValue:
		return jsonpath.NewNull(), nil
	case *qdrant.Value_DoubleValue:
		if math.IsNaN(k.DoubleValue) || math.IsInf(k.DoubleValue, 0) {
			return nil, invalidArg("cannot convert to json number")
		}
		return &qdrant.Value{Kind: &qdrant.Value_DoubleValue{DoubleValue: k.DoubleValue}}, nil
	case *qdrant.Value_IntegerValue:
		return &qdrant.Value{Kind: &qdrant.Value_IntegerValue{IntegerValue: k.IntegerValue}}, nil
	case *qdrant.Value_StringValue:
		return &qdrant.Value{Kind: &qdrant.Value_StringValue{StringValue: k.StringValue}}, nil
	case *qdrant.Value_BoolValue:
		return &qdrant.Value{Kind: &qdrant.Value_BoolValue{BoolValue: k.BoolValue}}, nil
	case *qdrant.Value_StructValue:
		fields := make(map[string]*qdrant.Value, len(k.StructValue.GetFields()))
		for name, e := range k.StructValue.GetFields() {
			c, err := cleanValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			fields[name] = c
		}
		return &qdrant.Value{Kind: &qdrant.Value_StructValue{StructValue: &qdrant.Struct{Fields: fields}}}, nil
	case *qdrant.Value_ListValue:
		vals := make([]*qdrant.Value, len(k.ListValue.GetValues()))
		for i, e := range k.ListValue.GetValues() {
			c, err := cleanValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			vals[i] = c
		}
		return &qdrant.Value{Kind: &qdrant.Value_ListValue{ListValue: &qdrant.ListValue{Values: vals}}}, nil
	}
	return jsonpath.NewNull(), nil
}

// denseVector extracts the one unnamed dense vector from a point's vectors,
// accepting both the deprecated Vector.data and the dense oneof.
func denseVector(vs *qdrant.Vectors) ([]float32, error) {
	if vs == nil {
		return nil, invalidArg("Expected some vectors")
	}
	switch o := vs.GetVectorsOptions().(type) {
	case *qdrant.Vectors_Vector:
		return fromVector(o.Vector)
	case *qdrant.Vectors_Vectors:
		var out []float32
		for name, v := range o.Vectors.GetVectors() {
			if name != "" {
				return nil, wrongInput("Not existing vector name error: %s", name)
			}
			d, err := fromVector(v)
			if err != nil {
				return nil, err
			}
			out = d
		}
		return out, nil
	}
	return nil, invalidArg("No Vector Provided")
}

func fromVector(v *qdrant.Vector) ([]float32, error) {
	switch o := v.GetVector().(type) {
	case *qdrant.Vector_Dense:
		return o.Dense.GetData(), nil
	case *qdrant.Vector_Sparse:
		return nil, invalidArg("Sparse vector must be named")
	case *qdrant.Vector_MultiDense:
		return nil, unimplemented("multi vectors are not supported")
	case *qdrant.Vector_Document, *qdrant.Vector_Image, *qdrant.Vector_Object:
		return nil, unimplemented("inference (document, image and object vectors) is not supported")
	}
	// The deprecated fields are what older clients still send.
	if v.GetIndices() != nil {
		return nil, invalidArg("Sparse vector must be named")
	}
	if v.VectorsCount != nil {
		return nil, unimplemented("multi vectors are not supported")
	}
	return v.GetData(), nil
}

// checkVector validates a vector against the collection and preprocesses
// it (Cosine: normalised). The result is a fresh slice.
func (c *collection) checkVector(v []float32) ([]float32, error) {
	if len(v) != c.dim {
		return nil, wrongInput("Vector dimension error: expected dim: %d, got %d", c.dim, len(v))
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			// Qdrant v1.19 stores such vectors and then ranks them
			// arbitrarily (NaN compares false both ways); a store that
			// backs ranking tests refuses them instead.
			return nil, wrongInput("Vector contains NaN or infinite values")
		}
	}
	if c.metric.distance == qdrant.Distance_Cosine {
		return normalize(v), nil
	}
	out := make([]float32, len(v))
	copy(out, v)
	return out, nil
}
