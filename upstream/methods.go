package upstream

import "strings"

// readMethods are the qdrant.Points and qdrant.Collections methods that
// change nothing. Every other method of those services (and of any other
// qdrant.* service but Snapshots and Qdrant) is a write, so one a newer
// Qdrant adds is checked too.
var readMethods = map[string]bool{
	"/qdrant.Points/Get": true, "/qdrant.Points/Search": true, "/qdrant.Points/SearchBatch": true,
	"/qdrant.Points/SearchGroups": true, "/qdrant.Points/Scroll": true, "/qdrant.Points/Recommend": true,
	"/qdrant.Points/RecommendBatch": true, "/qdrant.Points/RecommendGroups": true, "/qdrant.Points/Discover": true,
	"/qdrant.Points/DiscoverBatch": true, "/qdrant.Points/Count": true, "/qdrant.Points/Query": true,
	"/qdrant.Points/QueryBatch": true, "/qdrant.Points/QueryGroups": true, "/qdrant.Points/Facet": true,
	"/qdrant.Points/SearchMatrixPairs": true, "/qdrant.Points/SearchMatrixOffsets": true,
	"/qdrant.Collections/Get": true, "/qdrant.Collections/List": true, "/qdrant.Collections/ListCollectionAliases": true,
	"/qdrant.Collections/ListAliases": true, "/qdrant.Collections/CollectionClusterInfo": true,
	"/qdrant.Collections/CollectionExists": true, "/qdrant.Collections/ListShardKeys": true,
}

// Writes reports whether method may change a collection's points or
// configuration. Snapshots copy a collection without changing it, and
// Qdrant's own service is the health check.
func Writes(method string) bool {
	if readMethods[method] {
		return false
	}
	svc, _, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	return strings.HasPrefix(svc, "qdrant.") && svc != "qdrant.Snapshots" && svc != "qdrant.Qdrant"
}
