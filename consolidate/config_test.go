package consolidate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/rank"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		mut  func(*consolidate.Config)
		want string // "" valid; else a key the error names
	}{
		{"defaults", func(*consolidate.Config) {}, ""},
		{"no rate bound", func(c *consolidate.Config) { c.Rate = 0 }, ""},
		{"never compact", func(c *consolidate.Config) { c.CompactReplicasAfter = 0 }, ""},
		{"interval too short", func(c *consolidate.Config) { c.Interval = time.Second }, "interval"},
		{"batch too large", func(c *consolidate.Config) { c.BatchSize = 20000 }, "batch_size"},
		{"batch zero", func(c *consolidate.Config) { c.BatchSize = 0 }, "batch_size"},
		{"negative rate", func(c *consolidate.Config) { c.Rate = -1 }, "rate"},
		{"negative compaction", func(c *consolidate.Config) { c.CompactReplicasAfter = -time.Hour }, "compact_replicas_after"},
		{"compaction at the minimum", func(c *consolidate.Config) { c.CompactReplicasAfter = consolidate.MinCompactReplicasAfter }, ""},
		{"compaction below the minimum", func(c *consolidate.Config) { c.CompactReplicasAfter = time.Hour }, "compact_replicas_after"},
		{"compaction of a minute", func(c *consolidate.Config) { c.CompactReplicasAfter = time.Minute }, "compact_replicas_after"},
		{"negative lease", func(c *consolidate.Config) { c.Lease = -time.Hour }, "lease"},
		{"empty collection", func(c *consolidate.Config) { c.Collections = []string{"a", ""} }, "collections"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := consolidate.DefaultConfig()
			tc.mut(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate() = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// The minimum guards the access recorder's own timings: a key is folded
// only after its replica has forgotten the totals it sent and has missed
// a heartbeat.
func TestMinCompactReplicasAfterCoversTheRecorder(t *testing.T) {
	if need := rank.KnownTTL + rank.HeartbeatEvery; consolidate.MinCompactReplicasAfter <= need {
		t.Errorf("MinCompactReplicasAfter %s, want above the recorder's %s (KnownTTL + HeartbeatEvery)",
			consolidate.MinCompactReplicasAfter, need)
	}
}
