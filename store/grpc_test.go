package store_test

import (
	"context"
	"math"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// serveTCP serves db on a loopback port for the test's lifetime.
func serveTCP(t *testing.T, db *store.DB, opts ...grpc.ServerOption) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- upstream.Serve(ctx, store.NewServer(db, opts...), lis, time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return lis.Addr().String()
}

func tcpClient(t *testing.T, addr string, apiKey ...string) *qdrant.Client {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	cfg := &qdrant.Config{Host: host, Port: p, PoolSize: 1}
	if len(apiKey) > 0 {
		cfg.APIKey = apiKey[0]
	}
	c, err := qdrant.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Qdrant's gRPC codes and texts, as the official go-client sees them over
// real loopback TCP.
func TestGRPCErrors(t *testing.T) {
	db := newDB(t)
	c := tcpClient(t, serveTCP(t, db))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	vc := qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 4, Distance: qdrant.Distance_Cosine})
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c", VectorsConfig: vc}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(1, 0, 0, 0)}}}); err != nil {
		t.Fatal(err)
	}
	points := c.GetPointsClient()
	tests := []struct {
		name string
		call func() error
		code codes.Code
		msg  string
	}{
		{"missing collection", func() error {
			_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "nope", Query: qdrant.NewQuery(1, 0, 0, 0)})
			return err
		}, codes.NotFound, "Not found: Collection `nope` doesn't exist!"},
		{"existing collection", func() error {
			return c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c", VectorsConfig: vc})
		}, codes.AlreadyExists, "Wrong input: Collection `c` already exists!"},
		{"wrong dimension on upsert", func() error {
			_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(2), Vectors: qdrant.NewVectors(1, 0, 0)}}})
			return err
		}, codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: 4, got 3"},
		{"wrong dimension on query", func() error {
			_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: qdrant.NewQuery(1, 0, 0, 0, 0)})
			return err
		}, codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: 4, got 5"},
		{"payload write to a missing point", func() error {
			_, err := c.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "c", PointsSelector: qdrant.NewPointsSelector(qdrant.NewIDNum(42)),
				Payload: qdrant.NewValueMap(map[string]any{"a": 1})})
			return err
		}, codes.NotFound, "Not found: No point with id 42 found"},
		{"NaN vector", func() error {
			_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(2), Vectors: qdrant.NewVectors(float32(math.NaN()), 0, 0, 0)}}})
			return err
		}, codes.InvalidArgument, "Wrong input: Vector contains NaN or infinite values"},
		{"scroll limit 0", func() error {
			_, err := c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c", Limit: qdrant.PtrOf(uint32(0))})
			return err
		}, codes.InvalidArgument, "Validation error in body: [limit: value 0 invalid, must be 1 or larger]"},
		{"search limit 0", func() error {
			_, err := points.Search(ctx, &qdrant.SearchPoints{CollectionName: "c", Vector: []float32{1, 0, 0, 0}})
			return err
		}, codes.InvalidArgument, "Validation error in body: [limit: value 0 invalid, must be 1 or larger]"},
		{"collection name with a slash", func() error {
			return c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "a/b", VectorsConfig: vc})
		}, codes.InvalidArgument, `Validation error in body: [collection_name: collection name cannot contain "/" char]`},
		{"empty collection name", func() error {
			_, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: ""})
			return err
		}, codes.InvalidArgument, `Validation error in body: [collection_name: value "" invalid, must be from 1 to 255 characters]`},
		{"unimplemented method", func() error {
			_, err := points.Recommend(ctx, &qdrant.RecommendPoints{CollectionName: "c"})
			return err
		}, codes.Unimplemented, "memrank embedded store: Points/Recommend is not implemented"},
		{"unimplemented collections method", func() error {
			_, err := c.GetCollectionsClient().CollectionClusterInfo(ctx, &qdrant.CollectionClusterInfoRequest{CollectionName: "c"})
			return err
		}, codes.Unimplemented, "memrank embedded store: Collections/CollectionClusterInfo is not implemented"},
		{"unregistered service", func() error {
			_, err := c.CreateSnapshot(ctx, "c")
			return err
		}, codes.Unimplemented, "memrank embedded store: Snapshots/Create is not implemented"},
		{"unsupported query feature", func() error {
			_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: qdrant.NewQueryFormula(&qdrant.Formula{Expression: qdrant.NewExpressionConstant(1)})})
			return err
		}, codes.Unimplemented, "memrank embedded store: Query formula is not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { wantStatus(t, tc.call(), tc.code, tc.msg) })
	}

	// Deleting a missing collection answers result=false (go-client turns
	// that into its own error, so the raw stub is used).
	res, err := c.GetCollectionsClient().Delete(ctx, &qdrant.DeleteCollection{CollectionName: "nope"})
	if err != nil || res.GetResult() {
		t.Fatalf("delete missing collection = %v, %v; want result=false", res, err)
	}
	// wait=false behaves like wait=true: the write is done when acknowledged.
	up, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Wait: qdrant.PtrOf(false), Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(7), Vectors: qdrant.NewVectors(0, 1, 0, 0)}}})
	if err != nil || up.GetStatus() != qdrant.UpdateStatus_Completed {
		t.Fatalf("wait=false upsert = %v, %v; want Completed", up, err)
	}
}

