package rank

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/singleflight"

	"github.com/memrank/memrank/internal/detach"
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
	// Embedder is the model its audit companion records ("" when none), and
	// SameThreshold and JudgeThreshold the write path's tier-2 bands
	// recorded with it (zero when none are: the configured bands apply).
	Embedder                      string
	SameThreshold, JudgeThreshold float64
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
	ruleMissing     = "no such collection"
	ruleSampledHit  = "%d of %d sampled points are memrank memories"
	ruleSampledFew  = "only %d of %d sampled points are memrank memories (a majority is needed)"
	ruleSampledMiss = "none of %d sampled points is a memrank memory"
	ruleCompanionOn = "no audit companion (with tenancy on, only an audit companion or the configuration makes a memory collection)"
)

// verdict is what detection learned about a collection: cached.
type verdict struct {
	memory   bool
	rule     string
	embedder string
	bands    [2]float64 // the recorded tier-2 bands: same, judge (zero: none)
	// migrating is the model a reembed is moving the collection to;
	// noRecord says its companion could not be read.
	migrating string
	noRecord  bool
}

// detector recognises memory collections and caches its verdicts, bounded
// and with a time to live (a collection can be deleted and created again
// as something else).
type detector struct {
	probe Prober // nil: nothing can be recognised
	codec *memory.Codec
	cfg   DetectConfig
	now   func() time.Time
	// auth gives memrank's own credentials to its look-ups; nil: they
	// carry the caller's.
	auth func(context.Context) context.Context
	// flight shares one probe between concurrent misses on a collection;
	// work owns the probes, which outlive the caller that started them.
	flight singleflight.Group
	work   *detach.Group
	mu     sync.Mutex
	lru    *lru[string, verdict]
	failed *lru[string, verdict] // failed look-ups, kept for FailureTTL
}

func newDetector(probe Prober, codec *memory.Codec, cfg DetectConfig, now func() time.Time, auth func(context.Context) context.Context) *detector {
	return &detector{probe: probe, codec: codec, cfg: cfg, now: now, auth: auth, work: detach.NewGroup(),
		lru:    newLRU[string, verdict](cfg.CacheSize, cfg.TTL),
		failed: newLRU[string, verdict](cfg.CacheSize, cfg.FailureTTL)}
}

// get returns the verdict on a collection, probing the store on a miss with
// memrank's own credentials (or, without them, the caller's). Concurrent
// misses on one collection share one probe, which runs detached from any
// one caller's cancellation (under Timeout), so a caller that gives up does
// not fail the others.
func (d *detector) get(ctx context.Context, name string) verdict {
	if memory.IsCompanion(name) {
		return verdict{rule: ruleAudit}
	}
	if d.probe == nil {
		return verdict{rule: ruleNoProber}
	}
	now := d.now()
	d.mu.Lock()
	v, ok := d.lru.get(name, now)
	if !ok {
		v, ok = d.failed.get(name, now)
	}
	d.mu.Unlock()
	if ok {
		return v
	}
	ch := d.flight.DoChan(name, func() (any, error) {
		base := ctx
		if d.auth != nil {
			// Only the trace goes on: not the caller's credentials.
			base = trace.ContextWithSpanContext(context.Background(), trace.SpanContextFromContext(ctx))
		}
		pctx, done, ok := d.work.Start(base)
		if !ok {
			return verdict{rule: ruleUnreadable}, nil // shutting down
		}
		defer done()
		if d.auth != nil {
			pctx = d.auth(pctx)
		}
		pctx, cancel := context.WithTimeout(pctx, d.cfg.Timeout)
		defer cancel()
		v, kind := d.probe1(pctx, name)
		d.mu.Lock()
		switch {
		case kind == keep:
			d.lru.add(name, v, d.now())
		case kind == failed && d.auth != nil:
			// With the caller's credentials a failure may be the caller's
			// alone (a wrong key): not remembered for the others.
			d.failed.add(name, v, d.now())
		}
		d.mu.Unlock()
		return v, nil
	})
	select {
	case res := <-ch:
		return res.Val.(verdict)
	case <-ctx.Done():
		return verdict{rule: ruleUnreadable}
	}
}

// How long a verdict is kept.
type keeping uint8

const (
	keep    keeping = iota // for TTL
	failed                 // for FailureTTL: the store could not be read
	recheck                // not at all: an empty collection, whose first memory may come at once
)

// probe1 recognises one collection: by its audit companion, else (unless
// CompanionOnly) by a sample of its points, a majority of which must be
// memory records.
func (d *detector) probe1(ctx context.Context, name string) (verdict, keeping) {
	companion := memory.AuditCollection(name)
	// A failed look-up (a key that may read the collection but not its
	// companion, say) is no companion: the sample decides.
	if has, err := d.probe.CollectionExists(ctx, companion); err == nil && has {
		v := verdict{memory: true, rule: ruleCompanion}
		pts, err := d.probe.Get(ctx, &qdrant.GetPoints{CollectionName: companion,
			Ids: []*qdrant.PointId{memory.EmbedderRecordID()}, WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			// Not cached for long: the embedder is unknown until it is read.
			v.noRecord = true
			return v, failed
		}
		if len(pts) > 0 {
			rec := memory.ParseEmbedderRecord(pts[0].GetPayload())
			v.embedder, v.bands, v.migrating = rec.Model, [2]float64{rec.SameThreshold, rec.JudgeThreshold}, rec.MigratingTo
		}
		return v, keep
	}
	if d.cfg.CompanionOnly {
		return verdict{rule: ruleCompanionOn}, keep
	}
	limit := uint32(d.cfg.SampleSize)
	pts, err := d.probe.Scroll(ctx, &qdrant.ScrollPoints{
		CollectionName: name,
		Limit:          &limit,
		WithPayload:    qdrant.NewWithPayloadInclude(d.codec.DetectKeys()...),
		WithVectors:    qdrant.NewWithVectors(false),
	})
	switch {
	case status.Code(err) == codes.NotFound:
		// Not cached: it may be created by the next request.
		return verdict{rule: ruleMissing}, recheck
	case err != nil:
		return verdict{rule: ruleUnreadable}, failed
	}
	if len(pts) == 0 {
		return verdict{rule: ruleEmpty}, recheck
	}
	hits := 0
	for _, p := range pts {
		if d.codec.IsMemoryRecord(p.GetPayload()) {
			hits++
		}
	}
	switch {
	case hits == 0:
		return verdict{rule: fmt.Sprintf(ruleSampledMiss, len(pts))}, keep
	case 2*hits < len(pts):
		// One point cannot turn a collection of documents into memories.
		return verdict{rule: fmt.Sprintf(ruleSampledFew, hits, len(pts))}, keep
	}
	return verdict{memory: true, rule: fmt.Sprintf(ruleSampledHit, hits, len(pts))}, keep
}
