package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"

	"github.com/memrank/memrank/internal/jsonpath"
)

// Grouping (Points/QueryGroups and Points/SearchGroups) ports Qdrant
// v1.19's group-by run:
//
//   - the request becomes a universal query
//     (lib/collection/src/grouping/group_by.rs, GroupRequest), validated
//     and resolved once;
//   - GroupByDriver (lib/shard/src/grouping/driver.rs) then asks that query
//     for candidates up to 5 times to discover groups (leaving out groups
//     already full, with match except, and points already seen) and up to 5
//     more times to fill the best groups that are not full (match any),
//     each time for groups × group_size points, only points that have the
//     key (must_not is_empty), prefetch limits multiplied by group_size
//     (shape_candidates_query in lib/shard/src/grouping/mod.rs); it stops
//     as soon as the best `limit` groups are full, or a request finds
//     nothing new;
//   - GroupsAggregator (lib/shard/src/grouping/aggregator.rs) files each
//     candidate under every distinct value of the key (arrays flattened one
//     level); a value must be a string or an integer (GroupId in
//     lib/segment/src/data_types/groups.rs), and a point with any other
//     value (float, bool, null, object) is left out entirely;
//   - the best `limit` groups are ordered by their best hit (the query's
//     order: larger first for similarity, fusion and order_by desc, smaller
//     first for distances, order_by asc and no query; none for sample), the
//     hits of a group likewise, at most group_size of them; payload and
//     vectors are then read for the hits only.
//
// Where Qdrant leaves ties to hash-map order, groups keep the order in which
// they were found and hits the order in which they came.

// Defaults of QueryPointGroups (CollectionQueryRequest::DEFAULT_GROUP_SIZE
// and DEFAULT_LIMIT).
const defaultGroupSize = 3

// Request budgets of GroupByDriver (RequestBudget::default).
const (
	groupCollectRequests = 5
	groupFillRequests    = 5
)

// groupSpec is a converted QueryPointGroups or SearchPointGroups.
type groupSpec struct {
	base      querySpec // root query; base.out is what the hits carry
	key       jsonpath.Path
	groupSize uint64
	groups    uint64
}

// groupKey is a GroupId: a string, a non-negative integer (NumberU64) or a
// negative one (NumberI64).
type groupKey struct {
	kind uint8 // 0 string, 1 unsigned, 2 negative integer
	s    string
	n    int64
}

func (k groupKey) proto() *qdrant.GroupId {
	switch k.kind {
	case 1:
		return &qdrant.GroupId{Kind: &qdrant.GroupId_UnsignedValue{UnsignedValue: uint64(k.n)}}
	case 2:
		return &qdrant.GroupId{Kind: &qdrant.GroupId_IntegerValue{IntegerValue: k.n}}
	}
	return &qdrant.GroupId{Kind: &qdrant.GroupId_StringValue{StringValue: k.s}}
}

