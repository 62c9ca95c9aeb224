package consolidate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// Reader reads points page by page and by id; *qdrant.Client satisfies it.
type Reader interface {
	ScrollAndOffset(ctx context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, *qdrant.PointId, error)
	Get(ctx context.Context, req *qdrant.GetPoints) ([]*qdrant.RetrievedPoint, error)
}

// Writer writes payloads and companion records; *qdrant.Client satisfies it.
type Writer interface {
	UpdateBatch(ctx context.Context, req *qdrant.UpdateBatchPoints) ([]*qdrant.UpdateResult, error)
	Upsert(ctx context.Context, req *qdrant.UpsertPoints) (*qdrant.UpdateResult, error)
}

// Store is what the job needs from Qdrant.
type Store interface {
	Reader
	Writer
}

var _ Store = (*qdrant.Client)(nil)

// TenantScope says how a tenant is stored and selected; *tenancy.Policy
// satisfies it.
type TenantScope interface {
	Enabled() bool
	PayloadKey() string
	Value(tenant string) *qdrant.Value
	Condition(tenant string) *qdrant.Condition
}

// Options wire a Job. Codec is required.
type Options struct {
	Config Config
	Codec  *memory.Codec
	// Tenancy scopes runs asked for by a tenant; nil: off.
	Tenancy TenantScope
	// Replica names this process in leases (any stable name).
	Replica string
	// Now is the clock; nil: time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// EnsureCompanion creates a collection's audit companion unless it
	// exists (created: this call made it), before the first write of a run
	// or an archive: a collection written through Qdrant's API has none
	// yet, and its audit records need one. nil: the companion must exist.
	EnsureCompanion func(ctx context.Context, coll string) (created bool, err error)
}

// Job consolidates memory collections. It is safe for concurrent use.
type Job struct {
	store  Store
	cfg    Config
	codec  *memory.Codec
	params *scoring.Params
	tenant TenantScope
	now    func() time.Time
	log    *slog.Logger
	owner  string
	ensure func(ctx context.Context, coll string) (bool, error)
}

// New returns a job over store.
func New(store Store, o Options) (*Job, error) {
	if store == nil || o.Codec == nil {
		return nil, errors.New("consolidate: a store and a codec are required")
	}
	cfg := o.Config.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	j := &Job{store: store, cfg: cfg, codec: o.Codec, params: o.Codec.Params(), tenant: o.Tenancy,
		now: o.Now, log: o.Logger, owner: o.Replica, ensure: o.EnsureCompanion}
	if j.now == nil {
		j.now = time.Now
	}
	if j.log == nil {
		j.log = slog.New(slog.DiscardHandler)
	}
	if j.owner == "" {
		j.owner = "memrank"
	}
	return j, nil
}

// Request is one run.
type Request struct {
	Collection string
	// Tenant limits the run to one tenant's memories when tenancy is on.
	Tenant string
	// Operator says the caller is the operator: with tenancy on and no
	// Tenant, the run spans every tenant. Without it such a run is refused,
	// so a missing tenant never widens a request to every tenant.
	Operator bool
	// DryRun computes and reports; nothing is written.
	DryRun bool
	// Progress, when set, is called after each page with the points
	// examined so far.
	Progress func(done int)
}

// Report is what a run did (or, dry, would do).
type Report struct {
	Collection string
	DryRun     bool
	At         time.Time // the clock the tiers were computed at
	Examined   int       // points read
	Memories   int       // scored memories, superseded ones excluded
	// Transitions counts changes of the tier label by "from->to" tier
	// (audit reason "tier"); a lift is not one.
	Transitions map[string]int
	// Archived counts the memories whose tier label became archived in
	// this run. They stay retrievable: age never takes a memory out of
	// answers.
	Archived int
	// Lifted counts the memories an earlier version had taken out of
	// answers for age (archived, not retrievable, by its audit record)
	// that this run made retrievable again (dry: would).
	Lifted  int
	Written int // points whose tier or retrievable was written
	Audited int // audit records written
	// Conflicts are writes skipped because the memory changed between the
	// read and the write (another writer won); a later run redoes them.
	Conflicts int
	// CompanionCreated is true when the run created the collection's audit
	// companion: the collection had none (written through Qdrant's API),
	// and is from now on a memory collection, re-ranked and consolidated
	// on schedule.
	CompanionCreated bool
	// Tiers counts the memories by tier after the run.
	Tiers map[string]int
	// ReviewQueue is the number of memories in tier stale after the run.
	ReviewQueue int
	// CompactedKeys counts access_counts keys folded into the compacted key.
	CompactedKeys int
	Duration      time.Duration
}

