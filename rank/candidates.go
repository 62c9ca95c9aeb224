package rank

import (
	"context"
	"math"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/internal/vecmath"
	"github.com/memrank/memrank/rank/internal/candcache"
)

// scoreTolerance bounds how far the upstream's score may be from the one
// recomputed from a cached vector for the entry to be served, relative to
// |q|*|v| (the largest the score can be): float32 sums in another order
// (SIMD lanes, the store's or Qdrant's kernels) differ in the last bits of
// that scale, while another vector differs by far more. Relative to the
// score alone, tiny scores (a Dot collection of small-norm vectors) would
// let any vector pass.
const scoreTolerance = 1e-4

// scoreFloor only keeps exact zeros (a zero vector) from failing the check.
const scoreFloor = 1e-30

// CollectionsChanged tells the ranker that a collection or an alias was
// created, deleted or changed: nothing the candidate cache holds is served
// again. The fronts call it after every such request they pass on.
func (r *Ranker) CollectionsChanged() {
	if r != nil && r.cands != nil {
		r.cands.Invalidate()
	}
}

// CollectionsUnsettled tells the ranker that a call that may have created,
// deleted or changed a collection or moved an alias ended without telling
// its caller whether it did (it timed out, the upstream went away or
// failed): the upstream may still apply the change. As with
// CollectionsChanged nothing cached is served again, and the candidate
// cache stays off for a while (its TTL, a minute when entries do not
// expire), so that points read before the change is applied are not
// served from the cache after it.
func (r *Ranker) CollectionsUnsettled() {
	if r != nil && r.cands != nil {
		if !r.cands.Unsettle() {
			return // logged when the window opened
		}
		r.cfg.Telemetry.Logger.Warn("candidate cache off for a while: a collection or alias change ended without its outcome (timeout, or the upstream failed or went away), and the upstream may still apply it",
			"for", r.cands.Pause().String())
	}
}

// cacheable says whether a re-ranked request's candidates can come from the
// candidate cache: only when every hit can be checked, i.e. the upstream's
// score is the similarity of the request's own dense vector with the
// tier-2 vector the cache holds (Cosine or Dot, no fusion, prefetch, lookup
// or multivector, not quantized scores the request asks for), and the
// reply's vectors are at most that vector. It
// returns the vector the upstream scores against, as the request's vector
// and a factor (its inverse norm for Cosine, 1 for Dot), so that no
// normalised copy is made per request.
func (r *Ranker) cacheable(req *qdrant.QueryPoints, p plan) (scoreQuery, bool) {
	if r.cands == nil || !p.tier2 || p.fusion || p.scaled || len(req.GetPrefetch()) > 0 ||
		req.GetLookupFrom() != nil || req.GetShardKeySelector() != nil {
		return scoreQuery{}, false
	}
	if qp := req.GetParams().GetQuantization(); qp != nil && qp.Rescore != nil && !qp.GetRescore() && !qp.GetIgnore() {
		return scoreQuery{}, false // scores from quantized vectors: no hit would check
	}
	near, ok := req.GetQuery().GetVariant().(*qdrant.Query_Nearest)
	if !ok {
		return scoreQuery{}, false
	}
	q := near.Nearest.GetDense().GetData()
	if len(q) == 0 {
		return scoreQuery{}, false
	}
	switch {
	case p.vectors.none():
	case !p.named && p.vectors.all:
	case p.named && !p.vectors.all:
		for _, n := range p.vectors.names {
			if n != p.vecName {
				return scoreQuery{}, false
			}
		}
	default:
		return scoreQuery{}, false
	}
	if !p.unit {
		n := float64(vecmath.Norm(q))
		if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
			return scoreQuery{}, false // every score is 0: a score check would pass any vector
		}
		return scoreQuery{q: q, scale: 1, norm: n}, true
	}
	inv := vecmath.InvNorm(q)
	if inv == 0 || math.IsInf(float64(inv), 0) || math.IsNaN(float64(inv)) {
		return scoreQuery{}, false // every score is 0: a score check would pass any vector
	}
	return scoreQuery{q: q, scale: float64(inv), norm: 1}, true
}

