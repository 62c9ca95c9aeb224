package rank

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"strings"
	"sync"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank/internal/fold"
	"github.com/memrank/memrank/scoring"
)

// Ranker runs the read pipeline. It is safe for concurrent use.
type Ranker struct {
	src     Source
	groups  GroupSource // nil: QueryGroups unsupported
	cfg     Config
	params  *scoring.Params
	codec   *memory.Codec
	info    *infoCache
	rec     *Recorder
	replica string
	foldOpt fold.Options
	tracer  trace.Tracer
	metrics *rankMetrics
	pool    sync.Pool // *work
}

// New builds a Ranker over src with cfg (validated, defaults applied).
func New(src Source, cfg Config) (*Ranker, error) {
	if src == nil {
		return nil, errors.New("rank: nil source")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	codec := cfg.Codec
	if codec == nil {
		var err error
		if codec, err = memory.NewCodec(memory.DefaultKeys(), cfg.Params); err != nil {
			return nil, err
		}
	}
	m, err := newRankMetrics(meterOf(cfg.MeterProvider))
	if err != nil {
		return nil, err
	}
	r := &Ranker{
		src:     src,
		cfg:     cfg,
		params:  cfg.Params,
		codec:   codec,
		info:    newInfoCache(src, cfg.InfoCacheSize, cfg.InfoTTL, cfg.Now),
		rec:     cfg.Recorder,
		tracer:  tracerOf(cfg.TracerProvider),
		metrics: m,
		foldOpt: fold.Options{Same: float32(cfg.SameThreshold), Judge: float32(cfg.JudgeThreshold)},
	}
	r.groups, _ = src.(GroupSource)
	if r.rec != nil {
		r.replica = r.rec.ReplicaID()
	}
	if v := cfg.Verdicts; v != nil {
		r.foldOpt.Lookup = func(a, b string) fold.Verdict {
			switch verdict, ok := v.Lookup(a, b); {
			case !ok || verdict == 0:
				return fold.VerdictUnknown
			case verdict == VerdictSame:
				return fold.VerdictSame
			default:
				return fold.VerdictOther
			}
		}
	}
	r.pool.New = func() any { return new(work) }
	return r, nil
}

// IsMemoryCollection reports whether name is re-ranked: it is listed in
// MemoryCollections (or that list is empty) and it is not an audit
// companion.
func (r *Ranker) IsMemoryCollection(name string) bool {
	if strings.HasSuffix(name, AuditSuffix) {
		return false
	}
	return true
}

// plan is how one request is served.
type plan struct {
	pass    string // pass-through reason; "" = re-rank
	fusion  bool   // the base is Qdrant's score, not a similarity
	vecName string // the vector tier 2 compares
	tier2   bool
	unit    bool // tier-2 vectors are unit length (Cosine)
	named   bool // the collection's dense vectors are named
	payload payloadSel
	vectors vectorSel
}

// queryShape is what planning reads from a Query or a QueryGroups request.
type queryShape struct {
	collection  string
	prefetch    int
	query       *qdrant.Query
	using       string
	withPayload *qdrant.WithPayloadSelector
	withVectors *qdrant.WithVectorsSelector
}

func (r *Ranker) plan(ctx context.Context, q queryShape) plan {
	if !r.IsMemoryCollection(q.collection) {
		return plan{pass: PassThroughNotMemory}
	}
	var p plan
	similarity := false
	switch q.query.GetVariant().(type) {
	case nil:
		if q.prefetch > 0 {
			return plan{pass: PassThroughPrefetchNoQuery}
		}
		return plan{pass: PassThroughScroll}
	case *qdrant.Query_Nearest, *qdrant.Query_Recommend:
		similarity = true
	case *qdrant.Query_Fusion, *qdrant.Query_Rrf, *qdrant.Query_Formula:
		if q.prefetch == 0 {
			return plan{pass: PassThroughNoPrefetch}
		}
		p.fusion = true
	case *qdrant.Query_OrderBy:
		return plan{pass: PassThroughOrderBy}
	case *qdrant.Query_Sample:
		return plan{pass: PassThroughSample}
	case *qdrant.Query_Discover:
		return plan{pass: PassThroughDiscover}
	case *qdrant.Query_Context:
		return plan{pass: PassThroughContext}
	case *qdrant.Query_NearestWithMmr:
		return plan{pass: PassThroughMMR}
	case *qdrant.Query_RelevanceFeedback:
		return plan{pass: PassThroughFeedback}
	default:
		return plan{pass: PassThroughUnknownQuery}
	}
	sel, err := resolvePayloadSel(q.withPayload)
	if err != nil {
		return plan{pass: PassThroughBadSelector}
	}
	p.payload = sel
	p.vectors = resolveVectorSel(q.withVectors)
	ci, err := r.info.get(ctx, q.collection)
	if err != nil {
		return plan{pass: PassThroughNoInfo}
	}
	p.named = ci.named
	vk := ci.vector(q.using)
	if similarity {
		switch {
		case !vk.known:
			return plan{pass: PassThroughUnknownVector}
		case vk.sparse:
			return p // dot products of sparse vectors: no dense vector to compare
		}
		switch vk.distance {
		case qdrant.Distance_Cosine, qdrant.Distance_Dot:
		case qdrant.Distance_Euclid:
			return plan{pass: PassThroughEuclid}
		case qdrant.Distance_Manhattan:
			return plan{pass: PassThroughManhattan}
		default:
			return plan{pass: PassThroughDistance}
		}
	}
	if vk.known && !vk.sparse && !vk.multi &&
		(vk.distance == qdrant.Distance_Cosine || vk.distance == qdrant.Distance_Dot) {
		p.tier2, p.vecName, p.unit = true, q.using, vk.distance == qdrant.Distance_Cosine
	}
	return p
}

// oversample is the candidates asked for want = offset + limit results:
// want x factor, capped at max but never below want.
func oversample(want uint64, factor, max int) uint64 {
	hi, ask := bits.Mul64(want, uint64(factor))
	if hi != 0 || ask > uint64(max) {
		ask = uint64(max)
	}
	return maxU(ask, want)
}

func maxU(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// Query answers a Query request: re-ranked when the collection and the
// query allow it, passed through otherwise. The upstream's errors come back
// unchanged.
func (r *Ranker) Query(ctx context.Context, req *qdrant.QueryPoints) (*Result, error) {
	if req == nil {
		return nil, ErrInvalidRequest
	}
	ctx, span := r.tracer.Start(ctx, "rank.Query", trace.WithAttributes(attrCollection.String(req.GetCollectionName())))
	defer span.End()
	p := r.plan(ctx, queryShape{
		collection: req.GetCollectionName(), prefetch: len(req.GetPrefetch()), query: req.GetQuery(),
		using: req.GetUsing(), withPayload: req.GetWithPayload(), withVectors: req.GetWithVectors(),
	})
	if p.pass == "" && req.Limit != nil && req.GetLimit() == 0 {
		p.pass = PassThroughLimitZero
	}
	if p.pass != "" {
		return r.passQuery(ctx, span, req, p.pass)
	}
	limit := uint64(10)
	if req.Limit != nil {
		limit = req.GetLimit()
	}
	offset := req.GetOffset()
	want, carry := bits.Add64(offset, limit, 0)
	if carry != 0 {
		want = math.MaxUint64
	}
	ask := oversample(want, r.cfg.Oversample, r.cfg.MaxCandidates)
	span.SetAttributes(attrOversample.Int(r.cfg.Oversample), attrCandidatesIn.Int64(int64(min(ask, math.MaxInt64))))

	up := &qdrant.QueryPoints{
		CollectionName:   req.GetCollectionName(),
		Prefetch:         req.GetPrefetch(),
		Query:            req.GetQuery(),
		Using:            req.Using,
		Filter:           req.GetFilter(),
		Params:           req.GetParams(),
		Limit:            &ask,
		WithVectors:      p.vectors.upstream(req.GetWithVectors(), p.vecName, p.tier2, p.named),
		WithPayload:      qdrant.NewWithPayloadEnable(true),
		ReadConsistency:  req.GetReadConsistency(),
		ShardKeySelector: req.GetShardKeySelector(),
		LookupFrom:       req.GetLookupFrom(),
		Timeout:          req.Timeout,
	}
	cctx, st := r.startStage(ctx, stageCandidates)
	points, err := r.src.Query(cctx, up)
	r.endStage(ctx, st, attrCollection.String(req.GetCollectionName()), attrOversample.Int(r.cfg.Oversample),
		attrCandidatesIn.Int64(int64(min(ask, math.MaxInt64))), attrCandidatesOut.Int(len(points)))
	if err != nil {
		st.span.RecordError(err)
		span.SetStatus(codes.Error, "upstream query failed")
		return nil, err
	}
	span.SetAttributes(attrCandidatesOut.Int(len(points)))
	r.metrics.requests.Add(ctx, 1, r.metrics.rerankedOpt)

	w := r.pool.Get().(*work)
	defer r.pool.Put(w)
	now := r.cfg.Now()
	r.prepare(ctx, w, points, p, now)
	kept := r.gate(ctx, span, w, points)

	dctx, st := r.startStage(ctx, stageDedup)
	leaders := r.dedup(w, kept, points, p)
	r.endStage(dctx, st, attrFolded.Int(len(kept)-len(leaders)))
	span.SetAttributes(attrFolded.Int(len(kept) - len(leaders)))
	r.countFolds(ctx, leaders)

	_, st = r.startStage(ctx, stageRank)
	leaders = applyThreshold(leaders, req.ScoreThreshold)
	lo := min(offset, uint64(len(leaders)))
	hi := lo + min(limit, uint64(len(leaders))-lo)
	leaders = leaders[lo:hi]
	r.renderGate(w, leaders)
	res := &Result{
		Points:       make([]*qdrant.ScoredPoint, len(leaders)),
		Explanations: make([]Explanation, len(leaders)),
		Reranked:     true,
		Requested:    ask,
		Candidates:   len(points),
	}
	for i := range leaders {
		res.Points[i], res.Explanations[i] = r.output(w, &leaders[i], points, p, now)
		r.record(req.GetCollectionName(), w, &leaders[i], points)
	}
	r.endStage(ctx, st, attrResults.Int(len(leaders)))
	span.SetAttributes(attrResults.Int(len(leaders)))
	return res, nil
}

// passQuery sends the caller's request unchanged, in one upstream call.
func (r *Ranker) passQuery(ctx context.Context, span trace.Span, req *qdrant.QueryPoints, reason string) (*Result, error) {
	span.SetAttributes(attrPassThrough.String(reason))
	r.metrics.requests.Add(ctx, 1, metric.WithAttributes(attrResult.String("passthrough"), attrReason.String(reason)))
	cctx, st := r.startStage(ctx, stageCandidates)
	points, err := r.src.Query(cctx, req)
	r.endStage(ctx, st, attrCollection.String(req.GetCollectionName()), attrPassThrough.String(reason), attrCandidatesOut.Int(len(points)))
	if err != nil {
		st.span.RecordError(err)
		span.SetStatus(codes.Error, "upstream query failed")
		return nil, err
	}
	return &Result{Points: points, Explanations: passExplanations(points), PassThrough: reason, Candidates: len(points)}, nil
}

func passExplanations(points []*qdrant.ScoredPoint) []Explanation {
	out := make([]Explanation, len(points))
	for i, pt := range points {
		s := float64(pt.GetScore())
		out[i] = Explanation{ID: pt.GetId(), Weight: s, BaseScore: s}
	}
	return out
}

// Search answers a Search request as the equivalent Query (SearchToQuery);
// the result's points are the SearchResponse's.
func (r *Ranker) Search(ctx context.Context, req *qdrant.SearchPoints) (*Result, error) {
	if req == nil {
		return nil, ErrInvalidRequest
	}
	return r.Query(ctx, SearchToQuery(req))
}

// applyThreshold keeps the weights strictly above the caller's
// score_threshold, compared as the float32 the caller receives (Qdrant's
// vector search is strict too).
func applyThreshold(leaders []leader, thr *float32) []leader {
	if thr == nil {
		return leaders
	}
	out := leaders[:0]
	for _, l := range leaders {
		if float32(l.score.Weight) > *thr {
			out = append(out, l)
		}
	}
	return out
}

// countFolds adds the folds of a query to the fold metric, by tier.
func (r *Ranker) countFolds(ctx context.Context, leaders []leader) {
	var n [4]int64
	for i := range leaders {
		for _, t := range leaders[i].tiers {
			n[t]++
		}
	}
	for t := fold.TierTextHash; t <= fold.TierJudge; t++ {
		if n[t] > 0 {
			r.metrics.folds.Add(ctx, n[t], metric.WithAttributes(attrTier.String(t.String())))
		}
	}
}

// record counts a returned leader as accessed (only leaders are returned,
// so a folded duplicate is never counted).
func (r *Ranker) record(collection string, w *work, l *leader, points []*qdrant.ScoredPoint) {
	if r.rec == nil {
		return
	}
	r.rec.Record(collection, points[l.score.Seq].GetId(), w.ownCount(l.score.Seq, r.replica))
}
