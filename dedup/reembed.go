package dedup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/batchjob"
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
	// Settle is how long to wait after marking the collection as moving
	// before its vectors are rewritten, so that every memrank process has
	// read the mark (they trust a record for ensuredTTL); default
	// DefaultReembedSettle, negative: no wait (a test, or no other process).
	Settle time.Duration
}

// DefaultReembedSettle is Reembed's default wait after marking a collection.
const DefaultReembedSettle = ensuredTTL + 2*time.Second

// ReembedReport says what Reembed did (or, dry, would do).
type ReembedReport struct {
	Collection string
	From, To   string      // models
	Bands      embed.Bands // recorded with To (zero: the configured bands apply)
	Points     int         // points read
	Reembedded int         // vectors replaced (0 on a dry run)
	NoText     int         // points without a text (a run refuses them; a dry run counts them)
	Already    bool        // the collection already records To: nothing to do
	Resumed    bool        // an interrupted run to To was finished
}

// ErrReembed is a collection Reembed cannot move: no embedder record,
// vectors that callers supply, another dimension, points without a text,
// or a run to another model not finished.
var ErrReembed = errors.New("dedup: cannot re-embed")

// Reembed replaces every vector of a memory collection with its text
// embedded by r.To, then records r.To (and the bands calibrated for it) as
// the collection's embedder. It is the move to a new embedder of the same
// dimension (a new dimension needs a new collection). Payloads are
// untouched. Every point must have a text: one without could not be made
// again, and would stay a vector of the old model among the new ones.
//
// Before any vector changes, the record is marked as moving (MigratingTo):
// from then until the final record, every memrank process refuses writes
// and text queries for the collection instead of mixing models, and a run
// that stops half way leaves the mark; running Reembed again to the same
// model finishes the move.
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
	if r.Settle == 0 {
		r.Settle = DefaultReembedSettle
	}
	rep.To = r.To.Model()
	rep.Bands, _ = embed.CalibratedBands(rep.To)
	rec, err := e.moveable(ctx, r, &rep)
	if err != nil || rep.Already {
		return rep, err
	}
	if err := e.scan(ctx, r, &rep, nil); err != nil {
		return rep, err
	}
	if r.DryRun {
		return rep, nil
	}
	if rep.NoText > 0 {
		return rep, fmt.Errorf("%w %s: %d of its %d points have no text (written by another tool?), so their vectors "+
			"cannot be made again; give them a text or delete them, then run it again", ErrReembed, r.Collection, rep.NoText, rep.Points)
	}
	if !rep.Resumed {
		mark := memory.EmbedderRecord{Model: rec.model, Dimensions: rec.dims, Collection: r.Collection,
			SameThreshold: rec.bands.Same, JudgeThreshold: rec.bands.Judge, MigratingTo: rep.To}
		if err := e.putRecord(ctx, mark); err != nil {
			return rep, err
		}
		if err := sleep(ctx, r.Settle); err != nil {
			return rep, err
		}
	}
	if err := e.rewritePages(ctx, r, &rep); err != nil {
		return rep, err
	}
	if rep.NoText > 0 { // written while the run went on: the mark stays
		return rep, fmt.Errorf("%w %s: %d points without a text appeared during the run; give them a text or delete them, "+
			"then run it again to finish", ErrReembed, r.Collection, rep.NoText)
	}
	if err := e.putRecord(ctx, memory.EmbedderRecord{Model: rep.To, Dimensions: rec.dims, Collection: r.Collection,
		SameThreshold: rep.Bands.Same, JudgeThreshold: rep.Bands.Judge}); err != nil {
		return rep, err
	}
	return rep, e.dropReembedJob(ctx, r)
}

// ReembedJob names re-embedding's checkpoint companion,
// <collection>_memrank_reembed, which exists while a run is unfinished.
const ReembedJob = "reembed"

// reembedState is the rewrite pass's progress, kept in its checkpoint.
type reembedState struct {
	Points     int `json:"points"`
	Reembedded int `json:"reembedded"`
	NoText     int `json:"no_text"`
}

