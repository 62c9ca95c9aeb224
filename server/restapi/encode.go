package restapi

import (
	"slices"
	"strconv"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/qdrantjson"
)

// shape says which optional parts of a point the caller asked for. A
// requested payload is written even when empty ({}), as Qdrant does; an
// unrequested one is left out unless the upstream sent one anyway.
type shape struct {
	payload bool
}

func payloadRequested(sel *qdrant.WithPayloadSelector) bool {
	if sel == nil {
		return false
	}
	switch s := sel.GetSelectorOptions().(type) {
	case *qdrant.WithPayloadSelector_Enable:
		return s.Enable
	case nil:
		return false
	}
	return true
}

func appendFloats(b []byte, fs []float32) []byte {
	b = append(b, '[')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = qdrantjson.AppendFloat32(b, f)
	}
	return append(b, ']')
}

func appendSparse(b []byte, indices []uint32, values []float32) []byte {
	b = append(b, `{"indices":[`...)
	for i, x := range indices {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(x), 10)
	}
	b = append(b, `],"values":`...)
	b = appendFloats(b, values)
	return append(b, '}')
}

// appendVectorOutput writes one vector in REST form: dense [..], sparse
// {"indices","values"}, multi-dense [[..],..]. The deprecated flat fields
// (data / indices / vectors_count) older servers send are understood too.
func appendVectorOutput(b []byte, v *qdrant.VectorOutput) []byte {
	switch x := v.GetVector().(type) {
	case *qdrant.VectorOutput_Dense:
		return appendFloats(b, x.Dense.GetData())
	case *qdrant.VectorOutput_Sparse:
		return appendSparse(b, x.Sparse.GetIndices(), x.Sparse.GetValues())
	case *qdrant.VectorOutput_MultiDense:
		b = append(b, '[')
		for i, d := range x.MultiDense.GetVectors() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendFloats(b, d.GetData())
		}
		return append(b, ']')
	}
	data := v.GetData()                    //nolint:staticcheck // deprecated form, still sent by older servers
	if idx := v.GetIndices(); idx != nil { //nolint:staticcheck
		return appendSparse(b, idx.GetData(), data)
	}
	if n := int(v.GetVectorsCount()); n > 1 && len(data)%n == 0 { //nolint:staticcheck
		dim := len(data) / n
		b = append(b, '[')
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendFloats(b, data[i*dim:(i+1)*dim])
		}
		return append(b, ']')
	}
	return appendFloats(b, data)
}

func appendVectors(b []byte, v *qdrant.VectorsOutput) []byte {
	switch x := v.GetVectorsOptions().(type) {
	case *qdrant.VectorsOutput_Vector:
		return appendVectorOutput(b, x.Vector)
	case *qdrant.VectorsOutput_Vectors:
		m := x.Vectors.GetVectors()
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		slices.Sort(names)
		b = append(b, '{')
		for i, k := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = qdrantjson.AppendString(b, k)
			b = append(b, ':')
			b = appendVectorOutput(b, m[k])
		}
		return append(b, '}')
	}
	return append(b, "{}"...)
}

func appendShardKey(b []byte, k *qdrant.ShardKey) []byte {
	switch x := k.GetKey().(type) {
	case *qdrant.ShardKey_Keyword:
		return qdrantjson.AppendString(b, x.Keyword)
	case *qdrant.ShardKey_Number:
		return strconv.AppendUint(b, x.Number, 10)
	}
	return append(b, "null"...)
}

func appendOrderValue(b []byte, o *qdrant.OrderValue) []byte {
	switch x := o.GetVariant().(type) {
	case *qdrant.OrderValue_Int:
		return strconv.AppendInt(b, x.Int, 10)
	case *qdrant.OrderValue_Float:
		return qdrantjson.AppendFloat64(b, x.Float)
	}
	return append(b, "null"...)
}

