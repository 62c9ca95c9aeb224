package rank

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/qdrant/go-client/qdrant"
)

// The read path asks the upstream for whole payloads (it needs the memory
// fields whatever the caller selected) and then gives the caller what its
// own with_payload / with_vectors would have returned. This file is that
// second step, with the semantics of Qdrant's payload selectors (v1.19,
// lib/segment/src/json_path and value_filter):
//
//   - a key path is a first key followed by .key, [N] or [] items; keys of
//     letters, digits, '_' and '-' may be bare, other keys are written in
//     double quotes;
//   - the payload is walked with objects entered by key and arrays by [];
//     include keeps a node when some pattern is a prefix of its path or its
//     path a prefix of the pattern, exclude drops a node when some pattern
//     is a prefix of its path. Items compare exactly, so "a[0]" selects
//     nothing inside the array a (the walk enters arrays as "[]").

// pathItem is one step of a key path after its first key.
type pathItem struct {
	kind  uint8 // itemKey, itemIndex, itemAll
	key   string
	index int
}

const (
	itemKey uint8 = iota
	itemIndex
	itemAll
)

// keyPath is a parsed payload key path.
type keyPath struct {
	first string
	rest  []pathItem
}

var errBadPath = errors.New("invalid payload key path")

// maxPathLen bounds what parsePath reads, so a hostile selector cannot make
// it allocate in proportion to an unbounded field.
const maxPathLen = 1 << 16

func parsePath(s string) (keyPath, error) {
	if len(s) > maxPathLen {
		return keyPath{}, errBadPath
	}
	i := 0
	first, ok := pathKey(s, &i)
	if !ok {
		return keyPath{}, errBadPath
	}
	p := keyPath{first: first}
	for i < len(s) {
		switch s[i] {
		case '.':
			i++
			k, ok := pathKey(s, &i)
			if !ok {
				return keyPath{}, errBadPath
			}
			p.rest = append(p.rest, pathItem{kind: itemKey, key: k})
		case '[':
			i++
			if i < len(s) && s[i] == ']' {
				i++
				p.rest = append(p.rest, pathItem{kind: itemAll})
				continue
			}
			start := i
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			if start == i || i >= len(s) || s[i] != ']' {
				return keyPath{}, errBadPath
			}
			n, err := strconv.Atoi(s[start:i])
			if err != nil {
				return keyPath{}, errBadPath
			}
			i++
			p.rest = append(p.rest, pathItem{kind: itemIndex, index: n})
		default:
			return keyPath{}, errBadPath
		}
	}
	return p, nil
}

// pathKey reads a bare key (one or more letters, digits, '_' or '-') or a
// double-quoted key (any runes but '"' and '\') at s[*i:].
func pathKey(s string, i *int) (string, bool) {
	if *i >= len(s) {
		return "", false
	}
	if s[*i] == '"' {
		end := strings.IndexAny(s[*i+1:], "\"\\")
		if end < 0 || s[*i+1+end] != '"' {
			return "", false
		}
		k := s[*i+1 : *i+1+end]
		*i += end + 2
		return k, true
	}
	start := *i
	for *i < len(s) {
		r, size := utf8.DecodeRuneInString(s[*i:])
		if !(r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) || r == utf8.RuneError && size == 1 {
			break
		}
		*i += size
	}
	return s[start:*i], *i > start
}

// payloadSel is a caller's WithPayloadSelector, resolved.
type payloadSel struct {
	enabled bool
	include []keyPath // non-nil: include mode
	exclude []keyPath // non-nil: exclude mode
}

// resolvePayloadSel resolves s; nil means Qdrant's default for queries
// (no payload). It fails on a selector the upstream would refuse, so the
// caller's request can be sent as it is and refused with the upstream's
// own words.
func resolvePayloadSel(s *qdrant.WithPayloadSelector) (payloadSel, error) {
	if s == nil {
		return payloadSel{}, nil
	}
	parse := func(fields []string) ([]keyPath, error) {
		out := make([]keyPath, 0, len(fields))
		for _, f := range fields {
			p, err := parsePath(f)
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
		return filterPayload(fields, func(first string, key []pathItem) bool {
			for i := range s.include {
				if s.include[i].matchesInclude(first, key) {
					return true
				}
			}
			return false
		})
	case s.exclude != nil:
		return filterPayload(fields, func(first string, key []pathItem) bool {
			for i := range s.exclude {
				if s.exclude[i].matchesExclude(first, key) {
					return false
				}
			}
			return true
		})
	}
	return fields
}

// matchesInclude: the pattern and the key agree on their common prefix.
func (p *keyPath) matchesInclude(first string, key []pathItem) bool {
	if p.first != first {
		return false
	}
	n := min(len(p.rest), len(key))
	for i := 0; i < n; i++ {
		if p.rest[i] != key[i] {
			return false
		}
	}
	return true
}

// matchesExclude: the pattern is a prefix of the key.
func (p *keyPath) matchesExclude(first string, key []pathItem) bool {
	if p.first != first || len(key) < len(p.rest) {
		return false
	}
	for i := range p.rest {
		if p.rest[i] != key[i] {
			return false
		}
	}
	return true
}

// filterPayload is Qdrant's value_filter: it walks objects by key and
// arrays as [] and keeps the nodes keep accepts.
func filterPayload(fields map[string]*qdrant.Value, keep func(first string, key []pathItem) bool) map[string]*qdrant.Value {
	out := make(map[string]*qdrant.Value, len(fields))
	var key []pathItem
	for k, v := range fields {
		if !keep(k, key[:0]) {
			continue
		}
		out[k] = filterValue(k, &key, v, keep)
	}
	return out
}

func filterValue(first string, key *[]pathItem, v *qdrant.Value, keep func(string, []pathItem) bool) *qdrant.Value {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_ListValue:
		*key = append(*key, pathItem{kind: itemAll})
		var vals []*qdrant.Value
		for _, e := range k.ListValue.GetValues() {
			if keep(first, *key) {
				vals = append(vals, filterValue(first, key, e, keep))
			}
		}
		*key = (*key)[:len(*key)-1]
		return qdrant.NewValueFromList(vals...)
	case *qdrant.Value_StructValue:
		fields := make(map[string]*qdrant.Value, len(k.StructValue.GetFields()))
		for name, e := range k.StructValue.GetFields() {
			*key = append(*key, pathItem{kind: itemKey, key: name})
			if keep(first, *key) {
				fields[name] = filterValue(first, key, e, keep)
			}
			*key = (*key)[:len(*key)-1]
		}
		return qdrant.NewValueFromFields(fields)
	default:
		return v
	}
}

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
