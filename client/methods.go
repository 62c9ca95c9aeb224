package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// idSegment is id as one path segment, or an ErrBadRequest before any
// request is made: without an id, /v1/memories//confirm is another route,
// and "." and ".." (which url.PathEscape leaves as they are) are path
// steps the server's router cleans away, so that /v1/memories/../confirm
// would reach another route with the caller's credentials.
func idSegment(id string) (string, error) {
	switch id {
	case "":
		return "", &Error{Status: http.StatusBadRequest, Message: "a memory or session id is required"}
	case ".", "..":
		return "", &Error{Status: http.StatusBadRequest, Message: fmt.Sprintf("%q is not a memory or session id", id)}
	}
	return url.PathEscape(id), nil
}

func memoryPath(id, suffix string) (string, error) {
	seg, err := idSegment(id)
	if err != nil {
		return "", err
	}
	return "/v1/memories/" + seg + suffix, nil
}

func collectionQuery(collection string) url.Values {
	return url.Values{"collection": {collection}}
}

// Observe offers one observation to the write path and returns its
// decision: a new memory, a restatement, an independent re-observation, a
// contradiction, or a rejection (a decision, not an error).
func (c *Client) Observe(ctx context.Context, obs Observation) (*Outcome, error) {
	return call[Outcome](ctx, c, http.MethodPost, "/v1/observe", nil, obs)
}

// Confirm says a person or agent confirmed memory conf.MemoryID: it counts
// as an independent observation.
func (c *Client) Confirm(ctx context.Context, conf Confirmation) (*Outcome, error) {
	p, err := memoryPath(conf.MemoryID, "/confirm")
	if err != nil {
		return nil, err
	}
	return call[Outcome](ctx, c, http.MethodPost, p, nil, conf)
}

// Correct stores obs as the correction of memoryID, which it supersedes.
func (c *Client) Correct(ctx context.Context, memoryID string, obs Observation) (*Outcome, error) {
	p, err := memoryPath(memoryID, "/correct")
	if err != nil {
		return nil, err
	}
	obs.Corrects = ""
	return call[Outcome](ctx, c, http.MethodPost, p, nil, obs)
}

// Used records that memory use.MemoryID was used in an answer (outcome
// feedback): it feeds the access boost, not the confidence.
func (c *Client) Used(ctx context.Context, use Confirmation) (*Outcome, error) {
	p, err := memoryPath(use.MemoryID, "/used")
	if err != nil {
		return nil, err
	}
	return call[Outcome](ctx, c, http.MethodPost, p, nil, use)
}

// Retrieve runs a query through memrank's ranking and returns the results
// with every factor of their scores.
func (c *Client) Retrieve(ctx context.Context, req RetrieveRequest) (*RetrieveResponse, error) {
	var out RetrieveResponse
	if err := c.Do(ctx, http.MethodPost, "/v1/retrieve", nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// History returns a memory as stored and its audit trail.
func (c *Client) History(ctx context.Context, collection, memoryID string) (*Memory, error) {
	p, err := memoryPath(memoryID, "")
	if err != nil {
		return nil, err
	}
	return call[Memory](ctx, c, http.MethodGet, p, collectionQuery(collection), nil)
}

// ForgetSession removes a session's evidence from every memory of the
// caller's tenant in collection: memories only it supported are deleted,
// the others recomputed without it (docs/forgetting.md).
func (c *Client) ForgetSession(ctx context.Context, collection, sessionID string) (*ForgetReport, error) {
	seg, err := idSegment(sessionID)
	if err != nil {
		return nil, err
	}
	return call[ForgetReport](ctx, c, http.MethodDelete, "/v1/sessions/"+seg, collectionQuery(collection), nil)
}

// ForgetMemory deletes one memory (and, by the server's forget.audit
// policy, its audit trail).
func (c *Client) ForgetMemory(ctx context.Context, collection, memoryID string) (*ForgetReport, error) {
	p, err := memoryPath(memoryID, "")
	if err != nil {
		return nil, err
	}
	return call[ForgetReport](ctx, c, http.MethodDelete, p, collectionQuery(collection), nil)
}

// Stats counts a collection's memories by bucket, tier and type.
func (c *Client) Stats(ctx context.Context, collection string) (*Stats, error) {
	return call[Stats](ctx, c, http.MethodGet, "/v1/stats", collectionQuery(collection), nil)
}
