package embed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/memrank/memrank/internal/detach"
)

// flightTimeout bounds the shared work of coalesced callers when the caller
// that started it has no deadline. It is longer than the OpenAI driver's
// default worst case (4 attempts of 10s plus waits), so it only stops an
// inner embedder that would otherwise hang.
const flightTimeout = 2 * time.Minute

// Cached wraps an Embedder with an LRU cache keyed by (model, text), so a
// text is embedded once, and coalesces identical work in flight: callers
// that miss the cache on the same texts at the same time share one inner
// call.
//
// The texts a call misses are embedded in one inner call. Coalescing is per
// set of missing texts: concurrent calls missing the same texts (in any
// order) share a call; calls whose misses only overlap each make their own,
// and the cache then keeps one result. The shared call runs detached from
// the cancellation of the caller that started it, within that caller's
// deadline (or flightTimeout), so one caller giving up does not fail the
// others, and its result still fills the cache. Errors are never cached.
//
// Vectors returned are the caller's: changing them does not change the
// cache. Cached is safe for concurrent use.
type Cached struct {
	inner Embedder
	model string
	dims  int
	cache *lru.Cache[cacheKey, []float32] // nil: no cache, only coalescing
	group singleflight.Group
	work  *detach.Group // owns the shared calls, which outlive their first caller

	hits, misses, coalesced atomic.Int64
}

var _ Embedder = (*Cached)(nil)

type cacheKey struct{ model, text string }

// CacheStats counts texts, not calls.
type CacheStats struct {
	Hits   int64 // texts answered from the cache
	Misses int64 // texts that were not in the cache
	// Coalesced counts the misses answered by another caller's inner call
	// in flight (a subset of Misses).
	Coalesced int64
}

// NewCached caches up to size vectors of e's (size <= 0: no cache, only
// the coalescing of identical work in flight). e must not be nil.
func NewCached(e Embedder, size int) *Cached {
	c := &Cached{inner: e, model: e.Model(), dims: e.Dimensions(), work: detach.NewGroup()}
	if size > 0 {
		// lru.New fails only on a size <= 0.
		c.cache, _ = lru.New[cacheKey, []float32](size)
	}
	return c
}

// Dimensions is the inner embedder's.
func (c *Cached) Dimensions() int { return c.dims }

// Model is the inner embedder's: the cache changes no vector.
func (c *Cached) Model() string { return c.model }

// Stats returns the counters since NewCached.
func (c *Cached) Stats() CacheStats {
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Coalesced: c.coalesced.Load()}
}

// Len is the number of vectors in the cache.
func (c *Cached) Len() int {
	if c.cache == nil {
		return 0
	}
	return c.cache.Len()
}

// Embed returns one vector per text, from the cache where it can; the texts
// it misses (each once, however often it repeats) go to the inner embedder
// in one call, shared with concurrent callers missing the same texts.
func (c *Cached) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	block := make([]float32, len(texts)*c.dims) // one allocation for every copy
	vec := func(i int) []float32 { return block[i*c.dims : (i+1)*c.dims : (i+1)*c.dims] }

	var pending []int    // indexes of texts not found
	var missing []string // distinct texts not found
	hits := 0
	for i, t := range texts {
		if c.cache != nil {
			if v, ok := c.cache.Get(cacheKey{c.model, t}); ok {
				out[i] = vec(i)
				copy(out[i], v)
				hits++
				continue
			}
		}
		pending = append(pending, i)
		missing = append(missing, t)
	}
	c.hits.Add(int64(hits))
	if len(pending) == 0 {
		return out, nil
	}
	c.misses.Add(int64(len(pending)))
	if len(missing) > 1 {
		// Sorted, so one set of texts in two orders shares a call.
		slices.Sort(missing)
		missing = slices.Compact(missing)
	}

	vecs, err := c.shared(ctx, missing, len(pending))
	if err != nil {
		return nil, err
	}
	for _, i := range pending {
		v, ok := vecs[texts[i]]
		if !ok { // cannot happen: shared answers every text it was given
			return nil, fmt.Errorf("embed: cached %s: no vector for text %d", c.model, i)
		}
		out[i] = vec(i)
		copy(out[i], v)
	}
	return out, nil
}

