package store

import (
	"context"
	"fmt"
	"math"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"
)

// The universal query (Points/Query, and Search, SearchGroups and
// QueryGroups expressed as queries) follows Qdrant v1.19 on one local shard:
//
//   - conversion and validation: src/common/inference/query_requests_grpc.rs,
//     lib/collection/src/operations/universal_query/collection_query.rs
//     (CollectionQueryRequest::validation, try_into_shard_request,
//     exclude_referenced_ids) and the field rules of lib/api/build.rs;
//   - planning: lib/shard/src/query/planned_query.rs (leaves, the root
//     filter propagated into every leaf prefetch, limit + offset at the
//     root, MAX_PREFETCH_DEPTH) and lib/shard/src/query/validation.rs (RRF
//     weights);
//   - execution: lib/collection/src/shards/local_shard/query.rs
//     (recurse_prefetch, rescore, fusion_rescore, filter_with_sources_ids)
//     and lib/collection/src/collection/query.rs (intermediates_to_final_list:
//     fusion at the root, then offset and limit).
//
// The shape of a request:
//
//   - a stage (the root or a prefetch) without prefetches is a leaf: a
//     nearest search, an id-order scroll (no query), an order_by scroll or a
//     random sample, over the points that match the stage's filter merged
//     with every ancestor's filter;
//   - a stage with prefetches needs a query, which rescores the union of
//     what its prefetches found: nearest, order_by and sample look only at
//     those points (a has_id filter, nothing else), fusion (RRF or DBSF)
//     combines the lists by rank or normalised score;
//   - points a query refers to by id (nearest by id, in the root or in any
//     prefetch) are left out of every leaf, through the root filter;
//   - the root asks its sources for limit + offset points, then skips offset.
//
// Scores: nearest stages give Qdrant's score (similarity, or distance for
// Euclid and Manhattan); scrolls (no query, order_by, sample) give 1 with
// version 0, as local_shard/scroll.rs query_scroll does; fusion gives the
// fused score. Ties are broken by point id here, where Qdrant leaves the
// order of equal scores to hash-map iteration.

// defaultQueryLimit is CollectionQueryRequest::DEFAULT_LIMIT (also the
// default limit of a prefetch).
const defaultQueryLimit = 10

// maxPrefetchDepth is MAX_PREFETCH_DEPTH in planned_query.rs.
const maxPrefetchDepth = 64

// defaultRRFK is DEFAULT_RRF_K in lib/segment/src/common/reciprocal_rank_fusion.rs.
const defaultRRFK = 2

// scoreKind is what a stage's query does.
type scoreKind uint8

const (
	kindNone    scoreKind = iota // no query: points in id order
	kindNearest                  // nearest to a vector (given, or a stored point's)
	kindFusion                   // RRF or DBSF over the prefetches
	kindOrderBy                  // ordered by a payload value
	kindSample                   // a random sample
)

// scoring is a converted Query.
type scoring struct {
	kind    scoreKind
	vector  []float32 // nearest: as sent, then checked and preprocessed
	byID    *PointID  // nearest: the stored point whose vector is the query
	rrf     bool      // fusion: RRF (else DBSF)
	rrfK    int
	weights []float32 // fusion: RRF weights per prefetch; nil = all 1
	orderBy *orderBySpec
}

// stage is the root of a query or one of its prefetches.
type stage struct {
	prefetch  []*stage
	q         scoring
	filter    *qdrant.Filter
	threshold *float32
	limit     uint64
}

// querySpec is a converted universal query.
type querySpec struct {
	root   stage
	offset uint64
	out    output
}

// depth is ShardPrefetch::depth: 1 for a leaf prefetch.
func (s *stage) depth() int {
	d := 1
	for _, p := range s.prefetch {
		d = max(d, p.depth()+1)
	}
	return d
}

