package qdrantjson

import (
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The filter codec: Qdrant's REST filter JSON -> the gRPC Filter. The whole
// REST grammar is accepted: must / should / must_not as one condition or an
// array, min_should, field conditions (match value / any / except / text /
// text_any / phrase / prefix, range over numbers or datetimes,
// geo_bounding_box / geo_radius / geo_polygon, values_count, is_empty,
// is_null), is_empty / is_null conditions, has_id (u64 ids keep every
// digit), has_vector, slice, nested, and nested filters.

// DecodeFilter converts the JSON of a REST filter (the "filter" of a search,
// query, scroll or count body) to the gRPC Filter; paths in its errors begin
// with "filter". Empty or null input means no filter (nil, nil). Its errors
// are *Error.
func DecodeFilter(raw []byte) (*qdrant.Filter, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	v, err := Parse(string(raw))
	if err != nil {
		return nil, FormatError("filter", "%v", err)
	}
	return Filter(v, "filter")
}

// Filter reads a parsed filter at path; null means no filter.
func Filter(v Value, path string) (*qdrant.Filter, error) {
	if v.Kind == KindNull {
		return nil, nil
	}
	return decodeFilter(v, path)
}

// Filter reads an optional filter member.
func (o Object) Filter(key string) (*qdrant.Filter, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	return decodeFilter(v, o.Sub(key))
}

var filterFields = []string{"should", "min_should", "must", "must_not"}

func decodeFilter(v Value, path string) (*qdrant.Filter, error) {
	o, err := ReadObject(v, path, filterFields...)
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
	if ms, ok := o.Get("min_should"); ok {
		if f.MinShould, err = minShould(ms, o.Sub("min_should")); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func minShould(v Value, path string) (*qdrant.MinShould, error) {
	mo, err := ReadObject(v, path, "conditions", "min_count")
	if err != nil {
		return nil, err
	}
	cv, err := mo.Require("conditions")
	if err != nil {
		return nil, err
	}
	if cv.Kind != KindArray {
		return nil, TypeError(mo.Sub("conditions"), cv, "a sequence of conditions")
	}
	conds, err := conditions(cv.Items(), mo.Sub("conditions"))
	if err != nil {
		return nil, err
	}
	mcv, err := mo.Require("min_count")
	if err != nil {
		return nil, err
	}
	n, err := U64(mcv, mo.Sub("min_count"))
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, ValidationError(mo.Sub("min_count"), "min_count must be greater than 0")
	}
	return &qdrant.MinShould{Conditions: conds, MinCount: n}, nil
}

// conditionList reads should / must / must_not: one condition or an array.
func conditionList(o Object, key string) ([]*qdrant.Condition, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	path := o.Sub(key)
	if v.Kind == KindArray {
		return conditions(v.Items(), path)
	}
	c, err := Condition(v, path)
	if err != nil {
		return nil, err
	}
	return []*qdrant.Condition{c}, nil
}

func conditions(items []Value, path string) ([]*qdrant.Condition, error) {
	out := make([]*qdrant.Condition, len(items))
	for i, e := range items {
		c, err := Condition(e, Index(path, i))
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

const conditionExpected = "Expected some form of condition, which can be a field condition (like {\"key\": ..., \"match\": ... }), or some other mentioned in the documentation: https://qdrant.tech/documentation/concepts/filtering/#filtering-conditions"

// Condition reads one condition of a filter (also a formula's condition
// expression). Which form it is follows from the keys it has, in Qdrant's
// order; anything else is a nested filter.
func Condition(v Value, path string) (*qdrant.Condition, error) {
	if v.Kind != KindObject {
		return nil, FormatError(path, "%s", conditionExpected)
	}
	switch {
	case v.Has("key"):
		fc, err := fieldCondition(v, path)
		if err != nil {
			return nil, err
		}
		return &qdrant.Condition{ConditionOneOf: &qdrant.Condition_Field{Field: fc}}, nil
	case v.Has("is_empty"):
		key, err := payloadField(v, path, "is_empty")
		if err != nil {
			return nil, err
		}
		return qdrant.NewIsEmpty(key), nil
	case v.Has("is_null"):
		key, err := payloadField(v, path, "is_null")
		if err != nil {
			return nil, err
		}
		return qdrant.NewIsNull(key), nil
	case v.Has("has_id"):
		return hasIDCondition(v, path)
	case v.Has("has_vector"):
		return hasVectorCondition(v, path)
	case v.Has("slice"):
		return sliceCondition(v, path)
	case v.Has("nested"):
		return nestedCondition(v, path)
	}
	return filterCondition(v, path)
}

func hasIDCondition(v Value, path string) (*qdrant.Condition, error) {
	o, err := ReadObject(v, path, "has_id")
	if err != nil {
		return nil, err
	}
	ids, err := PointIDs(o.Member("has_id"), o.Sub("has_id"))
	if err != nil {
		return nil, err
	}
	return qdrant.NewHasID(ids...), nil
}

func hasVectorCondition(v Value, path string) (*qdrant.Condition, error) {
	o, err := ReadObject(v, path, "has_vector")
	if err != nil {
		return nil, err
	}
	name, err := o.Str("has_vector")
	if err != nil {
		return nil, err
	}
	if name == nil {
		return nil, TypeError(o.Sub("has_vector"), o.Member("has_vector"), "a string")
	}
	return qdrant.NewHasVector(*name), nil
}

func sliceCondition(v Value, path string) (*qdrant.Condition, error) {
	o, err := ReadObject(v, path, "slice")
	if err != nil {
		return nil, err
	}
	so, err := ReadObject(o.Member("slice"), o.Sub("slice"), "total", "index")
	if err != nil {
		return nil, err
	}
	total, err := so.U32("total")
	if err != nil {
		return nil, err
	}
	idx, err := so.U32("index")
	if err != nil {
		return nil, err
	}
	if total == nil || idx == nil {
		return nil, FormatError(so.Path, "missing field `total` or `index`")
	}
	if *total == 0 {
		return nil, FormatError(so.Sub("total"), "invalid value: integer `0`, expected a nonzero u32")
	}
	if *idx >= *total {
		return nil, ValidationError(o.Sub("slice"), "Slice index must be less than the total number of slices")
	}
	return qdrant.NewSlice(*total, *idx), nil
}

func nestedCondition(v Value, path string) (*qdrant.Condition, error) {
	o, err := ReadObject(v, path, "nested")
	if err != nil {
		return nil, err
	}
	no, err := ReadObject(o.Member("nested"), o.Sub("nested"), "key", "filter")
	if err != nil {
		return nil, err
	}
	key, err := no.Str("key")
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, FormatError(no.Path, "missing field `key`")
	}
	fv, err := no.Require("filter")
	if err != nil {
		return nil, err
	}
	f, err := decodeFilter(fv, no.Sub("filter"))
	if err != nil {
		return nil, err
	}
	return qdrant.NewNestedFilter(*key, f), nil
}

// filterCondition reads a nested Filter object ({} included) given as a
// condition. A key no condition and no filter has is Qdrant's "expected
// some form of condition", Unsupported: it may be a condition Qdrant has
// and memrank does not know.
func filterCondition(v Value, path string) (*qdrant.Condition, error) {
	for _, mb := range v.Members {
		known := false
		for _, k := range filterFields {
			if mb.Key == k {
				known = true
			}
		}
		if !known {
			e := FormatError(path, "%s (unknown key `%s`)", conditionExpected, mb.Key)
			e.Unsupported = true
			return nil, e
		}
	}
	f, err := decodeFilter(v, path)
	if err != nil {
		return nil, err
	}
	return qdrant.NewFilterAsCondition(f), nil
}

// payloadField reads {"<name>": {"key": "..."}}.
func payloadField(v Value, path, name string) (string, error) {
	o, err := ReadObject(v, path, name)
	if err != nil {
		return "", err
	}
	po, err := ReadObject(o.Member(name), o.Sub(name), "key")
	if err != nil {
		return "", err
	}
	key, err := po.Str("key")
	if err != nil {
		return "", err
	}
	if key == nil {
		return "", FormatError(po.Path, "missing field `key`")
	}
	return *key, nil
}

var fieldConditionFields = []string{"key", "match", "range", "geo_bounding_box", "geo_radius", "geo_polygon", "values_count", "is_empty", "is_null"}

func fieldCondition(v Value, path string) (*qdrant.FieldCondition, error) {
	o, err := ReadObject(v, path, fieldConditionFields...)
	if err != nil {
		return nil, err
	}
	kv := o.Member("key")
	if kv.Kind != KindString {
		return nil, FormatError(path, "Filter condition 'key' must be a string")
	}
	fc := &qdrant.FieldCondition{Key: kv.Text}
	if mv, ok := o.Get("match"); ok {
		if fc.Match, err = decodeMatch(mv, o.Sub("match")); err != nil {
			return nil, err
		}
	}
	if rv, ok := o.Get("range"); ok {
		if fc.Range, fc.DatetimeRange, err = decodeRange(rv, o.Sub("range")); err != nil {
			return nil, err
		}
	}
	if err := geoConditions(o, fc); err != nil {
		return nil, err
	}
	if cv, ok := o.Get("values_count"); ok {
		if fc.ValuesCount, err = valuesCount(cv, o.Sub("values_count")); err != nil {
			return nil, err
		}
	}
	if fc.IsEmpty, err = o.Bool("is_empty"); err != nil {
		return nil, err
	}
	if fc.IsNull, err = o.Bool("is_null"); err != nil {
		return nil, err
	}
	if fc.Match == nil && fc.Range == nil && fc.DatetimeRange == nil && fc.GeoBoundingBox == nil && fc.GeoRadius == nil &&
		fc.GeoPolygon == nil && fc.ValuesCount == nil && fc.IsEmpty == nil && fc.IsNull == nil {
		return nil, ValidationError(path, "At least one field condition must be specified")
	}
	return fc, nil
}

// geoConditions reads geo_bounding_box, geo_radius and geo_polygon.
func geoConditions(o Object, fc *qdrant.FieldCondition) error {
	var err error
	if gv, ok := o.Get("geo_bounding_box"); ok {
		if fc.GeoBoundingBox, err = geoBoundingBox(gv, o.Sub("geo_bounding_box")); err != nil {
			return err
		}
	}
	if gv, ok := o.Get("geo_radius"); ok {
		if fc.GeoRadius, err = geoRadius(gv, o.Sub("geo_radius")); err != nil {
			return err
		}
	}
	if gv, ok := o.Get("geo_polygon"); ok {
		if fc.GeoPolygon, err = geoPolygon(gv, o.Sub("geo_polygon")); err != nil {
			return err
		}
	}
	return nil
}

func geoBoundingBox(v Value, path string) (*qdrant.GeoBoundingBox, error) {
	bo, err := ReadObject(v, path, "top_left", "bottom_right")
	if err != nil {
		return nil, err
	}
	tl, err := bo.GeoPoint("top_left")
	if err != nil {
		return nil, err
	}
	br, err := bo.GeoPoint("bottom_right")
	if err != nil {
		return nil, err
	}
	return &qdrant.GeoBoundingBox{TopLeft: tl, BottomRight: br}, nil
}

func geoRadius(v Value, path string) (*qdrant.GeoRadius, error) {
	ro, err := ReadObject(v, path, "center", "radius")
	if err != nil {
		return nil, err
	}
	c, err := ro.GeoPoint("center")
	if err != nil {
		return nil, err
	}
	r, err := ro.F32("radius")
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, FormatError(ro.Path, "missing field `radius`")
	}
	return &qdrant.GeoRadius{Center: c, Radius: *r}, nil
}

func geoPolygon(v Value, path string) (*qdrant.GeoPolygon, error) {
	po, err := ReadObject(v, path, "exterior", "interiors")
	if err != nil {
		return nil, err
	}
	ev, err := po.Require("exterior")
	if err != nil {
		return nil, err
	}
	ext, err := geoLine(ev, po.Sub("exterior"))
	if err != nil {
		return nil, err
	}
	poly := &qdrant.GeoPolygon{Exterior: ext}
	iv, ok := po.Get("interiors")
	if !ok {
		return poly, nil
	}
	if iv.Kind != KindArray {
		return nil, TypeError(po.Sub("interiors"), iv, "a sequence of line strings")
	}
	for i, e := range iv.Items() {
		l, err := geoLine(e, Index(po.Sub("interiors"), i))
		if err != nil {
			return nil, err
		}
		poly.Interiors = append(poly.Interiors, l)
	}
	return poly, nil
}

func valuesCount(v Value, path string) (*qdrant.ValuesCount, error) {
	co, err := ReadObject(v, path, "lt", "gt", "gte", "lte")
	if err != nil {
		return nil, err
	}
	vc := &qdrant.ValuesCount{}
	if vc.Lt, err = co.U64("lt"); err != nil {
		return nil, err
	}
	if vc.Gt, err = co.U64("gt"); err != nil {
		return nil, err
	}
	if vc.Gte, err = co.U64("gte"); err != nil {
		return nil, err
	}
	if vc.Lte, err = co.U64("lte"); err != nil {
		return nil, err
	}
	return vc, nil
}

// GeoPoint reads a required {"lon", "lat"} member.
func (o Object) GeoPoint(key string) (*qdrant.GeoPoint, error) {
	v, err := o.Require(key)
	if err != nil {
		return nil, err
	}
	return geoPoint(v, o.Sub(key))
}

func geoPoint(v Value, path string) (*qdrant.GeoPoint, error) {
	o, err := ReadObject(v, path, "lon", "lat")
	if err != nil {
		return nil, err
	}
	lon, err := o.F64("lon")
	if err != nil {
		return nil, err
	}
	lat, err := o.F64("lat")
	if err != nil {
		return nil, err
	}
	if lon == nil || lat == nil {
		return nil, FormatError(path, "missing field `lon` or `lat`")
	}
	return &qdrant.GeoPoint{Lon: *lon, Lat: *lat}, nil
}

func geoLine(v Value, path string) (*qdrant.GeoLineString, error) {
	o, err := ReadObject(v, path, "points")
	if err != nil {
		return nil, err
	}
	pv, err := o.Require("points")
	if err != nil {
		return nil, err
	}
	if pv.Kind != KindArray {
		return nil, TypeError(o.Sub("points"), pv, "a sequence of geo points")
	}
	line := &qdrant.GeoLineString{}
	for i, e := range pv.Items() {
		p, err := geoPoint(e, Index(o.Sub("points"), i))
		if err != nil {
			return nil, err
		}
		line.Points = append(line.Points, p)
	}
	return line, nil
}

func decodeMatch(v Value, path string) (*qdrant.Match, error) {
	if v.Kind != KindObject || len(v.Members) != 1 {
		return nil, FormatError(path, "expected exactly one of `value`, `text`, `text_any`, `phrase`, `prefix`, `any`, `except`")
	}
	mb := v.Members[0]
	p := Join(path, mb.Key)
	switch mb.Key {
	case "value":
		switch mb.Val.Kind {
		case KindString:
			return &qdrant.Match{MatchValue: &qdrant.Match_Keyword{Keyword: mb.Val.Text}}, nil
		case KindBool:
			return &qdrant.Match{MatchValue: &qdrant.Match_Boolean{Boolean: mb.Val.Bool}}, nil
		case KindNumber:
			n, err := I64(mb.Val, p)
			if err != nil {
				return nil, FormatError(p, "invalid type: %s, expected a string, an integer or a boolean", mb.Val.Describe())
			}
			return &qdrant.Match{MatchValue: &qdrant.Match_Integer{Integer: n}}, nil
		}
		return nil, TypeError(p, mb.Val, "a string, an integer or a boolean")
	case "text", "text_any", "phrase", "prefix":
		if mb.Val.Kind != KindString {
			return nil, TypeError(p, mb.Val, "a string")
		}
		switch mb.Key {
		case "text":
			return &qdrant.Match{MatchValue: &qdrant.Match_Text{Text: mb.Val.Text}}, nil
		case "text_any":
			return &qdrant.Match{MatchValue: &qdrant.Match_TextAny{TextAny: mb.Val.Text}}, nil
		case "phrase":
			return &qdrant.Match{MatchValue: &qdrant.Match_Phrase{Phrase: mb.Val.Text}}, nil
		}
		return &qdrant.Match{MatchValue: &qdrant.Match_Prefix{Prefix: mb.Val.Text}}, nil
	case "any", "except":
		strs, ints, err := anyVariants(mb.Val, p)
		if err != nil {
			return nil, err
		}
		switch {
		case mb.Key == "any" && ints != nil:
			return &qdrant.Match{MatchValue: &qdrant.Match_Integers{Integers: &qdrant.RepeatedIntegers{Integers: ints}}}, nil
		case mb.Key == "any":
			return &qdrant.Match{MatchValue: &qdrant.Match_Keywords{Keywords: &qdrant.RepeatedStrings{Strings: strs}}}, nil
		case ints != nil:
			return &qdrant.Match{MatchValue: &qdrant.Match_ExceptIntegers{ExceptIntegers: &qdrant.RepeatedIntegers{Integers: ints}}}, nil
		}
		return &qdrant.Match{MatchValue: &qdrant.Match_ExceptKeywords{ExceptKeywords: &qdrant.RepeatedStrings{Strings: strs}}}, nil
	}
	e := FormatError(path, "unknown match `%s`, expected one of `value`, `text`, `text_any`, `phrase`, `prefix`, `any`, `except`", mb.Key)
	e.Unsupported = true
	return nil, e
}

// anyVariants reads the list of match any / except: all strings or all
// integers (an empty list is an empty string list, as serde decides).
func anyVariants(v Value, path string) ([]string, []int64, error) {
	if v.Kind != KindArray {
		return nil, nil, TypeError(path, v, "a sequence of strings or integers")
	}
	if v.Nums != nil {
		ints := make([]int64, len(v.Nums))
		for i, n := range v.Nums {
			x, err := I64(Value{Kind: KindNumber, Text: n}, Index(path, i))
			if err != nil {
				return nil, nil, err
			}
			ints[i] = x
		}
		return nil, ints, nil
	}
	strs := make([]string, len(v.Elems))
	for i, e := range v.Elems {
		if e.Kind != KindString {
			return nil, nil, FormatError(path, "data did not match any variant of untagged enum AnyVariants: all values must be strings or all integers")
		}
		strs[i] = e.Text
	}
	return strs, nil, nil
}

// decodeRange reads a range: numbers give a Range, and any string bound
// makes it a datetime range (RFC 3339 and the other forms Qdrant parses).
func decodeRange(v Value, path string) (*qdrant.Range, *qdrant.DatetimeRange, error) {
	o, err := ReadObject(v, path, "lt", "gt", "gte", "lte")
	if err != nil {
		return nil, nil, err
	}
	datetime := false
	for _, mb := range v.Members {
		if mb.Val.Kind == KindString {
			datetime = true
		}
	}
	if !datetime {
		r := &qdrant.Range{}
		if r.Lt, err = o.F64("lt"); err != nil {
			return nil, nil, err
		}
		if r.Gt, err = o.F64("gt"); err != nil {
			return nil, nil, err
		}
		if r.Gte, err = o.F64("gte"); err != nil {
			return nil, nil, err
		}
		if r.Lte, err = o.F64("lte"); err != nil {
			return nil, nil, err
		}
		return r, nil, nil
	}
	dr := &qdrant.DatetimeRange{}
	for _, b := range []struct {
		key string
		dst **timestamppb.Timestamp
	}{{"lt", &dr.Lt}, {"gt", &dr.Gt}, {"gte", &dr.Gte}, {"lte", &dr.Lte}} {
		bv, ok := o.Get(b.key)
		if !ok {
			continue
		}
		if bv.Kind != KindString {
			return nil, nil, TypeError(o.Sub(b.key), bv, "a datetime string")
		}
		t, ok := ParseDatetime(bv.Text)
		if !ok {
			return nil, nil, FormatError(o.Sub(b.key), "'%s' does not match accepted datetime format (RFC3339). Example: 2014-01-01T00:00:00Z", bv.Text)
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

// ParseDatetime reads a datetime as Qdrant does (datetimeLayouts), in UTC.
func ParseDatetime(s string) (time.Time, bool) {
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
