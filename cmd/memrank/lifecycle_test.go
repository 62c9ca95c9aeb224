package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
)

// recorded is a component that writes its starts and stops to a shared log.
type recorded struct {
	name     string
	log      *eventLog
	startErr error
	block    chan struct{} // Shutdown waits on it, or on ctx
}

type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

func (r *recorded) Start(context.Context) error {
	r.log.add("start " + r.name)
	return r.startErr
}

func (r *recorded) Shutdown(ctx context.Context) error {
	if r.block != nil {
		select {
		case <-r.block:
		case <-ctx.Done():
			r.log.add("cut " + r.name)
			return ctx.Err()
		}
	}
	r.log.add("stop " + r.name)
	return nil
}

// TestLifecycleOrder: components stop in the reverse of their start, each
// once however often shutdown is called, and one that fails to start is
// not stopped while those before it are.
func TestLifecycleOrder(t *testing.T) {
	log := &eventLog{}
	l := lifecycle{grace: time.Second}
	ctx := context.Background()
	for _, name := range []string{"store", "upstream", "recorder"} {
		if err := l.start(ctx, name, &recorded{name: name, log: log}); err != nil {
			t.Fatal(err)
		}
	}
	closes := 0
	l.opened("listener", closing(func() error { closes++; return nil }))
	if err := l.start(ctx, "servers", &recorded{name: "servers", log: log, startErr: errors.New("port taken")}); err == nil {
		t.Fatal("a failed start reported no error")
	}
	if err := l.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.shutdown(ctx); err != nil {
		t.Fatalf("second shutdown: %v", err)
	}
	want := []string{"start store", "start upstream", "start recorder", "start servers", "stop recorder", "stop upstream", "stop store"}
	if diff := cmp.Diff(want, log.list()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if closes != 1 {
		t.Errorf("the listener closed %d times, want 1", closes)
	}
}

// TestLifecycleGrace: a component that does not stop in time is cut at its
// grace, and the ones after it still stop.
func TestLifecycleGrace(t *testing.T) {
	log := &eventLog{}
	l := lifecycle{grace: 50 * time.Millisecond}
	ctx := context.Background()
	_ = l.start(ctx, "store", &recorded{name: "store", log: log})
	_ = l.start(ctx, "stuck", &recorded{name: "stuck", log: log, block: make(chan struct{})})
	err := l.shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("shutdown = %v, want the stuck one's DeadlineExceeded", err)
	}
	want := []string{"start store", "start stuck", "cut stuck", "stop store"}
	if diff := cmp.Diff(want, log.list()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestTogetherStopsAtOnce: servers stop in parallel, so two slow ones take
// one grace, not two; a failed start stops those already started.
func TestTogetherStopsAtOnce(t *testing.T) {
	log := &eventLog{}
	release := make(chan struct{})
	both := together{&recorded{name: "grpc", log: log, block: release}, &recorded{name: "http", log: log, block: release}}
	if err := both.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- both.Shutdown(context.Background()) }()
	time.Sleep(20 * time.Millisecond)
	close(release) // one release frees both only if both wait at once
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("together did not stop")
	}

	log = &eventLog{}
	bad := together{&recorded{name: "grpc", log: log}, &recorded{name: "http", log: log, startErr: errors.New("port taken")}}
	if err := bad.Start(context.Background()); err == nil {
		t.Fatal("a failed start reported no error")
	}
	want := []string{"start grpc", "start http", "stop grpc"}
	if diff := cmp.Diff(want, log.list()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestServersStopCleanly: the gRPC and HTTP servers serve until Shutdown,
// report nothing to fail on a normal stop, and free their listeners.
func TestServersStopCleanly(t *testing.T) {
	glis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hlis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var failures []error
	var mu sync.Mutex
	fail := func(err error) { mu.Lock(); failures = append(failures, err); mu.Unlock() }
	servers := together{
		&grpcServer{srv: grpc.NewServer(), lis: glis, fail: fail},
		&httpServer{srv: &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: time.Second}, lis: hlis, fail: fail},
	}
	if err := servers.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + hlis.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := servers.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := servers.Shutdown(ctx); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	if len(failures) != 0 {
		t.Errorf("a normal stop reported failures: %v", failures)
	}
	if _, err := http.Get("http://" + hlis.Addr().String() + "/"); err == nil {
		t.Error("the HTTP server still answers")
	}
}

// TestLifecycleNames: a failing component's error carries its name once,
// whether or not the error already starts with it.
func TestLifecycleNames(t *testing.T) {
	tests := []struct {
		name, err, want string
	}{
		{"telemetry", "telemetry: tracer provider shutdown: deadline", "telemetry: tracer provider shutdown: deadline"},
		{"store", "close: bad file", "store: close: bad file"},
		{"tel", "telemetry: x", "tel: telemetry: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l lifecycle
			l.opened(tt.name, func(context.Context) error { return errors.New(tt.err) })
			if err := l.shutdown(context.Background()); err == nil || err.Error() != tt.want {
				t.Errorf("shutdown: %v, want %q", err, tt.want)
			}
		})
	}
}