func (s *stage) prefetchDepth() int {
	d := 0
	for _, p := range s.prefetch {
		d = max(d, p.depth())
	}
	return d
}

// walk visits the stage and its prefetches, depth first, root first.
func (s *stage) walk(fn func(*stage) error) error {
	if err := fn(s); err != nil {
		return err
	}
	for _, p := range s.prefetch {
		if err := p.walk(fn); err != nil {
			return err
		}
	}
	return nil
}

// convertQuery converts a Query message (query_requests_grpc.rs
// convert_query_with_inferred); field is the request path of the query
// ("query", "prefetch[0].query").
func convertQuery(q *qdrant.Query, field string) (scoring, error) {
	switch v := q.GetVariant().(type) {
	case *qdrant.Query_Nearest:
		switch in := v.Nearest.GetVariant().(type) {
		case *qdrant.VectorInput_Dense:
			vec := in.Dense.GetData()
			if vec == nil {
				vec = []float32{}
			}
			return scoring{kind: kindNearest, vector: vec}, nil
		case *qdrant.VectorInput_Id:
			id, err := PointIDFromProto(in.Id)
			if err != nil {
				return scoring{}, err
			}
			return scoring{kind: kindNearest, byID: &id}, nil
		case *qdrant.VectorInput_Sparse:
			return scoring{}, unimplemented("Query with a sparse vector is not supported")
		case *qdrant.VectorInput_MultiDense:
			return scoring{}, unimplemented("Query with a multi vector is not supported")
		case *qdrant.VectorInput_Document, *qdrant.VectorInput_Image, *qdrant.VectorInput_Object:
			return scoring{}, unimplemented("Query with inference input (document, image, object) is not supported")
		}
		return scoring{}, invalidArg("VectorInput variant is missing")
	case *qdrant.Query_Fusion:
		switch v.Fusion {
		case qdrant.Fusion_RRF:
			return scoring{kind: kindFusion, rrf: true, rrfK: defaultRRFK}, nil
		case qdrant.Fusion_DBSF:
			return scoring{kind: kindFusion}, nil
		}
		return scoring{}, invalidArg("invalid fusion type value %d", int32(v.Fusion))
	case *qdrant.Query_Rrf:
		s := scoring{kind: kindFusion, rrf: true, rrfK: defaultRRFK}
		if k := v.Rrf.K; k != nil {
			if *k == 0 {
				return scoring{}, validation(field+".variant.k", "value 0 invalid, must be 1 or larger")
			}
			s.rrfK = int(*k)
		}
		if w := v.Rrf.GetWeights(); len(w) > 0 {
			s.weights = append([]float32(nil), w...)
		}
		return s, nil
	case *qdrant.Query_OrderBy:
		ob, err := convertOrderBy(v.OrderBy)
		if err != nil {
			return scoring{}, err
		}
		return scoring{kind: kindOrderBy, orderBy: ob}, nil
	case *qdrant.Query_Sample:
		if v.Sample != qdrant.Sample_Random {
			return scoring{}, invalidArg("invalid sample type value %d", int32(v.Sample))
		}
		return scoring{kind: kindSample}, nil
	case *qdrant.Query_NearestWithMmr:
		return scoring{}, unimplemented("Query nearest_with_mmr (MMR) is not supported")
	case *qdrant.Query_Recommend:
		return scoring{}, unimplemented("Query recommend is not supported")
	case *qdrant.Query_Discover:
		return scoring{}, unimplemented("Query discover is not supported")
	case *qdrant.Query_Context:
		return scoring{}, unimplemented("Query context is not supported")
	case *qdrant.Query_Formula:
		return scoring{}, unimplemented("Query formula is not supported")
	case *qdrant.Query_RelevanceFeedback:
		return scoring{}, unimplemented("Query relevance_feedback is not supported")
	}
	// A Query message with no variant set: Qdrant rejects it as malformed.
	return scoring{}, invalidArg("Query variant is missing")
}

