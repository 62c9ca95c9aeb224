package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"

	"github.com/memrank/memrank/internal/jsonpath"
)

// Filter evaluation follows Qdrant v1.19 (lib/segment/src/payload_storage/
// query_checker.rs and condition_checker.rs, lib/api/src/grpc/conversions.rs):
//
//   - a filter is should (any) AND min_should (at least min_count) AND must
//     (all) AND must_not (none); an empty should list is no constraint,
//     because gRPC drops empty lists and empty Condition messages;
//   - a field condition looks at the values at its key path, arrays
//     flattened one level: it matches when any value matches; a missing key
//     matches only is_empty=true, is_null=false and values_count that admit 0;
//   - match value: string = keyword, integer = integer (a stored 3.0 is a
//     float and never matches integer 3), bool = bool;
//   - match any: strings or integers; [] matches nothing;
//   - match except: true for values not in the list and for values of any
//     other type, false for null; a missing field never matches;
//   - text and phrase (there is no full-text index here): case-sensitive
//     substring; text_any: any whitespace-separated token is a substring;
//     prefix: string prefix;
//   - range: numbers (integer or float) compared as f64; datetime_range:
//     payload strings parsed as datetimes, compared in microseconds;
//   - is_empty: missing, null or []; [null] is not empty; is_null: null only;
//   - values_count: array length, 1 for a scalar, 0 for null or missing;
//   - has_id: the point's id is listed (never inside nested);
//   - nested: some object of the array at key satisfies the whole filter.
//
// Geo conditions and slice conditions are not supported and are rejected
// with Unimplemented rather than ignored.

// maxFilterDepth bounds filter nesting (Condition.filter and nested), so a
// hostile request cannot recurse without limit. Qdrant's own decoder caps
// protobuf nesting at 100 messages, which is about 50 filter levels.
const maxFilterDepth = 64

// evalCtx is the point a filter is evaluated against. The payload is
// decoded lazily, only when a condition needs it: from raw (a record the
// caller already holds), else from pts, else through load.
type evalCtx struct {
	slot   uint32
	id     PointID
	hasID  bool // false inside nested conditions
	fields map[string]*qdrant.Value
	loaded bool
	raw    []byte       // the point's stored record, if at hand
	pts    *bolt.Bucket // where to read the record otherwise
	src    *collection  // whose overlay comes before pts
	dim    int
	load   func() (map[string]*qdrant.Value, error) // tests
	err    error
	// ctx, when set, is checked every workCheck conditions evaluated: a
	// filter of 100k clauses costs that much for every point, so checking
	// between points would let a cancelled request burn CPU-seconds.
	ctx  context.Context
	work int
}

const workCheck = 1 << 14

// tick counts one condition evaluated; false once the context has ended
// (e.err then says so) or the evaluation failed.
func (e *evalCtx) tick() bool {
	if e.work++; e.work%workCheck == 0 && e.ctx != nil && e.err == nil {
		if err := e.ctx.Err(); err != nil {
			e.err = &Error{Kind: KindCanceled, Msg: err.Error(), Err: err}
		}
	}
	return e.err == nil
}

// evalFailure is the error of a failed evaluation: a cancellation as it
// is, anything else an internal error about the point.
func evalFailure(err error, id PointID) error {
	var se *Error
	if errors.As(err, &se) && se.Kind == KindCanceled {
		return se
	}
	return internal(err, "read point %s", id)
}

// at resets the context for another point, keeping its source.
func (e *evalCtx) at(slot uint32, id PointID, raw []byte) {
	e.slot, e.id, e.hasID, e.raw = slot, id, true, raw
	e.fields, e.loaded = nil, false
}

