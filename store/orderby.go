package store

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/internal/jsonpath"
)

// order_by follows Qdrant v1.19:
//
//   - it needs a numeric ("range") payload index on the key: integer (with
//     range enabled, the default), float or datetime
//     (lib/segment/src/index/field_index/field_index_base/
//     field_index_read_impl.rs as_numeric; index_selector.rs), else Wrong
//     input naming the key (OperationError::MissingRangeIndexForOrderBy);
//   - the values are the ones that index holds: integers for an integer
//     index (a stored 3.0 is a float and is not there), integers and floats
//     as float64 for a float index, datetimes as microseconds for a
//     datetime index;
//   - a point appears once per distinct value it has, each time with that
//     value as its order_value (lib/segment/src/segment/read_view/
//     order_by.rs "Repeat a point for as many values as it has", and the
//     dedup in lib/collection/src/shards/local_shard/scroll.rs);
//   - start_from keeps values >= it (asc) or <= it (desc), compared as
//     OrderValue does (lib/segment/src/data_types/order_by.rs); without it
//     asc starts at f64::MIN and desc at NaN (above everything);
//   - results carry score 1 and version 0 (query_scroll).
//
// Equal values are ordered by point id (ascending for asc, descending for
// desc); Qdrant orders them by internal offset, which roughly follows
// insertion order.

// orderBySpec is a converted OrderBy.
type orderBySpec struct {
	path  jsonpath.Path
	desc  bool
	start orderValue
}

// orderValue is Qdrant's OrderValue: an integer or a float.
type orderValue struct {
	isFloat bool
	i       int64
	f       float64
}

func intOrder(i int64) orderValue     { return orderValue{i: i} }
func floatOrder(f float64) orderValue { return orderValue{isFloat: true, f: f} }

// cmpIntFloat compares an integer with a float exactly (num_cmp), NaN
// above every integer.
func cmpIntFloat(i int64, f float64) int {
	switch {
	case f != f:
		return -1
	case f >= 9223372036854775808.0: // 2^63: above every int64
		return -1
	case f < -9223372036854775808.0:
		return 1
	}
	t := math.Trunc(f)
	ti := int64(t)
	if i != ti {
		return cmp.Compare(i, ti)
	}
	// Same integer part: the fraction decides.
	switch {
	case f > t:
		return -1
	case f < t:
		return 1
	}
	return 0
}

// cmp is OrderValue's Ord: floats as OrderedFloat (NaN above everything),
// integers exactly, mixed pairs compared numerically.
func (a orderValue) cmp(b orderValue) int {
	switch {
	case a.isFloat && b.isFloat:
		an, bn := a.f != a.f, b.f != b.f
		switch {
		case an && bn:
			return 0
		case an:
			return 1
		case bn:
			return -1
		}
		return cmp.Compare(a.f, b.f)
	case !a.isFloat && !b.isFloat:
		return cmp.Compare(a.i, b.i)
	case a.isFloat:
		return -cmpIntFloat(b.i, a.f)
	}
	return cmpIntFloat(a.i, b.f)
}

func (a orderValue) proto() *qdrant.OrderValue {
	if a.isFloat {
		return &qdrant.OrderValue{Variant: &qdrant.OrderValue_Float{Float: a.f}}
	}
	return &qdrant.OrderValue{Variant: &qdrant.OrderValue_Int{Int: a.i}}
}

// convertOrderBy converts an OrderBy (lib/api/src/grpc/conversions.rs
// TryFrom<OrderBy>): an unknown direction is ascending, as Qdrant silently
// treats it.
func convertOrderBy(o *qdrant.OrderBy) (*orderBySpec, error) {
	p, err := parsePath(o.GetKey())
	if err != nil {
		return nil, err
	}
	s := &orderBySpec{path: p, desc: o.Direction != nil && o.GetDirection() == qdrant.Direction_Desc}
	switch v := o.GetStartFrom().GetValue().(type) {
	case *qdrant.StartFrom_Integer:
		s.start = intOrder(v.Integer)
	case *qdrant.StartFrom_Float:
		s.start = floatOrder(v.Float)
	case *qdrant.StartFrom_Timestamp:
		us, err := timestampMicros(v.Timestamp)
		if err != nil {
			return nil, err
		}
		s.start = intOrder(us)
	case *qdrant.StartFrom_Datetime:
		us, ok := parseDatetime(v.Datetime)
		if !ok {
			return nil, invalidArg("Malformed datetime: %q is not a datetime", v.Datetime)
		}
		s.start = intOrder(us)
	default:
		// OrderValue::MIN for asc, OrderValue::MAX (NaN) for desc.
		if s.desc {
			s.start = floatOrder(math.NaN())
		} else {
			s.start = floatOrder(-math.MaxFloat64)
		}
	}
	return s, nil
}

