package client

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"net/url"
)

// CreatedCollection is what CreateCollection made, or found.
type CreatedCollection struct {
	Collection string `json:"collection"`
	// Created says this call made the collection; Existed that it was a
	// memory collection already (kept as it is).
	Created         bool   `json:"created"`
	Existed         bool   `json:"existed"`
	Model           string `json:"model"` // the embedder the collection records
	Dimensions      int    `json:"dimensions"`
	Distance        string `json:"distance"`
	AuditCollection string `json:"audit_collection"`
}

// CreateCollection makes name a memory collection before anything is
// observed into it, as the first observation would: the collection at the
// server's embedder's size, its payload indexes and its audit companion.
// An existing memory collection is kept (Existed); one of another vector
// size is an ErrConflict. Under tenancy it needs an administrator's key.
func (c *Client) CreateCollection(ctx context.Context, name string) (*CreatedCollection, error) {
	switch name {
	case "", ".", "..":
		// A path step, or no segment: another route.
		return nil, &Error{Status: http.StatusBadRequest, Message: fmt.Sprintf("%q is not a collection name", name)}
	}
	return call[CreatedCollection](ctx, c, http.MethodPut, "/v1/collections/"+url.PathEscape(name), nil, nil)
}

// EmbeddingsRequest asks POST /v1/embeddings for the vectors of texts.
type EmbeddingsRequest struct {
	// Model is a built-in model ("memrank-local-sem-v1:384",
	// "memrank-local-hash-v1" at Dimensions) or the server's configured
	// embedder's; "" is the configured one.
	Model string
	Input []string
	// Dimensions is the model's size (0: its own); the server never
	// shortens a vector.
	Dimensions int
}

// Embeddings are the vectors of an EmbeddingsRequest's texts, in order:
// exactly the float32 vectors /v1/observe stores for those texts.
type Embeddings struct {
	Model        string
	Vectors      [][]float32
	PromptTokens int
}

// Embed returns the server's embeddings of req.Input. They travel in
// base64, so that every float32 arrives exactly.
func (c *Client) Embed(ctx context.Context, req EmbeddingsRequest) (*Embeddings, error) {
	body := struct {
		Model          string   `json:"model,omitempty"`
		Input          []string `json:"input"`
		EncodingFormat string   `json:"encoding_format"`
		Dimensions     int      `json:"dimensions,omitempty"`
	}{req.Model, req.Input, "base64", req.Dimensions}
	var out struct {
		Data []struct {
			Index     int    `json:"index"`
			Embedding string `json:"embedding"`
		} `json:"data"`
		Model string `json:"model"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := c.Do(ctx, http.MethodPost, "/v1/embeddings", nil, body, &out); err != nil {
		return nil, err
	}
	if len(out.Data) != len(req.Input) {
		return nil, fmt.Errorf("client: /v1/embeddings answered %d embeddings for %d texts", len(out.Data), len(req.Input))
	}
	e := &Embeddings{Model: out.Model, Vectors: make([][]float32, len(out.Data)), PromptTokens: out.Usage.PromptTokens}
	for _, d := range out.Data {
		raw, err := base64.StdEncoding.DecodeString(d.Embedding)
		if err != nil || len(raw)%4 != 0 || d.Index < 0 || d.Index >= len(e.Vectors) || e.Vectors[d.Index] != nil {
			return nil, fmt.Errorf("client: /v1/embeddings answered a malformed embedding (index %d)", d.Index)
		}
		v := make([]float32, len(raw)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		e.Vectors[d.Index] = v
	}
	return e, nil
}
