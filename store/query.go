package store

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"
)

// Search is Points/Search: exact nearest neighbours of a raw vector. limit
// is required (at least 1); with_payload defaults to false.
func (db *DB) Search(ctx context.Context, req *qdrant.SearchPoints) ([]*qdrant.ScoredPoint, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	s, err := searchSpecFromSearch(req, "")
	if err != nil {
		return nil, err
	}
	var res []*qdrant.ScoredPoint
	err = db.read(req.GetCollectionName(), func(c *collection, pts *bolt.Bucket) error {
		var err error
		res, err = db.run(ctx, c, pts, s)
		return err
	})
	return res, asEngineError(err, "search")
}

// searchSpecFromSearch validates and converts a SearchPoints. field is the
// request's path inside a batch ("search_points[2]."), empty otherwise: like
// Qdrant, a batch validates its inner requests, collection name included,
// though it searches the batch's collection.
func searchSpecFromSearch(req *qdrant.SearchPoints, field string) (searchSpec, error) {
	if field != "" {
		if err := validateNameField(req.GetCollectionName(), field+"collection_name", false); err != nil {
			return searchSpec{}, err
		}
	}
	if req.GetLimit() == 0 {
		return searchSpec{}, validation(field+"limit", "value 0 invalid, must be 1 or larger")
	}
	if err := checkSearchParams(req.GetParams(), field); err != nil {
		return searchSpec{}, err
	}
	if req.Timeout != nil && req.GetTimeout() == 0 {
		return searchSpec{}, validation(field+"timeout", "value 0 invalid, must be 1 or larger")
	}
	if req.GetSparseIndices() != nil {
		return searchSpec{}, unimplemented("sparse vectors are not supported")
	}
	if req.GetShardKeySelector() != nil {
		return searchSpec{}, unimplemented("shard keys are not supported")
	}
	if n := req.GetVectorName(); n != "" {
		return searchSpec{}, wrongInput("Not existing vector name error: %s", n)
	}
	sel, err := convertPayloadSel(req.GetWithPayload(), false)
	if err != nil {
		return searchSpec{}, err
	}
	vec := req.GetVector()
	if vec == nil {
		vec = []float32{}
	}
	return searchSpec{
		vector: vec, filter: req.GetFilter(), limit: req.GetLimit(), offset: req.GetOffset(),
		threshold: req.ScoreThreshold,
		out:       output{payload: sel, vector: wantVector(req.GetWithVectors())},
	}, nil
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
	specs := make([]searchSpec, len(req.GetSearchPoints()))
	for i, sp := range req.GetSearchPoints() {
		s, err := searchSpecFromSearch(sp, fmt.Sprintf("search_points[%d].", i))
		if err != nil {
			return nil, err
		}
		specs[i] = s
	}
	out := make([][]*qdrant.ScoredPoint, len(specs))
	err := db.read(req.GetCollectionName(), func(c *collection, pts *bolt.Bucket) error {
		for i, s := range specs {
			res, err := db.run(ctx, c, pts, s)
			if err != nil {
				return err
			}
			out[i] = res
		}
		return nil
	})
	if err != nil {
		return nil, asEngineError(err, "search batch")
	}
	return out, nil
}

// Query is Points/Query for what this engine supports: nearest by a dense
// vector or by a point id (that point excluded), or no query (points in id
// order), with filter, score_threshold, limit (default 10), offset,
// with_payload (default false) and with_vectors. Prefetch, fusion, formula,
// MMR, recommend, discover, context, order_by, sample, relevance feedback,
// lookup_from, named, sparse and multi vectors answer Unimplemented.
func (db *DB) Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	s, err := searchSpecFromQuery(req, "")
	if err != nil {
		return nil, err
	}
	var res []*qdrant.ScoredPoint
	err = db.read(req.GetCollectionName(), func(c *collection, pts *bolt.Bucket) error {
		var err error
		res, err = db.run(ctx, c, pts, s)
		return err
	})
	return res, asEngineError(err, "query")
}

// QueryBatch runs several queries in one read transaction.
func (db *DB) QueryBatch(ctx context.Context, req *qdrant.QueryBatchPoints) ([][]*qdrant.ScoredPoint, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	specs := make([]searchSpec, len(req.GetQueryPoints()))
	for i, q := range req.GetQueryPoints() {
		s, err := searchSpecFromQuery(q, fmt.Sprintf("query_points[%d].", i))
		if err != nil {
			return nil, err
		}
		specs[i] = s
	}
	out := make([][]*qdrant.ScoredPoint, len(specs))
	err := db.read(req.GetCollectionName(), func(c *collection, pts *bolt.Bucket) error {
		for i, s := range specs {
			res, err := db.run(ctx, c, pts, s)
			if err != nil {
				return err
			}
			out[i] = res
		}
		return nil
	})
	if err != nil {
		return nil, asEngineError(err, "query batch")
	}
	return out, nil
}

