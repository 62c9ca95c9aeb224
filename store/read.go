package store

import (
	"bytes"
	"context"
	"errors"
	"slices"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"

	"github.com/memrank/memrank/internal/jsonpath"
)

// payloadSel is a resolved WithPayloadSelector.
type payloadSel struct {
	enabled bool
	include []jsonpath.Path
	exclude []jsonpath.Path
}

func convertPayloadSel(s *qdrant.WithPayloadSelector, def bool) (payloadSel, error) {
	if s == nil {
		return payloadSel{enabled: def}, nil
	}
	parse := func(fields []string) ([]jsonpath.Path, error) {
		out := make([]jsonpath.Path, 0, len(fields))
		for _, f := range fields {
			p, err := parsePath(f)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	}
	switch o := s.GetSelectorOptions().(type) {
	case *qdrant.WithPayloadSelector_Enable:
		return payloadSel{enabled: o.Enable}, nil
	case *qdrant.WithPayloadSelector_Include:
		paths, err := parse(o.Include.GetFields())
		return payloadSel{enabled: true, include: paths}, err
	case *qdrant.WithPayloadSelector_Exclude:
		paths, err := parse(o.Exclude.GetFields())
		return payloadSel{enabled: true, exclude: paths}, err
	}
	return payloadSel{}, invalidArg("No PayloadSelector")
}

func (s payloadSel) apply(fields map[string]*qdrant.Value) map[string]*qdrant.Value {
	switch {
	case s.include != nil:
		return jsonpath.Include(fields, s.include)
	case s.exclude != nil:
		return jsonpath.Exclude(fields, s.exclude)
	}
	return fields
}

// whole: the selection is the whole payload.
func (s payloadSel) whole() bool { return s.enabled && s.include == nil && s.exclude == nil }

// wantVector resolves a WithVectorsSelector: true, or a name list that has
// the unnamed vector "".
func wantVector(s *qdrant.WithVectorsSelector) bool {
	switch o := s.GetSelectorOptions().(type) {
	case *qdrant.WithVectorsSelector_Enable:
		return o.Enable
	case *qdrant.WithVectorsSelector_Include:
		for _, n := range o.Include.GetNames() {
			if n == "" {
				return true
			}
		}
	}
	return false
}

// output fetches what a result point carries besides its id.
type output struct {
	payload payloadSel
	vector  bool
	// wire: the result is marshalled for a gRPC reply (see forWire), so a
	// whole payload may be passed on as its stored bytes.
	wire bool
}

// filled is what fill read of a point: its payload either decoded or, for a
// reply, as wire bytes (see wirePayload), and its vector.
type filled struct {
	payload map[string]*qdrant.Value
	wire    []byte
	vec     *qdrant.VectorsOutput
}

// scored is a result point of a query or search.
func (f filled) scored(id *qdrant.PointId, score float32, version uint64) *qdrant.ScoredPoint {
	p := &qdrant.ScoredPoint{Id: id, Payload: f.payload, Score: score, Version: version, Vectors: f.vec}
	if f.wire != nil {
		p.ProtoReflect().SetUnknown(f.wire)
	}
	return p
}

// retrieved is a result point of a get or scroll.
func (f filled) retrieved(id *qdrant.PointId) *qdrant.RetrievedPoint {
	p := &qdrant.RetrievedPoint{Id: id, Payload: f.payload, Vectors: f.vec}
	if f.wire != nil {
		p.ProtoReflect().SetUnknown(f.wire)
	}
	return p
}

func (c *collection) fill(pts *bolt.Bucket, slot uint32, out output) (filled, error) {
	var f filled
	if out.payload.enabled {
		id := c.ids[slot]
		stored, err := c.storedPayload(pts, id)
		if err != nil {
			return f, internal(err, "read point %s", id)
		}
		if out.wire && out.payload.whole() {
			f.wire = wirePayload(stored)
		}
		if f.wire == nil && stored != nil {
			p, err := decodePayload(stored)
			if err != nil {
				return f, internal(err, "read point %s", id)
			}
			f.payload = out.payload.apply(p)
		}
	}
	if out.vector {
		data := append([]float32(nil), c.vectors.at(slot)...)
		f.vec = &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vector{Vector: &qdrant.VectorOutput{
			Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: data}},
		}}}
	}
	return f, nil
}

