package native

import (
	"context"
	"net/http"
	"net/url"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/qdrantjson"
)

// statsQuery reads /v1/stats' query: collection (required, once) and exact
// (optional: true scans every payload instead of counting from indexes).
func statsQuery(r *http.Request) (collection string, exact bool, err error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "", false, qdrantjson.Errorf(qdrantjson.ClassBadRequest, "the query string is malformed")
	}
	for k := range q {
		if k != "collection" && k != "exact" {
			return "", false, qdrantjson.Errorf(qdrantjson.ClassBadRequest, "unknown query parameter %.80q (known: collection, exact)", k)
		}
	}
	switch x := q["exact"]; {
	case len(x) > 1:
		return "", false, qdrantjson.Errorf(qdrantjson.ClassBadRequest, "exact: given twice")
	case len(x) == 1 && x[0] == "true":
		exact = true
	case len(x) == 1 && x[0] != "false":
		return "", false, qdrantjson.Errorf(qdrantjson.ClassBadRequest, "exact: %.20q is not true or false", x[0])
	}
	c := q["collection"]
	switch {
	case len(c) == 0 || c[0] == "":
		return "", false, qdrantjson.Errorf(qdrantjson.ClassBadRequest, "collection: required (?collection=NAME)")
	case len(c) > 1:
		return "", false, qdrantjson.Errorf(qdrantjson.ClassBadRequest, "collection: given twice")
	}
	return c[0], exact, nil
}

// stats answers from indexed counts, or with ?exact=true from a scan.
func (s *Service) stats(ctx context.Context, collection, tenant string, exact bool) (dedup.Stats, error) {
	if exact {
		return s.cfg.Inspector.ScanStats(ctx, collection, tenant)
	}
	return s.cfg.Inspector.Stats(ctx, collection, tenant)
}
