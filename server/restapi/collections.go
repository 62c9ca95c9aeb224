package restapi

import (
	"slices"
	"strconv"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/qdrantjson"
)

// Collection routes: list, get, create, delete, exists.

func (h *handler) listCollections(c *call) ([]byte, error) {
	res, err := h.cfg.Collections.List(c.ctx, &qdrant.ListCollectionsRequest{}, c.opts()...)
	if err != nil {
		return nil, err
	}
	b := []byte(`{"collections":[`)
	for i, d := range res.GetCollections() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = qdrantjson.AppendString(b, d.GetName())
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}

func (h *handler) collectionExists(c *call) ([]byte, error) {
	res, err := h.cfg.Collections.CollectionExists(c.ctx, &qdrant.CollectionExistsRequest{CollectionName: c.collection}, c.opts()...)
	if err != nil {
		return nil, err
	}
	return append(strconv.AppendBool([]byte(`{"exists":`), res.GetResult().GetExists()), '}'), nil
}

// deleteCollection answers true, or false for a collection that did not
// exist (Qdrant's REST does the same).
func (h *handler) deleteCollection(c *call) ([]byte, error) {
	res, err := h.cfg.Collections.Delete(c.ctx, &qdrant.DeleteCollection{CollectionName: c.collection, Timeout: c.timeout}, c.opts()...)
	if err != nil {
		return nil, err
	}
	return strconv.AppendBool(nil, res.GetResult()), nil
}

func (h *handler) getCollection(c *call) ([]byte, error) {
	res, err := h.cfg.Collections.Get(c.ctx, &qdrant.GetCollectionInfoRequest{CollectionName: c.collection}, c.opts()...)
	if err != nil {
		return nil, err
	}
	return appendCollectionInfo(nil, res.GetResult()), nil
}

var createCollectionFields = []string{"vectors", "shard_number", "sharding_method", "replication_factor", "write_consistency_factor", "on_disk_payload", "payload", "hnsw_config", "wal_config", "optimizers_config", "quantization_config", "sparse_vectors", "strict_mode_config", "metadata"}

func (h *handler) createCollection(c *call) ([]byte, error) {
	req, err := toCreateCollection(c.val, c.collection)
	if err != nil {
		return nil, err
	}
	req.Timeout = c.timeout
	res, err := h.cfg.Collections.Create(c.ctx, req, c.opts()...)
	if err != nil {
		return nil, err
	}
	return strconv.AppendBool(nil, res.GetResult()), nil
}

func toCreateCollection(v qdrantjson.Value, name string) (*qdrant.CreateCollection, error) {
	o, err := qdrantjson.ReadObject(v, "", createCollectionFields...)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"quantization_config", "strict_mode_config", "payload"} {
		if o.Has(k) {
			return nil, qdrantjson.UnsupportedError(k, "`"+k+"`")
		}
	}
	req := &qdrant.CreateCollection{CollectionName: name}
	if vv, ok := o.Get("vectors"); ok {
		if req.VectorsConfig, err = toVectorsConfig(vv, "vectors"); err != nil {
			return nil, err
		}
	}
	if req.ShardNumber, err = o.U32("shard_number"); err != nil {
		return nil, err
	}
	if sv, ok := o.Get("sharding_method"); ok {
		var m qdrant.ShardingMethod
		switch {
		case sv.Kind == qdrantjson.KindString && sv.Text == "auto":
			m = qdrant.ShardingMethod_Auto
		case sv.Kind == qdrantjson.KindString && sv.Text == "custom":
			m = qdrant.ShardingMethod_Custom
		default:
			return nil, qdrantjson.FormatError("sharding_method", "unknown variant %s, expected `auto` or `custom`", sv.Describe())
		}
		req.ShardingMethod = &m
	}
	if req.ReplicationFactor, err = o.U32("replication_factor"); err != nil {
		return nil, err
	}
	if req.WriteConsistencyFactor, err = o.U32("write_consistency_factor"); err != nil {
		return nil, err
	}
	if req.OnDiskPayload, err = o.Bool("on_disk_payload"); err != nil { //nolint:staticcheck // still part of Qdrant's REST body
		return nil, err
	}
	if hv, ok := o.Get("hnsw_config"); ok {
		if req.HnswConfig, err = toHnswConfig(hv, "hnsw_config"); err != nil {
			return nil, err
		}
	}
	if wv, ok := o.Get("wal_config"); ok {
		wo, err := qdrantjson.ReadObject(wv, "wal_config", "wal_capacity_mb", "wal_segments_ahead", "wal_retain_closed")
		if err != nil {
			return nil, err
		}
		w := &qdrant.WalConfigDiff{}
		if w.WalCapacityMb, err = wo.U64("wal_capacity_mb"); err != nil {
			return nil, err
		}
		if w.WalSegmentsAhead, err = wo.U64("wal_segments_ahead"); err != nil {
			return nil, err
		}
		if w.WalRetainClosed, err = wo.U64("wal_retain_closed"); err != nil {
			return nil, err
		}
		req.WalConfig = w
	}
	if ov, ok := o.Get("optimizers_config"); ok {
		if req.OptimizersConfig, err = toOptimizersConfig(ov, "optimizers_config"); err != nil {
			return nil, err
		}
	}
	if sv, ok := o.Get("sparse_vectors"); ok {
		if req.SparseVectorsConfig, err = toSparseVectorsConfig(sv, "sparse_vectors"); err != nil {
			return nil, err
		}
	}
	if mv, ok := o.Get("metadata"); ok {
		if req.Metadata, err = qdrantjson.Payload(mv, "metadata"); err != nil {
			return nil, err
		}
	}
	return req, nil
}

