package dedup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/batchjob"
	"github.com/memrank/memrank/config/check"
	"github.com/memrank/memrank/memory"
)

// What forgetting does with the audit records that carry the forgotten
// session, or belong to a deleted memory (docs/forgetting.md).
const (
	// AuditRedact keeps the records without the session, turn, observation
	// id, entities and modality: the confidence changes still add up.
	AuditRedact = "redact"
	// AuditDelete deletes the evidence records; records of merges and
	// supersessions are redacted (other memories' state rests on them).
	AuditDelete = "delete"
	// AuditKeep keeps the records whole, marked forgotten.
	AuditKeep = "keep"
)

// Audit reasons of forgetting itself.
const (
	reasonForget = "forget" // a memory recomputed without a session, or freed from a deleted winner
	reasonDelete = "delete" // a memory deleted
)

// Bounds of one forget: the memories it may touch, the writes per batch.
const (
	maxForgetMemories = 100000
	forgetBatch       = 256
)

// ErrTooLarge: a forget or a delete would read or change more than one
// call may (docs/forgetting.md).
var ErrTooLarge = errors.New("dedup: too much to forget in one call")

// ForgetConfig is the forget section of memrank's configuration.
type ForgetConfig struct {
	// Audit is what happens to the audit records of forgotten evidence:
	// redact (default), delete or keep.
	Audit string `koanf:"audit"`
}

// DefaultForgetConfig returns the forget section's defaults.
func DefaultForgetConfig() ForgetConfig { return ForgetConfig{Audit: AuditRedact} }

// Validate checks the forget section.
func (c ForgetConfig) Validate() error {
	var k check.Checker
	k.OneOf("audit", c.Audit, AuditRedact, AuditDelete, AuditKeep)
	return k.Err()
}

func (c ForgetConfig) policy() string {
	if c.Audit == "" {
		return AuditRedact
	}
	return c.Audit
}

// ForgetReport is the answer to forgetting a session or deleting a memory.
// A second identical call finds nothing left to do: every count is 0.
type ForgetReport struct {
	Collection      string `json:"collection"`
	MemoriesUpdated int    `json:"memories_updated"` // recomputed without the session, or freed from a deleted winner
	MemoriesDeleted int    `json:"memories_deleted"` // no evidence left, or deleted on request
	AuditRedacted   int    `json:"audit_redacted"`
	AuditDeleted    int    `json:"audit_deleted"`
	AuditKept       int    `json:"audit_kept"` // kept whole, marked forgotten (forget.audit keep)
	AuditPolicy     string `json:"audit_policy"`
}

// ForgetSession removes session's evidence from every memory of the tenant
// in collection (docs/forgetting.md): each memory it supported is
// recomputed from the audit records that remain, memories only it
// supported are deleted, memories superseded by a deleted one become
// retrievable again, and its audit records are redacted, deleted or kept
// as configured. It holds the collection and tenant's write lock
// throughout, so an observation cannot interleave with it.
func (e *Engine) ForgetSession(ctx context.Context, collection, tenant, session string) (rep ForgetReport, err error) {
	ctx, span := e.tracer.Start(ctx, "dedup.forget", attrColl(collection))
	defer span.End()
	if err := e.checkForget(collection, tenant); err != nil {
		return ForgetReport{}, err
	}
	if session == "" {
		return ForgetReport{}, inputError("session_id", "required")
	}
	if err := checkString("session_id", session, MaxFieldBytes); err != nil {
		return ForgetReport{}, err
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	unlock, err := e.lockExisting(ctx, collection, tenant)
	if err != nil {
		return ForgetReport{}, err
	}
	defer unlock()

	f := &forget{e: e, r: newReplayer(e, collection, tenant, session), coll: collection, tenant: tenant,
		session: session, policy: e.cfg.Forget.policy(), now: e.cfg.Now().UTC()}
	ids, err := f.sessionMemories(ctx)
	if err != nil {
		return ForgetReport{}, err
	}
	recs, err := e.scrollAudit(ctx, collection, e.auditFilter(tenant, qdrant.NewMatchKeyword(auditSessionID, session)), maxForgetMemories)
	if err != nil {
		return ForgetReport{}, err
	}
	for _, rec := range recs {
		if rec.forgetRecord || rec.Forgotten || rec.SessionID != session {
			continue
		}
		f.records = append(f.records, rec)
		ids = append(ids, rec.MemoryID)
		if rec.Reason == reasonUsed {
			f.noteUse(rec)
		}
	}
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if err := f.recompute(ctx, id); err != nil {
			return ForgetReport{}, err
		}
	}
	if err := f.recomputeRelated(ctx); err != nil {
		return ForgetReport{}, err
	}
	if err := f.finish(ctx); err != nil {
		return ForgetReport{}, err
	}
	span.SetAttributes(attribute.Int("memrank.memories.updated", f.rep.MemoriesUpdated),
		attribute.Int("memrank.memories.deleted", f.rep.MemoriesDeleted))
	return f.rep, nil
}