// scoreQuery is the vector the upstream scored the candidates against: q
// times scale, whose norm is norm.
type scoreQuery struct {
	q     []float32
	scale float64
	norm  float64
}

// matches says whether score is the similarity of the scored vector with
// v, whose norm is vnorm (computed once, when its entry was built).
func (s scoreQuery) matches(score float32, v []float32, vnorm float64) bool {
	if len(v) != len(s.q) {
		return false
	}
	d := float64(vecmath.Dot(s.q, v)) * s.scale
	return math.Abs(d-float64(score)) <= scoreTolerance*s.norm*vnorm+scoreFloor
}

// candidates asks the upstream for up's candidates: in one call with their
// payloads and vectors, or, when the request allows it, for ids, scores and
// versions only, their payloads and vectors then coming from the candidate
// cache and the misses from one filtered Query. Either way the points are
// what the one call would have returned (less a point deleted, or no
// longer matching the filter, in between). From the cache come the points'
// entries too, by index, with their decoded records (nil when the points
// came in one call).
func (r *Ranker) candidates(ctx context.Context, up *qdrant.QueryPoints, p plan) ([]*qdrant.ScoredPoint, []*candcache.Entry, error) {
	q, ok := r.cacheable(up, p)
	var epoch uint64
	if ok {
		// Before Off and before the upstream is read: see
		// CollectionsChanged and CollectionsUnsettled.
		epoch = r.cands.Epoch()
		if r.cands.Off(up.GetCollectionName(), p.vecName) {
			r.cands.CountOff(ctx)
			ok = false
		}
	}
	if !ok {
		points, err := r.src.Query(ctx, up)
		return points, nil, err
	}
	start := r.cfg.Now()
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
	points, err := r.listings(ctx, slim)
	if err != nil {
		return nil, nil, err
	}
	key := candcache.Key{Epoch: epoch, Collection: up.GetCollectionName(), Vector: p.vecName}
	entries := make([]*candcache.Entry, len(points))
	var missing []*qdrant.PointId
	var round candcache.Round
	for i, pt := range points {
		key.ID, key.Version = candcache.IDKey(pt.GetId()), pt.GetVersion()
		e, ok := r.cands.Get(key)
		switch {
		case ok && q.matches(pt.GetScore(), e.Dense, e.DenseNorm):
			entries[i] = e
			round.Hits++
			continue
		case ok:
			// Another vector under the same key (another incarnation), or
			// an upstream whose scores are not exact.
			r.cands.Remove(key)
			round.Mismatched++
		default:
			round.Absent++
		}
		missing = append(missing, pt.GetId())
	}
	var exact scoreChecks
	if len(missing) > 0 {
		timeout := remainingTimeout(up.Timeout, r.cfg.Now().Sub(start))
		if round.Evicted, exact, err = r.fetchMissing(ctx, up, timeout, p, q, key, points, entries, missing); err != nil {
			return nil, nil, err
		}
	}
	// Whether the upstream's scores are exact is judged on the hits and on
	// the fetched points, whose vectors are the current ones: a cached copy
	// that fails the check may just be another incarnation's (a collection
	// re-created behind memrank), which says nothing of the upstream.
	if r.cands.Checked(key.Collection, key.Vector, round.Hits+exact.checked, exact.inexact) {
		r.cfg.Telemetry.Logger.WarnContext(ctx, "candidate cache off for a while: the upstream's scores are not the exact similarity of the vectors it returns (quantized without rescoring?)",
			"collection", key.Collection, "vector", key.Vector)
	}
	r.cands.Count(ctx, round)
	out, kept := points[:0], entries[:0]
	for i, pt := range points {
		e := entries[i]
		if e == nil {
			continue // deleted since the query
		}
		pt.Payload, pt.Vectors = e.Payload, e.Vectors
		out, kept = append(out, pt), append(kept, e)
	}
	clear(points[len(out):])
	return out, kept, nil
}