var distances = map[string]qdrant.Distance{
	"Cosine":    qdrant.Distance_Cosine,
	"Euclid":    qdrant.Distance_Euclid,
	"Dot":       qdrant.Distance_Dot,
	"Manhattan": qdrant.Distance_Manhattan,
}

var datatypes = map[string]qdrant.Datatype{
	"float32": qdrant.Datatype_Float32,
	"uint8":   qdrant.Datatype_Uint8,
	"float16": qdrant.Datatype_Float16,
}

// toVectorsConfig reads VectorsConfig: one VectorParams, or a map of them.
func toVectorsConfig(v qdrantjson.Value, path string) (*qdrant.VectorsConfig, error) {
	if v.Kind != qdrantjson.KindObject {
		return nil, qdrantjson.TypeError(path, v, "vector params or a map of named vector params")
	}
	if v.Has("size") || v.Has("distance") {
		p, err := toVectorParams(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewVectorsConfig(p), nil
	}
	m := make(map[string]*qdrant.VectorParams, len(v.Members))
	for _, mb := range v.Members {
		p, err := toVectorParams(mb.Val, qdrantjson.Join(path, mb.Key))
		if err != nil {
			return nil, err
		}
		m[mb.Key] = p
	}
	return qdrant.NewVectorsConfigMap(m), nil
}

func toVectorParams(v qdrantjson.Value, path string) (*qdrant.VectorParams, error) {
	o, err := qdrantjson.ReadObject(v, path, "size", "distance", "hnsw_config", "quantization_config", "on_disk", "memory", "datatype", "multivector_config")
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"quantization_config", "memory"} {
		if o.Has(k) {
			return nil, qdrantjson.UnsupportedError(o.Sub(k), "`"+k+"`")
		}
	}
	p := &qdrant.VectorParams{}
	sv, err := o.Require("size")
	if err != nil {
		return nil, err
	}
	if p.Size, err = qdrantjson.U64(sv, o.Sub("size")); err != nil {
		return nil, err
	}
	dv, err := o.Require("distance")
	if err != nil {
		return nil, err
	}
	d, ok := distances[dv.Text]
	if dv.Kind != qdrantjson.KindString || !ok {
		return nil, qdrantjson.FormatError(o.Sub("distance"), "unknown variant %s, expected one of `Cosine`, `Euclid`, `Dot`, `Manhattan`", dv.Describe())
	}
	p.Distance = d
	if hv, ok := o.Get("hnsw_config"); ok {
		if p.HnswConfig, err = toHnswConfig(hv, o.Sub("hnsw_config")); err != nil {
			return nil, err
		}
	}
	if p.OnDisk, err = o.Bool("on_disk"); err != nil { //nolint:staticcheck // still part of Qdrant's REST body
		return nil, err
	}
	if tv, ok := o.Get("datatype"); ok {
		dt, ok := datatypes[tv.Text]
		if tv.Kind != qdrantjson.KindString || !ok {
			return nil, qdrantjson.FormatError(o.Sub("datatype"), "unknown variant %s, expected one of `float32`, `uint8`, `float16`", tv.Describe())
		}
		p.Datatype = &dt
	}
	if mv, ok := o.Get("multivector_config"); ok {
		mo, err := qdrantjson.ReadObject(mv, o.Sub("multivector_config"), "comparator")
		if err != nil {
			return nil, err
		}
		if cv, _ := mo.Get("comparator"); cv.Kind != qdrantjson.KindString || cv.Text != "max_sim" {
			return nil, qdrantjson.FormatError(mo.Sub("comparator"), "unknown variant %s, expected `max_sim`", cv.Describe())
		}
		p.MultivectorConfig = &qdrant.MultiVectorConfig{Comparator: qdrant.MultiVectorComparator_MaxSim}
	}
	return p, nil
}

