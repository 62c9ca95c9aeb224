package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/internal/demo"
	"github.com/memrank/memrank/internal/testpki"
)

// TestTLS: memrank serves both ports over TLS from certificate files, and
// a second memrank reaches it as its upstream over TLS, trusting the CA
// file (as it would reach Qdrant Cloud); without tls.enabled it cannot.
func TestTLS(t *testing.T) {
	p := testpki.New(t)
	p.Leaf(t, "memrank", "server.pem", "server-key.pem")
	httpA, grpcA, _ := startServeEnv(t, []string{
		"MEMRANK_LISTEN__TLS__CERT_FILE=" + p.Path("server.pem"),
		"MEMRANK_LISTEN__TLS__KEY_FILE=" + p.Path("server-key.pem"),
	}, "--demo", "--data", t.TempDir())

	pool := x509.NewCertPool()
	ca, err := os.ReadFile(p.Path("ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	resp, err := hc.Get("https://" + httpA + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /healthz over TLS: %d", resp.StatusCode)
	}
	host, port, _ := net.SplitHostPort(grpcA)
	pn, _ := strconv.Atoi(port)
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: pn, UseTLS: true, TLSConfig: &tls.Config{RootCAs: pool}, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if ok, err := c.CollectionExists(ctx, demo.Collection); err != nil || !ok {
		t.Fatalf("gRPC over TLS: %v %v", ok, err)
	}

	// B in front of A, over TLS.
	httpB, _, _ := startServeEnv(t, []string{
		"MEMRANK_UPSTREAM__TLS__ENABLED=true",
		"MEMRANK_UPSTREAM__TLS__CA_FILE=" + p.Path("ca.pem"),
	}, "--upstream", grpcA)
	code, body := post(t, "http://"+httpB+"/v1/retrieve", `{"collection":"`+demo.Collection+`","text":"what editor does Dana use","limit":1}`)
	if code != 200 || !strings.Contains(string(body), `"reranked":true`) {
		t.Errorf("through a TLS upstream: %d %s", code, body)
	}
	// C in front of A without TLS: the upstream is unreachable.
	httpC, _, _ := startServe(t, "--upstream", grpcA)
	code, body = post(t, "http://"+httpC+"/v1/retrieve", `{"collection":"`+demo.Collection+`","text":"editor","limit":1}`)
	if code != http.StatusServiceUnavailable {
		t.Errorf("a plain-text dial to a TLS upstream: %d %s", code, body)
	}
}
