package restapi

import (
	"fmt"
	"strconv"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Point routes: writes, retrieval, scroll, count, payload and index.

func (h *handler) root(c *call) ([]byte, error) {
	rep, err := h.cfg.Qdrant.HealthCheck(c.ctx, &qdrant.HealthCheckRequest{}, c.opts()...)
	if err != nil {
		return nil, err
	}
	b := []byte(`{"title":`)
	b = appendString(b, rep.GetTitle())
	b = append(b, `,"version":`...)
	b = appendString(b, rep.GetVersion())
	if rep.Commit != nil {
		b = append(b, `,"commit":`...)
		b = appendString(b, rep.GetCommit())
	}
	return append(b, '}'), nil
}

func updateResult(res *qdrant.PointsOperationResponse, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	return appendUpdateResult(nil, res.GetResult()), nil
}

var pointStructFields = []string{"id", "vector", "vectors", "payload"}

func toPointStruct(v value, path string) (*qdrant.PointStruct, error) {
	o, err := readObject(v, path, pointStructFields...)
	if err != nil {
		return nil, err
	}
	idv, err := o.require("id")
	if err != nil {
		return nil, err
	}
	p := &qdrant.PointStruct{}
	if p.Id, err = toPointID(idv, o.sub("id")); err != nil {
		return nil, err
	}
	vv, key, ok, err := o.getAlias("vector", "vectors")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, formatErr(path, "missing field `vector`")
	}
	if p.Vectors, err = toVectors(vv, o.sub(key)); err != nil {
		return nil, err
	}
	if pv, ok := o.get("payload"); ok {
		if p.Payload, err = toPayload(pv, o.sub("payload")); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// toBatchPoints turns the column form {"batch":{ids, vectors, payloads}}
// into point structs.
func toBatchPoints(v value, path string) ([]*qdrant.PointStruct, error) {
	o, err := readObject(v, path, "ids", "vectors", "payloads")
	if err != nil {
		return nil, err
	}
	idv, err := o.require("ids")
	if err != nil {
		return nil, err
	}
	ids, err := toPointIDs(idv, o.sub("ids"))
	if err != nil {
		return nil, err
	}
	points := make([]*qdrant.PointStruct, len(ids))
	for i, id := range ids {
		points[i] = &qdrant.PointStruct{Id: id}
	}
	vv, err := o.require("vectors")
	if err != nil {
		return nil, err
	}
	vpath := o.sub("vectors")
	mismatch := func(p string, n int) error {
		return formatErr(p, "the number of vectors (%d) does not match the number of ids (%d)", n, len(ids))
	}
	switch vv.kind {
	case kindArray:
		items := vv.items()
		if len(items) != len(ids) {
			return nil, mismatch(vpath, len(items))
		}
		for i, e := range items {
			if points[i].Vectors, err = toVectors(e, index(vpath, i)); err != nil {
				return nil, err
			}
			if points[i].Vectors.GetVectors() != nil {
				return nil, formatErr(index(vpath, i), "expected a vector, got a map")
			}
		}
	case kindObject:
		named := make([]map[string]*qdrant.Vector, len(ids))
		for i := range named {
			named[i] = map[string]*qdrant.Vector{}
		}
		for _, mb := range vv.members {
			p := join(vpath, mb.key)
			if mb.val.kind != kindArray {
				return nil, typeErr(p, mb.val, "a sequence of vectors")
			}
			items := mb.val.items()
			if len(items) != len(ids) {
				return nil, mismatch(p, len(items))
			}
			for i, e := range items {
				vec, err := toVector(e, index(p, i))
				if err != nil {
					return nil, err
				}
				named[i][mb.key] = vec
			}
		}
		for i := range points {
			points[i].Vectors = qdrant.NewVectorsMap(named[i])
		}
	default:
		return nil, typeErr(vpath, vv, "a sequence of vectors or a map of named vector lists")
	}
	if pv, ok := o.get("payloads"); ok {
		if pv.kind != kindArray {
			return nil, typeErr(o.sub("payloads"), pv, "a sequence of payloads")
		}
		items := pv.items()
		if len(items) != len(ids) {
			return nil, formatErr(o.sub("payloads"), "the number of payloads (%d) does not match the number of ids (%d)", len(items), len(ids))
		}
		for i, e := range items {
			if e.kind == kindNull {
				continue
			}
			if points[i].Payload, err = toPayload(e, index(o.sub("payloads"), i)); err != nil {
				return nil, err
			}
		}
	}
	return points, nil
}

func toUpdateMode(o object) (*qdrant.UpdateMode, error) {
	v, ok := o.get("update_mode")
	if !ok {
		return nil, nil
	}
	var m qdrant.UpdateMode
	switch {
	case v.kind == kindString && v.s == "upsert":
		m = qdrant.UpdateMode_Upsert
	case v.kind == kindString && v.s == "insert_only":
		m = qdrant.UpdateMode_InsertOnly
	case v.kind == kindString && v.s == "update_only":
		m = qdrant.UpdateMode_UpdateOnly
	default:
		return nil, formatErr(o.sub("update_mode"), "unknown variant %s, expected one of `upsert`, `insert_only`, `update_only`", v.describe())
	}
	return &m, nil
}

func (h *handler) upsertPoints(c *call) ([]byte, error) {
	wp, err := c.writeParams()
	if err != nil {
		return nil, err
	}
	req := &qdrant.UpsertPoints{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	if c.val.kind != kindObject {
		return nil, formatErr("", "Invalid PointInsertOperations format")
	}
	keys := memberKeys(c.val)
	switch {
	case keys["batch"]:
		o, err := readObject(c.val, "", "batch", "shard_key", "update_filter", "update_mode")
		if err != nil {
			return nil, err
		}
		if req.Points, err = toBatchPoints(o.m["batch"], "batch"); err != nil {
			return nil, err
		}
		if err := upsertOptions(o, req); err != nil {
			return nil, err
		}
	case keys["points"]:
		o, err := readObject(c.val, "", "points", "shard_key", "update_filter", "update_mode")
		if err != nil {
			return nil, err
		}
		pv := o.m["points"]
		if pv.kind != kindArray {
			return nil, typeErr("points", pv, "a sequence of points")
		}
		items := pv.items()
		req.Points = make([]*qdrant.PointStruct, len(items))
		for i, e := range items {
			if req.Points[i], err = toPointStruct(e, index("points", i)); err != nil {
				return nil, err
			}
		}
		if err := upsertOptions(o, req); err != nil {
			return nil, err
		}
	default:
		return nil, formatErr("", "Invalid PointInsertOperations format")
	}
	return updateResult(h.cfg.Points.Upsert(c.ctx, req, c.opts()...))
}

func upsertOptions(o object, req *qdrant.UpsertPoints) error {
	var err error
	if req.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return err
	}
	if req.UpdateFilter, err = optFilter(o, "update_filter"); err != nil {
		return err
	}
	req.UpdateMode, err = toUpdateMode(o)
	return err
}

// retrievePoints is POST /collections/{c}/points: payload off unless asked
// for (Qdrant's retrieve default), vectors off.
func (h *handler) retrievePoints(c *call) ([]byte, error) {
	o, err := readObject(c.val, "", "ids", "with_payload", "with_vector", "with_vectors", "shard_key")
	if err != nil {
		return nil, err
	}
	idv, err := o.require("ids")
	if err != nil {
		return nil, err
	}
	req := &qdrant.GetPoints{CollectionName: c.collection, Timeout: c.timeout}
	if req.Ids, err = toPointIDs(idv, "ids"); err != nil {
		return nil, err
	}
	if req.WithPayload, req.WithVectors, err = selectors(o, boolPtr(false)); err != nil {
		return nil, err
	}
	if req.WithVectors == nil {
		req.WithVectors = qdrant.NewWithVectorsEnable(false)
	}
	if req.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	if req.ReadConsistency, err = c.consistency(); err != nil {
		return nil, err
	}
	res, err := h.cfg.Points.Get(c.ctx, req, c.opts()...)
	if err != nil {
		return nil, err
	}
	return appendRecords(nil, res.GetResult(), shape{payload: payloadRequested(req.WithPayload)}), nil
}

// getPoint is GET /collections/{c}/points/{id}: payload and vector.
func (h *handler) getPoint(c *call) ([]byte, error) {
	raw := c.r.PathValue("id")
	id, ok := parsePointID(raw)
	if !ok {
		return nil, &decodeError{status: 400, msg: fmt.Sprintf("Wrong input: Can not recognize %q as point id", raw)}
	}
	cons, err := c.consistency()
	if err != nil {
		return nil, err
	}
	req := &qdrant.GetPoints{
		CollectionName:  c.collection,
		Ids:             []*qdrant.PointId{id},
		WithPayload:     qdrant.NewWithPayloadEnable(true),
		WithVectors:     qdrant.NewWithVectorsEnable(true),
		ReadConsistency: cons,
		Timeout:         c.timeout,
	}
	res, err := h.cfg.Points.Get(c.ctx, req, c.opts()...)
	if err != nil {
		return nil, err
	}
	if len(res.GetResult()) == 0 {
		return nil, status.Error(codes.NotFound, "Not found: Point with id "+pointIDText(id)+" does not exists!")
	}
	return appendRecord(nil, res.GetResult()[0], shape{payload: true}), nil
}

func pointIDText(id *qdrant.PointId) string {
	if u := id.GetUuid(); u != "" {
		return u
	}
	return strconv.FormatUint(id.GetNum(), 10)
}

// pointsSelector reads {"points": [ids]} or {"filter": {...}} from o.
func pointsSelector(o object, required bool) (*qdrant.PointsSelector, error) {
	pv, hasPoints := o.get("points")
	_, hasFilter := o.get("filter")
	switch {
	case hasPoints && hasFilter:
		return nil, formatErr("", "either `points` or `filter` may be given, not both")
	case hasPoints:
		ids, err := toPointIDs(pv, "points")
		if err != nil {
			return nil, err
		}
		return qdrant.NewPointsSelectorIDs(ids), nil
	case hasFilter:
		f, err := optFilter(o, "filter")
		if err != nil {
			return nil, err
		}
		return qdrant.NewPointsSelectorFilter(f), nil
	}
	if required {
		return nil, formatErr("", "data did not match any variant of untagged enum PointsSelector: expected `points` or `filter`")
	}
	return nil, nil
}

func (h *handler) deletePoints(c *call) ([]byte, error) {
	wp, err := c.writeParams()
	if err != nil {
		return nil, err
	}
	o, err := readObject(c.val, "", "points", "filter", "shard_key")
	if err != nil {
		return nil, err
	}
	req := &qdrant.DeletePoints{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	if req.Points, err = pointsSelector(o, true); err != nil {
		return nil, err
	}
	if req.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	return updateResult(h.cfg.Points.Delete(c.ctx, req, c.opts()...))
}

func (h *handler) updateVectors(c *call) ([]byte, error) {
	wp, err := c.writeParams()
	if err != nil {
		return nil, err
	}
	o, err := readObject(c.val, "", "points", "shard_key", "update_filter")
	if err != nil {
		return nil, err
	}
	pv, err := o.require("points")
	if err != nil {
		return nil, err
	}
	if pv.kind != kindArray {
		return nil, typeErr("points", pv, "a sequence of point vectors")
	}
	req := &qdrant.UpdatePointVectors{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	items := pv.items()
	if len(items) == 0 {
		return nil, validationErr("points", "must specify points to update")
	}
	for i, e := range items {
		po, err := readObject(e, index("points", i), "id", "vector", "vectors")
		if err != nil {
			return nil, err
		}
		idv, err := po.require("id")
		if err != nil {
			return nil, err
		}
		id, err := toPointID(idv, po.sub("id"))
		if err != nil {
			return nil, err
		}
		vv, key, ok, err := po.getAlias("vector", "vectors")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, formatErr(po.path, "missing field `vector`")
		}
		vecs, err := toVectors(vv, po.sub(key))
		if err != nil {
			return nil, err
		}
		req.Points = append(req.Points, &qdrant.PointVectors{Id: id, Vectors: vecs})
	}
	if req.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	if req.UpdateFilter, err = optFilter(o, "update_filter"); err != nil {
		return nil, err
	}
	return updateResult(h.cfg.Points.UpdateVectors(c.ctx, req, c.opts()...))
}

func (h *handler) deleteVectors(c *call) ([]byte, error) {
	wp, err := c.writeParams()
	if err != nil {
		return nil, err
	}
	o, err := readObject(c.val, "", "points", "filter", "vector", "shard_key")
	if err != nil {
		return nil, err
	}
	req := &qdrant.DeletePointVectors{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	if req.PointsSelector, err = pointsSelector(o, true); err != nil {
		return nil, err
	}
	vv, err := o.require("vector")
	if err != nil {
		return nil, err
	}
	names, err := toStrings(vv, "vector")
	if err != nil {
		return nil, err
	}
	req.Vectors = &qdrant.VectorsSelector{Names: names}
	if req.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	return updateResult(h.cfg.Points.DeleteVectors(c.ctx, req, c.opts()...))
}

// setPayloadRequest reads SetPayload {payload, points | filter, key, shard_key}.
func (c *call) setPayloadRequest() (*qdrant.SetPayloadPoints, error) {
	wp, err := c.writeParams()
	if err != nil {
		return nil, err
	}
	o, err := readObject(c.val, "", "payload", "points", "filter", "shard_key", "key")
	if err != nil {
		return nil, err
	}
	req := &qdrant.SetPayloadPoints{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	pv, err := o.require("payload")
	if err != nil {
		return nil, err
	}
	if req.Payload, err = toPayload(pv, "payload"); err != nil {
		return nil, err
	}
	if req.PointsSelector, err = pointsSelector(o, false); err != nil {
		return nil, err
	}
	if req.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	if req.Key, err = o.str("key"); err != nil {
		return nil, err
	}
	return req, nil
}

func (h *handler) setPayload(c *call) ([]byte, error) {
	req, err := c.setPayloadRequest()
	if err != nil {
		return nil, err
	}
	return updateResult(h.cfg.Points.SetPayload(c.ctx, req, c.opts()...))
}

func (h *handler) overwritePayload(c *call) ([]byte, error) {
	req, err := c.setPayloadRequest()
	if err != nil {
		return nil, err
	}
	return updateResult(h.cfg.Points.OverwritePayload(c.ctx, req, c.opts()...))
}

func (h *handler) deletePayload(c *call) ([]byte, error) {
	wp, err := c.writeParams()
	if err != nil {
		return nil, err
	}
	o, err := readObject(c.val, "", "keys", "points", "filter", "shard_key")
	if err != nil {
		return nil, err
	}
	req := &qdrant.DeletePayloadPoints{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	kv, err := o.require("keys")
	if err != nil {
		return nil, err
	}
	if req.Keys, err = toStrings(kv, "keys"); err != nil {
		return nil, err
	}
	if req.PointsSelector, err = pointsSelector(o, false); err != nil {
		return nil, err
	}
	if req.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	return updateResult(h.cfg.Points.DeletePayload(c.ctx, req, c.opts()...))
}

func (h *handler) clearPayload(c *call) ([]byte, error) {
	wp, err := c.writeParams()
	if err != nil {
		return nil, err
	}
	o, err := readObject(c.val, "", "points", "filter", "shard_key")
	if err != nil {
		return nil, err
	}
	req := &qdrant.ClearPayloadPoints{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	if req.Points, err = pointsSelector(o, true); err != nil {
		return nil, err
	}
	if req.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	return updateResult(h.cfg.Points.ClearPayload(c.ctx, req, c.opts()...))
}

// scroll is POST .../points/scroll: payload on by default, limit 10.
func (h *handler) scroll(c *call) ([]byte, error) {
	o, err := readObject(c.val, "", "offset", "limit", "filter", "with_payload", "with_vector", "with_vectors", "order_by", "shard_key")
	if err != nil {
		return nil, err
	}
	req := &qdrant.ScrollPoints{CollectionName: c.collection, Timeout: c.timeout}
	if ov, ok := o.get("offset"); ok {
		if req.Offset, err = toPointID(ov, "offset"); err != nil {
			return nil, err
		}
	}
	limit, err := limitField(o, "limit")
	if err != nil {
		return nil, err
	}
	if limit != nil {
		if *limit > 1<<32-1 {
			return nil, validationErr("limit", "value %d invalid, must be 4294967295 or smaller", *limit)
		}
		l := uint32(*limit)
		req.Limit = &l
	} else {
		l := uint32(defaultQueryLimit)
		req.Limit = &l
	}
	if req.Filter, err = optFilter(o, "filter"); err != nil {
		return nil, err
	}
	if req.WithPayload, req.WithVectors, err = selectors(o, boolPtr(true)); err != nil {
		return nil, err
	}
	if req.WithVectors == nil {
		req.WithVectors = qdrant.NewWithVectorsEnable(false)
	}
	if obv, ok := o.get("order_by"); ok {
		if req.OrderBy, err = toOrderBy(obv, "order_by"); err != nil {
			return nil, err
		}
	}
	if req.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	if req.ReadConsistency, err = c.consistency(); err != nil {
		return nil, err
	}
	res, err := h.cfg.Points.Scroll(c.ctx, req, c.opts()...)
	if err != nil {
		return nil, err
	}
	b := []byte(`{"points":`)
	b = appendRecords(b, res.GetResult(), shape{payload: payloadRequested(req.WithPayload)})
	b = append(b, `,"next_page_offset":`...)
	if res.NextPageOffset != nil {
		b = appendPointID(b, res.GetNextPageOffset())
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}'), nil
}

// count is POST .../points/count: exact by default.
func (h *handler) count(c *call) ([]byte, error) {
	o, err := readObject(c.val, "", "filter", "exact", "shard_key")
	if err != nil {
		return nil, err
	}
	req := &qdrant.CountPoints{CollectionName: c.collection, Timeout: c.timeout}
	if req.Filter, err = optFilter(o, "filter"); err != nil {
		return nil, err
	}
	if req.Exact, err = o.boolean("exact"); err != nil {
		return nil, err
	}
	if req.Exact == nil {
		req.Exact = boolPtr(true)
	}
	if req.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	if req.ReadConsistency, err = c.consistency(); err != nil {
		return nil, err
	}
	res, err := h.cfg.Points.Count(c.ctx, req, c.opts()...)
	if err != nil {
		return nil, err
	}
	b := []byte(`{"count":`)
	b = strconv.AppendUint(b, res.GetResult().GetCount(), 10)
	return append(b, '}'), nil
}

// Index routes.

var fieldTypes = map[string]qdrant.FieldType{
	"keyword":  qdrant.FieldType_FieldTypeKeyword,
	"integer":  qdrant.FieldType_FieldTypeInteger,
	"float":    qdrant.FieldType_FieldTypeFloat,
	"geo":      qdrant.FieldType_FieldTypeGeo,
	"text":     qdrant.FieldType_FieldTypeText,
	"bool":     qdrant.FieldType_FieldTypeBool,
	"datetime": qdrant.FieldType_FieldTypeDatetime,
	"uuid":     qdrant.FieldType_FieldTypeUuid,
}

func (h *handler) createFieldIndex(c *call) ([]byte, error) {
	wp, err := c.writeParams()
	if err != nil {
		return nil, err
	}
	o, err := readObject(c.val, "", "field_name", "field_schema")
	if err != nil {
		return nil, err
	}
	req := &qdrant.CreateFieldIndexCollection{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	if req.FieldName, err = reqString(o, "field_name"); err != nil {
		return nil, err
	}
	if sv, ok := o.get("field_schema"); ok {
		if req.FieldType, req.FieldIndexParams, err = fieldSchema(sv, "field_schema"); err != nil {
			return nil, err
		}
	}
	return updateResult(h.cfg.Points.CreateFieldIndex(c.ctx, req, c.opts()...))
}

// fieldSchema reads PayloadFieldSchema: a type name, or {"type": ..., params}.
func fieldSchema(v value, path string) (*qdrant.FieldType, *qdrant.PayloadIndexParams, error) {
	if v.kind == kindString {
		t, ok := fieldTypes[v.s]
		if !ok {
			return nil, nil, formatErr(path, "unknown variant `%s`, expected one of `keyword`, `integer`, `float`, `geo`, `text`, `bool`, `datetime`, `uuid`", v.s)
		}
		return &t, nil, nil
	}
	if v.kind != kindObject {
		return nil, nil, typeErr(path, v, "a payload schema type or params")
	}
	var typ string
	for _, mb := range v.members {
		if mb.key == "type" && mb.val.kind == kindString {
			typ = mb.val.s
		}
	}
	t, ok := fieldTypes[typ]
	if !ok {
		return nil, nil, formatErr(path, "field schema params need a `type` of `keyword`, `integer`, `float`, `geo`, `text`, `bool`, `datetime` or `uuid`")
	}
	var (
		o   object
		err error
	)
	switch typ {
	case "keyword":
		o, err = readObject(v, path, "type", "is_tenant", "on_disk", "enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		p := &qdrant.KeywordIndexParams{}
		if p.IsTenant, err = o.boolean("is_tenant"); err != nil {
			return nil, nil, err
		}
		if p.OnDisk, err = o.boolean("on_disk"); err != nil {
			return nil, nil, err
		}
		if p.EnableHnsw, err = o.boolean("enable_hnsw"); err != nil {
			return nil, nil, err
		}
		return &t, qdrant.NewPayloadIndexParamsKeyword(p), nil
	case "integer":
		o, err = readObject(v, path, "type", "lookup", "range", "is_principal", "on_disk", "enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		p := &qdrant.IntegerIndexParams{}
		for _, f := range []struct {
			key string
			dst **bool
		}{{"lookup", &p.Lookup}, {"range", &p.Range}, {"is_principal", &p.IsPrincipal}, {"on_disk", &p.OnDisk}, {"enable_hnsw", &p.EnableHnsw}} {
			if *f.dst, err = o.boolean(f.key); err != nil {
				return nil, nil, err
			}
		}
		return &t, qdrant.NewPayloadIndexParamsInt(p), nil
	case "float", "datetime":
		o, err = readObject(v, path, "type", "is_principal", "on_disk", "enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		principal, err := o.boolean("is_principal")
		if err != nil {
			return nil, nil, err
		}
		onDisk, err := o.boolean("on_disk")
		if err != nil {
			return nil, nil, err
		}
		hnsw, err := o.boolean("enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		if typ == "float" {
			return &t, qdrant.NewPayloadIndexParamsFloat(&qdrant.FloatIndexParams{IsPrincipal: principal, OnDisk: onDisk, EnableHnsw: hnsw}), nil
		}
		return &t, qdrant.NewPayloadIndexParamsDatetime(&qdrant.DatetimeIndexParams{IsPrincipal: principal, OnDisk: onDisk, EnableHnsw: hnsw}), nil
	case "bool", "geo":
		o, err = readObject(v, path, "type", "on_disk", "enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		onDisk, err := o.boolean("on_disk")
		if err != nil {
			return nil, nil, err
		}
		hnsw, err := o.boolean("enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		if typ == "bool" {
			return &t, qdrant.NewPayloadIndexParamsBool(&qdrant.BoolIndexParams{OnDisk: onDisk, EnableHnsw: hnsw}), nil
		}
		return &t, qdrant.NewPayloadIndexParamsGeo(&qdrant.GeoIndexParams{OnDisk: onDisk, EnableHnsw: hnsw}), nil
	case "uuid":
		o, err = readObject(v, path, "type", "is_tenant", "on_disk", "enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		p := &qdrant.UuidIndexParams{}
		if p.IsTenant, err = o.boolean("is_tenant"); err != nil {
			return nil, nil, err
		}
		if p.OnDisk, err = o.boolean("on_disk"); err != nil {
			return nil, nil, err
		}
		if p.EnableHnsw, err = o.boolean("enable_hnsw"); err != nil {
			return nil, nil, err
		}
		return &t, qdrant.NewPayloadIndexParamsUUID(p), nil
	}
	// Full-text index parameters (tokenizer, stemmer, stopwords...) are
	// many and version-dependent: not translated.
	return nil, nil, untranslatedErr(path, "text index parameters")
}

func (h *handler) deleteFieldIndex(c *call) ([]byte, error) {
	wp, err := c.writeParams()
	if err != nil {
		return nil, err
	}
	req := &qdrant.DeleteFieldIndexCollection{
		CollectionName: c.collection,
		FieldName:      c.r.PathValue("field_name"),
		Wait:           wp.wait,
		Ordering:       wp.ordering,
		Timeout:        wp.timeout,
	}
	return updateResult(h.cfg.Points.DeleteFieldIndex(c.ctx, req, c.opts()...))
}

// Search and query routes.

func (h *handler) search(c *call) ([]byte, error) {
	req, err := toSearchPoints(c.val, "", c.collection)
	if err != nil {
		return nil, err
	}
	req.Timeout = c.timeout
	if req.ReadConsistency, err = c.consistency(); err != nil {
		return nil, err
	}
	res, err := h.cfg.Points.Search(c.ctx, req, c.opts()...)
	if err != nil {
		return nil, err
	}
	return appendScoredPoints(nil, res.GetResult(), shape{payload: payloadRequested(req.WithPayload)}), nil
}

func (h *handler) searchBatch(c *call) ([]byte, error) {
	items, err := batchItems(c.val)
	if err != nil {
		return nil, err
	}
	req := &qdrant.SearchBatchPoints{CollectionName: c.collection, Timeout: c.timeout}
	if req.ReadConsistency, err = c.consistency(); err != nil {
		return nil, err
	}
	shapes := make([]shape, len(items))
	for i, e := range items {
		s, err := toSearchPoints(e, index("searches", i), c.collection)
		if err != nil {
			return nil, err
		}
		shapes[i] = shape{payload: payloadRequested(s.WithPayload)}
		req.SearchPoints = append(req.SearchPoints, s)
	}
	res, err := h.cfg.Points.SearchBatch(c.ctx, req, c.opts()...)
	if err != nil {
		return nil, err
	}
	b := []byte{'['}
	for i, r := range res.GetResult() {
		if i > 0 {
			b = append(b, ',')
		}
		sh := shape{}
		if i < len(shapes) {
			sh = shapes[i]
		}
		b = appendScoredPoints(b, r.GetResult(), sh)
	}
	return append(b, ']'), nil
}

func (h *handler) searchGroups(c *call) ([]byte, error) {
	req, lookup, err := toSearchGroups(c.val, c.collection)
	if err != nil {
		return nil, err
	}
	req.Timeout = c.timeout
	if req.ReadConsistency, err = c.consistency(); err != nil {
		return nil, err
	}
	res, err := h.cfg.Points.SearchGroups(c.ctx, req, c.opts()...)
	if err != nil {
		return nil, err
	}
	return appendGroups(nil, res.GetResult().GetGroups(), shape{payload: payloadRequested(req.WithPayload)}, lookup), nil
}

func (h *handler) query(c *call) ([]byte, error) {
	req, err := toQueryPoints(c.val, "", c.collection)
	if err != nil {
		return nil, err
	}
	req.Timeout = c.timeout
	if req.ReadConsistency, err = c.consistency(); err != nil {
		return nil, err
	}
	res, err := h.cfg.Points.Query(c.ctx, req, c.opts()...)
	if err != nil {
		return nil, err
	}
	b := []byte(`{"points":`)
	b = appendScoredPoints(b, res.GetResult(), shape{payload: payloadRequested(req.WithPayload)})
	return append(b, '}'), nil
}

func (h *handler) queryBatch(c *call) ([]byte, error) {
	items, err := batchItems(c.val)
	if err != nil {
		return nil, err
	}
	req := &qdrant.QueryBatchPoints{CollectionName: c.collection, Timeout: c.timeout}
	if req.ReadConsistency, err = c.consistency(); err != nil {
		return nil, err
	}
	shapes := make([]shape, len(items))
	for i, e := range items {
		q, err := toQueryPoints(e, index("searches", i), c.collection)
		if err != nil {
			return nil, err
		}
		shapes[i] = shape{payload: payloadRequested(q.WithPayload)}
		req.QueryPoints = append(req.QueryPoints, q)
	}
	res, err := h.cfg.Points.QueryBatch(c.ctx, req, c.opts()...)
	if err != nil {
		return nil, err
	}
	b := []byte{'['}
	for i, r := range res.GetResult() {
		if i > 0 {
			b = append(b, ',')
		}
		sh := shape{}
		if i < len(shapes) {
			sh = shapes[i]
		}
		b = append(b, `{"points":`...)
		b = appendScoredPoints(b, r.GetResult(), sh)
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

func (h *handler) queryGroups(c *call) ([]byte, error) {
	req, lookup, err := toQueryGroups(c.val, c.collection)
	if err != nil {
		return nil, err
	}
	req.Timeout = c.timeout
	if req.ReadConsistency, err = c.consistency(); err != nil {
		return nil, err
	}
	res, err := h.cfg.Points.QueryGroups(c.ctx, req, c.opts()...)
	if err != nil {
		return nil, err
	}
	return appendGroups(nil, res.GetResult().GetGroups(), shape{payload: payloadRequested(req.WithPayload)}, lookup), nil
}
