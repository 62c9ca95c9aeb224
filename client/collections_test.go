package client

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/server/native"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/telemetry/settings"
	"github.com/memrank/memrank/upstream"
)

// noRanker is a read path the native API needs and these tests never use.
type noRanker struct{ native.Retriever }

// realServer is the native API over the write path and the default
// embedder on the embedded store, and a client of that store.
func realServer(t *testing.T) (*Client, *qdrant.Client) {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ip := upstream.ServeInProcess(store.NewServer(db))
	t.Cleanup(func() { ip.Close() })
	qc, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.Close() })
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embed.New(embed.DefaultConfig(), settings.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := dedup.New(qc, dedup.Config{Codec: codec, Embedder: emb, Embedders: emb})
	if err != nil {
		t.Fatal(err)
	}
	h, err := native.New(native.Config{Ranker: noRanker{}, Embedder: emb, Embedders: emb, Writer: eng, Collections: eng})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return c, qc
}

// TestCreateCollectionAndEmbed: CreateCollection makes the collection and
// says so the second time; Embed returns exactly the vector Observe
// stored; the server's refusals are kinds of Error.
func TestCreateCollectionAndEmbed(t *testing.T) {
	c, qc := realServer(t)
	ctx := context.Background()
	want := CreatedCollection{Collection: "notes", Created: true, Model: "memrank-local-sem-v1:384", Dimensions: 384,
		Distance: "Cosine", AuditCollection: "notes_memrank_audit"}
	got, err := c.CreateCollection(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, *got); d != "" {
		t.Errorf("create (-want +got):\n%s", d)
	}
	if got, err := c.CreateCollection(ctx, "notes"); err != nil || got.Created || !got.Existed {
		t.Errorf("create again: %+v, %v; want Existed", got, err)
	}

	out, err := c.Observe(ctx, Observation{Collection: "notes", Text: "Dana uses Neovim"})
	if err != nil {
		t.Fatal(err)
	}
	pts, err := qc.Get(ctx, &qdrant.GetPoints{CollectionName: "notes", Ids: []*qdrant.PointId{qdrant.NewID(out.MemoryID)},
		WithVectors: qdrant.NewWithVectors(true)})
	if err != nil || len(pts) != 1 {
		t.Fatalf("stored: %v (%d points)", err, len(pts))
	}
	stored := pts[0].GetVectors().GetVector().GetDenseVector().GetData()
	e, err := c.Embed(ctx, EmbeddingsRequest{Model: "memrank-local-sem-v1", Input: []string{"Dana uses Neovim", "Dana likes tea"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Vectors) != 2 || !cmp.Equal(e.Vectors[0], stored) || e.Model != "memrank-local-sem-v1:384" || e.PromptTokens != 6 {
		t.Errorf("embed: model %q, %d vectors, tokens %d, the first equal to the stored one: %v",
			e.Model, len(e.Vectors), e.PromptTokens, len(e.Vectors) > 0 && cmp.Equal(e.Vectors[0], stored))
	}

	for _, tt := range []struct {
		name string
		call func() error
		kind error
		msg  string
	}{
		{"an unknown model", func() error {
			_, err := c.Embed(ctx, EmbeddingsRequest{Model: "text-embedding-3-small", Input: []string{"x"}})
			return err
		}, ErrNotFound, `The model "text-embedding-3-small" does not exist`},
		{"no collection name", func() error { _, err := c.CreateCollection(ctx, ".."); return err }, ErrBadRequest, "not a collection name"},
		{"a collection of another size", func() error {
			if err := qc.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "small",
				VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 8, Distance: qdrant.Distance_Cosine})}); err != nil {
				t.Fatal(err)
			}
			_, err := c.CreateCollection(ctx, "small")
			return err
		}, ErrConflict, "8-dimensional"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var ce *Error
			if !errors.Is(err, tt.kind) || !errors.As(err, &ce) || !strings.Contains(ce.Message, tt.msg) {
				t.Errorf("err %v, want %v with %q", err, tt.kind, tt.msg)
			}
		})
	}
}
