package store

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"
)

// UpdateCollection is Collections/Update: the optimizer, params, HNSW,
// vector, quantization and strict-mode diffs and metadata are validated,
// merged into the stored configuration the way Qdrant merges them
// (lib/storage/src/content_manager/toc/collection_meta_ops.rs
// update_collection; lib/collection/src/collection/collection_ops.rs: diffs
// take the fields they set, a disabled quantization removes it, metadata is
// merged key by key, strict mode is merged into the current one) and
// echoed by CollectionInfo. Nothing else changes: search here is always
// exact. Sparse vectors answer Unimplemented. Unlike Qdrant, which saves
// after each part, the update is applied entirely or not at all.
func (db *DB) UpdateCollection(ctx context.Context, req *qdrant.UpdateCollection) error {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return err
	}
	if err := checkCollectionDiffs(req); err != nil {
		return err
	}
	if len(req.GetSparseVectorsConfig().GetMap()) > 0 {
		return unimplemented("sparse vectors are not supported")
	}
	done, err := db.enter()
	if err != nil {
		return err
	}
	defer done()
	// Writers to bbolt take wmu before any collection lock (see DB.wmu).
	db.wmu.Lock()
	defer db.wmu.Unlock()
	c, err := db.collection(req.GetCollectionName())
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped {
		return collectionNotFound(req.GetCollectionName())
	}
	if err := ctx.Err(); err != nil {
		return &Error{Kind: KindCanceled, Msg: err.Error(), Err: err}
	}
	cfg := proto.Clone(c.config).(*qdrant.CollectionConfig)
	if err := applyCollectionDiffs(cfg, req); err != nil {
		return err
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(cfg)
	if err != nil {
		return internal(err, "encode collection config")
	}
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCollections).Bucket([]byte(c.name))
		if b == nil {
			return collectionNotFound(c.name)
		}
		return b.Put(keyConfig, raw)
	})
	if err != nil {
		return asEngineError(err, "update collection "+c.name)
	}
	c.config = cfg
	return nil
}

// checkCollectionDiffs applies the field rules of lib/api/build.rs.
func checkCollectionDiffs(req *qdrant.UpdateCollection) error {
	min1 := func(field string, v *uint32) error {
		if v != nil && *v == 0 {
			return validation(field, "value 0 invalid, must be 1 or larger")
		}
		return nil
	}
	if req.Timeout != nil && req.GetTimeout() == 0 {
		return validation("timeout", "value 0 invalid, must be 1 or larger")
	}
	if p := req.GetParams(); p != nil {
		if err := min1("params.replication_factor", p.ReplicationFactor); err != nil {
			return err
		}
		if err := min1("params.write_consistency_factor", p.WriteConsistencyFactor); err != nil {
			return err
		}
	}
	if err := checkHnswDiff(req.GetHnswConfig(), "hnsw_config."); err != nil {
		return err
	}
	if err := checkHnswDiff(req.GetVectorsConfig().GetParams().GetHnswConfig(), "vectors_config.config.params.hnsw_config."); err != nil {
		return err
	}
	if o := req.GetOptimizersConfig(); o != nil {
		if o.DeletedThreshold != nil && (o.GetDeletedThreshold() < 0 || o.GetDeletedThreshold() > 1) {
			return validation("optimizers_config.deleted_threshold", fmt.Sprintf("value %v invalid, must be from 0.0 to 1.0", o.GetDeletedThreshold()))
		}
		if o.VacuumMinVectorNumber != nil && o.GetVacuumMinVectorNumber() < 100 {
			return validation("optimizers_config.vacuum_min_vector_number", fmt.Sprintf("value %d invalid, must be 100 or larger", o.GetVacuumMinVectorNumber()))
		}
		if o.MaxSegmentSize != nil && o.GetMaxSegmentSize() == 0 {
			return validation("optimizers_config.max_segment_size", "value 0 invalid, must be 1 or larger")
		}
	}
	return nil
}

func checkHnswDiff(h *qdrant.HnswConfigDiff, field string) error {
	if h != nil && h.EfConstruct != nil && h.GetEfConstruct() < 4 {
		return validation(field+"ef_construct", fmt.Sprintf("value %d invalid, must be 4 or larger", h.GetEfConstruct()))
	}
	return nil
}

