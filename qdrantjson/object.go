package qdrantjson

import (
	"math"
	"slices"
	"strconv"
)

// Decoders read a parsed body with these helpers: every refusal is a
// *Error naming the field at fault by its path ("filter.must[0].match"),
// in serde's words, as Qdrant answers it.

// Join is the path of member key under path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Index is the path of element i under path.
func Index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// Object is a JSON object checked against the fields a Qdrant type has.
type Object struct {
	Path string // where the object is in the body
	m    map[string]Value
}

// ReadObject checks that v is an object whose keys are all in known and
// appear once. Qdrant ignores unknown fields in most bodies; memrank refuses
// them (an Unsupported error: the REST front forwards the request raw when
// it can) because an unknown field may be a Qdrant feature that translation
// would silently drop.
func ReadObject(v Value, path string, known ...string) (Object, error) {
	if v.Kind != KindObject {
		return Object{}, TypeError(path, v, "a map")
	}
	o := Object{Path: path, m: make(map[string]Value, len(v.Members))}
	for _, mb := range v.Members {
		if !slices.Contains(known, mb.Key) {
			return Object{}, UnknownFieldError(path, mb.Key, known)
		}
		if _, dup := o.m[mb.Key]; dup {
			return Object{}, FormatError(path, "duplicate field `%s`", mb.Key)
		}
		o.m[mb.Key] = mb.Val
	}
	return o, nil
}

// Member returns a member as it is: null, or the zero Value (null) when
// absent.
func (o Object) Member(key string) Value { return o.m[key] }

// Get returns a member; null counts as absent, as for serde's Option.
func (o Object) Get(key string) (Value, bool) {
	v, ok := o.m[key]
	if !ok || v.Kind == KindNull {
		return Value{}, false
	}
	return v, true
}

// Alias returns the member under either name (serde's alias) and the name
// it was under, refusing both.
func (o Object) Alias(key, alias string) (Value, string, bool, error) {
	v1, ok1 := o.Get(key)
	v2, ok2 := o.Get(alias)
	switch {
	case ok1 && ok2:
		return Value{}, "", false, FormatError(o.Path, "duplicate field `%s`", key)
	case ok1:
		return v1, key, true, nil
	case ok2:
		return v2, alias, true, nil
	}
	return Value{}, "", false, nil
}

// Has says whether a member is present and not null.
func (o Object) Has(key string) bool {
	_, ok := o.Get(key)
	return ok
}

// Sub is the path of a member.
func (o Object) Sub(key string) string { return Join(o.Path, key) }

// Require returns a member that must be present (null included, as serde
// reads a required field).
func (o Object) Require(key string) (Value, error) {
	v, ok := o.m[key]
	if !ok {
		return Value{}, FormatError(o.Path, "missing field `%s`", key)
	}
	return v, nil
}

// U64 reads an optional non-negative integer.
func (o Object) U64(key string) (*uint64, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	n, err := U64(v, o.Sub(key))
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// U32 reads an optional non-negative integer that fits 32 bits.
func (o Object) U32(key string) (*uint32, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	n, err := U64(v, o.Sub(key))
	if err != nil {
		return nil, err
	}
	if n > math.MaxUint32 {
		return nil, FormatError(o.Sub(key), "invalid value: integer `%d`, expected u32", n)
	}
	n32 := uint32(n)
	return &n32, nil
}

// F32 reads an optional number as a float32.
func (o Object) F32(key string) (*float32, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	f, err := F32(v, o.Sub(key))
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// F64 reads an optional number.
func (o Object) F64(key string) (*float64, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	f, err := F64(v, o.Sub(key))
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// Bool reads an optional boolean.
func (o Object) Bool(key string) (*bool, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	if v.Kind != KindBool {
		return nil, TypeError(o.Sub(key), v, "a boolean")
	}
	b := v.Bool
	return &b, nil
}

// Str reads an optional string.
func (o Object) Str(key string) (*string, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	if v.Kind != KindString {
		return nil, TypeError(o.Sub(key), v, "a string")
	}
	s := v.Text
	return &s, nil
}

// RequireString reads a string that must be present.
func (o Object) RequireString(key string) (string, error) {
	s, err := o.Str(key)
	if err != nil {
		return "", err
	}
	if s == nil {
		return "", FormatError(o.Path, "missing field `%s`", key)
	}
	return *s, nil
}

// Strings reads an optional list of strings.
func (o Object) Strings(key string) ([]string, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	return Strings(v, o.Sub(key))
}

// U64 reads a non-negative integer from its literal, so that every digit
// up to 2^64-1 counts.
func U64(v Value, path string) (uint64, error) {
	if v.Kind != KindNumber || !IsIntLiteral(v.Text) {
		return 0, TypeError(path, v, "a non-negative integer")
	}
	n, err := strconv.ParseUint(v.Text, 10, 64)
	if err != nil {
		return 0, FormatError(path, "invalid value: integer `%s`, expected a non-negative integer that fits u64", v.Text)
	}
	return n, nil
}

// I64 reads an integer.
func I64(v Value, path string) (int64, error) {
	if v.Kind != KindNumber || !IsIntLiteral(v.Text) {
		return 0, TypeError(path, v, "an integer")
	}
	n, err := strconv.ParseInt(v.Text, 10, 64)
	if err != nil {
		return 0, FormatError(path, "invalid value: integer `%s`, expected i64", v.Text)
	}
	return n, nil
}

// F64 reads a number.
func F64(v Value, path string) (float64, error) {
	if v.Kind != KindNumber {
		return 0, TypeError(path, v, "a number")
	}
	f, err := strconv.ParseFloat(v.Text, 64)
	if err != nil {
		return 0, FormatError(path, "number out of range")
	}
	return f, nil
}

// F32 reads a number as a float32; one beyond float32's range is refused.
func F32(v Value, path string) (float32, error) {
	if v.Kind != KindNumber {
		return 0, TypeError(path, v, "a number")
	}
	f, err := strconv.ParseFloat(v.Text, 32)
	if err != nil {
		return 0, FormatError(path, "number out of range")
	}
	return float32(f), nil
}

// Strings reads a list of strings.
func Strings(v Value, path string) ([]string, error) {
	if v.Kind != KindArray {
		return nil, TypeError(path, v, "a sequence of strings")
	}
	if v.Nums != nil {
		return nil, TypeError(Index(path, 0), Value{Kind: KindNumber, Text: v.Nums[0]}, "a string")
	}
	out := make([]string, len(v.Elems))
	for i, e := range v.Elems {
		if e.Kind != KindString {
			return nil, TypeError(Index(path, i), e, "a string")
		}
		out[i] = e.Text
	}
	return out, nil
}