func (e *evalCtx) payload() map[string]*qdrant.Value {
	if e.loaded {
		return e.fields
	}
	e.loaded = true
	var f map[string]*qdrant.Value
	var err error
	switch {
	case e.raw != nil:
		var rec recordView
		if rec, err = parseRecord(e.raw, e.dim); err == nil {
			f, err = decodePayload(rec.payload)
		}
	case e.pts != nil && e.src != nil:
		f, err = e.src.payloadOf(e.pts, e.id)
	case e.pts != nil:
		f, err = loadPayload(e.pts, e.id, e.dim)
	case e.load != nil:
		f, err = e.load()
	}
	if err != nil && e.err == nil {
		e.err = err
	}
	e.fields = f
	return e.fields
}

type node interface {
	eval(e *evalCtx) bool
}

type constNode bool

func (n constNode) eval(*evalCtx) bool { return bool(n) }

type andNode []node

func (n andNode) eval(e *evalCtx) bool {
	for _, c := range n {
		if !e.tick() || !c.eval(e) {
			return false
		}
	}
	return true
}

type orNode []node

func (n orNode) eval(e *evalCtx) bool {
	for _, c := range n {
		if !e.tick() {
			return false
		}
		if c.eval(e) {
			return true
		}
	}
	return false
}

type noneNode []node

func (n noneNode) eval(e *evalCtx) bool {
	for _, c := range n {
		if !e.tick() || c.eval(e) {
			return false
		}
	}
	return true
}

type minShouldNode struct {
	conds []node
	min   uint64
}

func (n minShouldNode) eval(e *evalCtx) bool {
	var hit uint64
	for _, c := range n.conds {
		if !e.tick() {
			return false
		}
		if c.eval(e) {
			hit++
			if hit >= n.min {
				return true
			}
		}
	}
	return hit >= n.min
}

// bitsNode is a condition answered from a payload index for every slot.
type bitsNode struct{ bits bitset }

func (n bitsNode) eval(e *evalCtx) bool { return n.bits.has(e.slot) }

type hasIDNode map[PointID]struct{}

func (n hasIDNode) eval(e *evalCtx) bool {
	if !e.hasID {
		return false
	}
	_, ok := n[e.id]
	return ok
}

type isEmptyNode struct{ path jsonpath.Path }

func (n isEmptyNode) eval(e *evalCtx) bool { return n.emptyIn(e.payload()) }

func (n isEmptyNode) emptyIn(payload map[string]*qdrant.Value) bool {
	empty := true
	n.path.Get(payload, func(v *qdrant.Value) {
		switch k := v.GetKind().(type) {
		case nil, *qdrant.Value_NullValue:
		case *qdrant.Value_ListValue:
			if len(k.ListValue.GetValues()) > 0 {
				empty = false
			}
		default:
			empty = false
		}
	})
	return empty
}

type isNullNode struct{ path jsonpath.Path }

func (n isNullNode) eval(e *evalCtx) bool {
	null := false
	n.path.Get(e.payload(), func(v *qdrant.Value) {
		if jsonpath.IsNull(v) {
			null = true
		}
	})
	return null
}

type nestedNode struct {
	path   jsonpath.Path // with a trailing []
	filter node
}

func (n nestedNode) eval(e *evalCtx) bool {
	found := false
	n.path.Get(e.payload(), func(v *qdrant.Value) {
		if found || !e.tick() {
			return
		}
		s := v.GetStructValue()
		if s == nil {
			return
		}
		fields := s.GetFields()
		if fields == nil {
			fields = map[string]*qdrant.Value{}
		}
		// One work count for the point: conditions inside nested elements
		// count toward the context checks too.
		sub := evalCtx{fields: fields, loaded: true, ctx: e.ctx, work: e.work}
		if n.filter.eval(&sub) {
			found = true
		}
		e.work = sub.work
		if sub.err != nil && e.err == nil {
			e.err = sub.err
		}
	})
	return found
}