// checkFilter validates a filter without resolving indexes, so conversion
// errors (bad paths, geo, malformed matches) come before anything runs,
// as Qdrant's gRPC conversion reports them.
func checkFilter(f *qdrant.Filter, field string) error {
	_, err := filterCompiler{}.compile(f, field)
	return err
}

// stageCommon converts what the root and a prefetch share.
func stageCommon(q *qdrant.Query, using *string, lookup *qdrant.LookupLocation, params *qdrant.SearchParams, filter *qdrant.Filter, field string) (stage, error) {
	if err := checkSearchParams(params, field); err != nil {
		return stage{}, err
	}
	if lookup != nil {
		return stage{}, unimplemented("Query lookup_from is not supported")
	}
	if err := checkFilter(filter, field+"filter"); err != nil {
		return stage{}, err
	}
	s := stage{filter: filter}
	if q != nil {
		var err error
		if s.q, err = convertQuery(q, field+"query"); err != nil {
			return stage{}, err
		}
	}
	// Fusion with a named vector is refused by validation (below); any
	// other use of a name fails here, where the only vector is unnamed.
	if n := using; n != nil && *n != "" && s.q.kind != kindFusion {
		return stage{}, wrongInput("Not existing vector name error: %s", *n)
	}
	return s, nil
}

func convertPrefetch(p *qdrant.PrefetchQuery, field string, depth int) (*stage, error) {
	if depth > maxPrefetchDepth {
		// Past this the planner refuses the request anyway; stopping here
		// bounds the recursion of a hostile message.
		return nil, wrongInput("Validation failed: prefetches depth %d exceeds max depth %d", depth, maxPrefetchDepth)
	}
	if p.Limit != nil && p.GetLimit() == 0 {
		return nil, validation(field+"limit", "value 0 invalid, must be 1 or larger")
	}
	s, err := stageCommon(p.GetQuery(), p.Using, p.GetLookupFrom(), p.GetParams(), p.GetFilter(), field)
	if err != nil {
		return nil, err
	}
	if s.q.kind == kindFusion && p.GetUsing() != "" {
		return nil, badRequest("Fusion queries cannot be combined with the 'using' field.")
	}
	s.threshold = p.ScoreThreshold
	s.limit = defaultQueryLimit
	if p.Limit != nil {
		s.limit = p.GetLimit()
	}
	for i, pp := range p.GetPrefetch() {
		c, err := convertPrefetch(pp, fmt.Sprintf("%sprefetch[%d].", field, i), depth+1)
		if err != nil {
			return nil, err
		}
		s.prefetch = append(s.prefetch, c)
	}
	return &s, nil
}

// rootStage converts the root of a QueryPoints or QueryPointGroups.
func rootStage(q *qdrant.Query, prefetch []*qdrant.PrefetchQuery, using *string, lookup *qdrant.LookupLocation, params *qdrant.SearchParams, filter *qdrant.Filter, threshold *float32, field string) (stage, error) {
	s, err := stageCommon(q, using, lookup, params, filter, field)
	if err != nil {
		return stage{}, err
	}
	if s.q.kind == kindFusion && using != nil && *using != "" {
		return stage{}, badRequest("Fusion queries cannot be combined with the 'using' field.")
	}
	s.threshold = threshold
	for i, p := range prefetch {
		c, err := convertPrefetch(p, fmt.Sprintf("%sprefetch[%d].", field, i), 1)
		if err != nil {
			return stage{}, err
		}
		s.prefetch = append(s.prefetch, c)
	}
	return s, nil
}