// rewritePages re-embeds every page of the collection through a batch job,
// so that an interrupted run, run again, goes on from the page it stopped
// at instead of the first. A store that cannot run batch jobs is paged
// through from the start.
func (e *Engine) rewritePages(ctx context.Context, r Reembed, rep *ReembedReport) error {
	js, ok := e.store.(batchjob.Store)
	if !ok {
		rep.Points = 0
		return e.scan(ctx, r, rep, e.rewriteVectors)
	}
	runner, err := batchjob.New(js, batchjob.Config{Collection: r.Collection, Job: ReembedJob, BatchSize: r.BatchSize, Timeout: e.cfg.Timeout})
	if err != nil {
		return err
	}
	textKey := e.codec.Key(memory.FieldText)
	var st reembedState
	_, err = runner.Run(ctx, "to="+rep.To, &st, func(ctx context.Context, pts []*qdrant.RetrievedPoint, _ bool) error {
		var ids []*qdrant.PointId
		var texts []string
		for _, p := range pts {
			t := p.GetPayload()[textKey].GetStringValue()
			if t == "" {
				st.NoText++
				continue
			}
			ids, texts = append(ids, p.GetId()), append(texts, t)
		}
		st.Points += len(pts)
		if len(texts) == 0 {
			return nil
		}
		if err := e.rewriteVectors(ctx, r, ids, texts); err != nil {
			return err
		}
		st.Reembedded += len(texts)
		return nil
	}, r.Progress)
	rep.Points, rep.Reembedded, rep.NoText = st.Points, st.Reembedded, st.NoText
	return err
}

// dropReembedJob deletes the finished run's checkpoint companion.
func (e *Engine) dropReembedJob(ctx context.Context, r Reembed) error {
	js, ok := e.store.(batchjob.Store)
	if !ok {
		return nil
	}
	runner, err := batchjob.New(js, batchjob.Config{Collection: r.Collection, Job: ReembedJob, Timeout: e.cfg.Timeout})
	if err != nil {
		return err
	}
	return runner.Drop(ctx)
}

// moveable reads the collection's record and checks that it can move to
// r.To; rep says whether it already has (Already) or was half way (Resumed).
func (e *Engine) moveable(ctx context.Context, r Reembed, rep *ReembedReport) (*ensured, error) {
	rec, err := e.recordOf(ctx, r.Collection)
	if err != nil {
		return nil, err
	}
	rep.From = rec.model
	switch {
	case rec.model == callerSupplied:
		return nil, fmt.Errorf("%w %s: its vectors are supplied by the callers, not embedded by memrank", ErrReembed, r.Collection)
	case rec.dims != r.To.Dimensions():
		return nil, fmt.Errorf("%w %s: it has %d dimensions, %s makes %d (a new dimension needs a new collection)",
			ErrReembed, r.Collection, rec.dims, rep.To, r.To.Dimensions())
	case rec.migrating != "" && rec.migrating != rep.To:
		return nil, fmt.Errorf("%w %s: a run to %s has not finished; finish it first (--to %s)", ErrReembed, r.Collection, rec.migrating, rec.migrating)
	case rec.migrating != "":
		rep.Resumed = true
	case rec.model == rep.To:
		rep.Already = true
	}
	return rec, nil
}

func (e *Engine) putRecord(ctx context.Context, r memory.EmbedderRecord) error {
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	_, err := e.writeRecord(ctx, r.Collection, r)
	e.forget(r.Collection)
	return err
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recordOf reads coll's embedder record; ErrReembed when it has none.
func (e *Engine) recordOf(ctx context.Context, coll string) (*ensured, error) {
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	exists, err := e.store.CollectionExists(ctx, coll)
	if err != nil {
		return nil, fmt.Errorf("dedup: look up collection %s: %w", coll, err)
	}
	if !exists {
		return nil, fmt.Errorf("%w: collection %s", ErrNotFound, coll)
	}
	e.forget(coll)
	rec, err := e.recorded(ctx, coll)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("%w %s: no audit companion records its embedder (not written by memrank)", ErrReembed, coll)
	}
	return rec, nil
}

// scan pages through the collection, counting its points and those
// without a text, and hands each page's points with a text to write (nil:
// only count).
func (e *Engine) scan(ctx context.Context, r Reembed, rep *ReembedReport,
	write func(context.Context, Reembed, []*qdrant.PointId, []string) error) error {
	textKey := e.codec.Key(memory.FieldText)
	rep.NoText = 0
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
		if write != nil && len(texts) > 0 {
			if err := write(ctx, r, ids, texts); err != nil {
				return err
			}
			rep.Reembedded += len(texts)
		}
		if write != nil && r.Progress != nil {
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