// fieldNode is a FieldCondition evaluated on the payload.
type fieldNode struct {
	path        jsonpath.Path
	match       *qdrant.Match
	rng         *qdrant.Range
	dt          *microRange
	valuesCount *qdrant.ValuesCount
	isEmpty     *bool
	isNull      *bool
	// For long any/except lists, the list as a set (Qdrant switches to a
	// hash set past 13 entries too); nil for short lists.
	strSet map[string]struct{}
	intSet map[int64]struct{}
}

// setThreshold is the list length from which any/except use a set.
const setThreshold = 16

func (n *fieldNode) buildSets() {
	switch mv := n.match.GetMatchValue().(type) {
	case *qdrant.Match_Keywords:
		n.strSet = strSet(mv.Keywords.GetStrings())
	case *qdrant.Match_ExceptKeywords:
		n.strSet = strSet(mv.ExceptKeywords.GetStrings())
	case *qdrant.Match_Integers:
		n.intSet = intSet(mv.Integers.GetIntegers())
	case *qdrant.Match_ExceptIntegers:
		n.intSet = intSet(mv.ExceptIntegers.GetIntegers())
	}
}

func strSet(l []string) map[string]struct{} {
	if len(l) < setThreshold {
		return nil
	}
	m := make(map[string]struct{}, len(l))
	for _, s := range l {
		m[s] = struct{}{}
	}
	return m
}

func intSet(l []int64) map[int64]struct{} {
	if len(l) < setThreshold {
		return nil
	}
	m := make(map[int64]struct{}, len(l))
	for _, s := range l {
		m[s] = struct{}{}
	}
	return m
}

func (n *fieldNode) matches(v *qdrant.Value) bool {
	if n.strSet != nil || n.intSet != nil {
		if in, ok := n.inSet(v); ok {
			switch n.match.GetMatchValue().(type) {
			case *qdrant.Match_Keywords, *qdrant.Match_Integers:
				return in
			default: // except
				return !in
			}
		}
	}
	return matchValue(n.match, v)
}

// inSet answers list membership for a long any/except list; ok is false
// when the node has no set for this kind of value.
func (n *fieldNode) inSet(v *qdrant.Value) (in, ok bool) {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_StringValue:
		if n.strSet != nil {
			_, in = n.strSet[k.StringValue]
			return in, true
		}
	case *qdrant.Value_IntegerValue:
		if n.intSet != nil {
			_, in = n.intSet[k.IntegerValue]
			return in, true
		}
	}
	return false, false
}

func (n *fieldNode) eval(e *evalCtx) bool {
	seen := false
	hit := false
	n.path.Get(e.payload(), func(v *qdrant.Value) {
		seen = true
		if !hit && n.check(v) {
			hit = true
		}
	})
	if !seen {
		return n.checkEmpty()
	}
	return hit
}

// check is Qdrant's FieldCondition::check for one value.
func (n *fieldNode) check(v *qdrant.Value) bool {
	switch {
	case n.valuesCount != nil:
		return countOK(n.valuesCount, valuesCount(v))
	case n.isEmpty != nil:
		return fieldIsEmpty(*n.isEmpty, v)
	case n.isNull != nil:
		return fieldIsNull(*n.isNull, v)
	}
	if l, ok := v.GetKind().(*qdrant.Value_ListValue); ok {
		for _, e := range l.ListValue.GetValues() {
			if n.checkMatch(e) {
				return true
			}
		}
		return false
	}
	return n.checkMatch(v)
}

// checkEmpty is Qdrant's FieldCondition::check_empty (the key is missing).
func (n *fieldNode) checkEmpty() bool {
	switch {
	case n.valuesCount != nil:
		return countOK(n.valuesCount, 0)
	case n.isEmpty != nil:
		return *n.isEmpty
	case n.isNull != nil:
		return !*n.isNull
	}
	return false
}

func (n *fieldNode) checkMatch(v *qdrant.Value) bool {
	return (n.match != nil && n.matches(v)) ||
		(n.rng != nil && rangeValue(n.rng, v)) ||
		(n.dt != nil && datetimeValue(*n.dt, v))
}

