package store

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"
)

// createNameChars are the characters Qdrant refuses in a new collection's
// name (lib/common/common/src/validation.rs INVALID_NAME_CHARS), in its
// order: the first of them found in the name is the one reported.
var createNameChars = [...]rune{'<', '>', ':', '"', '/', '\\', '|', '?', '*', 0, 0x1F}

// legacyNameChars are refused in names of every other request.
var legacyNameChars = [...]rune{'/', 0}

func validateName(name string, create bool) error {
	return validateNameField(name, "collection_name", create)
}

// validateNameField validates a collection name found in the given request
// field (batch requests validate the names of their inner requests too).
func validateNameField(name, field string, create bool) error {
	if n := utf8.RuneCountInString(name); n < 1 || n > 255 {
		return validation(field, fmt.Sprintf("value %q invalid, must be from 1 to 255 characters", name))
	}
	chars := legacyNameChars[:]
	if create {
		chars = createNameChars[:]
	}
	for _, c := range chars {
		if strings.ContainsRune(name, c) {
			return validation(field, fmt.Sprintf("collection name cannot contain \"%c\" char", c))
		}
	}
	return nil
}

// Default configuration echoed by CollectionInfo, as Qdrant v1.19 reports it
// for a fresh collection. The engine is an exact scan, so none of it changes
// behaviour; it is kept so clients that read it find what they expect.
func defaultConfig() *qdrant.CollectionConfig {
	u := func(v uint64) *uint64 { return &v }
	f := func(v float64) *float64 { return &v }
	b := func(v bool) *bool { return &v }
	return &qdrant.CollectionConfig{
		Params: &qdrant.CollectionParams{
			ShardNumber:            1,
			OnDiskPayload:          true,
			ReplicationFactor:      proto.Uint32(1),
			WriteConsistencyFactor: proto.Uint32(1),
		},
		HnswConfig: &qdrant.HnswConfigDiff{
			M: u(16), EfConstruct: u(100), FullScanThreshold: u(10000), MaxIndexingThreads: u(0), OnDisk: b(false),
		},
		OptimizerConfig: &qdrant.OptimizersConfigDiff{
			DeletedThreshold: f(0.2), VacuumMinVectorNumber: u(1000), DefaultSegmentNumber: u(0),
			IndexingThreshold: u(10000), FlushIntervalSec: u(5),
		},
		WalConfig: &qdrant.WalConfigDiff{WalCapacityMb: u(32), WalSegmentsAhead: u(0), WalRetainClosed: u(1)},
	}
}

// CreateCollection creates a collection with one unnamed dense vector
// (Cosine, Dot, Euclid or Manhattan). Named, sparse and multi vectors are
// not supported. HNSW, WAL, optimizer, quantization and sharding settings
// are accepted and echoed back but change nothing: search is always exact.
func (db *DB) CreateCollection(ctx context.Context, req *qdrant.CreateCollection) error {
	name := req.GetCollectionName()
	if err := validateName(name, true); err != nil {
		return err
	}
	vc := req.GetVectorsConfig()
	switch {
	case vc.GetParamsMap() != nil:
		return unimplemented("named vectors are not supported; use one unnamed vector (vectors_config.params)")
	case len(req.GetSparseVectorsConfig().GetMap()) > 0:
		return unimplemented("sparse vectors are not supported")
	case vc.GetParams() == nil:
		return unimplemented("collections without a dense vector are not supported; set vectors_config.params")
	case req.ShardNumber != nil && req.GetShardNumber() == 0:
		return validation("shard_number", "value 0 invalid, must be 1 or larger")
	case req.ReplicationFactor != nil && req.GetReplicationFactor() == 0:
		return validation("replication_factor", "value 0 invalid, must be 1 or larger")
	case req.GetShardingMethod() == qdrant.ShardingMethod_Custom:
		return unimplemented("custom sharding is not supported")
	}
	params := vc.GetParams()
	if params.GetSize() < 1 || params.GetSize() > maxDim {
		return validation("vectors_config.config.params.size", fmt.Sprintf("value %d invalid, must be from 1 to 65536", params.GetSize()))
	}
	switch params.GetDistance() {
	case qdrant.Distance_Cosine, qdrant.Distance_Dot, qdrant.Distance_Euclid, qdrant.Distance_Manhattan:
	case qdrant.Distance_UnknownDistance:
		return invalidArg("Malformed distance parameter: UnknownDistance")
	default:
		return invalidArg("Malformed distance parameter, unexpected value: %d", int32(params.GetDistance()))
	}
	if params.GetMultivectorConfig() != nil {
		return unimplemented("multi vectors are not supported")
	}

	cfg := defaultConfig()
	cfg.Params.VectorsConfig = &qdrant.VectorsConfig{Config: &qdrant.VectorsConfig_Params{Params: &qdrant.VectorParams{
		Size: params.GetSize(), Distance: params.GetDistance(), HnswConfig: params.HnswConfig,
		QuantizationConfig: params.QuantizationConfig, OnDisk: params.OnDisk, Datatype: params.Datatype,
	}}}
	if req.ShardNumber != nil {
		cfg.Params.ShardNumber = req.GetShardNumber()
	}
	if req.ReplicationFactor != nil {
		cfg.Params.ReplicationFactor = req.ReplicationFactor
	}
	if req.WriteConsistencyFactor != nil {
		cfg.Params.WriteConsistencyFactor = req.WriteConsistencyFactor
	}
	if req.OnDiskPayload != nil {
		cfg.Params.OnDiskPayload = req.GetOnDiskPayload()
	}
	if req.ShardingMethod != nil {
		cfg.Params.ShardingMethod = req.ShardingMethod
	}
	if h := req.GetHnswConfig(); h != nil {
		proto.Merge(cfg.HnswConfig, h)
	}
	if o := req.GetOptimizersConfig(); o != nil {
		proto.Merge(cfg.OptimizerConfig, o)
	}
	if w := req.GetWalConfig(); w != nil {
		proto.Merge(cfg.WalConfig, w)
	}
	cfg.QuantizationConfig = req.GetQuantizationConfig()
	cfg.StrictModeConfig = req.GetStrictModeConfig()
	cfg.Metadata = req.GetMetadata()

	done, err := db.enter()
	if err != nil {
		return err
	}
	defer done()
	c, err := newCollection(name, cfg, db.kernels)
	if err != nil {
		return invalidArg("%v", err)
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(cfg)
	if err != nil {
		return internal(err, "encode collection config")
	}

	db.wmu.Lock()
	defer db.wmu.Unlock()
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.collections[name] != nil {
		return &Error{Kind: KindAlreadyExists, Msg: fmt.Sprintf("Wrong input: Collection `%s` already exists!", name)}
	}
	if _, ok := db.aliases[name]; ok {
		// lib/storage/src/content_manager/toc/create_collection.rs
		return wrongInput("Can't create collection with name %s. Alias with the same name already exists", name)
	}
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketCollections).CreateBucket([]byte(name))
		if err != nil {
			return err
		}
		if err := b.Put(keyConfig, raw); err != nil {
			return err
		}
		if _, err := b.CreateBucket(bucketPoints); err != nil {
			return err
		}
		if _, err := b.CreateBucket(bucketIndexes); err != nil {
			return err
		}
		return putSeq(b, 0)
	})
	if err != nil {
		return internal(err, "create collection %s", name)
	}
	db.collections[name] = c
	return nil
}

