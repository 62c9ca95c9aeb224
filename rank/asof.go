package rank

import (
	"context"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
)

type asOfKey struct{}

// AsOf asks the queries run under ctx to answer as of t, to replay a
// history or ask what was known then (docs/read-path.md): freshness and
// tiers are computed at t; memories first observed after t are left out; a
// supersession the audit trail records after t is not yet applied (the
// superseded memory is a candidate again). The stored counts and
// confidence stay today's: the payload keeps no history of them. Nothing
// read this way counts as an access.
func AsOf(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, asOfKey{}, t)
}

// asOf is the time a query under ctx answers as of, when it asks for one.
func asOf(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(asOfKey{}).(time.Time)
	return t, ok
}

// History is the write path's record of supersessions (the audit trail),
// which a query asked as of a time needs: when each memory was last
// superseded. *dedup.Engine is one.
type History interface {
	// SupersededAt returns, by memory id, when the latest supersession of
	// each of ids in collection was recorded; an id without a record is
	// absent.
	SupersededAt(ctx context.Context, collection string, ids []string) (map[string]time.Time, error)
}

var _ History = (*dedup.Engine)(nil)

// notAfter restricts a candidate query to the memories first observed at
// or before t: created_at at most t, or no created_at at all (a foreign
// point has no first observation to compare).
func (r *Ranker) notAfter(f *qdrant.Filter, t time.Time) *qdrant.Filter {
	key := r.codec.Key(memory.FieldCreatedAt)
	when := &qdrant.Filter{Should: []*qdrant.Condition{
		qdrant.NewDatetimeRange(key, &qdrant.DatetimeRange{Lte: timestamppb.New(t)}),
		qdrant.NewIsEmpty(key),
	}}
	out := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewFilterAsCondition(when)}}
	if f != nil {
		out.Must = append(out.Must, qdrant.NewFilterAsCondition(f))
	}
	return out
}

// unsupersede takes back, for a query as of t, the supersessions the
// audit trail records after t: those memories are candidates again, as
// they were then (w.unsup; the records are left as they are: a cache
// entry's is shared). A supersession without a record stays (nothing says
// when it happened), and so does every one when the trail cannot be read:
// the answer then holds what is known now. A memory a person archived
// before it was superseded after t comes back too: the supersession left
// no trace of the archive the read path could tell from an age label.
func (r *Ranker) unsupersede(ctx context.Context, w *work, points []*qdrant.ScoredPoint, collection string, t time.Time) {
	if r.cfg.History == nil {
		return
	}
	var ids []string
	var seqs []int
	for i := range w.mem {
		if w.mem[i].SupersededBy != "" {
			ids, seqs = append(ids, qdrantjson.PointIDString(points[i].GetId())), append(seqs, i)
		}
	}
	if len(ids) == 0 {
		return
	}
	when, err := r.cfg.History.SupersededAt(ctx, collection, ids)
	if err != nil {
		r.historyLog.Do(func() {
			r.cfg.Telemetry.Logger.WarnContext(ctx, "the audit trail could not be read: supersessions recorded after the requested time stay applied (logged at most once a minute)",
				"collection", collection, "error", err)
		})
		return
	}
	w.unsup = resize(w.unsup, len(w.mem))
	for k, id := range ids {
		if at, ok := when[id]; ok && at.After(t) {
			w.unsup[seqs[k]] = true
		}
	}
}
