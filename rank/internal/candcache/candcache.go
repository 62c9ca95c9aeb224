// Package candcache holds the read path's candidate cache: the payloads and
// tier-2 vectors of points the ranker has fetched, so that a re-ranked query
// can ask the upstream for ids, scores and versions only and fill the rest
// from here.
//
// An entry is found by the upstream's (epoch, collection, vector name, point
// id, version): a point changed through the store gets a new version and so
// misses. What the key cannot tell apart (a collection recreated behind
// memrank, whose versions restart) is the caller's to check: the ranker
// compares the score the upstream returned with the cached vector, the epoch
// changes when a collection or alias change passes through memrank, and
// every entry expires after a TTL.
//
// An entry also holds what the ranker decodes from the payload alone (the
// memory record and its scoring inputs), so a hit skips decoding. Those
// depend on the payload and the ranker's codec only: a cache belongs to one
// ranker, which has one codec, so the entry's key identifies them as it
// identifies the payload. Nothing per request (the time, the caller's
// selectors or tenancy) goes into an entry.
//
// Entries are shared between requests: their payload maps, vectors and
// decoded records are read-only once stored.
package candcache

import (
	"container/list"
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/metric"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// shards splits the cache's lock: at 8 queries in flight, each touching
// ~40 entries, one lock would be held most of the time.
const shards = 16

// Entry overheads, in bytes: the key, the list element, the map slot and
// the decoded messages' headers (entryOverhead), a map field's slot and key
// header (fieldOverhead), and a decoded *qdrant.Value with its kind wrapper
// (valueOverhead), counted for every value, nested ones too. The encoded
// size undercounts a decoded payload's heap 2.5-3.5x (most of it is
// per-value headers, most so in an access_counts map); with these the
// estimate is 0.8-1x of it (BenchmarkPayloadSize).
const (
	entryOverhead = 256
	fieldOverhead = 48
	valueOverhead = 80
)

// Key names one version of one point as one upstream answered it.
type Key struct {
	Epoch      uint64
	Collection string // as sent upstream (an alias is its own key space)
	Vector     string // the tier-2 vector's name ("" is the default one)
	ID         PointKey
	Version    uint64
}

// PointKey is a point id as a comparable value.
type PointKey struct {
	Num  uint64
	UUID string
}

// IDKey returns id as a PointKey.
func IDKey(id *qdrant.PointId) PointKey {
	if u, ok := id.GetPointIdOptions().(*qdrant.PointId_Uuid); ok {
		return PointKey{UUID: u.Uuid}
	}
	return PointKey{Num: id.GetNum()}
}

// Entry is what is cached of a point. Its fields must not be changed once
// the entry is stored: other requests read them.
type Entry struct {
	Payload map[string]*qdrant.Value
	Vectors *qdrant.VectorsOutput // as the upstream returned them
	Dense   []float32             // the tier-2 vector within Vectors; nil when none
	// DenseNorm is |Dense|, which scales the ranker's score check; kept so
	// that a hit does not compute it.
	DenseNorm float64
	// Mem is Payload decoded by the ranker's codec (DecodeRank) and In its
	// scoring inputs (Codec.Inputs), before any per-request change.
	Mem memory.Memory
	In  scoring.Inputs
	// PayloadWire is Payload as its wire bytes came from the upstream (a
	// ScoredPoint's payload fields), for a reply to copy instead of
	// encoding the map again; nil when the upstream call did not keep them.
	PayloadWire []byte
	// Claim is what folding read of Mem (dedup.ReadClaim), set by the
	// first query that needed it and read by the next ones: claims are
	// read only for candidates that may fold, but those recur.
	Claim atomic.Pointer[dedup.Claim]
}

// decodedSize is the fixed part of an entry's decoded record and inputs;
// their strings share the payload's, whose size is counted already. The
// claim, read later or never, is counted as if read: its fixed part here,
// its word lists as twice the text (claimTextFactor).
const decodedSize = int64(unsafe.Sizeof(memory.Memory{}) + unsafe.Sizeof(scoring.Inputs{}) + unsafe.Sizeof(dedup.Claim{}))

// claimTextFactor estimates a claim's word lists (every word, in order and
// sorted, as string headers and text) against its text's length.
const claimTextFactor = 2

// Size is e's estimated memory footprint in bytes.
func (e *Entry) Size(k *Key) int64 {
	n := int64(entryOverhead + len(k.Collection) + len(k.Vector) + len(k.ID.UUID))
	for name, v := range e.Payload {
		n += int64(fieldOverhead+len(name)) + valueSize(v)
	}
	if e.Vectors != nil {
		n += int64(fieldOverhead + proto.Size(e.Vectors))
	}
	n += int64(len(e.PayloadWire))
	n += decodedSize + claimTextFactor*int64(len(e.Mem.Text)) + int64(len(e.Mem.AccessCounts))*int64(unsafe.Sizeof(memory.AccessCount{})) +
		int64(len(e.Mem.Problems))*int64(unsafe.Sizeof(memory.Problem{}))
	return n
}

// valueSize is v's estimated heap size. It walks nested values, once per
// entry, when the entry is stored.
func valueSize(v *qdrant.Value) int64 {
	n := int64(valueOverhead)
	switch k := v.GetKind().(type) {
	case *qdrant.Value_StringValue:
		n += int64(len(k.StringValue))
	case *qdrant.Value_StructValue:
		for name, f := range k.StructValue.GetFields() {
			n += int64(fieldOverhead+len(name)) + valueSize(f)
		}
	case *qdrant.Value_ListValue:
		for _, x := range k.ListValue.GetValues() {
			n += 8 + valueSize(x)
		}
	}
	return n
}

// Config configures a Cache.
type Config struct {
	MaxBytes int64         // the bound on the entries' estimated bytes; <= 0 holds nothing
	TTL      time.Duration // how long an entry may be served; <= 0: no expiry
	Now      func() time.Time
	Meter    metric.Meter // nil: no metrics
}

// Cache is a byte-bounded, sharded LRU of entries. Safe for concurrent use.
type Cache struct {
	ttl     time.Duration
	now     func() time.Time
	seed    maphash.Seed
	epoch   atomic.Uint64
	bytes   atomic.Int64
	shard   [shards]shard
	trust   trust
	metrics *metrics
}

type shard struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	items map[Key]*list.Element
	lru   list.List // front: most recently used; values are *item
}