// groupKeys returns the distinct keys of a payload in first-seen order; ok
// is false when a value cannot be a key (the point is then skipped).
func groupKeys(path jsonpath.Path, payload map[string]*qdrant.Value) (keys []groupKey, ok bool) {
	ok = true
	add := func(v *qdrant.Value) {
		var k groupKey
		switch x := v.GetKind().(type) {
		case *qdrant.Value_StringValue:
			k = groupKey{s: x.StringValue}
		case *qdrant.Value_IntegerValue:
			k = groupKey{kind: 1, n: x.IntegerValue}
			if x.IntegerValue < 0 {
				k.kind = 2
			}
		default:
			ok = false
			return
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	path.Get(payload, func(v *qdrant.Value) {
		if l, isList := v.GetKind().(*qdrant.Value_ListValue); isList {
			for _, e := range l.ListValue.GetValues() {
				add(e)
			}
			return
		}
		add(v)
	})
	if !ok {
		return nil, false
	}
	return keys, true
}

// resultOrder is query_result_order (lib/shard/src/query/mod.rs): +1 larger
// is better, -1 smaller is better, 0 no order (random sample).
func resultOrder(q scoring, m metric) int {
	switch q.kind {
	case kindNearest:
		if m.smallerBetter() {
			return -1
		}
		return 1
	case kindFusion:
		return 1
	case kindOrderBy:
		if q.orderBy.desc {
			return 1
		}
		return -1
	case kindSample:
		return 0
	}
	return -1 // no query: by id
}

// aggregator is GroupsAggregator.
type aggregator struct {
	maxGroups, groupSize int
	order                int
	keys                 []groupKey // in order of discovery
	hits                 map[groupKey][]cand
	full                 map[groupKey]bool
	best                 map[groupKey]cand
	seen                 map[uint32]bool // slots in any group
}

func newAggregator(groups, groupSize uint64, order int) *aggregator {
	clamp := func(n uint64) int { return int(min(n, 1<<30)) }
	return &aggregator{
		maxGroups: clamp(groups), groupSize: clamp(groupSize), order: order,
		hits: map[groupKey][]cand{}, full: map[groupKey]bool{}, best: map[groupKey]cand{}, seen: map[uint32]bool{},
	}
}

// better reports whether a ranks before b in the query's order.
func (a *aggregator) better(x, y cand) bool {
	switch a.order {
	case 1:
		return cmpCand(x, y) > 0
	case -1:
		return cmpCand(x, y) < 0
	}
	return false
}

func (a *aggregator) add(p cand, keys []groupKey) {
	for _, k := range keys {
		hs, known := a.hits[k]
		if !known {
			a.keys = append(a.keys, k)
		}
		i := slices.IndexFunc(hs, func(h cand) bool { return h.slot == p.slot })
		switch {
		case i < 0:
			hs = append(hs, p)
			a.seen[p.slot] = true
		case hs[i].version < p.version:
			hs[i] = p
		}
		a.hits[k] = hs
		if len(hs) == a.groupSize {
			a.full[k] = true
		}
		if b, ok := a.best[k]; !ok || a.better(p, b) {
			a.best[k] = p
		}
	}
}

// bestKeys is best_group_keys: the maxGroups groups with the best best hit.
func (a *aggregator) bestKeys() []groupKey {
	keys := slices.Clone(a.keys)
	slices.SortStableFunc(keys, func(x, y groupKey) int {
		bx, by := a.best[x], a.best[y]
		switch {
		case a.better(bx, by):
			return -1
		case a.better(by, bx):
			return 1
		}
		return 0
	})
	if len(keys) > a.maxGroups {
		keys = keys[:a.maxGroups]
	}
	return keys
}

func (a *aggregator) filledBest() int {
	n := 0
	for _, k := range a.bestKeys() {
		if a.full[k] {
			n++
		}
	}
	return n
}

// distill returns the best groups with their hits in order.
func (a *aggregator) distill() ([]groupKey, [][]cand) {
	keys := a.bestKeys()
	out := make([][]cand, len(keys))
	for i, k := range keys {
		hs := slices.Clone(a.hits[k])
		if a.order != 0 {
			slices.SortStableFunc(hs, func(x, y cand) int {
				switch {
				case a.better(x, y):
					return -1
				case a.better(y, x):
					return 1
				}
				return 0
			})
		}
		if len(hs) > a.groupSize {
			hs = hs[:a.groupSize]
		}
		out[i] = hs
	}
	return keys, out
}

// keyConditions builds the driver's key filters (except_on and match_on in
// lib/shard/src/grouping/mod.rs): one condition for the integer keys and
// one for the string keys, both required.
func keyConditions(key string, keys []groupKey, except bool) []*qdrant.Condition {
	var ints []int64
	var strs []string
	for _, k := range keys {
		if k.kind == 0 {
			strs = append(strs, k.s)
		} else {
			ints = append(ints, k.n)
		}
	}
	var out []*qdrant.Condition
	if len(ints) > 0 {
		if except {
			out = append(out, qdrant.NewMatchExceptInts(key, ints...))
		} else {
			out = append(out, qdrant.NewMatchInts(key, ints...))
		}
	}
	if len(strs) > 0 {
		if except {
			out = append(out, qdrant.NewMatchExceptKeywords(key, strs...))
		} else {
			out = append(out, qdrant.NewMatchKeywords(key, strs...))
		}
	}
	return out
}

// scalePrefetch copies a prefetch tree with every limit multiplied by n
// (increase_limit_for_group).
func scalePrefetch(ps []*stage, n uint64) []*stage {
	out := make([]*stage, len(ps))
	for i, p := range ps {
		c := *p
		c.limit = p.limit * n
		if n != 0 && c.limit/n != p.limit {
			c.limit = ^uint64(0)
		}
		c.prefetch = scalePrefetch(p.prefetch, n)
		out[i] = &c
	}
	return out
}

// groups runs a group-by request.
func (x *executor) groups(g *groupSpec) ([]*qdrant.PointGroup, error) {
	refs, err := x.prepare(&g.base)
	if err != nil {
		return nil, err
	}
	base := excludeIDs(refs, g.base.root.filter)
	agg := newAggregator(g.groups, g.groupSize, resultOrder(g.base.root.q, x.c.metric))
	keyName := g.key.String()
	candidates := g.groups * g.groupSize
	if g.groupSize != 0 && candidates/g.groupSize != g.groups {
		candidates = ^uint64(0)
	}
	spec := querySpec{root: g.base.root}
	spec.root.prefetch = scalePrefetch(g.base.root.prefetch, g.groupSize)
	spec.root.limit = candidates

	round := func(extra []*qdrant.Condition) (int, error) {
		f := base
		if len(extra) > 0 {
			f = mergeFilters(f, &qdrant.Filter{Must: extra})
		}
		if len(agg.seen) > 0 {
			ids := make([]*qdrant.PointId, 0, len(agg.seen))
			for slot := range agg.seen {
				ids = append(ids, x.c.ids[slot].Proto())
			}
			f = mergeFilters(f, &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewHasID(ids...)}})
		}
		f = mergeFilters(f, &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewIsEmpty(keyName)}})
		res, err := x.run(&spec, f)
		if err != nil {
			return 0, err
		}
		for _, p := range res {
			payload, err := x.c.payloadOf(x.pts, x.c.ids[p.slot])
			if err != nil {
				return 0, internal(err, "read point %s", x.c.ids[p.slot])
			}
			if keys, ok := groupKeys(g.key, payload); ok {
				agg.add(p, keys)
			}
		}
		return len(res), nil
	}

	if g.groups > 0 && g.groupSize > 0 {
		collected := false
		for range groupCollectRequests {
			var full []groupKey
			for _, k := range agg.keys {
				if agg.full[k] {
					full = append(full, k)
				}
			}
			n, err := round(keyConditions(keyName, full, true))
			if err != nil {
				return nil, err
			}
			if agg.filledBest() >= agg.maxGroups {
				collected = true
				break
			}
			if n == 0 {
				break
			}
		}
		for i := 0; !collected && i < groupFillRequests; i++ {
			var unfilled []groupKey
			for _, k := range agg.bestKeys() {
				if !agg.full[k] {
					unfilled = append(unfilled, k)
				}
			}
			n, err := round(keyConditions(keyName, unfilled, false))
			if err != nil {
				return nil, err
			}
			if agg.filledBest() >= agg.maxGroups || n == 0 {
				break
			}
		}
	}

	keys, hits := agg.distill()
	out := make([]*qdrant.PointGroup, len(keys))
	for i, k := range keys {
		pts, err := x.fill(hits[i], g.base.out)
		if err != nil {
			return nil, err
		}
		out[i] = &qdrant.PointGroup{Id: k.proto(), Hits: pts}
	}
	return out, nil
}

