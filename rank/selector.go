package rank

import (
	"errors"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/internal/jsonpath"
)

// The read path asks the upstream for whole payloads (it needs the memory
// fields whatever the caller selected) and then gives the caller what its
// own with_payload / with_vectors would have returned. This file is that
// second step. The payload key paths ("a.b[].c") and Qdrant's selection
// over them (v1.19, lib/segment/src/json_path and value_filter) are the
// store's implementation, internal/jsonpath, so the two cannot drift.

// payloadSel is a caller's WithPayloadSelector, resolved.
type payloadSel struct {
	enabled bool
	include []jsonpath.Path // non-nil: include mode
	exclude []jsonpath.Path // non-nil: exclude mode
}

// resolvePayloadSel resolves s; nil means Qdrant's default for queries
// (no payload). It fails on a selector the upstream would refuse, so the
// caller's request can be sent as it is and refused with the upstream's
// own words.
func resolvePayloadSel(s *qdrant.WithPayloadSelector) (payloadSel, error) {
	if s == nil {
		return payloadSel{}, nil
	}
	parse := func(fields []string) ([]jsonpath.Path, error) {
		out := make([]jsonpath.Path, 0, len(fields))
		for _, f := range fields {
			p, err := jsonpath.Parse(f)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	}
	switch o := s.GetSelectorOptions().(type) {
	case *qdrant.WithPayloadSelector_Enable:
		return payloadSel{enabled: o.Enable}, nil
	case *qdrant.WithPayloadSelector_Include:
		paths, err := parse(o.Include.GetFields())
		return payloadSel{enabled: true, include: paths}, err
	case *qdrant.WithPayloadSelector_Exclude:
		paths, err := parse(o.Exclude.GetFields())
		return payloadSel{enabled: true, exclude: paths}, err
	}
	return payloadSel{}, errors.New("payload selector without options")
}

// apply returns what the caller selected of a whole payload. The whole
// payload is shared, not copied; a selection is a new map whose leaves are
// shared with the original.
func (s payloadSel) apply(fields map[string]*qdrant.Value) map[string]*qdrant.Value {
	switch {
	case !s.enabled:
		return nil
	case s.include != nil:
		return jsonpath.Include(fields, s.include)
	case s.exclude != nil:
		return jsonpath.Exclude(fields, s.exclude)
	}
	return fields
}

// whole: the caller selected whole payloads.
func (s payloadSel) whole() bool { return s.enabled && s.include == nil && s.exclude == nil }

// vectorSel is a caller's WithVectorsSelector, resolved: all, none, or the
// named vectors ("" is the unnamed default vector).
type vectorSel struct {
	all   bool
	names []string // nil unless some vectors are selected by name
}

func resolveVectorSel(s *qdrant.WithVectorsSelector) vectorSel {
	switch o := s.GetSelectorOptions().(type) {
	case *qdrant.WithVectorsSelector_Enable:
		return vectorSel{all: o.Enable}
	case *qdrant.WithVectorsSelector_Include:
		return vectorSel{names: append([]string{}, o.Include.GetNames()...)}
	}
	return vectorSel{}
}

func (s vectorSel) none() bool { return !s.all && len(s.names) == 0 }

func (s vectorSel) has(name string) bool {
	if s.all {
		return true
	}
	for _, n := range s.names {
		if n == name {
			return true
		}
	}
	return false
}

// upstream is the selector to send upstream: the caller's, widened so that
// the vector tier 2 needs comes back. need is that vector's name ("" for
// the unnamed default); named says whether the collection's vectors are
// named (then only a name list can ask for one of them).
func (s vectorSel) upstream(orig *qdrant.WithVectorsSelector, need string, tier2, named bool) *qdrant.WithVectorsSelector {
	if !tier2 || s.has(need) {
		return orig
	}
	if !named {
		// The unnamed dense vector is the one "true" returns (with any
		// sparse vectors, which the caller's selector strips again).
		return qdrant.NewWithVectorsEnable(true)
	}
	return qdrant.NewWithVectorsInclude(append(append([]string{}, s.names...), need)...)
}

// apply keeps what the caller selected of a point's vectors.
func (s vectorSel) apply(v *qdrant.VectorsOutput) *qdrant.VectorsOutput {
	if v == nil || s.none() {
		return nil
	}
	if s.all {
		return v
	}
	switch o := v.GetVectorsOptions().(type) {
	case *qdrant.VectorsOutput_Vector:
		if s.has("") {
			return v
		}
		return nil
	case *qdrant.VectorsOutput_Vectors:
		named := o.Vectors.GetVectors()
		out := make(map[string]*qdrant.VectorOutput, len(s.names))
		for _, n := range s.names {
			if vec, ok := named[n]; ok {
				out[n] = vec
			}
		}
		return &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vectors{Vectors: &qdrant.NamedVectorsOutput{Vectors: out}}}
	}
	return nil
}

// denseVector is the dense vector called name in v, or nil.
func denseVector(v *qdrant.VectorsOutput, name string) []float32 {
	var out *qdrant.VectorOutput
	switch o := v.GetVectorsOptions().(type) {
	case *qdrant.VectorsOutput_Vector:
		if name == "" {
			out = o.Vector
		}
	case *qdrant.VectorsOutput_Vectors:
		out = o.Vectors.GetVectors()[name]
	}
	if out == nil {
		return nil
	}
	if d := out.GetDense(); d != nil {
		return d.GetData()
	}
	if out.GetSparse() != nil || out.GetMultiDense() != nil || out.GetIndices() != nil || out.GetVectorsCount() > 0 {
		return nil
	}
	return out.GetData() //nolint:staticcheck // servers before 1.12 fill only the deprecated flat field
}
