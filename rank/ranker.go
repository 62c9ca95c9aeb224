package rank

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank/internal/candcache"
	"github.com/memrank/memrank/rank/internal/fold"
	"github.com/memrank/memrank/scoring"
)

// Ranker runs the read pipeline. It is safe for concurrent use.
type Ranker struct {
	src    Source
	groups GroupSource // nil: QueryGroups unsupported
	// listings is the candidate cache's upstream call: src's QueryListing
	// when it has one, else its Query.
	listings func(context.Context, *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error)
	// fetches is its fetch of missing points: src's QueryWire when it has
	// one (the payloads' bytes come too), else its Query (they do not).
	fetches func(context.Context, *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, [][]byte, error)
	cands   *candcache.Cache
	cfg     Config
	params  *scoring.Params
	codec   *memory.Codec
	info    *infoCache
	detect  *detector
	rec     *Recorder
	replica string
	foldOpt fold.Options
	tracer  trace.Tracer
	metrics *rankMetrics
	pool    sync.Pool // *work
	// shadowLog lets one shadow comparison in Shadow.LogInterval through to
	// the log.
	shadowLog *rate.Sometimes
	// emptyLogged holds the collections an empty answer was logged for
	// (bounded: a collection pushed out is logged again), under emptyMu.
	emptyMu     sync.Mutex
	emptyLogged *lru[string, struct{}]
	// historyLog lets one unreadable audit trail a minute through to the
	// log (queries as of a time).
	historyLog *rate.Sometimes
}

// New builds a Ranker over src with cfg (validated, defaults applied).
func New(src Source, cfg Config) (*Ranker, error) {
	if src == nil {
		return nil, errors.New("rank: nil source")
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("rank: %w", err)
	}
	if err := cfg.validateWiring(); err != nil {
		return nil, err
	}
	codec := cfg.Codec
	if codec == nil {
		var err error
		if codec, err = memory.NewCodec(memory.DefaultKeys(), cfg.Params); err != nil {
			return nil, err
		}
	}
	m, err := newRankMetrics(cfg.Telemetry.MeterProvider.Meter(instrumentation))
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
		tracer:  cfg.Telemetry.TracerProvider.Tracer(instrumentation),
		metrics: m,
		foldOpt: fold.Options{Same: float32(cfg.SameThreshold), Judge: float32(cfg.JudgeThreshold)},
	}
	r.groups, _ = src.(GroupSource)
	r.listings = src.Query
	if l, ok := src.(ListingSource); ok {
		r.listings = l.QueryListing
	}
	r.fetches = func(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, [][]byte, error) {
		points, err := src.Query(ctx, req)
		return points, nil, err
	}
	if w, ok := src.(WireSource); ok {
		r.fetches = w.QueryWire
	}
	if cfg.CandidateCache.MaxBytes > 0 {
		if r.cands, err = candcache.New(candcache.Config{
			MaxBytes: int64(cfg.CandidateCache.MaxBytes), TTL: cfg.CandidateCache.TTL, Now: cfg.Now,
			Meter: cfg.Telemetry.MeterProvider.Meter(instrumentation),
		}); err != nil {
			return nil, err
		}
	}
	probe, _ := src.(Prober)
	r.detect = newDetector(probe, codec, cfg.Detect, cfg.Now, cfg.AuthContext)
	if r.rec != nil {
		r.replica = r.rec.ReplicaID()
	}
	if v := cfg.Verdicts; v != nil {
		r.foldOpt.Lookup = v.Lookup
	}
	r.pool.New = func() any { return new(work) }
	r.shadowLog = &rate.Sometimes{Interval: cfg.Shadow.LogInterval}
	r.historyLog = &rate.Sometimes{Interval: time.Minute}
	r.emptyLogged = newLRU[string, struct{}](cfg.InfoCacheSize, 0)
	return r, nil
}

// Shutdown ends the look-ups that recognise memory collections still in
// flight (they outlive the request that started them) and waits for them,
// until ctx ends. Queries after Shutdown still work; collections not yet
// recognised are then read as unreadable. Safe to call twice.
func (r *Ranker) Shutdown(ctx context.Context) error { return r.detect.work.Shutdown(ctx) }

