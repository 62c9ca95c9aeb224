package config

import (
	"encoding"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

var durationType = reflect.TypeFor[time.Duration]()

// decoder merges the raw values of one source (a parsed file, one variable,
// one flag) into a Config, collecting an *Error for every value it refuses.
// The Config's own types drive it: a struct takes a mapping whose keys are
// its koanf tags (any other key is unknown), a map merges entries into the
// existing ones, a list replaces the existing list, a scalar must be of its
// type.
type decoder struct {
	source string // names the source in errors
	// text is set for the environment and for flags: their scalars arrive as
	// strings and are parsed to the field's type. A file is typed by YAML,
	// so there a string where a number is expected is an error.
	text bool
	errs []error
}

// field is what the decoder knows about the value it is filling.
type field struct {
	key        string // full dotted key
	secret     bool   // the value must not be echoed
	secretKeys bool   // the map's keys must not be echoed
}

func (d *decoder) fail(key, format string, args ...any) {
	d.errs = append(d.errs, &Error{Source: d.source, Key: key, Problem: fmt.Sprintf(format, args...)})
}

func (d *decoder) unknown(key string) {
	d.errs = append(d.errs, &Error{Source: d.source, Key: key, Problem: ErrUnknownKey.Error(), err: ErrUnknownKey})
}

func joinKey(parent, name string) string {
	switch {
	case parent == "":
		return name
	case name == "":
		return parent
	}
	return parent + "." + name
}

// fieldIndex returns the index of the struct field whose key is name, or -1.
func fieldIndex(t reflect.Type, name string) int {
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("koanf") == name {
			return i
		}
	}
	return -1
}

func fieldOf(sf reflect.StructField, key string) field {
	s := sf.Tag.Get("secret")
	return field{key: key, secret: s == "true", secretKeys: s == "keys"}
}