type item struct {
	key     Key
	entry   *Entry
	size    int64
	expires time.Time
}

// New returns a cache; it holds nothing when cfg.MaxBytes <= 0.
func New(cfg Config) (*Cache, error) {
	c := &Cache{ttl: cfg.TTL, now: cfg.Now, seed: maphash.MakeSeed()}
	if c.now == nil {
		c.now = time.Now
	}
	c.trust = trust{now: c.now, pause: c.ttl, m: map[trustKey]*trustState{}}
	if c.trust.pause <= 0 {
		c.trust.pause = time.Minute
	}
	per := max(cfg.MaxBytes, 0) / shards
	for i := range c.shard {
		c.shard[i].max = per
		c.shard[i].items = map[Key]*list.Element{}
	}
	if cfg.Meter != nil {
		m, err := newMetrics(cfg.Meter, c)
		if err != nil {
			return nil, err
		}
		c.metrics = m
	}
	return c, nil
}

// Epoch is the current epoch; a request reads it once, before it asks the
// upstream, and keys everything it stores with it.
func (c *Cache) Epoch() uint64 { return c.epoch.Load() }

// Invalidate starts a new epoch: nothing stored before is served again.
// The old entries age out of the LRU.
func (c *Cache) Invalidate() { c.epoch.Add(1) }

