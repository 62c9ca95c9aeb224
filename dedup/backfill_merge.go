package dedup

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/internal/vecmath"
	"github.com/memrank/memrank/memory"
)

// survivor is a stored memory (backfilled on an earlier page, or written
// by memrank) that a backfilled duplicate was merged into.
type survivor struct {
	st  *stored
	raw *qdrant.RetrievedPoint // as read, for its original and its write set
}

// merge applies the write path's tiers 1 and 2 to the backfilled memories
// of a page: a memory whose text_hash (tier 1), or whose vector at or above
// the collection's same band with no negation or number between the texts
// (tier 2), matches an earlier one in the same tenant and mapping scope is
// merged into it as the write path merges (n adds up, the more confident
// levels, the loser superseded and not retrievable). The earlier one is on
// this page, or already stored. It returns the stored survivors to write.
func (bf *backfiller) merge(ctx context.Context, items []*item) ([]survivor, error) {
	found, err := bf.findStored(ctx, items)
	if err != nil {
		return nil, err
	}
	wins := map[string]*stored{} // by merge key: tier 1
	var page []*item             // this page's memories that stay: tier 2
	var survivors []survivor
	kept := map[string]*stored{} // stored survivors by id, so two matches share one
	keep := func(s survivor) *stored {
		if st, ok := kept[s.st.sid]; ok {
			return st
		}
		kept[s.st.sid] = s.st
		survivors = append(survivors, s)
		return s.st
	}
	for _, it := range items {
		k := it.key()
		if win, ok := wins[k]; ok {
			bf.mergeInto(win, it)
			continue
		}
		if bf.b.DryRun && bf.seen[k] { // an earlier page's memory, not written
			bf.rep.Merged++
			continue
		}
		if s, ok := found[k]; ok {
			win := keep(s)
			wins[k] = win
			bf.mergeInto(win, it)
			continue
		}
		win, s, err := bf.tier2(ctx, it, page)
		if err != nil {
			return nil, err
		}
		switch {
		case win != nil:
			bf.mergeInto(win, it)
		case s != nil:
			bf.mergeInto(keep(*s), it)
		default:
			wins[k] = it.st
			page = append(page, it)
			if bf.b.DryRun {
				bf.seen[k] = true
			}
		}
	}
	return survivors, nil
}

// tier2 finds the memory a backfilled one duplicates by its vector: one of
// the page's (win) or a stored one (s); neither when none is at or above
// the same band with the same claim.
func (bf *backfiller) tier2(ctx context.Context, it *item, page []*item) (win *stored, s *survivor, err error) {
	same := bf.bands.Same
	if len(it.vec) == 0 || same <= 0 {
		return nil, nil, nil
	}
	best := 0.0
	for _, o := range page {
		if o.tenant != it.tenant || o.scope != it.scope || len(o.vec) != len(it.vec) || differInClaim(o.o.Text, it.o.Text) {
			continue
		}
		if c := float64(vecmath.Cosine(o.vec, it.vec)); c >= same && c > best {
			win, best = o.st, c
		}
	}
	if win != nil || !bf.indexed {
		return win, nil, nil
	}
	s, err = bf.nearestStored(ctx, it)
	return nil, s, err
}

// nearestStored is the stored memory nearest to it's vector that is at or
// above the same band, in its tenant and scope, with the same claim.
func (bf *backfiller) nearestStored(ctx context.Context, it *item) (*survivor, error) {
	e := bf.e
	// No condition on memrank_schema: no index serves it, so the store
	// would read every payload per look-up. Points not yet backfilled among
	// the nearest are skipped; a duplicate among them finds this memory
	// when its own page comes.
	f := &qdrant.Filter{}
	if e.tenancyOn() {
		f.Must = append(f.Must, e.cfg.Tenancy.Condition(it.tenant))
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	limit := uint64(e.cfg.Neighbours + supersededSlack)
	pts, err := e.store.Query(ctx, &qdrant.QueryPoints{CollectionName: bf.b.Collection, Query: qdrant.NewQueryDense(it.vec),
		Filter: f, Limit: &limit, WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)})
	if err != nil {
		return nil, fmt.Errorf("dedup: tier 2 search in %s: %w", bf.b.Collection, err)
	}
	var best *survivor
	bestCos := 0.0
	w := &write{e: e}
	for _, p := range pts {
		v := denseVector(p.GetVectors())
		if idString(p.GetId()) == it.st.sid || len(v) != len(it.vec) || isNullValue(p.GetPayload()[e.codec.Key(memory.FieldSchema)]) {
			continue
		}
		c := float64(vecmath.Cosine(v, it.vec))
		if c < bf.bands.Same || c <= bestCos {
			continue
		}
		st := w.decode(p.GetId(), p.GetPayload(), p.GetVectors())
		if st.m.SupersededBy != "" || differInClaim(st.m.Text, it.o.Text) || bf.b.Mapping.Read(p.GetPayload()).Scope != it.scope {
			continue
		}
		best, bestCos = &survivor{st: st, raw: &qdrant.RetrievedPoint{Id: p.GetId(), Payload: p.GetPayload(), Vectors: p.GetVectors()}}, c
	}
	return best, nil
}

