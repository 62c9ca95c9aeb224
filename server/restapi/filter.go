package restapi

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// FilterError is returned by DecodeFilter for a filter that is not valid
// Qdrant REST filter JSON. Its text names the offending field, in Qdrant's
// words where Qdrant has them; callers answer it with HTTP 400 (422 when
// Status says so).
type FilterError struct {
	Status int // HTTP status Qdrant uses for it: 400 or 422
	Msg    string
}

func (e *FilterError) Error() string { return e.Msg }

// DecodeFilter converts a Qdrant REST filter (the JSON of "filter" in a
// search, query, scroll or count body) to the gRPC Filter. The whole REST
// grammar is accepted: must / should / must_not as one condition or an
// array, min_should, field conditions (match value / any / except / text /
// text_any / phrase / prefix, range over numbers or RFC 3339 datetimes,
// geo_bounding_box / geo_radius / geo_polygon, values_count, is_empty,
// is_null), is_empty / is_null conditions, has_id (u64 ids keep every
// digit), has_vector, slice, nested, and nested filters. An empty or null
// input means no filter (nil, nil).
func DecodeFilter(raw json.RawMessage) (*qdrant.Filter, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	v, err := parseJSON(string(raw))
	if err != nil {
		return nil, &FilterError{Status: 400, Msg: "Format error in JSON body: filter: " + err.Error()}
	}
	if v.kind == kindNull {
		return nil, nil
	}
	f, err := decodeFilter(v, "filter")
	if err != nil {
		var de *decodeError
		if errors.As(err, &de) {
			return nil, &FilterError{Status: de.status, Msg: de.msg}
		}
		return nil, &FilterError{Status: 400, Msg: err.Error()}
	}
	return f, nil
}

var filterFields = []string{"should", "min_should", "must", "must_not"}

// optFilter reads an optional filter member.
func optFilter(o object, key string) (*qdrant.Filter, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	return decodeFilter(v, o.sub(key))
}

func decodeFilter(v value, path string) (*qdrant.Filter, error) {
	o, err := readObject(v, path, filterFields...)
	if err != nil {
		return nil, err
	}
	f := &qdrant.Filter{}
	if f.Should, err = conditionList(o, "should"); err != nil {
		return nil, err
	}
	if f.Must, err = conditionList(o, "must"); err != nil {
		return nil, err
	}
	if f.MustNot, err = conditionList(o, "must_not"); err != nil {
		return nil, err
	}
	if ms, ok := o.get("min_should"); ok {
		mo, err := readObject(ms, o.sub("min_should"), "conditions", "min_count")
		if err != nil {
			return nil, err
		}
		cv, err := mo.require("conditions")
		if err != nil {
			return nil, err
		}
		if cv.kind != kindArray {
			return nil, typeErr(mo.sub("conditions"), cv, "a sequence of conditions")
		}
		conds, err := conditions(cv.items(), mo.sub("conditions"))
		if err != nil {
			return nil, err
		}
		mcv, err := mo.require("min_count")
		if err != nil {
			return nil, err
		}
		n, err := toU64(mcv, mo.sub("min_count"))
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, validationErr(mo.sub("min_count"), "min_count must be greater than 0")
		}
		f.MinShould = &qdrant.MinShould{Conditions: conds, MinCount: n}
	}
	return f, nil
}

// conditionList reads should / must / must_not: one condition or an array.
func conditionList(o object, key string) ([]*qdrant.Condition, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	path := o.sub(key)
	if v.kind == kindArray {
		return conditions(v.items(), path)
	}
	c, err := decodeCondition(v, path)
	if err != nil {
		return nil, err
	}
	return []*qdrant.Condition{c}, nil
}

