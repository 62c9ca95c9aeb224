package rank

import (
	"context"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/scoring"
)

// Qdrant's defaults for grouped queries (collection_query.rs; the proto
// comments have them swapped).
const (
	defaultGroupsLimit = 10
	defaultGroupSize   = 3
)

// groupsOversample oversamples a grouped request: both the number of
// groups and the group size grow by factor, together capped at max
// candidates (limit x group size), each never below what was asked.
func groupsOversample(limit, size uint64, factor, max int) (uint64, uint64) {
	total := uint64(max)
	gs := oversample(size, factor, 1, max)
	if per := total / maxU(limit, 1); gs > per {
		gs = maxU(per, size)
	}
	lim := oversample(limit, factor, 1, max)
	if per := total / maxU(gs, 1); lim > per {
		lim = maxU(per, limit)
	}
	return lim, gs
}

// QueryGroups answers a grouped query. Re-ranked, it asks the upstream for
// more and larger groups, re-ranks inside each group (exclusions, the
// retrieval gate over all hits, duplicates folded within the group,
// weights), keeps group_size hits per group, orders the groups by their
// best weight and keeps limit groups.
func (r *Ranker) QueryGroups(ctx context.Context, req *qdrant.QueryPointGroups) (*GroupsResult, error) {
	if req == nil {
		return nil, ErrInvalidRequest
	}
	if r.groups == nil {
		return nil, ErrGroupsUnsupported
	}
	if at, asked := asOf(ctx); asked {
		// Every path answers from the memories first observed by then.
		req = proto.Clone(req).(*qdrant.QueryPointGroups)
		req.Filter = r.notAfter(req.GetFilter(), at)
	}
	ctx, span := r.tracer.Start(ctx, "rank.QueryGroups", trace.WithAttributes(attrCollection.String(req.GetCollectionName())))
	defer span.End()
	p := r.plan(ctx, queryShape{
		collection: req.GetCollectionName(), prefetch: len(req.GetPrefetch()), query: req.GetQuery(),
		using: req.GetUsing(), withPayload: req.GetWithPayload(), withVectors: req.GetWithVectors(),
	}, ModeAuto)
	span.SetAttributes(attrMode.String(p.det.Mode.String()), attrRule.String(p.det.Rule))
	if p.pass == "" && (req.Limit != nil && req.GetLimit() == 0 || req.GroupSize != nil && req.GetGroupSize() == 0) {
		p.pass = PassThroughLimitZero
	}
	if p.pass == "" && p.det.Mode == ModeShadow {
		// Grouped queries are not compared in shadow mode: the caller gets
		// the store's answer, and nothing more is asked of the store.
		p.pass = PassThroughShadow
	}
	if p.pass != "" {
		res, err := r.passGroups(ctx, span, req, p.pass)
		if err == nil {
			res.Detection = p.det
		}
		return res, err
	}
	return r.rerankGroups(ctx, span, req, p)
}

// rerankGroups is QueryGroups' re-ranking path, kept apart from the
// pass-through decisions so each reads on its own. The pooled work lives
// until it returns, after the last output is built.
func (r *Ranker) rerankGroups(ctx context.Context, span trace.Span, req *qdrant.QueryPointGroups, p plan) (*GroupsResult, error) {
	limit, size := groupsLimits(req)
	up, requested := r.groupsRequest(req, p, limit, size)
	at, asked := asOf(ctx) // its filter is in req (QueryGroups)
	c, err := r.fetchGroups(ctx, span, req, up, requested)
	if err != nil {
		return nil, err
	}
	r.metrics.requests.Add(ctx, 1, r.metrics.rerankedOpt)

	w := r.pool.Get().(*work)
	defer r.putWork(w)
	now := r.cfg.Now()
	if asked {
		now = at
	}
	r.prepare(ctx, w, c.points, nil, p, now)
	if asked {
		r.unsupersede(ctx, w, c.points, req.GetCollectionName(), at)
	}
	kept := r.gate(ctx, span, w, c.points, p) // in candidate order, so group by group
	focus := r.refocus(w, kept)               // one focus for the query, over every group
	cut := r.guard(ctx, span, w, kept, p)     // one band for the query, over every group
	cut.rep.Focus = focus
	ranked := r.dedupGroups(ctx, span, w, kept, c, p, size)

	_, st := r.startStage(ctx, stageRank)
	sortGroups(ranked)
	ranked = ranked[:min(uint64(len(ranked)), limit)]

	// The render gate looks at every returned hit together. Scores never
	// increase within a group; across groups they need not, as in Qdrant's
	// own answers (groups go by their best hit).
	var all []leader
	for _, rg := range ranked {
		all = append(all, rg.leaders...)
	}
	r.renderGate(w, all)
	cut.countReturned(w, all)
	res := &GroupsResult{
		Groups:       make([]*qdrant.PointGroup, len(ranked)),
		Explanations: make([][]Explanation, len(ranked)),
		Reranked:     true,
		Requested:    requested,
		Candidates:   len(c.points),
		Guard:        cut.report(),
		Detection:    p.det,
	}
	hits := r.writeGroups(req.GetCollectionName(), CountsAccess(ctx) && !asked, w, res, ranked, all, c.points, p, now)
	r.endStage(ctx, st, attrResults.Int(hits))
	span.SetAttributes(attrResults.Int(hits))
	return res, nil
}

