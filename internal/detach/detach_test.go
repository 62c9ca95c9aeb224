package detach

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type key struct{}

// TestWorkOutlivesItsCaller: the work keeps the caller's values, not its
// cancellation, and ends at Shutdown, which waits for it.
func TestWorkOutlivesItsCaller(t *testing.T) {
	g := NewGroup()
	caller, cancelCaller := context.WithCancel(context.WithValue(context.Background(), key{}, "trace"))
	wctx, done, ok := g.Start(caller)
	if !ok {
		t.Fatal("Start refused before Shutdown")
	}
	if wctx.Value(key{}) != "trace" {
		t.Error("the caller's values are lost")
	}
	cancelCaller()
	if wctx.Err() != nil {
		t.Fatal("the caller's cancellation reached the work")
	}
	returned := make(chan struct{})
	go func() {
		// done last: Shutdown may return as soon as it runs, and must find
		// returned closed (deferred calls run last-in first-out).
		defer done()
		defer close(returned)
		<-wctx.Done() // the work runs until Shutdown ends it
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-returned:
	default:
		t.Error("Shutdown returned before the work did")
	}
	if err := g.Shutdown(ctx); err != nil {
		t.Errorf("a second Shutdown: %v", err)
	}
	if _, _, ok := g.Start(context.Background()); ok {
		t.Error("Start accepted work after Shutdown")
	}
}

// TestShutdownGivesUp: work that ignores its context holds Shutdown only
// until Shutdown's own context ends.
func TestShutdownGivesUp(t *testing.T) {
	g := NewGroup()
	_, done, _ := g.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := g.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want DeadlineExceeded", err)
	}
	done()
	if err := g.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown after the work returned: %v", err)
	}
}
