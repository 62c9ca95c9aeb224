package rank

import "github.com/qdrant/go-client/qdrant"

// SearchToQuery converts a Search request to the equivalent Query: nearest
// to its dense vector (or its sparse vector, when sparse_indices are set),
// with every other field carried over. Both answer with scored points, so
// a front returns Result.Points as the SearchResponse's result. A limit of
// 0, which Search refuses, stays 0 and is refused by the upstream.
func SearchToQuery(s *qdrant.SearchPoints) *qdrant.QueryPoints {
	limit := s.GetLimit()
	return &qdrant.QueryPoints{
		CollectionName:   s.GetCollectionName(),
		Query:            searchQuery(s.GetVector(), s.GetSparseIndices()),
		Using:            s.VectorName,
		Filter:           s.GetFilter(),
		Params:           s.GetParams(),
		ScoreThreshold:   s.ScoreThreshold,
		Limit:            &limit,
		Offset:           s.Offset,
		WithVectors:      s.GetWithVectors(),
		WithPayload:      s.GetWithPayload(),
		ReadConsistency:  s.GetReadConsistency(),
		ShardKeySelector: s.GetShardKeySelector(),
		Timeout:          s.Timeout,
	}
}

// SearchGroupsToQueryGroups converts a SearchGroups request to the
// equivalent QueryGroups request; both answer with groups.
func SearchGroupsToQueryGroups(s *qdrant.SearchPointGroups) *qdrant.QueryPointGroups {
	limit, size := uint64(s.GetLimit()), uint64(s.GetGroupSize())
	return &qdrant.QueryPointGroups{
		CollectionName:   s.GetCollectionName(),
		Query:            searchQuery(s.GetVector(), s.GetSparseIndices()),
		Using:            s.VectorName,
		Filter:           s.GetFilter(),
		Params:           s.GetParams(),
		ScoreThreshold:   s.ScoreThreshold,
		WithPayload:      s.GetWithPayload(),
		WithVectors:      s.GetWithVectors(),
		Limit:            &limit,
		GroupSize:        &size,
		GroupBy:          s.GetGroupBy(),
		ReadConsistency:  s.GetReadConsistency(),
		WithLookup:       s.GetWithLookup(),
		Timeout:          s.Timeout,
		ShardKeySelector: s.GetShardKeySelector(),
	}
}

func searchQuery(vector []float32, sparse *qdrant.SparseIndices) *qdrant.Query {
	if sparse != nil {
		return qdrant.NewQuerySparse(sparse.GetData(), vector)
	}
	return qdrant.NewQueryDense(vector)
}