// Detect says how the read path serves a collection: its resolved mode, the
// rule that decided it and the relevance guard that applies. A collection's
// configured mode wins; in ModeAuto, memory collections are re-ranked and
// every other one is passed through. Recognising a collection may read the
// store (its audit companion, a sample of its points' payload keys) with the
// caller's context; the verdict is cached.
func (r *Ranker) Detect(ctx context.Context, collection string) Detection {
	return r.detection(ctx, collection, ModeAuto)
}

// Reranks reports whether the ranker answers for collection (ModeRerank or
// ModeShadow after detection); when false, a front forwards the caller's
// request to the store unchanged.
func (r *Ranker) Reranks(ctx context.Context, collection string) bool {
	return r.Detect(ctx, collection).Mode != ModeOff
}

// detection resolves a collection's mode; override, unless ModeAuto,
// replaces the configured one for one request.
func (r *Ranker) detection(ctx context.Context, collection string, override Mode) Detection {
	if memory.IsCompanion(collection) {
		return Detection{Mode: ModeOff, Rule: ruleAudit}
	}
	cc := r.cfg.Collections[collection]
	mode, rule := r.cfg.Mode, ""
	switch {
	case override != ModeAuto:
		mode, rule = override, "requested: "+override.String()
	case cc.Mode != ModeAuto:
		mode, rule = cc.Mode, ruleConfigured+cc.Mode.String()
	case mode != ModeAuto:
		rule = ruleConfigured + mode.String() + " (rank.mode)"
	}
	d := Detection{Mode: mode, Rule: rule, Forced: mode != ModeAuto}
	if mode == ModeOff {
		return d
	}
	v := r.detect.get(ctx, collection)
	d.Embedder, d.SameThreshold, d.JudgeThreshold = v.embedder, v.bands[0], v.bands[1]
	if mode == ModeAuto {
		d.Rule, d.Memory = v.rule, v.memory
		d.Mode = ModeOff
		if v.memory {
			d.Mode = ModeRerank
		}
	} else {
		d.Memory = true
	}
	if d.Mode != ModeOff {
		d.Guard, d.GuardFrom = r.guardFor(collection, v.embedder)
	}
	return d
}

// Recorded is the embedder a memory collection's audit companion records:
// its model ("" when none is recorded, or the collection has no companion),
// the tier-2 bands recorded with it (zero when none), and the model a
// reembed is moving it to ("" when none).
type Recorded struct {
	Model, MigratingTo            string
	SameThreshold, JudgeThreshold float64
}

// ErrNoRecord is returned by RecordedEmbedder when a collection's audit
// companion exists but its embedder record cannot be read.
var ErrNoRecord = errors.New("rank: the collection's embedder record cannot be read")

// RecordedEmbedder says which embedder collection records, whatever its
// mode, from detection's cached verdict (read with ctx when not cached).
func (r *Ranker) RecordedEmbedder(ctx context.Context, collection string) (Recorded, error) {
	if memory.IsCompanion(collection) {
		return Recorded{}, nil
	}
	v := r.detect.get(ctx, collection)
	if v.noRecord || v.rule == ruleUnreadable {
		return Recorded{}, fmt.Errorf("%w: %s", ErrNoRecord, collection)
	}
	return Recorded{Model: v.embedder, MigratingTo: v.migrating, SameThreshold: v.bands[0], JudgeThreshold: v.bands[1]}, nil
}

// foldOptions are the fold's options for a collection: the tier-2 bands of
// its embedder (recorded, else calibrated for its model, else configured),
// so the read path folds what the write path would have merged.
func (r *Ranker) foldOptions(d Detection) fold.Options {
	o := r.foldOpt
	b := embed.BandsFor(d.Embedder, embed.Bands{Same: d.SameThreshold, Judge: d.JudgeThreshold},
		embed.Bands{Same: r.cfg.SameThreshold, Judge: r.cfg.JudgeThreshold})
	o.Same, o.Judge = float32(b.Same), float32(b.Judge)
	return o
}

