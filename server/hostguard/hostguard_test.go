package hostguard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	g, err := New(Config{AllowedHosts: []string{"memrank.internal", ".corp.example"}, Pages: []string{"/ui"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		method  string
		host    string
		path    string
		headers map[string]string
		refused string // "" when let through
	}{
		{"a Qdrant client by any name", "POST", "qdrant.somewhere:6333", "/collections/m/points/query", nil, ""},
		{"an MCP client by any name", "POST", "memrank.svc:6333", "/mcp", map[string]string{"Sec-Fetch-Mode": "cors"}, ""},
		{"the page on localhost", "GET", "localhost:6333", "/ui", map[string]string{"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"}, ""},
		{"the page on an IPv4 address", "GET", "10.1.2.3:6333", "/ui/app.js", map[string]string{"Sec-Fetch-Site": "same-origin"}, ""},
		{"the page on an IPv6 address", "GET", "[::1]:6333", "/ui", nil, ""},
		{"the page on a listed name", "GET", "memrank.internal:6333", "/ui", nil, ""},
		{"the page under a listed suffix", "GET", "a.b.corp.example", "/ui", nil, ""},
		{"the page on a name under localhost", "GET", "dev.localhost:6333", "/ui", nil, ""},
		{"the page by a rebinding name, no fetch metadata", "GET", "evil.example:6333", "/ui", nil, "DNS rebinding"},
		{"the suffix itself is not under it", "GET", "corp.example", "/ui", nil, "DNS rebinding"},
		{"a rebinding page reads the API", "POST", "evil.example:6333", "/v1/retrieve",
			map[string]string{"Origin": "http://evil.example:6333", "Sec-Fetch-Site": "same-origin"}, "DNS rebinding"},
		{"a rebinding page reads memories by GET", "GET", "evil.example:6333", "/v1/memories/1",
			map[string]string{"Sec-Fetch-Site": "same-origin"}, "DNS rebinding"},
		{"a rebinding page calls MCP", "POST", "evil.example:6333", "/mcp",
			map[string]string{"Origin": "http://evil.example:6333"}, "DNS rebinding"},
		{"the page's own fetch", "POST", "127.0.0.1:6333", "/v1/retrieve",
			map[string]string{"Origin": "http://127.0.0.1:6333", "Sec-Fetch-Site": "same-origin"}, ""},
		{"another origin's fetch", "POST", "127.0.0.1:6333", "/v1/observe",
			map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, "another origin"},
		{"another port is another origin", "POST", "localhost:6333", "/mcp",
			map[string]string{"Origin": "http://localhost:3000"}, "another origin"},
		{"an opaque origin", "POST", "localhost:6333", "/v1/observe", map[string]string{"Origin": "null"}, "another origin"},
		{"a cross-site form without Origin", "POST", "localhost:6333", "/v1/observe",
			map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, "another site"},
		{"a cross-site read of the API", "GET", "localhost:6333", "/v1/stats",
			map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, "another site"},
		{"a same-site subdomain's fetch", "GET", "localhost:6333", "/v1/stats",
			map[string]string{"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors"}, "another site"},
		{"a link to the page from another site", "GET", "localhost:6333", "/ui",
			map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, ""},
		{"the page embedded by another site", "GET", "localhost:6333", "/ui",
			map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}, ""},
		{"no host at all", "GET", "", "/ui", nil, "DNS rebinding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "http://x"+tt.path, nil)
			r.Host = tt.host
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			err := g.Check(r)
			switch {
			case tt.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
				t.Errorf("err = %v, want one saying %q", err, tt.refused)
			}
		})
	}
}

// TestHandler: a refusal is a 403 in Qdrant's error shape and the next
// handler never runs.
func TestHandler(t *testing.T) {
	g, err := New(Config{Pages: []string{"/ui"}})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran++ }))
	r := httptest.NewRequest("GET", "http://evil.example/ui", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	body, _ := io.ReadAll(w.Result().Body)
	if w.Code != http.StatusForbidden || !strings.Contains(string(body), `"error":"Forbidden: a browser reached memrank as \"evil.example\"`) || ran != 0 {
		t.Errorf("HTTP %d %s, ran %d", w.Code, body, ran)
	}
	r = httptest.NewRequest("GET", "http://localhost/ui", nil)
	h.ServeHTTP(httptest.NewRecorder(), r)
	if ran != 1 {
		t.Errorf("an allowed request did not reach the handler")
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		hosts []string
		ok    bool
	}{
		{[]string{"memrank.internal", ".corp.example", "UPPER.example"}, true},
		{[]string{""}, false},
		{[]string{"."}, false},
		{[]string{"memrank:6333"}, false},
		{[]string{"http://memrank"}, false},
		{[]string{"*.corp.example"}, false},
	} {
		if err := (Config{AllowedHosts: tt.hosts}).Validate(); (err == nil) != tt.ok {
			t.Errorf("Validate(%q) = %v", tt.hosts, err)
		}
	}
}
