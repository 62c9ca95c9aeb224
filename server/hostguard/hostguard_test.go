package hostguard

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The headers below are what Chromium sends. Over plain http to a name
// that is not localhost (not a "potentially trustworthy" origin) it sends
// no Fetch Metadata (Sec-Fetch-*) at all, and a same-origin GET carries no
// Origin either: a DNS rebinding page's reads look like any client's. To
// localhost and IP loopback it sends Sec-Fetch-*; Origin goes with POSTs
// and cross-origin requests.

// rebound is the attacker's origin: evil.example resolved to memrank.
const rebound = "evil.example:6333"

// TestCheck runs each case against a guard on an open port (no credential
// needed: every Host is checked) and one whose requests all need a key
// (only browser requests and pages are checked).
func TestCheck(t *testing.T) {
	guards := map[string]*Guard{}
	for name, open := range map[string]bool{"open": true, "keyed": false} {
		g, err := New(Config{AllowedHosts: []string{"memrank.internal", ".corp.example"}, Pages: []string{"/ui"}, Open: open})
		if err != nil {
			t.Fatal(err)
		}
		guards[name] = g
	}
	const dns, otherOrigin, otherSite = "DNS rebinding", "another origin", "another site"
	tests := []struct {
		name         string
		method, host string
		path         string
		headers      map[string]string
		// What each guard answers: "" lets it through, else a part of
		// the refusal.
		open, keyed string
	}{
		// Clients that are not browsers.
		{"a Qdrant client by an unlisted name", "POST", "qdrant.somewhere:6333", "/collections/m/points/query", nil, dns, ""},
		{"an MCP client (undici's fetch) by an unlisted name", "POST", "memrank.svc:6333", "/mcp", map[string]string{"Sec-Fetch-Mode": "cors"}, dns, ""},
		{"a client by a listed name", "POST", "memrank.internal:6333", "/v1/retrieve", nil, "", ""},
		{"a client by a listed name, any case, final dot", "GET", "MemRank.Internal.:6333", "/collections", nil, "", ""},
		{"a client under a listed suffix", "GET", "a.b.corp.example", "/v1/stats", nil, "", ""},
		{"the suffix itself is not under it", "GET", "corp.example", "/collections", nil, dns, ""},
		{"a client by an IPv4 address", "GET", "10.1.2.3:6333", "/collections", nil, "", ""},
		{"a client by an IPv6 address", "GET", "[::1]:6333", "/collections", nil, "", ""},
		{"a client by localhost", "GET", "localhost:6333", "/v1/stats", nil, "", ""},
		{"a client by a name under localhost", "GET", "dev.localhost:6333", "/v1/stats", nil, "", ""},
		{"no host at all (HTTP/1.0, a health check): browsers always send one", "GET", "", "/healthz", nil, "", ""},

		// DNS rebinding: the page is at http://evil.example:6333, which
		// resolves to memrank. Without a key to send, the keyed port
		// answers 401 to everything that holds data.
		{"a rebinding page's navigation", "GET", rebound, "/healthz", nil, dns, ""},
		{"a rebinding page reads stats (same-origin GET)", "GET", rebound, "/v1/stats", nil, dns, ""},
		{"a rebinding page reads a memory's history", "GET", rebound, "/v1/memories/1", nil, dns, ""},
		{"a rebinding page reads a point through Qdrant's API", "GET", rebound, "/collections/m/points/1", nil, dns, ""},
		{"a rebinding page sets a tenant header", "GET", rebound, "/v1/stats", map[string]string{"X-Tenant": "alice"}, dns, ""},
		{"a rebinding page's same-origin POST", "POST", rebound, "/v1/retrieve", map[string]string{"Origin": "http://" + rebound}, dns, dns},
		{"a rebinding page calls MCP", "POST", rebound, "/mcp", map[string]string{"Origin": "http://" + rebound}, dns, dns},
		{"the page by a rebound name", "GET", rebound, "/ui", nil, dns, dns},
		{"the page's script by a rebound name", "GET", rebound, "/ui/app.js", nil, dns, dns},

		// The explain page and its own requests.
		{"the page typed on localhost", "GET", "localhost:6333", "/ui", map[string]string{"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"}, "", ""},
		{"the page's script on loopback", "GET", "127.0.0.1:6333", "/ui/app.js", map[string]string{"Sec-Fetch-Site": "same-origin"}, "", ""},
		{"the page's fetch on loopback", "POST", "127.0.0.1:6333", "/v1/retrieve",
			map[string]string{"Origin": "http://127.0.0.1:6333", "Sec-Fetch-Site": "same-origin"}, "", ""},
		{"the page's fetch by a listed name over plain http", "POST", "memrank.internal:6333", "/v1/retrieve",
			map[string]string{"Origin": "http://memrank.internal:6333"}, "", ""},
		{"the page behind a proxy that did not pass Host", "POST", "10.0.0.5:6333", "/v1/retrieve",
			map[string]string{"Origin": "https://memrank.corp.example", "Sec-Fetch-Site": "same-origin"}, otherOrigin, otherOrigin},
		{"a link to the page from another site", "GET", "localhost:6333", "/ui",
			map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, "", ""},
		{"the page embedded by another site", "GET", "localhost:6333", "/ui",
			map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}, "", ""},

		// Other sites' pages.
		{"another origin's fetch", "POST", "127.0.0.1:6333", "/v1/observe",
			map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, otherOrigin, otherOrigin},
		{"another origin's form to a listed name", "POST", "memrank.internal:6333", "/v1/observe",
			map[string]string{"Origin": "http://evil.example"}, otherOrigin, otherOrigin},
		{"another port is another origin", "POST", "localhost:6333", "/mcp", map[string]string{"Origin": "http://localhost:3000"}, otherOrigin, otherOrigin},
		{"an opaque origin", "POST", "localhost:6333", "/v1/observe", map[string]string{"Origin": "null"}, otherOrigin, otherOrigin},
		{"a cross-site form without Origin", "POST", "localhost:6333", "/v1/observe",
			map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, otherSite, otherSite},
		{"a cross-site read of the API", "GET", "localhost:6333", "/v1/stats",
			map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, otherSite, otherSite},
		{"a same-site subdomain's fetch", "GET", "localhost:6333", "/v1/stats",
			map[string]string{"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors"}, otherSite, otherSite},
	}
	for _, tt := range tests {
		for guard, want := range map[string]string{"open": tt.open, "keyed": tt.keyed} {
			t.Run(guard+"/"+tt.name, func(t *testing.T) {
				checkOne(t, guards[guard], tt.method, tt.host, tt.path, tt.headers, want)
			})
		}
	}
}

