package consolidate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/memory"
)

// Companion record kinds and keys. The audit records use the write path's
// keys (docs/write-path.md), so GET /v1/memories/{id} shows them in the
// memory's trail; the others are this package's own points.
const (
	kindKey         = "kind"
	kindAudit       = "audit"
	kindRun         = "consolidation"
	kindLease       = "consolidation_lease"
	decisionUpkeep  = "consolidated"
	decisionReview  = "reviewed"
	keyOldTier      = "old_tier"
	keyNewTier      = "new_tier"
	keyCollection   = "collection"
	keyFinishedAt   = "finished_at"
	keyComputedAt   = "computed_at"
	keyLeaseHolder  = "holder"
	keyLeaseExpires = "expires_at"
	// keyAgeArchive names, on a lift's record (and on a reviewer's archive
	// of an age-archived memory), the audit record of the age archive.
	keyAgeArchive = "age_archive"
)

// auditID derives a transition's record id from the memory, the transition
// and the state it started from (and, for a lift, the age archive it
// undoes): replicas making the same transition write the same point.
func (j *Job) auditID(coll string, c change) string {
	parts := []string{coll, c.reason, c.sid, c.from.tier.String(), strconv.FormatBool(c.from.retrievable),
		c.to.tier.String(), strconv.FormatBool(c.to.retrievable)}
	for _, f := range basisFields {
		parts = append(parts, valueKey(c.basis[j.codec.Key(f)]))
	}
	if c.lifts != "" {
		// A lift (or a reviewer's archive taking over an age archive) is
		// one per age archive: every replica reads the same trail.
		parts = append(parts, c.lifts)
	}
	return memory.DeterministicID(parts...)
}

// auditPoint is a transition's audit record.
func (j *Job) auditPoint(coll string, c change) *qdrant.PointStruct {
	decision := decisionUpkeep
	if c.reason == reasonArchive {
		decision = decisionReview
	}
	p := map[string]*qdrant.Value{
		kindKey:           qdrant.NewValueString(kindAudit),
		"memory_id":       qdrant.NewValueString(c.sid),
		"observation_id":  qdrant.NewValueString(""),
		"reason":          qdrant.NewValueString(c.reason),
		"old":             qdrant.NewValueDouble(memory.RoundConfidence(c.confidence)),
		"new":             qdrant.NewValueDouble(memory.RoundConfidence(c.confidence)),
		"old_n":           qdrant.NewValueInt(int64(c.n)),
		"new_n":           qdrant.NewValueInt(int64(c.n)),
		"at":              qdrant.NewValueString(memory.FormatTime(j.now())),
		"session_id":      qdrant.NewValueString(""),
		"turn_id":         qdrant.NewValueString(""),
		"grounding":       qdrant.NewValueString(""),
		"decision":        qdrant.NewValueString(decision),
		"related":         qdrant.NewValueString(""),
		"seq":             qdrant.NewValueInt(0),
		keyCollection:     qdrant.NewValueString(coll),
		"written_at_ns":   qdrant.NewValueInt(time.Now().UnixNano()),
		keyOldTier:        qdrant.NewValueString(c.from.tier.String()),
		keyNewTier:        qdrant.NewValueString(c.to.tier.String()),
		"old_retrievable": qdrant.NewValueBool(c.from.retrievable),
		"new_retrievable": qdrant.NewValueBool(c.to.retrievable),
	}
	if c.lifts != "" {
		// The record of the age archive this one lifts or takes over.
		p[keyAgeArchive] = qdrant.NewValueString(c.lifts)
	}
	if c.tenant != nil {
		p[j.tenant.PayloadKey()] = c.tenant
	}
	return &qdrant.PointStruct{Id: qdrant.NewID(j.auditID(coll, c)), Vectors: qdrant.NewVectorsDense([]float32{1}), Payload: p}
}

func (j *Job) upsert(ctx context.Context, coll string, pts []*qdrant.PointStruct) error {
	if len(pts) == 0 {
		return nil
	}
	wait := true
	ctx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
	defer cancel()
	if _, err := j.store.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: coll, Wait: &wait, Points: pts}); err != nil {
		return fmt.Errorf("consolidate: write %s: %w", coll, err)
	}
	return nil
}

// runID is the id of a collection's last-run record (one per tenant run,
// "" for the operator's).
func runID(coll, tenant string) *qdrant.PointId {
	return qdrant.NewID(memory.DeterministicID("memrank-consolidation", coll, tenant))
}

// LastRun is the record of a collection's last completed run.
type LastRun struct {
	FinishedAt time.Time
	// ComputedAt is the clock the tiers were computed at.
	ComputedAt time.Time
	// Tiers counts the memories by tier as that run left them (nil for a
	// tenant reading the operator's run).
	Tiers map[string]int
}