// Unsettle is Invalidate for a change whose outcome its caller was not
// told (the call timed out, or the upstream went away), which the upstream
// may apply after the call ended: besides starting a new epoch, it turns
// the cache off for every collection for the trust pause (the TTL, a minute
// when entries do not expire), so that nothing read before the change is
// applied is stored and then served after it. A change applied later than
// that is left to what guards against changes made behind memrank: the
// score check and the TTL (none when entries do not expire).
//
// The window is set (under the lock Off takes) before the epoch moves, and
// a request reads the epoch before it asks Off: a request that keys its
// entries with the new epoch finds the cache off, and one that keys them
// with the old epoch stores entries nobody finds.
//
// started says whether no window was open before (a caller logs then, not
// for every change in a window).
func (c *Cache) Unsettle() (started bool) {
	t := &c.trust
	t.mu.Lock()
	now := t.now()
	started = !now.Before(t.unsettled)
	if until := now.Add(t.pause); until.After(t.unsettled) {
		t.unsettled = until
	}
	t.mu.Unlock()
	c.epoch.Add(1)
	return started
}

// Bytes is the estimated size of the entries held.
func (c *Cache) Bytes() int64 { return c.bytes.Load() }

func (c *Cache) shardOf(k *Key) *shard {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(k.Collection)
	maphash.WriteComparable(&h, k.ID)
	return &c.shard[h.Sum64()%shards]
}

// Get returns the entry under k, unexpired, and marks it recently used.
func (c *Cache) Get(k Key) (*Entry, bool) {
	s := c.shardOf(&k)
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.items[k]
	if !ok {
		return nil, false
	}
	it := el.Value.(*item)
	if c.ttl > 0 && !c.now().Before(it.expires) {
		c.removeLocked(s, el)
		return nil, false
	}
	s.lru.MoveToFront(el)
	return it.entry, true
}

// Remove drops the entry under k, if any (one that failed the caller's
// check).
func (c *Cache) Remove(k Key) {
	s := c.shardOf(&k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.items[k]; ok {
		c.removeLocked(s, el)
	}
}

// Add stores e under k, evicting the least recently used entries of its
// shard past the bound. An entry larger than a shard's share of the bound
// is not stored. It reports how many entries were evicted.
func (c *Cache) Add(k Key, e *Entry) int {
	size := e.Size(&k)
	s := c.shardOf(&k)
	if size > s.max {
		return 0
	}
	var expires time.Time
	if c.ttl > 0 {
		expires = c.now().Add(c.ttl)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.items[k]; ok {
		c.removeLocked(s, el)
	}
	evicted := 0
	for s.bytes+size > s.max {
		c.removeLocked(s, s.lru.Back())
		evicted++
	}
	s.items[k] = s.lru.PushFront(&item{key: k, entry: e, size: size, expires: expires})
	s.bytes += size
	c.bytes.Add(size)
	return evicted
}

func (c *Cache) removeLocked(s *shard, el *list.Element) {
	it := s.lru.Remove(el).(*item)
	delete(s.items, it.key)
	s.bytes -= it.size
	c.bytes.Add(-it.size)
}

// Round is one request's lookups: candidates served from the cache,
// fetched because the cache did not hold them (Absent) or held a copy that
// failed the score check (Mismatched), and entries evicted to store the
// fetched ones.
type Round struct {
	Hits, Absent, Mismatched, Evicted int
}

// Count adds one request's lookups to the metrics.
func (c *Cache) Count(ctx context.Context, r Round) {
	if c.metrics == nil {
		return
	}
	if r.Hits > 0 {
		c.metrics.hits.Add(ctx, int64(r.Hits))
	}
	if r.Absent > 0 {
		c.metrics.misses.Add(ctx, int64(r.Absent), c.metrics.absent)
	}
	if r.Mismatched > 0 {
		c.metrics.misses.Add(ctx, int64(r.Mismatched), c.metrics.mismatched)
	}
	if r.Evicted > 0 {
		c.metrics.evictions.Add(ctx, int64(r.Evicted))
	}
}

// CountOff counts a request fetched in one call because the cache was off
// for its collection (see Checked).
func (c *Cache) CountOff(ctx context.Context) {
	if c.metrics != nil {
		c.metrics.off.Add(ctx, 1)
	}
}