// read runs fn under the collection's read lock and a bbolt read
// transaction, so memory and disk are seen at the same instant. name may be
// an alias.
func (db *DB) read(name string, fn func(c *collection, pts *bolt.Bucket) error) error {
	c, unlock, err := db.readCollection(name)
	if err != nil {
		return err
	}
	defer unlock()
	return db.bolt.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCollections).Bucket([]byte(c.name))
		if b == nil {
			return collectionNotFound(name)
		}
		return fn(c, b.Bucket(bucketPoints))
	})
}

func asEngineError(err error, what string) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return internal(err, "%s", what)
}

// Get retrieves points by id in the requested order; missing ids are left
// out and repeated ids answered once. with_payload defaults to false.
func (db *DB) Get(ctx context.Context, req *qdrant.GetPoints) ([]*qdrant.RetrievedPoint, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	if req.GetShardKeySelector() != nil {
		return nil, unimplemented("shard keys are not supported")
	}
	ids := make([]PointID, 0, len(req.GetIds()))
	for _, p := range req.GetIds() {
		id, err := PointIDFromProto(p)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	sel, err := convertPayloadSel(req.GetWithPayload(), false)
	if err != nil {
		return nil, err
	}
	out := output{payload: sel, vector: wantVector(req.GetWithVectors()), wire: wireReply(ctx)}
	var res []*qdrant.RetrievedPoint
	err = db.read(req.GetCollectionName(), func(c *collection, pts *bolt.Bucket) error {
		seen := make(map[PointID]bool, min(len(ids), 1024))
		for _, id := range ids {
			slot, ok := c.slots[id]
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			f, err := c.fill(pts, slot, out)
			if err != nil {
				return err
			}
			res = append(res, f.retrieved(id.Proto()))
		}
		return nil
	})
	return res, asEngineError(err, "get points")
}

// Scroll pages through points in id order (numeric ids before UUIDs). The
// offset id is inclusive; next is the first id of the next page, nil on
// the last page. limit defaults to 10; with_payload defaults to true. With
// order_by, points come in the order of the key's range index (see
// orderby.go), offset is refused and there is no next page.
func (db *DB) Scroll(ctx context.Context, req *qdrant.ScrollPoints) (points []*qdrant.RetrievedPoint, next *qdrant.PointId, err error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, nil, err
	}
	if req.Limit != nil && req.GetLimit() == 0 {
		return nil, nil, validation("limit", "value 0 invalid, must be 1 or larger")
	}
	var orderBy *orderBySpec
	if req.GetOrderBy() != nil {
		var err error
		if orderBy, err = convertOrderBy(req.GetOrderBy()); err != nil {
			return nil, nil, err
		}
		if req.GetOffset() != nil {
			// lib/collection/src/shards/local_shard/shard_ops.rs scroll_by.
			return nil, nil, wrongInput("Cannot use an `offset` when using `order_by`. The alternative for paging is to use `order_by.start_from` and a filter to exclude the IDs that you've already seen for the `order_by.start_from` value")
		}
	}
	if req.GetShardKeySelector() != nil {
		return nil, nil, unimplemented("shard keys are not supported")
	}
	limit := 10
	if req.Limit != nil {
		// A page past the bound is cut to it; next_page_offset continues.
		limit = int(min(uint64(req.GetLimit()), uint64(db.opts.MaxResults)))
	}
	var start []byte
	if req.GetOffset() != nil {
		id, err := PointIDFromProto(req.GetOffset())
		if err != nil {
			return nil, nil, err
		}
		start = id.key()
	}
	sel, err := convertPayloadSel(req.GetWithPayload(), true)
	if err != nil {
		return nil, nil, err
	}
	out := output{payload: sel, vector: wantVector(req.GetWithVectors()), wire: wireReply(ctx)}
	err = db.read(req.GetCollectionName(), func(c *collection, pts *bolt.Bucket) error {
		f, err := (filterCompiler{c: c}).compile(req.GetFilter(), "filter")
		if err != nil {
			return err
		}
		if orderBy != nil {
			points, err = c.scrollOrdered(ctx, orderBy, f, pts, limit, out)
			return err
		}
		if f != nil {
			if b, ok := bitsOf(f, c); ok {
				allowed := append(bitset(nil), c.live...)
				allowed.and(b)
				if allowed.count() <= indexedScrollMax {
					points, next, err = c.scrollSlots(allowed, start, pts, limit, out)
					return err
				}
			}
		}
		cur := pts.Cursor()
		var k, v []byte
		if start != nil {
			k, v = cur.Seek(start)
		} else {
			k, v = cur.First()
		}
		for n := 0; k != nil; k, v = cur.Next() {
			if n%1024 == 0 && ctx.Err() != nil {
				return &Error{Kind: KindCanceled, Msg: ctx.Err().Error(), Err: ctx.Err()}
			}
			n++
			id, ok := idFromKey(k)
			if !ok {
				continue
			}
			slot, ok := c.slots[id]
			if !ok {
				continue
			}
			if f != nil {
				e := evalCtx{dim: c.dim, ctx: ctx}
				e.at(slot, id, c.current(id, v))
				match := f.eval(&e)
				if e.err != nil {
					return evalFailure(e.err, id)
				}
				if !match {
					continue
				}
			}
			if len(points) == limit {
				next = id.Proto()
				return nil
			}
			f, err := c.fill(pts, slot, out)
			if err != nil {
				return err
			}
			points = append(points, f.retrieved(id.Proto()))
		}
		return nil
	})
	if err != nil {
		return nil, nil, asEngineError(err, "scroll")
	}
	return points, next, nil
}

