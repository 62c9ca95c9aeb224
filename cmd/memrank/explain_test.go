package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExplainURLCountsNoAccess: explain --url asks the server not to count
// its reads (count_access false), as explain in process counts none: a
// person looking at a ranking must not raise the access boost of what they
// look at.
func TestExplainURLCountsNoAccess(t *testing.T) {
	var mu sync.Mutex
	var got []map[string]any
	srv := retrieveStub(t, func(_ http.Header, body map[string]any) {
		mu.Lock()
		got = append(got, body)
		mu.Unlock()
	})

	tests := []struct {
		name  string
		query []string
		want  map[string]any
	}{
		{"a text", []string{"--text", "where does Dana live"},
			map[string]any{"collection": "m", "text": "where does Dana live", "limit": 3.0, "offset": 0.0, "explain": true, "count_access": false}},
		{"a vector", []string{"--vector", "[0.5,1]"},
			map[string]any{"collection": "m", "vector": []any{0.5, 1.0}, "limit": 3.0, "offset": 0.0, "explain": true, "count_access": false}},
		{"as of a time, sent in UTC", []string{"--text", "x", "--at", "2026-06-01T12:00:00.5+02:00"},
			map[string]any{"collection": "m", "text": "x", "limit": 3.0, "offset": 0.0, "explain": true, "count_access": false, "at": "2026-06-01T10:00:00.5Z"}},
		{"as of a date: its 00:00 UTC", []string{"--text", "x", "--at", "2026-06-01"},
			map[string]any{"collection": "m", "text": "x", "limit": 3.0, "offset": 0.0, "explain": true, "count_access": false, "at": "2026-06-01T00:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			args := append([]string{"explain", "--url", srv.URL, "--collection", "m", "--limit", "3", "--json"}, tt.query...)
			if code, stdout, stderr := runCLI(t, args...); code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff([]map[string]any{tt.want}, got); diff != "" {
				t.Errorf("retrieve bodies (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExplainAtRefused: an --at that is no time is a usage error before
// any call, naming the flag.
func TestExplainAtRefused(t *testing.T) {
	calls := 0
	srv := retrieveStub(t, func(http.Header, map[string]any) { calls++ })
	for _, at := range []string{"yesterday", "2026-13-01", "2026-06-01 12:00"} {
		r := execute(t, newExplainCmd, "", nil, "--url", srv.URL, "--collection", "m", "--text", "x", "--at", at)
		if r.code != 2 || !strings.Contains(r.stderr, "--at \""+at+"\": want an RFC 3339 time (2026-06-01T12:00:00Z) or a date (2026-06-01)") {
			t.Errorf("--at %q: exit %d, stderr %q; want a usage error naming --at", at, r.code, r.stderr)
		}
	}
	if calls != 0 {
		t.Errorf("%d calls reached the server", calls)
	}
}

// TestExplainURLTenantHeader: with --url the tenant goes in --tenant-header
// (the server's tenancy), or in the local tenancy.header when that is not
// given; with neither, explain refuses before calling.
func TestExplainURLTenantHeader(t *testing.T) {
	var mu sync.Mutex
	var headers []http.Header
	srv := retrieveStub(t, func(h http.Header, _ map[string]any) {
		mu.Lock()
		headers = append(headers, h)
		mu.Unlock()
	})
	tests := []struct {
		name    string
		environ []string
		args    []string
		header  string // "" when refused
		want    string // the refusal; default: no header to send the tenant in
	}{
		{name: "--tenant-header", args: []string{"--tenant-header", "X-Org-Tenant"}, header: "X-Org-Tenant"},
		{name: "tenancy.header", environ: []string{"MEMRANK_TENANCY__KEY=user_id", "MEMRANK_TENANCY__HEADER=x-tenant"}, header: "X-Tenant"},
		{name: "no header", args: nil},
		{name: "tenancy.header alone in the local config", environ: []string{"MEMRANK_TENANCY__HEADER=x-tenant"},
			want: "with --url, tenancy is the server's: give the header it takes tenants from with --tenant-header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			headers = nil
			mu.Unlock()
			args := append([]string{"--url", srv.URL, "--collection", "m", "--text", "x", "--json", "--tenant", "alice"}, tt.args...)
			r := execute(t, newExplainCmd, "", tt.environ, args...)
			mu.Lock()
			defer mu.Unlock()
			if tt.header == "" {
				want := tt.want
				if want == "" {
					want = "--tenant: give --tenant-header NAME"
				}
				if r.code != 2 || !strings.Contains(r.stderr, want) || len(headers) != 0 {
					t.Errorf("exit %d, %d calls, stderr %q; want a usage error before any call", r.code, len(headers), r.stderr)
				}
				return
			}
			if r.code != 0 || len(headers) != 1 {
				t.Fatalf("exit %d, %d calls: %s", r.code, len(headers), r.stderr)
			}
			if got := headers[0].Get(tt.header); got != "alice" {
				t.Errorf("%s: %q, want alice (headers %v)", tt.header, got, headers[0])
			}
		})
	}
}

// retrieveStub is a memrank whose /v1/retrieve answers nothing found; it
// hands each request's headers and JSON body to seen.
func retrieveStub(t *testing.T, seen func(http.Header, map[string]any)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/retrieve" || json.Unmarshal(b, &body) != nil {
			http.Error(w, `{"status":{"error":"unexpected"}}`, http.StatusBadRequest)
			return
		}
		seen(r.Header.Clone(), body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"result":[],"status":"ok","time":0,"reranked":true,"mode":"rerank","detection":"d","guard":null,"dropped":[]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestExplainWidth: the table fits $COLUMNS when stdout is no terminal,
// and without it, or with --wide, prints every column (the golden tables
// of internal/explaintable).
func TestExplainWidth(t *testing.T) {
	answer, err := os.ReadFile(filepath.Join("..", "..", "internal", "explaintable", "testdata", "demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	tests := []struct {
		name    string
		environ []string
		args    []string
		golden  string
	}{
		{"$COLUMNS", []string{"COLUMNS=100"}, nil, "demo-100.golden"},
		{"--wide over $COLUMNS", []string{"COLUMNS=100"}, []string{"--wide"}, "demo.golden"},
		{"no $COLUMNS: every column", nil, nil, "demo.golden"},
		{"$COLUMNS not a number", []string{"COLUMNS=wide"}, nil, "demo.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("..", "..", "internal", "explaintable", "testdata", tt.golden))
			if err != nil {
				t.Fatal(err)
			}
			args := append([]string{"--url", srv.URL, "--collection", "dana_memories", "--text", "what editor does Dana use"}, tt.args...)
			r := execute(t, newExplainCmd, "", tt.environ, args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if diff := cmp.Diff(string(want), r.stdout); diff != "" {
				t.Errorf("table (-%s +got):\n%s", tt.golden, diff)
			}
		})
	}
}
