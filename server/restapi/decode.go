package restapi

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
)

// decodeError is a request memrank refuses before any upstream call. status
// is Qdrant's code for it (400 for format errors, 422 for validation);
// untranslated marks a field or form that Qdrant knows (or may know) but this
// front does not translate: such a request is forwarded raw to the upstream
// REST API when one is configured instead of being refused.
type decodeError struct {
	status       int
	msg          string
	untranslated bool
}

func (e *decodeError) Error() string { return e.msg }

// formatErr is Qdrant's answer to a body that does not deserialize.
func formatErr(path, format string, args ...any) *decodeError {
	return &decodeError{status: http.StatusBadRequest, msg: "Format error in JSON body: " + at(path) + fmt.Sprintf(format, args...)}
}

// validationErr is Qdrant's answer to a body that deserializes but fails
// validation: 422 "Validation error in JSON body: [field: message]".
func validationErr(path, format string, args ...any) *decodeError {
	return &decodeError{status: http.StatusUnprocessableEntity, msg: fmt.Sprintf("Validation error in JSON body: [%s: %s]", path, fmt.Sprintf(format, args...))}
}

// untranslatedErr names a field or form this front does not translate.
func untranslatedErr(path, what string) *decodeError {
	return &decodeError{
		status:       http.StatusBadRequest,
		msg:          "Format error in JSON body: " + at(path) + what + " is not supported by memrank's REST front (use the gRPC API, or configure --upstream-rest)",
		untranslated: true,
	}
}

func unknownFieldErr(path, key string, known []string) *decodeError {
	quoted := make([]string, len(known))
	for i, k := range known {
		quoted[i] = "`" + k + "`"
	}
	return &decodeError{
		status:       http.StatusBadRequest,
		msg:          fmt.Sprintf("Format error in JSON body: %sunknown field `%s`, expected one of %s", at(path), key, strings.Join(quoted, ", ")),
		untranslated: true,
	}
}

