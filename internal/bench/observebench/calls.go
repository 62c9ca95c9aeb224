package observebench

import (
	"context"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/memory"
)

// Call is one kind of upstream call the write path made during the timed
// phase: how many, their p50, and their total divided by the timed
// observations (what the kind adds to an observation on average).
type Call struct {
	Kind   string
	Count  int
	P50    time.Duration
	PerObs time.Duration
}

type callStats struct {
	total time.Duration
	lat   []time.Duration
}

// kindTier1 is the call kind of the tier-1 look-up, which every
// observation makes.
const kindTier1 = "tier-1 look-up"

// callKinds name the write path's upstream calls, in the order an
// observation makes them.
var callKinds = []string{kindTier1, "tier-2 search", "id look-up", "memory write", "audit write", "audit look-up", "other"}

// timing is the write path's store, timing each call by kind while on. It
// hides the optional methods the write path looks for on its store
// (ScrollAndOffset): the revive path that uses one then pages by limit+1
// instead, which the timed observations do not take.
type timing struct {
	dedup.Store
	audit string // the audit collection's name

	mu    sync.Mutex
	on    bool
	calls map[string]*callStats
}

func newTiming(s dedup.Store, collection string) *timing {
	return &timing{Store: s, audit: memory.AuditCollection(collection), calls: map[string]*callStats{}}
}

func (t *timing) record(kind string, start time.Time) {
	d := time.Since(start)
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.on {
		return
	}
	c := t.calls[kind]
	if c == nil {
		c = &callStats{}
		t.calls[kind] = c
	}
	c.total += d
	c.lat = append(c.lat, d)
}

func (t *timing) setOn(on bool) {
	t.mu.Lock()
	t.on = on
	t.mu.Unlock()
}

// report is the calls by kind, in callKinds' order.
func (t *timing) report(observations int) []Call {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Call
	for _, k := range callKinds {
		c := t.calls[k]
		if c == nil {
			continue
		}
		r := Call{Kind: k, Count: len(c.lat), P50: median(c.lat)}
		if observations > 0 {
			r.PerObs = c.total / time.Duration(observations)
		}
		out = append(out, r)
	}
	return out
}

func (t *timing) Scroll(ctx context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, error) {
	kind := kindTier1
	if req.GetCollectionName() == t.audit {
		kind = "audit look-up"
	}
	defer t.record(kind, time.Now())
	return t.Store.Scroll(ctx, req)
}

func (t *timing) Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	defer t.record("tier-2 search", time.Now())
	return t.Store.Query(ctx, req)
}

func (t *timing) Get(ctx context.Context, req *qdrant.GetPoints) ([]*qdrant.RetrievedPoint, error) {
	kind := "id look-up" // a new memory's deterministic id, say
	if req.GetCollectionName() == t.audit {
		kind = "audit look-up" // the collection's embedder record, re-read every few seconds
	}
	defer t.record(kind, time.Now())
	return t.Store.Get(ctx, req)
}

func (t *timing) Upsert(ctx context.Context, req *qdrant.UpsertPoints) (*qdrant.UpdateResult, error) {
	kind := "memory write"
	if req.GetCollectionName() == t.audit {
		kind = "audit write"
	}
	defer t.record(kind, time.Now())
	return t.Store.Upsert(ctx, req)
}

func (t *timing) UpdateBatch(ctx context.Context, req *qdrant.UpdateBatchPoints) ([]*qdrant.UpdateResult, error) {
	kind := "memory write"
	if req.GetCollectionName() == t.audit {
		kind = "audit write"
	}
	defer t.record(kind, time.Now())
	return t.Store.UpdateBatch(ctx, req)
}

func (t *timing) Count(ctx context.Context, req *qdrant.CountPoints) (uint64, error) {
	defer t.record("other", time.Now())
	return t.Store.Count(ctx, req)
}