// guardFor picks a collection's relevance guard: Config.Guard changed by
// the collection's own settings, else by its embedder's (by exact model
// name, then by the name before ":dimensions"), else as it is.
func (r *Ranker) guardFor(collection, embedder string) (Guard, string) {
	if p := r.cfg.Collections[collection].Guard; p != (GuardPatch{}) {
		return p.Apply(r.cfg.Guard), "collection"
	}
	if embedder != "" {
		if p, ok := r.cfg.EmbedderGuards[embedder]; ok {
			return p.Apply(r.cfg.Guard), "embedder " + embedder
		}
		if i := strings.LastIndexByte(embedder, ':'); i > 0 {
			if p, ok := r.cfg.EmbedderGuards[embedder[:i]]; ok {
				return p.Apply(r.cfg.Guard), "embedder " + embedder
			}
		}
	}
	return r.cfg.Guard, "default"
}

// plan is how one request is served.
type plan struct {
	pass    string // pass-through reason; "" = re-rank
	det     Detection
	fusion  bool   // the base is Qdrant's score, not a similarity
	scaled  bool   // the base has no fixed scale (fusion, formula, sparse): the guard's band is relative
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

func (r *Ranker) plan(ctx context.Context, q queryShape, override Mode) plan {
	det := r.detection(ctx, q.collection, override)
	switch {
	case det.Mode == ModeOff && det.Forced:
		return plan{pass: PassThroughModeOff, det: det}
	case det.Mode == ModeOff:
		return plan{pass: PassThroughNotMemory, det: det}
	}
	p := r.shape(ctx, q)
	p.det = det
	return p
}

// shape plans a request on a collection that is re-ranked: whether its
// query can be, and with which vector.
func (r *Ranker) shape(ctx context.Context, q queryShape) plan {
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
		p.fusion, p.scaled = true, true
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
			p.scaled = true
			return p // dot products of sparse vectors: no dense vector to compare
		case vk.multi:
			p.scaled = true // MaxSim: a sum of similarities, no fixed scale
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
// want x factor and at least floor, capped at max but never below want.
func oversample(want uint64, factor, floor, max int) uint64 {
	hi, ask := bits.Mul64(want, uint64(factor))
	if hi == 0 {
		ask = maxU(ask, uint64(floor))
	}
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
// query allow it, passed through otherwise (Result.PassThrough says why),
// or, in ModeShadow, passed through with memrank's order computed beside
// it. The upstream's errors come back unchanged.
func (r *Ranker) Query(ctx context.Context, req *qdrant.QueryPoints) (*Result, error) {
	return r.QueryAs(ctx, req, ModeAuto)
}

// QueryAs is Query with the collection's mode replaced by mode for this
// request (ModeAuto keeps the configured one): ModeOff answers with the
// store's own order, ModeRerank re-ranks a collection detection would pass
// through. The native API offers it per request.
func (r *Ranker) QueryAs(ctx context.Context, req *qdrant.QueryPoints, mode Mode) (*Result, error) {
	if req == nil {
		return nil, ErrInvalidRequest
	}
	if at, asked := asOf(ctx); asked {
		// Every path, passed through or re-ranked, answers from the
		// memories first observed by then.
		req = proto.Clone(req).(*qdrant.QueryPoints)
		req.Filter = r.notAfter(req.GetFilter(), at)
	}
	ctx, span := r.tracer.Start(ctx, "rank.Query", trace.WithAttributes(attrCollection.String(req.GetCollectionName())))
	defer span.End()
	p := r.plan(ctx, queryShape{
		collection: req.GetCollectionName(), prefetch: len(req.GetPrefetch()), query: req.GetQuery(),
		using: req.GetUsing(), withPayload: req.GetWithPayload(), withVectors: req.GetWithVectors(),
	}, mode)
	span.SetAttributes(attrMode.String(p.det.Mode.String()), attrRule.String(p.det.Rule))
	if p.pass == "" && req.Limit != nil && req.GetLimit() == 0 {
		p.pass = PassThroughLimitZero
	}
	var (
		res *Result
		err error
	)
	switch {
	case p.pass != "":
		res, err = r.passQuery(ctx, span, req, p.pass)
	case p.det.Mode == ModeShadow:
		res, err = r.shadowQuery(ctx, span, req, p)
	default:
		res, err = r.rerank(ctx, span, req, p, true)
	}
	if err != nil {
		return nil, err
	}
	res.Detection = p.det
	return res, nil
}

// rerank runs the pipeline; record says whether returned memories count as
// accessed (not in shadow mode, which must change nothing).
func (r *Ranker) rerank(ctx context.Context, span trace.Span, req *qdrant.QueryPoints, p plan, record bool) (*Result, error) {
	limit := uint64(10)
	if req.Limit != nil {
		limit = req.GetLimit()
	}
	offset := req.GetOffset()
	want, carry := bits.Add64(offset, limit, 0)
	if carry != 0 {
		want = math.MaxUint64
	}
	ask := oversample(want, r.cfg.Oversample, r.cfg.MinCandidates, r.cfg.MaxCandidates)
	span.SetAttributes(attrOversample.Int(r.cfg.Oversample), attrCandidatesIn.Int64(int64(min(ask, math.MaxInt64))))

	up := &qdrant.QueryPoints{
		CollectionName:   req.GetCollectionName(),
		Prefetch:         req.GetPrefetch(),
		Query:            req.GetQuery(),
		Using:            req.Using,
		Filter:           req.GetFilter(),
		Params:           req.GetParams(),
		ScoreThreshold:   req.ScoreThreshold, // Qdrant's meaning: on the similarity (or fused score)
		Limit:            &ask,
		WithVectors:      p.vectors.upstream(req.GetWithVectors(), p.vecName, p.tier2, p.named),
		WithPayload:      qdrant.NewWithPayloadEnable(true),
		ReadConsistency:  req.GetReadConsistency(),
		ShardKeySelector: req.GetShardKeySelector(),
		LookupFrom:       req.GetLookupFrom(),
		Timeout:          req.Timeout,
	}
	at, asked := asOf(ctx) // its filter is in req (QueryAs)
	cctx, st := r.startStage(ctx, stageCandidates)
	points, entries, err := r.candidates(cctx, up, p)
	r.endStage(ctx, st, attrCollection.String(req.GetCollectionName()), attrOversample.Int(r.cfg.Oversample),
		attrCandidatesIn.Int64(int64(min(ask, math.MaxInt64))), attrCandidatesOut.Int(len(points)))
	if err != nil {
		st.span.RecordError(err)
		span.SetStatus(codes.Error, "upstream query failed")
		return nil, err
	}
	span.SetAttributes(attrCandidatesOut.Int(len(points)))
	if record {
		r.metrics.requests.Add(ctx, 1, r.metrics.rerankedOpt)
	}

	w := r.pool.Get().(*work)
	defer r.putWork(w)
	now := r.cfg.Now()
	if asked {
		now = at
	}
	r.prepare(ctx, w, points, entries, p, now)
	if asked {
		r.unsupersede(ctx, w, points, req.GetCollectionName(), at)
	}
	kept := r.gate(ctx, span, w, points, p)
	focus := r.refocus(w, kept)
	cut := r.guard(ctx, span, w, kept, p)
	cut.rep.Focus = focus

	dctx, st := r.startStage(ctx, stageDedup)
	leaders := r.dedup(w, kept, points, p, w.leaders)
	w.leaders = leaders
	r.endStage(dctx, st, attrFolded.Int(len(kept)-len(leaders)))
	span.SetAttributes(attrFolded.Int(len(kept) - len(leaders)))
	r.countFolds(ctx, leaders)

	_, st = r.startStage(ctx, stageRank)
	returnedScores(leaders)
	all := leaders
	lo := min(offset, uint64(len(leaders)))
	hi := lo + min(limit, uint64(len(leaders))-lo)
	leaders = leaders[lo:hi]
	r.renderGate(w, leaders)
	cut.countReturned(w, leaders)
	res := &Result{
		Points:     make([]*qdrant.ScoredPoint, len(leaders)),
		Reranked:   true,
		Requested:  ask,
		Candidates: len(points),
		Guard:      cut.report(),
	}
	if p.payload.whole() && entries != nil {
		res.PayloadWire = payloadWires(leaders, entries)
	}
	explain := explains(ctx)
	if explain {
		res.Explanations = make([]Explanation, len(leaders))
	}
	record = record && CountsAccess(ctx) && !asked
	for i := range leaders {
		l := &leaders[i]
		res.Points[i] = r.outputPoint(l, points, p)
		if explain {
			res.Explanations[i] = r.explain(w, l, points, now)
		}
		// An archived memory is returned only when asked for, and is not
		// counted (see WithArchived).
		if record && w.exclusion(l.score.Seq) < 0 {
			r.record(req.GetCollectionName(), w, l, points)
		}
	}
	if explain {
		res.Dropped = dropped(w, all, points)
	}
	if len(leaders) == 0 && len(points) > 0 {
		res.Empty = r.emptyReason(ctx, req.GetCollectionName(), w, len(points), len(all), offset)
	}
	r.endStage(ctx, st, attrResults.Int(len(leaders)))
	span.SetAttributes(attrResults.Int(len(leaders)))
	return res, nil
}

// emptyReason says why an answer over n candidates is empty: the offset
// past the results (paging, nothing to log), or every candidate superseded
// or archived, which it logs once per collection (an empty answer is what
// a caller notices, and age alone can no longer cause one).
func (r *Ranker) emptyReason(ctx context.Context, collection string, w *work, n, results int, offset uint64) string {
	if results > 0 {
		return fmt.Sprintf("the offset %d is past the %d results", offset, results)
	}
	var counts [len(exclusionReasons)]int
	for _, d := range w.dropped {
		for i, name := range exclusionReasons {
			if d.reason == name {
				counts[i]++
			}
		}
	}
	var parts []string
	for i, c := range counts {
		if c > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c, exclusionReasons[i]))
		}
	}
	why := fmt.Sprintf("all %d candidates were left out: %s", n, strings.Join(parts, ", "))
	r.emptyMu.Lock()
	_, logged := r.emptyLogged.get(collection, time.Time{})
	if !logged {
		r.emptyLogged.add(collection, struct{}{}, time.Time{})
	}
	r.emptyMu.Unlock()
	if !logged {
		r.cfg.Telemetry.Logger.InfoContext(ctx, "an answer was empty although the store had candidates (logged once per collection)",
			"collection", collection, "why", why)
	}
	return why
}

