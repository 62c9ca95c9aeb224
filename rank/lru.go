package rank

import (
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// lru is golang-lru's simplelru with an optional time to live, each
// entry's expiry stored in its value and checked against the owner's
// clock. It is not safe for concurrent use: its owners hold a lock, which
// is why it is simplelru and not lru.Cache (that would take a second lock
// per call).
//
// Not golang-lru's expirable.LRU: in v2.0.7 every expirable cache with a
// TTL starts a goroutine that never exits (its done channel is never
// closed), one leak per Ranker that goleak flags, and it reads time.Now,
// where the ranker's tests pass a clock.
type lru[K comparable, V any] struct {
	ttl time.Duration // 0: entries never expire
	c   *simplelru.LRU[K, expiring[V]]
}

type expiring[V any] struct {
	val     V
	expires time.Time
}

// newLRU returns a cache of at most max entries; max < 1 holds nothing,
// as the hand-written cache it replaced did (it evicted every entry as it
// was added).
func newLRU[K comparable, V any](max int, ttl time.Duration) *lru[K, V] {
	c := &lru[K, V]{ttl: ttl}
	if max >= 1 {
		// NewLRU fails only on a size below 1.
		c.c, _ = simplelru.NewLRU[K, expiring[V]](max, nil)
	}
	return c
}

// get returns the value of k if present and not expired at now, and marks
// it recently used. An expired entry is dropped.
func (c *lru[K, V]) get(k K, now time.Time) (V, bool) {
	var zero V
	if c.c == nil {
		return zero, false
	}
	e, ok := c.c.Get(k)
	if !ok {
		return zero, false
	}
	if c.ttl > 0 && !now.Before(e.expires) {
		c.c.Remove(k)
		return zero, false
	}
	return e.val, true
}

// add sets k to v, expiring at now + TTL, and evicts the least recently
// used entry past the bound.
func (c *lru[K, V]) add(k K, v V, now time.Time) {
	if c.c == nil {
		return
	}
	e := expiring[V]{val: v}
	if c.ttl > 0 {
		e.expires = now.Add(c.ttl)
	}
	c.c.Add(k, e)
}

func (c *lru[K, V]) remove(k K) {
	if c.c != nil {
		c.c.Remove(k)
	}
}

func (c *lru[K, V]) len() int {
	if c.c == nil {
		return 0
	}
	return c.c.Len()
}
