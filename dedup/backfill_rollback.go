package dedup

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/batchjob"
	"github.com/memrank/memrank/memory"
)

// BackfillRollback asks for a backfill of Collection to be undone.
type BackfillRollback struct {
	Collection string
	BatchSize  int
	Progress   func(done int)
}

// BackfillRollbackReport says what a rollback undid.
type BackfillRollbackReport struct {
	Collection string `json:"collection"`
	// Restored are the points whose original payloads were written back.
	Restored int `json:"restored"`
	// What the backfill had created and the rollback removed.
	RemovedRecord  bool     `json:"removed_embedder_record"`
	RemovedAudit   bool     `json:"removed_audit_companion"`
	RemovedIndexes []string `json:"removed_indexes,omitempty"`
}

// jobStore is what a rollback needs beyond the write path's Store;
// go-client's *qdrant.Client satisfies it.
type jobStore interface {
	batchjob.Store
	DeleteFieldIndex(ctx context.Context, req *qdrant.DeleteFieldIndexCollection) (*qdrant.UpdateResult, error)
}

var _ jobStore = (*qdrant.Client)(nil)

// RollbackBackfill writes every point's original payload back (exactly:
// the keys the backfill added go), deletes the backfill's audit records,
// and removes what the backfill created: the embedder record, the audit
// companion when nothing else was recorded in it since, and the text_hash
// index. Last it drops the backfill's companion. An interrupted rollback
// resumes where it stopped. Changes memrank made to the memories after the
// backfill (a re-observation, a confirmation) are undone with it.
func (e *Engine) RollbackBackfill(ctx context.Context, r BackfillRollback) (BackfillRollbackReport, error) {
	rep := BackfillRollbackReport{Collection: r.Collection}
	if err := checkCollection(r.Collection); err != nil {
		return rep, err
	}
	js, ok := e.store.(jobStore)
	if !ok {
		return rep, fmt.Errorf("%w %s: the store cannot run batch jobs", ErrBackfill, r.Collection)
	}
	runner, err := batchjob.New(js, batchjob.Config{Collection: r.Collection, Job: BackfillJob, BatchSize: r.BatchSize, Timeout: e.cfg.Timeout})
	if err != nil {
		return rep, err
	}
	ctx2, cancel := e.deadline(ctx)
	exists, err := js.CollectionExists(ctx2, runner.Companion())
	cancel()
	if err != nil {
		return rep, fmt.Errorf("dedup: look up collection %s: %w", runner.Companion(), err)
	}
	if !exists {
		return rep, fmt.Errorf("%w %s: no backfill to roll back (%s does not exist)", ErrBackfill, r.Collection, runner.Companion())
	}
	cp, _, err := runner.Checkpoint(ctx)
	if err != nil {
		return rep, err
	}
	var prev BackfillReport
	if len(cp.State) > 0 {
		if err := json.Unmarshal(cp.State, &prev); err != nil {
			return rep, fmt.Errorf("dedup: read the backfill's checkpoint: %w", err)
		}
	}
	if rep.Restored, err = runner.Rollback(ctx, e.undoBackfill(r.Collection), r.Progress); err != nil {
		return rep, err
	}
	if err := e.removeCreated(ctx, js, prev, &rep); err != nil {
		return rep, err
	}
	e.forget(r.Collection)
	return rep, runner.Drop(ctx)
}

// undoBackfill deletes the audit records the backfill wrote for the
// restored points.
func (e *Engine) undoBackfill(coll string) func(context.Context, []batchjob.Restored) error {
	return func(ctx context.Context, done []batchjob.Restored) error {
		var ids []*qdrant.PointId
		for _, d := range done {
			tenant := ""
			if e.tenancyOn() {
				tenant = scalarString(d.Payload[e.cfg.Tenancy.PayloadKey()])
			}
			sid := idString(d.ID)
			for seq := range maxBackfillRecords {
				ids = append(ids, qdrant.NewID(backfillAuditID(coll, tenant, sid, seq)))
			}
		}
		js := e.store.(jobStore)
		ctx, cancel := e.deadline(ctx)
		defer cancel()
		wait := true
		if _, err := js.Delete(ctx, &qdrant.DeletePoints{CollectionName: auditCollection(coll), Wait: &wait,
			Points: qdrant.NewPointsSelector(ids...)}); err != nil && !isNotFound(err) {
			return fmt.Errorf("dedup: delete the backfill's audit of %s: %w", coll, err)
		}
		return nil
	}
}

// removeCreated removes what the backfill created, as its report says.
func (e *Engine) removeCreated(ctx context.Context, js jobStore, prev BackfillReport, rep *BackfillRollbackReport) error {
	coll := rep.Collection
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	wait := true
	for _, key := range prev.CreatedIndexes {
		if _, err := js.DeleteFieldIndex(ctx, &qdrant.DeleteFieldIndexCollection{CollectionName: coll,
			FieldName: key, Wait: &wait}); err != nil && !isNotFound(err) {
			return fmt.Errorf("dedup: delete the %s index of %s: %w", key, coll, err)
		}
		rep.RemovedIndexes = append(rep.RemovedIndexes, key)
	}
	if prev.CreatedRecord {
		if _, err := js.Delete(ctx, &qdrant.DeletePoints{CollectionName: auditCollection(coll), Wait: &wait,
			Points: qdrant.NewPointsSelector(memory.EmbedderRecordID())}); err != nil && !isNotFound(err) {
			return fmt.Errorf("dedup: delete the embedder record of %s: %w", coll, err)
		}
		rep.RemovedRecord = true
	}
	if !prev.CreatedAudit {
		return nil
	}
	info, err := e.store.GetCollectionInfo(ctx, auditCollection(coll))
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return fmt.Errorf("dedup: read collection %s: %w", auditCollection(coll), err)
	}
	if info.GetPointsCount() > 0 { // memrank wrote to the collection since: its trail stays
		return nil
	}
	if err := js.DeleteCollection(ctx, auditCollection(coll)); err != nil && !isNotFound(err) {
		return fmt.Errorf("dedup: delete %s: %w", auditCollection(coll), err)
	}
	rep.RemovedAudit = true
	return nil
}
