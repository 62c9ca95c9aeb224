package consolidate

import (
	"time"

	"github.com/memrank/memrank/config/check"
)

// Defaults.
const (
	DefaultInterval             = 24 * time.Hour
	DefaultBatchSize            = 256
	DefaultRate                 = 2000 // points per second
	DefaultCompactReplicasAfter = 7 * 24 * time.Hour
	DefaultLease                = time.Hour
	DefaultTimeout              = 30 * time.Second
	maxBatchSize                = 10000
	// MinCompactReplicasAfter is the least compact_replicas_after (other
	// than 0, never). A live replica refreshes its heartbeat every 10
	// minutes (rank.HeartbeatEvery) and builds on the totals it sent for an
	// hour after (rank.KnownTTL): a key folded sooner than their sum after
	// the replica's last heartbeat can be written again in full, and its
	// reads counted twice. Two hours leaves room for slow flushes and clock
	// skew between replicas.
	MinCompactReplicasAfter = 2 * time.Hour
)

// Config is the consolidation section of memrank's configuration
// (docs/consolidation.md).
type Config struct {
	// Enabled runs the job inside `serve` every Interval.
	Enabled bool `koanf:"enabled"`
	// Interval is the time between two runs of the schedule (default 24h:
	// nightly).
	Interval time.Duration `koanf:"interval"`
	// BatchSize is how many points one page reads and one batch writes
	// (default 256).
	BatchSize int `koanf:"batch_size"`
	// Rate bounds the points examined per second (default 2000; 0: no
	// bound), so a run never competes with queries for the store.
	Rate float64 `koanf:"rate"`
	// Collections are the collections the schedule consolidates; empty:
	// every memory collection with an audit companion.
	Collections []string `koanf:"collections"`
	// CompactReplicasAfter is how long a replica must have written no
	// access counts to a collection before its access_counts key is folded
	// into the compacted key (default 7 days; 0: never compact).
	CompactReplicasAfter time.Duration `koanf:"compact_replicas_after"`
	// Lease is how long a replica that starts a scheduled run keeps the
	// others off the collection (default 1h).
	Lease time.Duration `koanf:"lease"`
	// Timeout bounds each store call (default 30s).
	Timeout time.Duration `koanf:"timeout"`
}

// DefaultConfig returns the section's defaults: on, nightly. Only
// memrank's own memory collections (those with an audit companion) and
// only memory records in them are ever written.
func DefaultConfig() Config {
	return Config{
		Enabled:              true,
		Collections:          []string{},
		Interval:             DefaultInterval,
		BatchSize:            DefaultBatchSize,
		Rate:                 DefaultRate,
		CompactReplicasAfter: DefaultCompactReplicasAfter,
		Lease:                DefaultLease,
		Timeout:              DefaultTimeout,
	}
}

// Validate checks the section's values.
func (c Config) Validate() error {
	var k check.Checker
	if c.Interval < time.Minute {
		k.Add("interval", "%s is shorter than a minute", check.Duration(c.Interval))
	}
	if c.BatchSize < 1 || c.BatchSize > maxBatchSize {
		k.Add("batch_size", "%d is outside 1 to %d", c.BatchSize, maxBatchSize)
	}
	if c.Rate < 0 {
		k.Add("rate", "%s is negative", check.Float(c.Rate))
	}
	if c.CompactReplicasAfter < 0 {
		k.Add("compact_replicas_after", "%s is negative", check.Duration(c.CompactReplicasAfter))
	} else if c.CompactReplicasAfter > 0 && c.CompactReplicasAfter < MinCompactReplicasAfter {
		k.Add("compact_replicas_after", "%s is shorter than %s: a live replica's access counts would be counted twice "+
			"(0 never compacts)", check.Duration(c.CompactReplicasAfter), check.Duration(MinCompactReplicasAfter))
	}
	if c.Lease < 0 {
		k.Add("lease", "%s is negative", check.Duration(c.Lease))
	}
	k.Timeout("timeout", c.Timeout)
	for i, name := range c.Collections {
		if name == "" {
			k.Add("collections", "entry %d is empty", i)
		}
	}
	return k.Err()
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Interval == 0 {
		c.Interval = d.Interval
	}
	if c.BatchSize == 0 {
		c.BatchSize = d.BatchSize
	}
	if c.Lease == 0 {
		c.Lease = d.Lease
	}
	if c.Timeout == 0 {
		c.Timeout = d.Timeout
	}
	return c
}
