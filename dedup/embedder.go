package dedup

import (
	"context"
	"fmt"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
)

// A memory collection's audit companion records the embedder its vectors
// were made with (memory.EmbedderRecord). This file keeps that record: it
// is written on the first write, read (and cached for ensuredTTL) on every
// later one, and while a reembed is moving the collection it refuses writes.

// ensuredTTL is how long a collection's embedder record is trusted without
// reading it again: a `memrank reembed` run elsewhere is noticed within it
// (Reembed waits at least this long after marking the collection).
const ensuredTTL = 10 * time.Second

// ensured is what this process knows of a collection's embedder record.
type ensured struct {
	dims      int
	model     string
	bands     embed.Bands // zero: none recorded
	migrating string      // a reembed's target model; "" when none
	at        time.Time   // when it was read
}

func fromRecord(r memory.EmbedderRecord) ensured {
	return ensured{dims: r.Dimensions, model: r.Model, migrating: r.MigratingTo,
		bands: embed.Bands{Same: r.SameThreshold, Judge: r.JudgeThreshold}, at: time.Now()}
}

// cached is coll's record as last read, if it is fresh.
func (e *Engine) cached(coll string) (ensured, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	got, ok := e.ensured[coll]
	if ok && time.Since(got.at) > ensuredTTL {
		delete(e.ensured, coll)
		return ensured{}, false
	}
	return got, ok
}

func (e *Engine) remember(coll string, c ensured) {
	e.mu.Lock()
	e.ensured[coll] = c
	e.verified[coll] = true
	e.mu.Unlock()
}

func (e *Engine) isVerified(coll string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.verified[coll]
}

// refresh reads the record of a collection verified before, once its
// cached record has expired; nil (and the collection no longer verified)
// when the record or its companion is gone, so ensure makes sure again.
func (e *Engine) refresh(ctx context.Context, coll string) *ensured {
	if !e.isVerified(coll) {
		return nil
	}
	rec, err := e.readRecord(ctx, coll)
	if err != nil || rec == nil {
		e.mu.Lock()
		delete(e.verified, coll)
		e.mu.Unlock()
		return nil
	}
	return rec
}

func (e *Engine) forget(coll string) {
	e.mu.Lock()
	delete(e.ensured, coll)
	e.mu.Unlock()
}

// ensure makes the memory collection and its audit companion exist, checks
// that the collection's vectors have dims components, and records (or
// checks) the embedder model that writes into it: model, or callerSupplied
// when the caller supplied the vector and only the dimension can be
// checked. It returns the tier-2 bands for the collection.
func (e *Engine) ensure(ctx context.Context, coll string, dims int, model string) (created bool, bands embed.Bands, err error) {
	got, ok := e.cached(coll)
	if !ok {
		if rec := e.refresh(ctx, coll); rec != nil {
			e.remember(coll, *rec)
			got, ok = *rec, true
		}
	}
	if ok {
		if err := checkRecord(coll, got, dims, model); err != nil || got.model == model || model == callerSupplied {
			return false, e.bandsOf(got), err
		}
	}
	if created, err = e.ensureMemories(ctx, coll, dims, model); err != nil {
		return false, bands, err
	}
	if err := e.ensureAudit(ctx, coll); err != nil {
		return false, bands, err
	}
	rec, err := e.readRecord(ctx, coll)
	if err != nil {
		return false, bands, err
	}
	if rec == nil || (model != callerSupplied && rec.model == callerSupplied) {
		// Bands calibrated for the model are recorded with it, so that the
		// collection keeps them; others follow the configuration.
		b, _ := embed.CalibratedBands(model)
		if rec, err = e.writeRecord(ctx, coll, memory.EmbedderRecord{Model: model, Dimensions: dims, Collection: coll,
			SameThreshold: b.Same, JudgeThreshold: b.Judge}); err != nil {
			return false, bands, err
		}
	}
	if err := checkRecord(coll, *rec, dims, model); err != nil {
		return false, bands, err
	}
	e.remember(coll, *rec)
	return created, e.bandsOf(*rec), nil
}

// checkRecord refuses a write of dims-component vectors made by model (or
// supplied, callerSupplied) into a collection recorded as c.
func checkRecord(coll string, c ensured, dims int, model string) error {
	switch {
	case c.migrating != "":
		return &MigratingError{Collection: coll, From: c.model, To: c.migrating}
	case c.dims != dims:
		return mismatch(coll, c.model, c.dims, model, dims)
	case model != callerSupplied && c.model != callerSupplied && c.model != model:
		return mismatch(coll, c.model, c.dims, model, dims)
	}
	return nil
}

// bandsOf is the tier-2 bands of a collection: recorded with its embedder,
// else calibrated for its model, else configured.
func (e *Engine) bandsOf(c ensured) embed.Bands {
	return embed.BandsFor(c.model, c.bands, embed.Bands{Same: e.cfg.SameThreshold, Judge: e.cfg.JudgeThreshold})
}

