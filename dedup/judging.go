package dedup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"

	"github.com/memrank/memrank/internal/detach"
	"github.com/memrank/memrank/telemetry/settings"
)

// Fallbacks: the values of JudgeInfo.Fallback, why a pair that needed the
// judge got no verdict.
const (
	FallbackDisabled   = "disabled"   // no judge configured
	FallbackBudget     = "budget"     // the collection's calls per minute are spent
	FallbackTimeout    = "timeout"    // no answer within the timeout
	FallbackError      = "error"      // the judge failed (HTTP error, transport, cancelled)
	FallbackUnparsable = "unparsable" // the answer was not a verdict
	FallbackPaused     = "paused"     // the provider asked (Retry-After) for no calls until after the deadline; none was sent
)

// pausable is a judge that can tell, before a call, that its provider asked
// for a pause the call could not wait out (LLMJudge).
type pausable interface {
	Paused(ctx context.Context) bool
}

var _ pausable = (*LLMJudge)(nil)

// Judging defaults.
const (
	DefaultJudgeCacheSize      = 10000
	DefaultJudgeTimeout        = 5 * time.Second
	DefaultJudgeMaxCollections = 1024
)

// JudgingConfig configures tier 3.
type JudgingConfig struct {
	// Judge answers pairs; nil disables the judge (the cache still
	// answers, but nothing fills it).
	Judge Judge
	// CacheSize is how many verdicts are kept; 0 means the default 10000,
	// a negative value no cache.
	CacheSize int
	// CallsPerMinute is each collection's budget of judge calls, with a
	// burst of one minute's worth; 0 means unlimited.
	CallsPerMinute int
	// Timeout bounds a whole decision, retries included; default 5s.
	Timeout time.Duration
	// MaxCollections bounds the per-collection budgets kept (least recently
	// used out); default 1024. A collection whose budget was dropped starts
	// again with a full one.
	MaxCollections int

	// Telemetry is where tier 3's logs, spans and metrics go; nil members
	// record nothing.
	Telemetry settings.Settings
}

func (c JudgingConfig) withDefaults() JudgingConfig {
	if c.CacheSize == 0 {
		c.CacheSize = DefaultJudgeCacheSize
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultJudgeTimeout
	}
	if c.MaxCollections == 0 {
		c.MaxCollections = DefaultJudgeMaxCollections
	}
	c.Telemetry = c.Telemetry.WithDefaults()
	return c
}

// Validate reports settings tier 3 cannot work with. Zero values are
// checked as their defaults.
func (c JudgingConfig) Validate() error {
	var errs []error
	if c.CallsPerMinute < 0 {
		errs = append(errs, fmt.Errorf("dedup: judging: calls_per_minute %d is negative", c.CallsPerMinute))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("dedup: judging: timeout %v is negative", c.Timeout))
	}
	if c.MaxCollections < 0 {
		errs = append(errs, fmt.Errorf("dedup: judging: max_collections %d is negative", c.MaxCollections))
	}
	return errors.Join(errs...)
}

// Judging is tier 3: the judge behind a verdict cache, a per-collection
// budget of calls, a timeout and coalescing of identical pairs in flight.
// It is safe for concurrent use, and a nil *Judging is a disabled one with
// no cache.
//
// A call to the judge runs in a goroutine owned by Judging's singleflight
// group, detached from the caller's cancellation (so one caller giving up
// does not fail the others waiting on the same pair) and bounded by
// Timeout.
type Judging struct {
	judge   Judge
	cache   *VerdictCache
	perMin  int
	timeout time.Duration

	mu       sync.Mutex // guards limiters
	limiters *simplelru.LRU[string, *rate.Limiter]

	group singleflight.Group
	work  *detach.Group // owns the shared calls, which outlive their first caller

	calls, hits, misses, fallbacks atomic.Int64

	log     *slog.Logger
	tracer  trace.Tracer
	metrics judgingMetrics
}

// NewJudging returns tier 3 for cfg.
func NewJudging(cfg JudgingConfig) (*Judging, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	limiters, err := simplelru.NewLRU[string, *rate.Limiter](cfg.MaxCollections, nil)
	if err != nil {
		return nil, fmt.Errorf("dedup: judging: %w", err)
	}
	m, err := newJudgingMetrics(cfg.Telemetry.MeterProvider.Meter(judgeScope))
	if err != nil {
		return nil, fmt.Errorf("dedup: judging: metrics: %w", err)
	}
	return &Judging{
		work:     detach.NewGroup(),
		judge:    cfg.Judge,
		cache:    NewVerdictCache(cfg.CacheSize),
		perMin:   cfg.CallsPerMinute,
		timeout:  cfg.Timeout,
		limiters: limiters,
		log:      cfg.Telemetry.Logger,
		tracer:   cfg.Telemetry.TracerProvider.Tracer(judgeScope),
		metrics:  m,
	}, nil
}

