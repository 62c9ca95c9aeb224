package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.uber.org/goleak"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/internal/demo"
	"github.com/memrank/memrank/server/native"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// syncBuffer is a bytes.Buffer safe to write from the command while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listenLine = regexp.MustCompile(`memrank: http (\S+) .*grpc (\S+) `)

// startServe runs `memrank serve` with args on loopback ports and returns the
// HTTP and gRPC addresses once it listens, and a stop function that cancels
// it as SIGTERM would and returns its exit code and stderr.
func startServe(t *testing.T, args ...string) (httpAddr, grpcAddr string, stop func() (int, string)) {
	t.Helper()
	return startServeEnv(t, nil, args...)
}

// startServeEnv is startServe with an environment (MEMRANK_* settings).
func startServeEnv(t *testing.T, environ []string, args ...string) (httpAddr, grpcAddr string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	// No load balancer to drain: stop at once (TestServeDrains tests the drain).
	environ = append([]string{"MEMRANK_SHUTDOWN__DRAIN=0s"}, environ...)
	args = append([]string{"serve", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0"}, args...)
	go func() { done <- run(ctx, args, strings.NewReader(""), io.Discard, stderr, environ) }()
	stopped := false
	var code int
	stop = func() (int, string) {
		if !stopped {
			stopped = true
			cancel()
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("serve did not stop; stderr:\n%s", stderr.String())
			}
		}
		return code, stderr.String()
	}
	t.Cleanup(func() { stop() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := listenLine.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], m[2], stop
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d before listening; stderr:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never listened; stderr:\n%s", stderr.String())
		}
	}
}

func post(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	code, b := jsonRequest(t, http.MethodPost, url, body)
	return code, []byte(b)
}