func valuesCount(v *qdrant.Value) uint64 {
	switch k := v.GetKind().(type) {
	case nil, *qdrant.Value_NullValue:
		return 0
	case *qdrant.Value_ListValue:
		return uint64(len(k.ListValue.GetValues()))
	}
	return 1
}

func countOK(c *qdrant.ValuesCount, n uint64) bool {
	return (c.Lt == nil || n < *c.Lt) && (c.Gt == nil || n > *c.Gt) &&
		(c.Lte == nil || n <= *c.Lte) && (c.Gte == nil || n >= *c.Gte)
}

// fieldIsEmpty is the field-level is_empty flag (check_is_empty in
// condition_checker.rs).
func fieldIsEmpty(want bool, v *qdrant.Value) bool {
	switch k := v.GetKind().(type) {
	case nil, *qdrant.Value_NullValue:
		return want
	case *qdrant.Value_ListValue:
		return (len(k.ListValue.GetValues()) == 0) == want
	}
	return !want
}

// fieldIsNull is the field-level is_null flag. Unlike IsNullCondition, it
// treats an array holding a null as null (check_is_null in
// condition_checker.rs).
func fieldIsNull(want bool, v *qdrant.Value) bool {
	switch k := v.GetKind().(type) {
	case nil, *qdrant.Value_NullValue:
		return want
	case *qdrant.Value_ListValue:
		has := false
		for _, e := range k.ListValue.GetValues() {
			if jsonpath.IsNull(e) {
				has = true
				break
			}
		}
		return has == want
	}
	return !want
}

func matchValue(m *qdrant.Match, v *qdrant.Value) bool {
	switch mv := m.GetMatchValue().(type) {
	case *qdrant.Match_Keyword:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		return ok && s.StringValue == mv.Keyword
	case *qdrant.Match_Integer:
		n, ok := v.GetKind().(*qdrant.Value_IntegerValue)
		return ok && n.IntegerValue == mv.Integer
	case *qdrant.Match_Boolean:
		b, ok := v.GetKind().(*qdrant.Value_BoolValue)
		return ok && b.BoolValue == mv.Boolean
	case *qdrant.Match_Text:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		return ok && strings.Contains(s.StringValue, mv.Text)
	case *qdrant.Match_Phrase:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		return ok && strings.Contains(s.StringValue, mv.Phrase)
	case *qdrant.Match_TextAny:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		if !ok {
			return false
		}
		for _, tok := range strings.Fields(mv.TextAny) {
			if strings.Contains(s.StringValue, tok) {
				return true
			}
		}
		return false
	case *qdrant.Match_Prefix:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		return ok && strings.HasPrefix(s.StringValue, mv.Prefix)
	case *qdrant.Match_Keywords:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		if !ok {
			return false
		}
		for _, k := range mv.Keywords.GetStrings() {
			if k == s.StringValue {
				return true
			}
		}
		return false
	case *qdrant.Match_Integers:
		n, ok := v.GetKind().(*qdrant.Value_IntegerValue)
		if !ok {
			return false
		}
		for _, k := range mv.Integers.GetIntegers() {
			if k == n.IntegerValue {
				return true
			}
		}
		return false
	case *qdrant.Match_ExceptKeywords:
		switch k := v.GetKind().(type) {
		case nil, *qdrant.Value_NullValue:
			return false
		case *qdrant.Value_StringValue:
			for _, x := range mv.ExceptKeywords.GetStrings() {
				if x == k.StringValue {
					return false
				}
			}
		}
		return true
	case *qdrant.Match_ExceptIntegers:
		switch k := v.GetKind().(type) {
		case nil, *qdrant.Value_NullValue:
			return false
		case *qdrant.Value_IntegerValue:
			for _, x := range mv.ExceptIntegers.GetIntegers() {
				if x == k.IntegerValue {
					return false
				}
			}
		}
		return true
	}
	return false
}