// Shutdown ends the judge calls still in flight (shared calls outlive the
// caller that started them) and waits for them, until ctx ends. Decisions
// after Shutdown fall back as if the judge had failed. A nil Judging has
// nothing to stop; safe to call twice.
func (j *Judging) Shutdown(ctx context.Context) error {
	if j == nil {
		return nil
	}
	return j.work.Shutdown(ctx)
}

// PairText is one side of a pair: a memory's text and its text hash (the
// cache key; "" leaves the pair out of the cache and of coalescing).
type PairText struct {
	Hash string
	Text string
}

// Why there is no verdict, as JudgeInfo.Reason says it: fixed texts, so
// nothing internal reaches a client.
var fallbackReasons = map[string]string{
	FallbackDisabled:   "no judge is configured",
	FallbackBudget:     "the collection's judge budget is spent",
	FallbackTimeout:    "the judge did not answer in time",
	FallbackError:      "the judge failed",
	FallbackUnparsable: "the judge's answer was not a verdict",
	FallbackPaused:     "the judge's provider asked for a pause (Retry-After)",
}

// Decide returns the verdict on a (the stored memory) and b (the
// candidate): from the cache when it has one; otherwise, budget allowing,
// from the judge, whose verdict is then cached. It never fails: without a
// verdict it returns VerdictUnknown and says why in JudgeInfo.Fallback, and
// the caller must then not merge. Failures are never cached.
func (j *Judging) Decide(ctx context.Context, collection string, a, b PairText) (Verdict, JudgeInfo) {
	if j == nil {
		return VerdictUnknown, fallbackInfo(FallbackDisabled)
	}
	ctx, span := j.tracer.Start(ctx, "dedup.judge", trace.WithAttributes(attrJudgeCollection.String(collection)))
	defer span.End()
	r, shared := j.decide(ctx, collection, a, b)
	outcome := "ok"
	switch {
	case r.fallback != "":
		outcome = r.fallback
		j.fallbacks.Add(1)
		j.metrics.fallbacks.Add(ctx, 1, j.metrics.fallbackOpts[r.fallback])
	case r.cached:
		outcome = "cached"
	}
	span.SetAttributes(attrJudgeOutcome.String(outcome), attrJudgeShared.Bool(shared))
	if r.fallback != "" {
		return VerdictUnknown, fallbackInfo(r.fallback)
	}
	span.SetAttributes(attrJudgeVerdict.String(r.verdict.String()))
	return r.verdict, JudgeInfo{Verdict: r.verdict.String(), Cached: r.cached, Reason: r.reason}
}

func fallbackInfo(fallback string) JudgeInfo {
	return JudgeInfo{Fallback: fallback, Reason: fallbackReasons[fallback]}
}

// judgeResult is one decision, shared by the callers coalesced on it.
type judgeResult struct {
	verdict  Verdict
	reason   string
	cached   bool
	fallback string
}

func (j *Judging) decide(ctx context.Context, collection string, a, b PairText) (r judgeResult, shared bool) {
	key, keyed := verdictPairKey(a.Hash, b.Hash)
	if keyed && j.cache.lru != nil {
		if v, ok := j.cache.Get(a.Hash, b.Hash); ok {
			j.hits.Add(1)
			j.metrics.cache.Add(ctx, 1, j.metrics.hitOpt)
			return judgeResult{verdict: v, cached: true}, false
		}
		j.misses.Add(1)
		j.metrics.cache.Add(ctx, 1, j.metrics.missOpt)
	}
	if j.judge == nil {
		return judgeResult{fallback: FallbackDisabled}, false
	}
	if !keyed {
		return j.call(ctx, collection, a, b), false
	}
	wait, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	ch := j.group.DoChan(key.string(), func() (any, error) {
		work, done, ok := j.work.Start(ctx)
		if !ok {
			return judgeResult{fallback: FallbackError}, nil // shutting down
		}
		defer done()
		return j.call(work, collection, a, b), nil
	})
	select {
	case res := <-ch:
		return res.Val.(judgeResult), res.Shared
	case <-wait.Done():
		// The call goes on for whoever else waits on it, and caches its
		// verdict if one comes.
		if errors.Is(ctx.Err(), context.Canceled) {
			return judgeResult{fallback: FallbackError}, false
		}
		return judgeResult{fallback: FallbackTimeout}, false
	}
}