// applyCollectionDiffs merges the request's diffs into cfg.
func applyCollectionDiffs(cfg *qdrant.CollectionConfig, req *qdrant.UpdateCollection) error {
	if o := req.GetOptimizersConfig(); o != nil {
		if cfg.OptimizerConfig == nil {
			cfg.OptimizerConfig = &qdrant.OptimizersConfigDiff{}
		}
		proto.Merge(cfg.OptimizerConfig, o)
	}
	if p := req.GetParams(); p != nil {
		cp := cfg.Params
		if p.ReplicationFactor != nil {
			cp.ReplicationFactor = proto.Uint32(p.GetReplicationFactor())
		}
		if p.WriteConsistencyFactor != nil {
			cp.WriteConsistencyFactor = proto.Uint32(p.GetWriteConsistencyFactor())
		}
		if p.OnDiskPayload != nil {
			cp.OnDiskPayload = p.GetOnDiskPayload()
		}
		if p.ReadFanOutFactor != nil {
			cp.ReadFanOutFactor = proto.Uint32(p.GetReadFanOutFactor())
		}
		if p.ReadFanOutDelayMs != nil {
			cp.ReadFanOutDelayMs = proto.Uint64(p.GetReadFanOutDelayMs())
		}
		if p.Payload != nil {
			cp.Payload = proto.Clone(p.Payload).(*qdrant.PayloadStorageParams)
		}
	}
	if h := req.GetHnswConfig(); h != nil {
		if cfg.HnswConfig == nil {
			cfg.HnswConfig = &qdrant.HnswConfigDiff{}
		}
		proto.Merge(cfg.HnswConfig, h)
	}
	if vc := req.GetVectorsConfig(); vc != nil {
		var diff *qdrant.VectorParamsDiff
		switch o := vc.GetConfig().(type) {
		case *qdrant.VectorsConfigDiff_Params:
			diff = o.Params
		case *qdrant.VectorsConfigDiff_ParamsMap:
			// VectorsConfigDiff::check_vector_names: only the unnamed vector exists.
			for name, d := range o.ParamsMap.GetMap() {
				if name != "" {
					return wrongInput("Not existing vector name error: %s", name)
				}
				diff = d
			}
		}
		if diff != nil {
			vp := cfg.Params.GetVectorsConfig().GetParams()
			if h := diff.GetHnswConfig(); h != nil {
				if vp.HnswConfig == nil {
					vp.HnswConfig = &qdrant.HnswConfigDiff{}
				}
				proto.Merge(vp.HnswConfig, h)
			}
			if q := diff.GetQuantizationConfig(); q != nil {
				vp.QuantizationConfig = quantizationFromDiff(q)
			}
			if diff.OnDisk != nil {
				vp.OnDisk = proto.Bool(diff.GetOnDisk())
			}
			if diff.Memory != nil {
				m := diff.GetMemory()
				vp.Memory = &m
			}
		}
	}
	if q := req.GetQuantizationConfig(); q != nil {
		cfg.QuantizationConfig = quantizationFromDiff(q)
	}
	if s := req.GetStrictModeConfig(); s != nil {
		if cfg.StrictModeConfig == nil {
			cfg.StrictModeConfig = proto.Clone(s).(*qdrant.StrictModeConfig)
		} else {
			proto.Merge(cfg.StrictModeConfig, s)
		}
	}
	if md := req.GetMetadata(); len(md) > 0 {
		if cfg.Metadata == nil {
			cfg.Metadata = map[string]*qdrant.Value{}
		}
		clean, err := cleanPayload(md)
		if err != nil {
			return err
		}
		for k, v := range clean {
			cfg.Metadata[k] = v
		}
	}
	return nil
}

// quantizationFromDiff turns a QuantizationConfigDiff into the config it
// sets (nil for disabled), as update_quantization_config_from_diff does.
func quantizationFromDiff(q *qdrant.QuantizationConfigDiff) *qdrant.QuantizationConfig {
	switch o := q.GetQuantization().(type) {
	case *qdrant.QuantizationConfigDiff_Scalar:
		return &qdrant.QuantizationConfig{Quantization: &qdrant.QuantizationConfig_Scalar{Scalar: o.Scalar}}
	case *qdrant.QuantizationConfigDiff_Product:
		return &qdrant.QuantizationConfig{Quantization: &qdrant.QuantizationConfig_Product{Product: o.Product}}
	case *qdrant.QuantizationConfigDiff_Binary:
		return &qdrant.QuantizationConfig{Quantization: &qdrant.QuantizationConfig_Binary{Binary: o.Binary}}
	case *qdrant.QuantizationConfigDiff_Turboquant:
		return &qdrant.QuantizationConfig{Quantization: &qdrant.QuantizationConfig_Turboquant{Turboquant: o.Turboquant}}
	}
	return nil
}