// appendPointTail writes the optional members shared by ScoredPoint and
// Record: payload, vector, shard_key, order_value.
func appendPointTail(b []byte, payload map[string]*qdrant.Value, vectors *qdrant.VectorsOutput, shardKey *qdrant.ShardKey, orderValue *qdrant.OrderValue, sh shape) []byte {
	if sh.payload || len(payload) > 0 {
		b = append(b, `,"payload":`...)
		b = qdrantjson.AppendPayload(b, payload)
	}
	if vectors != nil {
		b = append(b, `,"vector":`...)
		b = appendVectors(b, vectors)
	}
	if shardKey != nil {
		b = append(b, `,"shard_key":`...)
		b = appendShardKey(b, shardKey)
	}
	if orderValue != nil {
		b = append(b, `,"order_value":`...)
		b = appendOrderValue(b, orderValue)
	}
	return b
}

// appendScoredPoint writes Qdrant's ScoredPoint: id, version, score (the
// shortest float32 form) and the optional members.
func appendScoredPoint(b []byte, p *qdrant.ScoredPoint, sh shape) []byte {
	b = append(b, `{"id":`...)
	b = qdrantjson.AppendPointID(b, p.GetId())
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, p.GetVersion(), 10)
	b = append(b, `,"score":`...)
	b = qdrantjson.AppendFloat32(b, p.GetScore())
	b = appendPointTail(b, p.GetPayload(), p.GetVectors(), p.GetShardKey(), p.GetOrderValue(), sh)
	return append(b, '}')
}

func appendScoredPoints(b []byte, ps []*qdrant.ScoredPoint, sh shape) []byte {
	b = append(b, '[')
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendScoredPoint(b, p, sh)
	}
	return append(b, ']')
}

// appendRecord writes Qdrant's Record.
func appendRecord(b []byte, p *qdrant.RetrievedPoint, sh shape) []byte {
	b = append(b, `{"id":`...)
	b = qdrantjson.AppendPointID(b, p.GetId())
	b = appendPointTail(b, p.GetPayload(), p.GetVectors(), p.GetShardKey(), p.GetOrderValue(), sh)
	return append(b, '}')
}

func appendRecords(b []byte, ps []*qdrant.RetrievedPoint, sh shape) []byte {
	b = append(b, '[')
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendRecord(b, p, sh)
	}
	return append(b, ']')
}

func appendGroupID(b []byte, id *qdrant.GroupId) []byte {
	switch x := id.GetKind().(type) {
	case *qdrant.GroupId_UnsignedValue:
		return strconv.AppendUint(b, x.UnsignedValue, 10)
	case *qdrant.GroupId_IntegerValue:
		return strconv.AppendInt(b, x.IntegerValue, 10)
	case *qdrant.GroupId_StringValue:
		return qdrantjson.AppendString(b, x.StringValue)
	}
	return append(b, "null"...)
}

// appendGroups writes Qdrant's GroupsResult {"groups":[{"hits","id","lookup"?}]}.
func appendGroups(b []byte, groups []*qdrant.PointGroup, hits, lookup shape) []byte {
	b = append(b, `{"groups":[`...)
	for i, g := range groups {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"hits":`...)
		b = appendScoredPoints(b, g.GetHits(), hits)
		b = append(b, `,"id":`...)
		b = appendGroupID(b, g.GetId())
		if l := g.GetLookup(); l != nil {
			b = append(b, `,"lookup":`...)
			b = appendRecord(b, l, lookup)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendUpdateResult writes {"operation_id":N,"status":"completed"}.
func appendUpdateResult(b []byte, r *qdrant.UpdateResult) []byte {
	b = append(b, '{')
	if r.OperationId != nil {
		b = append(b, `"operation_id":`...)
		b = strconv.AppendUint(b, r.GetOperationId(), 10)
		b = append(b, ',')
	}
	b = append(b, `"status":`...)
	b = qdrantjson.AppendString(b, updateStatus(r.GetStatus()))
	return append(b, '}')
}

func updateStatus(s qdrant.UpdateStatus) string {
	switch s {
	case qdrant.UpdateStatus_Acknowledged:
		return "acknowledged"
	case qdrant.UpdateStatus_Completed:
		return "completed"
	case qdrant.UpdateStatus_WaitTimeout:
		return "wait_timeout"
	case qdrant.UpdateStatus_ClockRejected:
		return "clock_rejected"
	}
	return "acknowledged"
}
