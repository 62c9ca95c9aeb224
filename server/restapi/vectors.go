package restapi

import (
	"strconv"

	"github.com/qdrant/go-client/qdrant"
)

// Vector forms shared by points and queries.

// toDense reads [f32, ...].
func toDense(v value, path string) ([]float32, error) {
	if v.kind != kindArray {
		return nil, typeErr(path, v, "a sequence of numbers")
	}
	if v.nums == nil {
		if len(v.elems) == 0 {
			return []float32{}, nil
		}
		return nil, typeErr(index(path, 0), v.elems[0], "a number")
	}
	out := make([]float32, len(v.nums))
	for i, n := range v.nums {
		// The element's path is built only for an error: a vector has
		// hundreds of components.
		f, err := strconv.ParseFloat(n, 32)
		if err != nil {
			return nil, formatErr(index(path, i), "number out of range")
		}
		out[i] = float32(f)
	}
	return out, nil
}

// isDenseLike says whether v is an array of numbers (or empty).
func isDenseLike(v value) bool {
	return v.kind == kindArray && (v.nums != nil || len(v.elems) == 0)
}

// vectorArrayErr names the element that keeps an array from being a dense
// vector: [1, "x"] is refused at [1], as serde_json does.
func vectorArrayErr(v value, path string) error {
	for i, e := range v.elems {
		if e.kind != kindNumber {
			return typeErr(index(path, i), e, "a number")
		}
	}
	return typeErr(path, v, "a vector")
}

// isMultiLike says whether v is an array whose first element is an array.
func isMultiLike(v value) bool {
	return v.kind == kindArray && len(v.elems) > 0 && v.elems[0].kind == kindArray
}