// querySpecFromQuery validates and converts a QueryPoints. field is the
// request's path inside a batch ("query_points[2]."), empty otherwise.
func querySpecFromQuery(req *qdrant.QueryPoints, field string) (*querySpec, error) {
	if field != "" {
		if err := validateNameField(req.GetCollectionName(), field+"collection_name", false); err != nil {
			return nil, err
		}
	}
	if req.Limit != nil && req.GetLimit() == 0 {
		return nil, validation(field+"limit", "value 0 invalid, must be 1 or larger")
	}
	if req.Timeout != nil && req.GetTimeout() == 0 {
		return nil, validation(field+"timeout", "value 0 invalid, must be 1 or larger")
	}
	if req.GetShardKeySelector() != nil {
		return nil, unimplemented("shard keys are not supported")
	}
	root, err := rootStage(req.GetQuery(), req.GetPrefetch(), req.Using, req.GetLookupFrom(), req.GetParams(), req.GetFilter(), req.ScoreThreshold, field)
	if err != nil {
		return nil, err
	}
	root.limit = defaultQueryLimit
	if req.Limit != nil {
		root.limit = req.GetLimit()
	}
	sel, err := convertPayloadSel(req.GetWithPayload(), false)
	if err != nil {
		return nil, err
	}
	return &querySpec{root: root, offset: req.GetOffset(), out: output{payload: sel, vector: wantVector(req.GetWithVectors())}}, nil
}

// querySpecFromSearch validates and converts a SearchPoints (a nearest
// query, lib/shard/src/query/conversions.rs From<SearchRequestInternal>).
// field as for querySpecFromQuery; like Qdrant, a batch validates its inner
// requests, collection name included, though it searches the batch's
// collection.
func querySpecFromSearch(req *qdrant.SearchPoints, field string) (*querySpec, error) {
	if field != "" {
		if err := validateNameField(req.GetCollectionName(), field+"collection_name", false); err != nil {
			return nil, err
		}
	}
	if req.GetLimit() == 0 {
		return nil, validation(field+"limit", "value 0 invalid, must be 1 or larger")
	}
	s, err := nearestStage(req.GetVector(), req.GetSparseIndices(), req.GetVectorName(), req.GetParams(), req.GetFilter(), req.ScoreThreshold, req.Timeout, req.GetShardKeySelector(), field)
	if err != nil {
		return nil, err
	}
	s.limit = req.GetLimit()
	sel, err := convertPayloadSel(req.GetWithPayload(), false)
	if err != nil {
		return nil, err
	}
	return &querySpec{root: s, offset: req.GetOffset(), out: output{payload: sel, vector: wantVector(req.GetWithVectors())}}, nil
}

// nearestStage converts the search part of SearchPoints and SearchPointGroups.
func nearestStage(vec []float32, sparse *qdrant.SparseIndices, name string, params *qdrant.SearchParams, filter *qdrant.Filter, threshold *float32, timeout *uint64, shardKeys *qdrant.ShardKeySelector, field string) (stage, error) {
	if err := checkSearchParams(params, field); err != nil {
		return stage{}, err
	}
	if timeout != nil && *timeout == 0 {
		return stage{}, validation(field+"timeout", "value 0 invalid, must be 1 or larger")
	}
	if sparse != nil {
		return stage{}, unimplemented("sparse vectors are not supported")
	}
	if shardKeys != nil {
		return stage{}, unimplemented("shard keys are not supported")
	}
	if name != "" {
		return stage{}, wrongInput("Not existing vector name error: %s", name)
	}
	if err := checkFilter(filter, field+"filter"); err != nil {
		return stage{}, err
	}
	if vec == nil {
		vec = []float32{}
	}
	return stage{q: scoring{kind: kindNearest, vector: vec}, filter: filter, threshold: threshold}, nil
}

// cand is a point on its way through a query: its slot, Qdrant's score and
// version, and the order value when an order_by stage produced it.
type cand struct {
	slot    uint32
	score   float32
	version uint64
	order   *orderValue
}