// recordRun writes the last-run record: the stats read it to say "tiers as
// of the last consolidation at T".
func (j *Job) recordRun(ctx context.Context, req Request, rep Report) error {
	tiers := make(map[string]*qdrant.Value, len(rep.Tiers))
	for k, v := range rep.Tiers {
		tiers[k] = qdrant.NewValueInt(int64(v))
	}
	p := map[string]*qdrant.Value{
		kindKey:       qdrant.NewValueString(kindRun),
		keyCollection: qdrant.NewValueString(req.Collection),
		keyFinishedAt: qdrant.NewValueString(memory.FormatTime(time.Now())),
		keyComputedAt: qdrant.NewValueString(memory.FormatTime(rep.At)),
		"tiers":       qdrant.NewValueFromFields(tiers),
		"memories":    qdrant.NewValueInt(int64(rep.Memories)),
	}
	if j.tenancyOn() && req.Tenant != "" {
		// The tenant's own record is visible to the tenant only.
		p[j.tenant.PayloadKey()] = j.tenant.Value(req.Tenant)
	}
	pt := &qdrant.PointStruct{Id: runID(req.Collection, req.Tenant), Vectors: qdrant.NewVectorsDense([]float32{1}), Payload: p}
	return j.upsert(ctx, memory.AuditCollection(req.Collection), []*qdrant.PointStruct{pt})
}

// ReadLastRun reads the record of the last completed run that computed
// the tiers a tenant sees. Tenant "" reads the operator's run over every
// tenant (what `serve`'s schedule and `memrank consolidate` without
// --tenant write); a tenant gets the later of its own run and the
// operator's, since both computed its memories' tiers. When the operator's
// is the later, Tiers is nil: that run counted every tenant's memories.
// ok is false when no such run completed.
func ReadLastRun(ctx context.Context, r Reader, coll, tenant string) (run LastRun, ok bool, err error) {
	ids := []*qdrant.PointId{runID(coll, "")}
	if tenant != "" {
		ids = append(ids, runID(coll, tenant))
	}
	pts, err := r.Get(ctx, &qdrant.GetPoints{CollectionName: memory.AuditCollection(coll), Ids: ids,
		WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		if status.Code(err) == codes.NotFound {
			return LastRun{}, false, nil
		}
		return LastRun{}, false, fmt.Errorf("consolidate: read the last run of %s: %w", coll, err)
	}
	operator := idString(ids[0])
	for _, p := range pts {
		got := lastRunOf(p.GetPayload())
		if idString(p.GetId()) == operator && tenant != "" {
			got.Tiers = nil
		}
		// On a tie the tenant's own record wins: it has the tenant's counts.
		if !ok || got.ComputedAt.After(run.ComputedAt) || (got.ComputedAt.Equal(run.ComputedAt) && got.Tiers != nil) {
			run, ok = got, true
		}
	}
	return run, ok, nil
}

func lastRunOf(pl map[string]*qdrant.Value) LastRun {
	var run LastRun
	run.FinishedAt, _ = memory.ParseTime(pl[keyFinishedAt].GetStringValue())
	run.ComputedAt, _ = memory.ParseTime(pl[keyComputedAt].GetStringValue())
	run.Tiers = map[string]int{}
	for k, v := range pl["tiers"].GetStructValue().GetFields() {
		run.Tiers[k] = int(v.GetIntegerValue())
	}
	return run
}

// LastRun is ReadLastRun on the job's store.
func (j *Job) LastRun(ctx context.Context, coll, tenant string) (LastRun, bool, error) {
	return ReadLastRun(ctx, j.store, coll, tenant)
}

func leaseID(coll string) *qdrant.PointId {
	return qdrant.NewID(memory.DeterministicID("memrank-consolidation-lease", coll))
}

// acquire takes the collection's lease for the job's replica unless
// another holds an unexpired one. It is best effort (two replicas may
// both take it in a race): the lease spares work, correctness never
// depends on it.
func (j *Job) acquire(ctx context.Context, coll string) (bool, error) {
	ac := memory.AuditCollection(coll)
	gctx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
	pts, err := j.store.Get(gctx, &qdrant.GetPoints{CollectionName: ac, Ids: []*qdrant.PointId{leaseID(coll)},
		WithPayload: qdrant.NewWithPayload(true)})
	cancel()
	if err != nil {
		return false, fmt.Errorf("consolidate: read the lease of %s: %w", coll, err)
	}
	now := time.Now()
	if len(pts) == 1 {
		pl := pts[0].GetPayload()
		exp, _ := memory.ParseTime(pl[keyLeaseExpires].GetStringValue())
		if holder := pl[keyLeaseHolder].GetStringValue(); holder != j.owner && exp.After(now) {
			return false, nil
		}
	}
	pt := &qdrant.PointStruct{Id: leaseID(coll), Vectors: qdrant.NewVectorsDense([]float32{1}), Payload: map[string]*qdrant.Value{
		kindKey:         qdrant.NewValueString(kindLease),
		keyCollection:   qdrant.NewValueString(coll),
		keyLeaseHolder:  qdrant.NewValueString(j.owner),
		keyLeaseExpires: qdrant.NewValueString(memory.FormatTime(now.Add(j.cfg.Lease))),
	}}
	return true, j.upsert(ctx, ac, []*qdrant.PointStruct{pt})
}
