package dedup

import (
	"context"
	"fmt"

	"github.com/memrank/memrank/memory"
)

// Created is what CreateCollection made.
type Created struct {
	Collection string
	// Existed says the memory collection was there before the call (its
	// companion and indexes may have been made now: a collection written
	// by other tools becomes a memory collection).
	Existed bool
	// Model and Dimensions are the embedder the collection records.
	Model      string
	Dimensions int
	// AuditCollection is the companion that records the collection's
	// decisions and embedder.
	AuditCollection string
}

// CreateCollection makes coll a memory collection before anything is
// observed into it, exactly as the first observation of a text would: the
// collection with the embedder's dimension and cosine distance, its
// payload indexes, its audit companion and the embedder record. The
// embedder is the one an observation would use: the collection's recorded
// one when Embedders can make it, else the configured one. An existing
// memory collection is kept (Existed); one whose vectors are of another
// size or embedder is ErrEmbedderMismatch, as the first write would be.
func (e *Engine) CreateCollection(ctx context.Context, coll string) (Created, error) {
	if err := checkCollection(coll); err != nil {
		return Created{}, err
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	exists, err := e.store.CollectionExists(ctx, coll)
	if err != nil {
		return Created{}, fmt.Errorf("dedup: look up collection %s: %w", coll, err)
	}
	if !exists {
		// Dropped behind this process's back (Qdrant's API): what it
		// remembers of the collection must not make ensure skip creating it.
		e.unverify(coll)
	}
	// The embedder an observation of a text would use; nothing is embedded.
	emb := e.cfg.Embedder
	if e.cfg.Embedders != nil {
		rec, err := e.recorded(ctx, coll)
		if err != nil {
			return Created{}, err
		}
		if rec != nil && rec.migrating != "" {
			return Created{}, &MigratingError{Collection: coll, From: rec.model, To: rec.migrating}
		}
		if rec != nil && rec.model != callerSupplied {
			r, ok := e.cfg.Embedders.For(rec.model)
			if !ok {
				return Created{}, mismatch(coll, rec.model, rec.dims, emb.Model(), emb.Dimensions())
			}
			emb = r
		}
	}
	created, _, err := e.ensure(ctx, coll, emb.Dimensions(), emb.Model())
	if err != nil {
		return Created{}, err
	}
	return Created{Collection: coll, Existed: !created, Model: emb.Model(), Dimensions: emb.Dimensions(),
		AuditCollection: memory.AuditCollection(coll)}, nil
}

// unverify forgets what this process knows of coll, so that the next
// ensure makes sure of everything again.
func (e *Engine) unverify(coll string) {
	e.mu.Lock()
	delete(e.ensured, coll)
	delete(e.verified, coll)
	e.mu.Unlock()
}