// groupsLimits resolves an unset limit or group size to Qdrant's defaults,
// so the ranker keeps as many groups and hits as the store would have
// returned.
func groupsLimits(req *qdrant.QueryPointGroups) (limit, size uint64) {
	limit, size = uint64(defaultGroupsLimit), uint64(defaultGroupSize)
	if req.Limit != nil {
		limit = req.GetLimit()
	}
	if req.GroupSize != nil {
		size = req.GetGroupSize()
	}
	return limit, size
}

// groupsRequest is the caller's request as the upstream must see it:
// oversampled so re-ranking has candidates to promote, with the payload
// the ranker needs. requested is how many hits that asks for at most,
// saturating rather than wrapping, for the candidates stage's telemetry
// and the result.
func (r *Ranker) groupsRequest(req *qdrant.QueryPointGroups, p plan, limit, size uint64) (*qdrant.QueryPointGroups, uint64) {
	askLimit, askSize := groupsOversample(limit, size, r.cfg.Oversample, r.cfg.MaxCandidates)
	hi, requested := bits.Mul64(askLimit, askSize)
	if hi != 0 {
		requested = math.MaxUint64
	}
	return &qdrant.QueryPointGroups{
		CollectionName:   req.GetCollectionName(),
		Prefetch:         req.GetPrefetch(),
		Query:            req.GetQuery(),
		Using:            req.Using,
		Filter:           req.GetFilter(),
		Params:           req.GetParams(),
		ScoreThreshold:   req.ScoreThreshold, // Qdrant's meaning: on the similarity
		WithPayload:      qdrant.NewWithPayloadEnable(true),
		WithVectors:      p.vectors.upstream(req.GetWithVectors(), p.vecName, p.tier2, p.named),
		LookupFrom:       req.GetLookupFrom(),
		Limit:            &askLimit,
		GroupSize:        &askSize,
		GroupBy:          req.GetGroupBy(),
		ReadConsistency:  req.GetReadConsistency(),
		WithLookup:       req.GetWithLookup(),
		Timeout:          req.Timeout,
		ShardKeySelector: req.GetShardKeySelector(),
	}, requested
}

// groupCandidates are the upstream's groups with their hits flattened, so
// the pipeline's stages, written for one list, run over every group at
// once; bounds[g] is where group g's hits end in points.
type groupCandidates struct {
	groups []*qdrant.PointGroup
	points []*qdrant.ScoredPoint
	bounds []int
}

// fetchGroups is the candidates stage: it asks the upstream and times the
// call, recording a failure on both the stage's span and the query's.
func (r *Ranker) fetchGroups(ctx context.Context, span trace.Span, req, up *qdrant.QueryPointGroups, requested uint64) (groupCandidates, error) {
	cctx, st := r.startStage(ctx, stageCandidates)
	groups, err := r.groups.QueryGroups(cctx, up)
	c := groupCandidates{groups: groups, bounds: make([]int, len(groups))}
	for g, grp := range groups {
		c.points = append(c.points, grp.GetHits()...)
		c.bounds[g] = len(c.points)
	}
	r.endStage(ctx, st, attrCollection.String(req.GetCollectionName()), attrOversample.Int(r.cfg.Oversample),
		attrCandidatesIn.Int64(int64(min(requested, math.MaxInt64))), attrCandidatesOut.Int(len(c.points)))
	if err != nil {
		st.span.RecordError(err)
		span.SetStatus(codes.Error, "upstream query failed")
		return groupCandidates{}, err
	}
	return c, nil
}

