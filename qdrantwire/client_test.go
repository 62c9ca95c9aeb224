package qdrantwire_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/qdrantwire"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// storeClient is go-client on an embedded store behind key, reached over
// the real gRPC stack; the client sends apiKey.
func storeClient(t *testing.T, key, apiKey string, opts ...grpc.ServerOption) *qdrant.Client {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ip := upstream.ServeInProcess(store.NewServer(db, append(store.Auth{APIKey: key}.ServerOptions(), opts...)...))
	cfg := ip.ClientConfig()
	cfg.APIKey = apiKey
	c, err := qdrant.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		_ = ip.Close()
		_ = db.Close()
	})
	return c
}

// TestQueryListing checks that a listing through QueryListing is Query's,
// point for point, with integer ids and UUIDs, and that its errors carry
// the upstream's status as Query's do.
func TestQueryListing(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var contentTypes []string // of the Query calls, as the server saw them
	c := storeClient(t, "secret", "secret", grpc.ChainUnaryInterceptor(
		func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if info.FullMethod == qdrant.Points_Query_FullMethodName {
				md, _ := metadata.FromIncomingContext(ctx)
				mu.Lock()
				contentTypes = append(contentTypes, md.Get("content-type")...)
				mu.Unlock()
			}
			return h(ctx, req)
		}))
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "m",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 3, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	var pts []*qdrant.PointStruct
	for i := range 30 {
		id := qdrant.NewIDNum(uint64(i + 1))
		if i%3 == 0 {
			id = qdrant.NewID("00000000-0000-4000-8000-0000000000" + string(rune('1'+i/10)) + string(rune('0'+i%10)))
		}
		pts = append(pts, &qdrant.PointStruct{Id: id, Vectors: qdrant.NewVectorsDense([]float32{1, float32(i), 2}),
			Payload: qdrant.NewValueMap(map[string]any{"n": i})})
	}
	wait := true
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "m", Points: pts, Wait: &wait}); err != nil {
		t.Fatal(err)
	}
	limit := uint64(20)
	req := &qdrant.QueryPoints{CollectionName: "m", Query: qdrant.NewQueryDense([]float32{1, 4, 2}), Limit: &limit,
		WithPayload: qdrant.NewWithPayloadEnable(false), WithVectors: qdrant.NewWithVectorsEnable(false)}
	want, err := c.Query(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	wc := qdrantwire.NewClient(c)
	got, err := wc.QueryListing(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 20 || got[0].GetVersion() == 0 {
		t.Fatalf("listing of %d points, first version %d: want 20 with versions", len(got), got[0].GetVersion())
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("QueryListing differs from Query (-Query +QueryListing):\n%s", diff)
	}
	// Both go out with the same content-type: a strict proxy between
	// memrank and Qdrant must not tell them apart.
	mu.Lock()
	if diff := cmp.Diff([]string{"application/grpc", "application/grpc"}, contentTypes); diff != "" {
		t.Errorf("content-types of Query then QueryListing (-want +got):\n%s", diff)
	}
	mu.Unlock()

	// A reply it cannot read in one pass (here: with payloads) is still
	// Query's.
	req.WithPayload = qdrant.NewWithPayloadEnable(true)
	want, err = c.Query(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got, err = wc.QueryListing(ctx, req); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("with payloads, QueryListing differs from Query (-Query +QueryListing):\n%s", diff)
	}

	req.CollectionName = "missing"
	_, wantErr := c.Query(ctx, req)
	_, err = wc.QueryListing(ctx, req)
	if status.Code(wantErr) != codes.NotFound || status.Code(err) != codes.NotFound {
		t.Fatalf("missing collection: QueryListing %v, Query %v: want NotFound from both", err, wantErr)
	}
	var ws, gs interface{ GRPCStatus() *status.Status }
	if !errors.As(wantErr, &ws) || !errors.As(err, &gs) || ws.GRPCStatus().Message() != gs.GRPCStatus().Message() {
		t.Errorf("missing collection: QueryListing's status %v, Query's %v", err, wantErr)
	}
}

// TestQueryListingCredentials checks that a listing goes through the
// client's interceptors: without the right key the store refuses it.
func TestQueryListingCredentials(t *testing.T) {
	c := storeClient(t, "secret", "wrong")
	limit := uint64(1)
	_, err := qdrantwire.NewClient(c).QueryListing(context.Background(), &qdrant.QueryPoints{CollectionName: "m",
		Query: qdrant.NewQueryDense([]float32{1, 2, 3}), Limit: &limit})
	if status.Code(err) != codes.PermissionDenied && status.Code(err) != codes.Unauthenticated {
		t.Fatalf("wrong key: %v, want a refusal", err)
	}
}

// TestQueryWire checks that QueryWire's points are Query's and that each
// point's payload bytes, encoded into a reply, decode to its payload.
func TestQueryWire(t *testing.T) {
	ctx := context.Background()
	c := storeClient(t, "", "")
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "m",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})}); err != nil {
		t.Fatal(err)
	}
	payloads := []map[string]any{{"text": "likes tea", "n": 1, "nested": map[string]any{"a": []any{1, "x"}}}, nil, {"": "empty key"}}
	var pts []*qdrant.PointStruct
	for i := range 9 {
		pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i + 1)), Vectors: qdrant.NewVectorsDense([]float32{1, float32(i)}),
			Payload: qdrant.NewValueMap(payloads[i%len(payloads)])})
	}
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "m", Points: pts}); err != nil {
		t.Fatal(err)
	}
	limit := uint64(20)
	req := &qdrant.QueryPoints{CollectionName: "m", Query: qdrant.NewQueryDense([]float32{1, 1}), Limit: &limit,
		WithPayload: qdrant.NewWithPayloadEnable(true), WithVectors: qdrant.NewWithVectorsEnable(true)}
	want, err := c.Query(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	wc := qdrantwire.NewClient(c)
	got, wires, err := wc.QueryWire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("QueryWire differs from Query (-Query +QueryWire):\n%s", diff)
	}
	if len(wires) != len(got) {
		t.Fatalf("%d payloads for %d points", len(wires), len(got))
	}
	b, err := qdrantwire.EncodeScoredWire(got, wires, 0)
	if err != nil {
		t.Fatal(err)
	}
	var back qdrant.QueryResponse
	if err := proto.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, back.GetResult(), protocmp.Transform()); diff != "" {
		t.Errorf("encoded from the payload bytes (-Query +reply):\n%s", diff)
	}
	req.CollectionName = "missing"
	if _, _, err := wc.QueryWire(ctx, req); status.Code(err) != codes.NotFound {
		t.Errorf("missing collection: %v, want NotFound", err)
	}
}
