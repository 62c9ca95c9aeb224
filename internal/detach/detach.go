// Package detach owns work that outlives the caller who started it: a call
// shared by concurrent callers (singleflight), which must not fail when
// its first caller gives up, yet must not outlive the component that
// started it either. A Group gives such work a context that keeps the
// caller's values (the trace) without its cancellation, and ends it when
// the component shuts down, waiting for it to return.
package detach

import (
	"context"
	"sync"
)

// Group owns detached work. The zero value is not usable: use NewGroup.
type Group struct {
	ctx    context.Context // ends at Shutdown
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// NewGroup returns a Group that runs work until Shutdown.
func NewGroup() *Group {
	ctx, cancel := context.WithCancel(context.Background())
	return &Group{ctx: ctx, cancel: cancel}
}

// Start registers one piece of work and returns its context: ctx's values,
// not its cancellation, ended by Shutdown. Call done when the work
// returns. After Shutdown, ok is false and the work must not run.
func (g *Group) Start(ctx context.Context) (wctx context.Context, done func(), ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, nil, false
	}
	g.wg.Add(1)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(g.ctx, cancel)
	return wctx, func() {
		stop()
		cancel()
		g.wg.Done()
	}, true
}

// Shutdown cancels the work in flight and waits for it to return, until
// ctx ends. Safe to call more than once.
func (g *Group) Shutdown(ctx context.Context) error {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.cancel()
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