// DeleteMemory deletes one memory of the tenant, and the memories merged
// into it (the same fact); claims it superseded become retrievable again;
// its audit records are redacted, deleted or kept as configured. A memory
// that does not exist (or is another tenant's) is nothing to do.
func (e *Engine) DeleteMemory(ctx context.Context, collection, tenant, id string) (ForgetReport, error) {
	ctx, span := e.tracer.Start(ctx, "dedup.delete", attrColl(collection))
	defer span.End()
	if err := e.checkForget(collection, tenant); err != nil {
		return ForgetReport{}, err
	}
	if err := CheckMemoryID("id", id); err != nil {
		return ForgetReport{}, err
	}
	pid, err := parseID(id)
	if err != nil {
		return ForgetReport{}, &InputError{Field: "id", Reason: err.Error()}
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	unlock, err := e.lockExisting(ctx, collection, tenant)
	if err != nil {
		return ForgetReport{}, err
	}
	defer unlock()
	f := &forget{e: e, r: newReplayer(e, collection, tenant, ""), coll: collection, tenant: tenant,
		policy: e.cfg.Forget.policy(), now: e.cfg.Now().UTC(), deleting: true}
	cur, err := f.r.memory(ctx, idString(pid))
	if err != nil {
		return ForgetReport{}, err
	}
	if cur != nil {
		if err := f.deleteWithMerged(ctx, cur, 0); err != nil {
			return ForgetReport{}, err
		}
		if err := f.recomputeRelated(ctx); err != nil {
			return ForgetReport{}, err
		}
	}
	if err := f.finish(ctx); err != nil {
		return ForgetReport{}, err
	}
	return f.rep, nil
}

func attrColl(c string) trace.SpanStartEventOption {
	return trace.WithAttributes(attribute.String("db.collection.name", c))
}

func (e *Engine) checkForget(collection, tenant string) error {
	if err := checkCollection(collection); err != nil {
		return err
	}
	if e.tenancyOn() && tenant == "" {
		return &InputError{Field: "tenant", Reason: "is required when tenancy is on"}
	}
	return nil
}

// lockExisting takes the collection and tenant's write lock; an unknown
// collection is ErrNotFound.
func (e *Engine) lockExisting(ctx context.Context, collection, tenant string) (func(), error) {
	ok, err := e.store.CollectionExists(ctx, collection)
	if err != nil {
		return nil, fmt.Errorf("dedup: look up collection %s: %w", collection, err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: collection %s", ErrNotFound, collection)
	}
	return e.locks.lock(ctx, collection+"\x00"+tenant)
}

// forget is one forget or delete: what it decided and will write.
type forget struct {
	e        *Engine
	r        *replayer
	coll     string
	tenant   string
	session  string // "" for a delete
	policy   string
	now      time.Time
	deleting bool

	records []trailRecord      // audit records of the forgotten session
	updated map[string]*stored // memories to rewrite
	deleted map[string]*stored // memories to delete
	freed   map[string]string  // memory -> the deleted winner it is no longer superseded by
	rep     ForgetReport

	uses        map[string]forgottenUses // the forgotten session's uses, by memory
	usesChanged map[string]bool          // updated memories whose uses to write
}

// sessionMemories are the ids of the tenant's memories whose session_ids
// holds the session.
func (f *forget) sessionMemories(ctx context.Context) ([]string, error) {
	w := &write{e: f.e, coll: f.coll, tenant: f.tenant}
	flt := w.scope()
	flt.Must = append(flt.Must, qdrant.NewMatchKeyword(w.key(memory.FieldSessionIDs), f.session))
	return f.scrollIDs(ctx, flt)
}

func (f *forget) scrollIDs(ctx context.Context, flt *qdrant.Filter) ([]string, error) {
	var ids []string
	var offset *qdrant.PointId
	for {
		limit := uint32(1024)
		pts, next, err := f.e.scrollPage(ctx, &qdrant.ScrollPoints{CollectionName: f.coll, Filter: flt, Limit: &limit,
			Offset: offset, WithPayload: qdrant.NewWithPayloadEnable(false)})
		if err != nil {
			return nil, fmt.Errorf("dedup: look up memories in %s: %w", f.coll, err)
		}
		for _, p := range pts {
			ids = append(ids, idString(p.GetId()))
		}
		if len(ids) > maxForgetMemories {
			return nil, errTooMany("memories", maxForgetMemories)
		}
		if next == nil {
			return ids, nil
		}
		offset = next
	}
}

// recompute decides one memory the session touched: rebuilt from what
// remains, or deleted when nothing does.
func (f *forget) recompute(ctx context.Context, id string) error {
	cur, err := f.r.memory(ctx, id)
	if err != nil || cur == nil {
		return err
	}
	st, err := f.r.replayAll(ctx, id)
	if err != nil {
		return err
	}
	if !st.has {
		f.markDeleted(cur)
		return nil
	}
	nm, err := f.r.rebuilt(ctx, cur, st)
	if err != nil {
		return err
	}
	if err := f.dropUses(ctx, nm); err != nil {
		return err
	}
	if cur.m.SupersededBy != "" && nm.m.SupersededBy == "" {
		f.setFreed(id, cur.m.SupersededBy)
	}
	f.markUpdated(nm)
	return nil
}

func (f *forget) markDeleted(cur *stored) {
	if f.deleted == nil {
		f.deleted = map[string]*stored{}
	}
	f.deleted[cur.sid] = cur
}

// setFreed notes that a memory is no longer superseded by winner (its
// forget record names it).
func (f *forget) setFreed(id, winner string) {
	if f.freed == nil {
		f.freed = map[string]string{}
	}
	f.freed[id] = winner
}

func (f *forget) markUpdated(st *stored) {
	if f.updated == nil {
		f.updated = map[string]*stored{}
	}
	f.updated[st.sid] = st
}

// deleteWithMerged deletes cur and the memories merged into it.
func (f *forget) deleteWithMerged(ctx context.Context, cur *stored, depth int) error {
	f.markDeleted(cur)
	trail, err := f.r.trail(ctx, cur.sid)
	if err != nil {
		return err
	}
	for _, rec := range trail {
		if rec.Reason != "merge" || rec.dropped || depth >= maxReplayDepth {
			continue
		}
		l, err := f.r.memory(ctx, rec.Related)
		if err != nil {
			return err
		}
		if l != nil && l.m.SupersededBy == cur.sid && f.deleted[l.sid] == nil {
			if err := f.deleteWithMerged(ctx, l, depth+1); err != nil {
				return err
			}
		}
	}
	if len(f.deleted) > maxForgetMemories {
		return errTooMany("memories", maxForgetMemories)
	}
	return nil
}

// recomputeRelated replays the memories related to a deleted one (the
// memory it was merged into, the one that won a contradiction against it,
// one it superseded): the merge or the contradiction no longer counts. A
// memory left without evidence by that is deleted in turn.
func (f *forget) recomputeRelated(ctx context.Context) error {
	queue := mapKeys(f.deleted)
	for _, id := range queue {
		f.r.drop[id] = true
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		trail, err := f.r.trail(ctx, id)
		if err != nil {
			return err
		}
		related := []string{f.deleted[id].m.SupersededBy}
		for _, rec := range trail {
			if !isEvidence(rec.Reason) && !rec.forgetRecord && !rec.dropped {
				related = append(related, rec.Related)
			}
		}
		for _, rid := range related {
			if rid == "" || f.deleted[rid] != nil || f.updated[rid] != nil {
				continue
			}
			if err := f.recompute(ctx, rid); err != nil {
				return err
			}
			if f.deleted[rid] != nil {
				f.r.drop[rid] = true
				queue = append(queue, rid)
			}
		}
		if len(f.deleted)+len(f.updated) > maxForgetMemories {
			return errTooMany("memories", maxForgetMemories)
		}
	}
	return nil
}

// free makes the memories superseded by a deleted one retrievable again,
// unless they are deleted or already rewritten themselves.
func (f *forget) free(ctx context.Context) error {
	if len(f.deleted) == 0 {
		return nil
	}
	w := &write{e: f.e, coll: f.coll, tenant: f.tenant}
	for _, batch := range chunk(mapKeys(f.deleted), forgetBatch) {
		flt := w.scope()
		flt.Must = append(flt.Must, qdrant.NewMatchKeywords(w.key(memory.FieldSupersededBy), batch...))
		ids, err := f.scrollIDs(ctx, flt)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if f.deleted[id] != nil || f.updated[id] != nil {
				continue
			}
			cur, err := f.r.memory(ctx, id)
			if err != nil || cur == nil {
				return err
			}
			if f.deleted[cur.m.SupersededBy] == nil {
				continue
			}
			nm := *cur
			nm.dirty, nm.clearSuperseded = true, true
			// Back in answers: age never keeps a memory out (its tier is a
			// label), as replay's un-superseding does.
			nm.m.Retrievable = true
			f.setFreed(id, cur.m.SupersededBy)
			nm.m.SupersededBy = ""
			f.markUpdated(&nm)
		}
	}
	return nil
}

// finish writes the decisions: memories first, then the audit records of
// the forgotten evidence, then the records of the forget itself. A forget
// that stops half way is finished by running it again: whatever is left
// still names the session.
func (f *forget) finish(ctx context.Context) error {
	if err := f.free(ctx); err != nil {
		return err
	}
	if err := f.writeMemories(ctx); err != nil {
		return err
	}
	if err := f.writeAuditChanges(ctx); err != nil {
		return err
	}
	f.rep.Collection, f.rep.AuditPolicy = f.coll, f.policy
	f.rep.MemoriesUpdated, f.rep.MemoriesDeleted = len(f.updated), len(f.deleted)
	return f.writeForgetRecords(ctx)
}

func (f *forget) writeMemories(ctx context.Context) error {
	var ops []*qdrant.PointsUpdateOperation
	if len(f.deleted) > 0 {
		var ids []*qdrant.PointId
		for _, id := range mapKeys(f.deleted) {
			ids = append(ids, f.deleted[id].id)
		}
		for _, b := range chunk(ids, forgetBatch) {
			ops = append(ops, qdrant.NewPointsUpdateDeletePoints(&qdrant.PointsUpdateOperation_DeletePoints{
				Points: qdrant.NewPointsSelectorIDs(b)}))
		}
	}
	w := &write{e: f.e, coll: f.coll, tenant: f.tenant}
	for _, id := range mapKeys(f.updated) {
		w.touched = append(w.touched, f.updated[id])
	}
	ops = append(ops, w.ops()...)
	ops = append(ops, f.usesOps()...)
	if err := f.e.batch(ctx, f.coll, ops); err != nil {
		return err
	}
	return f.eraseOriginals(ctx)
}

// eraseOriginals deletes the payloads a backfill kept of the deleted
// memories (docs/backfill.md): an erased memory's text must not survive
// in <collection>_memrank_backfill for a rollback to bring back. A
// collection never backfilled has no such companion.
func (f *forget) eraseOriginals(ctx context.Context) error {
	if len(f.deleted) == 0 {
		return nil
	}
	companion := batchjob.Companion(f.coll, BackfillJob)
	var ids []*qdrant.PointId
	for _, id := range mapKeys(f.deleted) {
		ids = append(ids, batchjob.OriginalID(f.coll, f.deleted[id].id))
	}
	var ops []*qdrant.PointsUpdateOperation
	for _, b := range chunk(ids, forgetBatch) {
		ops = append(ops, qdrant.NewPointsUpdateDeletePoints(&qdrant.PointsUpdateOperation_DeletePoints{Points: qdrant.NewPointsSelectorIDs(b)}))
	}
	if err := f.e.batch(ctx, companion, ops); err != nil && !isNotFound(errors.Unwrap(err)) {
		return err
	}
	return nil
}

// batch applies ops in batches of forgetBatch.
func (e *Engine) batch(ctx context.Context, coll string, ops []*qdrant.PointsUpdateOperation) error {
	wait := true
	for _, b := range chunk(ops, forgetBatch) {
		if _, err := e.store.UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: coll, Wait: &wait, Operations: b}); err != nil {
			return fmt.Errorf("dedup: write %s: %w", coll, err)
		}
	}
	return nil
}

