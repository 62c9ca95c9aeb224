package admission

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/telemetry/settings"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func limiter(t *testing.T, mod func(*Config)) *Limiter {
	t.Helper()
	cfg := DefaultConfig()
	mod(&cfg)
	l, err := New(cfg, "http", settings.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"defaults", func(*Config) {}, ""},
		{"no slots", func(c *Config) { c.MaxInFlight = 0 }, "max_in_flight: 0 is less than 1"},
		{"budget below one body", func(c *Config) { c.MaxBodyBytesInFlight = c.MaxBodyBytes - 1 }, "max_body_bytes_in_flight: 33554431 is less than max_body_bytes"},
		{"no body time", func(c *Config) { c.BodyTimeout = 0 }, "body_timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mod(&c)
			err := c.Validate()
			if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

// gate is a handler that holds every request until released.
type gate struct {
	in      chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{in: make(chan struct{}, 16), release: make(chan struct{})} }

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	g.in <- struct{}{}
	<-g.release
	w.Write(b)
}

func post(t *testing.T, url, body string) (*http.Response, string, time.Duration) {
	t.Helper()
	start := time.Now()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b), time.Since(start)
}

// TestInFlight: past MaxInFlight a request is refused at once with 503 and
// Retry-After, probes still answer, and a freed slot serves again.
func TestInFlight(t *testing.T) {
	g := newGate()
	l := limiter(t, func(c *Config) { c.MaxInFlight = 2; c.RetryAfter = 1500 * time.Millisecond })
	srv := httptest.NewServer(l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			io.WriteString(w, "ok")
			return
		}
		g.ServeHTTP(w, r)
	})))
	defer srv.Close()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, body, _ := post(t, srv.URL+"/q", `{"a":1}`); resp.StatusCode != 200 || body != `{"a":1}` {
				t.Errorf("an admitted request: %d %s", resp.StatusCode, body)
			}
		}()
	}
	<-g.in
	<-g.in
	resp, body, took := post(t, srv.URL+"/q", `{}`)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "2" ||
		body != `{"status":{"error":"Service unavailable: memrank is at capacity; retry after 2s"},"time":0}` {
		t.Errorf("the third request: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if took > time.Second {
		t.Errorf("the refusal took %v", took)
	}
	if resp, _, _ := post(t, srv.URL+"/healthz", ``); resp.StatusCode != 200 {
		t.Errorf("a probe was refused: %d", resp.StatusCode)
	}
	close(g.release)
	wg.Wait()
	if resp, _, _ := post(t, srv.URL+"/q", `{}`); resp.StatusCode != 200 {
		t.Errorf("after the load: %d", resp.StatusCode)
	}
}

// TestSlowBody: a body that does not arrive within BodyTimeout is answered
// 408 and holds no slot meanwhile: other requests are served.
func TestSlowBody(t *testing.T) {
	l := limiter(t, func(c *Config) { c.MaxInFlight = 1; c.BodyTimeout = 300 * time.Millisecond })
	srv := httptest.NewServer(l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})))
	defer srv.Close()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /q HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":")
	// While it trickles, the one slot is free.
	if resp, body, _ := post(t, srv.URL+"/q", `{"b":2}`); resp.StatusCode != 200 || body != `{"b":2}` {
		t.Errorf("a request beside a slow body: %d %s", resp.StatusCode, body)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(b), "HTTP/1.1 408") || !strings.Contains(string(b), "the request body did not arrive within 300ms") {
		t.Errorf("the slow body's answer: %q", b)
	}
}

// TestBodyBudget: bodies in flight are bounded in bytes, counted as they
// arrive; past the budget a request with a body is refused, one without
// is served, and a client that only announces a large body holds nothing.
func TestBodyBudget(t *testing.T) {
	l := limiter(t, func(c *Config) { c.MaxBodyBytes = 100; c.MaxBodyBytesInFlight = 150; c.BodyTimeout = 5 * time.Second })
	srv := httptest.NewServer(l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "served")
	})))
	defer srv.Close()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// 99 of its 100 bytes arrive: they are held from the budget meanwhile
	// (the budget is taken as bytes arrive, not as announced).
	io.WriteString(conn, "POST /q HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"+strings.Repeat(" ", 98))
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, body, _ := post(t, srv.URL+"/q", strings.Repeat(" ", 60)+"{}")
		if resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(body, "request bodies in flight") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a body past the budget: %d %s", resp.StatusCode, body)
		}
		time.Sleep(10 * time.Millisecond) // the slow body's headers may not be read yet
	}
	if resp, body, _ := post(t, srv.URL+"/q", ``); resp.StatusCode != 200 || body != "served" {
		t.Errorf("a request without a body: %d %s", resp.StatusCode, body)
	}
	if resp, body, _ := post(t, srv.URL+"/q", strings.Repeat(" ", 40)+"{}"); resp.StatusCode != 200 {
		t.Errorf("a body within the budget: %d %s", resp.StatusCode, body)
	}
}

// TestGRPC: past MaxInFlight a call is ResourceExhausted with the
// retry-after trailer go-client reads; health is always answered.
func TestGRPC(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxInFlight = 1
	l, err := New(cfg, "grpc", settings.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}, 1), make(chan struct{})
	srv := grpc.NewServer(append(l.ServerOptions(), grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error {
		held <- struct{}{}
		<-release
		var in healthpb.HealthCheckRequest
		if err := ss.RecvMsg(&in); err != nil {
			return err
		}
		return ss.SendMsg(&healthpb.HealthCheckResponse{})
	}))...)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l.Listener(lis)) }()
	defer func() { srv.Stop(); <-done }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first := make(chan error, 1)
	go func() {
		first <- conn.Invoke(ctx, "/qdrant.Points/Query", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	}()
	<-held
	var trailer metadata.MD
	err = conn.Invoke(ctx, "/qdrant.Points/Query", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{}, grpc.Trailer(&trailer))
	if status.Code(err) != codes.ResourceExhausted || trailer.Get("retry-after")[0] != "1" {
		t.Errorf("the second call: %v, trailer %v", err, trailer)
	}
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("health under load: %v", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("the admitted call: %v", err)
	}
}

// TestBodyBypasses: an announced body past the limit is refused at once,
// and only Qdrant's snapshot upload routes skip the read (a collection
// named "snapshots" does not).
func TestBodyBypasses(t *testing.T) {
	l := limiter(t, func(c *Config) {
		c.MaxBodyBytes = 100
		c.MaxBodyBytesInFlight = 100
		c.BodyTimeout = 300 * time.Millisecond
	})
	srv := httptest.NewServer(l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		io.WriteString(w, "served")
	})))
	defer srv.Close()
	send := func(path string, contentLength int) string {
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", path, contentLength)
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(conn)
		return string(b)
	}
	if got := send("/collections/c/points", 1<<20); !strings.HasPrefix(got, "HTTP/1.1 413") {
		t.Errorf("a body past the limit: %q", got)
	}
	if got := send("/collections/snapshots/points", 50); !strings.HasPrefix(got, "HTTP/1.1 408") {
		t.Errorf("a slow body on a collection named snapshots: %q", got)
	}
	for _, p := range []string{"/collections/c/snapshots/upload", "/collections/c/shards/1/snapshots/upload"} {
		if !snapshotUpload(p) {
			t.Errorf("%s is an upload", p)
		}
	}
	if snapshotUpload("/collections/snapshots/points") || snapshotUpload("/collections/c/snapshots") {
		t.Error("not uploads")
	}
}