func toHnswConfig(v qdrantjson.Value, path string) (*qdrant.HnswConfigDiff, error) {
	o, err := qdrantjson.ReadObject(v, path, "m", "ef_construct", "full_scan_threshold", "max_indexing_threads", "on_disk", "memory", "payload_m", "inline_storage")
	if err != nil {
		return nil, err
	}
	if o.Has("memory") {
		return nil, qdrantjson.UnsupportedError(o.Sub("memory"), "`memory`")
	}
	h := &qdrant.HnswConfigDiff{}
	for _, f := range []struct {
		key string
		dst **uint64
	}{{"m", &h.M}, {"ef_construct", &h.EfConstruct}, {"full_scan_threshold", &h.FullScanThreshold}, {"max_indexing_threads", &h.MaxIndexingThreads}, {"payload_m", &h.PayloadM}} {
		if *f.dst, err = o.U64(f.key); err != nil {
			return nil, err
		}
	}
	if h.OnDisk, err = o.Bool("on_disk"); err != nil { //nolint:staticcheck
		return nil, err
	}
	if h.InlineStorage, err = o.Bool("inline_storage"); err != nil {
		return nil, err
	}
	return h, nil
}

func toOptimizersConfig(v qdrantjson.Value, path string) (*qdrant.OptimizersConfigDiff, error) {
	o, err := qdrantjson.ReadObject(v, path, "deleted_threshold", "vacuum_min_vector_number", "default_segment_number", "max_segment_size", "memmap_threshold", "indexing_threshold", "flush_interval_sec", "max_optimization_threads", "prevent_unoptimized")
	if err != nil {
		return nil, err
	}
	c := &qdrant.OptimizersConfigDiff{}
	if c.DeletedThreshold, err = o.F64("deleted_threshold"); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key string
		dst **uint64
	}{{"vacuum_min_vector_number", &c.VacuumMinVectorNumber}, {"default_segment_number", &c.DefaultSegmentNumber}, {"max_segment_size", &c.MaxSegmentSize}, {"memmap_threshold", &c.MemmapThreshold}, {"indexing_threshold", &c.IndexingThreshold}, {"flush_interval_sec", &c.FlushIntervalSec}} {
		if *f.dst, err = o.U64(f.key); err != nil {
			return nil, err
		}
	}
	if mv, ok := o.Get("max_optimization_threads"); ok {
		if mv.Kind == qdrantjson.KindString && mv.Text == "auto" {
			c.MaxOptimizationThreads = qdrant.NewMaxOptimizationThreadsSetting(qdrant.MaxOptimizationThreads_Auto)
		} else {
			n, err := qdrantjson.U64(mv, o.Sub("max_optimization_threads"))
			if err != nil {
				return nil, err
			}
			c.MaxOptimizationThreads = qdrant.NewMaxOptimizationThreads(n)
		}
	}
	if c.PreventUnoptimized, err = o.Bool("prevent_unoptimized"); err != nil {
		return nil, err
	}
	return c, nil
}