// groupCommon validates what QueryPointGroups and SearchPointGroups share.
func groupCommon(groupBy string, lookup *qdrant.WithLookup) (jsonpath.Path, error) {
	if groupBy == "" {
		return jsonpath.Path{}, validation("group_by", `value "" invalid, must be at least 1 characters`)
	}
	if lookup != nil {
		return jsonpath.Path{}, unimplemented("group with_lookup is not supported")
	}
	return parsePath(groupBy)
}

// groupSpecFromQuery converts a QueryPointGroups
// (src/common/inference/query_requests_grpc.rs
// convert_query_point_groups_from_grpc).
func groupSpecFromQuery(req *qdrant.QueryPointGroups) (*groupSpec, error) {
	switch {
	case req.GroupSize != nil && req.GetGroupSize() == 0:
		return nil, validation("group_size", "value 0 invalid, must be 1 or larger")
	case req.Limit != nil && req.GetLimit() == 0:
		return nil, validation("limit", "value 0 invalid, must be 1 or larger")
	case req.Timeout != nil && req.GetTimeout() == 0:
		return nil, validation("timeout", "value 0 invalid, must be 1 or larger")
	case req.GetShardKeySelector() != nil:
		return nil, unimplemented("shard keys are not supported")
	}
	key, err := groupCommon(req.GetGroupBy(), req.GetWithLookup())
	if err != nil {
		return nil, err
	}
	root, err := rootStage(req.GetQuery(), req.GetPrefetch(), req.Using, req.GetLookupFrom(), req.GetParams(), req.GetFilter(), req.ScoreThreshold, "")
	if err != nil {
		return nil, err
	}
	sel, err := convertPayloadSel(req.GetWithPayload(), false)
	if err != nil {
		return nil, err
	}
	g := &groupSpec{
		base:      querySpec{root: root, out: output{payload: sel, vector: wantVector(req.GetWithVectors())}},
		key:       key,
		groupSize: defaultGroupSize,
		groups:    defaultQueryLimit,
	}
	if req.GroupSize != nil {
		g.groupSize = req.GetGroupSize()
	}
	if req.Limit != nil {
		g.groups = req.GetLimit()
	}
	return g, nil
}