func inRange(r *qdrant.Range, x float64) bool {
	return (r.Lt == nil || x < *r.Lt) && (r.Gt == nil || x > *r.Gt) &&
		(r.Lte == nil || x <= *r.Lte) && (r.Gte == nil || x >= *r.Gte)
}

func rangeValue(r *qdrant.Range, v *qdrant.Value) bool {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_IntegerValue:
		return inRange(r, float64(k.IntegerValue))
	case *qdrant.Value_DoubleValue:
		return inRange(r, k.DoubleValue)
	}
	return false
}

// microRange is a datetime range in microseconds since the epoch.
type microRange struct {
	lt, gt, lte, gte *int64
}

func (r microRange) contains(t int64) bool {
	return (r.lt == nil || t < *r.lt) && (r.gt == nil || t > *r.gt) &&
		(r.lte == nil || t <= *r.lte) && (r.gte == nil || t >= *r.gte)
}

func datetimeValue(r microRange, v *qdrant.Value) bool {
	s, ok := v.GetKind().(*qdrant.Value_StringValue)
	if !ok {
		return false
	}
	t, ok := parseDatetime(s.StringValue)
	return ok && r.contains(t)
}

// datetimeLayouts are the formats Qdrant's DateTimePayloadType::from_str
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

// parseDatetime parses a payload datetime string to microseconds (UTC).
func parseDatetime(s string) (int64, bool) {
	if len(s) < 10 || len(s) > 64 || s[4] != '-' {
		return 0, false
	}
	for _, layout := range datetimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMicro(), true
		}
	}
	return 0, false
}

// bitsOf computes a compiled filter's matches over every slot at once,
// with word-wide bit operations, when no part of it needs a payload (every
// leaf answered by an index, a constant or has_id). The result may include
// dead slots; callers intersect it with the live set.
func bitsOf(n node, c *collection) (bitset, bool) {
	nslots := len(c.ids)
	switch v := n.(type) {
	case constNode:
		if v {
			return append(bitset(nil), c.live...), true
		}
		return newBitset(nslots), true
	case bitsNode:
		return v.bits, true
	case hasIDNode:
		out := newBitset(nslots)
		for id := range v {
			if slot, ok := c.slots[id]; ok {
				out.set(slot)
			}
		}
		return out, true
	case andNode:
		var acc bitset
		for i, child := range v {
			b, ok := bitsOf(child, c)
			if !ok {
				return nil, false
			}
			if i == 0 {
				acc = append(bitset(nil), b...)
				continue
			}
			acc.and(b)
		}
		return acc, true
	case orNode:
		acc := newBitset(nslots)
		for _, child := range v {
			b, ok := bitsOf(child, c)
			if !ok {
				return nil, false
			}
			acc.or(b)
		}
		return acc, true
	case noneNode:
		any, ok := bitsOf(orNode(v), c)
		if !ok {
			return nil, false
		}
		out := append(bitset(nil), c.live...)
		out.andNot(any)
		return out, true
	case minShouldNode:
		if v.min == 1 {
			return bitsOf(orNode(v.conds), c)
		}
		if v.min > uint64(len(v.conds)) {
			return newBitset(nslots), true
		}
	}
	return nil, false
}

// filterCompiler turns a go-client Filter into an evaluator, validating it
// the way Qdrant's gRPC conversion does and resolving conditions on indexed
// fields into slot bitsets when it can.
type filterCompiler struct {
	c *collection // nil: no indexes (e.g. inside nested)
}

func (fc filterCompiler) compile(f *qdrant.Filter, field string) (node, error) {
	if f == nil {
		return nil, nil
	}
	return fc.filter(f, field, 0, true)
}

