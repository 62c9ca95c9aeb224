package dedup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/config/check"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/telemetry/settings"
)

// Store is what the write path needs from Qdrant; go-client's
// *qdrant.Client satisfies it.
type Store interface {
	Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error)
	Scroll(ctx context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, error)
	Get(ctx context.Context, req *qdrant.GetPoints) ([]*qdrant.RetrievedPoint, error)
	Upsert(ctx context.Context, req *qdrant.UpsertPoints) (*qdrant.UpdateResult, error)
	UpdateBatch(ctx context.Context, req *qdrant.UpdateBatchPoints) ([]*qdrant.UpdateResult, error)
	CollectionExists(ctx context.Context, name string) (bool, error)
	CreateCollection(ctx context.Context, req *qdrant.CreateCollection) error
	GetCollectionInfo(ctx context.Context, name string) (*qdrant.CollectionInfo, error)
	CreateFieldIndex(ctx context.Context, req *qdrant.CreateFieldIndexCollection) (*qdrant.UpdateResult, error)
	Count(ctx context.Context, req *qdrant.CountPoints) (uint64, error)
}

var _ Store = (*qdrant.Client)(nil)

// Embedders finds the embedder for a recorded model; *embed.Service
// satisfies it.
type Embedders interface {
	For(model string) (embed.Embedder, bool)
}

var _ Embedders = (*embed.Service)(nil)

// TenantScope says how a tenant is stored and selected; *tenancy.Policy
// satisfies it.
type TenantScope interface {
	Enabled() bool
	PayloadKey() string
	Value(tenant string) *qdrant.Value
	Condition(tenant string) *qdrant.Condition
}

// Defaults.
const (
	DefaultSameThreshold        = 0.92
	DefaultJudgeThreshold       = 0.80
	DefaultCorroborateThreshold = 0.85
	DefaultMinIndependentGap    = time.Hour
	DefaultMaxClockSkew         = 5 * time.Minute
	DefaultNeighbours           = 5
	DefaultTimeout              = 10 * time.Second
	DefaultMaxTextBytes         = 64 << 10
	maxMerges                   = 4
	maxListEntries              = 1000 // session, turn, entity and modality lists stop growing here
)

// AuditSuffix ends the name of a memory collection's audit companion.
const AuditSuffix = memory.AuditSuffix

// Config configures the write path. The fields with a koanf tag are the
// dedup section of memrank's configuration (DefaultConfig holds their
// defaults, Validate checks them); the others are how the Engine is wired.
// Codec and Embedder are required; any other zero value means its default.
type Config struct {
	SameThreshold  float64 `koanf:"same_threshold"`  // tier 2: cosine at or above is the same fact; default 0.92
	JudgeThreshold float64 `koanf:"judge_threshold"` // the judge band is [JudgeThreshold, SameThreshold); default 0.80
	// RequireSurfaceChange: independence needs another wording or another
	// modality (docs/write-path.md). The zero value is seed 002's reading;
	// DefaultConfig sets it.
	RequireSurfaceChange bool          `koanf:"require_surface_change"`
	MinIndependentGap    time.Duration `koanf:"min_independent_gap"` // independence needs this long since created_at; default 1h
	// MaxClockSkew is how far ahead of the engine's clock an observation's
	// observed_at (a confirmation's or use's at) may be: a time in the
	// future would count toward the independence gap and freshness before
	// it happened. Default 5m.
	MaxClockSkew time.Duration `koanf:"max_clock_skew"`
	// Timeout bounds the store calls of one operation that has no earlier
	// deadline; default 10s.
	Timeout time.Duration `koanf:"timeout"`
	// Evidence rules of the seeds (evidence.go, docs/write-path.md).
	Hearsay                 HearsayConfig       `koanf:"hearsay"`
	ContradictionCandidates ContradictionConfig `koanf:"contradiction_candidates"`
	// RecurrenceFlags maps a memory type to the sightings (first plus
	// independent re-observations) at which it is flagged as a probable
	// recurring pattern; default {event: 5}; 0 turns a type's flag off.
	RecurrenceFlags map[string]int      `koanf:"recurrence_flags"`
	Corroboration   CorroborationConfig `koanf:"corroboration"`

	Codec    *memory.Codec
	Embedder embed.Embedder
	// Embedders gives the embedder of a collection that recorded another
	// model than Embedder's (a built-in local model, after the default
	// changed); nil: every collection uses Embedder, and one recorded with
	// another model refuses text writes (ErrEmbedderMismatch).
	Embedders Embedders
	// Judging is tier 3 and the verdict cache; nil: no judge (pairs that
	// need one are never merged) and no cache.
	Judging *Judging

	CorroborateThreshold float64 // cosine for corroboration between memories sharing an entity; default 0.85
	Neighbours           int     // tier-2 candidates examined; default 5
	MaxTextBytes         int     // default 64 KiB

	// Forget says what forgetting a session or deleting a memory does with
	// the audit records (the forget section; zero: redact).
	Forget ForgetConfig `koanf:"-"`

	// Tenancy scopes every write when enabled; nil: off.
	Tenancy TenantScope
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// TiersAsOf says when a collection's stored tiers were last computed
	// (the last consolidation the tenant sees), for /v1/stats; ok false:
	// never. nil: unknown, and stats say so.
	TiersAsOf func(ctx context.Context, collection, tenant string) (at time.Time, ok bool, err error)

	// Telemetry is where the write path's logs, spans and metrics go; nil
	// members record nothing.
	Telemetry settings.Settings
}