// DeleteCollection drops a collection and the aliases that point to it. It
// reports false, not an error, when the collection does not exist (as
// Qdrant does); an alias is not resolved here, as in Qdrant's
// delete_collection (lib/storage/src/content_manager/toc/
// collection_meta_ops.rs), so deleting by an alias name reports false.
func (db *DB) DeleteCollection(ctx context.Context, name string) (bool, error) {
	if err := validateName(name, false); err != nil {
		return false, err
	}
	done, err := db.enter()
	if err != nil {
		return false, err
	}
	defer done()
	db.wmu.Lock()
	defer db.wmu.Unlock()
	db.mu.Lock()
	defer db.mu.Unlock()
	c := db.collections[name]
	if c == nil {
		return false, nil
	}
	// Wait for the collection's operations in flight; later ones see dropped.
	c.mu.Lock()
	defer c.mu.Unlock()
	var gone []string
	for a, target := range db.aliases {
		if target == name {
			gone = append(gone, a)
		}
	}
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		al := tx.Bucket(bucketAliases)
		for _, a := range gone {
			if err := al.Delete([]byte(a)); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketCollections).DeleteBucket([]byte(name))
	})
	if err != nil {
		return false, internal(err, "delete collection %s", name)
	}
	c.dropped = true
	delete(db.collections, name)
	for _, a := range gone {
		delete(db.aliases, a)
	}
	return true, nil
}

// CollectionExists reports whether the collection exists.
func (db *DB) CollectionExists(ctx context.Context, name string) (bool, error) {
	if err := validateName(name, false); err != nil {
		return false, err
	}
	done, err := db.enter()
	if err != nil {
		return false, err
	}
	defer done()
	_, err = db.collection(name)
	return err == nil, nil
}

// ListCollections returns the collection names in lexical order.
func (db *DB) ListCollections(ctx context.Context) ([]string, error) {
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	return db.names(), nil
}

// CollectionInfo describes a collection the way Qdrant's Get does.
func (db *DB) CollectionInfo(ctx context.Context, name string) (*qdrant.CollectionInfo, error) {
	if err := validateName(name, false); err != nil {
		return nil, err
	}
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	c, err := db.collection(name)
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.dropped {
		return nil, collectionNotFound(name)
	}
	n := uint64(c.nlive)
	zero := uint64(0)
	return &qdrant.CollectionInfo{
		Status:              qdrant.CollectionStatus_Green,
		OptimizerStatus:     &qdrant.OptimizerStatus{Ok: true},
		SegmentsCount:       1,
		Config:              proto.Clone(c.config).(*qdrant.CollectionConfig),
		PayloadSchema:       c.payloadSchema(),
		PointsCount:         &n,
		IndexedVectorsCount: &zero,
		UpdateQueue:         &qdrant.UpdateQueueInfo{},
	}, nil
}

// readCollection finds a collection and takes its lock shared (writers go
// through the committer). The returned func releases both the lock and the
// operation.
func (db *DB) readCollection(name string) (*collection, func(), error) {
	if err := validateName(name, false); err != nil {
		return nil, nil, err
	}
	done, err := db.enter()
	if err != nil {
		return nil, nil, err
	}
	c, err := db.collection(name)
	if err != nil {
		done()
		return nil, nil, err
	}
	c.mu.RLock()
	unlock := func() {
		c.mu.RUnlock()
		done()
	}
	if c.dropped {
		unlock()
		return nil, nil, collectionNotFound(name)
	}
	return c, unlock, nil
}
