package qdrantwire

import (
	"fmt"
	"math"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// EncodeScored encodes a QueryResponse (or SearchResponse: the two share
// one wire shape, the scored points then the time) of points and seconds,
// without usage. It writes by hand because proto.Marshal walks a payload map
// through reflection, which allocates for every key, twice (sizing, then
// writing): with ten results of a dozen payload keys, a few hundred
// allocations per reply. Here the maps are ranged over directly; the values
// and other sub-messages are still marshalled by proto, into one buffer of
// the exact size. Its output decodes to the message proto.Marshal would
// have written (FuzzEncodeScored).
func EncodeScored(points []*qdrant.ScoredPoint, seconds float64) ([]byte, error) {
	return EncodeScoredWire(points, nil, seconds)
}

// EncodeScoredWire is EncodeScored with payloads given as wire bytes: where
// wires[i] is not nil it must be points[i]'s payload as PayloadWires
// returns it, and is written instead of the map (wires may be shorter than
// points, or nil).
func EncodeScoredWire(points []*qdrant.ScoredPoint, wires [][]byte, seconds float64) ([]byte, error) {
	sizes, total := scoredSizes(points, wires)
	b := make([]byte, 0, total+timeSize(seconds))
	b, err := appendScoredPoints(b, points, wires, sizes)
	if err != nil {
		return nil, err
	}
	return appendTime(b, seconds), nil
}

// EncodeBatchWire encodes a QueryBatchResponse (or SearchBatchResponse:
// the same wire shape) of one BatchResult per results[i], and seconds,
// without usage. A BatchResult holds its points as a QueryResponse does
// (field 1), so each is written as EncodeScoredWire writes a reply's
// points, with wires[i] as its payload bytes (wires may be shorter than
// results, or nil); the whole reply goes into one buffer of its size.
func EncodeBatchWire(results [][]*qdrant.ScoredPoint, wires [][][]byte, seconds float64) ([]byte, error) {
	sizes := make([][]int, len(results))
	bodies := make([]int, len(results))
	total := timeSize(seconds)
	for i, points := range results {
		sizes[i], bodies[i] = scoredSizes(points, at(wires, i))
		total += 1 + protowire.SizeBytes(bodies[i])
	}
	b := make([]byte, 0, total)
	var err error
	for i, points := range results {
		b = protowire.AppendTag(b, fieldResult, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(bodies[i]))
		if b, err = appendScoredPoints(b, points, at(wires, i), sizes[i]); err != nil {
			return nil, err
		}
	}
	return appendTime(b, seconds), nil
}

// scoredSizes sizes each point's message, and the field-1 entries holding
// them all.
func scoredSizes(points []*qdrant.ScoredPoint, wires [][]byte) (sizes []int, total int) {
	sizes = make([]int, len(points))
	for i, p := range points {
		sizes[i] = scoredSize(p, at(wires, i))
		total += 1 + protowire.SizeBytes(sizes[i])
	}
	return sizes, total
}

// appendScoredPoints appends each point as a field-1 entry of the size
// scoredSizes gave it.
func appendScoredPoints(b []byte, points []*qdrant.ScoredPoint, wires [][]byte, sizes []int) ([]byte, error) {
	var err error
	for i, p := range points {
		b = protowire.AppendTag(b, fieldResult, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(sizes[i]))
		start := len(b)
		if b, err = appendScored(b, p, at(wires, i)); err != nil {
			return nil, fmt.Errorf("qdrantwire: encode response: %w", err)
		}
		if len(b)-start != sizes[i] {
			// A length prefix that lies would corrupt the whole reply.
			return nil, fmt.Errorf("qdrantwire: encode response: point %d is %d bytes, sized %d", i, len(b)-start, sizes[i])
		}
	}
	return b, nil
}

// at is s[i], or the zero value past the end of s: payload bytes may be
// given for fewer points or results than there are.
func at[T any](s []T, i int) T {
	if i < len(s) {
		return s[i]
	}
	var zero T
	return zero
}

// timeSize is the size of a reply's time field (absent when +0).
func timeSize(seconds float64) int {
	if math.Float64bits(seconds) != 0 {
		return 1 + 8
	}
	return 0
}

func appendTime(b []byte, seconds float64) []byte {
	if math.Float64bits(seconds) != 0 {
		b = protowire.AppendTag(b, fieldTime, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(seconds))
	}
	return b
}

// messageSize is the size of field holding m (absent when nil).
func messageSize(m proto.Message, present bool) int {
	if !present {
		return 0
	}
	return 1 + protowire.SizeBytes(proto.Size(m))
}

// entrySize is the size of a payload map entry's body.
func entrySize(k string, v *qdrant.Value) int {
	return 1 + protowire.SizeBytes(len(k)) + 1 + protowire.SizeBytes(proto.Size(v))
}

func scoredSize(p *qdrant.ScoredPoint, wire []byte) int {
	if p == nil {
		return 0
	}
	n := messageSize(p.GetId(), p.GetId() != nil)
	if wire != nil {
		n += len(wire)
	} else {
		for k, v := range p.GetPayload() {
			n += 1 + protowire.SizeBytes(entrySize(k, v))
		}
	}
	if math.Float32bits(p.GetScore()) != 0 {
		n += 1 + 4
	}
	if p.GetVersion() != 0 {
		n += 1 + protowire.SizeVarint(p.GetVersion())
	}
	n += messageSize(p.GetVectors(), p.GetVectors() != nil)
	n += messageSize(p.GetShardKey(), p.GetShardKey() != nil)
	n += messageSize(p.GetOrderValue(), p.GetOrderValue() != nil)
	return n + len(p.ProtoReflect().GetUnknown())
}

// appendMessage appends field num holding m.
func appendMessage(b []byte, num protowire.Number, m proto.Message) ([]byte, error) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(proto.Size(m)))
	return proto.MarshalOptions{}.MarshalAppend(b, m)
}