// searchSpecFromQuery validates and converts a QueryPoints; field as for
// searchSpecFromSearch.
func searchSpecFromQuery(req *qdrant.QueryPoints, field string) (searchSpec, error) {
	if field != "" {
		if err := validateNameField(req.GetCollectionName(), field+"collection_name", false); err != nil {
			return searchSpec{}, err
		}
	}
	if req.Limit != nil && req.GetLimit() == 0 {
		return searchSpec{}, validation(field+"limit", "value 0 invalid, must be 1 or larger")
	}
	if req.Timeout != nil && req.GetTimeout() == 0 {
		return searchSpec{}, validation(field+"timeout", "value 0 invalid, must be 1 or larger")
	}
	if err := checkSearchParams(req.GetParams(), field); err != nil {
		return searchSpec{}, err
	}
	switch {
	case len(req.GetPrefetch()) > 0:
		return searchSpec{}, unimplemented("Query prefetch is not supported")
	case req.GetLookupFrom() != nil:
		return searchSpec{}, unimplemented("Query lookup_from is not supported")
	case req.GetShardKeySelector() != nil:
		return searchSpec{}, unimplemented("shard keys are not supported")
	case req.GetUsing() != "":
		return searchSpec{}, wrongInput("Not existing vector name error: %s", req.GetUsing())
	}
	sel, err := convertPayloadSel(req.GetWithPayload(), false)
	if err != nil {
		return searchSpec{}, err
	}
	s := searchSpec{
		filter: req.GetFilter(), limit: 10, offset: req.GetOffset(), threshold: req.ScoreThreshold,
		out: output{payload: sel, vector: wantVector(req.GetWithVectors())},
	}
	if req.Limit != nil {
		s.limit = req.GetLimit()
	}
	q := req.GetQuery()
	if q == nil {
		return s, nil
	}
	switch v := q.GetVariant().(type) {
	case *qdrant.Query_Nearest:
		switch in := v.Nearest.GetVariant().(type) {
		case *qdrant.VectorInput_Dense:
			s.vector = in.Dense.GetData()
			if s.vector == nil {
				s.vector = []float32{}
			}
		case *qdrant.VectorInput_Id:
			id, err := PointIDFromProto(in.Id)
			if err != nil {
				return searchSpec{}, err
			}
			s.byID = &id
		case *qdrant.VectorInput_Sparse:
			return searchSpec{}, unimplemented("Query with a sparse vector is not supported")
		case *qdrant.VectorInput_MultiDense:
			return searchSpec{}, unimplemented("Query with a multi vector is not supported")
		case *qdrant.VectorInput_Document, *qdrant.VectorInput_Image, *qdrant.VectorInput_Object:
			return searchSpec{}, unimplemented("Query with inference input (document, image, object) is not supported")
		default:
			return searchSpec{}, invalidArg("VectorInput is missing")
		}
		return s, nil
	case *qdrant.Query_NearestWithMmr:
		return searchSpec{}, unimplemented("Query nearest_with_mmr (MMR) is not supported")
	case *qdrant.Query_Recommend:
		return searchSpec{}, unimplemented("Query recommend is not supported")
	case *qdrant.Query_Discover:
		return searchSpec{}, unimplemented("Query discover is not supported")
	case *qdrant.Query_Context:
		return searchSpec{}, unimplemented("Query context is not supported")
	case *qdrant.Query_OrderBy:
		return searchSpec{}, unimplemented("Query order_by is not supported")
	case *qdrant.Query_Fusion:
		return searchSpec{}, unimplemented("Query fusion is not supported")
	case *qdrant.Query_Rrf:
		return searchSpec{}, unimplemented("Query rrf (fusion) is not supported")
	case *qdrant.Query_Sample:
		return searchSpec{}, unimplemented("Query sample is not supported")
	case *qdrant.Query_Formula:
		return searchSpec{}, unimplemented("Query formula is not supported")
	case *qdrant.Query_RelevanceFeedback:
		return searchSpec{}, unimplemented("Query relevance_feedback is not supported")
	}
	// A Query message with no variant set: Qdrant rejects it as malformed.
	return searchSpec{}, invalidArg("Query variant is missing")
}