func (c Config) withDefaults() Config {
	if c.SameThreshold == 0 {
		c.SameThreshold = DefaultSameThreshold
	}
	if c.JudgeThreshold == 0 {
		c.JudgeThreshold = DefaultJudgeThreshold
	}
	if c.CorroborateThreshold == 0 {
		c.CorroborateThreshold = DefaultCorroborateThreshold
	}
	if c.MinIndependentGap == 0 {
		c.MinIndependentGap = DefaultMinIndependentGap
	}
	if c.MaxClockSkew == 0 {
		c.MaxClockSkew = DefaultMaxClockSkew
	}
	if c.Neighbours == 0 {
		c.Neighbours = DefaultNeighbours
	}
	if c.MaxTextBytes == 0 {
		c.MaxTextBytes = DefaultMaxTextBytes
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c = c.evidenceDefaults()
	c.Telemetry = c.Telemetry.WithDefaults()
	return c
}

// DefaultConfig returns the dedup section's defaults (the other fields are
// zero: their defaults).
func DefaultConfig() Config {
	return Config{
		SameThreshold:        DefaultSameThreshold,
		JudgeThreshold:       DefaultJudgeThreshold,
		RequireSurfaceChange: true,
		MinIndependentGap:    DefaultMinIndependentGap,
		MaxClockSkew:         DefaultMaxClockSkew,
		Timeout:              DefaultTimeout,
		Hearsay:              HearsayConfig{CapSource: scoring.SourceWeakInference, Heuristics: true},
		ContradictionCandidates: ContradictionConfig{MinCosine: DefaultContradictionMinCosine,
			MaxCosine: DefaultContradictionMaxCosine, MinSharedEntities: DefaultContradictionMinShared},
		RecurrenceFlags: map[string]int{scoring.TypeEvent: DefaultEventRecurrence},
		Corroboration: CorroborationConfig{Boost: DefaultCorroborationBoost, ContradictionPenalty: DefaultContradictionPenalty,
			ProtectedConfidence: DefaultEvidenceGateConfidence, MinCorroborations: DefaultEvidenceGateCorroborations},
	}
}

// Validate checks the dedup section's values as they are (New checks a
// Config after putting in the defaults of its zero values).
func (c Config) Validate() error {
	var k check.Checker
	k.Unit("same_threshold", c.SameThreshold)
	k.Unit("judge_threshold", c.JudgeThreshold)
	if c.JudgeThreshold > c.SameThreshold {
		k.Add("judge_threshold", "%s is above %s (%s)", check.Float(c.JudgeThreshold), check.Ref("same_threshold"), check.Float(c.SameThreshold))
	}
	if c.MinIndependentGap < 0 {
		k.Add("min_independent_gap", "%s is negative", check.Duration(c.MinIndependentGap))
	}
	if c.MaxClockSkew < 0 {
		k.Add("max_clock_skew", "%s is negative", check.Duration(c.MaxClockSkew))
	}
	k.Timeout("timeout", c.Timeout)
	c.validateEvidence(&k)
	return k.Err()
}

// validateWiring reports a configuration New cannot use.
func (c Config) validateWiring() error {
	var errs []error
	if c.Codec == nil {
		errs = append(errs, errors.New("dedup: Codec is required"))
	}
	if c.Embedder == nil {
		errs = append(errs, errors.New("dedup: Embedder is required"))
	}
	d := c.withDefaults()
	if !(d.JudgeThreshold > 0 && d.JudgeThreshold <= d.SameThreshold && d.SameThreshold <= 1) {
		errs = append(errs, fmt.Errorf("dedup: thresholds must satisfy 0 < judge (%g) <= same (%g) <= 1", d.JudgeThreshold, d.SameThreshold))
	}
	if d.CorroborateThreshold < 0 || d.CorroborateThreshold > 1 {
		errs = append(errs, fmt.Errorf("dedup: corroboration threshold %g outside [0, 1]", d.CorroborateThreshold))
	}
	if err := d.Forget.Validate(); d.Forget.Audit != "" && err != nil {
		errs = append(errs, fmt.Errorf("dedup: forget: %w", err))
	}
	if d.MinIndependentGap < 0 || d.MaxClockSkew < 0 || d.Neighbours < 0 || d.Timeout < 0 || d.MaxTextBytes < 0 {
		errs = append(errs, errors.New("dedup: gaps, counts and timeouts must not be negative"))
	}
	return errors.Join(errs...)
}

// Engine is the write path (docs/write-path.md). It is safe for concurrent
// use. Within the process, every write to one collection and tenant is
// serialised, from the tier-1 look-up to the audit record, so that
// concurrent observations of one fact end as a serial replay would; across
// replicas, lost increments remain possible (README).
type Engine struct {
	store  Store
	cfg    Config
	params *scoring.Params
	codec  *memory.Codec

	locks keyedLocks

	mu      sync.Mutex
	ensured map[string]ensured // collection -> the embedder recorded for it
	// verified are the collections whose memory collection, indexes and
	// companion this process has made sure of: once their record expires,
	// only the record is read again.
	verified map[string]bool

	decisions decisionCounts

	tracer    trace.Tracer
	observed  metric.Int64Counter
	duration  metric.Float64Histogram
	auditLost metric.Int64Counter
}

const scope = "github.com/memrank/memrank/dedup"

// New returns a write path over store.
func New(store Store, cfg Config) (*Engine, error) {
	if store == nil {
		return nil, errors.New("dedup: a store is required")
	}
	if err := cfg.validateWiring(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	e := &Engine{
		store:    store,
		cfg:      cfg,
		params:   cfg.Codec.Params(),
		ensured:  map[string]ensured{},
		verified: map[string]bool{},
		tracer:   cfg.Telemetry.TracerProvider.Tracer(scope),
	}
	e.codec = cfg.Codec
	m := cfg.Telemetry.MeterProvider.Meter(scope)
	var err error
	if e.observed, err = m.Int64Counter("memrank.observe.decisions",
		metric.WithDescription("Observations by decision and dedup tier.")); err != nil {
		return nil, fmt.Errorf("dedup: metrics: %w", err)
	}
	if e.duration, err = m.Float64Histogram("memrank.observe.duration", metric.WithUnit("s"),
		metric.WithDescription("Time to decide and write one observation, confirmation or correction.")); err != nil {
		return nil, fmt.Errorf("dedup: metrics: %w", err)
	}
	if e.auditLost, err = m.Int64Counter("memrank.audit.failures",
		metric.WithDescription("Audit records that could not be written after the memory was.")); err != nil {
		return nil, fmt.Errorf("dedup: metrics: %w", err)
	}
	return e, nil
}

// observation is a validated observation with its levels resolved.
type observation struct {
	Observation
	sourceName, typeName string
	grounding            scoring.Grounding
	ev                   scoring.Evidence // n = 0
	hash                 string
	at                   time.Time

	// claim is what the fold rules read of the text (who said what).
	claim Claim
	// attribution is "reported" (hearsay), "self" or ""; attributionFrom
	// says who decided it, hearsayCue the heuristic's phrase.
	attribution, attributionFrom, hearsayCue string
	attributionInfo                          *AttributionInfo // the outcome's note of hearsay
}

// prepare validates obs and resolves its names. A not_supported grounding is
// returned as rejected (true), not as an error: it is a decision.
func (e *Engine) prepare(obs Observation) (observation, bool, error) {
	o := observation{Observation: obs}
	if err := obs.Validate(e.cfg.MaxTextBytes); err != nil {
		return o, false, err
	}
	if e.tenancyOn() && obs.Tenant == "" {
		return o, false, &InputError{Field: "tenant", Reason: "is required when tenancy is on"}
	}
	p := e.params
	var ok bool
	src := obs.Source
	if src == "" {
		src = scoring.SourceWeakInference
	}
	if o.sourceName, o.ev.Source, ok = memory.ParseSource(src, p.SourceLevels); !ok {
		return o, false, &InputError{Field: "source", Reason: fmt.Sprintf("unknown source level %q (known: %s)", truncate(obs.Source), strings.Join(slices.Sorted(maps.Keys(p.SourceLevels)), ", "))}
	}
	typ := obs.MemoryType
	if typ == "" {
		typ = scoring.TypeFact
	}
	if o.typeName, o.ev.Type, ok = memory.ParseType(typ, p.TypePriors); !ok {
		return o, false, &InputError{Field: "memory_type", Reason: fmt.Sprintf("unknown memory type %q (known: %s)", truncate(obs.MemoryType), strings.Join(slices.Sorted(maps.Keys(p.TypePriors)), ", "))}
	}
	e.attribution(&o)
	o.grounding = scoring.GroundingSupported
	if obs.Grounding != "" {
		// Validate let through only the documented spellings.
		o.grounding, _ = memory.ParseGrounding(obs.Grounding)
	}
	if o.grounding == scoring.GroundingNotSupported {
		return o, true, nil
	}
	lp, hasLP := 0.0, obs.ExtractorLogprob != nil
	if hasLP {
		lp = *obs.ExtractorLogprob
	}
	o.ev.Extractor = p.Extractor(obs.ExtractorModel, lp, hasLP)
	o.ev.Grounding = o.grounding
	o.ev.Confidence = p.Grounded(o.ev.Components, o.grounding)
	o.hash = memory.TextHash(obs.Text)
	o.claim = ReadClaim(obs.Text, obs.Speaker, obs.Entities)
	o.at = obs.ObservedAt
	if o.at.IsZero() {
		o.at = e.cfg.Now()
	}
	o.at = o.at.UTC()
	return o, false, nil
}

// notAhead refuses a caller's time later than the engine's clock plus
// MaxClockSkew. The engine's clock, not the wall clock: an evaluation run
// at an earlier instant writes observations of its own past.
func (e *Engine) notAhead(field string, t time.Time) error {
	if t.IsZero() {
		return nil
	}
	now := e.cfg.Now()
	if ahead := t.Sub(now); ahead > e.cfg.MaxClockSkew {
		return inputError(field, "%s is %s ahead of the server's clock (%s); at most %s ahead is accepted (dedup.max_clock_skew)",
			t.UTC().Format(time.RFC3339), ahead.Round(time.Second), now.UTC().Format(time.RFC3339), e.cfg.MaxClockSkew)
	}
	return nil
}

func (e *Engine) tenancyOn() bool { return e.cfg.Tenancy != nil && e.cfg.Tenancy.Enabled() }

// Observe decides what one observation is (new, a restatement, an
// independent re-observation or a contradiction) and writes it with its
// audit records.
func (e *Engine) Observe(ctx context.Context, obs Observation) (Outcome, error) {
	if obs.Corrects != "" {
		return e.Correct(ctx, obs)
	}
	return e.run(ctx, "dedup.observe", obs, false)
}

// gateWarnings warns when the memory an observation ended up in is stored
// below the retrieval gate: an agent that stores a text without saying how
// it was learnt (source weak_inference by default) should hear that such a
// memory comes back only as the best match of a question, flagged
// below_gate, or when nothing passes the gate.
func (e *Engine) gateWarnings(out Outcome) []string {
	gate := e.params.RetrievalGate
	if out.Decision == DecisionRejected || out.MemoryID == "" || !(out.Confidence < gate) {
		return nil
	}
	return []string{fmt.Sprintf("the memory's confidence %.4g is below the retrieval gate %.2g: it is returned only as the best match "+
		"of a question (flagged below_gate) or when nothing passes the gate; say how it was learnt with source (direct: the user "+
		"said it) or raise it with confirm", out.Confidence, gate)}
}

// Correct stores obs as the correction of memory obs.Corrects, which it
// supersedes whatever the two confidences; the correction's own memory
// grows its contradictions by one.
func (e *Engine) Correct(ctx context.Context, obs Observation) (Outcome, error) {
	if obs.Corrects == "" {
		return Outcome{}, &InputError{Field: "corrects", Reason: "names no memory"}
	}
	if obs.Source == "" {
		obs.Source = scoring.SourceDirect // a correction is the user's own statement
	}
	return e.run(ctx, "dedup.correct", obs, true)
}

func (e *Engine) run(ctx context.Context, name string, obs Observation, correction bool) (out Outcome, err error) {
	start := time.Now()
	ctx, span := e.tracer.Start(ctx, name, trace.WithAttributes(
		attribute.String("db.collection.name", obs.Collection)))
	defer func() { e.finish(ctx, span, start, obs.Collection, out, err) }()
	defer func() {
		if err == nil {
			out.Warnings = e.gateWarnings(out)
		}
	}()

	o, rejected, err := e.prepare(obs)
	if err != nil {
		return Outcome{}, err
	}
	if err := e.notAhead("observed_at", obs.ObservedAt); err != nil {
		return Outcome{}, err
	}
	if rejected {
		return Outcome{Decision: DecisionRejected, Reason: "grounding not_supported: the text is not supported by its source"}, nil
	}
	// The embedding has the embedder's own timeout; the deadline after it
	// bounds the store calls.
	vec, model, err := e.vector(ctx, obs)
	if err != nil {
		return Outcome{}, err
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	created, bands, err := e.ensure(ctx, obs.Collection, len(vec), model)
	if err != nil {
		return Outcome{}, err
	}
	out, err = e.decide(ctx, o, vec, bands, correction)
	if isNotFound(err) && !created {
		// The collection may have been dropped through Qdrant's API while
		// this process (or its audit companion's embedder record) still
		// knew it: make it again, and decide once more, as the first
		// observation of a new collection would.
		var again bool
		if again, err = e.recreate(ctx, obs.Collection, len(vec), model, err); again {
			created = true
			out, err = e.decide(ctx, o, vec, bands, correction)
		}
	}
	if err != nil {
		return Outcome{}, err
	}
	out.CreatedCollection = created
	return out, nil
}

// decide is run's decision for an observation whose collection is ensured:
// the judge first (outside the lock), then, under the collection's lock, a
// replay of a known observation_id, the decision and its commit.
func (e *Engine) decide(ctx context.Context, o observation, vec []float32, bands embed.Bands, correction bool) (Outcome, error) {
	obs := o.Observation
	w := &write{e: e, o: o, vec: vec, coll: obs.Collection, tenant: obs.Tenant, bands: bands}
	w.out.Attribution = o.attributionInfo
	if !correction && e.cfg.Judging.Active() {
		// The judge is asked before the lock is taken, so that one slow LLM
		// call does not hold up every other write to the collection; the
		// decision under the lock then reuses its verdict.
		if err := w.prejudge(ctx); err != nil {
			return Outcome{}, err
		}
	}
	unlock, err := e.locks.lock(ctx, obs.Collection+"\x00"+obs.Tenant)
	if err != nil {
		return Outcome{}, err
	}
	defer unlock()

	if obs.ObservationID != "" {
		if prev, ok, err := e.replay(ctx, obs.Collection, obs.Tenant, obs.ObservationID); err != nil || ok {
			return prev, err
		}
	}
	if correction {
		err = w.correct(ctx)
	} else {
		err = w.observe(ctx)
	}
	if err != nil {
		return Outcome{}, err
	}
	if err := w.commit(ctx); err != nil {
		return Outcome{}, err
	}
	return w.out, nil
}

// recreate makes coll again after a write into it answered "not found"
// (cause): again reports that the memory collection was gone and is made
// now, so that nothing was written to it and the decision can be taken
// once more. A companion dropped instead is made again by the next write,
// which ensures everything anew; this one fails with cause.
func (e *Engine) recreate(ctx context.Context, coll string, dims int, model string, cause error) (again bool, err error) {
	e.unverify(coll)
	exists, err := e.store.CollectionExists(ctx, coll)
	if err != nil {
		return false, fmt.Errorf("dedup: look up collection %s: %w", coll, err)
	}
	if exists {
		return false, cause
	}
	if _, err := e.ensureMemories(ctx, coll, dims, model); err != nil {
		return false, err
	}
	if err := e.ensureAudit(ctx, coll); err != nil {
		return false, err
	}
	return true, nil
}

// vector is the observation's vector and the model that made it: the
// caller's (callerSupplied), or its text embedded with the collection's
// recorded embedder when Embedders has it, else with the configured one.
// A collection recorded with a model that cannot be made here, or being
// re-embedded, is refused before anything is embedded.
func (e *Engine) vector(ctx context.Context, obs Observation) ([]float32, string, error) {
	if obs.Vector != nil {
		return obs.Vector, callerSupplied, nil
	}
	emb := e.cfg.Embedder
	if e.cfg.Embedders != nil {
		rec, err := e.recorded(ctx, obs.Collection)
		if err != nil {
			return nil, "", err
		}
		if rec != nil && rec.migrating != "" {
			return nil, "", &MigratingError{Collection: obs.Collection, From: rec.model, To: rec.migrating}
		}
		if rec != nil && rec.model != callerSupplied {
			r, ok := e.cfg.Embedders.For(rec.model)
			if !ok {
				return nil, "", mismatch(obs.Collection, rec.model, rec.dims, emb.Model(), emb.Dimensions())
			}
			emb = r
		}
	}
	vs, err := emb.Embed(ctx, []string{obs.Text})
	if err != nil {
		return nil, "", fmt.Errorf("dedup: embed: %w", err)
	}
	if len(vs) != 1 {
		return nil, "", fmt.Errorf("dedup: embed: %d vectors for one text", len(vs))
	}
	return vs[0], emb.Model(), nil
}

func (e *Engine) finish(ctx context.Context, span trace.Span, start time.Time, coll string, out Outcome, err error) {
	defer span.End()
	if err != nil {
		var ie *InputError
		if !errors.As(err, &ie) {
			span.RecordError(err)
			span.SetStatus(codes.Error, "write failed")
		}
		return
	}
	span.SetAttributes(attribute.String("memrank.decision", string(out.Decision)),
		attribute.Int("memrank.dedup.tier", out.Tier), attribute.Bool("memrank.replayed", out.Replayed))
	if out.Judge != nil {
		span.SetAttributes(attribute.String("memrank.judge.verdict", out.Judge.Verdict),
			attribute.Bool("memrank.judge.cached", out.Judge.Cached),
			attribute.String("memrank.judge.fallback", out.Judge.Fallback))
	}
	if out.Replayed {
		return
	}
	e.decisions.add(coll, out.Decision)
	attrs := metric.WithAttributes(attribute.String("decision", string(out.Decision)), attribute.Int("tier", out.Tier))
	e.observed.Add(ctx, 1, attrs)
	e.duration.Record(ctx, time.Since(start).Seconds(), attrs)
}

func (e *Engine) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, e.cfg.Timeout)
}

// Confirm applies an explicit confirmation to a stored memory (docs/scoring.md):
// s rises to the confirmed level, n grows by one, and the confidence is
// clamped below 1. A session confirms a memory once (and the confirmations
// without a session, together, once): a repeat leaves n as it was and says
// so (Outcome.AlreadyCounted).
func (e *Engine) Confirm(ctx context.Context, c Confirmation) (out Outcome, err error) {
	start := time.Now()
	ctx, span := e.tracer.Start(ctx, "dedup.confirm", trace.WithAttributes(
		attribute.String("db.collection.name", c.Collection)))
	defer func() { e.finish(ctx, span, start, c.Collection, out, err) }()
	if err := c.Validate(); err != nil {
		return Outcome{}, err
	}
	if e.tenancyOn() && c.Tenant == "" {
		return Outcome{}, &InputError{Field: "tenant", Reason: "is required when tenancy is on"}
	}
	id, err := parseID(c.MemoryID)
	if err != nil {
		return Outcome{}, &InputError{Field: "id", Reason: err.Error()}
	}
	if err := e.notAhead("at", c.At); err != nil {
		return Outcome{}, err
	}
	at := c.At
	if at.IsZero() {
		at = e.cfg.Now()
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	unlock, err := e.locks.lock(ctx, c.Collection+"\x00"+c.Tenant)
	if err != nil {
		return Outcome{}, err
	}
	defer unlock()
	if c.ObservationID != "" {
		if prev, ok, err := e.replay(ctx, c.Collection, c.Tenant, c.ObservationID); err != nil || ok {
			return prev, err
		}
	}
	w := &write{e: e, coll: c.Collection, tenant: c.Tenant, o: observation{
		Observation: Observation{Collection: c.Collection, Tenant: c.Tenant, ObservationID: c.ObservationID,
			SessionID: c.SessionID, TurnID: c.TurnID},
		at: at.UTC(),
	}}
	m, err := w.load(ctx, id)
	if err != nil {
		return Outcome{}, err
	}
	// A memory written by something else has no audit trail yet: make it
	// before the memory changes, so that a confirmation is never applied
	// and then answered as a failure (which a retry would count twice).
	if err := e.ensureAudit(ctx, c.Collection); err != nil {
		return Outcome{}, err
	}
	first, err := w.firstConfirmation(ctx, m)
	if err != nil {
		return Outcome{}, err
	}
	w.confirm(m, first)
	if err := w.commit(ctx); err != nil {
		return Outcome{}, err
	}
	return w.out, nil
}

// keyedLocks serialises work per key; entries live while held or awaited.
type keyedLocks struct {
	mu sync.Mutex
	m  map[string]*keyedLock
}

type keyedLock struct {
	sem  chan struct{} // one token: held by the writer
	refs int
}

// lock waits for key's lock until ctx ends: a caller that gave up does not
// stay queued behind a slow writer.
func (l *keyedLocks) lock(ctx context.Context, key string) (unlock func(), err error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*keyedLock{}
	}
	k := l.m[key]
	if k == nil {
		k = &keyedLock{sem: make(chan struct{}, 1)}
		l.m[key] = k
	}
	k.refs++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if k.refs--; k.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
	select {
	case k.sem <- struct{}{}:
	case <-ctx.Done():
		release()
		return nil, fmt.Errorf("dedup: waiting for other writes to the collection: %w", ctx.Err())
	}
	return func() {
		<-k.sem
		release()
	}, nil
}

var decisionOrder = [...]Decision{DecisionInserted, DecisionRestatement, DecisionIndependent,
	DecisionContradiction, DecisionRejected, DecisionConfirmed, DecisionCorrected, DecisionUsed}

const numDecisions = len(decisionOrder)

func decisionIndex(d Decision) int {
	for i, x := range decisionOrder {
		if x == d {
			return i
		}
	}
	return -1
}