// indexedScrollMax is the largest set of points a filter answered by
// payload indexes may select for a scroll to read just those points, in id
// order, instead of walking the whole collection: a selective indexed
// filter (a text hash, a tenant's few points) then costs its matches, not
// the collection's size.
const indexedScrollMax = 8192

// scrollSlots is a scroll over the points in allowed, in id order from
// start.
func (c *collection) scrollSlots(allowed bitset, start []byte, pts *bolt.Bucket, limit int, out output) ([]*qdrant.RetrievedPoint, *qdrant.PointId, error) {
	type entry struct {
		key  []byte
		slot uint32
	}
	var entries []entry
	allowed.each(0, uint32(len(c.ids)), func(slot uint32) {
		k := c.ids[slot].key()
		if start == nil || bytes.Compare(k, start) >= 0 {
			entries = append(entries, entry{k, slot})
		}
	})
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
	var points []*qdrant.RetrievedPoint
	for _, e := range entries {
		id := c.ids[e.slot]
		if len(points) == limit {
			return points, id.Proto(), nil
		}
		f, err := c.fill(pts, e.slot, out)
		if err != nil {
			return nil, nil, err
		}
		points = append(points, f.retrieved(id.Proto()))
	}
	return points, nil, nil
}

// scrollOrdered is a scroll with order_by (internal_scroll_by_field in
// lib/collection/src/shards/local_shard/scroll.rs): the points in the
// order of the key's range index, a point once per value, each with its
// order_value. There is no next page offset: paging goes by start_from.
func (c *collection) scrollOrdered(ctx context.Context, o *orderBySpec, f node, pts *bolt.Bucket, limit int, out output) ([]*qdrant.RetrievedPoint, error) {
	if _, err := c.orderIndex(o); err != nil {
		return nil, err
	}
	var allowed bitset
	if f != nil {
		var err error
		if allowed, err = c.filterSlots(ctx, f, pts); err != nil {
			return nil, err
		}
	}
	res, err := c.orderScan(ctx, o, allowed, limit)
	if err != nil {
		return nil, err
	}
	points := make([]*qdrant.RetrievedPoint, 0, len(res))
	for _, p := range res {
		f, err := c.fill(pts, p.slot, out)
		if err != nil {
			return nil, err
		}
		rp := f.retrieved(c.ids[p.slot].Proto())
		rp.OrderValue = p.order.proto()
		points = append(points, rp)
	}
	return points, nil
}

