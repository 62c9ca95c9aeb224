package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServeRefusesBrowsersOfOtherSites: on a running serve, a browser's
// request by a name memrank was not given (DNS rebinding) or from another
// origin is refused before any route runs, a listed name is let through,
// and clients that are not browsers reach it by any name.
func TestServeRefusesBrowsersOfOtherSites(t *testing.T) {
	httpAddr, _, _ := startServeEnv(t, []string{"MEMRANK_LISTEN__ALLOWED_HOSTS=[memrank.internal]"}, "--data", t.TempDir())
	port := httpAddr[strings.LastIndex(httpAddr, ":"):]
	for _, tt := range []struct {
		name    string
		host    string
		headers map[string]string
		code    int
		says    string
	}{
		{"a client by any name", "qdrant.svc" + port, nil, 200, `"result"`},
		{"a browser by a rebound name", "evil.example" + port, map[string]string{"Sec-Fetch-Site": "same-origin"}, 403, "DNS rebinding"},
		{"a browser by a listed name", "memrank.internal" + port, map[string]string{"Sec-Fetch-Site": "same-origin"}, 200, `"result"`},
		{"another origin's page", "127.0.0.1" + port, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403, "another origin"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, "http://"+httpAddr+"/collections", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tt.host
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
				t.Errorf("HTTP %d %s, want %d saying %q", resp.StatusCode, b, tt.code, tt.says)
			}
		})
	}
}
