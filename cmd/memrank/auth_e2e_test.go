package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memrank/memrank/internal/demo"
)

// TestEmbeddedStoreKeys: with store.api_key the embedded store behind
// serve answers as Qdrant does: no key is 401, the read-only key reads and
// may not write, the key does both; memrank's own work (the demo load)
// carries the key itself.
func TestEmbeddedStoreKeys(t *testing.T) {
	httpAddr, _, stop := startServeEnv(t, []string{
		"MEMRANK_STORE__API_KEY=rw-key",
		"MEMRANK_STORE__READ_ONLY_API_KEY=ro-key",
	}, "--demo", "--data", t.TempDir(), "--http", "127.0.0.1:0")
	do := func(method, path, body, key string) (int, string) {
		t.Helper()
		return jsonRequest(t, method, "http://"+httpAddr+path, body, "api-key", key)
	}
	retrieve := `{"collection":"` + demo.Collection + `","text":"what editor does Dana use","limit":1}`
	for _, tt := range []struct {
		name, method, path, body, key string
		code                          int
	}{
		{"no key", "POST", "/v1/retrieve", retrieve, "", 401},
		{"wrong key", "POST", "/v1/retrieve", retrieve, "nope", 403},
		{"read-only retrieve", "POST", "/v1/retrieve", retrieve, "ro-key", 200},
		{"read-only query", "POST", "/collections/" + demo.Collection + "/points/query", `{"query":[` + strings.Repeat("0.1,", 383) + `0.1]}`, "ro-key", 200},
		{"read-only delete", "DELETE", "/collections/" + demo.Collection, ``, "ro-key", 403},
		{"read-write observe", "POST", "/v1/observe", `{"collection":"` + demo.Collection + `","text":"Dana now uses Helix"}`, "rw-key", 200},
		{"health", "GET", "/healthz", ``, "", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if code, body := do(tt.method, tt.path, tt.body, tt.key); code != tt.code {
				t.Errorf("HTTP %d %s, want %d", code, body, tt.code)
			}
		})
	}
	if _, stderr := stop(); strings.Contains(stderr, "WARNING") {
		t.Errorf("a warning with the store protected: %s", stderr)
	}
}

// TestOpenStoreWarning: an open store on an address beyond loopback is
// served, with a warning at start.
func TestOpenStoreWarning(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"qdrant-compat", "--data", t.TempDir(), "--grpc", "0.0.0.0:0"}, strings.NewReader(""), &bytes.Buffer{}, &stderr, nil)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "serving") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	if !strings.Contains(stderr.String(), "WARNING: open (no $MEMRANK_STORE__API_KEY) on 0.0.0.0:0") {
		t.Errorf("stderr %q", stderr.String())
	}
}

// TestQdrantCompatRESTKeys: qdrant-compat's REST port checks the store's
// key as its gRPC port does.
func TestQdrantCompatRESTKeys(t *testing.T) {
	grpcAddr, httpAddr := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"qdrant-compat", "--data", t.TempDir(), "--grpc", grpcAddr, "--http", httpAddr},
			strings.NewReader(""), io.Discard, io.Discard, []string{"MEMRANK_STORE__API_KEY=secretkey-123"})
	}()
	defer func() { cancel(); <-done }()
	var code int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get("http://" + httpAddr + "/collections")
		if err == nil {
			code = resp.StatusCode
			resp.Body.Close()
			break
		}
	}
	if code != http.StatusUnauthorized {
		t.Errorf("GET /collections without a key: %d", code)
	}
	if c, body := jsonRequest(t, "PUT", "http://"+httpAddr+"/collections/pwned", `{"vectors":{"size":2,"distance":"Cosine"}}`); c != http.StatusUnauthorized {
		t.Errorf("PUT without a key: %d %s", c, body)
	}
	if c, body := jsonRequest(t, "PUT", "http://"+httpAddr+"/collections/ok", `{"vectors":{"size":2,"distance":"Cosine"}}`, "api-key", "secretkey-123"); c != 200 {
		t.Errorf("PUT with the key: %d %s", c, body)
	}
}
