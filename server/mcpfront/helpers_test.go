package mcpfront

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/memrank/memrank/client"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sent is one request the fake native API received.
type sent struct {
	Method, Path, Query string
	Header              http.Header
	Body                map[string]any
}

// fakeAPI is the native API as a test sees it: it records every request
// and answers each route with what answers holds for it ("METHOD /path"),
// or 404 in Qdrant's error shape.
type fakeAPI struct {
	mu      sync.Mutex
	got     []sent
	answers map[string]answer
}

type answer struct {
	status int
	body   string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s := sent{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone()}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &s.Body); err != nil {
			s.Body = map[string]any{"unparsable": string(b)}
		}
	}
	f.mu.Lock()
	f.got = append(f.got, s)
	a, ok := f.answers[r.Method+" "+r.URL.Path]
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"status":{"error":"no such memory or collection"},"time":0}`)
		return
	}
	if a.status != 0 {
		w.WriteHeader(a.status)
	}
	io.WriteString(w, a.body)
}

func (f *fakeAPI) requests() []sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sent(nil), f.got...)
}

// newFake starts a fake native API answering answers.
func newFake(t *testing.T, answers map[string]answer) (*fakeAPI, *httptest.Server) {
	t.Helper()
	f := &fakeAPI{answers: answers}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

// apiClient is a client of url with opts, bounded.
func apiClient(t *testing.T, url string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(url, append([]client.Option{client.WithTimeout(5 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// connect builds the MCP server on cfg and connects the SDK's client to
// it over the in-memory transports.
func connect(t *testing.T, cfg Config) *mcp.ClientSession {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// call calls a tool, bounded; a protocol error fails the test (tool errors
// are results).
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// text is a result's text content.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured decodes a result's structured content into T.
func structured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return v
}