func (fc filterCompiler) filter(f *qdrant.Filter, field string, depth int, top bool) (node, error) {
	if depth > maxFilterDepth {
		return nil, wrongInput("filter nesting is deeper than %d levels", maxFilterDepth)
	}
	var all andNode
	should, err := fc.conditions(f.GetShould(), field+".should", depth, top)
	if err != nil {
		return nil, err
	}
	if len(should) > 0 {
		all = append(all, orNode(should))
	}
	if ms := f.GetMinShould(); ms != nil {
		if ms.GetMinCount() == 0 {
			return nil, validation(field+".min_should.min_count", "min_count must be greater than 0")
		}
		conds, err := fc.conditions(ms.GetConditions(), field+".min_should.conditions", depth, top)
		if err != nil {
			return nil, err
		}
		all = append(all, minShouldNode{conds: conds, min: ms.GetMinCount()})
	}
	must, err := fc.conditions(f.GetMust(), field+".must", depth, top)
	if err != nil {
		return nil, err
	}
	all = append(all, must...)
	mustNot, err := fc.conditions(f.GetMustNot(), field+".must_not", depth, top)
	if err != nil {
		return nil, err
	}
	if len(mustNot) > 0 {
		all = append(all, noneNode(mustNot))
	}
	switch len(all) {
	case 0:
		return constNode(true), nil
	case 1:
		return all[0], nil
	}
	return all, nil
}

// conditions converts a list, dropping empty Condition messages like Qdrant.
func (fc filterCompiler) conditions(cs []*qdrant.Condition, field string, depth int, top bool) ([]node, error) {
	var out []node
	for i, c := range cs {
		n, err := fc.condition(c, fmt.Sprintf("%s[%d]", field, i), depth, top)
		if err != nil {
			return nil, err
		}
		if n != nil {
			out = append(out, n)
		}
	}
	return out, nil
}

func parsePath(key string) (jsonpath.Path, error) {
	p, err := jsonpath.Parse(key)
	if err != nil {
		return jsonpath.Path{}, invalidArg("Invalid json path: '%s'", key)
	}
	return p, nil
}

func (fc filterCompiler) condition(c *qdrant.Condition, field string, depth int, top bool) (node, error) {
	switch v := c.GetConditionOneOf().(type) {
	case nil:
		return nil, nil
	case *qdrant.Condition_Filter:
		return fc.filter(v.Filter, field+".filter", depth+1, top)
	case *qdrant.Condition_Field:
		return fc.field(v.Field, top)
	case *qdrant.Condition_IsEmpty:
		p, err := parsePath(v.IsEmpty.GetKey())
		if err != nil {
			return nil, err
		}
		if top && fc.c != nil {
			// Answered from a payload index on the path, if there is one.
			if fi := fc.c.indexes[p.String()]; fi != nil {
				b := append(bitset(nil), fc.c.live...)
				b.andNot(fi.nonEmpty)
				return bitsNode{bits: b}, nil
			}
		}
		return isEmptyNode{path: p}, nil
	case *qdrant.Condition_IsNull:
		p, err := parsePath(v.IsNull.GetKey())
		if err != nil {
			return nil, err
		}
		return isNullNode{path: p}, nil
	case *qdrant.Condition_HasId:
		set := make(hasIDNode, len(v.HasId.GetHasId()))
		for _, pid := range v.HasId.GetHasId() {
			id, err := PointIDFromProto(pid)
			if err != nil {
				return nil, err
			}
			set[id] = struct{}{}
		}
		return set, nil
	case *qdrant.Condition_HasVector:
		// A collection here has exactly one vector, the unnamed one, and
		// every point has it; Qdrant answers false for unknown names.
		return constNode(v.HasVector.GetHasVector() == ""), nil
	case *qdrant.Condition_Nested:
		if v.Nested.GetFilter() == nil {
			return nil, invalidArg("Nested condition must have a filter")
		}
		p, err := parsePath(v.Nested.GetKey())
		if err != nil {
			return nil, err
		}
		sub, err := filterCompiler{}.filter(v.Nested.GetFilter(), field+".nested.filter", depth+1, false)
		if err != nil {
			return nil, err
		}
		return nestedNode{path: p.ArrayKey(), filter: sub}, nil
	case *qdrant.Condition_Slice:
		return nil, unimplemented("slice conditions are not supported")
	}
	return nil, invalidArg("unknown condition type")
}