// TestServeDemo runs `memrank serve --demo` on the embedded store and uses
// it as a newcomer would: the native API answers the demo's first question
// with the memory the demo promises, the official go-client's gRPC query and
// Qdrant's REST query are re-ranked the same way, errors come in Qdrant's
// shapes, and after a graceful stop the access counts of what was returned
// are on disk under this replica's key.
func TestServeDemo(t *testing.T) {
	dir := t.TempDir()
	// No flush until the stop: a flush between two queries would raise the
	// access boost, and the gRPC score is compared with the native weight.
	httpAddr, grpcAddr, stop := startServeEnv(t, []string{"MEMRANK_ACCESS__FLUSH_INTERVAL=1h"},
		"--demo", "--data", dir, "--replica-id", "test-1")
	base := "http://" + httpAddr
	q := demo.Queries()[0]

	// Native API, text query.
	code, body := post(t, base+"/v1/retrieve",
		`{"collection":"`+demo.Collection+`","text":`+strconv.Quote(q.Text)+`,"limit":3}`)
	if code != http.StatusOK {
		t.Fatalf("/v1/retrieve: %d %s", code, body)
	}
	var nat native.RetrieveResponse
	if err := json.Unmarshal(body, &nat); err != nil {
		t.Fatalf("/v1/retrieve: %v: %s", err, body)
	}
	if !nat.Reranked || len(nat.Result) != 3 {
		t.Fatalf("/v1/retrieve: reranked %v, %d results: %s", nat.Reranked, len(nat.Result), body)
	}
	var payload struct{ Text string }
	if err := json.Unmarshal(nat.Result[0].Payload, &payload); err != nil || !strings.Contains(payload.Text, q.Top) {
		t.Fatalf("/v1/retrieve: first result %q, want the memory holding %q", payload.Text, q.Top)
	}
	if nat.Result[0].Explanation == nil || nat.Result[0].Confidence == nil {
		t.Fatalf("/v1/retrieve: the first result has no explanation: %s", body)
	}
	top := nat.Result[0].ID

	// The same question as a vector through Qdrant's gRPC API with the
	// official client: memrank's order, memrank's weights.
	sem, err := embed.NewSemantic(384) // the demo's embedder, the default
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := sem.Embed(context.Background(), []string{q.Text})
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(grpcAddr)
	p, _ := strconv.Atoi(port)
	client, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	limit := uint64(3)
	got, err := client.Query(ctx, &qdrant.QueryPoints{
		CollectionName: demo.Collection,
		Query:          qdrant.NewQuery(vecs[0]...),
		Limit:          &limit,
	})
	if err != nil {
		t.Fatalf("gRPC Query: %v", err)
	}
	if len(got) != 3 || native.NewPointID(got[0].GetId()) != top {
		t.Fatalf("gRPC Query: first %v, want %v (the native API's first)", got[0].GetId(), top)
	}
	if d := float64(got[0].GetScore()) - float64(nat.Result[0].Score); d > 1e-5 || d < -1e-5 {
		t.Errorf("gRPC score %v, native weight %v", got[0].GetScore(), nat.Result[0].Score)
	}
	// Pass-through: Count goes to the store unchanged.
	n, err := client.Count(ctx, &qdrant.CountPoints{CollectionName: demo.Collection})
	if err != nil || n != 198 {
		t.Fatalf("gRPC Count = %d, %v; want 198", n, err)
	}

	// Qdrant's REST API: the same first point, and Qdrant's error shapes.
	vecJSON, _ := json.Marshal(vecs[0])
	code, body = post(t, base+"/collections/"+demo.Collection+"/points/query",
		`{"query":`+string(vecJSON)+`,"limit":3}`)
	if code != http.StatusOK || !strings.Contains(string(body), `"points":[{"id":`+top.String()+`,`) {
		t.Fatalf("REST query: %d %s; want %v first", code, body, top)
	}
	code, body = post(t, base+"/collections/"+demo.Collection+"/points/query", `{"query":[0.1,0.2],"limit":3}`)
	want := `{"status":{"error":"Wrong input: Vector dimension error: expected dim: 384, got 2"},"time":`
	if code != http.StatusBadRequest || !strings.HasPrefix(string(body), want) {
		t.Errorf("REST wrong dimension: %d %s; want 400 %s...", code, body, want)
	}
	code, body = post(t, base+"/collections/nope/points/query", `{"query":[0.1,0.2]}`)
	want = `{"status":{"error":"Not found: Collection ` + "`nope`" + ` doesn't exist!"},"time":`
	if code != http.StatusNotFound || !strings.HasPrefix(string(body), want) {
		t.Errorf("REST unknown collection: %d %s; want 404 %s...", code, body, want)
	}
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"title":"memrank embedded store (not Qdrant)"`) {
		t.Errorf("GET /: %s", b)
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		if path == "/metrics" && !strings.Contains(string(b), "go_goroutines") {
			t.Errorf("GET /metrics lacks the Go collector: %.300s", b)
		}
	}

	code, stderr := stop()
	if code != exitOK {
		t.Fatalf("serve exit code %d; stderr:\n%s", code, stderr)
	}
	// Returned three times (native, gRPC, REST): the final flush wrote
	// this replica's total on top of the demo's own counts.
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatalf("the store does not reopen after serve: %v", err)
	}
	defer db.Close()
	ip := upstream.ServeInProcess(store.NewServer(db))
	defer ip.Close()
	sc, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	pts, err := sc.Get(ctx, &qdrant.GetPoints{CollectionName: demo.Collection, Ids: []*qdrant.PointId{top.Proto()},
		WithPayload: qdrant.NewWithPayload(true)})
	if err != nil || len(pts) != 1 {
		t.Fatalf("get %v: %v", top, err)
	}
	counts := pts[0].GetPayload()["access_counts"].GetStructValue().GetFields()
	if got := counts["test-1"].GetIntegerValue(); got != 3 {
		t.Errorf("access_counts.test-1 of %v = %d after three retrievals, want 3 (counts %v)", top, got, counts)
	}
}

// TestServeBadFlags: configuration errors are usage errors, named.
func TestServeBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"replica id", []string{"--replica-id", "a b"}, `replica_id: "a b" has characters outside [A-Za-z0-9_-]`},
		{"rest url", []string{"--upstream-rest", "ftp://x"}, `upstream.rest: "ftp://x" is not an http(s) URL`},
		{"http address", []string{"--http", "256.0.0.1:1"}, "--http 256.0.0.1:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			args := append([]string{"serve", "--data", t.TempDir(), "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0"}, tc.args...)
			code := run(context.Background(), args, strings.NewReader(""), io.Discard, &stderr, nil)
			if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr.String(), exitUsage, tc.want)
			}
		})
	}
}

// TestServeDrains: after SIGTERM, /readyz fails for shutdown.drain while
// requests are still served, so a load balancer has time to stop sending;
// then serve stops on its own.
func TestServeDrains(t *testing.T) {
	// Everything serve started has stopped when it returns.
	before := goleak.IgnoreCurrent()
	defer func() {
		http.DefaultClient.CloseIdleConnections()
		goleak.VerifyNone(t, before)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	args := []string{"serve", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0", "--data", t.TempDir()}
	go func() {
		done <- run(ctx, args, strings.NewReader(""), io.Discard, stderr, []string{"MEMRANK_SHUTDOWN__DRAIN=2s"})
	}()
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; {
		if m := listenLine.FindStringSubmatch(stderr.String()); m != nil {
			base = "http://" + m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never listened; stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	status := func(path string) int {
		resp, err := http.Get(base + path)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status("/readyz"); got != http.StatusOK {
		t.Fatalf("/readyz before the stop: %d", got)
	}
	stopped := time.Now()
	cancel()
	// Readiness flips at once; requests are still answered.
	for deadline := time.Now().Add(time.Second); status("/readyz") != http.StatusServiceUnavailable; {
		if time.Now().After(deadline) {
			t.Fatal("/readyz did not fail after the stop")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := status("/healthz"); got != http.StatusOK {
		t.Errorf("/healthz while draining: %d, want 200 (still serving)", got)
	}
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d; stderr:\n%s", code, stderr.String())
		}
		if d := time.Since(stopped); d < 2*time.Second {
			t.Errorf("stopped %v after SIGTERM, before the 2s drain", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop; stderr:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "draining") {
		t.Errorf("the drain is not logged; stderr:\n%s", stderr.String())
	}
}
