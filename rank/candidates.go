package rank

import (
	"context"
	"math"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/internal/vecmath"
	"github.com/memrank/memrank/rank/internal/candcache"
)

// pointGetter reads points by id; *qdrant.Client is one. New finds it on
// the Source by a type assertion: without it there is no candidate cache.
type pointGetter interface {
	Get(ctx context.Context, req *qdrant.GetPoints) ([]*qdrant.RetrievedPoint, error)
}

var _ pointGetter = (*qdrant.Client)(nil)

// scoreTolerance bounds how far the upstream's score may be from the one
// recomputed from a cached vector for the entry to be served: float32 sums
// in another order (SIMD lanes, the store's or Qdrant's kernels) differ in
// the last bits, while another vector differs by far more.
const scoreTolerance = 1e-4

// CollectionsChanged tells the ranker that a collection or an alias was
// created, deleted or changed: nothing the candidate cache holds is served
// again. The fronts call it after every such request they pass on.
func (r *Ranker) CollectionsChanged() {
	if r != nil && r.cands != nil {
		r.cands.Invalidate()
	}
}

// cacheable says whether a re-ranked request's candidates can come from the
// candidate cache: only when every hit can be checked, i.e. the upstream's
// score is the similarity of the request's own dense vector with the
// tier-2 vector the cache holds (Cosine or Dot, no fusion, prefetch, lookup
// or multivector), and the reply's vectors are at most that vector.
func (r *Ranker) cacheable(req *qdrant.QueryPoints, p plan) ([]float32, bool) {
	if r.cands == nil || !p.tier2 || p.fusion || p.scaled || len(req.GetPrefetch()) > 0 ||
		req.GetLookupFrom() != nil || req.GetShardKeySelector() != nil {
		return nil, false
	}
	near, ok := req.GetQuery().GetVariant().(*qdrant.Query_Nearest)
	if !ok {
		return nil, false
	}
	q := near.Nearest.GetDense().GetData()
	if len(q) == 0 {
		return nil, false
	}
	switch {
	case p.vectors.none():
	case !p.named && p.vectors.all:
	case p.named && !p.vectors.all:
		for _, n := range p.vectors.names {
			if n != p.vecName {
				return nil, false
			}
		}
	default:
		return nil, false
	}
	if p.unit {
		inv := vecmath.InvNorm(q)
		if inv == 0 || math.IsInf(float64(inv), 0) || math.IsNaN(float64(inv)) {
			return nil, false // every score is 0: a score check would pass any vector
		}
		n := make([]float32, len(q))
		for i, x := range q {
			n[i] = x * inv
		}
		q = n
	} else if vecmath.Norm(q) == 0 {
		return nil, false
	}
	return q, true
}

// scoreMatches says whether score is the similarity of q with v.
func scoreMatches(score float32, q, v []float32) bool {
	if len(v) != len(q) {
		return false
	}
	d := float64(vecmath.Dot(q, v))
	s := float64(score)
	return math.Abs(d-s) <= scoreTolerance*(1+math.Abs(s))
}

// candidates asks the upstream for up's candidates: in one call with their
// payloads and vectors, or, when the request allows it, for ids, scores and
// versions only, their payloads and vectors then coming from the candidate
// cache and the misses from one Get. Either way the points are what the
// one call would have returned (less a point deleted in between).
func (r *Ranker) candidates(ctx context.Context, up *qdrant.QueryPoints, p plan) ([]*qdrant.ScoredPoint, error) {
	q, ok := r.cacheable(up, p)
	if !ok {
		return r.src.Query(ctx, up)
	}
	epoch := r.cands.Epoch() // before the upstream is read: see CollectionsChanged
	slim := &qdrant.QueryPoints{
		CollectionName:   up.GetCollectionName(),
		Query:            up.GetQuery(),
		Using:            up.Using,
		Filter:           up.GetFilter(),
		Params:           up.GetParams(),
		ScoreThreshold:   up.ScoreThreshold,
		Limit:            up.Limit,
		WithVectors:      qdrant.NewWithVectorsEnable(false),
		WithPayload:      qdrant.NewWithPayloadEnable(false),
		ReadConsistency:  up.GetReadConsistency(),
		ShardKeySelector: up.GetShardKeySelector(),
		Timeout:          up.Timeout,
	}
	points, err := r.src.Query(ctx, slim)
	if err != nil {
		return nil, err
	}
	key := candcache.Key{Epoch: epoch, Collection: up.GetCollectionName(), Vector: p.vecName}
	entries := make([]*candcache.Entry, len(points))
	var missing []*qdrant.PointId
	hits := 0
	for i, pt := range points {
		key.ID, key.Version = candcache.IDKey(pt.GetId()), pt.GetVersion()
		e, ok := r.cands.Get(key)
		switch {
		case ok && scoreMatches(pt.GetScore(), q, e.Dense):
			entries[i] = e
			hits++
			continue
		case ok:
			r.cands.Remove(key) // another vector under the same key: another incarnation
		}
		missing = append(missing, pt.GetId())
	}
	evicted := 0
	if len(missing) > 0 {
		if evicted, err = r.fetchMissing(ctx, up, p, q, key, points, entries, missing); err != nil {
			return nil, err
		}
	}
	r.cands.Count(ctx, hits, len(missing), evicted)
	out := points[:0]
	for i, pt := range points {
		e := entries[i]
		if e == nil {
			continue // deleted since the query
		}
		pt.Payload, pt.Vectors = e.Payload, e.Vectors
		out = append(out, pt)
	}
	clear(points[len(out):])
	return out, nil
}

// fetchMissing reads the missing candidates in one Get, fills their
// entries and caches them under the version the query returned (Get
// returns none): a point changed in between is stored under its old
// version, which the upstream no longer returns, unless its vector
// changed, which the score check sees and which is then not stored.
func (r *Ranker) fetchMissing(ctx context.Context, up *qdrant.QueryPoints, p plan, q []float32, key candcache.Key,
	points []*qdrant.ScoredPoint, entries []*candcache.Entry, missing []*qdrant.PointId) (int, error) {
	got, err := r.getter.Get(ctx, &qdrant.GetPoints{
		CollectionName:  up.GetCollectionName(),
		Ids:             missing,
		WithPayload:     qdrant.NewWithPayloadEnable(true),
		WithVectors:     up.GetWithVectors(),
		ReadConsistency: up.GetReadConsistency(),
		Timeout:         up.Timeout,
	})
	if err != nil {
		return 0, err
	}
	byID := make(map[candcache.PointKey]*qdrant.RetrievedPoint, len(got))
	for _, g := range got {
		byID[candcache.IDKey(g.GetId())] = g
	}
	evicted := 0
	for i, pt := range points {
		if entries[i] != nil {
			continue
		}
		key.ID, key.Version = candcache.IDKey(pt.GetId()), pt.GetVersion()
		g, ok := byID[key.ID]
		if !ok {
			continue
		}
		e := &candcache.Entry{Payload: g.GetPayload(), Vectors: g.GetVectors(), Dense: denseVector(g.GetVectors(), p.vecName)}
		entries[i] = e
		if scoreMatches(pt.GetScore(), q, e.Dense) {
			evicted += r.cands.Add(key, e)
		}
	}
	return evicted, nil
}
