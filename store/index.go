package store

import (
	"math"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/internal/jsonpath"
)

// fieldIndex is a payload index on one key path. It only ever speeds
// filtering up: every condition it answers gives exactly the result the
// payload itself would give, because it is built from the same values the
// filter evaluator looks at (the values at the path, arrays flattened one
// level, as Qdrant's ValueChecker does).
//
// keyword, integer, bool: inverted postings per value (match, match any;
// keyword and integer also match except).
// every kind: the slots where the key is not empty (is_empty).
// integer, float: every number (integer or float, as f64) per slot (range).
// datetime: every parseable datetime string per slot, in microseconds.
// text, geo, uuid: accepted and reported in payload_schema, but they change
// nothing here (no full-text tokenizer, no geo filtering in this engine).
type fieldIndex struct {
	path jsonpath.Path
	info *qdrant.PayloadSchemaInfo // data_type and params as created
	kind qdrant.PayloadSchemaType

	points bitset // slots that have at least one indexable value
	// nonEmpty has the slots for which an is_empty condition on the path is
	// false (some value that is neither null nor []), so is_empty is
	// answered from the index; otherTyped (keyword and integer indexes) has
	// the slots with a non-null value of another type than the index's,
	// which match every except condition, so except is answered too.
	nonEmpty   bitset
	otherTyped bitset

	strs  map[string]postings
	ints  map[int64]postings
	bools [2]postings
	nums  [][]float64 // by slot
	// num1 is a slot's number when it has exactly one, NaN otherwise: the
	// common case, kept flat so that a range tests 64 slots per word without
	// a branch instead of chasing a slice per slot. multi has the slots
	// with several numbers (or a NaN), which ranges test from nums.
	num1  []float64
	multi bitset
	times [][]int64 // by slot, microseconds
	// intVals holds the integers of an integer index by slot: what Qdrant's
	// numeric integer index orders by (nums also has the floats, for ranges).
	intVals [][]int64
}

func newFieldIndex(path jsonpath.Path, info *qdrant.PayloadSchemaInfo) *fieldIndex {
	fi := &fieldIndex{path: path, info: info, kind: info.GetDataType()}
	switch fi.kind {
	case qdrant.PayloadSchemaType_Keyword:
		fi.strs = map[string]postings{}
	case qdrant.PayloadSchemaType_Integer:
		fi.ints = map[int64]postings{}
	}
	return fi
}

// scalars returns the values a field condition checks: the values at the
// path with arrays flattened one level.
func scalars(path jsonpath.Path, payload map[string]*qdrant.Value, visit func(*qdrant.Value)) {
	path.Get(payload, func(v *qdrant.Value) {
		if l, ok := v.GetKind().(*qdrant.Value_ListValue); ok {
			for _, e := range l.ListValue.GetValues() {
				visit(e)
			}
			return
		}
		visit(v)
	})
}

