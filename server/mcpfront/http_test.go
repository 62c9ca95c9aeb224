package mcpfront

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memrank/memrank/client"
)

// headerTransport adds headers to every request, as an MCP client
// configured with credentials does.
type headerTransport struct {
	header http.Header
	next   http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range h.header {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	return h.next.RoundTrip(r)
}

// connectHTTP connects the SDK's client to h over streamable HTTP, sending
// header with every request.
func connectHTTP(t *testing.T, url string, header http.Header) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: headerTransport{header, http.DefaultTransport}, Timeout: 10 * time.Second},
		MaxRetries: -1,
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestHTTPCredentials: over streamable HTTP each call carries exactly the
// credentials of the HTTP request that brought it (api-key, Authorization
// and the tenant header) and no other header; never the base client's own
// key, so a caller without credentials is refused by the native API.
func TestHTTPCredentials(t *testing.T) {
	f, api := newFake(t, fakeAnswers())
	srv, err := New(Config{API: apiClient(t, api.URL, client.WithAPIKey("servers-own-key")), Collection: "notes", TenantHeader: "X-Tenant"})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(Handler(srv, HTTPOptions{}))
	defer front.Close()
	defer http.DefaultTransport.(*http.Transport).CloseIdleConnections()

	type creds struct{ APIKey, Authorization, Tenant, Cookie string }
	for _, tt := range []struct {
		name   string
		header http.Header
		want   creds
		err    string
	}{
		{"api key and tenant", http.Header{"Api-Key": {"key-alice"}, "X-Tenant": {"alice"}, "Cookie": {"session=1"}},
			creds{APIKey: "key-alice", Tenant: "alice"}, ""},
		{"bearer", http.Header{"Authorization": {"Bearer tok"}}, creds{Authorization: "Bearer tok"}, ""},
		{"none", http.Header{}, creds{}, ""},
		{"two keys", http.Header{"Api-Key": {"a", "b"}}, creds{}, "the request carries 2 Api-Key headers: send one"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := connectHTTP(t, front.URL, tt.header)
			before := len(f.requests())
			res := call(t, cs, "stats", map[string]any{})
			if tt.err != "" {
				if !res.IsError || !strings.Contains(text(res), tt.err) {
					t.Fatalf("got %v %q, want the tool error %q", res.IsError, text(res), tt.err)
				}
				if n := len(f.requests()) - before; n != 0 {
					t.Fatalf("%d requests reached the native API", n)
				}
				return
			}
			if res.IsError {
				t.Fatalf("tool error: %s", text(res))
			}
			got := f.requests()[before:]
			if len(got) != 1 {
				t.Fatalf("%d requests reached the native API, want 1", len(got))
			}
			h := got[0].Header
			if diff := cmp.Diff(tt.want, creds{h.Get("Api-Key"), h.Get("Authorization"), h.Get("X-Tenant"), h.Get("Cookie")}); diff != "" {
				t.Errorf("credentials forwarded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHTTPHandler: the handler is the streamable transport, stateless:
// it answers JSON, refuses GET (no stream to keep) and, unless a host
// guard stands in front, a Host that is not loopback on a loopback
// listener (the SDK's DNS rebinding check).
func TestHTTPHandler(t *testing.T) {
	_, api := newFake(t, fakeAnswers())
	srv, err := New(Config{API: apiClient(t, api.URL)})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(Handler(srv, HTTPOptions{}))
	defer front.Close()
	guarded := httptest.NewServer(Handler(srv, HTTPOptions{HostGuarded: true}))
	defer guarded.Close()
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}`
	for _, tt := range []struct {
		name, method, host string
		srv                *httptest.Server
		code               int
		want               string
	}{
		{"initialize", "POST", "", front, 200, `"serverInfo":{"name":"memrank"`},
		{"get", "GET", "", front, 405, ""},
		{"rebinding", "POST", "evil.example:80", front, 403, "invalid Host header"},
		{"behind a host guard", "POST", "memrank.example:443", guarded, 200, `"serverInfo":{"name":"memrank"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, tt.srv.URL, strings.NewReader(initialize))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.host != "" {
				req.Host = tt.host
			}
			resp, err := tt.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b strings.Builder
			if _, err := io.Copy(&b, resp.Body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.code || !strings.Contains(b.String(), tt.want) {
				t.Errorf("HTTP %d %s, want %d with %q", resp.StatusCode, b.String(), tt.code, tt.want)
			}
		})
	}
}
