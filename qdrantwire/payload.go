package qdrantwire

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Payload wire bytes. A reply re-ranked by memrank carries payloads it
// fetched from the upstream unchanged (when the caller asked for whole
// payloads). Encoding them again from their maps, a proto.Size and a
// proto.Marshal per value, was about 150 µs per query of ten 20-key
// payloads. So the ranker keeps, beside each fetched payload's map, the
// payload's bytes as they came (QueryWire), and EncodeScoredWire copies
// them.

// PayloadWires returns, for each point of an encoded QueryResponse (or
// SearchResponse), its payload's map entries as they appear in the point
// (every field 2, tag and length included, in order): bytes that, placed
// in a ScoredPoint, decode to the payload proto.Unmarshal gives for that
// point. Each slice is a copy. It fails when b is not a well-formed
// message; callers decode b with protobuf too and so get protobuf's own
// error for it.
func PayloadWires(b []byte) ([][]byte, error) {
	var wires [][]byte
	err := eachBytesField(b, fieldResult, func(field []byte) error {
		point, _ := protowire.ConsumeBytes(field)
		w, err := pointPayload(point)
		wires = append(wires, w)
		return err
	})
	if err != nil {
		return nil, err
	}
	return wires, nil
}

// pointPayload collects the payload fields of one encoded ScoredPoint into
// a slice of their exact size (the candidate cache counts its length).
func pointPayload(b []byte) ([]byte, error) {
	size := 0
	if err := eachBytesField(b, fieldPointPayload, func(field []byte) error { size += payloadTagSize + len(field); return nil }); err != nil {
		return nil, err
	}
	out := make([]byte, 0, size)
	_ = eachBytesField(b, fieldPointPayload, func(field []byte) error {
		// Re-tagged in the shortest form, as the field may have come in a
		// longer one.
		out = protowire.AppendTag(out, fieldPointPayload, protowire.BytesType)
		out = append(out, field...)
		return nil
	})
	return out, nil
}

// payloadTagSize is the size of the payload field's shortest tag.
var payloadTagSize = protowire.SizeTag(fieldPointPayload)

// eachBytesField calls fn with the value (length and bytes) of each
// occurrence of field num with the bytes wire type in the encoded message
// b; other fields, and num with another wire type (which protobuf keeps as
// unknown), are skipped. It stops at fn's first error.
func eachBytesField(b []byte, num protowire.Number, fn func(field []byte) error) error {
	for len(b) > 0 {
		n0, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(n0, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		if n0 == num && typ == protowire.BytesType {
			if err := fn(b[n : n+m]); err != nil {
				return err
			}
		}
		b = b[n+m:]
	}
	return nil
}

// QueryWire is Query (Points/Query on the same connection, with the same
// answer and errors) that also returns each point's payload as wire bytes
// (PayloadWires), in the points' order.
func (c *Client) QueryWire(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, [][]byte, error) {
	var reply wired
	err := c.GetGrpcClient().Conn().Invoke(ctx, qdrant.Points_Query_FullMethodName, req, &reply, grpc.ForceCodecV2(c.codec))
	if err != nil {
		return nil, nil, fmt.Errorf("qdrantwire: query %s: %w", req.GetCollectionName(), err)
	}
	return reply.resp.GetResult(), reply.wires, nil
}

// wired is the reply QueryWire decodes into.
type wired struct {
	resp  qdrant.QueryResponse
	wires [][]byte
}

// unmarshalWired decodes a reply for QueryWire: protobuf's decoding, and
// the payloads' bytes beside it.
func unmarshalWired(data mem.BufferSlice, w *wired) error {
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	b := buf.ReadOnlyData()
	// proto.Unmarshal copies strings and bytes; PayloadWires copies too:
	// the buffer can go back to the pool.
	if err := proto.Unmarshal(b, &w.resp); err != nil {
		return err
	}
	wires, err := PayloadWires(b)
	if err != nil {
		return err
	}
	if len(wires) != len(w.resp.GetResult()) {
		return fmt.Errorf("qdrantwire: %d payloads for %d points", len(wires), len(w.resp.GetResult()))
	}
	w.wires = wires
	return nil
}
