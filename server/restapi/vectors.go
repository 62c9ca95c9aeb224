package restapi

import (
	"strconv"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/qdrantjson"
)

// Vector forms shared by points and queries.

// toDense reads [f32, ...].
func toDense(v qdrantjson.Value, path string) ([]float32, error) {
	if v.Kind != qdrantjson.KindArray {
		return nil, qdrantjson.TypeError(path, v, "a sequence of numbers")
	}
	if v.Nums == nil {
		if len(v.Elems) == 0 {
			return []float32{}, nil
		}
		return nil, qdrantjson.TypeError(qdrantjson.Index(path, 0), v.Elems[0], "a number")
	}
	out := make([]float32, len(v.Nums))
	for i, n := range v.Nums {
		// The element's path is built only for an error: a vector has
		// hundreds of components.
		f, err := strconv.ParseFloat(n, 32)
		if err != nil {
			return nil, qdrantjson.FormatError(qdrantjson.Index(path, i), "number out of range")
		}
		out[i] = float32(f)
	}
	return out, nil
}

// isDenseLike says whether v is an array of numbers (or empty).
func isDenseLike(v qdrantjson.Value) bool {
	return v.Kind == qdrantjson.KindArray && (v.Nums != nil || len(v.Elems) == 0)
}

// vectorArrayErr names the element that keeps an array from being a dense
// vector: [1, "x"] is refused at [1], as serde_json does.
func vectorArrayErr(v qdrantjson.Value, path string) error {
	for i, e := range v.Elems {
		if e.Kind != qdrantjson.KindNumber {
			return qdrantjson.TypeError(qdrantjson.Index(path, i), e, "a number")
		}
	}
	return qdrantjson.TypeError(path, v, "a vector")
}

// isMultiLike says whether v is an array whose first element is an array.
func isMultiLike(v qdrantjson.Value) bool {
	return v.Kind == qdrantjson.KindArray && len(v.Elems) > 0 && v.Elems[0].Kind == qdrantjson.KindArray
}

