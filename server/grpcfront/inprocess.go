package grpcfront

import (
	"context"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"
)

// InProcess serves a gRPC server (the front) on an in-memory listener, so
// other parts of the same process (the REST front's typed stubs) reach it
// through the real gRPC stack without a port: DialInProcess(ctx, ip).
type InProcess struct {
	lis  *bufconn.Listener
	srv  *grpc.Server
	wg   sync.WaitGroup
	once sync.Once
}

// ServeInProcess starts serving srv in memory. Close stops it.
func ServeInProcess(srv *grpc.Server) *InProcess {
	p := &InProcess{lis: bufconn.Listen(1 << 20), srv: srv}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_ = srv.Serve(p.lis) // returns when Close stops the server
	}()
	return p
}

// Dial opens a connection to the server.
func (p *InProcess) Dial(ctx context.Context) (net.Conn, error) { return p.lis.DialContext(ctx) }

// Close stops the server gracefully, cutting calls still running after
// grace; it is safe to call more than once. Serving srv elsewhere too
// (on TCP) is fine: Close stops it there as well.
func (p *InProcess) Close(grace time.Duration) {
	p.once.Do(func() {
		done := make(chan struct{})
		go func() { p.srv.GracefulStop(); close(done) }()
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			p.srv.Stop()
			<-done
		}
		_ = p.lis.Close()
		p.wg.Wait()
	})
}

var _ Dialer = (*InProcess)(nil)
