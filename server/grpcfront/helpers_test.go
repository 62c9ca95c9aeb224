package grpcfront

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"

	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve serves srv on a loopback port until the test ends.
func serve(t testing.TB, srv *grpc.Server) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- upstream.Serve(ctx, srv, lis, 2*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return lis.Addr().String()
}

// openStore opens an embedded store in a temporary directory and serves it
// on loopback TCP with opts (stats handlers...).
func openStore(t testing.TB, opts ...grpc.ServerOption) (*store.DB, string) {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db, serve(t, store.NewServer(db, opts...))
}

// dial connects to a loopback upstream and closes the connection when the
// test ends.
func dial(t testing.TB, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := upstream.Dial(context.Background(), addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// startFront serves a front over upstream with cfg and returns its address.
func startFront(t testing.TB, upstream string, cfg Config, dialOpts ...grpc.DialOption) string {
	t.Helper()
	cfg.Upstream = dial(t, upstream, dialOpts...)
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, srv)
}

// client is the official go-client on addr, as an agent would use it.
func client(t testing.TB, addr string, cfg qdrant.Config) *qdrant.Client {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	cfg.Host = host
	cfg.Port, _ = strconv.Atoi(port)
	cfg.PoolSize = 1
	cfg.SkipCompatibilityCheck = true
	c, err := qdrant.NewClient(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// seen is what a fake upstream observed of one call.
type seen struct {
	method   string
	md       metadata.MD
	deadline time.Duration // remaining when the call arrived; 0 = none
}

// fakeUpstream is a small Qdrant built from go-client's generated server
// stubs: it records what arrives and answers what the test says.
type fakeUpstream struct {
	mu    sync.Mutex
	calls []seen

	// answer, when set, decides a call's outcome: a non-nil error is
	// returned; header and trailer metadata are set first.
	answer func(ctx context.Context, method string) error
	// points answers Query, Search and Scroll.
	points []*qdrant.ScoredPoint
}

func (u *fakeUpstream) record(ctx context.Context, method string) error {
	md, _ := metadata.FromIncomingContext(ctx)
	s := seen{method: method, md: md.Copy()}
	if d, ok := ctx.Deadline(); ok {
		s.deadline = time.Until(d)
	}
	u.mu.Lock()
	u.calls = append(u.calls, s)
	u.mu.Unlock()
	if u.answer != nil {
		return u.answer(ctx, method)
	}
	return nil
}

func (u *fakeUpstream) last(t testing.TB, method string) seen {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	for i := len(u.calls) - 1; i >= 0; i-- {
		if u.calls[i].method == method {
			return u.calls[i]
		}
	}
	t.Fatalf("the upstream saw no %s call (calls: %v)", method, u.calls)
	return seen{}
}

func (u pointsOf) Count(ctx context.Context, _ *qdrant.CountPoints) (*qdrant.CountResponse, error) {
	if err := u.record(ctx, "Count"); err != nil {
		return nil, err
	}
	return &qdrant.CountResponse{Result: &qdrant.CountResult{Count: 42}, Time: 0.001}, nil
}

func (u pointsOf) Query(ctx context.Context, _ *qdrant.QueryPoints) (*qdrant.QueryResponse, error) {
	if err := u.record(ctx, "Query"); err != nil {
		return nil, err
	}
	return &qdrant.QueryResponse{Result: u.points, Time: 0.001}, nil
}

func (u pointsOf) Search(ctx context.Context, _ *qdrant.SearchPoints) (*qdrant.SearchResponse, error) {
	if err := u.record(ctx, "Search"); err != nil {
		return nil, err
	}
	return &qdrant.SearchResponse{Result: u.points, Time: 0.001}, nil
}

func (u collectionsOf) Get(ctx context.Context, _ *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	if err := u.record(ctx, "Collections/Get"); err != nil {
		return nil, err
	}
	return &qdrant.GetCollectionInfoResponse{Result: &qdrant.CollectionInfo{Config: &qdrant.CollectionConfig{
		Params: &qdrant.CollectionParams{VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})},
	}}}, nil
}

func (u qdrantOf) HealthCheck(ctx context.Context, _ *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	if err := u.record(ctx, "HealthCheck"); err != nil {
		return nil, err
	}
	return &qdrant.HealthCheckReply{Title: "fake qdrant", Version: "1.19.0"}, nil
}

// startFake serves u, with server reflection (a bidi stream to forward),
// on loopback TCP.
func startFake(t testing.TB, u *fakeUpstream) string {
	t.Helper()
	srv := grpc.NewServer()
	qdrant.RegisterPointsServer(srv, pointsOf{fakeUpstream: u})
	qdrant.RegisterCollectionsServer(srv, collectionsOf{fakeUpstream: u})
	qdrant.RegisterQdrantServer(srv, qdrantOf{fakeUpstream: u})
	reflection.Register(srv)
	return serve(t, srv)
}

// The fake's three services, each with its own method set.
type (
	pointsOf struct {
		qdrant.UnimplementedPointsServer
		*fakeUpstream
	}
	collectionsOf struct {
		qdrant.UnimplementedCollectionsServer
		*fakeUpstream
	}
	qdrantOf struct {
		qdrant.UnimplementedQdrantServer
		*fakeUpstream
	}
)

func (c collectionsOf) Create(ctx context.Context, _ *qdrant.CreateCollection) (*qdrant.CollectionOperationResponse, error) {
	if err := c.record(ctx, "Collections/Create"); err != nil {
		return nil, err
	}
	return &qdrant.CollectionOperationResponse{Result: true}, nil
}

func wantStatus(t testing.TB, err error, code codes.Code, msg string) {
	t.Helper()
	// go-client wraps statuses (QdrantError, QdrantResourceExhaustedError):
	// the status the wire carried is the innermost one.
	var gs grpcStatus
	if !errors.As(err, &gs) {
		t.Fatalf("error = %v, want a gRPC status %v %q", err, code, msg)
	}
	st := gs.GRPCStatus()
	if st.Code() != code || (msg != "" && st.Message() != msg) {
		t.Fatalf("error = %v, want %v %q", err, code, msg)
	}
}
