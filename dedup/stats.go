package dedup

import (
	"context"
	"fmt"
	"math"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/scoring"
)

// Memory returns a stored memory with its audit trail.
func (e *Engine) Memory(ctx context.Context, collection, tenant, id string) (MemoryView, error) {
	if err := checkCollection(collection); err != nil {
		return MemoryView{}, err
	}
	if e.tenancyOn() && tenant == "" {
		return MemoryView{}, &InputError{Field: "tenant", Reason: "is required when tenancy is on"}
	}
	if err := CheckMemoryID("id", id); err != nil {
		return MemoryView{}, err
	}
	pid, err := parseID(id)
	if err != nil {
		return MemoryView{}, &InputError{Field: "id", Reason: err.Error()}
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	pts, err := e.store.Get(ctx, &qdrant.GetPoints{CollectionName: collection, Ids: []*qdrant.PointId{pid},
		WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		if isNotFound(err) {
			return MemoryView{}, fmt.Errorf("%w: collection %s", ErrNotFound, collection)
		}
		return MemoryView{}, fmt.Errorf("dedup: read %s in %s: %w", id, collection, err)
	}
	if len(pts) == 0 || !e.owns(pts[0].GetPayload(), tenant) {
		return MemoryView{}, fmt.Errorf("%w: memory %s in %s", ErrNotFound, id, collection)
	}
	payload := qdrantjson.AppendPayload(nil, pts[0].GetPayload())
	sid := idString(pts[0].GetId())
	audit, err := e.readAudit(ctx, collection, tenant, sid)
	if err != nil {
		return MemoryView{}, err
	}
	return MemoryView{ID: sid, Collection: collection, Payload: payload, Audit: audit}, nil
}

// Stats counts a collection's memories (a tenant's, with tenancy on) by
// confidence bucket, tier and type, with the average confidence and a
// histogram, and reports this process's decisions in the collection and its
// judge use (across collections). The counts come from payload indexes
// (countedStats): their cost does not grow with the collection. Tiers are the stored ones, as the consolidation job last
// wrote them (TiersAsOf).
func (e *Engine) Stats(ctx context.Context, collection, tenant string) (Stats, error) {
	return e.stats(ctx, collection, tenant, false)
}

// ScanStats is Stats computed by reading every memory at the engine's
// clock, as the read path would score it: tiers as of now and the exact
// average, for payloads other tools wrote. It reads the whole collection,
// page by page: an operator's tool, not a per-request one.
func (e *Engine) ScanStats(ctx context.Context, collection, tenant string) (Stats, error) {
	return e.stats(ctx, collection, tenant, true)
}

func (e *Engine) stats(ctx context.Context, collection, tenant string, scan bool) (Stats, error) {
	if err := checkCollection(collection); err != nil {
		return Stats{}, err
	}
	if e.tenancyOn() && tenant == "" {
		return Stats{}, &InputError{Field: "tenant", Reason: "is required when tenancy is on"}
	}
	st := Stats{
		Collection: collection,
		Buckets:    map[string]int{},
		Tiers:      map[string]int{},
		Types:      map[string]int{},
	}
	// The decisions are this process's in the collection, across tenants;
	// the judge's counters are the process's, across collections (one
	// judge and cache serve them all). With tenancy on either would tell
	// one tenant about the others' traffic, so only the operator (tenancy
	// off) sees them.
	if !e.tenancyOn() {
		st.Judge = e.cfg.Judging.Stats()
		st.Decisions = e.decisions.of(collection)
	}
	var base []*qdrant.Condition
	if e.tenancyOn() {
		base = []*qdrant.Condition{e.cfg.Tenancy.Condition(tenant)}
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if !scan {
		// Without its indexes every count would read every payload: one
		// scan is cheaper. The write path adds them at its first write.
		indexed, err := e.statsIndexed(ctx, collection)
		if err != nil {
			return Stats{}, err
		}
		scan = !indexed
	}
	if scan {
		return st, e.scanStats(ctx, collection, base, &st)
	}
	return st, e.countedStats(ctx, collection, tenant, base, &st)
}

// scanStats fills st from every point's payload, scored at the engine's
// clock.
func (e *Engine) scanStats(ctx context.Context, collection string, base []*qdrant.Condition, st *Stats) error {
	var filter *qdrant.Filter
	if len(base) > 0 {
		filter = &qdrant.Filter{Must: base}
	}
	now := e.cfg.Now()
	st.Method = "scanned"
	for _, b := range []scoring.Bucket{scoring.BucketHigh, scoring.BucketMedium, scoring.BucketLow} {
		st.Buckets[b.String()] = 0 // as the counted answer: every bucket, empty or not
	}
	st.TiersAsOf = now
	st.Histogram = make([]int, 10)
	var sum float64
	var scored int
	var offset *qdrant.PointId
	var m memory.Memory
	for {
		limit := uint32(512)
		pts, next, err := e.scrollPage(ctx, &qdrant.ScrollPoints{CollectionName: collection, Filter: filter,
			Limit: &limit, Offset: offset, WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			if isNotFound(err) {
				return fmt.Errorf("%w: collection %s", ErrNotFound, collection)
			}
			return fmt.Errorf("dedup: read %s: %w", collection, err)
		}
		for _, p := range pts {
			e.codec.Decode(p.GetPayload(), &m)
			if m.SupersededBy != "" || outOfAnswers(&m) {
				// As counted: a memory out of answers whose stored tier is
				// archived counts as archived (a person's or a review's, or
				// one superseded after that), the others as superseded.
				if m.Tier == scoring.TierArchived {
					st.Archived++
				} else {
					st.Superseded++
				}
				continue
			}
			in := e.codec.Inputs(&m)
			s := e.params.Evaluate(&in, 1, now)
			st.Tiers[s.Tier.String()]++
			st.Memories++
			if in.Unscored {
				st.Buckets["unscored"]++
				st.Types["unscored"]++
				continue
			}
			scored++
			sum += s.Confidence
			st.Histogram[min(int(s.Confidence*10), 9)]++
			st.Buckets[s.Bucket.String()]++
			st.Types[m.MemoryType]++
		}
		if next == nil {
			break
		}
		offset = next
	}
	st.Average = math.NaN()
	if scored > 0 {
		st.Average = sum / float64(scored)
	}
	return nil
}

// outOfAnswers is the read path's exclusion short of supersession
// (docs/read-path.md): a memory stored as not retrievable. Its tier, and
// age, never take a memory out.
func outOfAnswers(m *memory.Memory) bool {
	return !m.Unscored() && !m.Retrievable
}

// scrollPage reads one page and the offset of the next (nil at the end).
func (e *Engine) scrollPage(ctx context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, *qdrant.PointId, error) {
	if s, ok := e.store.(interface {
		ScrollAndOffset(context.Context, *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, *qdrant.PointId, error)
	}); ok {
		return s.ScrollAndOffset(ctx, req)
	}
	// Without the next offset, ask for one more point than the page and use
	// it as the next page's start.
	limit := *req.Limit
	more := limit + 1
	pts, err := e.store.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: req.CollectionName, Filter: req.Filter,
		Offset: req.Offset, Limit: &more, WithPayload: req.WithPayload, WithVectors: req.WithVectors})
	if err != nil || uint32(len(pts)) <= limit {
		return pts, nil, err
	}
	return pts[:limit], pts[limit].GetId(), nil
}
