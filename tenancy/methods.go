package tenancy

import "strings"

// Class says how a front treats a gRPC method when tenancy is on.
type Class uint8

const (
	// Refused methods cannot be scoped: they are refused for everyone
	// (ErrUnsupported). The zero value, so a method nobody classified is
	// never forwarded by mistake.
	Refused Class = iota
	// Scoped methods read or write points: the front decodes the request,
	// scopes it with the Scope* helper of its type and forwards the result.
	Scoped
	// Open methods touch no tenant data (health, collection metadata,
	// reflection): forwarded as they are, for any caller with a tenant, and
	// for administrators.
	Open
	// Admin methods change collections (create, update, delete, aliases,
	// snapshots, indexes, shard keys, cluster setup): forwarded only for
	// requests Policy.Admin accepts.
	Admin
)

func (c Class) String() string {
	switch c {
	case Scoped:
		return "scoped"
	case Open:
		return "open"
	case Admin:
		return "admin"
	}
	return "refused"
}

// pointMethods are the scoped methods of qdrant.Points.
var pointMethods = map[string]bool{
	"Query": true, "QueryBatch": true, "QueryGroups": true,
	"Search": true, "SearchBatch": true, "SearchGroups": true,
	"Scroll": true, "Count": true, "Get": true, "Facet": true,
	"SearchMatrixPairs": true, "SearchMatrixOffsets": true,
	"Upsert": true, "Delete": true, "UpdateVectors": true, "DeleteVectors": true,
	"SetPayload": true, "OverwritePayload": true, "DeletePayload": true, "ClearPayload": true,
}

// pointAdmin are the qdrant.Points methods that change a collection's
// schema rather than points.
var pointAdmin = map[string]bool{"CreateFieldIndex": true, "DeleteFieldIndex": true}

// collectionReads are the qdrant.Collections methods that read metadata
// only. Collection info reports counts over all tenants: that is the price
// of letting clients (and the ranker) read a collection's vector config.
var collectionReads = map[string]bool{
	"Get": true, "List": true, "CollectionExists": true,
	"ListAliases": true, "ListCollectionAliases": true,
	"CollectionClusterInfo": true, "ListShardKeys": true,
}

// Classify classifies a full gRPC method name ("/qdrant.Points/Query").
// Unlisted methods of qdrant.Points (UpdateBatch, the deprecated Recommend
// and Discover families, anything a newer Qdrant adds) are Refused; other
// unlisted methods are Admin: an unknown service is not forwarded for a
// tenant.
func Classify(fullMethod string) Class {
	svc, method, ok := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if !ok {
		return Refused
	}
	switch {
	case svc == "qdrant.Points":
		switch {
		case pointMethods[method]:
			return Scoped
		case pointAdmin[method]:
			return Admin
		}
		return Refused
	case svc == "qdrant.Collections" && collectionReads[method]:
		return Open
	case svc == "qdrant.Qdrant" && method == "HealthCheck",
		svc == "grpc.health.v1.Health",
		strings.HasPrefix(svc, "grpc.reflection."):
		return Open
	}
	return Admin
}