func (fi *fieldIndex) add(slot uint32, payload map[string]*qdrant.Value) {
	any := false
	var nums []float64
	var times []int64
	var ints []int64
	if !(isEmptyNode{path: fi.path}).emptyIn(payload) {
		fi.nonEmpty.set(slot)
	}
	scalars(fi.path, payload, func(v *qdrant.Value) {
		switch v.GetKind().(type) {
		case nil, *qdrant.Value_NullValue:
		case *qdrant.Value_StringValue:
			if fi.kind == qdrant.PayloadSchemaType_Integer {
				fi.otherTyped.set(slot)
			}
		case *qdrant.Value_IntegerValue:
			if fi.kind == qdrant.PayloadSchemaType_Keyword {
				fi.otherTyped.set(slot)
			}
		default:
			fi.otherTyped.set(slot)
		}
		switch fi.kind {
		case qdrant.PayloadSchemaType_Keyword:
			if s, ok := v.GetKind().(*qdrant.Value_StringValue); ok {
				fi.strs[s.StringValue] = fi.strs[s.StringValue].add(slot)
				any = true
			}
		case qdrant.PayloadSchemaType_Integer:
			switch k := v.GetKind().(type) {
			case *qdrant.Value_IntegerValue:
				fi.ints[k.IntegerValue] = fi.ints[k.IntegerValue].add(slot)
				nums = append(nums, float64(k.IntegerValue))
				ints = append(ints, k.IntegerValue)
				any = true
			case *qdrant.Value_DoubleValue:
				nums = append(nums, k.DoubleValue)
				any = true
			}
		case qdrant.PayloadSchemaType_Float:
			switch k := v.GetKind().(type) {
			case *qdrant.Value_IntegerValue:
				nums = append(nums, float64(k.IntegerValue))
				any = true
			case *qdrant.Value_DoubleValue:
				nums = append(nums, k.DoubleValue)
				any = true
			}
		case qdrant.PayloadSchemaType_Bool:
			if b, ok := v.GetKind().(*qdrant.Value_BoolValue); ok {
				i := 0
				if b.BoolValue {
					i = 1
				}
				fi.bools[i] = fi.bools[i].add(slot)
				any = true
			}
		case qdrant.PayloadSchemaType_Datetime:
			if s, ok := v.GetKind().(*qdrant.Value_StringValue); ok {
				if t, ok := parseDatetime(s.StringValue); ok {
					times = append(times, t)
					any = true
				}
			}
		case qdrant.PayloadSchemaType_Text, qdrant.PayloadSchemaType_Uuid:
			if _, ok := v.GetKind().(*qdrant.Value_StringValue); ok {
				any = true
			}
		case qdrant.PayloadSchemaType_Geo:
			if _, ok := v.GetKind().(*qdrant.Value_StructValue); ok {
				any = true
			}
		}
	})
	if nums != nil {
		for int(slot) >= len(fi.nums) {
			fi.nums = append(fi.nums, nil)
		}
		fi.nums[slot] = nums
		for int(slot) >= len(fi.num1) {
			fi.num1 = append(fi.num1, math.NaN())
		}
		fi.num1[slot] = math.NaN()
		fi.multi.clear(slot)
		if len(nums) == 1 && !math.IsNaN(nums[0]) {
			fi.num1[slot] = nums[0]
		} else {
			fi.multi.set(slot)
		}
	}
	if ints != nil {
		for int(slot) >= len(fi.intVals) {
			fi.intVals = append(fi.intVals, nil)
		}
		fi.intVals[slot] = ints
	}
	if times != nil {
		for int(slot) >= len(fi.times) {
			fi.times = append(fi.times, nil)
		}
		fi.times[slot] = times
	}
	if any {
		fi.points.set(slot)
	}
}

func (fi *fieldIndex) remove(slot uint32, payload map[string]*qdrant.Value) {
	scalars(fi.path, payload, func(v *qdrant.Value) {
		switch fi.kind {
		case qdrant.PayloadSchemaType_Keyword:
			if s, ok := v.GetKind().(*qdrant.Value_StringValue); ok {
				if p := fi.strs[s.StringValue].remove(slot); len(p) == 0 {
					delete(fi.strs, s.StringValue)
				} else {
					fi.strs[s.StringValue] = p
				}
			}
		case qdrant.PayloadSchemaType_Integer:
			if n, ok := v.GetKind().(*qdrant.Value_IntegerValue); ok {
				if p := fi.ints[n.IntegerValue].remove(slot); len(p) == 0 {
					delete(fi.ints, n.IntegerValue)
				} else {
					fi.ints[n.IntegerValue] = p
				}
			}
		case qdrant.PayloadSchemaType_Bool:
			if b, ok := v.GetKind().(*qdrant.Value_BoolValue); ok {
				i := 0
				if b.BoolValue {
					i = 1
				}
				fi.bools[i] = fi.bools[i].remove(slot)
			}
		}
	})
	if int(slot) < len(fi.nums) {
		fi.nums[slot] = nil
		fi.num1[slot] = math.NaN()
		fi.multi.clear(slot)
	}
	if int(slot) < len(fi.times) {
		fi.times[slot] = nil
	}
	if int(slot) < len(fi.intVals) {
		fi.intVals[slot] = nil
	}
	fi.points.clear(slot)
	fi.nonEmpty.clear(slot)
	fi.otherTyped.clear(slot)
}