// groupSpecFromSearch converts a SearchPointGroups (lib/api/src/grpc/
// conversions.rs TryFrom<SearchPointGroups>; group_by.rs
// From<SearchGroupsRequestInternal>).
func groupSpecFromSearch(req *qdrant.SearchPointGroups) (*groupSpec, error) {
	switch {
	case req.GetGroupSize() == 0:
		return nil, validation("group_size", "value 0 invalid, must be 1 or larger")
	case req.GetLimit() == 0:
		return nil, validation("limit", "value 0 invalid, must be 1 or larger")
	}
	key, err := groupCommon(req.GetGroupBy(), req.GetWithLookup())
	if err != nil {
		return nil, err
	}
	root, err := nearestStage(req.GetVector(), req.GetSparseIndices(), req.GetVectorName(), req.GetParams(), req.GetFilter(), req.ScoreThreshold, req.Timeout, req.GetShardKeySelector(), "")
	if err != nil {
		return nil, err
	}
	sel, err := convertPayloadSel(req.GetWithPayload(), false)
	if err != nil {
		return nil, err
	}
	return &groupSpec{
		base:      querySpec{root: root, out: output{payload: sel, vector: wantVector(req.GetWithVectors())}},
		key:       key,
		groupSize: uint64(req.GetGroupSize()),
		groups:    uint64(req.GetLimit()),
	}, nil
}

func (db *DB) runGroups(ctx context.Context, name, what string, g *groupSpec) ([]*qdrant.PointGroup, error) {
	if bound := uint64(db.opts.MaxResults); g.groups > bound || g.groupSize > bound/max(1, g.groups) {
		return nil, validation("limit", fmt.Sprintf("limit x group_size (%d x %d) is beyond this store's bound of %d points per request", g.groups, g.groupSize, bound))
	}
	if err := db.bounded(&g.base); err != nil {
		return nil, err
	}
	var out []*qdrant.PointGroup
	err := db.read(name, func(c *collection, pts *bolt.Bucket) error {
		var err error
		out, err = (&executor{ctx: ctx, db: db, c: c, pts: pts}).groups(g)
		return err
	})
	if err != nil {
		return nil, asEngineError(err, what)
	}
	return out, nil
}

// QueryGroups is Points/QueryGroups: a universal query (prefetch, fusion,
// order_by, sample and every other form Query accepts here) whose results
// are grouped by a payload key. group_size defaults to 3, limit (the
// number of groups) to 10, with_payload to false. with_lookup answers
// Unimplemented.
func (db *DB) QueryGroups(ctx context.Context, req *qdrant.QueryPointGroups) ([]*qdrant.PointGroup, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	g, err := groupSpecFromQuery(req)
	if err != nil {
		return nil, err
	}
	return db.runGroups(ctx, req.GetCollectionName(), "query groups", g)
}

// SearchGroups is Points/SearchGroups: a nearest search grouped by a
// payload key; limit and group_size are required.
func (db *DB) SearchGroups(ctx context.Context, req *qdrant.SearchPointGroups) ([]*qdrant.PointGroup, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	g, err := groupSpecFromSearch(req)
	if err != nil {
		return nil, err
	}
	return db.runGroups(ctx, req.GetCollectionName(), "search groups", g)
}