// rankedGroup is one upstream group after re-ranking: its leaders, best
// first, and its place in the upstream's answer to break ties with.
type rankedGroup struct {
	src     *qdrant.PointGroup
	order   int
	leaders []leader
}

// dedupGroups is the dedup stage for a grouped query: duplicates fold only
// within a group, since each group is answered on its own. Groups left
// empty by the gate or the guard are dropped; the rest keep size hits.
func (r *Ranker) dedupGroups(ctx context.Context, span trace.Span, w *work, kept []scoring.Score, c groupCandidates, p plan, size uint64) []rankedGroup {
	dctx, st := r.startStage(ctx, stageDedup)
	var ranked []rankedGroup
	folded := 0
	g, start := 0, 0
	for start < len(kept) {
		for kept[start].Seq >= c.bounds[g] {
			g++
		}
		end := start
		for end < len(kept) && kept[end].Seq < c.bounds[g] {
			end++
		}
		subset := kept[start:end]
		start = end
		leaders := r.dedup(w, subset, c.points, p, nil)
		folded += len(subset) - len(leaders)
		r.countFolds(ctx, leaders)
		if len(leaders) == 0 {
			continue
		}
		leaders = leaders[:min(uint64(len(leaders)), size)]
		returnedScores(leaders)
		ranked = append(ranked, rankedGroup{src: c.groups[g], order: g, leaders: leaders})
	}
	r.endStage(dctx, st, attrFolded.Int(folded))
	span.SetAttributes(attrFolded.Int(folded))
	return ranked
}

// sortGroups orders the groups by their best hit's weight, as Qdrant
// orders them by their best score. Ties keep the upstream's order.
func sortGroups(ranked []rankedGroup) {
	slices.SortStableFunc(ranked, func(a, b rankedGroup) int {
		x, y := a.leaders[0].score, b.leaders[0].score
		switch wx, wy := a.leaders[0].weight, b.leaders[0].weight; {
		case wx > wy:
			return -1
		case wx < wy:
			return 1
		case x.Confidence > y.Confidence:
			return -1
		case x.Confidence < y.Confidence:
			return 1
		}
		return a.order - b.order
	})
}

// writeGroups builds res's groups and explanations from all, the ranked
// groups' leaders in order after the render gate (ranked's own copies
// predate it), records the accesses (when count) and returns how many hits
// it wrote.
func (r *Ranker) writeGroups(collection string, count bool, w *work, res *GroupsResult, ranked []rankedGroup, all []leader, points []*qdrant.ScoredPoint, p plan, now time.Time) int {
	seen := make(map[string]bool, len(all))
	k, hits := 0, 0
	for gi, rg := range ranked {
		out := &qdrant.PointGroup{Id: rg.src.GetId(), Lookup: rg.src.GetLookup(), Hits: make([]*qdrant.ScoredPoint, len(rg.leaders))}
		exps := make([]Explanation, len(rg.leaders))
		for j := range rg.leaders {
			l := &all[k]
			k++
			out.Hits[j], exps[j] = r.output(w, l, points, p, now)
			// A point in several groups was still returned once.
			if key, ok := idKey(out.Hits[j].GetId()); count && ok && !seen[key] {
				seen[key] = true
				r.record(collection, w, l, points)
			}
		}
		hits += len(rg.leaders)
		res.Groups[gi], res.Explanations[gi] = out, exps
	}
	return hits
}

// passGroups sends the caller's grouped request unchanged.
func (r *Ranker) passGroups(ctx context.Context, span trace.Span, req *qdrant.QueryPointGroups, reason string) (*GroupsResult, error) {
	span.SetAttributes(attrPassThrough.String(reason))
	r.metrics.requests.Add(ctx, 1, metric.WithAttributes(attrResult.String("passthrough"), attrReason.String(reason)))
	cctx, st := r.startStage(ctx, stageCandidates)
	groups, err := r.groups.QueryGroups(cctx, req)
	r.endStage(ctx, st, attrCollection.String(req.GetCollectionName()), attrPassThrough.String(reason))
	if err != nil {
		st.span.RecordError(err)
		span.SetStatus(codes.Error, "upstream query failed")
		return nil, err
	}
	res := &GroupsResult{Groups: groups, Explanations: make([][]Explanation, len(groups)), PassThrough: reason}
	for i, g := range groups {
		res.Explanations[i] = passExplanations(g.GetHits())
		res.Candidates += len(g.GetHits())
	}
	return res, nil
}
