package dedup_test

import (
	"context"
	"errors"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
)

// TestMismatchErrorText: a refused write names the collection's vectors by
// their size, and a model only where there is one (never "vectors" as if
// it were a model), then what to send instead.
func TestMismatchErrorText(t *testing.T) {
	tests := []struct {
		name string
		err  dedup.MismatchError
		want string
	}{
		{"two models", dedup.MismatchError{Collection: "m", Had: "text-embedding-3-small", HadDims: 1536, Want: "memrank-local-sem-v1:384", WantDims: 384},
			"collection m was written with text-embedding-3-small (1536 dimensions); this write uses memrank-local-sem-v1:384 (384 dimensions): " +
				"write it with that embedder, or use another collection"},
		{"a model, then a caller's vector", dedup.MismatchError{Collection: "m", Had: "memrank-local-sem-v1:384", HadDims: 384, Want: dedup.CallerVectors, WantDims: 2},
			"collection m was written with memrank-local-sem-v1:384 (384 dimensions); this vector has 2: " +
				"send 384-dimensional vectors made by memrank-local-sem-v1:384, or use another collection"},
		{"callers' vectors, then another size", dedup.MismatchError{Collection: "m", Had: dedup.CallerVectors, HadDims: 3, Want: dedup.CallerVectors, WantDims: 2},
			"collection m was written with caller-supplied 3-dimensional vectors; this vector has 2: send 3-dimensional vectors, or use another collection"},
		{"callers' vectors, then a text to embed", dedup.MismatchError{Collection: "m", Had: dedup.CallerVectors, HadDims: 3, Want: "memrank-local-sem-v1:384", WantDims: 384},
			"collection m was written with caller-supplied 3-dimensional vectors; this write embeds its text with memrank-local-sem-v1:384 (384 dimensions): " +
				"send 3-dimensional vectors, or use another collection"},
		{"no record, then a caller's vector", dedup.MismatchError{Collection: "m", Had: dedup.UnrecordedEmbedder, HadDims: 384, Want: dedup.CallerVectors, WantDims: 2},
			"collection m holds 384-dimensional vectors; this vector has 2: send 384-dimensional vectors, or use another collection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestObserveVectorOfAnotherSize: a caller's 2-dimensional vector into a
// collection another tool made with 384-dimensional vectors (no embedder
// record) is refused, naming both sizes.
func TestObserveVectorOfAnotherSize(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := h.client.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "theirs",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 384, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	_, err := h.eng.Observe(ctx, dedup.Observation{Collection: "theirs", Text: "Dana likes tea", Vector: []float32{0.6, 0.8}})
	want := "collection theirs holds 384-dimensional vectors; this vector has 2: send 384-dimensional vectors, or use another collection"
	if !errors.Is(err, dedup.ErrEmbedderMismatch) || err.Error() != want {
		t.Errorf("err %v, want ErrEmbedderMismatch %q", err, want)
	}
}
