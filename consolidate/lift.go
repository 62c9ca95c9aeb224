package consolidate

import (
	"cmp"
	"context"
	"slices"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/memory"
)

// Lifting earlier age archives (docs/consolidation.md). Earlier versions
// took memories out of answers for age: consolidation stored tier
// archived, retrievable false past the decay floor or below the stale
// tier, audited with reason "tier" (old_retrievable true, new_retrievable
// false), and backfill stored the same state when it made such a memory,
// audited with reason "backfill". Age no longer takes a memory out of
// answers, so every run finds the memories stored archived and not
// retrievable and reads their audit trails: those whose retrievable flag
// was last set by an age archive are made retrievable again (reason
// age_archive_lifted). A reviewer's archive (reason "archive") stays, and
// so does a memory taken out by another writer, whose trail has no record
// of it: memrank does not undo what it cannot tell was age.

// reasonBackfill is the reason of the record backfill writes for each
// memory it makes (package dedup). An earlier backfill stored a memory
// past its decay floor as archived and not retrievable.
const reasonBackfill = "backfill"

// trailReasons are the audit reasons that set a memory's retrievable flag:
// the records the lift decides from. The companion indexes reason. The
// write path's reinforcements are among them because each revives an
// archived memory: an exclusion after the latest of them is another
// writer's, which the lift leaves alone. (An insert comes before anything
// it could revive.)
var trailReasons = []string{reasonTier, reasonArchive, reasonLift, reasonBackfill,
	"restatement", "independent", "merge", "confirm", "correct", "contradiction"}

// The audit record keys the lift reads (the write path's, package dedup).
const (
	keyMemoryID       = "memory_id"
	keyReason         = "reason"
	keyOldRetrievable = "old_retrievable"
	keyNewRetrievable = "new_retrievable"
	keyWrittenAt      = "written_at_ns"
	keySeq            = "seq"
	// keyMemoryDeleted marks the records of a memory that forgetting
	// deleted: a memory written later at its id is another memory.
	keyMemoryDeleted = "memory_deleted"
)

// trailRecord is what the lift needs of one audit record.
type trailRecord struct {
	id      string
	reason  string
	oldRetr *qdrant.Value
	newRetr *qdrant.Value
	written int64
	seq     int64
}

// after orders records as the trail does (package dedup): by the real time
// they were written, then their sequence in one decision; then by id, so
// that every replica picks the same latest record.
func (r trailRecord) after(o trailRecord) bool {
	if c := cmp.Compare(r.written, o.written); c != 0 {
		return c > 0
	}
	if c := cmp.Compare(r.seq, o.seq); c != 0 {
		return c > 0
	}
	return r.id > o.id
}

// ageArchive reports whether the record took its memory out of answers
// for age: an earlier consolidation's archive of a retrievable memory, or
// an earlier backfill's record (it stored a memory not retrievable only
// past its decay floor; superseded ones never reach the lift). A record of
// "tier" that kept a memory out (old_retrievable false: another writer's
// exclusion, labelled) or kept it in, a reviewer's archive and a lift do
// not: the memory stays as it is.
func (r trailRecord) ageArchive() bool {
	switch r.reason {
	case reasonTier:
		return isBool(r.oldRetr, true) && isBool(r.newRetr, false)
	case reasonBackfill:
		return true
	}
	return false
}

func isBool(v *qdrant.Value, want bool) bool {
	b, ok := v.GetKind().(*qdrant.Value_BoolValue)
	return ok && b.BoolValue == want
}

// ageArchives reads the audit trails of the candidates (memories stored
// archived and not retrievable, of one page) and returns, for each one the
// latest of its trail records says was archived for age, the id of that
// record. It reads only the candidates' records of trailReasons, by
// memory_id, in batches of the job's batch size, within scope (a tenant's
// run reads only the tenant's records). With tenancy on, a record that
// names another tenant than its memory's is not the memory's trail.
func (j *Job) ageArchives(ctx context.Context, coll string, scope *qdrant.Filter, cands []change) (map[string]string, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	tenantKey := ""
	keys := []string{keyMemoryID, keyReason, keyOldRetrievable, keyNewRetrievable, keyWrittenAt, keySeq, keyMemoryDeleted}
	if j.tenancyOn() {
		tenantKey = j.tenant.PayloadKey()
		keys = append(keys, tenantKey)
	}
	tenants := make(map[string]*qdrant.Value, len(cands))
	for _, c := range cands {
		tenants[c.sid] = c.tenant
	}
	latest := map[string]trailRecord{}
	for chunk := range slices.Chunk(cands, j.cfg.BatchSize) {
		ids := make([]string, len(chunk))
		for i, c := range chunk {
			ids[i] = c.sid
		}
		f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords(keyMemoryID, ids...),
			qdrant.NewMatchKeywords(keyReason, trailReasons...)}}
		if scope != nil {
			f.Must = append(f.Must, scope.Must...)
		}
		var offset *qdrant.PointId
		for {
			limit := uint32(j.cfg.BatchSize)
			pts, next, err := j.scroll(ctx, &qdrant.ScrollPoints{CollectionName: memory.AuditCollection(coll), Filter: f,
				Limit: &limit, Offset: offset, WithPayload: qdrant.NewWithPayloadInclude(keys...)})
			if err != nil {
				if status.Code(err) == codes.NotFound {
					return nil, nil // no companion: no trail says age
				}
				return nil, storeError("read the audit trail in "+memory.AuditCollection(coll), err)
			}
			for _, p := range pts {
				pl := p.GetPayload()
				sid := pl[keyMemoryID].GetStringValue()
				mine, ok := tenants[sid]
				if !ok || pl[keyMemoryDeleted].GetBoolValue() {
					continue
				}
				if t, has := pl[tenantKey]; tenantKey != "" && has && valueKey(t) != valueKey(mine) {
					continue
				}
				r := trailRecord{id: idString(p.GetId()), reason: pl[keyReason].GetStringValue(),
					oldRetr: pl[keyOldRetrievable], newRetr: pl[keyNewRetrievable],
					written: pl[keyWrittenAt].GetIntegerValue(), seq: pl[keySeq].GetIntegerValue()}
				if prev, seen := latest[sid]; !seen || r.after(prev) {
					latest[sid] = r
				}
			}
			if next == nil {
				break
			}
			offset = next
		}
	}
	out := map[string]string{}
	for sid, r := range latest {
		if r.ageArchive() {
			out[sid] = r.id
		}
	}
	return out, nil
}

// lift is c, a memory an earlier version archived for age (the record
// archive), made retrievable again with its tier label.
func (c change) lift(archive string) change {
	c.to, c.reason, c.lifts = state{c.tierNow, true}, reasonLift, archive
	return c
}
