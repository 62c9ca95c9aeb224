package qdrantjson

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/qdrant/go-client/qdrant"
)

// The payload codec: JSON <-> map[string]*qdrant.Value. An integer literal
// that fits i64 is an integer and every other number a double, as in
// Qdrant's JSON-to-gRPC conversion; a double is written back with a
// fraction or exponent, so 3.0 stays a float through a round trip.

// ErrNotObject is returned by DecodePayload for input that is not one JSON
// object.
var ErrNotObject = errors.New("not a JSON object")

// Depths of a payload, counted from 1 at its members.
const (
	// maxKeptDepth is how deep DecodePayload keeps values: deeper ones
	// become null, so that a pathological value in a file costs that value,
	// not the record.
	maxKeptDepth = 64
	// maxFileDepth bounds the nesting DecodePayload parses at all (a
	// recursion bound; encoding/json's limit).
	maxFileDepth = 10000
)

// converter turns parsed JSON into payload values. cut > 0 replaces values
// nested deeper than cut with null; without it nesting beyond maxDepth is
// refused (the parser already bounds a request body there).
type converter struct{ cut int }

// Payload reads a payload object (a request's "payload", "defaults",
// "options", "metadata"). A repeated key keeps its last value, like
// serde_json's map.
func Payload(v Value, path string) (map[string]*qdrant.Value, error) {
	return converter{}.fields(v, path, 1)
}

// PayloadValue reads any JSON value as a payload value.
func PayloadValue(v Value, path string) (*qdrant.Value, error) {
	return converter{}.value(v, path, 1)
}

// DecodePayload reads a payload from a JSON document that must be one
// object (a file's, a CLI argument's). Input that is not is refused with
// ErrNotObject; values nested deeper than 64 levels become null.
func DecodePayload(data []byte) (map[string]*qdrant.Value, error) {
	v, err := parse(string(data), maxFileDepth)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotObject, err)
	}
	if v.Kind != KindObject {
		return nil, fmt.Errorf("%w: got %s", ErrNotObject, kindWithArticle(v.Kind))
	}
	fields, err := converter{cut: maxKeptDepth}.fields(v, "", 1)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			// Not a request: the body's words would mislead.
			return nil, fmt.Errorf("%s: %s", e.Path, e.Detail)
		}
		return nil, err
	}
	return fields, nil
}

func kindWithArticle(k Kind) string {
	switch k {
	case KindArray:
		return "an array"
	case KindNull:
		return "null"
	}
	return "a " + k.String()
}

func (c converter) fields(v Value, path string, depth int) (map[string]*qdrant.Value, error) {
	if v.Kind != KindObject {
		return nil, TypeError(path, v, "a map")
	}
	out := make(map[string]*qdrant.Value, len(v.Members))
	for _, mb := range v.Members {
		val, err := c.value(mb.Val, Join(path, mb.Key), depth)
		if err != nil {
			return nil, err
		}
		out[mb.Key] = val
	}
	return out, nil
}

func (c converter) value(v Value, path string, depth int) (*qdrant.Value, error) {
	switch {
	case c.cut > 0 && depth > c.cut:
		return qdrant.NewValueNull(), nil
	case depth > maxDepth:
		return nil, FormatError(path, "recursion limit exceeded")
	}
	switch v.Kind {
	case KindNull:
		return qdrant.NewValueNull(), nil
	case KindBool:
		return qdrant.NewValueBool(v.Bool), nil
	case KindString:
		return qdrant.NewValueString(v.Text), nil
	case KindNumber:
		return numberValue(v.Text, path)
	case KindArray:
		return c.list(v, path, depth)
	case KindObject:
		fields, err := c.fields(v, path, depth+1)
		if err != nil {
			return nil, err
		}
		return qdrant.NewValueFromFields(fields), nil
	}
	return nil, FormatError(path, "unsupported value")
}

func (c converter) list(v Value, path string, depth int) (*qdrant.Value, error) {
	items := make([]*qdrant.Value, v.Len())
	if v.Nums != nil {
		if c.cut > 0 && depth+1 > c.cut {
			for i := range items {
				items[i] = qdrant.NewValueNull()
			}
			return qdrant.NewValueFromList(items...), nil
		}
		for i, n := range v.Nums {
			// The element's path is built only for an error.
			val, err := numberValue(n, "")
			if err != nil {
				return nil, FormatError(Index(path, i), "number out of range")
			}
			items[i] = val
		}
		return qdrant.NewValueFromList(items...), nil
	}
	for i, e := range v.Elems {
		val, err := c.value(e, Index(path, i), depth+1)
		if err != nil {
			return nil, err
		}
		items[i] = val
	}
	return qdrant.NewValueFromList(items...), nil
}

func numberValue(s, path string) (*qdrant.Value, error) {
	if IsIntLiteral(s) {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return qdrant.NewValueInt(n), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, FormatError(path, "number out of range")
	}
	return qdrant.NewValueDouble(f), nil
}

// appendValue appends a payload value. Doubles always carry a fraction or
// an exponent; NaN and infinities, which JSON cannot hold, are null, as
// serde_json writes them.
func appendValue(b []byte, v *qdrant.Value) []byte {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_BoolValue:
		return strconv.AppendBool(b, k.BoolValue)
	case *qdrant.Value_IntegerValue:
		return strconv.AppendInt(b, k.IntegerValue, 10)
	case *qdrant.Value_DoubleValue:
		return AppendFloat64(b, k.DoubleValue)
	case *qdrant.Value_StringValue:
		return AppendString(b, k.StringValue)
	case *qdrant.Value_ListValue:
		b = append(b, '[')
		for i, e := range k.ListValue.GetValues() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	case *qdrant.Value_StructValue:
		return AppendPayload(b, k.StructValue.GetFields())
	}
	return append(b, "null"...)
}

// AppendPayload appends a payload object with its keys sorted, so that
// answers are deterministic.
func AppendPayload(b []byte, fields map[string]*qdrant.Value) []byte {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		b = appendValue(b, fields[k])
	}
	return append(b, '}')
}
