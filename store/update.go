package store

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/internal/jsonpath"
)

// Every write below is queued to the DB's committer (commit.go), which runs
// it in a bbolt transaction shared with the writes queued alongside it and
// applies it to memory only once that transaction has committed: a write
// that returns without error is on disk (fsync'ed), and a write that fails
// changed nothing. wait=false is therefore the same as wait=true, and the
// status is always Completed.

// writeTx is what a write operation does inside its transaction. It returns
// the in-memory changes to apply once the transaction has committed. It may
// run more than once (when another write of its group fails, the group runs
// again without that one), so it must not change what it captured.
type writeTx func(ctx context.Context, c *collection, pts *bolt.Bucket, op uint64) (apply func(), err error)

func (db *DB) write(ctx context.Context, name string, op writeOp) (*qdrant.UpdateResult, error) {
	res, err := db.submit(ctx, name, []writeOp{op})
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

type pointIn struct {
	id      PointID
	vec     []float32
	payload map[string]*qdrant.Value
}

func convertPoints(ps []*qdrant.PointStruct) ([]pointIn, error) {
	out := make([]pointIn, 0, len(ps))
	for _, p := range ps {
		payload, err := cleanPayload(p.GetPayload())
		if err != nil {
			return nil, err
		}
		vec, err := denseVector(p.GetVectors())
		if err != nil {
			return nil, err
		}
		if p.GetId() == nil {
			return nil, invalidArg("Empty ID is not allowed")
		}
		id, err := PointIDFromProto(p.GetId())
		if err != nil {
			return nil, err
		}
		out = append(out, pointIn{id: id, vec: vec, payload: payload})
	}
	return out, nil
}

// loadPayload decodes the payload of a stored record.
func loadPayload(pts *bolt.Bucket, id PointID, dim int) (map[string]*qdrant.Value, error) {
	raw := pts.Get(id.key())
	if raw == nil {
		return nil, nil
	}
	rec, err := parseRecord(raw, dim)
	if err != nil {
		return nil, err
	}
	return decodePayload(rec.payload)
}

// matchesStored evaluates a compiled filter against a stored point.
func (c *collection) matchesStored(f node, pts *bolt.Bucket, id PointID) (bool, error) {
	slot, ok := c.slots[id]
	if !ok {
		return false, nil
	}
	e := evalCtx{pts: pts, src: c, dim: c.dim}
	e.at(slot, id, nil)
	m := f.eval(&e)
	return m, e.err
}

// Upsert inserts or replaces whole points. update_filter and update_mode
// follow Qdrant (lib/shard/src/update/points/upsert.rs): with a filter,
// existing points are replaced only if they match it, new points are always
// inserted; insert_only skips existing points; update_only replaces only
// existing points (that match the filter). Within one request the last
// occurrence of an id wins.
func (db *DB) Upsert(ctx context.Context, req *qdrant.UpsertPoints) (*qdrant.UpdateResult, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	tx, err := upsertTx(req.GetPoints(), req.GetShardKeySelector(), req.GetUpdateFilter(), req.GetUpdateMode())
	if err != nil {
		return nil, err
	}
	return db.write(ctx, req.GetCollectionName(), structural(tx))
}

// upsertTx converts an upsert; the returned transaction applies it.
func upsertTx(in []*qdrant.PointStruct, shardKeys *qdrant.ShardKeySelector, updateFilter *qdrant.Filter, mode qdrant.UpdateMode) (writeTx, error) {
	if shardKeys != nil {
		return nil, unimplemented("shard keys are not supported")
	}
	points, err := convertPoints(in)
	if err != nil {
		return nil, err
	}
	switch mode {
	case qdrant.UpdateMode_Upsert, qdrant.UpdateMode_InsertOnly, qdrant.UpdateMode_UpdateOnly:
	default:
		mode = qdrant.UpdateMode_Upsert // Qdrant maps unknown values to upsert
	}
	if err := checkFilter(updateFilter, "update_filter"); err != nil {
		return nil, err
	}
	return func(ctx context.Context, c *collection, pts *bolt.Bucket, op uint64) (func(), error) {
		last := make(map[PointID]int, len(points))
		vecs := make([][]float32, len(points))
		for i := range points {
			vec, err := c.checkVector(points[i].vec)
			if err != nil {
				return nil, err
			}
			vecs[i] = vec
			last[points[i].id] = i
		}
		var cond node
		if updateFilter != nil {
			var err error
			if cond, err = (filterCompiler{c: c}).compile(updateFilter, "update_filter"); err != nil {
				return nil, err
			}
		}
		type change struct {
			p   pointIn
			old map[string]*qdrant.Value
		}
		var changes []change
		for i, p := range points {
			if last[p.id] != i {
				continue
			}
			p.vec = vecs[i]
			_, exists := c.slots[p.id]
			switch {
			case mode == qdrant.UpdateMode_InsertOnly && exists:
				continue
			case mode == qdrant.UpdateMode_UpdateOnly && !exists:
				continue
			case exists && cond != nil:
				ok, err := c.matchesStored(cond, pts, p.id)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
			}
			var old map[string]*qdrant.Value
			if exists && len(c.indexes) > 0 {
				var err error
				if old, err = loadPayload(pts, p.id, c.dim); err != nil {
					return nil, err
				}
			}
			rec, err := encodeRecord(op, vecBytes(p.vec), p.payload)
			if err != nil {
				return nil, err
			}
			if err := pts.Put(p.id.key(), rec); err != nil {
				return nil, err
			}
			changes = append(changes, change{p: p, old: old})
		}
		return func() {
			for _, ch := range changes {
				c.putPoint(ch.p.id, op, ch.p.vec, ch.p.payload, ch.old)
			}
		}, nil
	}, nil
}

// selection is a resolved PointsSelector.
type selection struct {
	ids    []PointID
	filter *qdrant.Filter
	byIDs  bool
}

func convertSelector(s *qdrant.PointsSelector, missing string) (selection, error) {
	switch o := s.GetPointsSelectorOneOf().(type) {
	case *qdrant.PointsSelector_Points:
		sel := selection{byIDs: true}
		for _, p := range o.Points.GetIds() {
			id, err := PointIDFromProto(p)
			if err != nil {
				return selection{}, err
			}
			sel.ids = append(sel.ids, id)
		}
		return sel, nil
	case *qdrant.PointsSelector_Filter:
		return selection{filter: o.Filter}, nil
	}
	return selection{}, invalidArg("%s", missing)
}

// resolve lists the existing points a selection names. With ids, a missing
// point is an error when strict (payload writes), skipped otherwise.
func (c *collection) resolve(ctx context.Context, sel selection, pts *bolt.Bucket, strict bool) ([]PointID, error) {
	if sel.byIDs {
		seen := make(map[PointID]bool, len(sel.ids))
		var out []PointID
		for _, id := range sel.ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			if _, ok := c.slots[id]; !ok {
				if strict {
					return nil, pointNotFound(id)
				}
				continue
			}
			out = append(out, id)
		}
		return out, nil
	}
	f, err := (filterCompiler{c: c}).compile(sel.filter, "filter")
	if err != nil {
		return nil, err
	}
	matches := c.live
	if f != nil {
		if matches, err = c.filterSlots(ctx, f, pts); err != nil {
			return nil, err
		}
	}
	var out []PointID
	matches.each(0, uint32(len(c.ids)), func(slot uint32) { out = append(out, c.ids[slot]) })
	return out, nil
}