func (fc filterCompiler) field(f *qdrant.FieldCondition, top bool) (node, error) {
	p, err := parsePath(f.GetKey())
	if err != nil {
		return nil, err
	}
	if f.GetGeoBoundingBox() != nil || f.GetGeoRadius() != nil || f.GetGeoPolygon() != nil {
		return nil, unimplemented("geo conditions are not supported")
	}
	n := &fieldNode{path: p, match: f.GetMatch(), rng: f.GetRange(), valuesCount: f.GetValuesCount(), isEmpty: f.IsEmpty, isNull: f.IsNull}
	if n.match != nil && n.match.GetMatchValue() == nil {
		return nil, invalidArg("Malformed Match condition")
	}
	n.buildSets()
	// Qdrant uses datetime_range only when range is absent.
	if dr := f.GetDatetimeRange(); dr != nil && n.rng == nil {
		r, err := microRangeFromProto(dr)
		if err != nil {
			return nil, err
		}
		n.dt = &r
	}
	if n.match == nil && n.rng == nil && n.dt == nil && n.valuesCount == nil && n.isEmpty == nil && n.isNull == nil {
		return nil, wrongInput("At least one field condition must be specified")
	}
	if top && fc.c != nil {
		if b, ok := fc.indexed(n); ok {
			return bitsNode{bits: b}, nil
		}
	}
	return n, nil
}

// indexed answers a single-clause field condition from a payload index.
func (fc filterCompiler) indexed(n *fieldNode) (bitset, bool) {
	if n.valuesCount != nil || n.isEmpty != nil || n.isNull != nil {
		return nil, false
	}
	fi := fc.c.indexes[n.path.String()]
	if fi == nil {
		return nil, false
	}
	nslots := len(fc.c.ids)
	switch {
	case n.match != nil && n.rng == nil && n.dt == nil:
		return fi.matchBits(n.match, nslots)
	case n.rng != nil && n.match == nil:
		return fi.rangeBits(n.rng, nslots)
	case n.dt != nil && n.match == nil:
		return fi.datetimeBits(*n.dt, nslots)
	}
	return nil, false
}

// timestampMicros converts a protobuf Timestamp to microseconds, refusing
// what chrono cannot represent (try_date_time_from_proto).
func timestampMicros(ts interface {
	GetSeconds() int64
	GetNanos() int32
}) (int64, error) {
	const maxSec = 8210266876799 // chrono's DateTime::MAX_UTC (year 262143)
	const minSec = -8334601228800
	if ts.GetSeconds() > maxSec || ts.GetSeconds() < minSec || ts.GetNanos() < 0 || ts.GetNanos() >= 2e9 {
		return 0, invalidArg("Unable to parse timestamp: %ds %dns", ts.GetSeconds(), ts.GetNanos())
	}
	return ts.GetSeconds()*1_000_000 + int64(ts.GetNanos())/1000, nil
}

func microRangeFromProto(r *qdrant.DatetimeRange) (microRange, error) {
	conv := func(ts interface {
		GetSeconds() int64
		GetNanos() int32
	}) (*int64, error) {
		us, err := timestampMicros(ts)
		if err != nil {
			return nil, err
		}
		return &us, nil
	}
	var out microRange
	var err error
	if r.Lt != nil {
		if out.lt, err = conv(r.Lt); err != nil {
			return out, err
		}
	}
	if r.Gt != nil {
		if out.gt, err = conv(r.Gt); err != nil {
			return out, err
		}
	}
	if r.Lte != nil {
		if out.lte, err = conv(r.Lte); err != nil {
			return out, err
		}
	}
	if r.Gte != nil {
		if out.gte, err = conv(r.Gte); err != nil {
			return out, err
		}
	}
	return out, nil
}
