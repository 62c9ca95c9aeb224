package dedup

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
)

// RecordAdopted writes, for each point that is a memory (it carries a
// confidence field), the audit record a backfill writes for a memory it
// adopts: reason "backfill", decision "backfilled", the confidence the read
// path would give it, its observations, its source, type and extractor
// levels and its grounding, at its created_at. It is for memories written
// whole by something other than the write path (the demo set), so that
// their audit trail starts somewhere instead of being empty. The points
// themselves are not written. The records take the backfill's ids, so
// writing them again, or backfilling the same points, changes nothing.
// Under tenancy a point without a tenant is skipped, as a backfill skips
// it. It returns the records written.
func (e *Engine) RecordAdopted(ctx context.Context, coll string, pts []*qdrant.PointStruct) (int, error) {
	if err := checkCollection(coll); err != nil {
		return 0, err
	}
	now := e.cfg.Now()
	var recs []*qdrant.PointStruct
	for _, p := range pts {
		payload := p.GetPayload()
		m := e.codec.DecodeQdrant(payload)
		in := e.codec.Inputs(&m)
		if in.Unscored {
			continue
		}
		tenant := ""
		if e.tenancyOn() {
			if tenant = scalarString(payload[e.cfg.Tenancy.PayloadKey()]); tenant == "" {
				continue
			}
		}
		at := m.CreatedAt
		if at.IsZero() {
			at = now
		}
		sid := idString(p.GetId())
		r := AuditRecord{MemoryID: sid, Reason: "backfill", New: memory.RoundConfidence(e.params.Evaluate(&in, 1, now).Confidence),
			NewN: m.Observations, At: at, Source: m.Levels.Source, Extractor: m.Levels.Extractor, Type: m.Levels.Type,
			Grounding: m.Grounding.String(), Decision: DecisionBackfilled}
		recs = append(recs, e.auditPoint(coll, tenant, backfillAuditID(coll, tenant, sid, 0), 0, r))
	}
	if len(recs) == 0 {
		return 0, nil
	}
	if err := e.ensureAudit(ctx, coll); err != nil {
		return 0, err
	}
	wctx, cancel := e.deadline(ctx)
	defer cancel()
	wait := true
	if _, err := e.store.Upsert(wctx, &qdrant.UpsertPoints{CollectionName: auditCollection(coll), Wait: &wait, Points: recs}); err != nil {
		return 0, fmt.Errorf("dedup: write the audit of adopted memories of %s: %w", coll, err)
	}
	return len(recs), nil
}
