package rank

import (
	"context"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
)

// KnownTTL bounds how long a total sent is remembered. A read fetched
// before a flush committed is seconds old, so an hour keeps the guard; and
// a replica that has not written a point for longer no longer builds on
// its own memory of it, only on the stored value. That is what lets the
// consolidation job fold the access_counts key of a replica that stopped
// writing a collection long ago: if the replica comes back it starts from
// the stored value (now absent, so 0) and never writes a total twice.
//
// consolidation.compact_replicas_after must exceed KnownTTL plus
// HeartbeatEvery, or a live replica's key could be folded while it still
// builds on its memory of it; consolidate.MinCompactReplicasAfter enforces
// that.
const KnownTTL = time.Hour

// HeartbeatEvery is how often a replica refreshes its access heartbeat in
// a collection's audit companion while it writes access counts there.
const HeartbeatEvery = 10 * time.Minute

// Upserter is the optional point writer of a Payloads (*qdrant.Client has
// it): with it the recorder writes its heartbeat to the audit companion of
// each memory collection it writes counts to (docs/consolidation.md).
type Upserter interface {
	Upsert(ctx context.Context, req *qdrant.UpsertPoints) (*qdrant.UpdateResult, error)
}

// heartbeat writes this replica's heartbeat, at most every HeartbeatEvery,
// to the companions of the collections the flush wrote counts to. A
// collection without a companion (not written by memrank) has no
// consolidation and gets none; failures are logged and retried at the next
// flush.
func (r *Recorder) heartbeat(ctx context.Context, batch []flushItem, errs []error, now time.Time) {
	up, ok := r.dst.(Upserter)
	if !ok {
		return
	}
	due := map[string]bool{}
	for i, err := range errs {
		c := batch[i].key.collection
		if err == nil && !due[c] && now.Sub(r.beats[c]) >= HeartbeatEvery && !memory.IsCompanion(c) {
			due[c] = true
		}
	}
	if len(due) > 0 && r.beats == nil {
		r.beats = map[string]time.Time{}
	}
	for c := range due {
		wait := true
		cctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
		_, err := up.Upsert(cctx, &qdrant.UpsertPoints{CollectionName: memory.AuditCollection(c), Wait: &wait,
			Points: []*qdrant.PointStruct{memory.HeartbeatPoint(r.cfg.ReplicaID, now)}})
		cancel()
		if err != nil {
			// A collection without a companion, say: tried again only
			// after HeartbeatEvery.
			r.log.DebugContext(ctx, "access counts: heartbeat not written", "collection", c, "error", err)
		}
		r.beats[c] = now
	}
}
