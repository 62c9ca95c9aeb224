package restapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memrank/memrank/qdrantjson"
)

// upstreamREST is a stand-in for Qdrant's REST API: it records every
// request it receives and answers with a mark of its own.
type upstreamREST struct {
	mu   sync.Mutex
	got  []forwarded
	srv  *httptest.Server
	body string
}

type forwarded struct {
	method, path, query, body string
	header                    http.Header
}

func newUpstreamREST(t *testing.T) *upstreamREST {
	u := &upstreamREST{body: `{"result":{"from":"upstream"},"status":"ok","time":0.5}`}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.got = append(u.got, forwarded{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, body: string(b), header: r.Header.Clone()})
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Upstream", "qdrant")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, u.body)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstreamREST) requests() []forwarded {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.got)
}

// What the front does not translate goes to --upstream-rest as it came:
// method, path, query, body byte for byte and the caller's credentials;
// the upstream's answer comes back as it is. What it translates, and what
// is plainly malformed, never goes there.
func TestUntranslatedForwardedRaw(t *testing.T) {
	up := newUpstreamREST(t)
	e := newEnv(t, func(c *Config) { c.UpstreamREST = mustURL(t, up.srv.URL) })
	e.createCollection("c", "Cosine")

	cases := []struct {
		name, method, path, body string
	}{
		{"route", "POST", "/collections/c/points/recommend?timeout=5&consistency=majority", `{"positive":[1],"limit":3}`},
		{"method", "PATCH", "/collections/c?timeout=3", `{"optimizers_config":{"indexing_threshold":10}}`},
		{"aliases", "POST", "/collections/aliases", `{"actions":[{"create_alias":{"collection_name":"c","alias_name":"a"}}]}`},
		{"unknown field", "POST", "/collections/c/points/query?consistency=all", "{\"query\":[1,0,0,0],\n \"mmr_boost\": 1.5e0}"},
		{"untranslated value", "PUT", "/collections/q?wait=true", `{"vectors":{"size":4,"distance":"Cosine"},"quantization_config":{"scalar":{"type":"int8"}}}`},
		{"untranslated filter", "POST", "/collections/c/points/count", `{"filter":{"must":[{"key":"k","match":{"fuzzy":"v"}}]}}`},
		{"no body", "GET", "/telemetry?details_level=2", ``},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := doRequest(t, e.url, c.method, c.path, c.body, "api-key", "secret-key", "Authorization", "Bearer tok")
			if r.status != http.StatusAccepted || string(r.body) != up.body || r.header.Get("X-Upstream") != "qdrant" {
				t.Fatalf("the upstream's answer did not come back as it was: HTTP %d %v %s", r.status, r.header, r.body)
			}
			reqs := up.requests()
			if len(reqs) != i+1 {
				t.Fatalf("upstream saw %d requests, want %d", len(reqs), i+1)
			}
			got := reqs[i]
			path, query, _ := strings.Cut(c.path, "?")
			if got.method != c.method || got.path != path || got.query != query || got.body != c.body {
				t.Errorf("forwarded %s %s ?%s %q, want %s %s ?%s %q", got.method, got.path, got.query, got.body, c.method, path, query, c.body)
			}
			if got.header.Get("api-key") != "secret-key" || got.header.Get("Authorization") != "Bearer tok" {
				t.Errorf("credentials not forwarded: %v", got.header)
			}
		})
	}

	before := len(up.requests())
	checkEnvelope(t, e.do("GET", "/collections/c/exists", ""))
	checkEnvelope(t, e.do("POST", "/collections/c/points/query", `{"query":[1,0,0,0]}`))
	e.fail("POST", "/collections/c/points/query", `{"query":[1,0,0,0]`, 400, "EOF while parsing an object")
	e.fail("POST", "/collections/c/points/query", `{"limit":0}`, 422, "limit")
	if n := len(up.requests()); n != before {
		t.Errorf("translated or malformed requests reached the upstream REST API (%d)", n-before)
	}
}

// With the upstream REST API down, a forwarded request fails in Qdrant's
// shape, and the upstream's address stays in the log.
func TestUpstreamRESTDown(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	addr := down.URL
	down.Close()
	e := newEnv(t, func(c *Config) { c.UpstreamREST = mustURL(t, addr) })
	msg := e.fail("GET", "/cluster", "", http.StatusBadGateway, "the upstream Qdrant REST API did not answer")
	if strings.Contains(msg, strings.TrimPrefix(addr, "http://")) {
		t.Errorf("the upstream's address leaked: %q", msg)
	}
}

