package store

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"
)

// InProcess serves a DB over an in-memory listener (bufconn), so memrank
// and tests reach the embedded store through the real go-client and gRPC
// stack without a TCP port (DESIGN section 7).
type InProcess struct {
	lis  *bufconn.Listener
	srv  *grpc.Server
	wg   sync.WaitGroup
	once sync.Once
}

// inProcessBuffer is the bufconn pipe buffer per direction.
const inProcessBuffer = 1 << 20

// closeGrace is how long Close lets calls in flight finish.
const closeGrace = 5 * time.Second

// NewInProcess serves db over an in-memory listener. opts are passed to
// NewServer. The DB stays owned by the caller: Close stops the server only.
func NewInProcess(db *DB, opts ...grpc.ServerOption) (*InProcess, error) {
	p := &InProcess{lis: bufconn.Listen(inProcessBuffer), srv: NewServer(db, opts...)}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_ = p.srv.Serve(p.lis) // returns when Close stops the server
	}()
	return p, nil
}

// Dial opens a raw connection to the in-process server (what the client
// config's dialer uses).
func (p *InProcess) Dial(ctx context.Context) (net.Conn, error) {
	return p.lis.DialContext(ctx)
}

// ClientConfig returns a go-client config that reaches this server: Host
// "passthrough:///embedded" (a plain host would go through the DNS resolver
// and fail with "produced zero addresses"), a context dialer over the
// in-memory listener, and SkipCompatibilityCheck. Callers may set other
// fields (PoolSize, APIKey...) on the returned value.
func (p *InProcess) ClientConfig() *qdrant.Config {
	return &qdrant.Config{
		Host:                   "passthrough:///embedded",
		SkipCompatibilityCheck: true,
		GrpcOptions: []grpc.DialOption{
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
				return p.lis.DialContext(ctx)
			}),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize)),
		},
	}
}

// Close stops the server (not the DB): calls in flight get a few seconds to
// finish. It is safe to call more than once.
func (p *InProcess) Close() error {
	p.once.Do(func() {
		stopGracefully(p.srv, closeGrace)
		_ = p.lis.Close()
		p.wg.Wait()
	})
	return nil
}