func toSparseVectorsConfig(v qdrantjson.Value, path string) (*qdrant.SparseVectorConfig, error) {
	if v.Kind != qdrantjson.KindObject {
		return nil, qdrantjson.TypeError(path, v, "a map of sparse vector params")
	}
	cfg := &qdrant.SparseVectorConfig{Map: make(map[string]*qdrant.SparseVectorParams, len(v.Members))}
	for _, mb := range v.Members {
		p := qdrantjson.Join(path, mb.Key)
		o, err := qdrantjson.ReadObject(mb.Val, p, "index", "modifier")
		if err != nil {
			return nil, err
		}
		sp := &qdrant.SparseVectorParams{}
		if iv, ok := o.Get("index"); ok {
			io, err := qdrantjson.ReadObject(iv, o.Sub("index"), "full_scan_threshold", "on_disk", "memory", "datatype")
			if err != nil {
				return nil, err
			}
			if io.Has("memory") {
				return nil, qdrantjson.UnsupportedError(io.Sub("memory"), "`memory`")
			}
			ic := &qdrant.SparseIndexConfig{}
			if ic.FullScanThreshold, err = io.U64("full_scan_threshold"); err != nil {
				return nil, err
			}
			if ic.OnDisk, err = io.Bool("on_disk"); err != nil { //nolint:staticcheck
				return nil, err
			}
			if tv, ok := io.Get("datatype"); ok {
				dt, ok := datatypes[tv.Text]
				if tv.Kind != qdrantjson.KindString || !ok {
					return nil, qdrantjson.FormatError(io.Sub("datatype"), "unknown variant %s, expected one of `float32`, `uint8`, `float16`", tv.Describe())
				}
				ic.Datatype = &dt
			}
			sp.Index = ic
		}
		if mv, ok := o.Get("modifier"); ok {
			var m qdrant.Modifier
			switch {
			case mv.Kind == qdrantjson.KindString && mv.Text == "none":
				m = qdrant.Modifier_None
			case mv.Kind == qdrantjson.KindString && mv.Text == "idf":
				m = qdrant.Modifier_Idf
			default:
				return nil, qdrantjson.FormatError(o.Sub("modifier"), "unknown variant %s, expected `none` or `idf`", mv.Describe())
			}
			sp.Modifier = &m
		}
		cfg.Map[mb.Key] = sp
	}
	return cfg, nil
}

// CollectionInfo encoding.

func collectionStatus(s qdrant.CollectionStatus) string {
	switch s {
	case qdrant.CollectionStatus_Yellow:
		return "yellow"
	case qdrant.CollectionStatus_Red:
		return "red"
	case qdrant.CollectionStatus_Grey:
		return "grey"
	}
	return "green"
}

func distanceName(d qdrant.Distance) string {
	for k, v := range distances {
		if v == d {
			return k
		}
	}
	return "Cosine"
}

func datatypeName(d qdrant.Datatype) string {
	for k, v := range datatypes {
		if v == d {
			return k
		}
	}
	return "float32"
}

var payloadSchemaTypes = map[qdrant.PayloadSchemaType]string{
	qdrant.PayloadSchemaType_Keyword:  "keyword",
	qdrant.PayloadSchemaType_Integer:  "integer",
	qdrant.PayloadSchemaType_Float:    "float",
	qdrant.PayloadSchemaType_Geo:      "geo",
	qdrant.PayloadSchemaType_Text:     "text",
	qdrant.PayloadSchemaType_Bool:     "bool",
	qdrant.PayloadSchemaType_Datetime: "datetime",
	qdrant.PayloadSchemaType_Uuid:     "uuid",
}

// jsonObj appends "key":value members with commas.
type jsonObj struct {
	b     []byte
	first bool
}

func newObj(b []byte) *jsonObj { return &jsonObj{b: append(b, '{'), first: true} }

func (o *jsonObj) key(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = qdrantjson.AppendString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *jsonObj) u64(k string, n uint64) { o.key(k); o.b = strconv.AppendUint(o.b, n, 10) }
func (o *jsonObj) optU64(k string, n *uint64) {
	if n != nil {
		o.u64(k, *n)
	}
}
func (o *jsonObj) str(k, s string) { o.key(k); o.b = qdrantjson.AppendString(o.b, s) }
func (o *jsonObj) boolean(k string, v bool) {
	o.key(k)
	o.b = strconv.AppendBool(o.b, v)
}
func (o *jsonObj) optBool(k string, v *bool) {
	if v != nil {
		o.boolean(k, *v)
	}
}
func (o *jsonObj) raw(k string, r []byte) { o.key(k); o.b = append(o.b, r...) }
func (o *jsonObj) end() []byte            { return append(o.b, '}') }