// shared embeds texts in a call shared by concurrent callers missing the
// same texts. The map it returns is shared too: read only.
func (c *Cached) shared(ctx context.Context, texts []string, misses int) (map[string][]float32, error) {
	key := flightKey(texts)
	// Twice at most: a shared call that ran out of its starter's deadline
	// is worth one more try under ours.
	for try := 0; ; try++ {
		led := false
		ch := c.group.DoChan(key, func() (any, error) {
			led = true
			wctx, done, ok := c.work.Start(ctx)
			if !ok {
				return nil, ErrClosed
			}
			defer done()
			return c.flight(wctx, ctx, key, texts)
		})
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case r := <-ch:
			// led was written before the result was sent: reading it here
			// is ordered after the write.
			if !led && r.Err != nil && try == 0 && ctx.Err() == nil &&
				(errors.Is(r.Err, context.DeadlineExceeded) || errors.Is(r.Err, context.Canceled)) {
				continue
			}
			if !led {
				c.coalesced.Add(int64(misses))
			}
			if r.Err != nil {
				return nil, r.Err
			}
			return r.Val.(map[string][]float32), nil
		}
	}
}

// flight is the shared work: embed what is still missing and fill the
// cache.
func (c *Cached) flight(work, caller context.Context, key string, texts []string) (map[string][]float32, error) {
	wctx, cancel := workContext(work, caller)
	defer cancel()

	got := make(map[string][]float32, len(texts))
	todo := texts
	if c.cache != nil {
		// A call that ended between our lookup and this flight may have
		// filled the cache already.
		todo = make([]string, 0, len(texts))
		for _, t := range texts {
			if v, ok := c.cache.Get(cacheKey{c.model, t}); ok {
				got[t] = v
			} else {
				todo = append(todo, t)
			}
		}
		if len(todo) == 0 {
			return got, nil
		}
	}

	vecs, err := c.inner.Embed(wctx, todo)
	if err == nil && len(vecs) != len(todo) {
		err = fmt.Errorf("embed: cached %s: %w: %d vectors for %d texts", c.model, ErrResponse, len(vecs), len(todo))
	}
	if err == nil {
		for _, v := range vecs {
			if len(v) != c.dims {
				err = fmt.Errorf("%w: cached %s: a vector of %d components, want %d", ErrDimensions, c.model, len(v), c.dims)
				break
			}
		}
	}
	if err != nil {
		// Callers arriving from now on start afresh instead of sharing the
		// failure.
		c.group.Forget(key)
		return nil, err
	}
	for i, t := range todo {
		got[t] = vecs[i]
		if c.cache != nil {
			// A clone, so the cache does not pin the caller's (possibly
			// much larger) request body.
			c.cache.Add(cacheKey{c.model, strings.Clone(t)}, vecs[i])
		}
	}
	return got, nil
}

// workContext bounds the shared work (detached from the starter's
// cancellation, ended by Shutdown) by the starter's deadline, or
// flightTimeout without one.
func workContext(work, caller context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := caller.Deadline(); ok {
		return context.WithDeadline(work, dl)
	}
	return context.WithTimeout(work, flightTimeout)
}

// Shutdown ends the shared calls still in flight (they outlive the caller
// that started them) and waits for them, until ctx ends; later misses fail
// with ErrClosed. Safe to call twice.
func (c *Cached) Shutdown(ctx context.Context) error { return c.work.Shutdown(ctx) }

// flightKey names a sorted set of texts unambiguously (each
// length-prefixed).
func flightKey(texts []string) string {
	n := 0
	for _, t := range texts {
		n += len(t) + 8
	}
	var b strings.Builder
	b.Grow(n)
	for _, t := range texts {
		b.WriteString(strconv.Itoa(len(t)))
		b.WriteByte(':')
		b.WriteString(t)
	}
	return b.String()
}
