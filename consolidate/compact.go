package consolidate

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/memory"
)

// CompactedAccessKey is the access_counts key that holds the reads of
// replicas gone for good (docs/consolidation.md).
const CompactedAccessKey = "_compacted"

// replicaKey is a key a replica may own (rank.ValidReplicaID).
var replicaKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// liveness says which replicas may still write a collection's access
// counts: a replica whose heartbeat is older than before is gone; one
// without a heartbeat is judged by the point's last access.
type liveness struct {
	before time.Time
	gone   map[string]bool // replica -> heartbeat older than before
}

// fold is one point's compaction: keys of gone replicas, with the values
// read, moved into CompactedAccessKey.
type fold struct {
	id        *qdrant.PointId
	values    map[string]int64
	compacted *qdrant.Value // the stored _compacted (nil: absent)
	keys      []string
}

func (j *Job) compactBefore(now time.Time) time.Time {
	if j.cfg.CompactReplicasAfter <= 0 {
		return time.Time{}
	}
	return now.Add(-j.cfg.CompactReplicasAfter)
}

// deadReplicas reads the collection's access heartbeats (written by each
// replica's access recorder when it flushes).
func (j *Job) deadReplicas(ctx context.Context, coll string, before time.Time) (*liveness, error) {
	l := &liveness{before: before, gone: map[string]bool{}}
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword(kindKey, memory.HeartbeatKind)}}
	var offset *qdrant.PointId
	for {
		limit := uint32(256)
		pts, next, err := j.scroll(ctx, &qdrant.ScrollPoints{CollectionName: memory.AuditCollection(coll), Filter: f,
			Limit: &limit, Offset: offset, WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			if status.Code(err) == codes.NotFound {
				return l, nil // no companion: no heartbeats
			}
			return nil, storeError("read the access heartbeats of "+coll, err)
		}
		for _, p := range pts {
			pl := p.GetPayload()
			at, _ := memory.ParseTime(pl[memory.HeartbeatFlushedKey].GetStringValue())
			l.gone[pl[memory.HeartbeatReplicaKey].GetStringValue()] = at.Before(before)
		}
		if next == nil {
			return l, nil
		}
		offset = next
	}
}

// foldOf finds the keys of p's access_counts to fold: replicas whose
// heartbeat is older than the threshold, and replicas without a heartbeat
// when nobody has counted an access of p since the threshold.
func (j *Job) foldOf(p *qdrant.RetrievedPoint, l *liveness) (fold, bool) {
	if l == nil {
		return fold{}, false
	}
	pl := p.GetPayload()
	counts := pl[j.codec.Key(memory.FieldAccessCounts)].GetStructValue().GetFields()
	if len(counts) == 0 {
		return fold{}, false
	}
	var idle bool
	if last, ok := memory.ParseTime(pl[j.codec.Key(memory.FieldLastAccessedAt)].GetStringValue()); !ok || last.Before(l.before) {
		idle = true
	}
	f := fold{id: p.GetId(), values: map[string]int64{}, compacted: counts[CompactedAccessKey]}
	for k, v := range counts {
		if k == CompactedAccessKey || k == memory.MergedAccessKey || !replicaKey.MatchString(k) {
			continue
		}
		n, isInt := v.GetKind().(*qdrant.Value_IntegerValue)
		if !isInt || n.IntegerValue < 0 {
			continue
		}
		gone, known := l.gone[k]
		if gone || !known && idle {
			f.values[k] = n.IntegerValue
			f.keys = append(f.keys, k)
		}
	}
	slices.Sort(f.keys)
	return f, len(f.keys) > 0
}

// compact folds the keys in two compare-and-set steps per point, each safe
// to repeat: the first adds their values to _compacted and sets them to 0
// in one write (the total is unchanged at every moment); the second
// deletes keys that hold 0. A run stopped between the two leaves zeros that
// the next run deletes.
func (j *Job) compact(ctx context.Context, coll string, folds []fold, rep *Report) error {
	if len(folds) == 0 {
		return nil
	}
	acc := j.codec.Key(memory.FieldAccessCounts)
	var ops []*qdrant.PointsUpdateOperation
	for _, f := range folds {
		var sum int64
		cond := []*qdrant.Condition{qdrant.NewHasID(f.id)}
		zeros := map[string]*qdrant.Value{}
		var zeroConds []*qdrant.Condition
		var paths []string
		for _, k := range f.keys {
			path := quote(acc) + "." + k
			sum += f.values[k]
			cond = append(cond, qdrant.NewMatchInt(path, f.values[k]))
			zeros[k] = qdrant.NewValueInt(0)
			zeroConds = append(zeroConds, qdrant.NewMatchInt(path, 0))
			paths = append(paths, path)
		}
		old := f.compacted.GetIntegerValue()
		if sum > 0 {
			cond = append(cond, equals(quote(acc)+"."+CompactedAccessKey, f.compacted))
			zeros[CompactedAccessKey] = qdrant.NewValueInt(old + sum)
			ops = append(ops, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
				Payload: zeros, Key: &acc,
				PointsSelector: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: cond}),
			}))
		}
		ops = append(ops, qdrant.NewPointsUpdateDeletePayload(&qdrant.PointsUpdateOperation_DeletePayload{
			Keys: paths,
			PointsSelector: qdrant.NewPointsSelectorFilter(&qdrant.Filter{
				Must: append([]*qdrant.Condition{qdrant.NewHasID(f.id)}, zeroConds...)}),
		}))
		rep.CompactedKeys += len(f.keys)
	}
	wait := true
	ctx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
	defer cancel()
	if _, err := j.store.UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: coll, Wait: &wait, Operations: ops}); err != nil {
		return storeError("compact access counts of "+coll, err)
	}
	return nil
}

// quote makes a payload key one segment of a key path.
func quote(key string) string {
	if replicaKey.MatchString(key) {
		return key
	}
	return `"` + key + `"`
}

// WriteHeartbeat records that replica wrote access counts to coll at at
// (the access recorder does it as it flushes).
func WriteHeartbeat(ctx context.Context, w Writer, coll, replica string, at time.Time) error {
	wait := true
	_, err := w.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: memory.AuditCollection(coll), Wait: &wait,
		Points: []*qdrant.PointStruct{memory.HeartbeatPoint(replica, at)}})
	if err != nil {
		return fmt.Errorf("consolidate: access heartbeat in %s: %w", coll, err)
	}
	return nil
}