// decode merges raw into v.
func (d *decoder) decode(f field, raw any, v reflect.Value) {
	if s, ok := raw.(string); ok && d.text {
		switch v.Kind() {
		case reflect.Struct, reflect.Map, reflect.Slice:
			d.decodeText(f, s, v)
			return
		}
	}
	if v.Type() == durationType {
		d.decodeDuration(f, raw, v)
		return
	}
	if u, ok := textUnmarshaler(v); ok {
		// A named type that reads itself from text (a mode, a level).
		s, isString := raw.(string)
		if !isString {
			d.fail(f.key, "want a string, got %s", describe(raw, f.secret))
			return
		}
		if !utf8.ValidString(s) {
			d.fail(f.key, "want UTF-8 text, got %s", describe(raw, f.secret))
			return
		}
		if err := u.UnmarshalText([]byte(s)); err != nil {
			d.fail(f.key, "%s", err.Error())
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		// An optional value (a guard patch's keys): nil until given.
		elem := reflect.New(v.Type().Elem())
		if !v.IsNil() {
			elem.Elem().Set(v.Elem())
		}
		n := len(d.errs)
		d.decode(f, raw, elem.Elem())
		if len(d.errs) == n {
			v.Set(elem)
		}
	case reflect.Struct:
		d.decodeStruct(f, raw, v)
	case reflect.Map:
		d.decodeMap(f, raw, v)
	case reflect.Slice:
		d.decodeSlice(f, raw, v)
	case reflect.String:
		s, ok := raw.(string)
		if !ok {
			d.fail(f.key, "want a string, got %s", describe(raw, f.secret))
			return
		}
		if !utf8.ValidString(s) {
			// YAML files are UTF-8 by construction; the environment and
			// flags are bytes, and a name that is not text cannot be a
			// payload key or a collection.
			d.fail(f.key, "want UTF-8 text, got %s", describe(raw, f.secret))
			return
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := raw.(bool)
		if s, isString := raw.(string); isString && d.text {
			var err error
			b, err = strconv.ParseBool(strings.TrimSpace(s))
			ok = err == nil
		}
		if !ok {
			d.fail(f.key, "want true or false, got %s", describe(raw, f.secret))
			return
		}
		v.SetBool(b)
	case reflect.Float64:
		x, ok := toFloat(raw, d.text)
		if !ok {
			d.fail(f.key, "want a number, got %s", describe(raw, f.secret))
			return
		}
		v.SetFloat(x)
	case reflect.Int:
		x, ok := toInt(raw, d.text)
		if !ok {
			d.fail(f.key, "want an integer, got %s", describe(raw, f.secret))
			return
		}
		v.SetInt(x)
	default:
		// Config has no field of another kind; this guards a future one.
		d.fail(f.key, "cannot be set: unsupported type %s", v.Type())
	}
}

// textUnmarshaler is v's encoding.TextUnmarshaler, if its pointer has one.
func textUnmarshaler(v reflect.Value) (encoding.TextUnmarshaler, bool) {
	if v.Kind() == reflect.Struct || !v.CanAddr() {
		return nil, false
	}
	u, ok := v.Addr().Interface().(encoding.TextUnmarshaler)
	return u, ok
}

// decodeStruct merges a mapping into a struct and returns the keys it set.
// A key with a null value is not set: an empty section in a file, with all
// its keys commented out, leaves the defaults alone.
func (d *decoder) decodeStruct(f field, raw any, v reflect.Value) map[string]bool {
	m, ok := asMap(raw)
	if !ok {
		d.fail(f.key, "want a mapping, got %s", describe(raw, false))
		return nil
	}
	seen := make(map[string]bool, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key := joinKey(f.key, k)
		i := fieldIndex(v.Type(), k)
		if i < 0 {
			d.unknown(key)
			continue
		}
		if m[k] == nil {
			continue
		}
		seen[k] = true
		d.decode(fieldOf(v.Type().Field(i), key), m[k], v.Field(i))
	}
	return seen
}

// decodeMap merges entries into a map: user-extendable tables such as
// half-lives keep the defaults they do not name.
func (d *decoder) decodeMap(f field, raw any, v reflect.Value) {
	m, ok := asMap(raw)
	if !ok {
		d.fail(f.key, "want a mapping, got %s", describe(raw, f.secretKeys))
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		ef := field{key: joinKey(f.key, k)}
		if f.secretKeys {
			ef.key = f.key + ".***"
		}
		if !utf8.ValidString(k) {
			d.fail(f.key, "has an entry whose name is not UTF-8 text: %s", describe(k, f.secretKeys))
			continue
		}
		elem := reflect.New(v.Type().Elem()).Elem()
		if old := v.MapIndex(reflect.ValueOf(k)); old.IsValid() && elem.Kind() == reflect.Struct {
			// An entry that is a section merges into the one it replaces:
			// {floor: 0.2} for an embedder keeps the default's band.
			elem.Set(old)
		}
		n := len(d.errs)
		d.decode(ef, m[k], elem)
		if len(d.errs) == n {
			v.SetMapIndex(reflect.ValueOf(k), elem)
		}
	}
}

// decodeSlice replaces a list. Elements of struct lists must give every
// field tagged required: a model row without a quality is a mistake, not a
// quality of 0.
func (d *decoder) decodeSlice(f field, raw any, v reflect.Value) {
	rv := reflect.ValueOf(raw)
	if k := rv.Kind(); k != reflect.Slice && k != reflect.Array {
		d.fail(f.key, "want a list, got %s", describe(raw, f.secret))
		return
	}
	out := reflect.MakeSlice(v.Type(), rv.Len(), rv.Len())
	n := len(d.errs)
	for i := range rv.Len() {
		ef := field{key: fmt.Sprintf("%s[%d]", f.key, i), secret: f.secret}
		elem := out.Index(i)
		if elem.Kind() != reflect.Struct {
			d.decode(ef, rv.Index(i).Interface(), elem)
			continue
		}
		seen := d.decodeStruct(ef, rv.Index(i).Interface(), elem)
		if seen == nil {
			continue
		}
		for j := range elem.NumField() {
			sf := elem.Type().Field(j)
			if name := sf.Tag.Get("koanf"); sf.Tag.Get("required") == "true" && !seen[name] {
				d.fail(ef.key, "missing %q", name)
			}
		}
	}
	if len(d.errs) == n {
		v.Set(out)
	}
}

// decodeText fills a mapping or a list from one environment variable or
// string flag. A value starting with { or [ is read as YAML flow syntax
// ({legal: 45}, [{pattern: x, quality: 0.9}]); otherwise a list is
// comma-separated (a, b) and a map is comma-separated key=value pairs.
func (d *decoder) decodeText(f field, s string, v reflect.Value) {
	secret := f.secret || f.secretKeys
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		parsed, err := unmarshalFlow(t)
		if err != nil {
			d.fail(f.key, "cannot read %s as YAML: %s", describe(s, secret), strings.TrimPrefix(err.Error(), "yaml: "))
			return
		}
		d.text = false
		d.decode(f, parsed, v)
		d.text = true
		return
	}
	switch {
	case v.Kind() == reflect.Map:
		m := make(map[string]any)
		for item := range strings.SplitSeq(t, ",") {
			if strings.TrimSpace(item) == "" {
				continue
			}
			k, val, ok := strings.Cut(item, "=")
			if !ok {
				d.fail(f.key, "want key=value pairs separated by commas, got %s", describe(s, secret))
				return
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(val)
		}
		d.decodeMap(f, m, v)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.Struct:
		list := []any{}
		for item := range strings.SplitSeq(t, ",") {
			if item = strings.TrimSpace(item); item != "" {
				list = append(list, item)
			}
		}
		d.decodeSlice(f, list, v)
	case v.Kind() == reflect.Slice:
		d.fail(f.key, "want a YAML flow sequence like [{...}, {...}], got %s", describe(s, secret))
	default:
		d.fail(f.key, "want a YAML flow mapping like {key: value}, got %s", describe(s, secret))
	}
}

// unmarshalFlow parses YAML from a variable or flag. Like parseYAML, it turns
// a panic in the parser into an error: no environment value may crash memrank.
func unmarshalFlow(s string) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("the YAML parser failed: %v", r)
		}
	}()
	err = yaml.Unmarshal([]byte(s), &v)
	return v, err
}

