package grpcfront

import (
	"testing"
	"time"
)

// TestKeepalive: the front's enforcement policy tolerates the pings of the
// clients it serves: go-client's every 10 s, and memrank's own upstream
// dial when one memrank fronts another.
func TestKeepalive(t *testing.T) {
	tests := []struct {
		name string
		ping time.Duration
	}{
		{"go-client", 10 * time.Second},
		{"memrank's upstream dial", UpstreamKeepalive().Time},
	}
	policy := ServerKeepalive()
	if !policy.PermitWithoutStream {
		t.Error("idle clients' pings are refused")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.ping < policy.MinTime {
				t.Errorf("pings every %v, the front allows no more often than %v", tc.ping, policy.MinTime)
			}
		})
	}
}
