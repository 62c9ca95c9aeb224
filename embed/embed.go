// Package embed turns texts into vectors for memrank: the query texts of the
// native retrieve API and, on the write path, the memories themselves.
//
// Embedder is the one interface every driver satisfies. This package has two
// drivers and a wrapper:
//   - NewLocal: deterministic, offline feature hashing that needs no model,
//     no network and no GPU; the default, used for text queries and the
//     bundled demo. It is lexical, not semantic; see Local.
//   - NewOpenAI: any OpenAI-compatible embeddings API (OpenAI, or a local
//     server), in batches, with a timeout per attempt and retries with
//     backoff on 429, 5xx and transport errors only; see OpenAIConfig.
//   - NewCached: an LRU cache in front of either, keyed by (model, text), that
//     also coalesces identical work in flight, so a text written and then
//     queried, or observed by many writers at once, is embedded once.
//
// Vectors from different models (or from one model at different dimensions)
// are not comparable. Model names therefore carry a version and the dimension,
// so a collection can record what it was written with and refuse to mix.
package embed

import (
	"context"
	"errors"
)

// Embedder turns texts into vectors.
type Embedder interface {
	// Embed returns one vector per text, in order, each of Dimensions()
	// components. It honours ctx cancellation.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dimensions is the length of every vector Embed returns.
	Dimensions() int
	// Model names the model and its version, e.g.
	// "memrank-local-hash-v1:384"; vectors with different Model values are
	// not comparable.
	Model() string
}

// ErrDimensions is returned when a driver is asked for a dimension it cannot
// produce.
var ErrDimensions = errors.New("embed: invalid dimensions")

// ErrClosed is returned by a Cached embedder's misses after Shutdown.
var ErrClosed = errors.New("embed: shut down")