// Delete removes points by ids (missing ids are ignored) or by filter.
func (db *DB) Delete(ctx context.Context, req *qdrant.DeletePoints) (*qdrant.UpdateResult, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	if req.GetShardKeySelector() != nil {
		return nil, unimplemented("shard keys are not supported")
	}
	tx, err := deleteTx(req.GetPoints())
	if err != nil {
		return nil, err
	}
	return db.write(ctx, req.GetCollectionName(), structural(tx))
}

// deleteTx converts a delete; the returned transaction applies it.
func deleteTx(s *qdrant.PointsSelector) (writeTx, error) {
	sel, err := convertSelector(s, "PointSelector is missing")
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, c *collection, pts *bolt.Bucket, op uint64) (func(), error) {
		ids, err := c.resolve(ctx, sel, pts, false)
		if err != nil {
			return nil, err
		}
		olds := make([]map[string]*qdrant.Value, len(ids))
		for i, id := range ids {
			if len(c.indexes) > 0 {
				if olds[i], err = loadPayload(pts, id, c.dim); err != nil {
					return nil, err
				}
			}
			if err := pts.Delete(id.key()); err != nil {
				return nil, err
			}
		}
		return func() {
			for i, id := range ids {
				c.removePoint(id, olds[i])
			}
		}, nil
	}, nil
}

