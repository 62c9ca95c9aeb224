package native

import (
	"context"
	"net/http"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/qdrantjson"
)

// statsQuery reads /v1/stats' query: collection (required, once) and exact
// (optional: true scans every payload instead of counting from indexes).
func statsQuery(r *http.Request) (collection string, exact bool, err error) {
	q, err := queryParams(r, "collection", "exact")
	if err != nil {
		return "", false, err
	}
	switch x, given := q["exact"]; {
	case x == "true":
		exact = true
	case given && x != "false":
		return "", false, qdrantjson.Errorf(qdrantjson.ClassBadRequest, "exact: %.20q is not true or false", x)
	}
	if q["collection"] == "" {
		return "", false, errNoCollection
	}
	return q["collection"], exact, nil
}

// stats answers from indexed counts, or with ?exact=true from a scan.
func (s *Service) stats(ctx context.Context, collection, tenant string, exact bool) (dedup.Stats, error) {
	if exact {
		return s.cfg.Inspector.ScanStats(ctx, collection, tenant)
	}
	return s.cfg.Inspector.Stats(ctx, collection, tenant)
}
