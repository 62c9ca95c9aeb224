package restapi

import (
	"strconv"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/qdrantjson"
)

// Point routes: writes, retrieval, scroll, count, payload and index.

func (h *handler) root(c *call) ([]byte, error) {
	rep, err := h.cfg.Qdrant.HealthCheck(c.ctx, &qdrant.HealthCheckRequest{}, c.opts()...)
	if err != nil {
		return nil, err
	}
	b := []byte(`{"title":`)
	b = qdrantjson.AppendString(b, rep.GetTitle())
	b = append(b, `,"version":`...)
	b = qdrantjson.AppendString(b, rep.GetVersion())
	if rep.Commit != nil {
		b = append(b, `,"commit":`...)
		b = qdrantjson.AppendString(b, rep.GetCommit())
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

func toPointStruct(v qdrantjson.Value, path string) (*qdrant.PointStruct, error) {
	o, err := qdrantjson.ReadObject(v, path, pointStructFields...)
	if err != nil {
		return nil, err
	}
	idv, err := o.Require("id")
	if err != nil {
		return nil, err
	}
	p := &qdrant.PointStruct{}
	if p.Id, err = qdrantjson.PointID(idv, o.Sub("id")); err != nil {
		return nil, err
	}
	vv, key, ok, err := o.Alias("vector", "vectors")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, qdrantjson.FormatError(path, "missing field `vector`")
	}
	if p.Vectors, err = toVectors(vv, o.Sub(key)); err != nil {
		return nil, err
	}
	if pv, ok := o.Get("payload"); ok {
		if p.Payload, err = qdrantjson.Payload(pv, o.Sub("payload")); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// toBatchPoints turns the column form {"batch":{ids, vectors, payloads}}
// into point structs.
func toBatchPoints(v qdrantjson.Value, path string) ([]*qdrant.PointStruct, error) {
	o, err := qdrantjson.ReadObject(v, path, "ids", "vectors", "payloads")
	if err != nil {
		return nil, err
	}
	idv, err := o.Require("ids")
	if err != nil {
		return nil, err
	}
	ids, err := qdrantjson.PointIDs(idv, o.Sub("ids"))
	if err != nil {
		return nil, err
	}
	points := make([]*qdrant.PointStruct, len(ids))
	for i, id := range ids {
		points[i] = &qdrant.PointStruct{Id: id}
	}
	vv, err := o.Require("vectors")
	if err != nil {
		return nil, err
	}
	vpath := o.Sub("vectors")
	mismatch := func(p string, n int) error {
		return qdrantjson.FormatError(p, "the number of vectors (%d) does not match the number of ids (%d)", n, len(ids))
	}
	switch vv.Kind {
	case qdrantjson.KindArray:
		items := vv.Items()
		if len(items) != len(ids) {
			return nil, mismatch(vpath, len(items))
		}
		for i, e := range items {
			if points[i].Vectors, err = toVectors(e, qdrantjson.Index(vpath, i)); err != nil {
				return nil, err
			}
			if points[i].Vectors.GetVectors() != nil {
				return nil, qdrantjson.FormatError(qdrantjson.Index(vpath, i), "expected a vector, got a map")
			}
		}
	case qdrantjson.KindObject:
		named := make([]map[string]*qdrant.Vector, len(ids))
		for i := range named {
			named[i] = map[string]*qdrant.Vector{}
		}
		for _, mb := range vv.Members {
			p := qdrantjson.Join(vpath, mb.Key)
			if mb.Val.Kind != qdrantjson.KindArray {
				return nil, qdrantjson.TypeError(p, mb.Val, "a sequence of vectors")
			}
			items := mb.Val.Items()
			if len(items) != len(ids) {
				return nil, mismatch(p, len(items))
			}
			for i, e := range items {
				vec, err := toVector(e, qdrantjson.Index(p, i))
				if err != nil {
					return nil, err
				}
				named[i][mb.Key] = vec
			}
		}
		for i := range points {
			points[i].Vectors = qdrant.NewVectorsMap(named[i])
		}
	default:
		return nil, qdrantjson.TypeError(vpath, vv, "a sequence of vectors or a map of named vector lists")
	}
	if pv, ok := o.Get("payloads"); ok {
		if pv.Kind != qdrantjson.KindArray {
			return nil, qdrantjson.TypeError(o.Sub("payloads"), pv, "a sequence of payloads")
		}
		items := pv.Items()
		if len(items) != len(ids) {
			return nil, qdrantjson.FormatError(o.Sub("payloads"), "the number of payloads (%d) does not match the number of ids (%d)", len(items), len(ids))
		}
		for i, e := range items {
			if e.Kind == qdrantjson.KindNull {
				continue
			}
			if points[i].Payload, err = qdrantjson.Payload(e, qdrantjson.Index(o.Sub("payloads"), i)); err != nil {
				return nil, err
			}
		}
	}
	return points, nil
}

func toUpdateMode(o qdrantjson.Object) (*qdrant.UpdateMode, error) {
	v, ok := o.Get("update_mode")
	if !ok {
		return nil, nil
	}
	var m qdrant.UpdateMode
	switch {
	case v.Kind == qdrantjson.KindString && v.Text == "upsert":
		m = qdrant.UpdateMode_Upsert
	case v.Kind == qdrantjson.KindString && v.Text == "insert_only":
		m = qdrant.UpdateMode_InsertOnly
	case v.Kind == qdrantjson.KindString && v.Text == "update_only":
		m = qdrant.UpdateMode_UpdateOnly
	default:
		return nil, qdrantjson.FormatError(o.Sub("update_mode"), "unknown variant %s, expected one of `upsert`, `insert_only`, `update_only`", v.Describe())
	}
	return &m, nil
}

func (h *handler) upsertPoints(c *call) ([]byte, error) {
	wp, err := c.writeParams()
	if err != nil {
		return nil, err
	}
	req := &qdrant.UpsertPoints{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	if c.val.Kind != qdrantjson.KindObject {
		return nil, qdrantjson.FormatError("", "Invalid PointInsertOperations format")
	}
	switch {
	case c.val.Has("batch"):
		o, err := qdrantjson.ReadObject(c.val, "", "batch", "shard_key", "update_filter", "update_mode")
		if err != nil {
			return nil, err
		}
		if req.Points, err = toBatchPoints(o.Member("batch"), "batch"); err != nil {
			return nil, err
		}
		if err := upsertOptions(o, req); err != nil {
			return nil, err
		}
	case c.val.Has("points"):
		o, err := qdrantjson.ReadObject(c.val, "", "points", "shard_key", "update_filter", "update_mode")
		if err != nil {
			return nil, err
		}
		pv := o.Member("points")
		if pv.Kind != qdrantjson.KindArray {
			return nil, qdrantjson.TypeError("points", pv, "a sequence of points")
		}
		items := pv.Items()
		req.Points = make([]*qdrant.PointStruct, len(items))
		for i, e := range items {
			if req.Points[i], err = toPointStruct(e, qdrantjson.Index("points", i)); err != nil {
				return nil, err
			}
		}
		if err := upsertOptions(o, req); err != nil {
			return nil, err
		}
	default:
		return nil, qdrantjson.FormatError("", "Invalid PointInsertOperations format")
	}
	return updateResult(h.cfg.Points.Upsert(c.ctx, req, c.opts()...))
}

func upsertOptions(o qdrantjson.Object, req *qdrant.UpsertPoints) error {
	var err error
	if req.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return err
	}
	if req.UpdateFilter, err = o.Filter("update_filter"); err != nil {
		return err
	}
	req.UpdateMode, err = toUpdateMode(o)
	return err
}

// retrievePoints is POST /collections/{c}/points: payload off unless asked
// for (Qdrant's retrieve default), vectors off.
func (h *handler) retrievePoints(c *call) ([]byte, error) {
	o, err := qdrantjson.ReadObject(c.val, "", "ids", "with_payload", "with_vector", "with_vectors", "shard_key")
	if err != nil {
		return nil, err
	}
	idv, err := o.Require("ids")
	if err != nil {
		return nil, err
	}
	req := &qdrant.GetPoints{CollectionName: c.collection, Timeout: c.timeout}
	if req.Ids, err = qdrantjson.PointIDs(idv, "ids"); err != nil {
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
	id, ok := qdrantjson.ParsePointID(raw)
	if !ok {
		return nil, qdrantjson.Errorf(qdrantjson.ClassBadInput, "Can not recognize %q as point id", raw)
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
func pointsSelector(o qdrantjson.Object, required bool) (*qdrant.PointsSelector, error) {
	pv, hasPoints := o.Get("points")
	_, hasFilter := o.Get("filter")
	switch {
	case hasPoints && hasFilter:
		return nil, qdrantjson.FormatError("", "either `points` or `filter` may be given, not both")
	case hasPoints:
		ids, err := qdrantjson.PointIDs(pv, "points")
		if err != nil {
			return nil, err
		}
		return qdrant.NewPointsSelectorIDs(ids), nil
	case hasFilter:
		f, err := o.Filter("filter")
		if err != nil {
			return nil, err
		}
		return qdrant.NewPointsSelectorFilter(f), nil
	}
	if required {
		return nil, qdrantjson.FormatError("", "data did not match any variant of untagged enum PointsSelector: expected `points` or `filter`")
	}
	return nil, nil
}

func (h *handler) deletePoints(c *call) ([]byte, error) {
	wp, err := c.writeParams()
	if err != nil {
		return nil, err
	}
	o, err := qdrantjson.ReadObject(c.val, "", "points", "filter", "shard_key")
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
	o, err := qdrantjson.ReadObject(c.val, "", "points", "shard_key", "update_filter")
	if err != nil {
		return nil, err
	}
	pv, err := o.Require("points")
	if err != nil {
		return nil, err
	}
	if pv.Kind != qdrantjson.KindArray {
		return nil, qdrantjson.TypeError("points", pv, "a sequence of point vectors")
	}
	req := &qdrant.UpdatePointVectors{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	items := pv.Items()
	if len(items) == 0 {
		return nil, qdrantjson.ValidationError("points", "must specify points to update")
	}
	for i, e := range items {
		po, err := qdrantjson.ReadObject(e, qdrantjson.Index("points", i), "id", "vector", "vectors")
		if err != nil {
			return nil, err
		}
		idv, err := po.Require("id")
		if err != nil {
			return nil, err
		}
		id, err := qdrantjson.PointID(idv, po.Sub("id"))
		if err != nil {
			return nil, err
		}
		vv, key, ok, err := po.Alias("vector", "vectors")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, qdrantjson.FormatError(po.Path, "missing field `vector`")
		}
		vecs, err := toVectors(vv, po.Sub(key))
		if err != nil {
			return nil, err
		}
		req.Points = append(req.Points, &qdrant.PointVectors{Id: id, Vectors: vecs})
	}
	if req.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	if req.UpdateFilter, err = o.Filter("update_filter"); err != nil {
		return nil, err
	}
	return updateResult(h.cfg.Points.UpdateVectors(c.ctx, req, c.opts()...))
}

func (h *handler) deleteVectors(c *call) ([]byte, error) {
	wp, err := c.writeParams()
	if err != nil {
		return nil, err
	}
	o, err := qdrantjson.ReadObject(c.val, "", "points", "filter", "vector", "shard_key")
	if err != nil {
		return nil, err
	}
	req := &qdrant.DeletePointVectors{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	if req.PointsSelector, err = pointsSelector(o, true); err != nil {
		return nil, err
	}
	vv, err := o.Require("vector")
	if err != nil {
		return nil, err
	}
	names, err := qdrantjson.Strings(vv, "vector")
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
	o, err := qdrantjson.ReadObject(c.val, "", "payload", "points", "filter", "shard_key", "key")
	if err != nil {
		return nil, err
	}
	req := &qdrant.SetPayloadPoints{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	pv, err := o.Require("payload")
	if err != nil {
		return nil, err
	}
	if req.Payload, err = qdrantjson.Payload(pv, "payload"); err != nil {
		return nil, err
	}
	if req.PointsSelector, err = pointsSelector(o, false); err != nil {
		return nil, err
	}
	if req.ShardKeySelector, err = optShardKey(o, "shard_key"); err != nil {
		return nil, err
	}
	if req.Key, err = o.Str("key"); err != nil {
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
	o, err := qdrantjson.ReadObject(c.val, "", "keys", "points", "filter", "shard_key")
	if err != nil {
		return nil, err
	}
	req := &qdrant.DeletePayloadPoints{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	kv, err := o.Require("keys")
	if err != nil {
		return nil, err
	}
	if req.Keys, err = qdrantjson.Strings(kv, "keys"); err != nil {
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
	o, err := qdrantjson.ReadObject(c.val, "", "points", "filter", "shard_key")
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
	o, err := qdrantjson.ReadObject(c.val, "", "offset", "limit", "filter", "with_payload", "with_vector", "with_vectors", "order_by", "shard_key")
	if err != nil {
		return nil, err
	}
	req := &qdrant.ScrollPoints{CollectionName: c.collection, Timeout: c.timeout}
	if ov, ok := o.Get("offset"); ok {
		if req.Offset, err = qdrantjson.PointID(ov, "offset"); err != nil {
			return nil, err
		}
	}
	limit, err := limitField(o, "limit")
	if err != nil {
		return nil, err
	}
	if limit != nil {
		if *limit > 1<<32-1 {
			return nil, qdrantjson.ValidationError("limit", "value %d invalid, must be 4294967295 or smaller", *limit)
		}
		l := uint32(*limit)
		req.Limit = &l
	} else {
		l := uint32(defaultQueryLimit)
		req.Limit = &l
	}
	if req.Filter, err = o.Filter("filter"); err != nil {
		return nil, err
	}
	if req.WithPayload, req.WithVectors, err = selectors(o, boolPtr(true)); err != nil {
		return nil, err
	}
	if req.WithVectors == nil {
		req.WithVectors = qdrant.NewWithVectorsEnable(false)
	}
	if obv, ok := o.Get("order_by"); ok {
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
		b = qdrantjson.AppendPointID(b, res.GetNextPageOffset())
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}'), nil
}

// count is POST .../points/count: exact by default.
func (h *handler) count(c *call) ([]byte, error) {
	o, err := qdrantjson.ReadObject(c.val, "", "filter", "exact", "shard_key")
	if err != nil {
		return nil, err
	}
	req := &qdrant.CountPoints{CollectionName: c.collection, Timeout: c.timeout}
	if req.Filter, err = o.Filter("filter"); err != nil {
		return nil, err
	}
	if req.Exact, err = o.Bool("exact"); err != nil {
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
	o, err := qdrantjson.ReadObject(c.val, "", "field_name", "field_schema")
	if err != nil {
		return nil, err
	}
	req := &qdrant.CreateFieldIndexCollection{CollectionName: c.collection, Wait: wp.wait, Ordering: wp.ordering, Timeout: wp.timeout}
	if req.FieldName, err = o.RequireString("field_name"); err != nil {
		return nil, err
	}
	if sv, ok := o.Get("field_schema"); ok {
		if req.FieldType, req.FieldIndexParams, err = fieldSchema(sv, "field_schema"); err != nil {
			return nil, err
		}
	}
	return updateResult(h.cfg.Points.CreateFieldIndex(c.ctx, req, c.opts()...))
}

// fieldSchema reads PayloadFieldSchema: a type name, or {"type": ..., params}.
func fieldSchema(v qdrantjson.Value, path string) (*qdrant.FieldType, *qdrant.PayloadIndexParams, error) {
	if v.Kind == qdrantjson.KindString {
		t, ok := fieldTypes[v.Text]
		if !ok {
			return nil, nil, qdrantjson.FormatError(path, "unknown variant `%s`, expected one of `keyword`, `integer`, `float`, `geo`, `text`, `bool`, `datetime`, `uuid`", v.Text)
		}
		return &t, nil, nil
	}
	if v.Kind != qdrantjson.KindObject {
		return nil, nil, qdrantjson.TypeError(path, v, "a payload schema type or params")
	}
	var typ string
	for _, mb := range v.Members {
		if mb.Key == "type" && mb.Val.Kind == qdrantjson.KindString {
			typ = mb.Val.Text
		}
	}
	t, ok := fieldTypes[typ]
	if !ok {
		return nil, nil, qdrantjson.FormatError(path, "field schema params need a `type` of `keyword`, `integer`, `float`, `geo`, `text`, `bool`, `datetime` or `uuid`")
	}
	var (
		o   qdrantjson.Object
		err error
	)
	switch typ {
	case "keyword":
		o, err = qdrantjson.ReadObject(v, path, "type", "is_tenant", "on_disk", "enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		p := &qdrant.KeywordIndexParams{}
		if p.IsTenant, err = o.Bool("is_tenant"); err != nil {
			return nil, nil, err
		}
		if p.OnDisk, err = o.Bool("on_disk"); err != nil {
			return nil, nil, err
		}
		if p.EnableHnsw, err = o.Bool("enable_hnsw"); err != nil {
			return nil, nil, err
		}
		return &t, qdrant.NewPayloadIndexParamsKeyword(p), nil
	case "integer":
		o, err = qdrantjson.ReadObject(v, path, "type", "lookup", "range", "is_principal", "on_disk", "enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		p := &qdrant.IntegerIndexParams{}
		for _, f := range []struct {
			key string
			dst **bool
		}{{"lookup", &p.Lookup}, {"range", &p.Range}, {"is_principal", &p.IsPrincipal}, {"on_disk", &p.OnDisk}, {"enable_hnsw", &p.EnableHnsw}} {
			if *f.dst, err = o.Bool(f.key); err != nil {
				return nil, nil, err
			}
		}
		return &t, qdrant.NewPayloadIndexParamsInt(p), nil
	case "float", "datetime":
		o, err = qdrantjson.ReadObject(v, path, "type", "is_principal", "on_disk", "enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		principal, err := o.Bool("is_principal")
		if err != nil {
			return nil, nil, err
		}
		onDisk, err := o.Bool("on_disk")
		if err != nil {
			return nil, nil, err
		}
		hnsw, err := o.Bool("enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		if typ == "float" {
			return &t, qdrant.NewPayloadIndexParamsFloat(&qdrant.FloatIndexParams{IsPrincipal: principal, OnDisk: onDisk, EnableHnsw: hnsw}), nil
		}
		return &t, qdrant.NewPayloadIndexParamsDatetime(&qdrant.DatetimeIndexParams{IsPrincipal: principal, OnDisk: onDisk, EnableHnsw: hnsw}), nil
	case "bool", "geo":
		o, err = qdrantjson.ReadObject(v, path, "type", "on_disk", "enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		onDisk, err := o.Bool("on_disk")
		if err != nil {
			return nil, nil, err
		}
		hnsw, err := o.Bool("enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		if typ == "bool" {
			return &t, qdrant.NewPayloadIndexParamsBool(&qdrant.BoolIndexParams{OnDisk: onDisk, EnableHnsw: hnsw}), nil
		}
		return &t, qdrant.NewPayloadIndexParamsGeo(&qdrant.GeoIndexParams{OnDisk: onDisk, EnableHnsw: hnsw}), nil
	case "uuid":
		o, err = qdrantjson.ReadObject(v, path, "type", "is_tenant", "on_disk", "enable_hnsw")
		if err != nil {
			return nil, nil, err
		}
		p := &qdrant.UuidIndexParams{}
		if p.IsTenant, err = o.Bool("is_tenant"); err != nil {
			return nil, nil, err
		}
		if p.OnDisk, err = o.Bool("on_disk"); err != nil {
			return nil, nil, err
		}
		if p.EnableHnsw, err = o.Bool("enable_hnsw"); err != nil {
			return nil, nil, err
		}
		return &t, qdrant.NewPayloadIndexParamsUUID(p), nil
	}
	// Full-text index parameters (tokenizer, stemmer, stopwords...) are
	// many and version-dependent: not translated.
	return nil, nil, qdrantjson.UnsupportedError(path, "text index parameters")
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
		s, err := toSearchPoints(e, qdrantjson.Index("searches", i), c.collection)
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
		q, err := toQueryPoints(e, qdrantjson.Index("searches", i), c.collection)
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