func appendScored(b []byte, p *qdrant.ScoredPoint, wire []byte) ([]byte, error) {
	if p == nil {
		return b, nil
	}
	var err error
	if id := p.GetId(); id != nil {
		if b, err = appendMessage(b, fieldPointID, id); err != nil {
			return nil, err
		}
	}
	if b, err = appendPayload(b, p.GetPayload(), wire); err != nil {
		return nil, err
	}
	if s := math.Float32bits(p.GetScore()); s != 0 {
		b = protowire.AppendTag(b, fieldPointScore, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, s)
	}
	if v := p.GetVersion(); v != 0 {
		b = protowire.AppendTag(b, fieldPointVersion, protowire.VarintType)
		b = protowire.AppendVarint(b, v)
	}
	if v := p.GetVectors(); v != nil {
		if b, err = appendMessage(b, fieldPointVectors, v); err != nil {
			return nil, err
		}
	}
	if v := p.GetShardKey(); v != nil {
		if b, err = appendMessage(b, fieldPointShardKey, v); err != nil {
			return nil, err
		}
	}
	if v := p.GetOrderValue(); v != nil {
		if b, err = appendMessage(b, fieldPointOrderValue, v); err != nil {
			return nil, err
		}
	}
	return append(b, p.ProtoReflect().GetUnknown()...), nil
}

// appendPayload appends a point's payload: wire when not nil, else the map.
func appendPayload(b []byte, payload map[string]*qdrant.Value, wire []byte) ([]byte, error) {
	if wire != nil {
		return append(b, wire...), nil
	}
	// Each value was sized by scoredSize, and is marshalled with that
	// size (UseCachedSize): sizing walks the value as marshalling does.
	// Payload values are not changed once decoded (the candidate cache
	// shares them read-only), so the cached size is the value's; a
	// concurrent sizing of the same value stores the same size.
	cached := proto.MarshalOptions{UseCachedSize: true}
	var err error
	for k, v := range payload {
		vs := cached.Size(v)
		b = protowire.AppendTag(b, fieldPointPayload, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(1+protowire.SizeBytes(len(k))+1+protowire.SizeBytes(vs)))
		b = protowire.AppendTag(b, fieldMapKey, protowire.BytesType)
		b = protowire.AppendString(b, k)
		b = protowire.AppendTag(b, fieldMapValue, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(vs))
		if b, err = cached.MarshalAppend(b, v); err != nil {
			return nil, err
		}
	}
	return b, nil
}
