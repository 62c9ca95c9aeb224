package store

import (
	"context"

	"google.golang.org/protobuf/encoding/protowire"
)

// Payloads in gRPC replies. A point's payload is stored as an encoded
// qdrant.Struct: its map entries in field 1. The payload of a ScoredPoint
// or a RetrievedPoint is the same map in field 2. So a reply that carries
// whole payloads does not need to decode each into a map of protobuf
// values and marshal it again (two reflection passes over every key, about
// 20 µs per point of a dozen keys): it copies the stored entries, re-tags
// them as field 2 and hands them to the point as unknown fields, which
// protobuf marshals verbatim and every decoder reads as the payload.
//
// This only works where the point is marshalled, so only the gRPC server
// asks for it (forWire); engine callers get decoded maps as before. Only the
// entries' framing is checked: what is inside them is what the store wrote
// through proto.Marshal (which checks UTF-8), so a payload that fails to
// decode means a damaged file, and the client then fails to decode the
// reply where the server would have answered Internal.

// wireKey marks a context whose results the gRPC server marshals.
type wireKey struct{}

// forWire marks ctx: the results of reads made with it are marshalled into
// a gRPC reply (server interceptors aside, see NewServer).
func forWire(ctx context.Context) context.Context { return context.WithValue(ctx, wireKey{}, true) }

// wireReply reports whether ctx was marked by forWire.
func wireReply(ctx context.Context) bool { v, _ := ctx.Value(wireKey{}).(bool); return v }

// Field numbers of the two messages.
const (
	structFieldsField = 1 // qdrant.Struct.fields
	pointPayloadField = 2 // qdrant.ScoredPoint.payload and qdrant.RetrievedPoint.payload
)

// wirePayload returns the stored payload b (an encoded qdrant.Struct) as
// payload entries of a result point, in a new slice (b may be bbolt's
// memory map, which outlives no read transaction). It returns nil when b
// holds anything but map entries in field 1, so that the caller decodes it
// instead; an empty payload is an empty, non-nil slice.
func wirePayload(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n != 1 || num != structFieldsField || typ != protowire.BytesType {
			return nil
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil
		}
		out = protowire.AppendTag(out, pointPayloadField, protowire.BytesType)
		out = append(out, b[n:n+m]...)
		b = b[n+m:]
	}
	return out
}
