package store

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"
)

// UpdateBatch is Points/UpdateBatch: upsert, delete (ids or filter),
// set_payload (with key), overwrite_payload, delete_payload, clear_payload,
// update_vectors and delete_vectors, applied in order, each seeing the
// effect of the ones before it, and each answered with its own operation
// id, as Qdrant answers them (src/tonic/api/update_common.rs update_batch).
//
// How this differs from Qdrant: Qdrant applies the operations one by one as
// separate updates, so when one fails the ones before it stay applied and
// the request reports only the error. Here the batch is all or nothing (it
// commits in one transaction, possibly shared with other writes): when any
// operation fails (or the commit does), nothing of the batch is applied,
// and the error is that operation's. Operations are also
// all converted and validated before the first one runs, so a malformed
// later operation fails the batch before any change, where Qdrant would
// have applied the earlier ones.
func (db *DB) UpdateBatch(ctx context.Context, req *qdrant.UpdateBatchPoints) ([]*qdrant.UpdateResult, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	if len(req.GetOperations()) == 0 {
		// lib/api/build.rs: UpdateBatchPoints.operations length(min = 1).
		return nil, validation("operations", "must be at least 1 characters")
	}
	if req.Timeout != nil && req.GetTimeout() == 0 {
		return nil, validation("timeout", "value 0 invalid, must be 1 or larger")
	}
	ops := make([]writeOp, len(req.GetOperations()))
	for i, op := range req.GetOperations() {
		wop, err := batchOpTx(op)
		if err != nil {
			return nil, err
		}
		ops[i] = wop
	}
	return db.submit(ctx, req.GetCollectionName(), ops)
}

// batchOpTx converts one PointsUpdateOperation (the match in update_batch).
func batchOpTx(op *qdrant.PointsUpdateOperation) (writeOp, error) {
	switch o := op.GetOperation().(type) {
	case *qdrant.PointsUpdateOperation_Upsert:
		u := o.Upsert
		return asStructural(upsertTx(u.GetPoints(), u.GetShardKeySelector(), u.GetUpdateFilter(), u.GetUpdateMode()))
	case *qdrant.PointsUpdateOperation_DeleteDeprecated:
		return asStructural(deleteTx(o.DeleteDeprecated))
	case *qdrant.PointsUpdateOperation_DeletePoints_:
		if o.DeletePoints.GetShardKeySelector() != nil {
			return writeOp{}, unimplemented("shard keys are not supported")
		}
		return asStructural(deleteTx(o.DeletePoints.GetPoints()))
	case *qdrant.PointsUpdateOperation_SetPayload_:
		sp := o.SetPayload
		return setPayloadTx(sp.GetPayload(), sp.GetPointsSelector(), sp.GetShardKeySelector(), sp.Key)
	case *qdrant.PointsUpdateOperation_OverwritePayload_:
		// The overwrite operation has a key field, which Qdrant drops.
		ow := o.OverwritePayload
		return overwritePayloadTx(ow.GetPayload(), ow.GetPointsSelector(), ow.GetShardKeySelector())
	case *qdrant.PointsUpdateOperation_DeletePayload_:
		dp := o.DeletePayload
		return deletePayloadTx(dp.GetKeys(), dp.GetPointsSelector(), dp.GetShardKeySelector())
	case *qdrant.PointsUpdateOperation_ClearPayload_:
		return clearPayloadTx(o.ClearPayload.GetPoints(), o.ClearPayload.GetShardKeySelector())
	case *qdrant.PointsUpdateOperation_ClearPayloadDeprecated:
		return clearPayloadTx(o.ClearPayloadDeprecated, nil)
	case *qdrant.PointsUpdateOperation_UpdateVectors_:
		uv := o.UpdateVectors
		return asStructural(updateVectorsTx(uv.GetPoints(), uv.GetShardKeySelector(), uv.GetUpdateFilter()))
	case *qdrant.PointsUpdateOperation_DeleteVectors_:
		dv := o.DeleteVectors
		return asStructural(deleteVectorsTx(dv.GetPointsSelector(), dv.GetVectors(), dv.GetShardKeySelector()))
	}
	return writeOp{}, invalidArg("Operation is missing")
}

// asStructural wraps a converted structural operation.
func asStructural(tx writeTx, err error) (writeOp, error) {
	if err != nil {
		return writeOp{}, err
	}
	return structural(tx), nil
}

// reloadCollection rebuilds a collection's in-memory state from disk. The
// caller holds the collection's exclusive lock.
func (db *DB) reloadCollection(c *collection) error {
	return db.bolt.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCollections).Bucket([]byte(c.name))
		if b == nil {
			return fmt.Errorf("collection %q vanished", c.name)
		}
		fresh, err := db.loadCollection(c.name, b)
		if err != nil {
			return err
		}
		c.seq, c.vectors, c.ids, c.versions = fresh.seq, fresh.vectors, fresh.ids, fresh.versions
		c.live, c.nlive, c.free, c.slots, c.indexes = fresh.live, fresh.nlive, fresh.free, fresh.slots, fresh.indexes
		return nil
	})
}

// DeleteVectors is Points/DeleteVectors. A collection here has one vector,
// the unnamed one, and every point has it, so deleting a named vector
// fails as in Qdrant (there is no such vector), deleting the unnamed one
// answers Unimplemented, and an empty list of names changes nothing.
func (db *DB) DeleteVectors(ctx context.Context, req *qdrant.DeletePointVectors) (*qdrant.UpdateResult, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	tx, err := deleteVectorsTx(req.GetPointsSelector(), req.GetVectors(), req.GetShardKeySelector())
	if err != nil {
		return nil, err
	}
	return db.write(ctx, req.GetCollectionName(), structural(tx))
}

// deleteVectorsTx follows src/tonic/api/update_common.rs delete_vectors
// ("vectors is expected") and the segment's VectorNameNotExists.
func deleteVectorsTx(s *qdrant.PointsSelector, vectors *qdrant.VectorsSelector, shardKeys *qdrant.ShardKeySelector) (writeTx, error) {
	if shardKeys != nil {
		return nil, unimplemented("shard keys are not supported")
	}
	sel, err := convertSelector(s, "PointSelector is missing")
	if err != nil {
		return nil, err
	}
	if vectors == nil {
		return nil, invalidArg("vectors is expected")
	}
	names := vectors.GetNames()
	return func(ctx context.Context, c *collection, pts *bolt.Bucket, op uint64) (func(), error) {
		// Listed points must exist (check_unprocessed_points in
		// lib/shard/src/update/vectors.rs); the names are checked per point
		// by the segment, so with no point there is nothing to refuse.
		ids, err := c.resolve(ctx, sel, pts, true)
		if err != nil || len(ids) == 0 {
			return nil, err
		}
		for _, n := range names {
			if n != "" {
				return nil, wrongInput("Not existing vector name error: %s", n)
			}
		}
		if len(names) > 0 {
			return nil, unimplemented("deleting the unnamed vector is not supported: every point here keeps one")
		}
		return nil, nil
	}, nil
}
