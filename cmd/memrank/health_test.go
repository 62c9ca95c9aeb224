package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHealth: `memrank health` exits 0 on a serving memrank (readiness and
// liveness), 1 when nothing answers or the path is not 200, 2 on bad flags;
// without --url it probes the configured listen.http.
func TestHealth(t *testing.T) {
	httpAddr, _, _ := startServe(t, "--demo", "--data", t.TempDir())
	port := httpAddr[strings.LastIndex(httpAddr, ":"):]
	closed := freeAddr(t)
	tests := []struct {
		name    string
		environ []string
		args    []string
		code    int
		out     string
	}{
		{"ready", nil, []string{"--url", "http://" + httpAddr}, exitOK, "/readyz: ok"},
		{"live", nil, []string{"--url", "http://" + httpAddr + "/", "--path", "/healthz"}, exitOK, "/healthz: ok"},
		{"from listen.http", []string{"MEMRANK_LISTEN__HTTP=" + port}, nil, exitOK, "http://localhost" + port + "/readyz: ok"},
		{"nothing listens", nil, []string{"--url", "http://" + closed}, exitFailure, "connection refused"},
		{"not 200", nil, []string{"--url", "http://" + httpAddr, "--path", "/nope"}, exitFailure, ": 404 "},
		{"bad url", nil, []string{"--url", "ftp://x"}, exitUsage, "want http://HOST:PORT"},
		{"bad path", nil, []string{"--url", "http://" + httpAddr, "--path", "readyz"}, exitUsage, "must start with /"},
		{"bad listen", []string{"MEMRANK_LISTEN__HTTP=6333"}, nil, exitUsage, "listen.http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"health"}, tt.args...), strings.NewReader(""), &stdout, &stderr, tt.environ)
			if code != tt.code || !strings.Contains(stdout.String()+stderr.String(), tt.out) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", code, stdout.String(), stderr.String(), tt.code, tt.out)
			}
		})
	}
}