func conditions(items []value, path string) ([]*qdrant.Condition, error) {
	out := make([]*qdrant.Condition, len(items))
	for i, e := range items {
		c, err := decodeCondition(e, index(path, i))
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

const conditionExpected = "Expected some form of condition, which can be a field condition (like {\"key\": ..., \"match\": ... }), or some other mentioned in the documentation: https://qdrant.tech/documentation/concepts/filtering/#filtering-conditions"

func decodeCondition(v value, path string) (*qdrant.Condition, error) {
	if v.kind != kindObject {
		return nil, formatErr(path, "%s", conditionExpected)
	}
	has := func(k string) bool {
		for _, mb := range v.members {
			if mb.key == k {
				return true
			}
		}
		return false
	}
	switch {
	case has("key"):
		fc, err := fieldCondition(v, path)
		if err != nil {
			return nil, err
		}
		return &qdrant.Condition{ConditionOneOf: &qdrant.Condition_Field{Field: fc}}, nil
	case has("is_empty"):
		key, err := payloadField(v, path, "is_empty")
		if err != nil {
			return nil, err
		}
		return qdrant.NewIsEmpty(key), nil
	case has("is_null"):
		key, err := payloadField(v, path, "is_null")
		if err != nil {
			return nil, err
		}
		return qdrant.NewIsNull(key), nil
	case has("has_id"):
		o, err := readObject(v, path, "has_id")
		if err != nil {
			return nil, err
		}
		ids, err := toPointIDs(o.m["has_id"], o.sub("has_id"))
		if err != nil {
			return nil, err
		}
		return qdrant.NewHasID(ids...), nil
	case has("has_vector"):
		o, err := readObject(v, path, "has_vector")
		if err != nil {
			return nil, err
		}
		name, err := o.str("has_vector")
		if err != nil {
			return nil, err
		}
		if name == nil {
			return nil, typeErr(o.sub("has_vector"), o.m["has_vector"], "a string")
		}
		return qdrant.NewHasVector(*name), nil
	case has("slice"):
		o, err := readObject(v, path, "slice")
		if err != nil {
			return nil, err
		}
		so, err := readObject(o.m["slice"], o.sub("slice"), "total", "index")
		if err != nil {
			return nil, err
		}
		total, err := so.u32("total")
		if err != nil {
			return nil, err
		}
		idx, err := so.u32("index")
		if err != nil {
			return nil, err
		}
		if total == nil || idx == nil {
			return nil, formatErr(so.path, "missing field `total` or `index`")
		}
		if *total == 0 {
			return nil, formatErr(so.sub("total"), "invalid value: integer `0`, expected a nonzero u32")
		}
		if *idx >= *total {
			return nil, validationErr(o.sub("slice"), "Slice index must be less than the total number of slices")
		}
		return qdrant.NewSlice(*total, *idx), nil
	case has("nested"):
		o, err := readObject(v, path, "nested")
		if err != nil {
			return nil, err
		}
		no, err := readObject(o.m["nested"], o.sub("nested"), "key", "filter")
		if err != nil {
			return nil, err
		}
		key, err := no.str("key")
		if err != nil {
			return nil, err
		}
		if key == nil {
			return nil, formatErr(no.path, "missing field `key`")
		}
		fv, err := no.require("filter")
		if err != nil {
			return nil, err
		}
		f, err := decodeFilter(fv, no.sub("filter"))
		if err != nil {
			return nil, err
		}
		return qdrant.NewNestedFilter(*key, f), nil
	}
	// Anything else must be a nested Filter object ({} included).
	for _, mb := range v.members {
		known := false
		for _, k := range filterFields {
			if mb.key == k {
				known = true
			}
		}
		if !known {
			return nil, &decodeError{status: 400, msg: "Format error in JSON body: " + at(path) + conditionExpected + " (unknown key `" + mb.key + "`)", untranslated: true}
		}
	}
	f, err := decodeFilter(v, path)
	if err != nil {
		return nil, err
	}
	return qdrant.NewFilterAsCondition(f), nil
}

// payloadField reads {"<name>": {"key": "..."}}.
func payloadField(v value, path, name string) (string, error) {
	o, err := readObject(v, path, name)
	if err != nil {
		return "", err
	}
	po, err := readObject(o.m[name], o.sub(name), "key")
	if err != nil {
		return "", err
	}
	key, err := po.str("key")
	if err != nil {
		return "", err
	}
	if key == nil {
		return "", formatErr(po.path, "missing field `key`")
	}
	return *key, nil
}

var fieldConditionFields = []string{"key", "match", "range", "geo_bounding_box", "geo_radius", "geo_polygon", "values_count", "is_empty", "is_null"}

func fieldCondition(v value, path string) (*qdrant.FieldCondition, error) {
	o, err := readObject(v, path, fieldConditionFields...)
	if err != nil {
		return nil, err
	}
	kv := o.m["key"]
	if kv.kind != kindString {
		return nil, formatErr(path, "Filter condition 'key' must be a string")
	}
	fc := &qdrant.FieldCondition{Key: kv.s}
	hasCond := false
	if mv, ok := o.get("match"); ok {
		if fc.Match, err = decodeMatch(mv, o.sub("match")); err != nil {
			return nil, err
		}
		hasCond = true
	}
	if rv, ok := o.get("range"); ok {
		if fc.Range, fc.DatetimeRange, err = decodeRange(rv, o.sub("range")); err != nil {
			return nil, err
		}
		hasCond = true
	}
	if gv, ok := o.get("geo_bounding_box"); ok {
		bo, err := readObject(gv, o.sub("geo_bounding_box"), "top_left", "bottom_right")
		if err != nil {
			return nil, err
		}
		tl, err := geoPointField(bo, "top_left")
		if err != nil {
			return nil, err
		}
		br, err := geoPointField(bo, "bottom_right")
		if err != nil {
			return nil, err
		}
		fc.GeoBoundingBox = &qdrant.GeoBoundingBox{TopLeft: tl, BottomRight: br}
		hasCond = true
	}
	if gv, ok := o.get("geo_radius"); ok {
		ro, err := readObject(gv, o.sub("geo_radius"), "center", "radius")
		if err != nil {
			return nil, err
		}
		c, err := geoPointField(ro, "center")
		if err != nil {
			return nil, err
		}
		r, err := ro.f32("radius")
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, formatErr(ro.path, "missing field `radius`")
		}
		fc.GeoRadius = &qdrant.GeoRadius{Center: c, Radius: *r}
		hasCond = true
	}
	if gv, ok := o.get("geo_polygon"); ok {
		po, err := readObject(gv, o.sub("geo_polygon"), "exterior", "interiors")
		if err != nil {
			return nil, err
		}
		ev, err := po.require("exterior")
		if err != nil {
			return nil, err
		}
		ext, err := geoLine(ev, po.sub("exterior"))
		if err != nil {
			return nil, err
		}
		poly := &qdrant.GeoPolygon{Exterior: ext}
		if iv, ok := po.get("interiors"); ok {
			if iv.kind != kindArray {
				return nil, typeErr(po.sub("interiors"), iv, "a sequence of line strings")
			}
			for i, e := range iv.items() {
				l, err := geoLine(e, index(po.sub("interiors"), i))
				if err != nil {
					return nil, err
				}
				poly.Interiors = append(poly.Interiors, l)
			}
		}
		fc.GeoPolygon = poly
		hasCond = true
	}
	if cv, ok := o.get("values_count"); ok {
		co, err := readObject(cv, o.sub("values_count"), "lt", "gt", "gte", "lte")
		if err != nil {
			return nil, err
		}
		vc := &qdrant.ValuesCount{}
		if vc.Lt, err = co.u64("lt"); err != nil {
			return nil, err
		}
		if vc.Gt, err = co.u64("gt"); err != nil {
			return nil, err
		}
		if vc.Gte, err = co.u64("gte"); err != nil {
			return nil, err
		}
		if vc.Lte, err = co.u64("lte"); err != nil {
			return nil, err
		}
		fc.ValuesCount = vc
		hasCond = true
	}
	if fc.IsEmpty, err = o.boolean("is_empty"); err != nil {
		return nil, err
	}
	if fc.IsNull, err = o.boolean("is_null"); err != nil {
		return nil, err
	}
	if !hasCond && fc.IsEmpty == nil && fc.IsNull == nil {
		return nil, validationErr(path, "At least one field condition must be specified")
	}
	return fc, nil
}

func geoPointField(o object, key string) (*qdrant.GeoPoint, error) {
	v, err := o.require(key)
	if err != nil {
		return nil, err
	}
	return geoPoint(v, o.sub(key))
}

func geoPoint(v value, path string) (*qdrant.GeoPoint, error) {
	o, err := readObject(v, path, "lon", "lat")
	if err != nil {
		return nil, err
	}
	lon, err := o.f64("lon")
	if err != nil {
		return nil, err
	}
	lat, err := o.f64("lat")
	if err != nil {
		return nil, err
	}
	if lon == nil || lat == nil {
		return nil, formatErr(path, "missing field `lon` or `lat`")
	}
	return &qdrant.GeoPoint{Lon: *lon, Lat: *lat}, nil
}

func geoLine(v value, path string) (*qdrant.GeoLineString, error) {
	o, err := readObject(v, path, "points")
	if err != nil {
		return nil, err
	}
	pv, err := o.require("points")
	if err != nil {
		return nil, err
	}
	if pv.kind != kindArray {
		return nil, typeErr(o.sub("points"), pv, "a sequence of geo points")
	}
	line := &qdrant.GeoLineString{}
	for i, e := range pv.items() {
		p, err := geoPoint(e, index(o.sub("points"), i))
		if err != nil {
			return nil, err
		}
		line.Points = append(line.Points, p)
	}
	return line, nil
}

func decodeMatch(v value, path string) (*qdrant.Match, error) {
	if v.kind != kindObject || len(v.members) != 1 {
		return nil, formatErr(path, "expected exactly one of `value`, `text`, `text_any`, `phrase`, `prefix`, `any`, `except`")
	}
	mb := v.members[0]
	p := join(path, mb.key)
	switch mb.key {
	case "value":
		switch mb.val.kind {
		case kindString:
			return &qdrant.Match{MatchValue: &qdrant.Match_Keyword{Keyword: mb.val.s}}, nil
		case kindBool:
			return &qdrant.Match{MatchValue: &qdrant.Match_Boolean{Boolean: mb.val.b}}, nil
		case kindNumber:
			n, err := toI64(mb.val, p)
			if err != nil {
				return nil, formatErr(p, "invalid type: %s, expected a string, an integer or a boolean", mb.val.describe())
			}
			return &qdrant.Match{MatchValue: &qdrant.Match_Integer{Integer: n}}, nil
		}
		return nil, typeErr(p, mb.val, "a string, an integer or a boolean")
	case "text", "text_any", "phrase", "prefix":
		if mb.val.kind != kindString {
			return nil, typeErr(p, mb.val, "a string")
		}
		switch mb.key {
		case "text":
			return &qdrant.Match{MatchValue: &qdrant.Match_Text{Text: mb.val.s}}, nil
		case "text_any":
			return &qdrant.Match{MatchValue: &qdrant.Match_TextAny{TextAny: mb.val.s}}, nil
		case "phrase":
			return &qdrant.Match{MatchValue: &qdrant.Match_Phrase{Phrase: mb.val.s}}, nil
		}
		return &qdrant.Match{MatchValue: &qdrant.Match_Prefix{Prefix: mb.val.s}}, nil
	case "any", "except":
		strs, ints, err := anyVariants(mb.val, p)
		if err != nil {
			return nil, err
		}
		switch {
		case mb.key == "any" && ints != nil:
			return &qdrant.Match{MatchValue: &qdrant.Match_Integers{Integers: &qdrant.RepeatedIntegers{Integers: ints}}}, nil
		case mb.key == "any":
			return &qdrant.Match{MatchValue: &qdrant.Match_Keywords{Keywords: &qdrant.RepeatedStrings{Strings: strs}}}, nil
		case ints != nil:
			return &qdrant.Match{MatchValue: &qdrant.Match_ExceptIntegers{ExceptIntegers: &qdrant.RepeatedIntegers{Integers: ints}}}, nil
		}
		return &qdrant.Match{MatchValue: &qdrant.Match_ExceptKeywords{ExceptKeywords: &qdrant.RepeatedStrings{Strings: strs}}}, nil
	}
	return nil, &decodeError{status: 400, msg: "Format error in JSON body: " + at(path) + "unknown match `" + mb.key + "`, expected one of `value`, `text`, `text_any`, `phrase`, `prefix`, `any`, `except`", untranslated: true}
}

// anyVariants reads the list of match any / except: all strings or all
// integers (an empty list is an empty string list, as serde decides).
func anyVariants(v value, path string) ([]string, []int64, error) {
	if v.kind != kindArray {
		return nil, nil, typeErr(path, v, "a sequence of strings or integers")
	}
	if v.nums != nil {
		ints := make([]int64, len(v.nums))
		for i, n := range v.nums {
			x, err := toI64(value{kind: kindNumber, s: n}, index(path, i))
			if err != nil {
				return nil, nil, err
			}
			ints[i] = x
		}
		return nil, ints, nil
	}
	strs := make([]string, len(v.elems))
	for i, e := range v.elems {
		if e.kind != kindString {
			return nil, nil, formatErr(path, "data did not match any variant of untagged enum AnyVariants: all values must be strings or all integers")
		}
		strs[i] = e.s
	}
	return strs, nil, nil
}

// decodeRange reads a range: numbers give a Range, and any string bound
// makes it a datetime range (RFC 3339 and the other forms Qdrant parses).
func decodeRange(v value, path string) (*qdrant.Range, *qdrant.DatetimeRange, error) {
	o, err := readObject(v, path, "lt", "gt", "gte", "lte")
	if err != nil {
		return nil, nil, err
	}
	datetime := false
	for _, mv := range o.m {
		if mv.kind == kindString {
			datetime = true
		}
	}
	if !datetime {
		r := &qdrant.Range{}
		if r.Lt, err = o.f64("lt"); err != nil {
			return nil, nil, err
		}
		if r.Gt, err = o.f64("gt"); err != nil {
			return nil, nil, err
		}
		if r.Gte, err = o.f64("gte"); err != nil {
			return nil, nil, err
		}
		if r.Lte, err = o.f64("lte"); err != nil {
			return nil, nil, err
		}
		return r, nil, nil
	}
	dr := &qdrant.DatetimeRange{}
	for _, b := range []struct {
		key string
		dst **timestamppb.Timestamp
	}{{"lt", &dr.Lt}, {"gt", &dr.Gt}, {"gte", &dr.Gte}, {"lte", &dr.Lte}} {
		bv, ok := o.get(b.key)
		if !ok {
			continue
		}
		if bv.kind != kindString {
			return nil, nil, typeErr(o.sub(b.key), bv, "a datetime string")
		}
		t, ok := parseDatetime(bv.s)
		if !ok {
			return nil, nil, formatErr(o.sub(b.key), "'%s' does not match accepted datetime format (RFC3339). Example: 2014-01-01T00:00:00Z", bv.s)
		}
		*b.dst = timestamppb.New(t)
	}
	return nil, dr, nil
}

// datetimeLayouts are the forms Qdrant's DateTimePayloadType::from_str
// accepts: RFC 3339, a space instead of the T, offsets without a colon, and
// naive (UTC) date-times down to a bare date.
var datetimeLayouts = [...]string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02 15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	"2006-01-02",
}

func parseDatetime(s string) (time.Time, bool) {
	if len(s) < 10 || len(s) > 64 {
		return time.Time{}, false
	}
	for _, layout := range datetimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
