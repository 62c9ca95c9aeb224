// Package qdrantwire reads and writes Qdrant's gRPC replies on the hot path
// by hand, where protobuf's generic code costs more than the reply's shape
// needs.
//
// Reading: the listing the ranker asks for when its candidate cache holds
// the payloads and vectors (ids, scores and versions only, forty points or
// so per query). go-client decodes each point into four heap objects through
// protobuf's table-driven decoder; DecodeListing reads the same bytes in one
// pass into three arrays. Anything it does not expect (a payload, vectors, a
// shard key, an unknown field, a malformed byte) sends the whole reply to
// protobuf instead, so its answer is always the one proto.Unmarshal gives
// (FuzzDecodeListing).
//
// Reading, too: the fetch of the cache's misses (QueryWire), decoded by
// protobuf, with each point's payload fields kept as bytes (PayloadWires).
//
// Writing: the gRPC front's Query and Search replies (EncodeScored), whose
// payload maps proto.Marshal would walk through reflection, and which copy
// the payloads' bytes where the ranker has them (EncodeScoredWire;
// FuzzEncodeScored covers both); its QueryBatch and SearchBatch replies
// the same way (EncodeBatchWire, FuzzEncodeBatch).
package qdrantwire

import (
	"math"
	"unicode/utf8"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Field numbers of QueryResponse (and SearchResponse), ScoredPoint, a
// payload map's entries and PointId (Qdrant's points.proto and
// common.proto).
const (
	fieldResult = 1
	fieldTime   = 2

	fieldPointID         = 1
	fieldPointPayload    = 2
	fieldPointScore      = 3
	fieldPointVersion    = 5
	fieldPointVectors    = 6
	fieldPointShardKey   = 7
	fieldPointOrderValue = 8

	fieldMapKey   = 1
	fieldMapValue = 2

	fieldIDNum  = 1
	fieldIDUUID = 2
)

// DecodeListing decodes a QueryResponse (or a SearchResponse, the same
// shape) and returns its points, as proto.Unmarshal followed by GetResult
// would.
func DecodeListing(b []byte) ([]*qdrant.ScoredPoint, error) {
	if points, ok := decodeListing(b); ok {
		return points, nil
	}
	var resp qdrant.QueryResponse
	if err := proto.Unmarshal(b, &resp); err != nil {
		return nil, err
	}
	return resp.GetResult(), nil
}

// decodeListing is the fast path: ok is false for any reply it does not
// read exactly as protobuf would, and then nothing it built is used.
func decodeListing(b []byte) (_ []*qdrant.ScoredPoint, ok bool) {
	n, ok := countResults(b)
	if !ok {
		return nil, false
	}
	if n == 0 {
		return nil, true // proto leaves Result nil
	}
	// One array per type: the points, their ids and the ids' oneof
	// wrappers. The caller holds pointers into them, so they live as long
	// as any point does, which is as long as the reply that carries them.
	points := make([]qdrant.ScoredPoint, n)
	out := make([]*qdrant.ScoredPoint, n)
	a := ids{ids: make([]qdrant.PointId, n)}
	for i := 0; len(b) > 0; {
		num, _, l := protowire.ConsumeTag(b) // countResults checked the tags
		b = b[l:]
		if num == fieldTime {
			_, l = protowire.ConsumeFixed64(b)
			b = b[l:]
			continue
		}
		v, l := protowire.ConsumeBytes(b)
		b = b[l:]
		if !decodePoint(v, &points[i], &a, i) {
			return nil, false
		}
		out[i] = &points[i]
		i++
	}
	return out, true
}

// ids holds a listing's point ids and their oneof wrappers, an array of
// each; a listing has numbers or UUIDs (rarely both), so the wrappers'
// arrays are made on first use.
type ids struct {
	ids   []qdrant.PointId
	nums  []qdrant.PointId_Num
	uuids []qdrant.PointId_Uuid
}

func (a *ids) num(i int) *qdrant.PointId_Num {
	if a.nums == nil {
		a.nums = make([]qdrant.PointId_Num, len(a.ids))
	}
	return &a.nums[i]
}

func (a *ids) uuid(i int) *qdrant.PointId_Uuid {
	if a.uuids == nil {
		a.uuids = make([]qdrant.PointId_Uuid, len(a.ids))
	}
	return &a.uuids[i]
}

// countResults checks the reply's top level and counts its points: only
// points (length-delimited) and the time (a fixed64) are read here; the
// usage message and anything unknown go to protobuf.
func countResults(b []byte) (int, bool) {
	n := 0
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return 0, false
		}
		b = b[l:]
		switch {
		case num == fieldResult && typ == protowire.BytesType:
			_, l = protowire.ConsumeBytes(b)
			n++
		case num == fieldTime && typ == protowire.Fixed64Type:
			_, l = protowire.ConsumeFixed64(b)
		default:
			return 0, false
		}
		if l < 0 {
			return 0, false
		}
		b = b[l:]
	}
	return n, true
}

// decodePoint reads one ScoredPoint of id, score and version. A second id
// is left to protobuf, which merges the two messages.
func decodePoint(b []byte, p *qdrant.ScoredPoint, a *ids, i int) bool {
	seenID := false
	for len(b) > 0 {
		f, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return false
		}
		b = b[l:]
		switch {
		case f == fieldPointID && typ == protowire.BytesType && !seenID:
			v, l := protowire.ConsumeBytes(b)
			if l < 0 || !decodeID(v, a, i) {
				return false
			}
			b = b[l:]
			p.Id, seenID = &a.ids[i], true
		case f == fieldPointScore && typ == protowire.Fixed32Type:
			v, l := protowire.ConsumeFixed32(b)
			if l < 0 {
				return false
			}
			b = b[l:]
			p.Score = math.Float32frombits(v)
		case f == fieldPointVersion && typ == protowire.VarintType:
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return false
			}
			b = b[l:]
			p.Version = v
		default:
			return false
		}
	}
	return true
}

// decodeID reads a PointId; as in protobuf, the oneof member read last
// wins. A UUID that is not UTF-8 is protobuf's error to report.
func decodeID(b []byte, a *ids, i int) bool {
	id := &a.ids[i]
	for len(b) > 0 {
		f, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return false
		}
		b = b[l:]
		switch {
		case f == fieldIDNum && typ == protowire.VarintType:
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return false
			}
			b = b[l:]
			w := a.num(i)
			w.Num = v
			id.PointIdOptions = w
		case f == fieldIDUUID && typ == protowire.BytesType:
			v, l := protowire.ConsumeBytes(b)
			if l < 0 || !utf8.Valid(v) {
				return false
			}
			b = b[l:]
			w := a.uuid(i)
			w.Uuid = string(v)
			id.PointIdOptions = w
		default:
			return false
		}
	}
	return true
}
