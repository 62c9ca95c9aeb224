package native

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/memrank/memrank/qdrantjson"
)

// The write path's routes (memories, stats, used, forget, review) share
// their frame: begin answers a wrong method or an unconfigured route,
// the route reads its input, and respond runs the call in the request's
// tenant and deadline and writes the answer or the error.

// begin starts a route: it answers a method other than method, and the
// 501 off when the route's part is not configured (off nil: it is). ok
// false means it has answered.
func (s *Service) begin(w http.ResponseWriter, r *http.Request, op, method string, off error) (start time.Time, ok bool) {
	start = time.Now()
	if !allow(w, r, method) {
		return start, false
	}
	if off != nil {
		s.fail(w, r, start, op, off)
		return start, false
	}
	return start, true
}

// offUnless is off when the route's part is missing, nil when it is there.
func offUnless(configured bool, off error) error {
	if configured {
		return nil
	}
	return off
}

// respond runs call in the request's tenant and deadline, with the span
// naming collection, and answers its result or its error.
func respond[T any](s *Service, w http.ResponseWriter, r *http.Request, start time.Time, op, collection string,
	call func(ctx context.Context, tenant string) (T, error)) {
	ctx, cancel, tenant, err := s.writeContext(r)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	defer cancel()
	setWriteAttrs(ctx, collection)
	out, err := call(ctx, tenant)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	s.answer(w, r, start, op, out)
}

// queryParams reads a query string whose parameters are each given at
// most once and all among known.
func queryParams(r *http.Request, known ...string) (map[string]string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, qdrantjson.Errorf(qdrantjson.ClassBadRequest, "the query string is malformed")
	}
	out := make(map[string]string, len(q))
	for k, vs := range q {
		if !slices.Contains(known, k) {
			return nil, qdrantjson.Errorf(qdrantjson.ClassBadRequest, "unknown query parameter %.80q (known: %s)", k, strings.Join(known, ", "))
		}
		if len(vs) > 1 {
			return nil, qdrantjson.Errorf(qdrantjson.ClassBadRequest, "%s: given twice", k)
		}
		out[k] = vs[0]
	}
	return out, nil
}

// errNoCollection is a route's missing ?collection=.
var errNoCollection = qdrantjson.Errorf(qdrantjson.ClassBadRequest, "collection: required (?collection=NAME)")
