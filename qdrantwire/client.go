package qdrantwire

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
)

// Client is go-client's client with QueryListing and QueryWire added: the
// rank package finds them by type assertions on its source.
type Client struct {
	*qdrant.Client
	codec listingCodec
}

// NewClient wraps c. Listings go over c's own connection, with its
// interceptors (credentials, rate-limit errors) and telemetry.
func NewClient(c *qdrant.Client) *Client {
	return &Client{Client: c, codec: listingCodec{base: encoding.GetCodecV2(proto.Name)}}
}

// QueryListing is Query for a request that asks for neither payloads nor
// vectors: the same call (Points/Query), the same answer and the same
// errors, its reply decoded by DecodeListing.
func (c *Client) QueryListing(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	var reply listing
	err := c.GetGrpcClient().Conn().Invoke(ctx, qdrant.Points_Query_FullMethodName, req, &reply, grpc.ForceCodecV2(c.codec))
	if err != nil {
		return nil, fmt.Errorf("qdrantwire: query %s: %w", req.GetCollectionName(), err)
	}
	return reply.points, nil
}

// listing is the reply QueryListing decodes into.
type listing struct{ points []*qdrant.ScoredPoint }

// listingCodec is gRPC's proto codec, except that it decodes a listing
// with DecodeListing and keeps a wired reply's payload bytes.
type listingCodec struct{ base encoding.CodecV2 }

var _ encoding.CodecV2 = listingCodec{}

func (c listingCodec) Marshal(v any) (mem.BufferSlice, error) { return c.base.Marshal(v) }

func (c listingCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if w, ok := v.(*wired); ok {
		return unmarshalWired(data, w)
	}
	l, ok := v.(*listing)
	if !ok {
		return c.base.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	// DecodeListing copies what it keeps (UUIDs become strings), so the
	// buffer can go back to the pool.
	points, err := DecodeListing(buf.ReadOnlyData())
	if err != nil {
		return err
	}
	l.points = points
	return nil
}

// Name is empty: a forced codec's name becomes the content-subtype, and
// go-client's own calls send plain application/grpc, not
// application/grpc+proto; a strict gateway in between sees the same
// content-type on both.
func (c listingCodec) Name() string { return "" }
