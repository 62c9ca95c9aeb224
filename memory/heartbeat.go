package memory

import (
	"time"

	"github.com/qdrant/go-client/qdrant"
)

// An access heartbeat is a point of an audit companion saying when one
// replica last wrote access counts to the companion's collection. The
// consolidation job folds the access_counts keys of replicas whose
// heartbeat is old into one key (docs/consolidation.md): a replica that
// still writes must keep its own key.

// Access heartbeat payload keys and kind.
const (
	HeartbeatKind       = "access_heartbeat"
	HeartbeatReplicaKey = "replica"
	HeartbeatFlushedKey = "flushed_at"
)

// HeartbeatID is the point id of a replica's heartbeat in a companion.
func HeartbeatID(replica string) *qdrant.PointId {
	return qdrant.NewID(DeterministicID("memrank-access-heartbeat", replica))
}

// HeartbeatPoint is a replica's heartbeat: it wrote access counts at at.
func HeartbeatPoint(replica string, at time.Time) *qdrant.PointStruct {
	return &qdrant.PointStruct{Id: HeartbeatID(replica), Vectors: qdrant.NewVectorsDense([]float32{1}),
		Payload: map[string]*qdrant.Value{
			companionKind:       qdrant.NewValueString(HeartbeatKind),
			HeartbeatReplicaKey: qdrant.NewValueString(replica),
			HeartbeatFlushedKey: qdrant.NewValueString(FormatTime(at)),
		}}
}