func TestGRPCHealthAndReflection(t *testing.T) {
	db := newDB(t)
	addr := serveTCP(t, db)
	c := tcpClient(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := c.HealthCheck(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.GetTitle() != "memrank embedded store (not Qdrant)" || h.GetVersion() != "1.19.0" {
		t.Fatalf("health = %v", h)
	}
	if !qdrant.IsCompatible("v1.19.3", h.GetVersion()) {
		t.Fatalf("go-client v1.19.3 does not accept version %q", h.GetVersion())
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hr, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || hr.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("grpc.health.v1 = %v, %v", hr, err)
	}
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	_ = stream.CloseSend()
	got := map[string]bool{}
	for _, s := range resp.GetListServicesResponse().GetService() {
		got[s.GetName()] = true
	}
	for _, want := range []string{"qdrant.Qdrant", "qdrant.Collections", "qdrant.Points", "grpc.health.v1.Health"} {
		if !got[want] {
			t.Errorf("reflection does not list %s (got %v)", want, got)
		}
	}
}

// The in-process path: go-client over bufconn with the passthrough host.
func TestInProcessClient(t *testing.T) {
	db := newDB(t)
	p := upstream.ServeInProcess(store.NewServer(db))
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("second close: %v", err)
		}
	}()
	cfg := p.ClientConfig()
	if cfg.Host != "passthrough:///embedded" || !cfg.SkipCompatibilityCheck {
		t.Fatalf("config = %+v", cfg)
	}
	c, err := qdrant.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c", VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(1, 2), Payload: qdrant.NewValueMap(map[string]any{"x": 1.5})}}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: qdrant.NewQuery(1, 1), WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].GetScore() != 3 || res[0].GetPayload()["x"].GetDoubleValue() != 1.5 ||
		len(res[0].GetVectors().GetVector().GetDense().GetData()) != 2 {
		t.Fatalf("query = %v", res)
	}
	// The DB is still usable after the server stops.
	_ = p.Close()
	if _, err := db.ListCollections(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestAuth: with an API key the store answers as Qdrant does: no key is
// Unauthenticated, a wrong one PermissionDenied, the read-only key reads
// and may not write, the key does both; health needs none.
func TestAuth(t *testing.T) {
	db := newDB(t)
	addr := serveTCP(t, db, store.Auth{APIKey: "rw-key", ReadOnlyAPIKey: "ro-key"}.ServerOptions()...)
	ctx := context.Background()
	rw := tcpClient(t, addr, "rw-key")
	if err := rw.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	upsert := func(c *qdrant.Client) error {
		_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Wait: qdrant.PtrOf(true),
			Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectorsDense([]float32{1, 0})}}})
		return err
	}
	if err := upsert(rw); err != nil {
		t.Fatalf("the read-write key cannot write: %v", err)
	}
	ro := tcpClient(t, addr, "ro-key")
	if n, err := ro.Count(ctx, &qdrant.CountPoints{CollectionName: "c"}); err != nil || n != 1 {
		t.Errorf("the read-only key cannot read: %d %v", n, err)
	}
	wantStatus(t, upsert(ro), codes.PermissionDenied, "Forbidden: the read-only API key cannot call Points/Upsert")
	wantStatus(t, ro.DeleteCollection(ctx, "c"), codes.PermissionDenied, "Forbidden: the read-only API key cannot call Collections/Delete")
	_, err := tcpClient(t, addr).Count(ctx, &qdrant.CountPoints{CollectionName: "c"})
	wantStatus(t, err, codes.Unauthenticated, "Must provide an API key or an Authorization bearer token")
	_, err = tcpClient(t, addr, "wrong").Count(ctx, &qdrant.CountPoints{CollectionName: "c"})
	wantStatus(t, err, codes.PermissionDenied, "Invalid API key or JWT")
	if _, err := tcpClient(t, addr).HealthCheck(ctx); err != nil {
		t.Errorf("health needs no key: %v", err)
	}
}
