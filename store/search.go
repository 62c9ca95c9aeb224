package store

import (
	"context"
	"sync"
)

// hit is a scored slot. rank is larger-is-better (metric.rank of score).
type hit struct {
	rank  float32
	score float32
	slot  uint32
}

// topK keeps the k best hits in a min-heap whose root is the worst kept
// hit. Ties on rank are broken by point id (smaller id is better), so
// results never depend on scan order or parallelism.
type topK struct {
	k    int
	ids  []PointID
	heap []hit
}

func newTopK(k int, ids []PointID) *topK {
	return &topK{k: k, ids: ids, heap: make([]hit, 0, min(k, 1024))}
}

// better reports whether a ranks before b.
func (t *topK) better(a, b hit) bool {
	if a.rank != b.rank {
		return a.rank > b.rank
	}
	return t.ids[a.slot].Compare(t.ids[b.slot]) < 0
}

func (t *topK) push(h hit) {
	if t.k <= 0 {
		return
	}
	if len(t.heap) < t.k {
		t.heap = append(t.heap, h)
		t.up(len(t.heap) - 1)
		return
	}
	if !t.better(h, t.heap[0]) {
		return
	}
	t.heap[0] = h
	t.down(0)
}

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.better(t.heap[p], t.heap[i]) {
			return
		}
		t.heap[p], t.heap[i] = t.heap[i], t.heap[p]
		i = p
	}
}

func (t *topK) down(i int) {
	n := len(t.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		w := l // the worse child
		if r := l + 1; r < n && t.better(t.heap[l], t.heap[r]) {
			w = r
		}
		if !t.better(t.heap[i], t.heap[w]) {
			return
		}
		t.heap[i], t.heap[w] = t.heap[w], t.heap[i]
		i = w
	}
}

// sorted returns the kept hits best first; the heap is consumed.
func (t *topK) sorted() []hit {
	out := make([]hit, len(t.heap))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = t.heap[0]
		last := len(t.heap) - 1
		t.heap[0] = t.heap[last]
		t.heap = t.heap[:last]
		t.down(0)
	}
	return out
}

// minParallelSlots is the collection size below which one goroutine scans:
// under it, starting workers costs more than it saves.
const minParallelSlots = 8 * chunkSlots

// scan scores every candidate slot against q and keeps the k best. allowed
// (nil = every live slot) restricts the candidates; exclude (-1 = none) is a
// slot to skip (the query point of a by-id query); threshold, if set, keeps
// only scores strictly better than it. The scan is split into up to
// `workers` slot ranges aligned to slab chunks, each with its own bounded
// heap; the heaps are merged at the end. It stops early when ctx ends.
func (c *collection) scan(ctx context.Context, q []float32, allowed bitset, exclude int64, threshold *float32, k, workers int) ([]hit, error) {
	n := uint32(len(c.ids))
	cand := c.live
	if allowed != nil {
		cand = allowed
	}
	if workers < 1 || n < minParallelSlots {
		workers = 1
	}
	chunks := (int(n) + chunkSlots - 1) / chunkSlots
	workers = min(workers, max(chunks, 1))
	per := (chunks + workers - 1) / workers

	heaps := make([]*topK, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		start := uint32(w * per * chunkSlots)
		end := min(uint32((w+1)*per*chunkSlots), n)
		h := newTopK(k, c.ids)
		heaps[w] = h
		run := func() {
			c.scanRange(ctx, q, cand, exclude, threshold, start, end, h)
		}
		if w == workers-1 {
			run() // the calling goroutine takes the last range
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, &Error{Kind: KindCanceled, Msg: err.Error(), Err: err}
	}
	if workers == 1 {
		return heaps[0].sorted(), nil
	}
	merged := newTopK(k, c.ids)
	for _, h := range heaps {
		for _, x := range h.heap {
			merged.push(x)
		}
	}
	return merged.sorted(), nil
}

func (c *collection) scanRange(ctx context.Context, q []float32, cand bitset, exclude int64, threshold *float32, start, end uint32, h *topK) {
	m := c.metric
	for chunkStart := start; chunkStart < end; chunkStart += chunkSlots {
		if ctx.Err() != nil {
			return
		}
		chunkEnd := min(chunkStart+chunkSlots, end)
		cand.each(chunkStart, chunkEnd, func(slot uint32) {
			if int64(slot) == exclude || !c.live.has(slot) {
				return
			}
			s := m.score(q, c.vectors.at(slot))
			if threshold != nil && !m.passes(s, *threshold) {
				return
			}
			h.push(hit{rank: m.rank(s), score: s, slot: slot})
		})
	}
}