// recorded is coll's embedder record, as far as this process knows or the
// companion says; nil when there is none (a new collection).
func (e *Engine) recorded(ctx context.Context, coll string) (*ensured, error) {
	if got, ok := e.cached(coll); ok {
		return &got, nil
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if rec := e.refresh(ctx, coll); rec != nil {
		e.remember(coll, *rec)
		return rec, nil
	}
	exists, err := e.store.CollectionExists(ctx, auditCollection(coll))
	if err != nil {
		return nil, fmt.Errorf("dedup: look up collection %s: %w", auditCollection(coll), err)
	}
	if !exists {
		return nil, nil
	}
	return e.readRecord(ctx, coll)
}

// readRecord reads coll's embedder record from its companion (which must
// exist); nil when it has none.
func (e *Engine) readRecord(ctx context.Context, coll string) (*ensured, error) {
	pts, err := e.store.Get(ctx, &qdrant.GetPoints{CollectionName: auditCollection(coll),
		Ids: []*qdrant.PointId{memory.EmbedderRecordID()}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		return nil, fmt.Errorf("dedup: read the embedder record of %s: %w", coll, err)
	}
	if len(pts) == 0 {
		return nil, nil
	}
	rec := fromRecord(memory.ParseEmbedderRecord(pts[0].GetPayload()))
	return &rec, nil
}

// writeRecord writes coll's embedder record and reads it back: two
// replicas that record different models at once both see the one that
// stayed, so at most one of them writes.
func (e *Engine) writeRecord(ctx context.Context, coll string, r memory.EmbedderRecord) (*ensured, error) {
	wait := true
	if _, err := e.store.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: auditCollection(coll), Wait: &wait,
		Points: []*qdrant.PointStruct{r.Point()}}); err != nil {
		return nil, fmt.Errorf("dedup: record the embedder of %s: %w", coll, err)
	}
	got, err := e.readRecord(ctx, coll)
	if err == nil && got == nil {
		err = fmt.Errorf("dedup: the embedder record of %s is gone after writing it", coll)
	}
	return got, err
}

func mismatch(coll, had string, hadDims int, want string, wantDims int) error {
	if had == callerSupplied {
		had = CallerVectors
	}
	if want == callerSupplied {
		want = CallerVectors
	}
	return &MismatchError{Collection: coll, Had: had, HadDims: hadDims, Want: want, WantDims: wantDims}
}

// What a MismatchError names where there is no embedder model.
const (
	// CallerVectors: the vectors are the callers' own.
	CallerVectors = "caller-supplied vectors"
	// UnrecordedEmbedder: the collection has no embedder record (another
	// tool made it); only its vectors' size is known.
	UnrecordedEmbedder = "an unrecorded embedder"
)

// MismatchError is a write with another embedder than the collection's
// (an ErrEmbedderMismatch). Its text names both, for the caller: models
// and dimensions are configuration, not secrets.
type MismatchError struct {
	Collection string
	// Had and Want are embedder models, CallerVectors, or (Had only)
	// UnrecordedEmbedder.
	Had, Want string
	HadDims   int
	WantDims  int
}

func (e *MismatchError) Error() string {
	// A model is named with its size; vectors that are no model's are
	// named by their size alone.
	var had string
	switch e.Had {
	case CallerVectors:
		had = fmt.Sprintf("was written with caller-supplied %d-dimensional vectors", e.HadDims)
	case UnrecordedEmbedder:
		had = fmt.Sprintf("holds %d-dimensional vectors", e.HadDims)
	default:
		had = fmt.Sprintf("was written with %s (%d dimensions)", e.Had, e.HadDims)
	}
	var want, fix string
	switch {
	case e.Want == CallerVectors:
		want = fmt.Sprintf("this vector has %d", e.WantDims)
		fix = fmt.Sprintf("send %d-dimensional vectors", e.HadDims)
		if e.Had != CallerVectors && e.Had != UnrecordedEmbedder {
			fix += " made by " + e.Had
		}
	case e.Had == CallerVectors || e.Had == UnrecordedEmbedder:
		want = fmt.Sprintf("this write embeds its text with %s (%d dimensions)", e.Want, e.WantDims)
		fix = fmt.Sprintf("send %d-dimensional vectors", e.HadDims)
	default:
		want = fmt.Sprintf("this write uses %s (%d dimensions)", e.Want, e.WantDims)
		fix = "write it with that embedder"
	}
	return fmt.Sprintf("collection %s %s; %s: %s, or use another collection", e.Collection, had, want, fix)
}

// Is makes a MismatchError an ErrEmbedderMismatch.
func (e *MismatchError) Is(target error) bool { return target == ErrEmbedderMismatch }

// MigratingError is a write into a collection that `memrank reembed` is
// moving to another embedder (an ErrEmbedderMismatch: 409): its vectors
// are of both models until the run ends.
type MigratingError struct {
	Collection string
	From, To   string
}

func (e *MigratingError) Error() string {
	return fmt.Sprintf("collection %s is being re-embedded from %s to %s (memrank reembed): "+
		"writes are refused until that run finishes", e.Collection, e.From, e.To)
}

// Is makes a MigratingError an ErrEmbedderMismatch.
func (e *MigratingError) Is(target error) bool { return target == ErrEmbedderMismatch }