// cmpScore is OrderedFloat's order: NaN above everything, equal to itself.
func cmpScore(a, b float32) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpCand is ScoredPoint's Ord (lib/segment/src/types.rs): by order value
// when there is one (a point with one ranks above a point without), else by
// score.
func cmpCand(a, b cand) int {
	switch {
	case a.order == nil && b.order == nil:
		return cmpScore(a.score, b.score)
	case b.order == nil:
		return 1
	case a.order == nil:
		return -1
	}
	return a.order.cmp(*b.order)
}

// executor runs converted queries against one collection inside the
// caller's read lock and transaction.
type executor struct {
	ctx context.Context
	db  *DB
	c   *collection
	pts *bolt.Bucket
}

// prepare resolves and checks everything a query refers to before any of
// it runs, in Qdrant's order: referenced point ids (NotFound), request
// validation, planning, then vectors and order_by indexes. It returns the
// ids of the referenced points, which every leaf leaves out.
func (x *executor) prepare(s *querySpec) ([]PointID, error) {
	c := x.c
	var refs []PointID
	seen := map[PointID]bool{}
	err := s.root.walk(func(st *stage) error {
		if st.q.byID == nil {
			return nil
		}
		slot, ok := c.slots[*st.q.byID]
		if !ok {
			return pointNotFound(*st.q.byID)
		}
		st.q.vector = append([]float32(nil), c.vectors.at(slot)...)
		if !seen[*st.q.byID] {
			seen[*st.q.byID] = true
			refs = append(refs, *st.q.byID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.root.walk(validateStage); err != nil {
		return nil, err
	}
	if d := s.root.prefetchDepth(); d > maxPrefetchDepth {
		return nil, wrongInput("Validation failed: prefetches depth %d exceeds max depth %d", d, maxPrefetchDepth)
	}
	if err := planCheck(&s.root); err != nil {
		return nil, err
	}
	err = s.root.walk(func(st *stage) error {
		switch {
		case st.q.kind == kindNearest && st.q.byID == nil:
			v, err := c.checkVector(st.q.vector)
			if err != nil {
				return err
			}
			st.q.vector = v
		case st.q.kind == kindOrderBy:
			if _, err := c.orderIndex(st.q.orderBy); err != nil {
				return err
			}
		}
		return nil
	})
	return refs, err
}

// validateStage is CollectionQueryRequest::validation.
func validateStage(st *stage) error {
	if len(st.prefetch) > 0 && st.q.kind == kindNone {
		return badRequest("A query is needed to merge the prefetches. Can't have prefetches without defining a query.")
	}
	if st.threshold != nil {
		switch st.q.kind {
		case kindOrderBy:
			return badRequest("Can't use score_threshold with an order_by query.")
		case kindNone:
			return badRequest("A query is needed to use the score_threshold. Can't have score_threshold without defining a query.")
		}
	}
	return nil
}

// planCheck is what PlannedQuery refuses: fusion in a leaf, and RRF weights
// that do not match the number of prefetches (MergePlan::validate). Nested
// prefetches are planned before the stage that merges them.
func planCheck(st *stage) error {
	for _, p := range st.prefetch {
		if err := planCheck(p); err != nil {
			return err
		}
	}
	if st.q.kind != kindFusion {
		return nil
	}
	if len(st.prefetch) == 0 {
		return wrongInput("Validation failed: cannot apply Fusion without prefetches")
	}
	if st.q.weights != nil && len(st.q.weights) != len(st.prefetch) {
		return wrongInput("Validation failed: RRF weights length (%d) does not match number of prefetches (%d)", len(st.q.weights), len(st.prefetch))
	}
	return nil
}

// excludeIDs is exclude_referenced_ids: must_not has_id(ids), merged in
// front of the filter.
func excludeIDs(ids []PointID, f *qdrant.Filter) *qdrant.Filter {
	if len(ids) == 0 {
		return f
	}
	pids := make([]*qdrant.PointId, len(ids))
	for i, id := range ids {
		pids[i] = id.Proto()
	}
	return mergeFilters(&qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewHasID(pids...)}}, f)
}

// mergeFilters is Filter::merge_owned (lib/segment/src/types.rs): the
// condition lists are concatenated and min_should keeps the larger count.
// Note what that means for should: two filters' should lists become one, so
// "any of a" and "any of b" become "any of a or b". That is Qdrant's
// behaviour when a root filter meets a prefetch filter, kept here on
// purpose. Neither input is modified.
func mergeFilters(a, b *qdrant.Filter) *qdrant.Filter {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	cat := func(x, y []*qdrant.Condition) []*qdrant.Condition {
		if len(x)+len(y) == 0 {
			return nil
		}
		return append(append(make([]*qdrant.Condition, 0, len(x)+len(y)), x...), y...)
	}
	out := &qdrant.Filter{
		Should:  cat(a.GetShould(), b.GetShould()),
		Must:    cat(a.GetMust(), b.GetMust()),
		MustNot: cat(a.GetMustNot(), b.GetMustNot()),
	}
	switch am, bm := a.GetMinShould(), b.GetMinShould(); {
	case am != nil && bm != nil:
		out.MinShould = &qdrant.MinShould{Conditions: cat(am.GetConditions(), bm.GetConditions()), MinCount: max(am.GetMinCount(), bm.GetMinCount())}
	case am != nil:
		out.MinShould = am
	case bm != nil:
		out.MinShould = bm
	}
	return out
}

func satAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}

// run executes a prepared query: the root's candidates, offset skipped and
// limit applied. rootFilter is the root filter with the referenced ids
// excluded.
func (x *executor) run(s *querySpec, rootFilter *qdrant.Filter) ([]cand, error) {
	offset := s.offset
	if s.root.q.kind == kindSample && len(s.root.prefetch) == 0 {
		// try_into_shard_request: "Ignore offset with random query, since
		// output is not stable."
		offset = 0
	}
	take := satAdd(s.root.limit, offset)
	var res []cand
	var err error
	if len(s.root.prefetch) == 0 {
		res, err = x.leaf(s.root.q, rootFilter, s.root.threshold, take)
	} else {
		var sources [][]cand
		if sources, err = x.sources(s.root.prefetch, rootFilter); err != nil {
			return nil, err
		}
		if s.root.q.kind == kindFusion {
			// Fusion at the root (intermediates_to_final_list): no cut to
			// the limit before the offset, threshold as take_while.
			res = fuse(x.c, s.root.q, sources)
			res = cutThreshold(res, s.root.threshold)
		} else {
			res, err = x.rescore(s.root.q, sources, s.root.threshold, take)
		}
	}
	if err != nil {
		return nil, err
	}
	if uint64(len(res)) <= offset {
		return []cand{}, nil
	}
	res = res[offset:]
	if uint64(len(res)) > s.root.limit {
		res = res[:s.root.limit]
	}
	return res, nil
}

// sources runs prefetches, each with the propagated filter merged into its
// own (recurse_prefetches).
func (x *executor) sources(ps []*stage, propagate *qdrant.Filter) ([][]cand, error) {
	out := make([][]cand, 0, len(ps))
	for _, p := range ps {
		f := mergeFilters(propagate, p.filter)
		var res []cand
		var err error
		if len(p.prefetch) == 0 {
			res, err = x.leaf(p.q, f, p.threshold, p.limit)
		} else {
			var inner [][]cand
			if inner, err = x.sources(p.prefetch, f); err != nil {
				return nil, err
			}
			res, err = x.rescore(p.q, inner, p.threshold, p.limit)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// leaf runs a stage without prefetches over the points matching filter
// (leaf_source_from_scoring_query).
func (x *executor) leaf(q scoring, filter *qdrant.Filter, threshold *float32, limit uint64) ([]cand, error) {
	c := x.c
	f, err := (filterCompiler{c: c}).compile(filter, "filter")
	if err != nil {
		return nil, err
	}
	k := int(min(limit, uint64(c.nlive)))
	if k == 0 {
		return []cand{}, nil
	}
	if q.kind == kindNone {
		hits, err := c.idOrder(x.ctx, f, x.pts, k)
		if err != nil {
			return nil, err
		}
		out := make([]cand, len(hits))
		for i, h := range hits {
			out[i] = cand{slot: h.slot, score: 1}
		}
		return out, nil
	}
	var allowed bitset
	if f != nil {
		if allowed, err = c.filterSlots(x.ctx, f, x.pts); err != nil {
			return nil, err
		}
	}
	return x.score(q, allowed, threshold, k)
}

// rescore runs a query over the union of its prefetches' results (rescore
// in local_shard/query.rs).
func (x *executor) rescore(q scoring, sources [][]cand, threshold *float32, limit uint64) ([]cand, error) {
	if q.kind == kindFusion {
		res := cutThreshold(fuse(x.c, q, sources), threshold)
		if uint64(len(res)) > limit {
			res = res[:limit]
		}
		return res, nil
	}
	allowed := newBitset(len(x.c.ids))
	n := 0
	for _, src := range sources {
		for _, p := range src {
			if !allowed.has(p.slot) {
				allowed.set(p.slot)
				n++
			}
		}
	}
	k := int(min(limit, uint64(n)))
	if k == 0 {
		return []cand{}, nil
	}
	if q.kind == kindOrderBy || q.kind == kindSample {
		// Scrolls ignore score_threshold (all their scores are 1).
		threshold = nil
	}
	return x.score(q, allowed, threshold, k)
}

// score runs a non-fusion query over allowed (nil: every live point).
func (x *executor) score(q scoring, allowed bitset, threshold *float32, k int) ([]cand, error) {
	c := x.c
	switch q.kind {
	case kindNearest:
		hits, err := c.scan(x.ctx, q.vector, allowed, -1, threshold, k, x.db.opts.SearchWorkers)
		if err != nil {
			return nil, err
		}
		out := make([]cand, len(hits))
		for i, h := range hits {
			out[i] = cand{slot: h.slot, score: h.score, version: c.versions[h.slot]}
		}
		return out, nil
	case kindOrderBy:
		return c.orderScan(x.ctx, q.orderBy, allowed, k)
	case kindSample:
		return x.db.sample(c, allowed, k), nil
	}
	// kindNone over prefetches is refused by validation; fusion is merged
	// by the callers.
	return nil, internal(fmt.Errorf("query kind %d", q.kind), "score")
}

// cutThreshold keeps the leading points scoring at least t (fusion applies
// its threshold as take_while(score >= t), not strictly).
func cutThreshold(res []cand, t *float32) []cand {
	if t == nil {
		return res
	}
	for i, p := range res {
		if !(p.score >= *t) {
			return res[:i]
		}
	}
	return res
}

// fill turns candidates into ScoredPoints with what out asks for.
func (x *executor) fill(res []cand, out output) ([]*qdrant.ScoredPoint, error) {
	pts := make([]*qdrant.ScoredPoint, 0, len(res))
	out.wire = wireReply(x.ctx)
	for _, p := range res {
		f, err := x.c.fill(x.pts, p.slot, out)
		if err != nil {
			return nil, err
		}
		sp := f.scored(x.c.ids[p.slot].Proto(), p.score, p.version)
		if p.order != nil {
			sp.OrderValue = p.order.proto()
		}
		pts = append(pts, sp)
	}
	return pts, nil
}

// query prepares, runs and fills one universal query.
func (x *executor) query(s *querySpec) ([]*qdrant.ScoredPoint, error) {
	refs, err := x.prepare(s)
	if err != nil {
		return nil, err
	}
	res, err := x.run(s, excludeIDs(refs, s.root.filter))
	if err != nil {
		return nil, err
	}
	return x.fill(res, s.out)
}
