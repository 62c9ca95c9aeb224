package native

import (
	"bytes"
	"context"
	"net/http"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/qdrantjson"
)

// Collections makes memory collections ahead of their first observation;
// *dedup.Engine satisfies it.
type Collections interface {
	CreateCollection(ctx context.Context, collection string) (dedup.Created, error)
}

var _ Collections = (*dedup.Engine)(nil)

var errCollectionsOff = qdrantjson.Errorf(qdrantjson.ClassNotImplemented, "the write path is not configured on this server, so it makes no memory collections")

// CreatedCollection is the result of PUT /v1/collections/{name}.
type CreatedCollection struct {
	Collection string `json:"collection"`
	// Created and Existed say whether this call made the collection or
	// found it (an existing memory collection is kept as it is).
	Created         bool   `json:"created"`
	Existed         bool   `json:"existed"`
	Model           string `json:"model"`
	Dimensions      int    `json:"dimensions"`
	Distance        string `json:"distance"`
	AuditCollection string `json:"audit_collection"`
}

// serveCreateCollection is PUT /v1/collections/{name}: the memory
// collection, its payload indexes and its audit companion, made as the
// first observation would make them. Collections are shared by every
// tenant, so with tenancy on only an administrator may make one. The body
// is empty, {} or {"collection": name}.
func (s *Service) serveCreateCollection(w http.ResponseWriter, r *http.Request) {
	const op = "create collection"
	start, ok := s.begin(w, r, op, http.MethodPut, offUnless(s.cfg.Collections != nil, errCollectionsOff))
	if !ok {
		return
	}
	if err := s.cfg.Tenancy.Admin(headerMetadata(r.Header)); err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	body, err := qdrantjson.ReadBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	collection := r.PathValue("name")
	if len(bytes.TrimSpace(body)) > 0 {
		// The embedder decides the vectors: there is nothing to set, only
		// the name to repeat, as the other /v1 bodies name their collection.
		err := decodeObject(body, []string{"collection"}, func(key string, v qdrantjson.Value) error {
			c, err := jsonString(key, v)
			if err == nil && c != collection {
				err = inputError(key, "names %.80q, but the path names %.80q (leave it out)", c, collection)
			}
			return err
		})
		if err != nil {
			s.fail(w, r, start, op, err)
			return
		}
	}
	ctx := s.cfg.AuthContext(r.Context(), r)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.RequestTimeout)
		defer cancel()
	}
	setWriteAttrs(ctx, collection)
	c, err := s.cfg.Collections.CreateCollection(ctx, collection)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	s.answer(w, r, start, op, CreatedCollection{Collection: c.Collection, Created: !c.Existed, Existed: c.Existed,
		Model: c.Model, Dimensions: c.Dimensions, Distance: "Cosine", AuditCollection: c.AuditCollection})
}