// Count counts the points matching the filter (always exact).
func (db *DB) Count(ctx context.Context, req *qdrant.CountPoints) (uint64, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return 0, err
	}
	if req.GetShardKeySelector() != nil {
		return 0, unimplemented("shard keys are not supported")
	}
	var n uint64
	err := db.read(req.GetCollectionName(), func(c *collection, pts *bolt.Bucket) error {
		f, err := (filterCompiler{c: c}).compile(req.GetFilter(), "filter")
		if err != nil {
			return err
		}
		if f == nil {
			n = uint64(c.nlive)
			return nil
		}
		allowed, err := c.filterSlots(ctx, f, pts)
		if err != nil {
			return err
		}
		n = uint64(allowed.count())
		return nil
	})
	return n, asEngineError(err, "count")
}

// filterSlots evaluates a filter over every live point: with bit
// operations when indexes answer the whole filter, else point by point
// (reading payloads only for the conditions that need them).
func (c *collection) filterSlots(ctx context.Context, f node, pts *bolt.Bucket) (bitset, error) {
	if b, ok := bitsOf(f, c); ok {
		out := append(bitset(nil), c.live...)
		out.and(b)
		return out, nil
	}
	// The conditions of a must that the indexes (or has_id) answer narrow
	// the points the rest is evaluated on: a compare-and-set selecting one
	// id with a few unindexed conditions reads one payload, not every one.
	cand := c.live
	if and, ok := f.(andNode); ok {
		for _, child := range and {
			if b, ok := bitsOf(child, c); ok {
				cand = append(bitset(nil), cand...)
				cand.and(b)
			}
		}
	}
	out := newBitset(len(c.ids))
	var ferr error
	i := 0
	e := evalCtx{pts: pts, src: c, dim: c.dim, ctx: ctx}
	cand.each(0, uint32(len(c.ids)), func(slot uint32) {
		if ferr != nil {
			return
		}
		if i++; i%4096 == 0 && ctx.Err() != nil {
			ferr = &Error{Kind: KindCanceled, Msg: ctx.Err().Error(), Err: ctx.Err()}
			return
		}
		e.at(slot, c.ids[slot], nil)
		ok := f.eval(&e)
		if e.err != nil {
			ferr = evalFailure(e.err, c.ids[slot])
			return
		}
		if ok {
			out.set(slot)
		}
	})
	return out, ferr
}

// idOrder returns the first k matching points in id order.
func (c *collection) idOrder(ctx context.Context, f node, pts *bolt.Bucket, k int) ([]hit, error) {
	var hits []hit
	e := evalCtx{dim: c.dim, ctx: ctx}
	cur := pts.Cursor()
	for key, v := cur.First(); key != nil && len(hits) < k; key, v = cur.Next() {
		if ctx.Err() != nil {
			return nil, &Error{Kind: KindCanceled, Msg: ctx.Err().Error(), Err: ctx.Err()}
		}
		id, ok := idFromKey(key)
		if !ok {
			continue
		}
		slot, ok := c.slots[id]
		if !ok {
			continue
		}
		if f != nil {
			e.at(slot, id, c.current(id, v))
			match := f.eval(&e)
			if e.err != nil {
				return nil, evalFailure(e.err, id)
			}
			if !match {
				continue
			}
		}
		hits = append(hits, hit{slot: slot})
	}
	return hits, nil
}
