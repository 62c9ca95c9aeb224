package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/store"
)

// freeAddr reserves a loopback port and releases it for the command to take.
func freeAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// TestQdrantCompatServes runs `memrank qdrant-compat`, talks to it with the
// official go-client, stops it as SIGTERM would (context cancel), and checks
// the data survives a second run on the same directory.
func TestQdrantCompatServes(t *testing.T) {
	dir := t.TempDir()
	start := func() (addr string, stop func() (int, string)) {
		addr = freeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		var stderr bytes.Buffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"qdrant-compat", "--data", dir, "--grpc", addr}, strings.NewReader(""), &bytes.Buffer{}, &stderr, nil)
		}()
		return addr, func() (int, string) {
			cancel()
			select {
			case code := <-done:
				return code, stderr.String()
			case <-time.After(20 * time.Second):
				t.Fatal("qdrant-compat did not stop")
				return 0, ""
			}
		}
	}
	connect := func(addr string) *qdrant.Client {
		host, port, _ := net.SplitHostPort(addr)
		p, err := strconv.Atoi(port)
		if err != nil {
			t.Fatal(err)
		}
		var client *qdrant.Client
		deadline := time.Now().Add(10 * time.Second)
		for {
			client, err = qdrant.NewClient(&qdrant.Config{Host: host, Port: p, SkipCompatibilityCheck: true})
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				_, err = client.HealthCheck(ctx)
				cancel()
				if err == nil {
					return client
				}
				client.Close()
			}
			if time.Now().After(deadline) {
				t.Fatalf("qdrant-compat at %s never answered: %v", addr, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	addr, stop := start()
	client := connect(addr)
	ctx := context.Background()
	reply, err := client.HealthCheck(ctx)
	if err != nil || !strings.Contains(reply.GetTitle(), "not Qdrant") {
		t.Fatalf("health: %v %v", reply, err)
	}
	if err := client.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "m",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "m", Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(7), Vectors: qdrant.NewVectors(1, 0), Payload: qdrant.NewValueMap(map[string]any{"text": "hi"})},
	}}); err != nil {
		t.Fatal(err)
	}
	client.Close()

	// A second server on the same directory fails at once, naming the reason.
	var stderr bytes.Buffer
	code := run(ctx, []string{"qdrant-compat", "--data", dir, "--grpc", freeAddr(t)}, strings.NewReader(""), &bytes.Buffer{}, &stderr, nil)
	if code != exitFailure || !strings.Contains(stderr.String(), "in use by another process") {
		t.Errorf("second server: exit %d, stderr %q", code, stderr.String())
	}

	if code, errText := stop(); code != exitOK {
		t.Fatalf("stop: exit %d: %s", code, errText)
	}

	addr, stop = start()
	client = connect(addr)
	pts, err := client.Get(ctx, &qdrant.GetPoints{CollectionName: "m", Ids: []*qdrant.PointId{qdrant.NewIDNum(7)},
		WithPayload: qdrant.NewWithPayload(true)})
	client.Close()
	if err != nil || len(pts) != 1 || pts[0].GetPayload()["text"].GetStringValue() != "hi" {
		t.Errorf("after restart: %v %v", pts, err)
	}
	if code, errText := stop(); code != exitOK {
		t.Fatalf("stop: exit %d: %s", code, errText)
	}
}

var compatListenLine = regexp.MustCompile(`memrank qdrant-compat: serving .* on (\S+) \((gRPC|REST)\)`)

// startQdrantCompat runs `memrank qdrant-compat` on dir with args (listen
// flags) and returns the addresses it printed, by protocol ("gRPC",
// "REST"), once every one in want is listening, and a stop function that
// cancels it as SIGTERM would and returns its exit code and stderr.
func startQdrantCompat(t *testing.T, dir string, want []string, args ...string) (addrs map[string]string, stop func() (int, string)) {
	t.Helper()
	return startQdrantCompatEnv(t, dir, want, nil, args...)
}

