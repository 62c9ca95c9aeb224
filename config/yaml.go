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
)

// masked is what a set secret prints as.
const masked = "***"

// YAML renders c as a YAML file that Load reads back to c. The output is
// deterministic: sections and keys in the order of the schema (the order of
// the Config struct), map entries sorted by name. With maskSecrets, every
// API key that is set prints as "***" (an empty one as ""), and each key of
// tenancy.api_keys is replaced by a numbered placeholder, "***1", "***2", ...
// in order of tenant, so the output shows how many keys each tenant has
// without showing any.
func (c Config) YAML(maskSecrets bool) ([]byte, error) { return YAML(c, maskSecrets) }

// YAML renders v, a struct whose fields carry koanf tags, as a YAML file that
// Load reads back to v; see Config.YAML.
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
			for _, e := range maskedAPIKeys(v.Interface().(map[string]string)) {
				n.Content = append(n.Content, str(e.placeholder), str(e.tenant))
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
			e := encode(v.Index(i), field{}, mask)
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
			return str(masked)
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

// maskedAPIKey is one entry of tenancy.api_keys with the name it is shown
// under when secrets are masked.
type maskedAPIKey struct {
	placeholder, key, tenant string
}

// maskedAPIKeys orders the API keys by tenant, then key, and numbers them.
// The same numbering names them in YAML(true) and in Validate's errors.
func maskedAPIKeys(m map[string]string) []maskedAPIKey {
	out := make([]maskedAPIKey, 0, len(m))
	for k, t := range m {
		out = append(out, maskedAPIKey{key: k, tenant: t})
	}
	slices.SortFunc(out, func(a, b maskedAPIKey) int {
		return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.key, b.key))
	})
	for i := range out {
		out[i].placeholder = masked + strconv.Itoa(i+1)
	}
	return out
}

// namedValue is one field of PayloadKeys: its key and its value.
type namedValue struct{ name, value string }

// fields lists the payload keys in schema order.
func (p PayloadKeys) fields() []namedValue {
	v := reflect.ValueOf(p)
	out := make([]namedValue, v.NumField())
	for i := range out {
		out[i] = namedValue{v.Type().Field(i).Tag.Get("koanf"), v.Field(i).String()}
	}
	return out
}

// recordField returns the record field stored under payload key name.
func (p PayloadKeys) recordField(name string) (string, bool) {
	for _, f := range p.fields() {
		if f.value == name {
			return f.name, true
		}
	}
	return "", false
}