// payloadTx is a transaction that applies edit to the payload of every
// selected point.
func payloadTx(sel selection, edit func(map[string]*qdrant.Value) map[string]*qdrant.Value) writeOp {
	return writeOp{payloadOnly: true, byIDs: sel.byIDs, tx: func(ctx context.Context, c *collection, pts *bolt.Bucket, op uint64) (func(), error) {
		ids, err := c.resolve(ctx, sel, pts, true)
		if err != nil {
			return nil, err
		}
		type change struct {
			slot     uint32
			old, new map[string]*qdrant.Value
		}
		changes := make([]change, 0, len(ids))
		for _, id := range ids {
			raw := pts.Get(id.key())
			c.stageOld(id, raw)
			rec, err := parseRecord(raw, c.dim)
			if err != nil {
				return nil, err
			}
			cur, err := decodePayload(rec.payload)
			if err != nil {
				return nil, err
			}
			old := c.indexedCopy(cur)
			next := edit(cur)
			vec := append([]byte(nil), rec.vec...)
			b, err := encodeRecord(op, vec, next)
			if err != nil {
				return nil, err
			}
			if err := pts.Put(id.key(), b); err != nil {
				return nil, err
			}
			changes = append(changes, change{slot: c.slots[id], old: old, new: next})
		}
		return func() {
			for _, ch := range changes {
				c.setPayloadOnly(ch.slot, op, ch.new, ch.old)
			}
		}, nil
	}}
}

func payloadSelection(shardKeys *qdrant.ShardKeySelector, s *qdrant.PointsSelector, missing string) (selection, error) {
	if shardKeys != nil {
		return selection{}, unimplemented("shard keys are not supported")
	}
	return convertSelector(s, missing)
}

// indexedCopy copies, deeply, the values of payload that c's indexes read
// (each index reads below one top-level key): enough to unindex the point
// once an edit has changed payload, for less than decoding it again.
func (c *collection) indexedCopy(payload map[string]*qdrant.Value) map[string]*qdrant.Value {
	if len(c.indexes) == 0 {
		return nil
	}
	out := make(map[string]*qdrant.Value, len(c.indexes))
	for _, fi := range c.indexes {
		k := fi.path.First
		if _, done := out[k]; done {
			continue
		}
		if v, ok := payload[k]; ok {
			out[k] = proto.Clone(v).(*qdrant.Value)
		}
	}
	return out
}

// deepCopy copies a payload map so each point gets its own values.
func deepCopy(m map[string]*qdrant.Value) map[string]*qdrant.Value {
	out := make(map[string]*qdrant.Value, len(m))
	for k, v := range m {
		out[k] = proto.Clone(v).(*qdrant.Value)
	}
	return out
}

// SetPayload merges the given payload into each selected point. Without a
// key, top-level keys are replaced (a null value deletes its key); with a
// key path, the payload is merged into the object at that path, which is
// created if missing, so SetPayload(key "access_counts", {"replica-a": 7})
// leaves access_counts.replica-b untouched. A listed point that does not
// exist fails the whole request with NotFound and changes nothing.
func (db *DB) SetPayload(ctx context.Context, req *qdrant.SetPayloadPoints) (*qdrant.UpdateResult, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	tx, err := setPayloadTx(req.GetPayload(), req.GetPointsSelector(), req.GetShardKeySelector(), req.Key)
	if err != nil {
		return nil, err
	}
	return db.write(ctx, req.GetCollectionName(), tx)
}