// TestCheckAnyHost: "*" turns the Host check off, even on an open port;
// the Origin and Sec-Fetch-Site checks stay.
func TestCheckAnyHost(t *testing.T) {
	g, err := New(Config{AllowedHosts: []string{"*"}, Pages: []string{"/ui"}, Open: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, host, path string
		headers                  map[string]string
		refused                  string
	}{
		{"a client by any name", "GET", "memrank.svc:6333", "/collections", nil, ""},
		{"a page by any name", "GET", rebound, "/ui", nil, ""},
		{"a page's same-origin POST by any name", "POST", rebound, "/v1/retrieve", map[string]string{"Origin": "http://" + rebound}, ""},
		{"another origin's fetch", "POST", "memrank.svc:6333", "/v1/observe", map[string]string{"Origin": "http://evil.example"}, "another origin"},
		{"a cross-site read", "GET", "localhost:6333", "/v1/stats", map[string]string{"Sec-Fetch-Site": "cross-site"}, "another site"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOne(t, g, tt.method, tt.host, tt.path, tt.headers, tt.refused)
		})
	}
}

// checkOne checks one request against g: let through when refused is "",
// else refused with a text containing it.
func checkOne(t *testing.T, g *Guard, method, host, path string, headers map[string]string, refused string) {
	t.Helper()
	r := httptest.NewRequest(method, "http://x"+path, nil)
	r.Host = host
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	err := g.Check(r)
	switch {
	case refused == "" && err != nil:
		t.Errorf("refused: %v", err)
	case refused != "" && (err == nil || !strings.Contains(err.Error(), refused)):
		t.Errorf("err = %v, want one saying %q", err, refused)
	}
}

// TestHandler: a refusal is a 403 in Qdrant's error shape that tells the
// user what to do, and the next handler never runs.
func TestHandler(t *testing.T) {
	g, err := New(Config{Pages: []string{"/ui"}, Open: true})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran++ }))
	r := httptest.NewRequest("GET", "http://memrank.svc:6333/collections", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	body, _ := io.ReadAll(w.Result().Body)
	want := `"error":"Forbidden: memrank was reached as \"memrank.svc:6333\", a host name it was not told it has (DNS rebinding protection): add it to listen.allowed_hosts (or use localhost or an IP address)"`
	if w.Code != http.StatusForbidden || !strings.Contains(string(body), want) || ran != 0 {
		t.Errorf("HTTP %d %s, ran %d; want 403 with %s", w.Code, body, ran, want)
	}
	r = httptest.NewRequest("GET", "http://localhost/collections", nil)
	h.ServeHTTP(httptest.NewRecorder(), r)
	if ran != 1 {
		t.Errorf("an allowed request did not reach the handler")
	}
}

// TestRefusalLogged: the first refusal by each host name is logged, once
// whatever its port or case; after maxLogged names, one line says the
// rest are not, and nothing more is written, however many senders.
func TestRefusalLogged(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))
	g, err := New(Config{Open: true, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	send := func(host string) {
		r := httptest.NewRequest("GET", "http://x/collections", nil)
		r.Host = host
		if g.Check(r) == nil {
			t.Errorf("%s let through", host)
		}
	}
	lines := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Split(strings.TrimSpace(buf.String()), "\n")
	}
	send("memrank.svc:6333")
	send("MEMRANK.SVC:7000")
	send("memrank.svc")
	if l := lines(); len(l) != 1 || !strings.Contains(l[0], "host=memrank.svc") || !strings.Contains(l[0], "listen.allowed_hosts") {
		t.Fatalf("log after three requests by one name:\n%s", strings.Join(l, "\n"))
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3 * maxLogged {
				send(fmt.Sprintf("h%d.example", (w*7+i)%(2*maxLogged)))
			}
		}()
	}
	wg.Wait()
	l := lines()
	if len(l) != maxLogged+1 || !strings.Contains(l[len(l)-1], "no more are logged") {
		t.Errorf("%d lines, want %d (the bound, then one saying so); last: %s", len(l), maxLogged+1, l[len(l)-1])
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name  string
		hosts []string
		ok    bool
	}{
		{"names, a suffix, any case", []string{"memrank.internal", ".corp.example", "UPPER.example"}, true},
		{"every name", []string{"*"}, true},
		{"none", nil, true},
		{"empty", []string{""}, false},
		{"a dot alone", []string{"."}, false},
		{"a port", []string{"memrank:6333"}, false},
		{"a URL", []string{"http://memrank"}, false},
		{"a wildcard label", []string{"*.corp.example"}, false},
		{"a dotted star", []string{".*"}, false},
		{"every name and another", []string{"*", "memrank.internal"}, false},
		{"another and every name", []string{"memrank.internal", "*"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := (Config{AllowedHosts: tt.hosts}).Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate(%q) = %v", tt.hosts, err)
			}
		})
	}
}
