package grpcfront

import (
	"context"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/tenancy"
	"github.com/memrank/memrank/upstream"
)

// inProcessFront serves a front on an in-memory listener over the embedded
// store reached in process (DialInProcess), and returns a connection to it.
func inProcessFront(t testing.TB, db *store.DB, cfg Config) *grpc.ClientConn {
	t.Helper()
	ip := upstream.ServeInProcess(store.NewServer(db))
	t.Cleanup(func() { _ = ip.Close() })
	up, err := upstream.DialInProcess(context.Background(), ip)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	if cfg.ranker == nil {
		src, err := qdrant.NewClient(ip.ClientConfig())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = src.Close() })
		cfg.ranker = &fakeRanker{src: src}
	}
	cfg.Upstream = up
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fp := upstream.ServeInProcess(srv)
	t.Cleanup(func() { _ = fp.Close() })
	conn, err := upstream.DialInProcess(context.Background(), fp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

var fuzzMethods = []string{
	"/qdrant.Points/Query", "/qdrant.Points/QueryBatch", "/qdrant.Points/QueryGroups",
	"/qdrant.Points/Search", "/qdrant.Points/SearchBatch", "/qdrant.Points/SearchGroups",
	"/qdrant.Points/Scroll", "/qdrant.Points/Count", "/qdrant.Points/Get",
}

// FuzzInterceptedRequest sends arbitrary bytes as the request of the
// methods the front decodes (with tenancy off, and on), through the ranker's
// path and the scoping path into the embedded store. Nothing may panic,
// every answer is a proper status, and none is the front's own "internal
// error" (a failure nobody expected).
func FuzzInterceptedRequest(f *testing.F) {
	seeds := []struct {
		method int
		msg    proto.Message
	}{
		{0, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense([]float32{1, 0, 0, 0}), Limit: qdrant.PtrOf(uint64(5)), WithPayload: qdrant.NewWithPayload(true)}},
		{0, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryID(qdrant.NewIDNum(3)), Filter: &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatchKeyword("user_id", "x")}}}},
		{1, &qdrant.QueryBatchPoints{CollectionName: "mem", QueryPoints: []*qdrant.QueryPoints{{CollectionName: "mem", Query: qdrant.NewQueryDense([]float32{1, 1, 0, 0})}}}},
		{2, &qdrant.QueryPointGroups{CollectionName: "mem", Query: qdrant.NewQueryDense([]float32{1, 0, 1, 0}), GroupBy: "user_id"}},
		{3, &qdrant.SearchPoints{CollectionName: "mem", Vector: []float32{0, 1, 0, 0}, Limit: 3}},
		{4, &qdrant.SearchBatchPoints{CollectionName: "mem", SearchPoints: []*qdrant.SearchPoints{{CollectionName: "mem", Vector: []float32{0, 1, 0, 0}, Limit: 3}}}},
		{5, &qdrant.SearchPointGroups{CollectionName: "mem", Vector: []float32{0, 1, 0, 0}, Limit: 3, GroupSize: 2, GroupBy: "text"}},
		{6, &qdrant.ScrollPoints{CollectionName: "mem", Limit: qdrant.PtrOf(uint32(4))}},
		{7, &qdrant.CountPoints{CollectionName: "mem"}},
		{8, &qdrant.GetPoints{CollectionName: "mem", Ids: []*qdrant.PointId{qdrant.NewIDNum(1)}}},
	}
	for _, s := range seeds {
		b, err := proto.Marshal(s.msg)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(s.method), false, b)
		f.Add(uint8(s.method), true, b)
	}
	f.Add(uint8(0), false, []byte{0x0a, 0xff, 0xff})
	f.Add(uint8(0), true, invalidUTF8Query())

	db, err := store.Open(f.TempDir(), store.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = db.Close() })
	plain := inProcessFront(f, db, Config{})
	scoped := inProcessFront(f, db, Config{Tenancy: &tenancy.Policy{Key: "user_id", Header: "x-tenant"}})
	fixture := inProcessFront(f, db, Config{})
	memFixture(f, qdrant.NewGrpcClientFromConn(fixture).Points(), qdrant.NewGrpcClientFromConn(fixture).Collections())

	f.Fuzz(func(t *testing.T, method uint8, tenant bool, b []byte) {
		m := fuzzMethods[int(method)%len(fuzzMethods)]
		conn := plain
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if tenant {
			conn = scoped
			ctx = metadata.AppendToOutgoingContext(ctx, "x-tenant", "alice")
		}
		err := rawInvoke(ctx, conn, m, b)
		if err == nil {
			return
		}
		code := statusCode(err)
		if code == codes.Unknown || code == codes.DeadlineExceeded {
			t.Fatalf("%s: %v", m, err)
		}
		if innerMessage(err) == internalText {
			t.Fatalf("%s: the front failed unexpectedly: %v", m, err)
		}
	})
}
