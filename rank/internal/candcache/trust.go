package candcache

import (
	"sync"
	"time"
)

// An upstream whose scores are not the exact similarity of the stored
// vectors (Qdrant searching quantized vectors without rescoring, say) fails
// the score check on every hit: each query then costs a listing and a fetch
// of every candidate, twice the round trips of not caching at all. Trust
// notices that per collection and vector and turns the cache off for them
// for a while, so such an upstream is served as if there were no cache.
const (
	// trustWindow is how many checked scores a verdict rests on.
	trustWindow = 64
	// trustMaxCollections bounds the collections tracked; past it the
	// tracking starts over (a verdict is at worst made again).
	trustMaxCollections = 4096
)

type trustKey struct{ collection, vector string }

type trustState struct {
	checked, inexact int
	off              time.Time // the cache is off for the collection until then
}

// trust tracks, per collection and vector, how many of the upstream's
// scores failed the score check against current vectors.
type trust struct {
	mu    sync.Mutex
	now   func() time.Time
	pause time.Duration
	m     map[trustKey]*trustState
	// unsettled is when the window of the last Cache.Unsettle ends: until
	// then the cache is off for every collection. A time.Time, so that the
	// monotonic clock (time.Now's) measures it.
	unsettled time.Time
}

// Pause is how long the cache stays off once turned off (by Checked or
// Unsettle): the TTL, a minute when entries do not expire.
func (c *Cache) Pause() time.Duration { return c.trust.pause }

// Off says whether the cache is turned off for the collection's vector
// (by its scores, or for every collection by Unsettle): its queries are
// fetched in one call.
func (c *Cache) Off(collection, vector string) bool {
	t := &c.trust
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if now.Before(t.unsettled) {
		return true
	}
	s := t.m[trustKey{collection, vector}]
	return s != nil && now.Before(s.off)
}

// Checked records one query's score checks on the collection's vector:
// checked scores of the upstream compared with current vectors, of which
// inexact did not match. Once more than half of a window of trustWindow
// checks failed, the cache is off for the collection's vector for the
// cache's TTL (a minute when entries do not expire), and Checked reports
// true.
func (c *Cache) Checked(collection, vector string, checked, inexact int) (turnedOff bool) {
	if checked == 0 {
		return false
	}
	t := &c.trust
	t.mu.Lock()
	defer t.mu.Unlock()
	k := trustKey{collection, vector}
	s := t.m[k]
	if s == nil {
		if len(t.m) >= trustMaxCollections {
			clear(t.m)
		}
		s = &trustState{}
		t.m[k] = s
	}
	s.checked += checked
	s.inexact += inexact
	if s.checked < trustWindow {
		return false
	}
	turnedOff = 2*s.inexact > s.checked
	if turnedOff {
		s.off = t.now().Add(t.pause)
	}
	s.checked, s.inexact = 0, 0
	return turnedOff
}
