package dedup

import (
	"sync"
	"sync/atomic"
)

// decisionCounts counts this process's write decisions per collection: a
// collection's stats report its own decisions, not every collection's. The
// map grows by one small array per collection that ever had a decision, up
// to maxCountedCollections: a client that sends rejected observations to
// ever new names cannot grow it without bound; collections past the bound
// go uncounted (their stats show 0).
type decisionCounts struct {
	mu sync.Mutex
	by map[string]*[numDecisions]atomic.Int64
}

// maxCountedCollections bounds decisionCounts.
const maxCountedCollections = 10_000

func (d *decisionCounts) add(coll string, dec Decision) {
	i := decisionIndex(dec)
	if i < 0 {
		return
	}
	d.mu.Lock()
	c := d.by[coll]
	if c == nil && len(d.by) >= maxCountedCollections {
		d.mu.Unlock()
		return
	}
	if c == nil {
		if d.by == nil {
			d.by = map[string]*[numDecisions]atomic.Int64{}
		}
		c = new([numDecisions]atomic.Int64)
		d.by[coll] = c
	}
	d.mu.Unlock()
	c[i].Add(1)
}

// of returns coll's counts, every decision included (0 when none).
func (d *decisionCounts) of(coll string) map[string]int64 {
	d.mu.Lock()
	c := d.by[coll]
	d.mu.Unlock()
	out := make(map[string]int64, numDecisions)
	for i, dec := range decisionOrder {
		var n int64
		if c != nil {
			n = c[i].Load()
		}
		out[string(dec)] = n
	}
	return out
}