func appendCollectionInfo(b []byte, ci *qdrant.CollectionInfo) []byte {
	o := newObj(b)
	o.str("status", collectionStatus(ci.GetStatus()))
	if os := ci.GetOptimizerStatus(); os == nil || os.GetOk() {
		o.str("optimizer_status", "ok")
	} else {
		o.raw("optimizer_status", qdrantjson.AppendString([]byte(`{"error":`), os.GetError()))
		o.b = append(o.b, '}')
	}
	if ws := ci.GetWarnings(); len(ws) > 0 {
		o.key("warnings")
		o.b = append(o.b, '[')
		for i, w := range ws {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = qdrantjson.AppendString(append(o.b, `{"message":`...), w.GetMessage())
			o.b = append(o.b, '}')
		}
		o.b = append(o.b, ']')
	}
	o.optU64("indexed_vectors_count", ci.IndexedVectorsCount)
	o.optU64("points_count", ci.PointsCount)
	o.u64("segments_count", ci.GetSegmentsCount())
	o.raw("config", appendCollectionConfig(nil, ci.GetConfig()))
	o.key("payload_schema")
	names := make([]string, 0, len(ci.GetPayloadSchema()))
	for k := range ci.GetPayloadSchema() {
		names = append(names, k)
	}
	slices.Sort(names)
	ps := newObj(o.b)
	for _, k := range names {
		info := ci.GetPayloadSchema()[k]
		e := newObj(nil)
		e.str("data_type", payloadSchemaTypes[info.GetDataType()])
		e.u64("points", info.GetPoints())
		ps.raw(k, e.end())
	}
	o.b = ps.end()
	if uq := ci.GetUpdateQueue(); uq != nil {
		q := newObj(nil)
		q.u64("length", uq.GetLength())
		q.optU64("deferred_points", uq.DeferredPoints)
		o.raw("update_queue", q.end())
	}
	return o.end()
}

func appendCollectionConfig(b []byte, cfg *qdrant.CollectionConfig) []byte {
	o := newObj(b)
	p := cfg.GetParams()
	params := newObj(nil)
	if vc := p.GetVectorsConfig(); vc != nil {
		params.raw("vectors", appendVectorsConfig(nil, vc))
	}
	params.u64("shard_number", uint64(p.GetShardNumber()))
	if p.ShardingMethod != nil {
		m := "auto"
		if p.GetShardingMethod() == qdrant.ShardingMethod_Custom {
			m = "custom"
		}
		params.str("sharding_method", m)
	}
	params.u64("replication_factor", uint64(max(p.GetReplicationFactor(), 1)))
	params.u64("write_consistency_factor", uint64(max(p.GetWriteConsistencyFactor(), 1)))
	if p.ReadFanOutFactor != nil {
		params.u64("read_fan_out_factor", uint64(p.GetReadFanOutFactor()))
	}
	params.boolean("on_disk_payload", p.GetOnDiskPayload()) //nolint:staticcheck
	if sv := p.GetSparseVectorsConfig(); sv != nil && len(sv.GetMap()) > 0 {
		params.raw("sparse_vectors", appendSparseConfig(nil, sv))
	}
	o.raw("params", params.end())
	o.raw("hnsw_config", appendHnsw(nil, cfg.GetHnswConfig()))
	oc := cfg.GetOptimizerConfig()
	opt := newObj(nil)
	if oc.DeletedThreshold != nil {
		opt.key("deleted_threshold")
		opt.b = qdrantjson.AppendFloat64(opt.b, oc.GetDeletedThreshold())
	}
	opt.optU64("vacuum_min_vector_number", oc.VacuumMinVectorNumber)
	opt.u64("default_segment_number", oc.GetDefaultSegmentNumber())
	opt.optU64("max_segment_size", oc.MaxSegmentSize)
	opt.optU64("memmap_threshold", oc.MemmapThreshold)
	opt.optU64("indexing_threshold", oc.IndexingThreshold)
	opt.u64("flush_interval_sec", oc.GetFlushIntervalSec())
	if mt := oc.GetMaxOptimizationThreads(); mt != nil {
		if v, ok := mt.GetVariant().(*qdrant.MaxOptimizationThreads_Value); ok {
			opt.u64("max_optimization_threads", v.Value)
		} else {
			opt.raw("max_optimization_threads", []byte("null"))
		}
	}
	opt.optBool("prevent_unoptimized", oc.PreventUnoptimized)
	o.raw("optimizer_config", opt.end())
	if wc := cfg.GetWalConfig(); wc != nil {
		w := newObj(nil)
		w.u64("wal_capacity_mb", wc.GetWalCapacityMb())
		w.u64("wal_segments_ahead", wc.GetWalSegmentsAhead())
		w.optU64("wal_retain_closed", wc.WalRetainClosed)
		o.raw("wal_config", w.end())
	}
	o.raw("quantization_config", appendQuantization(nil, cfg.GetQuantizationConfig()))
	if md := cfg.GetMetadata(); len(md) > 0 {
		o.raw("metadata", qdrantjson.AppendPayload(nil, md))
	}
	return o.end()
}