func setPayloadTx(payload map[string]*qdrant.Value, s *qdrant.PointsSelector, shardKeys *qdrant.ShardKeySelector, keyPath *string) (writeOp, error) {
	var key *jsonpath.Path
	if keyPath != nil {
		p, err := parsePath(*keyPath)
		if err != nil {
			return writeOp{}, err
		}
		key = &p
	}
	sel, err := payloadSelection(shardKeys, s, "points_selector is expected")
	if err != nil {
		return writeOp{}, err
	}
	src, err := cleanPayload(payload)
	if err != nil {
		return writeOp{}, err
	}
	return payloadTx(sel, func(cur map[string]*qdrant.Value) map[string]*qdrant.Value {
		if key != nil {
			key.Set(cur, deepCopy(src))
		} else {
			jsonpath.Merge(cur, deepCopy(src))
		}
		return cur
	}), nil
}

// OverwritePayload replaces the whole payload of each selected point. Like
// Qdrant, it ignores key.
func (db *DB) OverwritePayload(ctx context.Context, req *qdrant.SetPayloadPoints) (*qdrant.UpdateResult, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	tx, err := overwritePayloadTx(req.GetPayload(), req.GetPointsSelector(), req.GetShardKeySelector())
	if err != nil {
		return nil, err
	}
	return db.write(ctx, req.GetCollectionName(), tx)
}

func overwritePayloadTx(payload map[string]*qdrant.Value, s *qdrant.PointsSelector, shardKeys *qdrant.ShardKeySelector) (writeOp, error) {
	sel, err := payloadSelection(shardKeys, s, "points_selector is expected")
	if err != nil {
		return writeOp{}, err
	}
	src, err := cleanPayload(payload)
	if err != nil {
		return writeOp{}, err
	}
	return payloadTx(sel, func(map[string]*qdrant.Value) map[string]*qdrant.Value {
		return deepCopy(src)
	}), nil
}

// DeletePayload deletes keys (paths) from each selected point.
func (db *DB) DeletePayload(ctx context.Context, req *qdrant.DeletePayloadPoints) (*qdrant.UpdateResult, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	tx, err := deletePayloadTx(req.GetKeys(), req.GetPointsSelector(), req.GetShardKeySelector())
	if err != nil {
		return nil, err
	}
	return db.write(ctx, req.GetCollectionName(), tx)
}

func deletePayloadTx(keys []string, s *qdrant.PointsSelector, shardKeys *qdrant.ShardKeySelector) (writeOp, error) {
	paths := make([]jsonpath.Path, 0, len(keys))
	for _, k := range keys {
		p, err := parsePath(k)
		if err != nil {
			return writeOp{}, err
		}
		paths = append(paths, p)
	}
	sel, err := payloadSelection(shardKeys, s, "points_selector is expected")
	if err != nil {
		return writeOp{}, err
	}
	return payloadTx(sel, func(cur map[string]*qdrant.Value) map[string]*qdrant.Value {
		for _, p := range paths {
			p.Remove(cur)
		}
		return cur
	}), nil
}

// ClearPayload empties the payload of each selected point.
func (db *DB) ClearPayload(ctx context.Context, req *qdrant.ClearPayloadPoints) (*qdrant.UpdateResult, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	tx, err := clearPayloadTx(req.GetPoints(), req.GetShardKeySelector())
	if err != nil {
		return nil, err
	}
	return db.write(ctx, req.GetCollectionName(), tx)
}

func clearPayloadTx(s *qdrant.PointsSelector, shardKeys *qdrant.ShardKeySelector) (writeOp, error) {
	sel, err := payloadSelection(shardKeys, s, "PointSelector is missing")
	if err != nil {
		return writeOp{}, err
	}
	return payloadTx(sel, func(map[string]*qdrant.Value) map[string]*qdrant.Value {
		return map[string]*qdrant.Value{}
	}), nil
}

var fieldTypeSchema = map[qdrant.FieldType]qdrant.PayloadSchemaType{
	qdrant.FieldType_FieldTypeKeyword:  qdrant.PayloadSchemaType_Keyword,
	qdrant.FieldType_FieldTypeInteger:  qdrant.PayloadSchemaType_Integer,
	qdrant.FieldType_FieldTypeFloat:    qdrant.PayloadSchemaType_Float,
	qdrant.FieldType_FieldTypeGeo:      qdrant.PayloadSchemaType_Geo,
	qdrant.FieldType_FieldTypeText:     qdrant.PayloadSchemaType_Text,
	qdrant.FieldType_FieldTypeBool:     qdrant.PayloadSchemaType_Bool,
	qdrant.FieldType_FieldTypeDatetime: qdrant.PayloadSchemaType_Datetime,
	qdrant.FieldType_FieldTypeUuid:     qdrant.PayloadSchemaType_Uuid,
}

