package hostguard

import (
	"net/http/httptest"
	"testing"
)

// FuzzCheck: any Host, Origin and fetch metadata get an answer, never a
// panic; an IP literal or localhost Host with no browser headers always
// passes, open port or not.
func FuzzCheck(f *testing.F) {
	f.Add("evil.example:6333", "http://evil.example:6333", "same-origin", "cors", "/v1/stats")
	f.Add("[::1]:6333", "", "", "", "/ui")
	f.Add("", "null", "cross-site", "navigate", "/ui/app.js")
	f.Add("localhost.", "http://[::1", "none", "", "/mcp")
	g, err := New(Config{AllowedHosts: []string{"memrank.internal", ".corp.example"}, Pages: []string{"/ui"}, Open: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host, origin, site, mode, path string) {
		r := httptest.NewRequest("GET", "http://x/", nil)
		r.Host, r.URL.Path = host, path
		for k, v := range map[string]string{"Origin": origin, "Sec-Fetch-Site": site, "Sec-Fetch-Mode": mode} {
			if v != "" {
				r.Header.Set(k, v)
			}
		}
		err := g.Check(r)
		if origin == "" && site == "" && (host == "localhost" || host == "127.0.0.1:6333") && err != nil {
			t.Fatalf("host %q refused: %v", host, err)
		}
	})
}