// Run consolidates one collection (docs/consolidation.md). It is
// idempotent: a second run at the same clock finds nothing to change and
// writes nothing. An interrupted run is resumed by running it again (the
// work already done is found done).
func (j *Job) Run(ctx context.Context, req Request) (Report, error) {
	start := time.Now()
	if req.Collection == "" || memory.IsCompanion(req.Collection) {
		return Report{}, fmt.Errorf("%w: %q is not a memory collection", ErrInput, req.Collection)
	}
	scope, err := j.scope(req.Tenant, req.Operator)
	if err != nil {
		return Report{}, err
	}
	now := j.now().UTC()
	rep := Report{Collection: req.Collection, DryRun: req.DryRun, At: now,
		Transitions: map[string]int{}, Tiers: map[string]int{}}
	// Heartbeats are read once: a replica that resumes writing during the
	// run is still safe (docs/consolidation.md), and the companion is not
	// indexed on kind, so reading it per page would scan it per page.
	var dead *liveness
	if deadline := j.compactBefore(now); !deadline.IsZero() {
		if dead, err = j.deadReplicas(ctx, req.Collection, deadline); err != nil {
			return Report{}, err
		}
	}
	pace := newPacer(j.cfg.Rate)
	var offset *qdrant.PointId
	for {
		limit := uint32(j.cfg.BatchSize)
		pts, next, err := j.scroll(ctx, &qdrant.ScrollPoints{CollectionName: req.Collection, Filter: scope,
			Limit: &limit, Offset: offset, WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			if status.Code(err) == codes.NotFound {
				return rep, fmt.Errorf("%w: collection %s", ErrNotFound, req.Collection)
			}
			return rep, storeError("read "+req.Collection, err)
		}
		if offset == nil && !req.DryRun {
			// The collection exists: its audit records need their companion.
			if rep.CompanionCreated, err = j.ensureCompanion(ctx, req.Collection); err != nil {
				return rep, err
			}
		}
		if err := j.page(ctx, req, scope, now, pts, dead, &rep); err != nil {
			return rep, err
		}
		rep.Examined += len(pts)
		if req.Progress != nil {
			req.Progress(rep.Examined)
		}
		if next == nil {
			break
		}
		offset = next
		if err := pace.wait(ctx, len(pts)); err != nil {
			return rep, err
		}
	}
	rep.ReviewQueue = rep.Tiers[scoring.TierStale.String()]
	rep.Duration = time.Since(start)
	if !req.DryRun {
		if err := j.recordRun(ctx, req, rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func (j *Job) tenancyOn() bool { return j.tenant != nil && j.tenant.Enabled() }

// ensureCompanion creates coll's audit companion when it has none and the
// job was given the means to. The hook's errors name the companion.
func (j *Job) ensureCompanion(ctx context.Context, coll string) (bool, error) {
	if j.ensure == nil {
		return false, nil
	}
	return j.ensure(ctx, coll)
}

// scope is the tenant filter of a tenant's request; nil with tenancy off
// and for the operator's request over every tenant. With tenancy on, a
// request without a tenant is refused unless it is the operator's: fail
// closed.
func (j *Job) scope(tenant string, operator bool) (*qdrant.Filter, error) {
	switch {
	case !j.tenancyOn():
		return nil, nil
	case tenant != "":
		return &qdrant.Filter{Must: []*qdrant.Condition{j.tenant.Condition(tenant)}}, nil
	case operator:
		return nil, nil
	}
	return nil, fmt.Errorf("%w: tenancy is on and the request names no tenant", ErrInput)
}

func (j *Job) scroll(ctx context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, *qdrant.PointId, error) {
	ctx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
	defer cancel()
	return j.store.ScrollAndOffset(ctx, req)
}

// page decides and writes one page of points. The page's memories stored
// archived and not retrievable are the candidates of the lift: their
// audit trails say which an earlier version archived for age.
func (j *Job) page(ctx context.Context, req Request, scope *qdrant.Filter, now time.Time, pts []*qdrant.RetrievedPoint,
	dead *liveness, rep *Report) error {
	var changes, cands []change
	var folds []fold
	for _, p := range pts {
		if f, ok := j.foldOf(p, dead); ok {
			folds = append(folds, f)
		}
		c, ok := j.decide(p, now)
		if !ok {
			continue
		}
		rep.Memories++
		if c.from == excluded {
			cands = append(cands, c)
			continue
		}
		changes = add(changes, c, rep)
	}
	lifts, err := j.ageArchives(ctx, req.Collection, scope, cands)
	if err != nil {
		return err
	}
	for _, c := range cands {
		if rec, ok := lifts[c.sid]; ok {
			c = c.lift(rec)
		}
		changes = add(changes, c, rep)
	}
	if req.DryRun {
		for _, c := range changes {
			if c.audited() {
				rep.count(c)
			}
		}
		for _, f := range folds {
			rep.CompactedKeys += len(f.keys)
		}
		return nil
	}
	if err := j.apply(ctx, req.Collection, changes, rep); err != nil {
		return err
	}
	return j.compact(ctx, req.Collection, folds, rep)
}

// add counts c's tier after the run and adds it to changes when it writes
// anything.
func add(changes []change, c change, rep *Report) []change {
	rep.Tiers[c.to.tier.String()]++
	if c.from != c.to || c.materialise {
		changes = append(changes, c)
	}
	return changes
}

// count adds an audited change that applied (dry: that was decided) to
// the report.
func (r *Report) count(c change) {
	switch c.reason {
	case reasonLift:
		r.Lifted++
	case reasonTier:
		r.Transitions[c.label()]++
		if c.to.tier == scoring.TierArchived {
			r.Archived++
		}
	}
}

// pacer spaces pages so that at most rate points a second are examined.
type pacer struct {
	rate  float64
	start time.Time
	done  int
}

func newPacer(rate float64) *pacer { return &pacer{rate: rate, start: time.Now()} }

func (p *pacer) wait(ctx context.Context, n int) error {
	p.done += n
	if p.rate <= 0 {
		return ctx.Err()
	}
	due := p.start.Add(time.Duration(float64(p.done) / p.rate * float64(time.Second)))
	d := time.Until(due)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Errors at the package's edge.
var (
	// ErrNotFound: the collection or memory does not exist (in the tenant).
	ErrNotFound = errors.New("consolidate: not found")
	// ErrInput: the request is not usable; the text says why.
	ErrInput = errors.New("consolidate: invalid request")
	// ErrBusy: the memory kept changing under the request (other writers
	// won every attempt); asking again later is the answer.
	ErrBusy = errors.New("consolidate: the memory kept changing")
)
