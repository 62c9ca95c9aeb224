package config

import (
	"bytes"
	"cmp"
	"encoding"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/memrank/memrank/config/check"
)

// YAML renders v, a struct whose fields carry koanf tags, as a YAML file that
// Load reads back to v. The output is deterministic: sections and keys in
// the order of the struct's fields (those without a koanf tag, the wiring
// of a component, are left out), map entries sorted by name. With
// maskSecrets, every string tagged secret that is set prints as "***" (an
// empty one as ""), and each key of a table tagged secret:"keys"
// (tenancy.api_keys) is replaced by a numbered placeholder, "***1", "***2",
// ... in order of value (check.MaskKeys), so the output shows how many keys
// each value has without showing any.
func YAML(v any, maskSecrets bool) ([]byte, error) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{encode(rv, field{}, maskSecrets)}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("config: rendering YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("config: rendering YAML: %w", err)
	}
	return buf.Bytes(), nil
}

func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

func str(s string) *yaml.Node {
	n := scalar("!!str", s)
	if s == "<<" {
		// The encoder writes it plain, and a plain << key is YAML's merge key.
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// encode builds the YAML node of one value of the Config.
func encode(v reflect.Value, f field, mask bool) *yaml.Node {
	if v.Type() == durationType {
		return str(fmtDuration(time.Duration(v.Int())))
	}
	if m, ok := v.Interface().(encoding.TextMarshaler); ok && v.Kind() != reflect.Struct {
		if b, err := m.MarshalText(); err == nil {
			return str(string(b))
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return scalar("!!null", "null")
		}
		return encode(v.Elem(), f, mask)
	case reflect.Struct:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if name := sf.Tag.Get("koanf"); name == "" || name == "-" || !sf.IsExported() {
				continue // not configuration: how a component is wired
			}
			if fv := v.Field(i); fv.Kind() == reflect.Pointer && fv.IsNil() {
				continue // an optional value not given: absent reads back as not given
			}
			n.Content = append(n.Content, str(sf.Tag.Get("koanf")), encode(v.Field(i), fieldOf(sf, ""), mask))
		}
		if len(n.Content) == 0 {
			n.Style = yaml.FlowStyle
		}
		return n
	case reflect.Map:
		n := &yaml.Node{Kind: yaml.MappingNode}
		if f.secretKeys && mask {
			for _, e := range check.MaskKeys(v.Interface().(map[string]string)) {
				n.Content = append(n.Content, str(e.Placeholder), str(e.Value))
			}
		} else {
			keys := v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.String(), b.String()) })
			for _, k := range keys {
				n.Content = append(n.Content, str(k.String()), encode(v.MapIndex(k), field{}, mask))
			}
		}
		if len(n.Content) == 0 {
			n.Style = yaml.FlowStyle
		}
		return n
	case reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for i := range v.Len() {
			e := encode(v.Index(i), field{secret: f.secret}, mask)
			if e.Kind == yaml.MappingNode {
				e.Style = yaml.FlowStyle // one table row per line
			}
			n.Content = append(n.Content, e)
		}
		if len(n.Content) == 0 {
			n.Style = yaml.FlowStyle
		}
		return n
	case reflect.String:
		if f.secret && mask && v.String() != "" {
			return str(check.Masked)
		}
		return str(v.String())
	case reflect.Bool:
		return scalar("!!bool", strconv.FormatBool(v.Bool()))
	case reflect.Int:
		return scalar("!!int", strconv.FormatInt(v.Int(), 10))
	case reflect.Float64:
		return floatNode(v.Float())
	}
	return str(fmt.Sprint(v.Interface()))
}

// floatNode writes a float as the user would (90, 0.45), which YAML reads as
// an int or a float; both decode into a float field.
func floatNode(x float64) *yaml.Node {
	switch {
	case math.IsNaN(x):
		return scalar("!!float", ".nan")
	case math.IsInf(x, 1):
		return scalar("!!float", ".inf")
	case math.IsInf(x, -1):
		return scalar("!!float", "-.inf")
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Value: fmtFloat(x)}
}