// startQdrantCompatEnv is startQdrantCompat with the environment environ.
func startQdrantCompatEnv(t *testing.T, dir string, want, environ []string, args ...string) (addrs map[string]string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	args = append([]string{"qdrant-compat", "--data", dir}, args...)
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
				t.Fatalf("qdrant-compat did not stop; stderr:\n%s", stderr.String())
			}
		}
		return code, stderr.String()
	}
	t.Cleanup(func() { stop() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		addrs = map[string]string{}
		for _, m := range compatListenLine.FindAllStringSubmatch(stderr.String(), -1) {
			addrs[m[2]] = m[1]
		}
		missing := false
		for _, p := range want {
			missing = missing || addrs[p] == ""
		}
		if !missing {
			return addrs, stop
		}
		select {
		case code := <-done:
			t.Fatalf("qdrant-compat exited with %d before listening; stderr:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("qdrant-compat never listened; stderr:\n%s", stderr.String())
		}
	}
}

// TestQdrantCompatREST: with --http, qdrant-compat also serves Qdrant's
// REST API for the same store, unranked: a collection made and filled over
// REST answers a REST query in plain similarity order with the raw cosine
// scores and payloads, the gRPC listener sees the same points, nothing is
// written back, and both listeners stop cleanly.
func TestQdrantCompatREST(t *testing.T) {
	addrs, stop := startQdrantCompat(t, t.TempDir(), []string{"gRPC", "REST"},
		"--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0")
	base := "http://" + addrs["REST"]

	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	// result strips the envelope's time, the one field that varies.
	result := func(body string) string {
		t.Helper()
		var env struct {
			Result json.RawMessage `json:"result"`
			Status any             `json:"status"`
		}
		if err := json.Unmarshal([]byte(body), &env); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return string(env.Result)
	}

	if code, body := do("GET", "/", ""); code != http.StatusOK || !strings.Contains(body, `"title":"memrank embedded store (not Qdrant)"`) {
		t.Fatalf("GET /: %d %s", code, body)
	}
	for _, tc := range []struct {
		name, method, path, body string
		want                     string // the result, exactly; "" checks the status only
	}{
		{"create", "PUT", "/collections/docs", `{"vectors":{"size":2,"distance":"Cosine"}}`, `true`},
		// Near-duplicates, memory-like fields and an access count that a
		// re-ranker would fold, re-weight or bump: the store ignores them.
		{"upsert", "PUT", "/collections/docs/points?wait=true", `{"points":[
			{"id":1,"vector":[1,0],"payload":{"text":"the meeting is on Tuesday","created_at":"2020-01-01T00:00:00Z"}},
			{"id":2,"vector":[1,0.01],"payload":{"text":"the meeting is on Tuesday.","access_counts":{"r1":50}}},
			{"id":3,"vector":[0,1],"payload":{"text":"unrelated"}},
			{"id":4,"vector":[-1,0.2],"payload":{"text":"opposite"}}]}`, ""},
		{"query", "POST", "/collections/docs/points/query", `{"query":[1,0],"limit":4,"with_payload":["text"]}`,
			`{"points":[` +
				`{"id":1,"version":1,"score":1.0,"payload":{"text":"the meeting is on Tuesday"}},` +
				`{"id":2,"version":1,"score":0.99995005,"payload":{"text":"the meeting is on Tuesday."}},` +
				`{"id":3,"version":1,"score":0.0,"payload":{"text":"unrelated"}},` +
				`{"id":4,"version":1,"score":-0.9805807,"payload":{"text":"opposite"}}]}`},
		{"count", "POST", "/collections/docs/points/count", `{"exact":true}`, `{"count":4}`},
		{"payload untouched", "POST", "/collections/docs/points", `{"ids":[1],"with_payload":true}`,
			`[{"id":1,"payload":{"created_at":"2020-01-01T00:00:00Z","text":"the meeting is on Tuesday"}}]`},
	} {
		code, body := do(tc.method, tc.path, tc.body)
		if code != http.StatusOK {
			t.Fatalf("%s: %s %s: %d %s", tc.name, tc.method, tc.path, code, body)
		}
		if tc.want != "" {
			if diff := cmp.Diff(tc.want, result(body)); diff != "" {
				t.Errorf("%s: result (-want +got):\n%s", tc.name, diff)
			}
		}
	}

	// The gRPC listener serves the same store.
	host, port, _ := net.SplitHostPort(addrs["gRPC"])
	p, _ := strconv.Atoi(port)
	client, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n, err := client.Count(ctx, &qdrant.CountPoints{CollectionName: "docs"}); err != nil || n != 4 {
		t.Errorf("gRPC count = %d, %v; want 4", n, err)
	}

	if code, stderr := stop(); code != exitOK {
		t.Fatalf("stop: exit %d: %s", code, stderr)
	}
}

// TestQdrantCompatHostGuard: qdrant-compat's REST port refuses what serve's
// HTTP port refuses: without an API key, any request by a host name it was
// not given (a DNS rebinding page's); with one, browsers of other sites
// only. Its refusal names the flag that allows a name.
func TestQdrantCompatHostGuard(t *testing.T) {
	const key = "compat-key-1"
	tests := []struct {
		name    string
		environ []string
		flags   []string
		host    string
		header  map[string]string
		want    int
	}{
		{name: "open, IP address", want: http.StatusOK},
		{name: "open, localhost", host: "localhost", want: http.StatusOK},
		{name: "open, rebound name", host: "attacker.example", want: http.StatusForbidden},
		{name: "open, listed name", flags: []string{"--allowed-hosts", "store.internal"}, host: "store.internal", want: http.StatusOK},
		{name: "open, any name", flags: []string{"--allowed-hosts", "*"}, host: "attacker.example", want: http.StatusOK},
		{name: "open, page of another site", header: map[string]string{"Origin": "http://attacker.example"}, want: http.StatusForbidden},
		{name: "keyed, any name with the key", environ: []string{"MEMRANK_STORE__API_KEY=" + key}, host: "store.svc",
			header: map[string]string{"api-key": key}, want: http.StatusOK},
		{name: "keyed, browser of another site", environ: []string{"MEMRANK_STORE__API_KEY=" + key}, host: "store.svc",
			header: map[string]string{"api-key": key, "Origin": "http://attacker.example"}, want: http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0"}, tc.flags...)
			addrs, _ := startQdrantCompatEnv(t, t.TempDir(), []string{"gRPC", "REST"}, tc.environ, args...)
			req, err := http.NewRequest(http.MethodGet, "http://"+addrs["REST"]+"/collections", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.host != "" {
				_, port, _ := net.SplitHostPort(addrs["REST"])
				req.Host = net.JoinHostPort(tc.host, port)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.want {
				t.Fatalf("GET /collections by %q: %d %s, want %d", req.Host, resp.StatusCode, body, tc.want)
			}
			if tc.want == http.StatusForbidden && tc.host != "" && !strings.Contains(string(body), "--allowed-hosts") {
				t.Errorf("refusal %s does not name --allowed-hosts", body)
			}
		})
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "not a host name", args: []string{"--http", "127.0.0.1:0", "--allowed-hosts", "http://x"},
			want: `--allowed-hosts: "http://x" is not a host name`},
		{name: "any name among others", args: []string{"--http", "127.0.0.1:0", "--allowed-hosts", "*,store"},
			want: `--allowed-hosts: "*" (every host name) must be the only entry`},
		{name: "without --http", args: []string{"--allowed-hosts", "store"}, want: "--allowed-hosts: only with --http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr syncBuffer
			dir := t.TempDir()
			args := append([]string{"qdrant-compat", "--data", dir, "--grpc", "127.0.0.1:0"}, tc.args...)
			// Bounded: a flag that is not refused serves until ctx ends.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			code := run(ctx, args, strings.NewReader(""), io.Discard, &stderr, nil)
			if code != 2 || !strings.Contains(stderr.String(), tc.want) || strings.Contains(stderr.String(), "hostguard") {
				t.Errorf("exit %d, stderr %s; want a usage error %q", code, stderr.String(), tc.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("the store was opened (%d entries in its directory) before the flags were checked", len(entries))
			}
		})
	}
}

func TestQdrantCompatWarnOpen(t *testing.T) {
	const names = "--allowed-hosts"
	tests := []struct {
		name string
		f    storeFlags
		auth store.Auth
		want []string // substrings; nil: no warning at all
	}{
		{name: "loopback", f: storeFlags{grpc: "127.0.0.1:6334", http: "127.0.0.1:6333"}},
		{name: "keyed", f: storeFlags{grpc: "0.0.0.0:6334", http: "0.0.0.0:6333"}, auth: store.Auth{APIKey: "k"}},
		{name: "open REST on all interfaces", f: storeFlags{grpc: "127.0.0.1:6334", http: ":6333"},
			want: []string{"open (no $MEMRANK_STORE__API_KEY) on :6333", "--http :6333 answers requests by IP address or localhost only"}},
		{name: "names given", f: storeFlags{grpc: "127.0.0.1:6334", http: ":6333", allowedHosts: []string{"store"}},
			want: []string{"open (no $MEMRANK_STORE__API_KEY) on :6333"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			tc.f.warnOpen(&b, tc.auth)
			out := b.String()
			if tc.want == nil && out != "" {
				t.Errorf("warned:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("warning lacks %q:\n%s", w, out)
				}
			}
			if got, want := strings.Contains(out, names), tc.f.http != "" && len(tc.f.allowedHosts) == 0 && tc.want != nil; got != want {
				t.Errorf("names %s: %v, want %v:\n%s", names, got, want, out)
			}
		})
	}
}
