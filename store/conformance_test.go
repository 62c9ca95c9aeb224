package store_test

import (
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"

	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/store/storetest"
	"github.com/memrank/memrank/upstream"
)

// TestConformance runs the Qdrant conformance suite against the embedded store, served on a real
// loopback TCP port and in process, and against a real Qdrant when QDRANT_GRPC_ADDR names one
// (host:port of its gRPC API; QDRANT_API_KEY if it needs a key).
func TestConformance(t *testing.T) {
	t.Run("embedded over TCP", func(t *testing.T) {
		storetest.Run(t, tcpTarget(t))
	})
	t.Run("embedded in process", func(t *testing.T) {
		storetest.Run(t, inProcessTarget(t))
	})
	t.Run("real Qdrant", func(t *testing.T) {
		addr := os.Getenv("QDRANT_GRPC_ADDR")
		if addr == "" {
			t.Skip("QDRANT_GRPC_ADDR is not set: no real Qdrant to run the suite against")
		}
		storetest.Run(t, qdrantTarget(t, addr, os.Getenv("QDRANT_API_KEY")))
	})
}

// tcpServer is the embedded store served by store.NewServer on a loopback port. A restart
// closes the database and serves the reopened one on a new port.
type tcpServer struct {
	dir string

	mu    sync.Mutex
	db    *store.DB
	srv   *grpc.Server
	addr  string
	serve sync.WaitGroup // the Serve goroutine of the current server
}

func tcpTarget(t *testing.T) storetest.Target {
	s := &tcpServer{dir: t.TempDir()}
	s.start(t)
	t.Cleanup(func() { s.stop(t) })
	return storetest.Target{
		Connect: func(t testing.TB) *qdrant.Client {
			s.mu.Lock()
			addr := s.addr
			s.mu.Unlock()
			host, portText, err := net.SplitHostPort(addr)
			if err != nil {
				t.Fatalf("split %q: %v", addr, err)
			}
			port, err := strconv.Atoi(portText)
			if err != nil {
				t.Fatalf("port of %q: %v", addr, err)
			}
			return conformanceClient(t, &qdrant.Config{Host: host, Port: port, SkipCompatibilityCheck: true})
		},
		Restart: func(t testing.TB) {
			s.stop(t)
			s.start(t)
		},
		RejectsNonFiniteVectors: true,
		AtomicUpdateBatch:       true,
	}
}

func (s *tcpServer) start(t testing.TB) {
	t.Helper()
	db, err := store.Open(s.dir, store.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		if cerr := db.Close(); cerr != nil {
			t.Errorf("close store: %v", cerr)
		}
		t.Fatalf("listen: %v", err)
	}
	srv := store.NewServer(db)
	s.mu.Lock()
	s.db, s.srv, s.addr = db, srv, lis.Addr().String()
	s.mu.Unlock()
	s.serve.Go(func() {
		// Serve returns nil once Stop or GracefulStop is called; anything else is a failure.
		if err := srv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("serve: %v", err)
		}
	})
}

// stop stops the current server and closes its database; a second call does nothing.
func (s *tcpServer) stop(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	db, srv := s.db, s.srv
	s.db, s.srv = nil, nil
	s.mu.Unlock()
	if srv == nil {
		return
	}
	srv.GracefulStop()
	s.serve.Wait()
	if err := db.Close(); err != nil {
		t.Errorf("close store: %v", err)
	}
}

// inProcessServer is the embedded store reached the way memrank reaches it: upstream.ServeInProcess
// and the client configuration it hands out.
type inProcessServer struct {
	dir string

	mu sync.Mutex
	db *store.DB
	p  *upstream.InProcess
}

func inProcessTarget(t *testing.T) storetest.Target {
	s := &inProcessServer{dir: t.TempDir()}
	s.start(t)
	t.Cleanup(func() { s.stop(t) })
	return storetest.Target{
		Connect: func(t testing.TB) *qdrant.Client {
			s.mu.Lock()
			cfg := s.p.ClientConfig()
			s.mu.Unlock()
			return conformanceClient(t, cfg)
		},
		Restart: func(t testing.TB) {
			s.stop(t)
			s.start(t)
		},
		RejectsNonFiniteVectors: true,
		AtomicUpdateBatch:       true,
	}
}

func (s *inProcessServer) start(t testing.TB) {
	t.Helper()
	db, err := store.Open(s.dir, store.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	p := upstream.ServeInProcess(store.NewServer(db))
	s.mu.Lock()
	s.db, s.p = db, p
	s.mu.Unlock()
}

func (s *inProcessServer) stop(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	db, p := s.db, s.p
	s.db, s.p = nil, nil
	s.mu.Unlock()
	if p == nil {
		return
	}
	if err := p.Close(); err != nil {
		t.Errorf("close in-process server: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("close store: %v", err)
	}
}

func qdrantTarget(t *testing.T, addr, apiKey string) storetest.Target {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("QDRANT_GRPC_ADDR=%q is not host:port: %v", addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		t.Fatalf("QDRANT_GRPC_ADDR=%q: bad port: %v", addr, err)
	}
	return storetest.Target{
		Connect: func(t testing.TB) *qdrant.Client {
			return conformanceClient(t, &qdrant.Config{Host: host, Port: port, APIKey: apiKey, SkipCompatibilityCheck: true})
		},
		// A real Qdrant cannot be restarted from here; it keeps NaN/Inf vectors (qdrant#9201).
	}
}

func conformanceClient(t testing.TB, cfg *qdrant.Config) *qdrant.Client {
	t.Helper()
	c, err := qdrant.NewClient(cfg)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	return c
}