// mergeInto folds a backfilled memory into win with the write path's merge.
func (bf *backfiller) mergeInto(win *stored, it *item) {
	w := &write{e: bf.e, o: it.o, coll: bf.b.Collection, tenant: it.tenant, bands: bf.bands}
	w.merge(win, it.st)
	it.audit = append(it.audit, w.audit...)
	bf.rep.Merged++
}

// findStored looks up, in one read, the stored memories that are not
// superseded and share a text hash with the page's items, by merge key
// (tenant and mapping scope, and hash); the page's own points are not
// among them.
func (bf *backfiller) findStored(ctx context.Context, items []*item) (map[string]survivor, error) {
	e := bf.e
	out := map[string]survivor{}
	if !bf.indexed || len(items) == 0 {
		return out, nil
	}
	hashes := make([]string, 0, len(items))
	own := make(map[string]bool, len(items))
	for _, it := range items {
		hashes = append(hashes, it.o.hash)
		own[it.st.sid] = true
	}
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords(e.codec.Key(memory.FieldTextHash), hashes...)}}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	// A hash may have superseded copies; the embedded store answers at most
	// 10,000 points.
	limit := uint32(min(len(items)*(maxMerges+1+supersededSlack), 10000))
	pts, err := e.store.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: bf.b.Collection, Filter: f, Limit: &limit,
		WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)})
	if err != nil {
		return nil, fmt.Errorf("dedup: tier 1 look-up in %s: %w", bf.b.Collection, err)
	}
	schemaKey := e.codec.Key(memory.FieldSchema)
	w := &write{e: e}
	for _, p := range pts {
		if own[idString(p.GetId())] || isNullValue(p.GetPayload()[schemaKey]) {
			continue
		}
		tenant := ""
		if e.tenancyOn() {
			tenant = scalarString(p.GetPayload()[e.cfg.Tenancy.PayloadKey()])
		}
		st := w.decode(p.GetId(), p.GetPayload(), p.GetVectors())
		k := tenant + "\x01" + bf.b.Mapping.Read(p.GetPayload()).Scope + "\x00" + st.hash
		if _, dup := out[k]; dup || st.m.SupersededBy != "" {
			continue
		}
		out[k] = survivor{st: st, raw: p}
	}
	return out, nil
}

// survivorOps are the writes of a stored survivor: the fields memrank owns
// that changed (never access_counts or last_accessed_at, which belong to
// the access recorders, except the _merged key), as the write path writes.
// orig is its payload before the backfill, when the backfill made it a
// memory (nil for a memory memrank wrote): its keys are left as they are.
func (bf *backfiller) survivorOps(s survivor, orig map[string]*qdrant.Value) []*qdrant.PointsUpdateOperation {
	e := bf.e
	bf.materialise(&s.st.m)
	enc := e.codec.Encode(&s.st.m)
	delete(enc, e.codec.Key(memory.FieldAccessCounts))
	delete(enc, e.codec.Key(memory.FieldLastAccessedAt))
	sel := qdrant.NewPointsSelector(s.st.id)
	ops := []*qdrant.PointsUpdateOperation{qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
		Payload: bf.writeSet(orig, s.raw.GetPayload(), enc), PointsSelector: sel})}
	if s.st.mergedAccess > 0 {
		key := e.codec.Key(memory.FieldAccessCounts)
		ops = append(ops, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
			Payload:        map[string]*qdrant.Value{memory.MergedAccessKey: qdrant.NewValueInt(s.st.mergedAccess)},
			PointsSelector: sel, Key: &key}))
	}
	return ops
}