// call asks the judge, within the budget and the timeout, and caches a
// verdict.
func (j *Judging) call(ctx context.Context, collection string, a, b PairText) judgeResult {
	// A call for this pair may have finished between the caller's cache
	// miss and this one's start.
	if v, ok := j.cache.Get(a.Hash, b.Hash); ok {
		return judgeResult{verdict: v, cached: true}
	}
	ctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	// A call the provider's pause would keep unsent spends no budget and
	// is no call.
	if p, ok := j.judge.(pausable); ok && p.Paused(ctx) {
		return judgeResult{fallback: FallbackPaused}
	}
	if !j.allow(collection) {
		return judgeResult{fallback: FallbackBudget}
	}
	jm, err := j.judge.Judge(ctx, a.Text, b.Text)
	if errors.Is(err, ErrProviderPaused) {
		// A pause learnt since Paused: not sent either, though its budget
		// is spent (a rate.Limiter gives no token back).
		return judgeResult{fallback: FallbackPaused}
	}
	j.calls.Add(1)
	var r judgeResult
	switch {
	case err == nil && jm.Verdict.valid():
		j.cache.Put(a.Hash, b.Hash, jm.Verdict)
		j.metrics.calls.Add(ctx, 1, j.metrics.callOpts["ok"])
		return judgeResult{verdict: jm.Verdict, reason: jm.Reason}
	case err == nil, errors.Is(err, ErrUnparsable):
		r.fallback = FallbackUnparsable
	case errors.Is(err, context.DeadlineExceeded), errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.fallback = FallbackTimeout
	default:
		r.fallback = FallbackError
	}
	j.metrics.calls.Add(ctx, 1, j.metrics.callOpts[r.fallback])
	msg := "judge returned no verdict"
	if err != nil {
		msg = err.Error()
	}
	j.log.LogAttrs(ctx, slog.LevelWarn, "judge gave no verdict; the pair is not merged",
		slog.String("collection", collection), slog.String("fallback", r.fallback), slog.String("error", msg))
	return r
}

// allow spends one call of the collection's budget, if any is left.
func (j *Judging) allow(collection string) bool {
	if j.perMin <= 0 {
		return true
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	l, ok := j.limiters.Get(collection)
	if !ok {
		l = rate.NewLimiter(rate.Limit(float64(j.perMin)/60), j.perMin)
		j.limiters.Add(collection, l)
	}
	return l.Allow()
}

// Lookup returns a cached verdict for the two hashes, in either order. It
// never calls the judge and is not counted in Stats: it is the read path's
// (and the write path's look at pairs it will not pay a call for).
func (j *Judging) Lookup(hashA, hashB string) (Verdict, bool) {
	if j == nil {
		return VerdictUnknown, false
	}
	return j.cache.Get(hashA, hashB)
}

// Stats counts Decide's work since the start: calls made to the judge,
// cache hits and misses, and decisions that fell back.
func (j *Judging) Stats() JudgeStats {
	if j == nil {
		return JudgeStats{}
	}
	s := JudgeStats{
		Calls:       j.calls.Load(),
		CacheHits:   j.hits.Load(),
		CacheMisses: j.misses.Load(),
		Fallbacks:   j.fallbacks.Load(),
	}
	if n := s.CacheHits + s.CacheMisses; n > 0 {
		s.CacheHitRate = float64(s.CacheHits) / float64(n)
	}
	return s
}

// Span attribute keys of dedup.judge.
const (
	attrJudgeCollection = attribute.Key("db.collection.name")
	attrJudgeOutcome    = attribute.Key("memrank.judge.outcome")
	attrJudgeShared     = attribute.Key("memrank.judge.shared")
)

// judgingMetrics are tier 3's instruments, with their attribute sets built
// once.
type judgingMetrics struct {
	calls     metric.Int64Counter
	cache     metric.Int64Counter
	fallbacks metric.Int64Counter

	callOpts        map[string]metric.MeasurementOption // by outcome
	fallbackOpts    map[string]metric.MeasurementOption // by fallback
	hitOpt, missOpt metric.MeasurementOption
}

func newJudgingMetrics(m metric.Meter) (judgingMetrics, error) {
	var jm judgingMetrics
	var err error
	if jm.calls, err = m.Int64Counter("memrank.judge.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Calls made to the LLM judge, by outcome (ok, timeout, error, unparsable).")); err != nil {
		return jm, err
	}
	if jm.cache, err = m.Int64Counter("memrank.judge.cache", metric.WithUnit("{lookup}"),
		metric.WithDescription("Verdict cache lookups of the write path, by result (hit, miss).")); err != nil {
		return jm, err
	}
	if jm.fallbacks, err = m.Int64Counter("memrank.judge.fallbacks", metric.WithUnit("{decision}"),
		metric.WithDescription("Pairs that needed the judge and got no verdict, by reason; none of them merged.")); err != nil {
		return jm, err
	}
	jm.callOpts = map[string]metric.MeasurementOption{}
	for _, o := range []string{"ok", FallbackTimeout, FallbackError, FallbackUnparsable} {
		jm.callOpts[o] = metric.WithAttributes(attribute.String("outcome", o))
	}
	jm.fallbackOpts = map[string]metric.MeasurementOption{}
	for f := range fallbackReasons {
		jm.fallbackOpts[f] = metric.WithAttributes(attribute.String("reason", f))
	}
	jm.hitOpt = metric.WithAttributes(attribute.String("result", "hit"))
	jm.missOpt = metric.WithAttributes(attribute.String("result", "miss"))
	return jm, nil
}

// Active reports whether a judge is configured: whether Decide can call one.
func (j *Judging) Active() bool { return j != nil && j.judge != nil }
