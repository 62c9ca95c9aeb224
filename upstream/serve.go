package upstream

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"
)

// inProcessBuffer is the in-memory pipe's buffer per direction.
const inProcessBuffer = 1 << 20

// InProcess serves a gRPC server on an in-memory listener, so other parts
// of the same process reach it through the real gRPC stack without a port.
type InProcess struct {
	lis  *bufconn.Listener
	srv  *grpc.Server
	wg   sync.WaitGroup
	once sync.Once
}

// ServeInProcess starts serving srv in memory; Shutdown stops it.
func ServeInProcess(srv *grpc.Server) *InProcess {
	p := &InProcess{lis: bufconn.Listen(inProcessBuffer), srv: srv}
	p.wg.Go(func() {
		_ = srv.Serve(p.lis) // returns when Shutdown stops the server
	})
	return p
}

// Dial opens a raw connection to the server.
func (p *InProcess) Dial(ctx context.Context) (net.Conn, error) { return p.lis.DialContext(ctx) }

// Shutdown stops the server gracefully, cutting the calls still running
// when ctx ends; it is safe to call more than once. A server also served
// elsewhere (on TCP) stops there too.
func (p *InProcess) Shutdown(ctx context.Context) error {
	p.once.Do(func() {
		GracefulStop(ctx, p.srv)
		_ = p.lis.Close()
		p.wg.Wait()
	})
	return nil
}

// Close is Shutdown with a few seconds' grace, for deferred cleanups.
func (p *InProcess) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	return p.Shutdown(ctx)
}

// closeGrace is how long Close lets calls in flight finish.
const closeGrace = 5 * time.Second

// Serve serves srv on lis until ctx ends, then stops it gracefully, giving
// calls in flight up to grace to finish before they are cut. It returns nil
// after a stop caused by ctx, or Serve's error.
func Serve(ctx context.Context, srv *grpc.Server, lis net.Listener, grace time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	GracefulStop(sctx, srv)
	if err := <-errc; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}

// GracefulStop drains srv, cutting what still runs when ctx ends
// (long-lived streams such as health watches would otherwise hold it
// forever). It returns when srv has stopped.
func GracefulStop(ctx context.Context, srv *grpc.Server) {
	done := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		srv.Stop()
		<-done
	}
}