// writeAuditChanges redacts, deletes or marks the records of the forgotten
// evidence; with a delete, every record of each deleted memory; and marks
// the other records of deleted memories, so that a memory inserted later
// at the same id does not inherit their merges and supersessions.
func (f *forget) writeAuditChanges(ctx context.Context) error {
	handled := map[string]bool{}
	var redact, remove, keep, drop []*qdrant.PointId
	add := func(rec trailRecord, forgotten bool) {
		key := idString(rec.id)
		if handled[key] {
			return
		}
		handled[key] = true
		dropped := f.deleted[rec.MemoryID] != nil
		switch {
		case f.policy == AuditDelete && dropped && f.deleting:
			remove = append(remove, rec.id)
		case rec.forgetRecord || rec.Forgotten:
			// Already the record of a forget, or forgotten before.
			if dropped {
				drop = append(drop, rec.id)
			}
		case !forgotten:
			if dropped {
				drop = append(drop, rec.id)
			}
		case f.policy == AuditKeep:
			keep = append(keep, rec.id)
			if dropped {
				drop = append(drop, rec.id)
			}
		case f.policy == AuditDelete && (isEvidence(rec.Reason) || rec.Reason == reasonUsed || dropped):
			remove = append(remove, rec.id)
		default:
			redact = append(redact, rec.id)
			if dropped {
				drop = append(drop, rec.id)
			}
		}
	}
	for _, rec := range f.records {
		add(rec, true)
	}
	for _, id := range mapKeys(f.deleted) {
		trail, err := f.r.trail(ctx, id)
		if err != nil {
			return err
		}
		for _, rec := range trail {
			add(rec, f.deleting || rec.forgottenHere)
		}
	}
	// Relations to a deleted memory end with it: a memory inserted later at
	// its id did not supersede, lose to or merge anything.
	for _, id := range mapKeys(f.updated) {
		trail, err := f.r.trail(ctx, id)
		if err != nil {
			return err
		}
		for _, rec := range trail {
			if !isEvidence(rec.Reason) && !rec.forgetRecord && !rec.dropped && f.deleted[rec.Related] != nil && !handled[idString(rec.id)] {
				drop = append(drop, rec.id)
			}
		}
	}
	f.rep.AuditRedacted, f.rep.AuditDeleted, f.rep.AuditKept = len(redact), len(remove), len(keep)
	mark := f.forgottenMark()
	var ops []*qdrant.PointsUpdateOperation
	for _, b := range chunk(append(slices.Clip(redact), keep...), forgetBatch) {
		ops = append(ops, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
			Payload: mark, PointsSelector: qdrant.NewPointsSelectorIDs(b)}))
	}
	for _, b := range chunk(redact, forgetBatch) {
		ops = append(ops, qdrant.NewPointsUpdateDeletePayload(&qdrant.PointsUpdateOperation_DeletePayload{
			Keys: redactedKeys, PointsSelector: qdrant.NewPointsSelectorIDs(b)}))
	}
	for _, b := range chunk(drop, forgetBatch) {
		ops = append(ops, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
			Payload: map[string]*qdrant.Value{auditDropped: qdrant.NewValueBool(true)}, PointsSelector: qdrant.NewPointsSelectorIDs(b)}))
	}
	for _, b := range chunk(remove, forgetBatch) {
		ops = append(ops, qdrant.NewPointsUpdateDeletePoints(&qdrant.PointsUpdateOperation_DeletePoints{
			Points: qdrant.NewPointsSelectorIDs(b)}))
	}
	up, err := f.upkeepOps(ctx)
	if err != nil {
		return err
	}
	ops = append(ops, up...)
	if len(ops) == 0 {
		return nil
	}
	return f.e.batch(ctx, auditCollection(f.coll), ops)
}