// paramsMatch checks field_index_params against field_type, as Qdrant's
// convert_field_type does.
func paramsMatch(ft qdrant.FieldType, p *qdrant.PayloadIndexParams) bool {
	switch p.GetIndexParams().(type) {
	case nil:
		return true
	case *qdrant.PayloadIndexParams_KeywordIndexParams:
		return ft == qdrant.FieldType_FieldTypeKeyword
	case *qdrant.PayloadIndexParams_IntegerIndexParams:
		return ft == qdrant.FieldType_FieldTypeInteger
	case *qdrant.PayloadIndexParams_FloatIndexParams:
		return ft == qdrant.FieldType_FieldTypeFloat
	case *qdrant.PayloadIndexParams_GeoIndexParams:
		return ft == qdrant.FieldType_FieldTypeGeo
	case *qdrant.PayloadIndexParams_TextIndexParams:
		return ft == qdrant.FieldType_FieldTypeText
	case *qdrant.PayloadIndexParams_BoolIndexParams:
		return ft == qdrant.FieldType_FieldTypeBool
	case *qdrant.PayloadIndexParams_DatetimeIndexParams:
		return ft == qdrant.FieldType_FieldTypeDatetime
	case *qdrant.PayloadIndexParams_UuidIndexParams:
		return ft == qdrant.FieldType_FieldTypeUuid
	}
	return false
}

