package grpcfront

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/tenancy"
)

// rawInvoke sends bytes as a request, as a client with a broken encoder
// would, and returns the status.
func rawInvoke(ctx context.Context, conn *grpc.ClientConn, method string, b []byte) error {
	var out frame
	return conn.Invoke(ctx, method, &frame{b: b}, &out, grpc.ForceCodecV2(rawCodec{}))
}

// invalidUTF8Query is a Query whose collection name is not UTF-8 (Go's
// encoder refuses to write one, so it is assembled by hand).
func invalidUTF8Query() []byte {
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	b = protowire.AppendString(b, "mem\xff\xfe")
	limit, _ := proto.Marshal(&qdrant.QueryPoints{Limit: qdrant.PtrOf(uint64(3))})
	return append(b, limit...)
}

// memFixture loads a 4-dimensional cosine collection "mem" of 30 points.
func memFixture(t testing.TB, points qdrant.PointsClient, colls qdrant.CollectionsClient) {
	t.Helper()
	ctx := context.Background()
	if _, err := colls.Create(ctx, &qdrant.CreateCollection{CollectionName: "mem",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 4, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	var pts []*qdrant.PointStruct
	for i := range 30 {
		f := float32(i)
		pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i + 1)), Vectors: qdrant.NewVectors(1, f/30, 1-f/30, f/60),
			Payload: qdrant.NewValueMap(map[string]any{"text": "memory " + strings.Repeat("x", i), "user_id": "alice"})})
	}
	if _, err := points.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "mem", Wait: qdrant.PtrOf(true), Points: pts}); err != nil {
		t.Fatal(err)
	}
}