func appendHnsw(b []byte, h *qdrant.HnswConfigDiff) []byte {
	o := newObj(b)
	o.u64("m", h.GetM())
	o.u64("ef_construct", h.GetEfConstruct())
	o.u64("full_scan_threshold", h.GetFullScanThreshold())
	o.optU64("max_indexing_threads", h.MaxIndexingThreads)
	o.optBool("on_disk", h.OnDisk) //nolint:staticcheck
	o.optU64("payload_m", h.PayloadM)
	o.optBool("inline_storage", h.InlineStorage)
	return o.end()
}

func appendHnswDiff(b []byte, h *qdrant.HnswConfigDiff) []byte {
	o := newObj(b)
	o.optU64("m", h.M)
	o.optU64("ef_construct", h.EfConstruct)
	o.optU64("full_scan_threshold", h.FullScanThreshold)
	o.optU64("max_indexing_threads", h.MaxIndexingThreads)
	o.optBool("on_disk", h.OnDisk) //nolint:staticcheck
	o.optU64("payload_m", h.PayloadM)
	o.optBool("inline_storage", h.InlineStorage)
	return o.end()
}

func appendVectorParams(b []byte, p *qdrant.VectorParams) []byte {
	o := newObj(b)
	o.u64("size", p.GetSize())
	o.str("distance", distanceName(p.GetDistance()))
	if p.HnswConfig != nil {
		o.raw("hnsw_config", appendHnswDiff(nil, p.GetHnswConfig()))
	}
	if p.QuantizationConfig != nil {
		o.raw("quantization_config", appendQuantization(nil, p.GetQuantizationConfig()))
	}
	o.optBool("on_disk", p.OnDisk) //nolint:staticcheck
	if p.Datatype != nil {
		o.str("datatype", datatypeName(p.GetDatatype()))
	}
	if p.MultivectorConfig != nil {
		o.raw("multivector_config", []byte(`{"comparator":"max_sim"}`))
	}
	return o.end()
}

func appendVectorsConfig(b []byte, vc *qdrant.VectorsConfig) []byte {
	if p := vc.GetParams(); p != nil {
		return appendVectorParams(b, p)
	}
	m := vc.GetParamsMap().GetMap()
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	o := newObj(b)
	for _, k := range names {
		o.raw(k, appendVectorParams(nil, m[k]))
	}
	return o.end()
}

func appendSparseConfig(b []byte, sv *qdrant.SparseVectorConfig) []byte {
	m := sv.GetMap()
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	o := newObj(b)
	for _, k := range names {
		sp := m[k]
		e := newObj(nil)
		if ic := sp.GetIndex(); ic != nil {
			i := newObj(nil)
			i.optU64("full_scan_threshold", ic.FullScanThreshold)
			i.optBool("on_disk", ic.OnDisk) //nolint:staticcheck
			if ic.Datatype != nil {
				i.str("datatype", datatypeName(ic.GetDatatype()))
			}
			e.raw("index", i.end())
		}
		if sp.Modifier != nil {
			mod := "none"
			if sp.GetModifier() == qdrant.Modifier_Idf {
				mod = "idf"
			}
			e.str("modifier", mod)
		}
		o.raw(k, e.end())
	}
	return o.end()
}

func appendQuantization(b []byte, q *qdrant.QuantizationConfig) []byte {
	switch x := q.GetQuantization().(type) {
	case *qdrant.QuantizationConfig_Scalar:
		s := newObj(nil)
		s.str("type", "int8")
		if x.Scalar.Quantile != nil {
			s.key("quantile")
			s.b = qdrantjson.AppendFloat32(s.b, x.Scalar.GetQuantile())
		}
		s.optBool("always_ram", x.Scalar.AlwaysRam) //nolint:staticcheck
		return append(append(b, `{"scalar":`...), append(s.end(), '}')...)
	case *qdrant.QuantizationConfig_Product:
		s := newObj(nil)
		s.str("compression", x.Product.GetCompression().String())
		s.optBool("always_ram", x.Product.AlwaysRam) //nolint:staticcheck
		return append(append(b, `{"product":`...), append(s.end(), '}')...)
	case *qdrant.QuantizationConfig_Binary:
		s := newObj(nil)
		s.optBool("always_ram", x.Binary.AlwaysRam) //nolint:staticcheck
		return append(append(b, `{"binary":`...), append(s.end(), '}')...)
	}
	return append(b, "null"...)
}
