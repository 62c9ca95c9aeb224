package grpcfront

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
)

// frame is one gRPC message as raw protobuf bytes: what the front receives
// and forwards without decoding it.
type frame struct{ b []byte }

// rawCodec passes frames through untouched and encodes anything else with
// grpc's proto codec, so typed messages still work on a connection or
// server that forces it. Its name is "proto" because grpc-go sends a forced
// codec's name as the content-subtype: anything else would reach Qdrant as
// application/grpc+<name>. It is set per server (ForceServerCodecV2) and
// per call or connection (ForceCodecV2), never registered globally.
type rawCodec struct{}

var _ encoding.CodecV2 = rawCodec{}

// protoCodec is grpc's registered proto codec (always present: package
// grpc imports it).
var protoCodec = encoding.GetCodecV2(proto.Name)

func (rawCodec) Name() string { return proto.Name }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	if f, ok := v.(*frame); ok {
		return mem.BufferSlice{mem.SliceBuffer(f.b)}, nil
	}
	if protoCodec == nil {
		return nil, fmt.Errorf("grpcfront: cannot marshal %T: no proto codec", v)
	}
	return protoCodec.Marshal(v)
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if f, ok := v.(*frame); ok {
		f.b = data.Materialize()
		return nil
	}
	if protoCodec == nil {
		return fmt.Errorf("grpcfront: cannot unmarshal %T: no proto codec", v)
	}
	return protoCodec.Unmarshal(data, v)
}
