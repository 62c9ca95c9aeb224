package store

import (
	"math/rand/v2"
	"sync"
)

// Sampling (Query sample: random) draws points uniformly without
// replacement from the points that qualify, like Qdrant's scroll_randomly
// (lib/collection/src/shards/local_shard/scroll.rs) does over one segment.
// The draws come from one PCG generator per DB, seeded with
// Options.SampleSeed: with a seed, a DB answers the same sequence of sample
// queries with the same points every time it is opened (what tests need);
// without one it is seeded randomly. The sampled points are returned in the
// order they were drawn.

// sampler is the DB's random source for sampling.
type sampler struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func newSampler(seed uint64) *sampler {
	if seed == 0 {
		seed = rand.Uint64() | 1
	}
	return &sampler{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// sample picks up to k distinct live slots of allowed (nil: every live
// slot).
func (db *DB) sample(c *collection, allowed bitset, k int) []cand {
	from := allowed
	if from == nil {
		from = c.live
	}
	var slots []uint32
	from.each(0, uint32(len(c.ids)), func(slot uint32) {
		if c.live.has(slot) {
			slots = append(slots, slot)
		}
	})
	k = min(k, len(slots))
	db.sampler.mu.Lock()
	for i := range k {
		j := i + db.sampler.rng.IntN(len(slots)-i)
		slots[i], slots[j] = slots[j], slots[i]
	}
	db.sampler.mu.Unlock()
	out := make([]cand, k)
	for i, s := range slots[:k] {
		out[i] = cand{slot: s, score: 1}
	}
	return out
}
