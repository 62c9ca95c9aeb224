package dedup

import (
	"context"
	"fmt"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
)

// maxUseScan bounds the uses read to find a memory's latest use once the
// forgotten session's is taken out (docs/forgetting.md).
const maxUseScan = 1000000

// forgottenUses are the forgotten session's uses of one memory: how many,
// and the latest.
type forgottenUses struct {
	n      int
	latest time.Time
}

// noteUse counts one use record of the forgotten session.
func (f *forget) noteUse(rec trailRecord) {
	if f.uses == nil {
		f.uses = map[string]forgottenUses{}
	}
	u := f.uses[rec.MemoryID]
	u.n++
	if rec.At.After(u.latest) {
		u.latest = rec.At
	}
	f.uses[rec.MemoryID] = u
}

// dropUses takes the forgotten session's uses out of nm: uses loses them,
// and last_used_at, when it was one of them, becomes the latest use left
// (none: no last_used_at).
func (f *forget) dropUses(ctx context.Context, nm *stored) error {
	u, ok := f.uses[nm.sid]
	if !ok || u.n == 0 {
		return nil
	}
	m := &nm.m
	m.Uses = max(0, m.Uses-u.n)
	if !u.latest.Before(m.LastUsedAt) {
		last, err := f.latestUse(ctx, nm.sid)
		if err != nil {
			return err
		}
		m.LastUsedAt = last
	}
	if f.usesChanged == nil {
		f.usesChanged = map[string]bool{}
	}
	f.usesChanged[nm.sid] = true
	return nil
}

// latestUse is the time of the latest use of memory id that neither the
// forgotten session nor an earlier forget took: a scan of its use records
// that keeps only the latest time.
func (f *forget) latestUse(ctx context.Context, id string) (time.Time, error) {
	flt := f.e.auditFilter(f.tenant, qdrant.NewMatchKeyword(auditMemoryID, id))
	flt.Must = append(flt.Must, qdrant.NewMatchKeyword("reason", reasonUsed))
	flt.MustNot = append(flt.MustNot, qdrant.NewMatchKeyword(auditSessionID, f.session),
		qdrant.NewMatchBool(auditForgotten, true), qdrant.NewMatchBool(auditDropped, true))
	var latest time.Time
	var offset *qdrant.PointId
	for read := 0; ; {
		limit := uint32(1024)
		pts, next, err := f.e.scrollPage(ctx, &qdrant.ScrollPoints{CollectionName: auditCollection(f.coll), Filter: flt,
			Limit: &limit, Offset: offset, WithPayload: qdrant.NewWithPayloadInclude("at")})
		if err != nil {
			return time.Time{}, fmt.Errorf("dedup: read the uses of %s in %s: %w", id, f.coll, err)
		}
		for _, p := range pts {
			if at, ok := memory.ParseTime(p.GetPayload()["at"].GetStringValue()); ok && at.After(latest) {
				latest = at
			}
		}
		if read += len(pts); read > maxUseScan {
			return time.Time{}, errTooMany("uses of one memory", maxUseScan)
		}
		if next == nil {
			return latest, nil
		}
		offset = next
	}
}

// usesOps write uses and last_used_at of the updated memories whose uses
// changed (the rest of a rewritten memory never carries them: the used
// path owns them), and remove the attribution of those that lost it (the
// codec writes none for "", which would leave the old one).
func (f *forget) usesOps() []*qdrant.PointsUpdateOperation {
	var ops []*qdrant.PointsUpdateOperation
	ak := f.e.codec.Key(memory.FieldAttribution)
	for _, id := range mapKeys(f.updated) {
		st, old := f.updated[id], f.r.mems[id]
		if old != nil && old.m.Attribution != "" && st.m.Attribution == "" {
			ops = append(ops, qdrant.NewPointsUpdateDeletePayload(&qdrant.PointsUpdateOperation_DeletePayload{
				Keys: []string{ak}, PointsSelector: qdrant.NewPointsSelector(st.id)}))
		}
	}
	uk, lk := f.e.codec.Key(memory.FieldUses), f.e.codec.Key(memory.FieldLastUsedAt)
	for _, id := range mapKeys(f.usesChanged) {
		st := f.updated[id]
		if st == nil {
			continue
		}
		payload := f.e.codec.Encode(&st.m)
		sel := qdrant.NewPointsSelector(st.id)
		set := map[string]*qdrant.Value{}
		var unset []string
		for _, k := range []string{uk, lk} {
			if v := payload[k]; v != nil {
				set[k] = v
			} else {
				unset = append(unset, k)
			}
		}
		if len(set) > 0 {
			ops = append(ops, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
				Payload: set, PointsSelector: sel}))
		}
		if len(unset) > 0 {
			ops = append(ops, qdrant.NewPointsUpdateDeletePayload(&qdrant.PointsUpdateOperation_DeletePayload{
				Keys: unset, PointsSelector: sel}))
		}
	}
	return ops
}
