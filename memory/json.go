package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/qdrant/go-client/qdrant"
)

// ErrNotObject is returned by DecodeJSON when the input is not one JSON object.
var ErrNotObject = errors.New("not a JSON object")

// maxJSONDepth bounds the nesting kept from JSON input; deeper values become
// null so hostile input cannot exhaust the stack.
const maxJSONDepth = 64

// DecodeJSON reads a memory from a JSON object with the configured keys. The
// error is only for input that is not a JSON object; field-level trouble goes
// to m.Problems like every decode. Integers and floats stay distinct.
func (c *Codec) DecodeJSON(data []byte, m *Memory) error {
	payload, err := PayloadFromJSON(data)
	if err != nil {
		*m = Memory{}
		return err
	}
	c.Decode(payload, m)
	return nil
}

// PayloadFromJSON parses a JSON object into a Qdrant payload, keeping
// integers (json numbers without a fraction or exponent that fit int64) apart
// from floats, as Qdrant does.
func PayloadFromJSON(data []byte) (map[string]*qdrant.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("memory: %w: %v", ErrNotObject, jsonErrorText(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("memory: %w: trailing data after the object", ErrNotObject)
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("memory: %w: got %s", ErrNotObject, jsonKind(raw))
	}
	out := make(map[string]*qdrant.Value, len(obj))
	for k, v := range obj {
		val, err := valueFromJSON(v, 1)
		if err != nil {
			return nil, fmt.Errorf("memory: key %q: %w", truncate(k), err)
		}
		out[k] = val
	}
	return out, nil
}

func jsonErrorText(err error) string {
	if err == io.EOF {
		return "empty input"
	}
	return err.Error()
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a bool"
	case json.Number:
		return "a number"
	}
	return "a value"
}

func valueFromJSON(v any, depth int) (*qdrant.Value, error) {
	if depth > maxJSONDepth {
		// Memory fields are shallow; a pathologically deep value elsewhere in
		// the payload must not cost the record, so it is cut off.
		return qdrant.NewValueNull(), nil
	}
	switch x := v.(type) {
	case nil:
		return qdrant.NewValueNull(), nil
	case bool:
		return qdrant.NewValueBool(x), nil
	case string:
		if !utf8.ValidString(x) {
			x = strings.ToValidUTF8(x, "\uFFFD")
		}
		return qdrant.NewValueString(x), nil
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return qdrant.NewValueInt(n), nil
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("bad number %q", truncate(s))
		}
		return qdrant.NewValueDouble(f), nil
	case []any:
		vals := make([]*qdrant.Value, len(x))
		for i, e := range x {
			val, err := valueFromJSON(e, depth+1)
			if err != nil {
				return nil, err
			}
			vals[i] = val
		}
		return qdrant.NewValueFromList(vals...), nil
	case map[string]any:
		fields := make(map[string]*qdrant.Value, len(x))
		for k, e := range x {
			val, err := valueFromJSON(e, depth+1)
			if err != nil {
				return nil, err
			}
			fields[k] = val
		}
		return qdrant.NewValueFromFields(fields), nil
	}
	return nil, fmt.Errorf("unsupported JSON value %T", v)
}

// EncodeJSON writes the record as a JSON object with the configured keys.
func (c *Codec) EncodeJSON(m *Memory) ([]byte, error) {
	return PayloadToJSON(c.Encode(m))
}

// PayloadToJSON writes a Qdrant payload as JSON, keys sorted. Floats with an
// integral value are written with a ".0" so that they read back as floats.
func PayloadToJSON(p map[string]*qdrant.Value) ([]byte, error) {
	obj := make(map[string]json.RawMessage, len(p))
	for k, v := range p {
		b, err := valueToJSON(v)
		if err != nil {
			return nil, fmt.Errorf("memory: key %q: %w", truncate(k), err)
		}
		obj[k] = b
	}
	return json.Marshal(obj)
}

func valueToJSON(v *qdrant.Value) (json.RawMessage, error) {
	switch k := v.GetKind().(type) {
	case nil, *qdrant.Value_NullValue:
		return json.RawMessage("null"), nil
	case *qdrant.Value_BoolValue:
		return json.Marshal(k.BoolValue)
	case *qdrant.Value_IntegerValue:
		return strconv.AppendInt(nil, k.IntegerValue, 10), nil
	case *qdrant.Value_DoubleValue:
		f := k.DoubleValue
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%v cannot be written as JSON", f)
		}
		b := strconv.AppendFloat(nil, f, 'g', -1, 64)
		if !bytes.ContainsAny(b, ".eE") {
			b = append(b, ".0"...)
		}
		return b, nil
	case *qdrant.Value_StringValue:
		return json.Marshal(k.StringValue)
	case *qdrant.Value_ListValue:
		vals := k.ListValue.GetValues()
		parts := make([]json.RawMessage, len(vals))
		for i, e := range vals {
			b, err := valueToJSON(e)
			if err != nil {
				return nil, err
			}
			parts[i] = b
		}
		return json.Marshal(parts)
	case *qdrant.Value_StructValue:
		return PayloadToJSON(k.StructValue.GetFields())
	}
	return nil, fmt.Errorf("unsupported value %T", v.GetKind())
}
