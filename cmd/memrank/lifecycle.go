package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/memrank/memrank/upstream"
)

// component is one part of a running memrank, in one shape: Start brings it
// up (a server starts serving, a loop starts ticking) and returns; Shutdown
// stops it, letting work in flight finish until ctx ends, and is safe to
// call twice.
type component interface {
	Start(ctx context.Context) error
	Shutdown(ctx context.Context) error
}

var (
	_ component = closer(nil)
	_ component = together(nil)
	_ component = (*grpcServer)(nil)
	_ component = (*httpServer)(nil)
)

// lifecycle starts components in order and shuts them down in reverse, so
// the listeners close before the paths behind them, and the access counts
// are flushed while the upstream is still there.
type lifecycle struct {
	grace time.Duration // each component's time to stop
	parts []part
}

type part struct {
	name string
	c    component
}

// start starts c and, if that works, keeps it for shutdown.
func (l *lifecycle) start(ctx context.Context, name string, c component) error {
	if err := c.Start(ctx); err != nil {
		return named(name, err)
	}
	l.parts = append(l.parts, part{name, c})
	return nil
}

// opened keeps something that runs once built (a file, a connection, the
// telemetry pipeline) for shutdown, with stop as its Shutdown.
func (l *lifecycle) opened(name string, stop func(context.Context) error) {
	l.parts = append(l.parts, part{name, closer(stop)})
}

// closing adapts a Close method to opened's stop, called once however
// often the stop is.
func closing(close func() error) func(context.Context) error {
	once := sync.OnceValue(close)
	return func(context.Context) error { return once() }
}

// closingListener is closing for a listener a server may have closed
// already (stopping a server closes its listener).
func closingListener(lis net.Listener) func(context.Context) error {
	return closing(func() error {
		if err := lis.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	})
}

// shutdown stops every component started, last first, each within grace
// (and ctx). It is safe to call twice: the second call stops nothing.
func (l *lifecycle) shutdown(ctx context.Context) error {
	var errs []error
	for i := len(l.parts) - 1; i >= 0; i-- {
		p := l.parts[i]
		pctx, cancel := context.WithTimeout(ctx, l.grace)
		if err := p.c.Shutdown(pctx); err != nil {
			errs = append(errs, named(p.name, err))
		}
		cancel()
	}
	l.parts = nil
	return errors.Join(errs...)
}

// named puts the component's name before err, unless err already starts
// with it (packages name themselves: "telemetry: tracer provider
// shutdown: ..." is not made "telemetry: telemetry: ...").
func named(name string, err error) error {
	if strings.HasPrefix(err.Error(), name+": ") {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

// closer is a component that runs once built: nothing to start, and
// Shutdown is the func.
type closer func(context.Context) error

func (closer) Start(context.Context) error          { return nil }
func (f closer) Shutdown(ctx context.Context) error { return f(ctx) }

// together starts its components in order and shuts them down at once, so
// that servers stop accepting together and share one grace period.
type together []component

func (t together) Start(ctx context.Context) error {
	for i, c := range t {
		if err := c.Start(ctx); err != nil {
			// Those started stop again before the error is reported.
			return errors.Join(err, together(t[:i]).Shutdown(context.WithoutCancel(ctx)))
		}
	}
	return nil
}

func (t together) Shutdown(ctx context.Context) error {
	errs := make([]error, len(t))
	var wg sync.WaitGroup
	for i, c := range t {
		wg.Go(func() { errs[i] = c.Shutdown(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// grpcServer serves srv on lis; a Serve failure is reported to fail.
type grpcServer struct {
	srv  *grpc.Server
	lis  net.Listener
	fail func(error)
	wg   sync.WaitGroup
}

func (s *grpcServer) Start(context.Context) error {
	s.wg.Go(func() {
		if err := s.srv.Serve(s.lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.fail(fmt.Errorf("grpc: %w", err))
		}
	})
	return nil
}

// Shutdown stops accepting calls and lets those in flight finish until ctx
// ends, then cuts them.
func (s *grpcServer) Shutdown(ctx context.Context) error {
	upstream.GracefulStop(ctx, s.srv)
	s.wg.Wait()
	return nil
}

// httpServer serves srv on lis; a Serve failure is reported to fail.
type httpServer struct {
	srv  *http.Server
	lis  net.Listener
	fail func(error)
	wg   sync.WaitGroup
}

func (s *httpServer) Start(context.Context) error {
	s.wg.Go(func() {
		if err := s.srv.Serve(s.lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.fail(fmt.Errorf("http: %w", err))
		}
	})
	return nil
}

// Shutdown stops accepting requests and lets those in flight finish until
// ctx ends, then closes their connections.
func (s *httpServer) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	s.wg.Wait()
	return err
}
