package eval

import (
	"context"
	"fmt"
	"maps"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/rank"
)

// Store is where a set is loaded and asked; *qdrant.Client satisfies it.
type Store interface {
	rank.Source
	CollectionExists(ctx context.Context, name string) (bool, error)
	CreateCollection(ctx context.Context, req *qdrant.CreateCollection) error
	Upsert(ctx context.Context, req *qdrant.UpsertPoints) (*qdrant.UpdateResult, error)
}

var _ Store = (*qdrant.Client)(nil)

// loadBatch is the points upserted at a time.
const loadBatch = 256

// Load makes collection hold the set's memories. A collection that does
// not exist is created (the header's distance and dim) and filled, every
// payload without dropKey when it is set; one that exists is used as it is
// (its unnamed vector must have the set's dim), and nothing is written.
// progress, when not nil, is told of each batch. It reports whether it
// wrote.
func Load(ctx context.Context, st Store, set *Set, collection, dropKey string, progress func(done, total int)) (bool, error) {
	exists, err := st.CollectionExists(ctx, collection)
	if err != nil {
		return false, fmt.Errorf("collection %q: %w", collection, err)
	}
	if exists {
		info, err := st.GetCollectionInfo(ctx, collection)
		if err != nil {
			return false, fmt.Errorf("collection %q: %w", collection, err)
		}
		vp := info.GetConfig().GetParams().GetVectorsConfig().GetParams()
		switch {
		case vp == nil:
			return false, fmt.Errorf("collection %q exists without an unnamed dense vector; the set is asked on one", collection)
		case vp.GetSize() != uint64(set.Header.Dim):
			return false, fmt.Errorf("collection %q exists with vectors of %d dimensions; the set's dim is %d", collection, vp.GetSize(), set.Header.Dim)
		}
		return false, nil
	}
	for i := range set.Memories {
		if set.Memories[i].Vector == nil {
			return false, fmt.Errorf("memory %s has no vector (its text was not embedded)", set.Memories[i].ID)
		}
	}
	err = st.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: collection,
		VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(set.Header.Dim), Distance: set.Header.Distance}),
	})
	if err != nil {
		return false, fmt.Errorf("creating collection %q: %w", collection, err)
	}
	total := len(set.Memories)
	if progress != nil {
		progress(0, total)
	}
	for start := 0; start < total; start += loadBatch {
		batch := set.Memories[start:min(start+loadBatch, total)]
		pts := make([]*qdrant.PointStruct, len(batch))
		for i := range batch {
			m := &batch[i]
			payload := m.Payload
			if _, ok := payload[dropKey]; ok && dropKey != "" {
				payload = maps.Clone(payload)
				delete(payload, dropKey)
			}
			pts[i] = &qdrant.PointStruct{Id: m.Point, Vectors: qdrant.NewVectorsDense(m.Vector), Payload: payload}
		}
		if _, err := st.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: collection, Wait: qdrant.PtrOf(true), Points: pts}); err != nil {
			return true, fmt.Errorf("loading collection %q: %w", collection, err)
		}
		if progress != nil {
			progress(start+len(batch), total)
		}
	}
	return true, nil
}
