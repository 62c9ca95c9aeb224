package store

import (
	"context"
	"fmt"
	"math"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"
)

// Search is Points/Search: exact nearest neighbours of a raw vector. limit
// is required (at least 1); with_payload defaults to false.
func (db *DB) Search(ctx context.Context, req *qdrant.SearchPoints) ([]*qdrant.ScoredPoint, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	s, err := querySpecFromSearch(req, "")
	if err != nil {
		return nil, err
	}
	return db.queries(ctx, req.GetCollectionName(), "search", s)
}

// queries runs universal queries in one read transaction, so they all see
// the same state, and returns the first query's result.
func (db *DB) queries(ctx context.Context, name, what string, specs ...*querySpec) ([]*qdrant.ScoredPoint, error) {
	res, err := db.queryAll(ctx, name, what, specs)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

func (db *DB) queryAll(ctx context.Context, name, what string, specs []*querySpec) ([][]*qdrant.ScoredPoint, error) {
	total := uint64(0)
	for _, s := range specs {
		if err := db.bounded(s); err != nil {
			return nil, err
		}
		total += s.work()
	}
	// A batch, or a query's prefetches together, may ask for more than one
	// answer's bound, but not without limit: ten answers' worth.
	if bound := 10 * uint64(db.opts.MaxResults); total > bound {
		return nil, validation("searches", fmt.Sprintf("the batch asks for %d points in all (limits, offsets and prefetch limits), beyond this store's bound of %d per request", total, bound))
	}
	out := make([][]*qdrant.ScoredPoint, len(specs))
	err := db.read(name, func(c *collection, pts *bolt.Bucket) error {
		x := &executor{ctx: ctx, db: db, c: c, pts: pts}
		for i, s := range specs {
			res, err := x.query(s)
			if err != nil {
				return err
			}
			out[i] = res
		}
		return nil
	})
	if err != nil {
		return nil, asEngineError(err, what)
	}
	return out, nil
}

func checkSearchParams(p *qdrant.SearchParams, field string) error {
	if p == nil {
		return nil
	}
	if p.HnswEf != nil && p.GetHnswEf() == 0 {
		return validation(field+"params.hnsw_ef", "value 0 invalid, must be 1 or larger")
	}
	if p.GetIdf() != nil {
		return unimplemented("search params idf (sparse vectors) are not supported")
	}
	// hnsw_ef, exact, quantization, indexed_only and acorn tune an
	// approximate index; this engine always scans exactly, so the answer
	// is the same with or without them.
	return nil
}

// SearchBatch runs several searches in one read transaction, so they all
// see the same state.
func (db *DB) SearchBatch(ctx context.Context, req *qdrant.SearchBatchPoints) ([][]*qdrant.ScoredPoint, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	specs := make([]*querySpec, len(req.GetSearchPoints()))
	for i, sp := range req.GetSearchPoints() {
		s, err := querySpecFromSearch(sp, fmt.Sprintf("search_points[%d].", i))
		if err != nil {
			return nil, err
		}
		specs[i] = s
	}
	return db.queryAll(ctx, req.GetCollectionName(), "search batch", specs)
}

// Query is Points/Query: nearest by a dense vector or by a point id (that
// point left out), no query (points in id order), order_by, random sample,
// and prefetches (nested, each with its own query, filter, limit and
// score_threshold) merged by a nearest rescoring, order_by, sample or
// fusion (RRF, weighted RRF, DBSF); with filter, score_threshold, limit
// (default 10), offset, with_payload (default false) and with_vectors. See
// universal.go for the semantics. Formula, MMR, recommend, discover,
// context, relevance feedback, lookup_from, named, sparse and multi vectors
// answer Unimplemented (or InvalidArgument for a vector name).
func (db *DB) Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	s, err := querySpecFromQuery(req, "")
	if err != nil {
		return nil, err
	}
	return db.queries(ctx, req.GetCollectionName(), "query", s)
}

// QueryBatch runs several queries in one read transaction.
func (db *DB) QueryBatch(ctx context.Context, req *qdrant.QueryBatchPoints) ([][]*qdrant.ScoredPoint, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	specs := make([]*querySpec, len(req.GetQueryPoints()))
	for i, q := range req.GetQueryPoints() {
		s, err := querySpecFromQuery(q, fmt.Sprintf("query_points[%d].", i))
		if err != nil {
			return nil, err
		}
		specs[i] = s
	}
	return db.queryAll(ctx, req.GetCollectionName(), "query batch", specs)
}

// bounded refuses a query that asks for more points than MaxResults, in
// its answer (limit + offset) or in any prefetch.
func (db *DB) bounded(s *querySpec) error {
	bound := uint64(db.opts.MaxResults)
	if s.root.limit > bound || s.offset > bound-s.root.limit {
		return validation("limit", fmt.Sprintf("limit + offset (%d + %d) is beyond this store's bound of %d points per request: page with a smaller limit", s.root.limit, s.offset, bound))
	}
	var walk func(st *stage) error
	walk = func(st *stage) error {
		for _, p := range st.prefetch {
			if p.limit > bound {
				return validation("prefetch.limit", fmt.Sprintf("%d is beyond this store's bound of %d points per request", p.limit, bound))
			}
			if err := walk(p); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(&s.root)
}

// work is the points a query may read: its answer's limit and offset and
// every prefetch's limit (saturating, so that huge limits cannot wrap).
func (s *querySpec) work() uint64 {
	add := func(a, b uint64) uint64 {
		if a > math.MaxUint64-b {
			return math.MaxUint64
		}
		return a + b
	}
	var stageWork func(st *stage) uint64
	stageWork = func(st *stage) uint64 {
		n := uint64(0)
		for _, p := range st.prefetch {
			n = add(n, add(p.limit, stageWork(p)))
		}
		return n
	}
	return add(add(s.root.limit, s.offset), stageWork(&s.root))
}
