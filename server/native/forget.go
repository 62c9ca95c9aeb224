package native

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/qdrantjson"
)

// Forgetter erases what the write path stored (docs/forgetting.md);
// *dedup.Engine satisfies it.
type Forgetter interface {
	ForgetSession(ctx context.Context, collection, tenant, session string) (dedup.ForgetReport, error)
	DeleteMemory(ctx context.Context, collection, tenant, id string) (dedup.ForgetReport, error)
}

var _ Forgetter = (*dedup.Engine)(nil)

var errForgetOff = qdrantjson.Errorf(qdrantjson.ClassNotImplemented, "the write path is not configured on this server, so there is nothing to forget")

// serveMemoryMethods is /v1/memories/{id}: GET reads it, DELETE deletes it.
func (s *Service) serveMemoryMethods(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		s.serveDeleteMemory(w, r)
	case http.MethodGet, http.MethodHead:
		s.serveMemory(w, r)
	default:
		w.Header().Set("Allow", "GET, DELETE")
		qdrantjson.WriteError(w, time.Now(), qdrantjson.Errorf(qdrantjson.ClassMethodNotAllowed, "%s %s accepts GET and DELETE", r.Method, r.URL.Path))
	}
}

// serveForgetSession is DELETE /v1/sessions/{id}: the session's evidence
// removed from every memory of the caller's tenant in the collection.
func (s *Service) serveForgetSession(w http.ResponseWriter, r *http.Request) {
	s.serveForget(w, r, "forget", func(ctx context.Context, collection, tenant string) (dedup.ForgetReport, error) {
		id := r.PathValue("id")
		if id == "" || len(id) > dedup.MaxFieldBytes {
			return dedup.ForgetReport{}, inputError("id", "want a session id of 1 to %d bytes", dedup.MaxFieldBytes)
		}
		return s.cfg.Forgetter.ForgetSession(ctx, collection, tenant, id)
	})
}

// serveDeleteMemory is DELETE /v1/memories/{id}.
func (s *Service) serveDeleteMemory(w http.ResponseWriter, r *http.Request) {
	s.serveForget(w, r, "delete", func(ctx context.Context, collection, tenant string) (dedup.ForgetReport, error) {
		id, err := pathID(r)
		if err != nil {
			return dedup.ForgetReport{}, err
		}
		return s.cfg.Forgetter.DeleteMemory(ctx, collection, tenant, id)
	})
}

// serveForget is what the two DELETE routes share: method, configuration,
// the collection (?collection=C, or a body {"collection": "C"}), tenancy,
// deadline, the answer.
func (s *Service) serveForget(w http.ResponseWriter, r *http.Request, op string,
	call func(ctx context.Context, collection, tenant string) (dedup.ForgetReport, error)) {
	start, ok := s.begin(w, r, op, http.MethodDelete, offUnless(s.cfg.Forgetter != nil, errForgetOff))
	if !ok {
		return
	}
	body, err := qdrantjson.ReadBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	collection, err := forgetCollection(r, body)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	respond(s, w, r, start, op, collection, func(ctx context.Context, tenant string) (dedup.ForgetReport, error) {
		return call(ctx, collection, tenant)
	})
}

// forgetCollection is the collection of a DELETE: ?collection=C, or the
// body {"collection": "C"}; both may be given if they agree.
func forgetCollection(r *http.Request, body []byte) (string, error) {
	q, err := queryParams(r, "collection")
	if err != nil {
		return "", err
	}
	fromQuery, fromBody := q["collection"], ""
	if len(bytes.TrimSpace(body)) > 0 {
		err := decodeObject(body, []string{"collection"}, func(key string, v qdrantjson.Value) error {
			var err error
			fromBody, err = jsonString(key, v)
			return err
		})
		if err != nil {
			return "", err
		}
	}
	switch {
	case fromQuery != "" && fromBody != "" && fromQuery != fromBody:
		return "", inputError("collection", "the query names %.80q and the body %.80q", fromQuery, fromBody)
	case fromQuery != "":
		return fromQuery, nil
	case fromBody != "":
		return fromBody, nil
	}
	return "", qdrantjson.Errorf(qdrantjson.ClassBadRequest, "collection: required (?collection=NAME or a body {\"collection\": NAME})")
}