// orderIndex finds the numeric index order_by needs on the key.
func (c *collection) orderIndex(o *orderBySpec) (*fieldIndex, error) {
	fi := c.indexes[o.path.String()]
	if fi != nil {
		switch fi.kind {
		case qdrant.PayloadSchemaType_Float, qdrant.PayloadSchemaType_Datetime:
			return fi, nil
		case qdrant.PayloadSchemaType_Integer:
			if ip := fi.info.GetParams().GetIntegerIndexParams(); ip == nil || ip.Range == nil || ip.GetRange() {
				return fi, nil
			}
		}
	}
	return nil, wrongInput("No range index for `order_by` key: `%s`. Please create one to use `order_by`. "+
		"Check https://qdrant.tech/documentation/concepts/indexing/#payload-index to see which payload schemas support Range conditions", o.path.String())
}

// orderValues lists the distinct order values the index holds for a slot.
func (fi *fieldIndex) orderValues(slot uint32, dst []orderValue) []orderValue {
	dst = dst[:0]
	add := func(v orderValue) {
		for _, d := range dst {
			if d.cmp(v) == 0 && d.isFloat == v.isFloat {
				return
			}
		}
		dst = append(dst, v)
	}
	switch fi.kind {
	case qdrant.PayloadSchemaType_Integer:
		if int(slot) < len(fi.intVals) {
			for _, i := range fi.intVals[slot] {
				add(intOrder(i))
			}
		}
	case qdrant.PayloadSchemaType_Float:
		if int(slot) < len(fi.nums) {
			for _, f := range fi.nums[slot] {
				add(floatOrder(f))
			}
		}
	case qdrant.PayloadSchemaType_Datetime:
		if int(slot) < len(fi.times) {
			for _, t := range fi.times[slot] {
				add(intOrder(t))
			}
		}
	}
	return dst
}

// orderScan lists (value, point) pairs of the allowed points (nil: every
// live point) in order_by order and keeps the first k.
func (c *collection) orderScan(ctx context.Context, o *orderBySpec, allowed bitset, k int) ([]cand, error) {
	fi, err := c.orderIndex(o)
	if err != nil {
		return nil, err
	}
	cands := allowed
	if cands == nil {
		cands = c.live
	}
	type pair struct {
		v    orderValue
		slot uint32
	}
	var pairs []pair
	var vals []orderValue
	n := 0
	var cerr error
	cands.each(0, uint32(len(c.ids)), func(slot uint32) {
		if cerr != nil || !c.live.has(slot) {
			return
		}
		if n++; n%4096 == 0 && ctx.Err() != nil {
			cerr = &Error{Kind: KindCanceled, Msg: ctx.Err().Error(), Err: ctx.Err()}
			return
		}
		vals = fi.orderValues(slot, vals)
		for _, v := range vals {
			d := v.cmp(o.start)
			if (!o.desc && d >= 0) || (o.desc && d <= 0) {
				pairs = append(pairs, pair{v: v, slot: slot})
			}
		}
	})
	if cerr != nil {
		return nil, cerr
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		d := a.v.cmp(b.v)
		if d == 0 {
			d = c.ids[a.slot].Compare(c.ids[b.slot])
		}
		if o.desc {
			return -d
		}
		return d
	})
	if len(pairs) > k {
		pairs = pairs[:k]
	}
	out := make([]cand, len(pairs))
	for i, p := range pairs {
		v := p.v
		out[i] = cand{slot: p.slot, score: 1, order: &v}
	}
	return out, nil
}