// The caller's api-key and authorization headers, and the configured
// ForwardHeaders, arrive as gRPC metadata at the store behind memrank's
// gRPC front, on forwarded and re-ranked calls alike; other headers do not.
func TestCredentialsReachStore(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ForwardHeaders = []string{"X-Tenant"} })
	e.createCollection("c", "Cosine")
	headers := []string{"api-key", "k-123", "Authorization", "Bearer t-456", "X-Tenant", "acme", "X-Other", "no"}
	for _, c := range []struct {
		name, method, path, body string
		methods                  []string // store methods the request must reach
	}{
		{"upsert", "PUT", "/collections/c/points?wait=true", `{"points":[{"id":1,"vector":[1,0,0,0]}]}`, []string{"/qdrant.Points/Upsert"}},
		{"query", "POST", "/collections/c/points/query", `{"query":[1,0,0,0]}`, []string{"/qdrant.Points/Query"}},
		// c holds no memories: its search reaches the store as it came.
		{"search", "POST", "/collections/c/points/search", `{"vector":[1,0,0,0],"limit":1}`, []string{"/qdrant.Points/Search"}},
		{"scroll", "POST", "/collections/c/points/scroll", `{}`, []string{"/qdrant.Points/Scroll"}},
		{"get", "GET", "/collections/c", ``, []string{"/qdrant.Collections/Get"}},
		{"root", "GET", "/", ``, []string{"/qdrant.Qdrant/HealthCheck"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := e.seen.len()
			r := doRequest(t, e.url, c.method, c.path, c.body, headers...)
			if r.status != 200 {
				t.Fatalf("HTTP %d: %s", r.status, r.body)
			}
			calls := e.seen.since(n)
			var methods []string
			for _, call := range calls {
				methods = append(methods, call.method)
				for k, want := range map[string]string{"api-key": "k-123", "authorization": "Bearer t-456", "x-tenant": "acme"} {
					if got := call.md.Get(k); len(got) != 1 || got[0] != want {
						t.Errorf("%s arrived with %s=%q, want %q", call.method, k, got, want)
					}
				}
				if got := call.md.Get("x-other"); len(got) != 0 {
					t.Errorf("%s arrived with x-other=%q, a header nobody asked to forward", call.method, got)
				}
			}
			for _, m := range c.methods {
				if !slices.Contains(methods, m) {
					t.Errorf("the store saw %v, not %s", methods, m)
				}
			}
		})
	}
}

