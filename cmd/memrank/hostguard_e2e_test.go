package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memrank/memrank/tenancy"
)

// guardCase is one request to a running serve, by a Host name of its
// choosing, and what must come back.
type guardCase struct {
	name    string
	host    string // ":PORT" is appended
	path    string
	headers map[string]string
	code    int
	says    string
}

// runGuardCases sends each case to the serve at httpAddr.
func runGuardCases(t *testing.T, httpAddr string, cases []guardCase) {
	t.Helper()
	port := httpAddr[strings.LastIndex(httpAddr, ":"):]
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+httpAddr+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tt.host + port
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.code || !strings.Contains(string(b), tt.says) {
				t.Errorf("GET %s by %s: HTTP %d %.300s, want %d saying %q", tt.path, req.Host, resp.StatusCode, b, tt.code, tt.says)
			}
		})
	}
}

// TestServeRefusesRebindingOnAnOpenPort: the demo needs no credential, so
// a DNS rebinding page's requests (a plain GET by the attacker's name, no
// Origin, no Sec-Fetch-*, as a browser sends them over plain http) would
// read everything; every request by a name memrank was not given is
// refused, the refusal says what to do and is logged once. By an IP
// address, localhost or a listed name, clients get through.
func TestServeRefusesRebindingOnAnOpenPort(t *testing.T) {
	httpAddr, _, stop := startServeEnv(t, []string{"MEMRANK_LISTEN__ALLOWED_HOSTS=[memrank.internal]"}, "--demo", "--data", t.TempDir())
	stats := "/v1/stats?collection=dana_memories"
	runGuardCases(t, httpAddr, []guardCase{
		{"a rebinding page reads stats", "evil.example", stats, nil, 403, "DNS rebinding protection): add it to listen.allowed_hosts"},
		{"a rebinding page lists collections", "evil.example", "/collections", nil, 403, `memrank was reached as \"evil.example:`},
		{"a rebinding page reads a memory", "evil.example", "/collections/dana_memories/points/1", nil, 403, "DNS rebinding"},
		{"a rebinding page sets the tenant header", "evil.example", stats, map[string]string{"X-Tenant": "alice"}, 403, "DNS rebinding"},
		{"a client by an unlisted name", "memrank.svc", "/collections", nil, 403, "DNS rebinding"},
		{"a client by an IP address", "127.0.0.1", stats, nil, 200, `"memories":`},
		{"a client by localhost", "localhost", "/collections", nil, 200, `"dana_memories"`},
		{"a client by a listed name", "memrank.internal", stats, nil, 200, `"memories":`},
		{"a browser by a listed name", "memrank.internal", "/collections", map[string]string{"Sec-Fetch-Site": "same-origin"}, 200, `"dana_memories"`},
		{"another origin's page", "127.0.0.1", "/collections", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403, "another origin"},
	})
	_, stderr := stop()
	if n := strings.Count(stderr, `"host":"evil.example"`); n != 1 {
		t.Errorf("the refusals by evil.example were logged %d times, want once:\n%s", n, stderr)
	}
	if !strings.Contains(stderr, `"host":"memrank.svc"`) {
		t.Errorf("the refusal by memrank.svc was not logged:\n%s", stderr)
	}
}

// TestServeKeyedPortTakesAnyName: with tenants by API key every request
// needs a key a rebinding page cannot know, so clients that are not
// browsers reach memrank by any name (a proxy's, a Service's); browsers
// are still held to the allowed names, and a request without a key is
// refused by tenancy.
func TestServeKeyedPortTakesAnyName(t *testing.T) {
	httpAddr, _, _ := startServeEnv(t, []string{
		"MEMRANK_TENANCY__KEY=user_id",
		"MEMRANK_TENANCY__API_KEYS=key-alice=alice",
		"MEMRANK_TENANCY__ADMIN_API_KEYS=[key-root]",
	}, "--demo", "--data", t.TempDir())
	alice := map[string]string{"api-key": "key-alice"}
	runGuardCases(t, httpAddr, []guardCase{
		{"a tenant by an unlisted name", "memrank.svc", "/v1/stats?collection=dana_memories", alice, 200, `"memories":`},
		{"the administrator by an unlisted name", "memrank.svc", "/collections", map[string]string{"Authorization": "Bearer key-root"}, 200, `"dana_memories"`},
		{"a rebinding page, no key", "evil.example", "/v1/stats?collection=dana_memories", nil, 401, tenancy.ErrUnauthenticated.Error()},
		{"a rebinding page, no key, Qdrant's API", "evil.example", "/collections", nil, 401, tenancy.ErrUnauthenticated.Error()},
		{"a browser by an unlisted name", "evil.example", "/collections", map[string]string{"Sec-Fetch-Site": "same-origin", "api-key": "key-root"}, 403, "DNS rebinding"},
		{"the page by an unlisted name", "evil.example", "/ui", nil, 403, "DNS rebinding"},
	})
}

// TestNeedsCredential: which configurations make every data request carry
// a credential (the host guard then checks browsers only), the same
// answer warnOpenStore gives.
func TestNeedsCredential(t *testing.T) {
	tests := []struct {
		name string
		set  func(*Config)
		want bool
	}{
		{"the embedded store without a key", func(*Config) {}, false},
		{"the embedded store with a key", func(c *Config) { c.Store.APIKey = "k" }, true},
		{"an external Qdrant", func(c *Config) { c.Upstream.GRPC = "qdrant:6334" }, false},
		{"an external Qdrant with memrank's own key", func(c *Config) { c.Upstream.GRPC, c.Upstream.APIKey = "qdrant:6334", "k" }, false},
		{"an external Qdrant, a store key unused", func(c *Config) { c.Upstream.GRPC, c.Store.APIKey = "qdrant:6334", "k" }, false},
		{"tenants by API key", func(c *Config) {
			c.Upstream.GRPC, c.Tenancy.Key, c.Tenancy.APIKeys = "qdrant:6334", "user_id", map[string]string{"k": "alice"}
		}, true},
		{"tenants by JWT", func(c *Config) { c.Tenancy.Key, c.Tenancy.JWT.Claim = "user_id", "sub" }, true},
		{"tenants by a header anyone can set", func(c *Config) { c.Tenancy.Key, c.Tenancy.Header = "user_id", "X-Tenant" }, false},
		{"tenants by header on a keyed store", func(c *Config) { c.Tenancy.Key, c.Tenancy.Header, c.Store.APIKey = "user_id", "X-Tenant", "k" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := defaultConfig()
			tt.set(&c)
			if got := needsCredential(c); got != tt.want {
				t.Errorf("needsCredential = %v, want %v", got, tt.want)
			}
		})
	}
}
