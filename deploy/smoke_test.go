package deploy

import (
	"strings"
	"testing"
)

// TestBinarySmoke: the helpers work: memrank serves in front of
// qdrant-compat, and answers its probes.
func TestBinarySmoke(t *testing.T) {
	upstream := qdrantCompat(t)
	httpAddr, grpcAddr := freeAddr(t), freeAddr(t)
	p := start(t, memrankBinary(t), []string{"MEMRANK_UPSTREAM__GRPC=" + upstream, "MEMRANK_LISTEN__HTTP=" + httpAddr,
		"MEMRANK_LISTEN__GRPC=" + grpcAddr, "MEMRANK_SHUTDOWN__DRAIN=0s"}, "serve")
	probe(t, "http://"+httpAddr+"/healthz", p)
	probe(t, "http://"+httpAddr+"/readyz", p)
	if m := probe(t, "http://"+httpAddr+"/metrics", p); !strings.Contains(m, "go_goroutines") {
		t.Errorf("/metrics: %.200s", m)
	}
}