// writeForgetRecords audits the forget itself: one record per memory
// updated or deleted, with the confidence change. It names the session only
// with forget.audit keep.
func (f *forget) writeForgetRecords(ctx context.Context) error {
	if len(f.updated)+len(f.deleted) == 0 {
		return nil
	}
	if err := f.e.ensureAudit(ctx, f.coll); err != nil {
		return err
	}
	decision, session := DecisionForgotten, ""
	if f.deleting {
		decision = DecisionDeleted
	}
	if f.policy == AuditKeep {
		session = f.session
	}
	var recs []AuditRecord
	for _, id := range mapKeys(f.deleted) {
		m := &f.deleted[id].m
		recs = append(recs, AuditRecord{MemoryID: id, Reason: reasonDelete, Old: m.Confidence, OldN: m.Observations,
			At: f.now, SessionID: session, Decision: decision})
	}
	for _, id := range mapKeys(f.updated) {
		st := f.updated[id]
		old, _ := f.r.memory(ctx, id)
		rec := AuditRecord{MemoryID: id, Reason: reasonForget, New: st.m.Confidence, NewN: st.m.Observations,
			At: f.now, SessionID: session, Decision: decision, Related: f.freed[id]}
		if old != nil {
			rec.Old, rec.OldN = old.m.Confidence, old.m.Observations
		}
		recs = append(recs, rec)
	}
	for _, b := range chunk(recs, forgetBatch) {
		if err := f.e.writeAuditRetrying(ctx, f.coll, f.tenant, "", b, Outcome{}); err != nil {
			return err
		}
	}
	return nil
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func chunk[T any](s []T, n int) [][]T {
	var out [][]T
	for len(s) > n {
		out = append(out, s[:n:n])
		s = s[n:]
	}
	if len(s) > 0 {
		out = append(out, s)
	}
	return out
}

func (f *forget) forgottenMark() map[string]*qdrant.Value {
	return map[string]*qdrant.Value{auditForgotten: qdrant.NewValueBool(true),
		auditForgottenAt: qdrant.NewValueString(memory.FormatTime(f.now))}
}

// upkeepOps treats the upkeep records (uses, tier changes) of the deleted
// memories, which the replay does not read: selected by filter, so a
// memory used a million times is deleted as easily as one used once. The
// forgotten session's own uses are among f.records already; a delete
// forgets them all, as writeAuditChanges does the memory's other records.
func (f *forget) upkeepOps(ctx context.Context) ([]*qdrant.PointsUpdateOperation, error) {
	if len(f.deleted) == 0 {
		return nil, nil
	}
	if ok, err := f.e.store.CollectionExists(ctx, auditCollection(f.coll)); err != nil || !ok {
		return nil, err
	}
	dropped := map[string]*qdrant.Value{auditDropped: qdrant.NewValueBool(true)}
	var ops []*qdrant.PointsUpdateOperation
	for _, ids := range chunk(mapKeys(f.deleted), forgetBatch) {
		all := qdrant.NewPointsSelectorFilter(f.e.upkeepFilter(f.tenant, ids, false))
		if !f.deleting {
			// A forget: the session's uses are among f.records; the others
			// only no longer count for anything.
			ops = append(ops, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
				Payload: dropped, PointsSelector: all}))
			continue
		}
		exact := true
		n, err := f.e.store.Count(ctx, &qdrant.CountPoints{CollectionName: auditCollection(f.coll),
			Filter: f.e.upkeepFilter(f.tenant, ids, true), Exact: &exact})
		if err != nil {
			return nil, fmt.Errorf("dedup: count the audit of %s: %w", f.coll, err)
		}
		if f.policy == AuditDelete {
			f.rep.AuditDeleted += int(n)
			ops = append(ops, qdrant.NewPointsUpdateDeletePoints(&qdrant.PointsUpdateOperation_DeletePoints{Points: all}))
			continue
		}
		sel := qdrant.NewPointsSelectorFilter(f.e.upkeepFilter(f.tenant, ids, true))
		if f.policy == AuditKeep {
			f.rep.AuditKept += int(n)
		} else {
			f.rep.AuditRedacted += int(n)
			// Redacted before marked: the mark is what the selection excludes.
			ops = append(ops, qdrant.NewPointsUpdateDeletePayload(&qdrant.PointsUpdateOperation_DeletePayload{
				Keys: redactedKeys, PointsSelector: sel}))
		}
		mark := f.forgottenMark()
		mark[auditDropped] = qdrant.NewValueBool(true)
		ops = append(ops, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
			Payload: mark, PointsSelector: sel}))
		// Those forgotten before are marked dropped only.
		ops = append(ops, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
			Payload: dropped, PointsSelector: qdrant.NewPointsSelectorFilter(f.droppedFilter(ids))}))
	}
	return ops, nil
}

// droppedFilter selects the upkeep records of ids not yet marked dropped.
func (f *forget) droppedFilter(ids []string) *qdrant.Filter {
	flt := f.e.upkeepFilter(f.tenant, ids, false)
	flt.MustNot = append(flt.MustNot, qdrant.NewMatchBool(auditDropped, true))
	return flt
}
