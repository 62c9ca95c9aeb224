package dedup

import (
	"context"
	"errors"
	"fmt"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
)

// Reembed asks for a collection's vectors to be made again from its texts
// with another embedder.
type Reembed struct {
	Collection string
	To         embed.Embedder
	// DryRun counts what would be re-embedded and writes nothing.
	DryRun bool
	// BatchSize is the points read, embedded and written at a time;
	// default 256.
	BatchSize int
	// Progress, when set, is called after each batch with the points done.
	Progress func(done int)
}

// ReembedReport says what Reembed did (or, dry, would do).
type ReembedReport struct {
	Collection string
	From, To   string      // models
	Bands      embed.Bands // recorded with To (zero: the configured bands apply)
	Points     int         // points read
	Reembedded int         // vectors replaced (0 on a dry run)
	NoText     int         // points without a text: their vectors were left as they were
	Already    bool        // the collection already records To: nothing to do
}

// ErrReembed is a collection Reembed cannot move: no embedder record,
// vectors that callers supply, or another dimension.
var ErrReembed = errors.New("dedup: cannot re-embed")

// Reembed replaces every vector of a memory collection with its text
// embedded by r.To, then records r.To (and the bands calibrated for it) as
// the collection's embedder. It is the move to a new embedder of the same
// dimension (a new dimension needs a new collection). Points are read in
// pages and rewritten with UpdateVectors, so payloads are untouched. A run
// that stops half way leaves vectors of both models and the old record:
// run it again (it is idempotent). Writers must be stopped during the run
// (and memrank replicas restarted after it): one still writing with the old
// model would add vectors that no longer compare.
func (e *Engine) Reembed(ctx context.Context, r Reembed) (ReembedReport, error) {
	rep := ReembedReport{Collection: r.Collection}
	if err := checkCollection(r.Collection); err != nil {
		return rep, err
	}
	if r.To == nil {
		return rep, errors.New("dedup: Reembed needs an embedder")
	}
	if r.BatchSize <= 0 {
		r.BatchSize = 256
	}
	rep.To = r.To.Model()
	rep.Bands, _ = embed.CalibratedBands(rep.To)
	rec, err := e.recordOf(ctx, r.Collection)
	if err != nil {
		return rep, err
	}
	rep.From = rec.Model
	switch {
	case rec.Model == callerSupplied:
		return rep, fmt.Errorf("%w %s: its vectors are supplied by the callers, not embedded by memrank", ErrReembed, r.Collection)
	case rec.Dimensions != r.To.Dimensions():
		return rep, fmt.Errorf("%w %s: it has %d dimensions, %s makes %d (a new dimension needs a new collection)",
			ErrReembed, r.Collection, rec.Dimensions, rep.To, r.To.Dimensions())
	case rec.Model == rep.To:
		rep.Already = true
		return rep, nil
	}
	if err := e.reembedPoints(ctx, r, &rep); err != nil || r.DryRun {
		return rep, err
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	wait := true
	_, err = e.store.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: auditCollection(r.Collection), Wait: &wait,
		Points: []*qdrant.PointStruct{memory.EmbedderRecord{Model: rep.To, Dimensions: rec.Dimensions, Collection: r.Collection,
			SameThreshold: rep.Bands.Same, JudgeThreshold: rep.Bands.Judge}.Point()}})
	if err != nil {
		return rep, fmt.Errorf("dedup: record the embedder of %s: %w", r.Collection, err)
	}
	e.mu.Lock()
	delete(e.ensured, r.Collection)
	e.mu.Unlock()
	return rep, nil
}

// recordOf reads coll's embedder record; ErrReembed when it has none.
func (e *Engine) recordOf(ctx context.Context, coll string) (memory.EmbedderRecord, error) {
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	exists, err := e.store.CollectionExists(ctx, coll)
	if err != nil {
		return memory.EmbedderRecord{}, fmt.Errorf("dedup: look up collection %s: %w", coll, err)
	}
	if !exists {
		return memory.EmbedderRecord{}, fmt.Errorf("%w: collection %s", ErrNotFound, coll)
	}
	if has, err := e.store.CollectionExists(ctx, auditCollection(coll)); err != nil || !has {
		return memory.EmbedderRecord{}, errors.Join(err, fmt.Errorf("%w %s: it has no audit companion recording its embedder (not written by memrank)", ErrReembed, coll))
	}
	pts, err := e.store.Get(ctx, &qdrant.GetPoints{CollectionName: auditCollection(coll),
		Ids: []*qdrant.PointId{memory.EmbedderRecordID()}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		return memory.EmbedderRecord{}, fmt.Errorf("dedup: read the embedder record of %s: %w", coll, err)
	}
	if len(pts) == 0 {
		return memory.EmbedderRecord{}, fmt.Errorf("%w %s: its audit companion records no embedder", ErrReembed, coll)
	}
	return memory.ParseEmbedderRecord(pts[0].GetPayload()), nil
}

// reembedPoints pages through the collection, embedding and rewriting the
// vectors of the points that have a text.
func (e *Engine) reembedPoints(ctx context.Context, r Reembed, rep *ReembedReport) error {
	textKey := e.codec.Key(memory.FieldText)
	var offset *qdrant.PointId
	for {
		pctx, cancel := e.deadline(ctx)
		limit := uint32(r.BatchSize)
		pts, next, err := e.scrollPage(pctx, &qdrant.ScrollPoints{CollectionName: r.Collection, Limit: &limit, Offset: offset,
			WithPayload: qdrant.NewWithPayloadInclude(textKey), WithVectors: qdrant.NewWithVectors(false)})
		cancel()
		if err != nil {
			return fmt.Errorf("dedup: read %s: %w", r.Collection, err)
		}
		var ids []*qdrant.PointId
		var texts []string
		for _, p := range pts {
			t := p.GetPayload()[textKey].GetStringValue()
			if t == "" {
				rep.NoText++
				continue
			}
			ids, texts = append(ids, p.GetId()), append(texts, t)
		}
		rep.Points += len(pts)
		if !r.DryRun && len(texts) > 0 {
			if err := e.rewriteVectors(ctx, r, ids, texts); err != nil {
				return err
			}
			rep.Reembedded += len(texts)
		}
		if r.Progress != nil {
			r.Progress(rep.Points)
		}
		if next == nil {
			return nil
		}
		offset = next
	}
}

func (e *Engine) rewriteVectors(ctx context.Context, r Reembed, ids []*qdrant.PointId, texts []string) error {
	vecs, err := r.To.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("dedup: embed: %w", err)
	}
	if len(vecs) != len(texts) {
		return fmt.Errorf("dedup: embed: %d vectors for %d texts", len(vecs), len(texts))
	}
	pv := make([]*qdrant.PointVectors, len(ids))
	for i, id := range ids {
		pv[i] = &qdrant.PointVectors{Id: id, Vectors: qdrant.NewVectorsDense(vecs[i])}
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	wait := true
	_, err = e.store.UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: r.Collection, Wait: &wait,
		Operations: []*qdrant.PointsUpdateOperation{{Operation: &qdrant.PointsUpdateOperation_UpdateVectors_{
			UpdateVectors: &qdrant.PointsUpdateOperation_UpdateVectors{Points: pv}}}}})
	if err != nil {
		return fmt.Errorf("dedup: write the vectors of %s: %w", r.Collection, err)
	}
	return nil
}