func toMulti(v qdrantjson.Value, path string) ([][]float32, error) {
	out := make([][]float32, len(v.Elems))
	for i, e := range v.Elems {
		d, err := toDense(e, qdrantjson.Index(path, i))
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// toSparse reads {"indices": [u32...], "values": [f32...]}.
func toSparse(v qdrantjson.Value, path string) ([]uint32, []float32, error) {
	o, err := qdrantjson.ReadObject(v, path, "indices", "values")
	if err != nil {
		return nil, nil, err
	}
	iv, err := o.Require("indices")
	if err != nil {
		return nil, nil, err
	}
	vv, err := o.Require("values")
	if err != nil {
		return nil, nil, err
	}
	if iv.Kind != qdrantjson.KindArray {
		return nil, nil, qdrantjson.TypeError(o.Sub("indices"), iv, "a sequence of u32")
	}
	items := iv.Items()
	idx := make([]uint32, len(items))
	for i, e := range items {
		if e.Kind == qdrantjson.KindNumber {
			if n, err := strconv.ParseUint(e.Text, 10, 32); err == nil {
				idx[i] = uint32(n)
				continue
			}
		}
		n, err := qdrantjson.U64(e, qdrantjson.Index(o.Sub("indices"), i))
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, qdrantjson.FormatError(qdrantjson.Index(o.Sub("indices"), i), "invalid value: integer `%s`, expected u32", strconv.FormatUint(n, 10))
	}
	vals, err := toDense(vv, o.Sub("values"))
	if err != nil {
		return nil, nil, err
	}
	return idx, vals, nil
}

// inference reads the inference objects (Document, Image, InferenceObject)
// when v is one; ok is false otherwise.
func inference(v qdrantjson.Value, path string) (doc *qdrant.Document, img *qdrant.Image, obj *qdrant.InferenceObject, ok bool, err error) {
	if v.Kind != qdrantjson.KindObject {
		return nil, nil, nil, false, nil
	}
	if !v.Has("model") {
		return nil, nil, nil, false, nil
	}
	switch {
	case v.Has("text"):
		o, err := qdrantjson.ReadObject(v, path, "text", "model", "options")
		if err != nil {
			return nil, nil, nil, true, err
		}
		d := &qdrant.Document{}
		if d.Text, err = o.RequireString("text"); err != nil {
			return nil, nil, nil, true, err
		}
		if d.Model, err = o.RequireString("model"); err != nil {
			return nil, nil, nil, true, err
		}
		if d.Options, err = options(o); err != nil {
			return nil, nil, nil, true, err
		}
		return d, nil, nil, true, nil
	case v.Has("image"):
		o, err := qdrantjson.ReadObject(v, path, "image", "model", "options")
		if err != nil {
			return nil, nil, nil, true, err
		}
		im := &qdrant.Image{}
		if im.Image, err = qdrantjson.PayloadValue(o.Member("image"), o.Sub("image")); err != nil {
			return nil, nil, nil, true, err
		}
		if im.Model, err = o.RequireString("model"); err != nil {
			return nil, nil, nil, true, err
		}
		if im.Options, err = options(o); err != nil {
			return nil, nil, nil, true, err
		}
		return nil, im, nil, true, nil
	case v.Has("object"):
		o, err := qdrantjson.ReadObject(v, path, "object", "model", "options")
		if err != nil {
			return nil, nil, nil, true, err
		}
		io := &qdrant.InferenceObject{}
		if io.Object, err = qdrantjson.PayloadValue(o.Member("object"), o.Sub("object")); err != nil {
			return nil, nil, nil, true, err
		}
		if io.Model, err = o.RequireString("model"); err != nil {
			return nil, nil, nil, true, err
		}
		if io.Options, err = options(o); err != nil {
			return nil, nil, nil, true, err
		}
		return nil, nil, io, true, nil
	}
	return nil, nil, nil, false, nil
}

func options(o qdrantjson.Object) (map[string]*qdrant.Value, error) {
	v, ok := o.Get("options")
	if !ok {
		return nil, nil
	}
	return qdrantjson.Payload(v, o.Sub("options"))
}

// toVector reads one vector of a point (Qdrant's Vector): dense, sparse,
// multi-dense or an inference object.
func toVector(v qdrantjson.Value, path string) (*qdrant.Vector, error) {
	switch {
	case isDenseLike(v):
		d, err := toDense(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewVectorDense(d), nil
	case isMultiLike(v):
		m, err := toMulti(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewVectorMulti(m), nil
	case v.Kind == qdrantjson.KindObject:
		doc, img, obj, ok, err := inference(v, path)
		if err != nil {
			return nil, err
		}
		switch {
		case doc != nil:
			return qdrant.NewVectorDocument(doc), nil
		case img != nil:
			return qdrant.NewVectorImage(img), nil
		case obj != nil:
			return qdrant.NewVectorObject(obj), nil
		case ok:
			return nil, qdrantjson.FormatError(path, "data did not match any variant of untagged enum Vector")
		}
		idx, vals, err := toSparse(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewVectorSparse(idx, vals), nil
	case v.Kind == qdrantjson.KindArray:
		return nil, vectorArrayErr(v, path)
	}
	return nil, qdrantjson.FormatError(path, "invalid type: %s, expected a vector (a list of numbers, a sparse vector, a multi-vector or a named-vector map)", v.Describe())
}

// toVectors reads the vector(s) of a point (Qdrant's VectorStruct): one
// unnamed vector, a multi-vector, an inference object, or a map of named
// vectors.
func toVectors(v qdrantjson.Value, path string) (*qdrant.Vectors, error) {
	switch {
	case isDenseLike(v):
		d, err := toDense(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewVectorsDense(d), nil
	case isMultiLike(v):
		m, err := toMulti(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewVectorsMulti(m), nil
	case v.Kind == qdrantjson.KindObject:
		doc, img, obj, ok, err := inference(v, path)
		if err != nil {
			return nil, err
		}
		switch {
		case doc != nil:
			return qdrant.NewVectorsDocument(doc), nil
		case img != nil:
			return qdrant.NewVectorsImage(img), nil
		case obj != nil:
			return qdrant.NewVectorsObject(obj), nil
		case ok:
			return nil, qdrantjson.FormatError(path, "data did not match any variant of untagged enum VectorStruct")
		}
		named := make(map[string]*qdrant.Vector, len(v.Members))
		for _, mb := range v.Members {
			vec, err := toVector(mb.Val, qdrantjson.Join(path, mb.Key))
			if err != nil {
				return nil, err
			}
			named[mb.Key] = vec
		}
		return qdrant.NewVectorsMap(named), nil
	case v.Kind == qdrantjson.KindArray:
		return nil, vectorArrayErr(v, path)
	}
	return nil, qdrantjson.FormatError(path, "invalid type: %s, expected a vector (a list of numbers, a multi-vector or a map of named vectors)", v.Describe())
}

// toVectorInput reads a query input (Qdrant's VectorInput): a point id, a
// dense, sparse or multi-dense vector, or an inference object.
func toVectorInput(v qdrantjson.Value, path string) (*qdrant.VectorInput, error) {
	switch {
	case v.Kind == qdrantjson.KindNumber || v.Kind == qdrantjson.KindString:
		id, err := qdrantjson.PointID(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewVectorInputID(id), nil
	case isDenseLike(v):
		d, err := toDense(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewVectorInputDense(d), nil
	case isMultiLike(v):
		m, err := toMulti(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewVectorInputMulti(m), nil
	case v.Kind == qdrantjson.KindObject:
		doc, img, obj, ok, err := inference(v, path)
		if err != nil {
			return nil, err
		}
		switch {
		case doc != nil:
			return qdrant.NewVectorInputDocument(doc), nil
		case img != nil:
			return qdrant.NewVectorInputImage(img), nil
		case obj != nil:
			return qdrant.NewVectorInputObject(obj), nil
		case ok:
			return nil, qdrantjson.FormatError(path, "data did not match any variant of untagged enum VectorInput")
		}
		idx, vals, err := toSparse(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewVectorInputSparse(idx, vals), nil
	case v.Kind == qdrantjson.KindArray:
		return nil, vectorArrayErr(v, path)
	}
	return nil, qdrantjson.FormatError(path, "invalid type: %s, expected a vector or a point id", v.Describe())
}

func toVectorInputs(v qdrantjson.Value, path string) ([]*qdrant.VectorInput, error) {
	if v.Kind != qdrantjson.KindArray {
		return nil, qdrantjson.TypeError(path, v, "a sequence of vectors or point ids")
	}
	items := v.Items()
	out := make([]*qdrant.VectorInput, len(items))
	for i, e := range items {
		in, err := toVectorInput(e, qdrantjson.Index(path, i))
		if err != nil {
			return nil, err
		}
		out[i] = in
	}
	return out, nil
}
