package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// unsettledLog is what the ranker logs when a collection change ended
// without its outcome and the candidate cache goes off.
const unsettledLog = "candidate cache off for a while: a collection or alias change ended without its outcome"

// TestServeUnsettledChanges: serve wires both fronts' unsettled hook to the
// ranker. A collection create that the upstream fails with Unavailable
// (gRPC), and a collection PATCH forwarded raw that the upstream REST API
// answers with a 503, each turn the candidate cache off, which serve logs;
// a create the upstream refuses (AlreadyExists) does not.
func TestServeUnsettledChanges(t *testing.T) {
	db, err := store.Open(t.TempDir(), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	failCreate := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if c, ok := req.(*qdrant.CreateCollection); ok && info.FullMethod == "/qdrant.Collections/Create" && c.GetCollectionName() == "flaky" {
			return nil, status.Error(codes.Unavailable, "the upstream is restarting")
		}
		return h(ctx, req)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- upstream.Serve(ctx, store.NewServer(db, grpc.UnaryInterceptor(failCreate)), lis, time.Second)
	}()
	defer func() {
		cancel()
		<-done
	}()
	rest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":{"error":"restarting"},"time":0}`))
	}))
	defer rest.Close()

	t.Run("gRPC", func(t *testing.T) {
		_, grpcAddr, stop := startServe(t, "--upstream", lis.Addr().String())
		c := grpcClient(t, grpcAddr)
		create := func(name string) error {
			return c.CreateCollection(context.Background(), &qdrant.CreateCollection{CollectionName: name,
				VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})})
		}
		if err := create("steady"); err != nil {
			t.Fatal(err)
		}
		if err := create("steady"); status.Code(err) != codes.AlreadyExists {
			t.Fatalf("second create: %v, want AlreadyExists", err)
		}
		_, log := stop()
		if strings.Contains(log, unsettledLog) {
			t.Fatalf("a refused create turned the cache off:\n%s", log)
		}
		_, grpcAddr, stop = startServe(t, "--upstream", lis.Addr().String())
		if err := grpcClient(t, grpcAddr).CreateCollection(context.Background(), &qdrant.CreateCollection{CollectionName: "flaky",
			VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})}); status.Code(err) != codes.Unavailable {
			t.Fatalf("create: %v, want Unavailable", err)
		}
		if _, log := stop(); !strings.Contains(log, unsettledLog) {
			t.Errorf("an unanswered create did not turn the cache off:\n%s", log)
		}
	})
	t.Run("REST", func(t *testing.T) {
		httpAddr, _, stop := startServe(t, "--upstream", lis.Addr().String(), "--upstream-rest", rest.URL)
		code, body := jsonRequest(t, http.MethodPatch, "http://"+httpAddr+"/collections/steady", `{"optimizers_config":{"indexing_threshold":10}}`)
		if code != http.StatusServiceUnavailable {
			t.Fatalf("PATCH: %d %s, want the upstream's 503", code, body)
		}
		if _, log := stop(); !strings.Contains(log, unsettledLog) {
			t.Errorf("an unanswered PATCH did not turn the cache off:\n%s", log)
		}
	})
}

// grpcClient is the official go-client on addr, closed when the test ends.
func grpcClient(t *testing.T, addr string) *qdrant.Client {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