func toMulti(v value, path string) ([][]float32, error) {
	out := make([][]float32, len(v.elems))
	for i, e := range v.elems {
		d, err := toDense(e, index(path, i))
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// toSparse reads {"indices": [u32...], "values": [f32...]}.
func toSparse(v value, path string) ([]uint32, []float32, error) {
	o, err := readObject(v, path, "indices", "values")
	if err != nil {
		return nil, nil, err
	}
	iv, err := o.require("indices")
	if err != nil {
		return nil, nil, err
	}
	vv, err := o.require("values")
	if err != nil {
		return nil, nil, err
	}
	if iv.kind != kindArray {
		return nil, nil, typeErr(o.sub("indices"), iv, "a sequence of u32")
	}
	items := iv.items()
	idx := make([]uint32, len(items))
	for i, e := range items {
		if e.kind == kindNumber {
			if n, err := strconv.ParseUint(e.s, 10, 32); err == nil {
				idx[i] = uint32(n)
				continue
			}
		}
		n, err := toU64(e, index(o.sub("indices"), i))
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, formatErr(index(o.sub("indices"), i), "invalid value: integer `%s`, expected u32", strconv.FormatUint(n, 10))
	}
	vals, err := toDense(vv, o.sub("values"))
	if err != nil {
		return nil, nil, err
	}
	return idx, vals, nil
}

func memberKeys(v value) map[string]bool {
	m := make(map[string]bool, len(v.members))
	for _, mb := range v.members {
		m[mb.key] = true
	}
	return m
}

// inference reads the inference objects (Document, Image, InferenceObject)
// when v is one; ok is false otherwise.
func inference(v value, path string) (doc *qdrant.Document, img *qdrant.Image, obj *qdrant.InferenceObject, ok bool, err error) {
	if v.kind != kindObject {
		return nil, nil, nil, false, nil
	}
	keys := memberKeys(v)
	if !keys["model"] {
		return nil, nil, nil, false, nil
	}
	switch {
	case keys["text"]:
		o, err := readObject(v, path, "text", "model", "options")
		if err != nil {
			return nil, nil, nil, true, err
		}
		d := &qdrant.Document{}
		if d.Text, err = reqString(o, "text"); err != nil {
			return nil, nil, nil, true, err
		}
		if d.Model, err = reqString(o, "model"); err != nil {
			return nil, nil, nil, true, err
		}
		if d.Options, err = options(o); err != nil {
			return nil, nil, nil, true, err
		}
		return d, nil, nil, true, nil
	case keys["image"]:
		o, err := readObject(v, path, "image", "model", "options")
		if err != nil {
			return nil, nil, nil, true, err
		}
		im := &qdrant.Image{}
		if im.Image, err = toValue(o.m["image"], o.sub("image"), 1); err != nil {
			return nil, nil, nil, true, err
		}
		if im.Model, err = reqString(o, "model"); err != nil {
			return nil, nil, nil, true, err
		}
		if im.Options, err = options(o); err != nil {
			return nil, nil, nil, true, err
		}
		return nil, im, nil, true, nil
	case keys["object"]:
		o, err := readObject(v, path, "object", "model", "options")
		if err != nil {
			return nil, nil, nil, true, err
		}
		io := &qdrant.InferenceObject{}
		if io.Object, err = toValue(o.m["object"], o.sub("object"), 1); err != nil {
			return nil, nil, nil, true, err
		}
		if io.Model, err = reqString(o, "model"); err != nil {
			return nil, nil, nil, true, err
		}
		if io.Options, err = options(o); err != nil {
			return nil, nil, nil, true, err
		}
		return nil, nil, io, true, nil
	}
	return nil, nil, nil, false, nil
}

func reqString(o object, key string) (string, error) {
	s, err := o.str(key)
	if err != nil {
		return "", err
	}
	if s == nil {
		return "", formatErr(o.path, "missing field `%s`", key)
	}
	return *s, nil
}

func options(o object) (map[string]*qdrant.Value, error) {
	v, ok := o.get("options")
	if !ok {
		return nil, nil
	}
	return toPayload(v, o.sub("options"))
}

// toVector reads one vector of a point (Qdrant's Vector): dense, sparse,
// multi-dense or an inference object.
func toVector(v value, path string) (*qdrant.Vector, error) {
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
	case v.kind == kindObject:
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
			return nil, formatErr(path, "data did not match any variant of untagged enum Vector")
		}
		idx, vals, err := toSparse(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewVectorSparse(idx, vals), nil
	case v.kind == kindArray:
		return nil, vectorArrayErr(v, path)
	}
	return nil, formatErr(path, "invalid type: %s, expected a vector (a list of numbers, a sparse vector, a multi-vector or a named-vector map)", v.describe())
}

// toVectors reads the vector(s) of a point (Qdrant's VectorStruct): one
// unnamed vector, a multi-vector, an inference object, or a map of named
// vectors.
func toVectors(v value, path string) (*qdrant.Vectors, error) {
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
	case v.kind == kindObject:
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
			return nil, formatErr(path, "data did not match any variant of untagged enum VectorStruct")
		}
		named := make(map[string]*qdrant.Vector, len(v.members))
		for _, mb := range v.members {
			vec, err := toVector(mb.val, join(path, mb.key))
			if err != nil {
				return nil, err
			}
			named[mb.key] = vec
		}
		return qdrant.NewVectorsMap(named), nil
	case v.kind == kindArray:
		return nil, vectorArrayErr(v, path)
	}
	return nil, formatErr(path, "invalid type: %s, expected a vector (a list of numbers, a multi-vector or a map of named vectors)", v.describe())
}

// toVectorInput reads a query input (Qdrant's VectorInput): a point id, a
// dense, sparse or multi-dense vector, or an inference object.
func toVectorInput(v value, path string) (*qdrant.VectorInput, error) {
	switch {
	case v.kind == kindNumber || v.kind == kindString:
		id, err := toPointID(v, path)
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
	case v.kind == kindObject:
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
			return nil, formatErr(path, "data did not match any variant of untagged enum VectorInput")
		}
		idx, vals, err := toSparse(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewVectorInputSparse(idx, vals), nil
	case v.kind == kindArray:
		return nil, vectorArrayErr(v, path)
	}
	return nil, formatErr(path, "invalid type: %s, expected a vector or a point id", v.describe())
}

func toVectorInputs(v value, path string) ([]*qdrant.VectorInput, error) {
	if v.kind != kindArray {
		return nil, typeErr(path, v, "a sequence of vectors or point ids")
	}
	items := v.items()
	out := make([]*qdrant.VectorInput, len(items))
	for i, e := range items {
		in, err := toVectorInput(e, index(path, i))
		if err != nil {
			return nil, err
		}
		out[i] = in
	}
	return out, nil
}