// fetchMissing reads the missing candidates in one exact nearest Query
// restricted to their ids AND the caller's filter: a point changed in
// between (re-created for another tenant, or no longer matching) must not
// reach the caller with a payload the filter excludes, so one the fetch
// leaves out is dropped. It asks for the same similarity rather than
// getting or scrolling the points, which carry no versions (Qdrant and the
// store give them version 0): this way each entry's payload, vector, version and score
// come from one read, the entry is stored under that version and only if
// that score checks against that vector, and this request uses what was
// fetched. Each entry is decoded before it is stored, so that no hit
// decodes it again. timeout is what the listing left of the request's.
func (r *Ranker) fetchMissing(ctx context.Context, up *qdrant.QueryPoints, timeout *uint64, p plan, q scoreQuery, key candcache.Key,
	points []*qdrant.ScoredPoint, entries []*candcache.Entry, missing []*qdrant.PointId) (evicted int, checks scoreChecks, err error) {
	must := []*qdrant.Condition{qdrant.NewHasID(missing...)}
	if f := up.GetFilter(); f != nil {
		must = append(must, qdrant.NewFilterAsCondition(f))
	}
	limit, exact, ignore := uint64(len(missing)), true, true
	got, wires, err := r.fetches(ctx, &qdrant.QueryPoints{
		CollectionName: up.GetCollectionName(),
		Query:          up.GetQuery(),
		Using:          up.Using,
		Filter:         &qdrant.Filter{Must: must},
		// Exact and unquantised: every point left is returned, scored on
		// the vector returned with it.
		Params:          &qdrant.SearchParams{Exact: &exact, Quantization: &qdrant.QuantizationSearchParams{Ignore: &ignore}},
		Limit:           &limit,
		WithPayload:     qdrant.NewWithPayloadEnable(true),
		WithVectors:     up.GetWithVectors(),
		ReadConsistency: up.GetReadConsistency(),
		Timeout:         timeout,
	})
	if err != nil {
		return 0, checks, err
	}
	type fetched struct {
		p    *qdrant.ScoredPoint
		wire []byte
	}
	byID := make(map[candcache.PointKey]fetched, len(got))
	for j, g := range got {
		f := fetched{p: g}
		if j < len(wires) {
			f.wire = wires[j]
		}
		byID[candcache.IDKey(g.GetId())] = f
	}
	for i, pt := range points {
		if entries[i] != nil {
			continue
		}
		key.ID = candcache.IDKey(pt.GetId())
		f, ok := byID[key.ID]
		if !ok {
			continue // deleted, or no longer matching the filter
		}
		g := f.p
		key.Version = g.GetVersion()
		e := &candcache.Entry{Payload: g.GetPayload(), PayloadWire: f.wire, Vectors: g.GetVectors(), Dense: denseVector(g.GetVectors(), p.vecName)}
		e.DenseNorm = float64(vecmath.Norm(e.Dense))
		r.codec.DecodeRank(e.Payload, &e.Mem)
		e.In = r.codec.Inputs(&e.Mem)
		entries[i] = e
		if g.GetVersion() == pt.GetVersion() {
			// The point the listing scored: its score there should be the
			// similarity of the vector just fetched.
			checks.checked++
			if !q.matches(pt.GetScore(), e.Dense, e.DenseNorm) {
				checks.inexact++
			}
		}
		if q.matches(g.GetScore(), e.Dense, e.DenseNorm) {
			evicted += r.cands.Add(key, e)
		}
	}
	return evicted, checks, nil
}

// remainingTimeout is what is left of a request's timeout (Qdrant's, in
// whole seconds) after elapsed, for its second upstream call: rounded up,
// and at least one second, the least Qdrant takes. The two calls together
// then take at most the timeout plus a second, not twice the timeout.
func remainingTimeout(timeout *uint64, elapsed time.Duration) *uint64 {
	if timeout == nil {
		return nil
	}
	elapsed = max(elapsed, 0) // a clock set back never lengthens the timeout
	left := time.Duration(min(*timeout, math.MaxInt64/uint64(time.Second)))*time.Second - elapsed
	secs := uint64(1)
	if left > time.Second {
		secs = uint64(left / time.Second)
		if left%time.Second != 0 {
			secs++
		}
	}
	return &secs
}

// scoreChecks counts the listing's scores checked against vectors fetched
// in the same request, and those that did not match.
type scoreChecks struct{ checked, inexact int }