// payloadWires are the returned leaders' payload bytes from their cache
// entries; nil when none has them.
func payloadWires(leaders []leader, entries []*candcache.Entry) [][]byte {
	var wires [][]byte
	for i := range leaders {
		if w := entries[leaders[i].score.Seq].PayloadWire; w != nil {
			if wires == nil {
				wires = make([][]byte, len(leaders))
			}
			wires[i] = w
		}
	}
	return wires
}

// dropped lists what the gate left out and what was folded into another
// candidate (whether that one was returned or fell past the limit).
func dropped(w *work, leaders []leader, points []*qdrant.ScoredPoint) []Dropped {
	var out []Dropped
	for _, d := range w.dropped {
		out = append(out, Dropped{ID: points[d.seq].GetId(), Reason: d.reason, BaseScore: w.bases[d.seq]})
	}
	for i := range leaders {
		into := points[leaders[i].score.Seq].GetId()
		for _, seq := range leaders[i].folded {
			out = append(out, Dropped{ID: points[seq].GetId(), Reason: "folded", Into: into, BaseScore: w.bases[seq]})
		}
	}
	return out
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
	res := &Result{Points: points, PassThrough: reason, Candidates: len(points)}
	if explains(ctx) {
		res.Explanations = passExplanations(points)
	}
	return res, nil
}

func passExplanations(points []*qdrant.ScoredPoint) []Explanation {
	out := make([]Explanation, len(points))
	for i, pt := range points {
		s := float64(pt.GetScore())
		out[i] = Explanation{ID: pt.GetId(), Weight: s, BaseScore: s, Score: s}
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

// record counts a returned leader as accessed: only leaders are returned,
// so a folded duplicate is never counted; only memories inside the
// relevance band count, so an irrelevant memory shown to fill the caller's
// k gains no reads (the self-reinforcing loop of popularity); a point that
// is not a memory (unscored) is never written to; and nothing is counted
// for scores without a fixed scale (fusion, formula, sparse, multivector),
// where the best result may be the best of nothing and no floor can tell.
func (r *Ranker) record(collection string, w *work, l *leader, points []*qdrant.ScoredPoint) {
	if r.rec == nil || !w.countable || !w.inBand[l.best] || l.score.Flags.Has(scoring.FlagUnscored) {
		return
	}
	r.rec.Record(collection, points[l.score.Seq].GetId(), w.ownCount(l.score.Seq, r.replica))
}