func at(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

func typeErr(path string, v value, expected string) *decodeError {
	return formatErr(path, "invalid type: %s, expected %s", v.describe(), expected)
}

// object is a JSON object checked against the fields a Qdrant type has.
type object struct {
	path string
	m    map[string]value
}

// readObject checks that v is an object whose keys are all in known and
// appear once. Qdrant ignores unknown fields in most bodies; memrank refuses
// them (or forwards the request raw) because an unknown field may be a Qdrant
// feature that translation would silently drop.
func readObject(v value, path string, known ...string) (object, error) {
	if v.kind != kindObject {
		return object{}, typeErr(path, v, "a map")
	}
	o := object{path: path, m: make(map[string]value, len(v.members))}
	for _, mb := range v.members {
		if !slices.Contains(known, mb.key) {
			return object{}, unknownFieldErr(path, mb.key, known)
		}
		if _, dup := o.m[mb.key]; dup {
			return object{}, formatErr(path, "duplicate field `%s`", mb.key)
		}
		o.m[mb.key] = mb.val
	}
	return o, nil
}

// get returns a member; null counts as absent, as for serde's Option.
func (o object) get(key string) (value, bool) {
	v, ok := o.m[key]
	if !ok || v.kind == kindNull {
		return value{}, false
	}
	return v, true
}

// getAlias returns the member under either name (serde's alias), refusing both.
func (o object) getAlias(key, alias string) (value, string, bool, error) {
	v1, ok1 := o.get(key)
	v2, ok2 := o.get(alias)
	switch {
	case ok1 && ok2:
		return value{}, "", false, formatErr(o.path, "duplicate field `%s`", key)
	case ok1:
		return v1, key, true, nil
	case ok2:
		return v2, alias, true, nil
	}
	return value{}, "", false, nil
}

func (o object) has(key string) bool {
	_, ok := o.get(key)
	return ok
}

func (o object) sub(key string) string { return join(o.path, key) }

// require returns a member that must be present.
func (o object) require(key string) (value, error) {
	v, ok := o.m[key]
	if !ok {
		return value{}, formatErr(o.path, "missing field `%s`", key)
	}
	return v, nil
}

func (o object) u64(key string) (*uint64, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	n, err := toU64(v, o.sub(key))
	if err != nil {
		return nil, err
	}
	return &n, nil
}

func (o object) u32(key string) (*uint32, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	n, err := toU64(v, o.sub(key))
	if err != nil {
		return nil, err
	}
	if n > math.MaxUint32 {
		return nil, formatErr(o.sub(key), "invalid value: integer `%d`, expected u32", n)
	}
	n32 := uint32(n)
	return &n32, nil
}

func (o object) f32(key string) (*float32, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	f, err := toF32(v, o.sub(key))
	if err != nil {
		return nil, err
	}
	return &f, nil
}

func (o object) f64(key string) (*float64, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	f, err := toF64(v, o.sub(key))
	if err != nil {
		return nil, err
	}
	return &f, nil
}

func (o object) boolean(key string) (*bool, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	if v.kind != kindBool {
		return nil, typeErr(o.sub(key), v, "a boolean")
	}
	b := v.b
	return &b, nil
}

func (o object) str(key string) (*string, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	if v.kind != kindString {
		return nil, typeErr(o.sub(key), v, "a string")
	}
	s := v.s
	return &s, nil
}

func (o object) strings(key string) ([]string, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	return toStrings(v, o.sub(key))
}

func isIntLiteral(s string) bool { return !strings.ContainsAny(s, ".eE") }

func toU64(v value, path string) (uint64, error) {
	if v.kind != kindNumber {
		return 0, typeErr(path, v, "a non-negative integer")
	}
	if !isIntLiteral(v.s) {
		return 0, typeErr(path, v, "a non-negative integer")
	}
	n, err := strconv.ParseUint(v.s, 10, 64)
	if err != nil {
		return 0, formatErr(path, "invalid value: integer `%s`, expected a non-negative integer that fits u64", v.s)
	}
	return n, nil
}

func toI64(v value, path string) (int64, error) {
	if v.kind != kindNumber || !isIntLiteral(v.s) {
		return 0, typeErr(path, v, "an integer")
	}
	n, err := strconv.ParseInt(v.s, 10, 64)
	if err != nil {
		return 0, formatErr(path, "invalid value: integer `%s`, expected i64", v.s)
	}
	return n, nil
}

func toF64(v value, path string) (float64, error) {
	if v.kind != kindNumber {
		return 0, typeErr(path, v, "a number")
	}
	f, err := strconv.ParseFloat(v.s, 64)
	if err != nil {
		return 0, formatErr(path, "number out of range")
	}
	return f, nil
}

func toF32(v value, path string) (float32, error) {
	if v.kind != kindNumber {
		return 0, typeErr(path, v, "a number")
	}
	return parseF32(v.s, path)
}

func parseF32(s, path string) (float32, error) {
	f, err := strconv.ParseFloat(s, 32)
	if err != nil {
		return 0, formatErr(path, "number out of range")
	}
	return float32(f), nil
}

func toStrings(v value, path string) ([]string, error) {
	if v.kind != kindArray {
		return nil, typeErr(path, v, "a sequence of strings")
	}
	if v.nums != nil {
		return nil, typeErr(index(path, 0), value{kind: kindNumber, s: v.nums[0]}, "a string")
	}
	out := make([]string, len(v.elems))
	for i, e := range v.elems {
		if e.kind != kindString {
			return nil, typeErr(index(path, i), e, "a string")
		}
		out[i] = e.s
	}
	return out, nil
}

// toPointID reads an ExtendedPointId: an unsigned integer or a UUID string
// (any form the uuid crate parses; sent on in the canonical lower-case
// hyphenated form Qdrant answers with). Integers are parsed from their
// literal, so ids above 2^53 keep every digit.
func toPointID(v value, path string) (*qdrant.PointId, error) {
	switch v.kind {
	case kindNumber:
		if isIntLiteral(v.s) {
			if n, err := strconv.ParseUint(v.s, 10, 64); err == nil {
				return qdrant.NewIDNum(n), nil
			}
		}
	case kindString:
		if u, err := uuid.Parse(v.s); err == nil {
			return qdrant.NewIDUUID(u.String()), nil
		}
	}
	return nil, formatErr(path, "value %s is not a valid point ID, valid values are either an unsigned integer or a UUID", v.describe())
}

func toPointIDs(v value, path string) ([]*qdrant.PointId, error) {
	if v.kind != kindArray {
		return nil, typeErr(path, v, "a sequence of point ids")
	}
	items := v.items()
	ids := make([]*qdrant.PointId, len(items))
	for i, e := range items {
		if e.kind == kindNumber {
			if n, err := strconv.ParseUint(e.s, 10, 64); err == nil {
				ids[i] = qdrant.NewIDNum(n)
				continue
			}
		}
		id, err := toPointID(e, index(path, i))
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}

// parsePointID reads a point id from a URL path segment.
func parsePointID(s string) (*qdrant.PointId, bool) {
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return qdrant.NewIDNum(n), true
	}
	if u, err := uuid.Parse(s); err == nil {
		return qdrant.NewIDUUID(u.String()), true
	}
	return nil, false
}

// maxValueDepth bounds payload nesting (the parser already bounds it; this
// keeps the conversion safe when called on values built elsewhere).
const maxValueDepth = maxDepth

// toValue converts a JSON value to a payload value. Integer literals that
// fit i64 stay integers; every other number is a double, as in Qdrant's
// JSON-to-gRPC conversion.
func toValue(v value, path string, depth int) (*qdrant.Value, error) {
	if depth > maxValueDepth {
		return nil, formatErr(path, "recursion limit exceeded")
	}
	switch v.kind {
	case kindNull:
		return qdrant.NewValueNull(), nil
	case kindBool:
		return qdrant.NewValueBool(v.b), nil
	case kindString:
		return qdrant.NewValueString(v.s), nil
	case kindNumber:
		return numberValue(v.s, path)
	case kindArray:
		items := make([]*qdrant.Value, v.length())
		if v.nums != nil {
			for i, n := range v.nums {
				val, err := numberValue(n, "")
				if err != nil {
					return nil, formatErr(index(path, i), "number out of range")
				}
				items[i] = val
			}
		} else {
			for i, e := range v.elems {
				val, err := toValue(e, index(path, i), depth+1)
				if err != nil {
					return nil, err
				}
				items[i] = val
			}
		}
		return qdrant.NewValueFromList(items...), nil
	case kindObject:
		fields, err := toFields(v, path, depth+1)
		if err != nil {
			return nil, err
		}
		return qdrant.NewValueFromFields(fields), nil
	}
	return nil, formatErr(path, "unsupported value")
}

func numberValue(s, path string) (*qdrant.Value, error) {
	if isIntLiteral(s) {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return qdrant.NewValueInt(n), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, formatErr(path, "number out of range")
	}
	return qdrant.NewValueDouble(f), nil
}

// toFields converts a JSON object to payload fields; a repeated key keeps
// its last value, like serde_json's map.
func toFields(v value, path string, depth int) (map[string]*qdrant.Value, error) {
	if v.kind != kindObject {
		return nil, typeErr(path, v, "a map")
	}
	out := make(map[string]*qdrant.Value, len(v.members))
	for _, mb := range v.members {
		val, err := toValue(mb.val, join(path, mb.key), depth)
		if err != nil {
			return nil, err
		}
		out[mb.key] = val
	}
	return out, nil
}

// toPayload reads a payload object.
func toPayload(v value, path string) (map[string]*qdrant.Value, error) {
	return toFields(v, path, 1)
}