// Bad input gets the status the store (which answers as Qdrant does) gives,
// through the ranker's path as through the forwarded one, and nothing
// panics.
func TestBadInput(t *testing.T) {
	_, addr := openStore(t)
	direct := client(t, addr, qdrant.Config{})
	memFixture(t, direct.GetPointsClient(), direct.GetCollectionsClient())
	front := startFront(t, addr, Config{ranker: &fakeRanker{src: sourceFor(t, addr)}})
	proxied := client(t, front, qdrant.Config{})
	directConn, frontConn := dial(t, addr), dial(t, front)
	ctx := testCtx(t)

	vec := func(n int) []float32 { return slices.Repeat([]float32{0.5}, n) }
	cases := []struct {
		name string
		call func(c *qdrant.Client, conn *grpc.ClientConn) error
	}{
		{"query: wrong dimension", func(c *qdrant.Client, _ *grpc.ClientConn) error {
			_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(vec(3))})
			return err
		}},
		{"search: wrong dimension", func(c *qdrant.Client, _ *grpc.ClientConn) error {
			_, err := c.GetPointsClient().Search(ctx, &qdrant.SearchPoints{CollectionName: "mem", Vector: vec(5), Limit: 3})
			return err
		}},
		{"query: limit 0", func(c *qdrant.Client, _ *grpc.ClientConn) error {
			_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(vec(4)), Limit: qdrant.PtrOf(uint64(0))})
			return err
		}},
		{"search: limit 0", func(c *qdrant.Client, _ *grpc.ClientConn) error {
			_, err := c.GetPointsClient().Search(ctx, &qdrant.SearchPoints{CollectionName: "mem", Vector: vec(4), Limit: 0})
			return err
		}},
		{"query: unknown collection", func(c *qdrant.Client, _ *grpc.ClientConn) error {
			_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "nope", Query: qdrant.NewQueryDense(vec(4))})
			return err
		}},
		{"search batch: unknown collection", func(c *qdrant.Client, _ *grpc.ClientConn) error {
			_, err := c.GetPointsClient().SearchBatch(ctx, &qdrant.SearchBatchPoints{CollectionName: "nope", SearchPoints: []*qdrant.SearchPoints{{CollectionName: "nope", Vector: vec(4), Limit: 1}}})
			return err
		}},
		{"search batch: sub-request without a collection name", func(c *qdrant.Client, _ *grpc.ClientConn) error {
			_, err := c.GetPointsClient().SearchBatch(ctx, &qdrant.SearchBatchPoints{CollectionName: "mem", SearchPoints: []*qdrant.SearchPoints{{CollectionName: "mem", Vector: vec(4), Limit: 1}, {Vector: vec(4), Limit: 1}}})
			return err
		}},
		{"query batch: one bad query", func(c *qdrant.Client, _ *grpc.ClientConn) error {
			_, err := c.QueryBatch(ctx, &qdrant.QueryBatchPoints{CollectionName: "mem", QueryPoints: []*qdrant.QueryPoints{
				{CollectionName: "mem", Query: qdrant.NewQueryDense(vec(4))},
				{CollectionName: "mem", Query: qdrant.NewQueryDense(vec(2))},
			}})
			return err
		}},
		{"raw: malformed bytes to Query", func(_ *qdrant.Client, conn *grpc.ClientConn) error {
			return rawInvoke(ctx, conn, "/qdrant.Points/Query", []byte{0x0a, 0xff, 0xff, 0xff})
		}},
		{"raw: malformed bytes to SearchBatch", func(_ *qdrant.Client, conn *grpc.ClientConn) error {
			return rawInvoke(ctx, conn, "/qdrant.Points/SearchBatch", []byte{0x12, 0x05, 0x01})
		}},
		{"raw: invalid UTF-8 collection name", func(_ *qdrant.Client, conn *grpc.ClientConn) error {
			return rawInvoke(ctx, conn, "/qdrant.Points/Query", invalidUTF8Query())
		}},
		{"raw: malformed bytes to a forwarded method", func(_ *qdrant.Client, conn *grpc.ClientConn) error {
			return rawInvoke(ctx, conn, "/qdrant.Points/Count", []byte{0xff})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.call(direct, directConn)
			got := tc.call(proxied, frontConn)
			if want == nil {
				t.Fatalf("the store accepted the bad input: the case proves nothing")
			}
			wantStatus(t, got, statusCode(want), innerMessage(want))
		})
	}

	t.Run("query: huge limit", func(t *testing.T) {
		// The store refuses a limit past its bound (store.max_results);
		// through the front, ranked or not, the answer is the store's.
		huge := qdrant.PtrOf(uint64(1) << 40)
		_, want := direct.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(vec(4)), Limit: huge})
		if statusCode(want) != codes.InvalidArgument {
			t.Fatalf("the store: %v", want)
		}
		_, got := proxied.Query(ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(vec(4)), Limit: huge})
		wantStatus(t, got, codes.InvalidArgument, innerMessage(want))
	})

	t.Run("tenancy: undecodable requests are refused, not forwarded", func(t *testing.T) {
		tfront := startFront(t, addr, Config{Tenancy: &tenancy.Policy{Key: "user_id", Header: "x-tenant"}})
		conn := dial(t, tfront)
		tctx := metadata.AppendToOutgoingContext(ctx, "x-tenant", "alice")
		for _, m := range []string{"/qdrant.Points/Query", "/qdrant.Points/Count", "/qdrant.Points/Upsert"} {
			err := rawInvoke(tctx, conn, m, []byte{0x0a, 0xff, 0xff})
			wantStatus(t, err, codes.Internal, "")
			if !strings.HasPrefix(innerMessage(err), "failed to decode Protobuf message") {
				t.Fatalf("%s: %v", m, err)
			}
		}
		err := rawInvoke(tctx, conn, "/qdrant.Points/Query", invalidUTF8Query())
		wantStatus(t, err, codes.Internal, "")
	})
}

func innerMessage(err error) string {
	var gs grpcStatus
	if errors.As(err, &gs) {
		return gs.GRPCStatus().Message()
	}
	return ""
}
