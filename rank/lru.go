package rank

import (
	"container/list"
	"time"
)

// lru is a small bounded least-recently-used map with an optional time to
// live. It is not safe for concurrent use: its owners hold a lock.
type lru[K comparable, V any] struct {
	max   int
	ttl   time.Duration // 0: entries never expire
	ll    *list.List
	items map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key     K
	val     V
	expires time.Time
}

func newLRU[K comparable, V any](max int, ttl time.Duration) *lru[K, V] {
	return &lru[K, V]{max: max, ttl: ttl, ll: list.New(), items: make(map[K]*list.Element)}
}

// get returns the value of k if present and not expired at now, and marks
// it recently used.
func (c *lru[K, V]) get(k K, now time.Time) (V, bool) {
	e, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	en := e.Value.(*lruEntry[K, V])
	if c.ttl > 0 && !now.Before(en.expires) {
		c.ll.Remove(e)
		delete(c.items, k)
		var zero V
		return zero, false
	}
	c.ll.MoveToFront(e)
	return en.val, true
}

// add sets k to v, evicting the least recently used entry past the bound.
func (c *lru[K, V]) add(k K, v V, now time.Time) {
	var exp time.Time
	if c.ttl > 0 {
		exp = now.Add(c.ttl)
	}
	if e, ok := c.items[k]; ok {
		en := e.Value.(*lruEntry[K, V])
		en.val, en.expires = v, exp
		c.ll.MoveToFront(e)
		return
	}
	c.items[k] = c.ll.PushFront(&lruEntry[K, V]{key: k, val: v, expires: exp})
	for c.ll.Len() > c.max {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.items, last.Value.(*lruEntry[K, V]).key)
	}
}

func (c *lru[K, V]) remove(k K) {
	if e, ok := c.items[k]; ok {
		c.ll.Remove(e)
		delete(c.items, k)
	}
}

func (c *lru[K, V]) len() int { return c.ll.Len() }
