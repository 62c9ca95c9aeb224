package rank

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"golang.org/x/sync/singleflight"

	"github.com/memrank/memrank/memory"
)

// Prober is what recognising a memory collection needs from the store
// beyond Source; *qdrant.Client satisfies it. New finds it on the Source by
// a type assertion; without it, a collection in ModeAuto is passed through
// (memrank never touches what it cannot tell is a memory collection).
type Prober interface {
	CollectionExists(ctx context.Context, name string) (bool, error)
	Scroll(ctx context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, error)
	Get(ctx context.Context, req *qdrant.GetPoints) ([]*qdrant.RetrievedPoint, error)
}

var _ Prober = (*qdrant.Client)(nil)

// Detection is how the read path decided to serve a collection.
type Detection struct {
	// Mode is the collection's resolved mode: ModeRerank, ModeShadow or
	// ModeOff (ModeAuto resolves to ModeRerank for a memory collection and
	// to ModeOff for any other).
	Mode Mode
	// Memory says whether the collection holds memrank memories (as far as
	// detection looked; true for a collection configured to re-rank).
	Memory bool
	// Rule says which rule decided, in words, e.g. "has an audit companion
	// (written by memrank)" or "configured: off".
	Rule string
	// Forced is true when the mode comes from configuration or the request
	// rather than from recognising the collection.
	Forced bool
	// Embedder is the model its audit companion records ("" when none).
	Embedder string
	// Guard is the relevance guard for the collection, and GuardFrom where
	// it came from: "default", "embedder <model>" or "collection".
	Guard     Guard
	GuardFrom string
}

// Detection rules, as explanations say them.
const (
	ruleConfigured  = "configured: "
	ruleAudit       = "an audit companion: memrank's own records"
	ruleCompanion   = "has an audit companion (written by memrank)"
	ruleNoProber    = "cannot be recognised: the upstream client does not scroll"
	ruleEmpty       = "empty collection"
	ruleUnreadable  = "could not be read to recognise it"
	ruleSampledHit  = "%d of %d sampled points are memrank memories"
	ruleSampledMiss = "none of %d sampled points is a memrank memory"
)

// verdict is what detection learned about a collection: cached.
type verdict struct {
	memory   bool
	rule     string
	embedder string
}

// detector recognises memory collections and caches its verdicts, bounded
// and with a time to live (a collection can be deleted and created again
// as something else).
type detector struct {
	probe  Prober // nil: nothing can be recognised
	codec  *memory.Codec
	sample uint32
	now    func() time.Time
	flight singleflight.Group
	mu     sync.Mutex
	lru    *lru[string, verdict]
}

func newDetector(probe Prober, codec *memory.Codec, cfg DetectConfig, now func() time.Time) *detector {
	return &detector{probe: probe, codec: codec, sample: uint32(cfg.SampleSize), now: now,
		lru: newLRU[string, verdict](cfg.CacheSize, cfg.TTL)}
}

// get returns the verdict on a collection, probing the store on a miss with
// the caller's context (and so the caller's credentials). Concurrent misses
// on one collection share one probe.
func (d *detector) get(ctx context.Context, name string) verdict {
	if memory.IsAuditCollection(name) {
		return verdict{rule: ruleAudit}
	}
	if d.probe == nil {
		return verdict{rule: ruleNoProber}
	}
	d.mu.Lock()
	v, ok := d.lru.get(name, d.now())
	d.mu.Unlock()
	if ok {
		return v
	}
	ch := d.flight.DoChan(name, func() (any, error) {
		v, cache := d.probe1(ctx, name)
		if cache {
			d.mu.Lock()
			d.lru.add(name, v, d.now())
			d.mu.Unlock()
		}
		return v, nil
	})
	select {
	case res := <-ch:
		return res.Val.(verdict)
	case <-ctx.Done():
		return verdict{rule: ruleUnreadable}
	}
}

// probe1 recognises one collection. cache is false for verdicts that may
// change at once: an empty collection (its first memory may be written in
// the next second) and a failed look-up.
func (d *detector) probe1(ctx context.Context, name string) (v verdict, cache bool) {
	companion := memory.AuditCollection(name)
	has, err := d.probe.CollectionExists(ctx, companion)
	if err != nil {
		return verdict{rule: ruleUnreadable}, false
	}
	if has {
		v = verdict{memory: true, rule: ruleCompanion}
		pts, err := d.probe.Get(ctx, &qdrant.GetPoints{CollectionName: companion,
			Ids: []*qdrant.PointId{memory.EmbedderRecordID()}, WithPayload: qdrant.NewWithPayload(true)})
		if err == nil && len(pts) > 0 {
			v.embedder = memory.ParseEmbedderRecord(pts[0].GetPayload()).Model
		}
		return v, true
	}
	limit := d.sample
	pts, err := d.probe.Scroll(ctx, &qdrant.ScrollPoints{
		CollectionName: name,
		Limit:          &limit,
		WithPayload:    qdrant.NewWithPayloadInclude(d.codec.DetectKeys()...),
		WithVectors:    qdrant.NewWithVectors(false),
	})
	if err != nil {
		return verdict{rule: ruleUnreadable}, false
	}
	if len(pts) == 0 {
		return verdict{rule: ruleEmpty}, false
	}
	hits := 0
	for _, p := range pts {
		if d.codec.IsMemoryRecord(p.GetPayload()) {
			hits++
		}
	}
	if hits == 0 {
		return verdict{rule: fmt.Sprintf(ruleSampledMiss, len(pts))}, true
	}
	return verdict{memory: true, rule: fmt.Sprintf(ruleSampledHit, hits, len(pts))}, true
}
