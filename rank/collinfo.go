package rank

import (
	"context"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
)

// vectorKind is what the read path needs to know about one of a
// collection's vectors.
type vectorKind struct {
	known    bool
	distance qdrant.Distance // dense vectors
	sparse   bool            // a sparse vector: scores are dot products
	multi    bool            // a multivector: no single vector to compare
}

// collInfo is a collection's vector configuration.
type collInfo struct {
	named  bool // dense vectors are named (a params map)
	dense  map[string]vectorKind
	sparse map[string]bool
}

func newCollInfo(info *qdrant.CollectionInfo) *collInfo {
	params := info.GetConfig().GetParams()
	ci := &collInfo{dense: map[string]vectorKind{}, sparse: map[string]bool{}}
	vc := params.GetVectorsConfig()
	if p := vc.GetParams(); p != nil {
		ci.dense[""] = vectorKind{known: true, distance: p.GetDistance(), multi: p.GetMultivectorConfig() != nil}
	} else if m := vc.GetParamsMap(); m != nil {
		ci.named = true
		for name, p := range m.GetMap() {
			ci.dense[name] = vectorKind{known: true, distance: p.GetDistance(), multi: p.GetMultivectorConfig() != nil}
		}
	}
	for name := range params.GetSparseVectorsConfig().GetMap() {
		ci.sparse[name] = true
	}
	return ci
}

// vector describes the vector called name ("" is the default).
func (ci *collInfo) vector(name string) vectorKind {
	if v, ok := ci.dense[name]; ok {
		return v
	}
	if ci.sparse[name] {
		return vectorKind{known: true, sparse: true}
	}
	return vectorKind{}
}

// infoCache caches collections' vector configurations, bounded and with a
// time to live, since a collection can be deleted and created again with
// another distance.
type infoCache struct {
	src Source
	now func() time.Time
	mu  sync.Mutex
	lru *lru[string, *collInfo]
}

func newInfoCache(src Source, size int, ttl time.Duration, now func() time.Time) *infoCache {
	return &infoCache{src: src, now: now, lru: newLRU[string, *collInfo](size, ttl)}
}

// get returns the configuration of a collection, asking the source on a
// miss with the caller's context (and so the caller's credentials).
func (c *infoCache) get(ctx context.Context, name string) (*collInfo, error) {
	c.mu.Lock()
	ci, ok := c.lru.get(name, c.now())
	c.mu.Unlock()
	if ok {
		return ci, nil
	}
	info, err := c.src.GetCollectionInfo(ctx, name)
	if err != nil {
		return nil, err
	}
	ci = newCollInfo(info)
	c.mu.Lock()
	c.lru.add(name, ci, c.now())
	c.mu.Unlock()
	return ci, nil
}