// MayForward is asked before anything goes to the upstream raw: its refusal
// is the answer (with its class), and the upstream sees nothing.
func TestMayForward(t *testing.T) {
	up := newUpstreamREST(t)
	e := newEnv(t, func(c *Config) {
		c.UpstreamREST = mustURL(t, up.srv.URL)
		c.MayForward = func(r *http.Request, _ []byte) error {
			if r.Header.Get("api-key") == "root" {
				return nil
			}
			return qdrantjson.Errorf(qdrantjson.ClassForbidden, "not for you")
		}
	})
	e.createCollection("c", "Cosine")
	for _, c := range []struct{ name, method, path, body string }{
		{"route", "POST", "/collections/c/points/recommend", `{"positive":[1],"limit":3}`},
		{"unknown field", "POST", "/collections/c/points/scroll", `{"limit":100,"zzz":1}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := doRequest(t, e.url, c.method, c.path, c.body, "api-key", "tenant")
			if r.status != http.StatusForbidden || !strings.Contains(string(r.body), "Forbidden: not for you") {
				t.Errorf("HTTP %d %s", r.status, r.body)
			}
			if r := doRequest(t, e.url, c.method, c.path, c.body, "api-key", "root"); r.status != http.StatusAccepted {
				t.Errorf("the allowed request: HTTP %d %s", r.status, r.body)
			}
		})
	}
	if n := len(up.requests()); n != 2 {
		t.Errorf("upstream saw %d requests, want the 2 allowed", n)
	}
}

// A raw-forwarded request that may change what a collection name stands
// for (an alias change, a collection's PATCH, a snapshot recovery) tells
// CollectionsChanged before its answer arrives; other forwarded requests
// do not.
func TestForwardedCollectionChanges(t *testing.T) {
	up := newUpstreamREST(t)
	var mu sync.Mutex
	n := 0
	e := newEnv(t, func(c *Config) {
		c.UpstreamREST = mustURL(t, up.srv.URL)
		c.CollectionsChanged = func() {
			mu.Lock()
			n++
			mu.Unlock()
		}
	})
	cases := []struct {
		method, path, body string
		changes            bool
	}{
		{"POST", "/collections/aliases", `{"actions":[]}`, true},
		{"PATCH", "/collections/c", `{}`, true},
		{"PUT", "/collections/c/snapshots/recover", `{"location":"file:///x"}`, true},
		{"GET", "/collections/c/snapshots", "", false},
		{"POST", "/collections/c/points/recommend", `{}`, false},
	}
	for _, tc := range cases {
		mu.Lock()
		before := n
		mu.Unlock()
		r := e.do(tc.method, tc.path, tc.body)
		if r.status != http.StatusAccepted {
			t.Fatalf("%s %s: status %d (%s), not the upstream's", tc.method, tc.path, r.status, r)
		}
		mu.Lock()
		got := n > before
		mu.Unlock()
		if got != tc.changes {
			t.Errorf("%s %s: CollectionsChanged called %v, want %v", tc.method, tc.path, got, tc.changes)
		}
	}
}

// A raw-forwarded collection change whose answer does not say what became
// of it (the upstream failed or timed out, the answer could not be read,
// the caller went away) tells CollectionsUnsettled instead of
// CollectionsChanged before its answer arrives; an answer that says it was
// made or refused does not, nor does a 100 Continue before a success; one
// given before the request went upstream tells neither.
func TestForwardedCollectionChangesUnsettled(t *testing.T) {
	var answer atomic.Int64 // the upstream's status; 0: it drops the connection; -1: it waits for the caller to go
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // sends 100 Continue when asked for it
		code := int(answer.Load())
		switch code {
		case 0:
			panic(http.ErrAbortHandler) // the connection closes without an answer
		case -1:
			select { // bounded: the test ends even if the caller stays
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"status":{"error":"from the upstream"},"time":0.1}`)
	}))
	t.Cleanup(up.Close)
	var changed, unsettled atomic.Int64
	var refuse atomic.Bool
	e := newEnv(t, func(c *Config) {
		c.UpstreamREST = mustURL(t, up.URL)
		c.CollectionsChanged = func() { changed.Add(1) }
		c.CollectionsUnsettled = func() { unsettled.Add(1) }
		c.MayForward = func(*http.Request, []byte) error {
			if refuse.Load() {
				return qdrantjson.Errorf(qdrantjson.ClassUnavailable, "not now")
			}
			return nil
		}
	})
	const aliases = `{"actions":[{"delete_alias":{"alias_name":"live"}}]}`
	send := func(ctx context.Context, method, path string, headers ...string) (int, error) {
		body := aliases
		if method == "PATCH" {
			body = `{"optimizers_config":{"indexing_threshold":10}}`
		}
		req, err := http.NewRequestWithContext(ctx, method, e.url+path, strings.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer res.Body.Close()
		_, err = io.ReadAll(res.Body)
		return res.StatusCode, err
	}
	cases := []struct {
		name      string
		upstream  int
		unsettled bool
		// status is the caller's answer (0: none, the caller left first).
		status  int
		refused bool // neither hook is called
		headers []string
		// patch sends a collection's PATCH (streamed to the upstream)
		// instead of an alias change (read, then forwarded).
		patch bool
	}{
		{name: "made", upstream: http.StatusOK, status: http.StatusOK},
		{name: "made after 100 Continue", upstream: http.StatusOK, status: http.StatusOK, headers: []string{"Expect", "100-continue"}},
		{name: "refused", upstream: http.StatusBadRequest, status: http.StatusBadRequest},
		{name: "conflict", upstream: http.StatusConflict, status: http.StatusConflict},
		{name: "upstream failed", upstream: http.StatusInternalServerError, status: http.StatusInternalServerError, unsettled: true},
		{name: "upstream unavailable", upstream: http.StatusServiceUnavailable, status: http.StatusServiceUnavailable, unsettled: true},
		{name: "collection PATCH, upstream unavailable", upstream: http.StatusServiceUnavailable, status: http.StatusServiceUnavailable, unsettled: true, patch: true},
		{name: "collection PATCH, made", upstream: http.StatusOK, status: http.StatusOK, patch: true},
		{name: "collection PATCH, refused before it went upstream", upstream: http.StatusOK, status: http.StatusServiceUnavailable, refused: true, patch: true},
		{name: "upstream timed out", upstream: http.StatusGatewayTimeout, status: http.StatusGatewayTimeout, unsettled: true},
		{name: "request timeout", upstream: http.StatusRequestTimeout, status: http.StatusRequestTimeout, unsettled: true},
		{name: "no answer", upstream: 0, status: http.StatusBadGateway, unsettled: true},
		{name: "the caller went away", upstream: -1, unsettled: true},
		{name: "refused before it went upstream", upstream: http.StatusOK, status: http.StatusServiceUnavailable, refused: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			answer.Store(int64(tc.upstream))
			refuse.Store(tc.refused)
			changed.Store(0)
			unsettled.Store(0)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if tc.status == 0 {
				ctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
			}
			method, path := "POST", "/collections/aliases"
			if tc.patch {
				method, path = "PATCH", "/collections/c"
			}
			got, err := send(ctx, method, path, tc.headers...)
			if tc.status == 0 {
				if err == nil {
					t.Fatalf("the caller got %d, want no answer", got)
				}
				// The front ends the request after the caller left.
				for deadline := time.Now().Add(5 * time.Second); unsettled.Load()+changed.Load() == 0 && time.Now().Before(deadline); {
					time.Sleep(5 * time.Millisecond)
				}
			} else if err != nil || got != tc.status {
				t.Fatalf("status %d (%v), want %d", got, err, tc.status)
			}
			// Otherwise the answer has arrived: whatever the front calls,
			// it has called.
			if got := unsettled.Load() > 0; got != tc.unsettled {
				t.Errorf("CollectionsUnsettled called %v, want %v", got, tc.unsettled)
			}
			if got, want := changed.Load() > 0, !tc.unsettled && !tc.refused; got != want {
				t.Errorf("CollectionsChanged called %v, want %v", got, want)
			}
		})
	}
}
