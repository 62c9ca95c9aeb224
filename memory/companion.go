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
)

// EmbedderRecord is what an audit companion records about the embedder of
// its collection. Model is empty when callers supply the vectors.
type EmbedderRecord struct {
	Model      string
	Dimensions int
	Collection string
}

// Point is the record as the companion's metadata point (a 1-dimension
// vector, like every point of the companion).
func (r EmbedderRecord) Point() *qdrant.PointStruct {
	return &qdrant.PointStruct{
		Id:      EmbedderRecordID(),
		Vectors: qdrant.NewVectorsDense([]float32{1}),
		Payload: map[string]*qdrant.Value{
			companionKind:       qdrant.NewValueString("meta"),
			companionModel:      qdrant.NewValueString(r.Model),
			companionDimensions: qdrant.NewValueInt(int64(r.Dimensions)),
			companionCollection: qdrant.NewValueString(r.Collection),
		},
	}
}

// ParseEmbedderRecord reads the metadata point's payload.
func ParseEmbedderRecord(payload map[string]*qdrant.Value) EmbedderRecord {
	return EmbedderRecord{
		Model:      payload[companionModel].GetStringValue(),
		Dimensions: int(payload[companionDimensions].GetIntegerValue()),
		Collection: payload[companionCollection].GetStringValue(),
	}
}
