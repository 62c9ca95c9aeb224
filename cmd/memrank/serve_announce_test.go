package main

import (
	"net"
	"strings"
	"testing"

	"github.com/memrank/memrank/telemetry"
)

// TestServeAnnounce: serve's start-up message names /mcp and the explain
// page only when they are served (mcp.enabled, ui.enabled), and its
// listen line stays the one startServe reads the addresses from.
func TestServeAnnounce(t *testing.T) {
	httpAddr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6333}
	grpcAddr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6334}
	for _, tt := range []struct {
		name          string
		mcp, ui       bool
		wantHTTP      string
		wantExplained bool
	}{
		{"both served", true, true, "(Qdrant REST API, /v1/retrieve, /v1/observe, /mcp, /metrics)", true},
		{"mcp.enabled false", false, true, "(Qdrant REST API, /v1/retrieve, /v1/observe, /metrics)", true},
		{"ui.enabled false", true, false, "(Qdrant REST API, /v1/retrieve, /v1/observe, /mcp, /metrics)", false},
		{"neither", false, false, "(Qdrant REST API, /v1/retrieve, /v1/observe, /metrics)", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := defaultConfig()
			c.MCP.Enabled, c.UI.Enabled = tt.mcp, tt.ui
			s := &stack{cfg: c, tel: telemetry.Nop(), replicaID: "r1", upstreamName: "the embedded store"}
			var out strings.Builder
			s.announce(&out, httpAddr, grpcAddr, false)
			got := out.String()
			if m := listenLine.FindStringSubmatch(got); m == nil || m[1] != "127.0.0.1:6333" || m[2] != "127.0.0.1:6334" {
				t.Errorf("the listen line does not give both addresses: %v in\n%s", m, got)
			}
			if !strings.Contains(got, "memrank: http 127.0.0.1:6333 "+tt.wantHTTP+", grpc") {
				t.Errorf("want the http line to list %s:\n%s", tt.wantHTTP, got)
			}
			if explained := strings.Contains(got, "memrank: explain page http://127.0.0.1:6333/ui\n"); explained != tt.wantExplained {
				t.Errorf("explain page line present %v, want %v:\n%s", explained, tt.wantExplained, got)
			}
		})
	}
}