// decodeDuration accepts Go duration strings ("5s", "1h30m") and typed
// durations from flags. A bare number is refused: "5" could mean seconds or
// nanoseconds.
func (d *decoder) decodeDuration(f field, raw any, v reflect.Value) {
	var (
		x  time.Duration
		ok bool
	)
	switch r := raw.(type) {
	case time.Duration:
		x, ok = r, true
	case string:
		var err error
		x, err = time.ParseDuration(strings.TrimSpace(r))
		ok = err == nil
	}
	if !ok {
		d.fail(f.key, `want a duration like "5s", got %s`, describe(raw, f.secret))
		return
	}
	v.SetInt(int64(x))
}

// target is what a dotted key names inside a Config.
type target struct {
	v     reflect.Value // the value named, or the map holding the entry named
	f     field         // v's key and secrecy
	entry string        // the map entry the last element names; "" when the key names v
}

// resolve finds what path names below root. When no such key exists, ok is
// false and t is as far as the path went.
func resolve(root reflect.Value, path []string) (t target, ok bool) {
	t.v = root
	for i, seg := range path {
		switch {
		case t.v.Kind() == reflect.Struct:
			j := fieldIndex(t.v.Type(), seg)
			if j < 0 {
				return t, false
			}
			t.f = fieldOf(t.v.Type().Field(j), joinKey(t.f.key, seg))
			t.v = t.v.Field(j)
		case t.v.Kind() == reflect.Map && i == len(path)-1 && seg != "":
			t.entry = seg
			return t, true
		default:
			return t, false
		}
	}
	return t, len(path) > 0
}

// set decodes raw into what the dotted path names, as one environment
// variable or one flag does. The last element of a path may name an entry
// of a map (scoring.decay.half_lives.legal).
func (d *decoder) set(root reflect.Value, path []string, raw any) {
	t, ok := resolve(root, path)
	switch {
	case t.f.secretKeys && (!ok || t.entry != ""):
		// Variable names are upper-cased and read lower-cased, so the
		// name would lose the case of an API key.
		d.fail(t.f.key, "an API key cannot be part of a variable or flag name (its case is lost); set the whole table as key=tenant pairs")
	case !ok:
		d.unknown(strings.Join(path, "."))
	case t.entry != "":
		d.decodeMap(t.f, map[string]any{t.entry: raw}, t.v)
	default:
		d.decode(t.f, raw, t.v)
	}
}

// asMap returns a raw mapping with string keys. YAML gives map[string]any or,
// for non-string keys, map[any]any; flags give map[string]string and the like.
func asMap(raw any) (map[string]any, bool) {
	if m, ok := raw.(map[string]any); ok {
		return m, true
	}
	rv := reflect.ValueOf(raw)
	if rv.Kind() != reflect.Map {
		return nil, false
	}
	m := make(map[string]any, rv.Len())
	it := rv.MapRange()
	for it.Next() {
		m[fmt.Sprint(it.Key().Interface())] = it.Value().Interface()
	}
	return m, true
}

func toFloat(raw any, text bool) (float64, bool) {
	switch r := raw.(type) {
	case time.Duration:
		return 0, false
	case float64:
		return r, true
	case float32:
		return float64(r), true
	case string:
		if !text {
			return 0, false
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
		return x, err == nil
	}
	rv := reflect.ValueOf(raw)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	}
	return 0, false
}

func toInt(raw any, text bool) (int64, bool) {
	switch r := raw.(type) {
	case time.Duration:
		return 0, false
	case float64:
		// YAML reads 4.0 as a float; an integral value is still an integer.
		if r != math.Trunc(r) || r < math.MinInt64 || r >= math.MaxInt64 {
			return 0, false
		}
		return int64(r), true
	case string:
		if !text {
			return 0, false
		}
		x, err := strconv.ParseInt(strings.TrimSpace(r), 10, 64)
		return x, err == nil
	}
	rv := reflect.ValueOf(raw)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u := rv.Uint()
		return int64(u), u <= math.MaxInt64
	}
	return 0, false
}
