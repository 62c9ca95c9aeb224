package embed

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// ErrUnknownModel is returned by NewBuiltin for a model that is not one of
// memrank's built-in local embedders.
var ErrUnknownModel = errors.New("embed: not a built-in model")

// Bands are the write path's tier-2 similarity bands for one embedder: a
// cosine at or above Same is the same fact, [Judge, Same) goes to the
// judge, below Judge is another fact.
type Bands struct {
	Same  float64
	Judge float64
}

// CalibratedBands returns the bands calibrated for model (a model name with
// its dimensions), when memrank ships a calibration for it: the semantic
// local embedder's, chosen on the fit half of the labeled pair set
// examples/pairs (docs/embedders.md). Other models use the configured
// bands.
func CalibratedBands(model string) (Bands, bool) {
	name, _, _ := strings.Cut(model, ":")
	if name == SemanticModelVersion {
		return semanticBands, true
	}
	return Bands{}, false
}

// semanticBands are memrank-local-sem-v1's bands.
var semanticBands = Bands{Same: 0.74, Judge: 0.62}

// NewBuiltin returns the built-in local embedder a model name designates,
// e.g. "memrank-local-hash-v1:384" or "memrank-local-sem-v1:384":
// collections record the model they were written with, and memrank can
// always embed for them, whatever the configured default.
func NewBuiltin(model string) (Embedder, error) {
	name, d, ok := strings.Cut(model, ":")
	dims, err := strconv.Atoi(d)
	if !ok || err != nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownModel, model)
	}
	var e Embedder
	switch name {
	case LocalModelVersion:
		e, err = NewLocal(dims)
	case SemanticModelVersion:
		e, err = NewSemantic(dims)
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnknownModel, model)
	}
	if err != nil {
		return nil, err
	}
	if e.Model() != model { // "+384", "0384": not a name memrank writes
		return nil, fmt.Errorf("%w: %q", ErrUnknownModel, model)
	}
	return e, nil
}

// builtins keeps the built-in embedders a Service has made for recorded
// models, one per model name, at most maxBuiltins of them (the names come
// from the store's records; past the bound an embedder is made per call,
// which costs microseconds, the word table being shared).
type builtins struct {
	mu sync.Mutex
	m  map[string]Embedder
}

const maxBuiltins = 16

func (b *builtins) get(model string) (Embedder, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.m[model]; ok {
		return e, true
	}
	e, err := NewBuiltin(model)
	if err != nil {
		return nil, false
	}
	if b.m == nil {
		b.m = map[string]Embedder{}
	}
	if len(b.m) < maxBuiltins {
		b.m[model] = e
	}
	return e, true
}

// BandsFor is the tier-2 bands of a collection written with model: those
// recorded with it (non-zero), else those calibrated for the model, else
// the configured ones.
func BandsFor(model string, recorded, configured Bands) Bands {
	if recorded.Same > 0 {
		return recorded
	}
	if b, ok := CalibratedBands(model); ok {
		return b
	}
	return configured
}