// matchBits answers a match condition from the index, if it can.
func (fi *fieldIndex) matchBits(m *qdrant.Match, nslots int) (bitset, bool) {
	out := newBitset(nslots)
	mark := func(p postings) {
		for _, s := range p {
			out.set(s)
		}
	}
	switch v := m.GetMatchValue().(type) {
	case *qdrant.Match_Keyword:
		if fi.kind != qdrant.PayloadSchemaType_Keyword {
			return nil, false
		}
		mark(fi.strs[v.Keyword])
	case *qdrant.Match_Keywords:
		if fi.kind != qdrant.PayloadSchemaType_Keyword {
			return nil, false
		}
		for _, k := range v.Keywords.GetStrings() {
			mark(fi.strs[k])
		}
	case *qdrant.Match_Integer:
		if fi.kind != qdrant.PayloadSchemaType_Integer {
			return nil, false
		}
		mark(fi.ints[v.Integer])
	case *qdrant.Match_Integers:
		if fi.kind != qdrant.PayloadSchemaType_Integer {
			return nil, false
		}
		for _, k := range v.Integers.GetIntegers() {
			mark(fi.ints[k])
		}
	case *qdrant.Match_ExceptKeywords:
		// A value of another type matches except; so does a string not
		// listed (matchValue).
		if fi.kind != qdrant.PayloadSchemaType_Keyword {
			return nil, false
		}
		out.or(fi.otherTyped)
		listed := make(map[string]struct{}, len(v.ExceptKeywords.GetStrings()))
		for _, s := range v.ExceptKeywords.GetStrings() {
			listed[s] = struct{}{}
		}
		for s, p := range fi.strs {
			if _, in := listed[s]; !in {
				mark(p)
			}
		}
	case *qdrant.Match_ExceptIntegers:
		if fi.kind != qdrant.PayloadSchemaType_Integer {
			return nil, false
		}
		out.or(fi.otherTyped)
		listed := make(map[int64]struct{}, len(v.ExceptIntegers.GetIntegers()))
		for _, n := range v.ExceptIntegers.GetIntegers() {
			listed[n] = struct{}{}
		}
		for n, p := range fi.ints {
			if _, in := listed[n]; !in {
				mark(p)
			}
		}
	case *qdrant.Match_Boolean:
		if fi.kind != qdrant.PayloadSchemaType_Bool {
			return nil, false
		}
		if v.Boolean {
			mark(fi.bools[1])
		} else {
			mark(fi.bools[0])
		}
	default:
		return nil, false
	}
	return out, true
}

// rangeBits answers a numeric range from the index, if it can.
func (fi *fieldIndex) rangeBits(r *qdrant.Range, nslots int) (bitset, bool) {
	if fi.kind != qdrant.PayloadSchemaType_Integer && fi.kind != qdrant.PayloadSchemaType_Float {
		return nil, false
	}
	out := newBitset(max(nslots, len(fi.nums)))
	b := boundsOf(r)
	if b.all {
		for slot, nums := range fi.nums {
			if len(nums) > 0 {
				out.set(uint32(slot))
			}
		}
		return out, true
	}
	// /v1/stats counts a hundred ranges per call over every slot: each word
	// of 64 slots is built without a branch (NaN, for no number or several,
	// compares false), then the slots with several numbers are tested.
	for w := 0; w*64 < len(fi.num1); w++ {
		var word uint64
		for i, x := range fi.num1[w*64 : min(w*64+64, len(fi.num1))] {
			word |= b2u(x >= b.lo) & b2u(x <= b.hi) << uint(i)
		}
		out[w] |= word
	}
	fi.multi.each(0, uint32(len(fi.nums)), func(slot uint32) {
		for _, x := range fi.nums[slot] {
			if x >= b.lo && x <= b.hi {
				out.set(slot)
				return
			}
		}
	})
	return out, true
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// bounds is a numeric range as the closed interval [lo, hi]: an open
// bound is moved to the next float inward, which excludes exactly the
// bound itself.
type bounds struct {
	lo, hi float64
	all    bool // no bound at all: every number, NaN included, as inRange
}

func boundsOf(r *qdrant.Range) bounds {
	b := bounds{lo: math.Inf(-1), hi: math.Inf(1)}
	if r.Gte != nil {
		b.lo = math.Max(b.lo, *r.Gte)
	}
	if r.Gt != nil {
		b.lo = math.Max(b.lo, math.Nextafter(*r.Gt, math.Inf(1)))
		if math.IsInf(*r.Gt, 1) {
			b.lo = math.NaN() // nothing is above +Inf
		}
	}
	if r.Lte != nil {
		b.hi = math.Min(b.hi, *r.Lte)
	}
	if r.Lt != nil {
		b.hi = math.Min(b.hi, math.Nextafter(*r.Lt, math.Inf(-1)))
		if math.IsInf(*r.Lt, -1) {
			b.hi = math.NaN() // nothing is below -Inf
		}
	}
	b.all = r.Gte == nil && r.Gt == nil && r.Lte == nil && r.Lt == nil
	return b
}

// datetimeBits answers a datetime range from the index, if it can.
func (fi *fieldIndex) datetimeBits(r microRange, nslots int) (bitset, bool) {
	if fi.kind != qdrant.PayloadSchemaType_Datetime {
		return nil, false
	}
	out := newBitset(nslots)
	for slot, ts := range fi.times {
		for _, t := range ts {
			if r.contains(t) {
				out.set(uint32(slot))
				break
			}
		}
	}
	return out, true
}