// CreateFieldIndex creates (or replaces) a payload index on a key path.
// keyword, integer, float, bool and datetime indexes speed filtering up;
// text, geo and uuid indexes are accepted and listed but change nothing
// (matching stays the substring semantics documented in the package).
func (db *DB) CreateFieldIndex(ctx context.Context, req *qdrant.CreateFieldIndexCollection) (*qdrant.UpdateResult, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	if req.GetFieldName() == "" {
		return nil, validation("field_name", `value "" invalid, must be at least 1 characters`)
	}
	path, err := parsePath(req.GetFieldName())
	if err != nil {
		return nil, err
	}
	if req.FieldType == nil {
		return nil, invalidArg("cannot convert field_type")
	}
	schema, ok := fieldTypeSchema[req.GetFieldType()]
	if !ok {
		return nil, invalidArg("cannot convert field_type")
	}
	if !paramsMatch(req.GetFieldType(), req.GetFieldIndexParams()) {
		return nil, invalidArg("field_type (%s) and field_index_params do not match", fieldTypeName(req.GetFieldType()))
	}
	info := &qdrant.PayloadSchemaInfo{DataType: schema}
	if req.GetFieldIndexParams().GetIndexParams() != nil {
		info.Params = req.GetFieldIndexParams()
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(info)
	if err != nil {
		return nil, internal(err, "encode index definition")
	}
	name := path.String()
	return db.write(ctx, req.GetCollectionName(), structural(func(ctx context.Context, c *collection, pts *bolt.Bucket, op uint64) (func(), error) {
		b := pts.Tx().Bucket(bucketCollections).Bucket([]byte(c.name)).Bucket(bucketIndexes)
		if err := b.Put([]byte(name), raw); err != nil {
			return nil, err
		}
		fi := newFieldIndex(path, info)
		err := pts.ForEach(func(k, v []byte) error {
			id, ok := idFromKey(k)
			if !ok {
				return fmt.Errorf("corrupt point key %x", k)
			}
			slot, ok := c.slots[id]
			if !ok {
				return nil
			}
			rec, err := parseRecord(v, c.dim)
			if err != nil {
				return err
			}
			payload, err := decodePayload(rec.payload)
			if err != nil {
				return err
			}
			fi.add(slot, payload)
			return nil
		})
		if err != nil {
			return nil, err
		}
		return func() { c.indexes[name] = fi }, nil
	}))
}

func fieldTypeName(ft qdrant.FieldType) string {
	n := ft.String()
	if len(n) > len("FieldType") && n[:len("FieldType")] == "FieldType" {
		return n[len("FieldType"):]
	}
	return n
}

// DeleteFieldIndex drops the payload index on a key path (no error if there
// is none).
func (db *DB) DeleteFieldIndex(ctx context.Context, req *qdrant.DeleteFieldIndexCollection) (*qdrant.UpdateResult, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	if req.GetFieldName() == "" {
		return nil, validation("field_name", `value "" invalid, must be at least 1 characters`)
	}
	path, err := parsePath(req.GetFieldName())
	if err != nil {
		return nil, err
	}
	name := path.String()
	return db.write(ctx, req.GetCollectionName(), structural(func(ctx context.Context, c *collection, pts *bolt.Bucket, op uint64) (func(), error) {
		b := pts.Tx().Bucket(bucketCollections).Bucket([]byte(c.name)).Bucket(bucketIndexes)
		if err := b.Delete([]byte(name)); err != nil {
			return nil, err
		}
		return func() { delete(c.indexes, name) }, nil
	}))
}

// UpdateVectors replaces the vector of existing points and keeps their
// payloads. A listed point that does not exist fails the whole request with
// NotFound (Qdrant's check_unprocessed_points) and changes nothing; with
// update_filter, points that do not match it are left as they are.
func (db *DB) UpdateVectors(ctx context.Context, req *qdrant.UpdatePointVectors) (*qdrant.UpdateResult, error) {
	if err := validateName(req.GetCollectionName(), false); err != nil {
		return nil, err
	}
	tx, err := updateVectorsTx(req.GetPoints(), req.GetShardKeySelector(), req.GetUpdateFilter())
	if err != nil {
		return nil, err
	}
	return db.write(ctx, req.GetCollectionName(), structural(tx))
}

// updateVectorsTx converts a vector update; the returned transaction
// applies it.
func updateVectorsTx(in []*qdrant.PointVectors, shardKeys *qdrant.ShardKeySelector, updateFilter *qdrant.Filter) (writeTx, error) {
	if shardKeys != nil {
		return nil, unimplemented("shard keys are not supported")
	}
	if err := checkFilter(updateFilter, "update_filter"); err != nil {
		return nil, err
	}
	type update struct {
		id  PointID
		vec []float32
	}
	updates := make([]update, 0, len(in))
	for _, p := range in {
		if p.GetId() == nil {
			return nil, invalidArg("id is expected")
		}
		id, err := PointIDFromProto(p.GetId())
		if err != nil {
			return nil, err
		}
		if p.GetVectors() == nil {
			return nil, invalidArg("vectors is expected")
		}
		vec, err := denseVector(p.GetVectors())
		if err != nil {
			return nil, err
		}
		updates = append(updates, update{id: id, vec: vec})
	}
	return func(ctx context.Context, c *collection, pts *bolt.Bucket, op uint64) (func(), error) {
		last := make(map[PointID]int, len(updates))
		vecs := make([][]float32, len(updates))
		for i := range updates {
			vec, err := c.checkVector(updates[i].vec)
			if err != nil {
				return nil, err
			}
			vecs[i] = vec
			last[updates[i].id] = i
		}
		for _, u := range updates {
			if _, ok := c.slots[u.id]; !ok {
				return nil, pointNotFound(u.id)
			}
		}
		var cond node
		if updateFilter != nil {
			var err error
			if cond, err = (filterCompiler{c: c}).compile(updateFilter, "update_filter"); err != nil {
				return nil, err
			}
		}
		var applied []update
		for i, u := range updates {
			if last[u.id] != i {
				continue
			}
			u.vec = vecs[i]
			if cond != nil {
				ok, err := c.matchesStored(cond, pts, u.id)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
			}
			rec, err := parseRecord(pts.Get(u.id.key()), c.dim)
			if err != nil {
				return nil, err
			}
			b := make([]byte, 0, 9+4*c.dim+len(rec.payload))
			b = append(b, recordFormat, 0, 0, 0, 0, 0, 0, 0, 0)
			binary.LittleEndian.PutUint64(b[1:], op)
			b = append(append(b, vecBytes(u.vec)...), rec.payload...)
			if err := pts.Put(u.id.key(), b); err != nil {
				return nil, err
			}
			applied = append(applied, u)
		}
		return func() {
			for _, u := range applied {
				slot := c.slots[u.id]
				c.vectors.put(slot, u.vec)
				c.versions[slot] = op
			}
		}, nil
	}, nil
}
