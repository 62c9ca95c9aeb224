package memory

import (
	"strings"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
)

// A memory collection written by memrank has a companion collection,
// <collection>_memrank_audit, that holds its audit records and one
// metadata point: the embedder record, naming the model and dimension the
// collection's vectors were written with. The write path keeps both; the
// read path recognises a memory collection by its companion and picks the
// relevance guard calibrated for its embedder.

// AuditSuffix ends the name of a memory collection's audit companion.
const AuditSuffix = "_memrank_audit"

// AuditCollection is the name of collection's audit companion.
func AuditCollection(collection string) string { return collection + AuditSuffix }

// IsAuditCollection reports whether name is an audit companion: memrank's
// own records, never a memory collection.
func IsAuditCollection(name string) bool { return strings.HasSuffix(name, AuditSuffix) }

// Job companions keep a batch job's checkpoint and the payloads it will
// restore: <collection>_memrank_backfill (memrank backfill) and
// <collection>_memrank_reembed (memrank reembed).
const (
	BackfillSuffix = "_memrank_backfill"
	ReembedSuffix  = "_memrank_reembed"
)

// CompanionWhat names what a companion holds, for messages: "audit trail"
// or "job state".
func CompanionWhat(name string) string {
	if IsAuditCollection(name) {
		return "audit trail"
	}
	return "job state"
}

// IsCompanion reports whether name is one of memrank's own collections (an
// audit companion or a job companion): never a memory collection, and
// read-only to callers, since a forged checkpoint or original would be
// restored by a rollback.
func IsCompanion(name string) bool {
	return IsAuditCollection(name) || strings.HasSuffix(name, BackfillSuffix) || strings.HasSuffix(name, ReembedSuffix)
}

// idNamespace is the UUIDv5 namespace of memrank's deterministic ids.
var idNamespace = uuid.MustParse("6f1c1f5e-3b0a-5c7e-9a43-0d2f4b8e7a11")

// DeterministicID is the UUIDv5 of parts joined by NUL bytes in memrank's
// namespace: the same parts give the same id on every replica.
func DeterministicID(parts ...string) string {
	return uuid.NewSHA1(idNamespace, []byte(strings.Join(parts, "\x00"))).String()
}

// embedderRecordID is the id of the embedder record in every companion.
var embedderRecordID = uuid.NewSHA1(idNamespace, []byte("memrank-meta")).String()

// EmbedderRecordID is the point id of the embedder record in an audit
// companion.
func EmbedderRecordID() *qdrant.PointId { return qdrant.NewID(embedderRecordID) }

// The embedder record's payload keys. The companion is memrank's own, so
// its keys are fixed.
const (
	companionKind       = "kind" // "meta" on the embedder record, "audit" on audit records
	companionModel      = "embedder_model"
	companionDimensions = "dimensions"
	companionCollection = "collection"
	companionSame       = "same_threshold"
	companionJudge      = "judge_threshold"
	companionMigrating  = "migrating_to"
)

// EmbedderRecord is what an audit companion records about the embedder of
// its collection. Model is empty when callers supply the vectors.
// SameThreshold and JudgeThreshold are the write path's tier-2 bands
// calibrated for the model, recorded with it so the collection keeps them;
// zero when none were recorded (the configured bands apply). MigratingTo
// names the model a `memrank reembed` is moving the collection to: while it
// is set, the collection holds vectors of both models and memrank refuses
// to write or embed for it.
type EmbedderRecord struct {
	Model          string
	Dimensions     int
	Collection     string
	SameThreshold  float64
	JudgeThreshold float64
	MigratingTo    string
}

// Point is the record as the companion's metadata point (a 1-dimension
// vector, like every point of the companion).
func (r EmbedderRecord) Point() *qdrant.PointStruct {
	p := &qdrant.PointStruct{
		Id:      EmbedderRecordID(),
		Vectors: qdrant.NewVectorsDense([]float32{1}),
		Payload: map[string]*qdrant.Value{
			companionKind:       qdrant.NewValueString("meta"),
			companionModel:      qdrant.NewValueString(r.Model),
			companionDimensions: qdrant.NewValueInt(int64(r.Dimensions)),
			companionCollection: qdrant.NewValueString(r.Collection),
		},
	}
	if r.MigratingTo != "" {
		p.Payload[companionMigrating] = qdrant.NewValueString(r.MigratingTo)
	}
	if r.SameThreshold > 0 && r.JudgeThreshold > 0 {
		p.Payload[companionSame] = qdrant.NewValueDouble(r.SameThreshold)
		p.Payload[companionJudge] = qdrant.NewValueDouble(r.JudgeThreshold)
	}
	return p
}

// ParseEmbedderRecord reads the metadata point's payload.
func ParseEmbedderRecord(payload map[string]*qdrant.Value) EmbedderRecord {
	r := EmbedderRecord{
		Model:      payload[companionModel].GetStringValue(),
		Dimensions: int(payload[companionDimensions].GetIntegerValue()),
		Collection: payload[companionCollection].GetStringValue(),
		// Bands outside (0, 1], or a judge band above the same band, were not
		// written by memrank: ignored.
		SameThreshold:  number(payload[companionSame]),
		JudgeThreshold: number(payload[companionJudge]),
		MigratingTo:    payload[companionMigrating].GetStringValue(),
	}
	if !(r.JudgeThreshold > 0 && r.JudgeThreshold <= r.SameThreshold && r.SameThreshold <= 1) {
		r.SameThreshold, r.JudgeThreshold = 0, 0
	}
	return r
}

// number reads a double or an integer value (0 for anything else).
func number(v *qdrant.Value) float64 {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_DoubleValue:
		return k.DoubleValue
	case *qdrant.Value_IntegerValue:
		return float64(k.IntegerValue)
	}
	return 0
}
