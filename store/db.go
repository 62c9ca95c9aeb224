package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/internal/vecmath"
)

// FileName is the bbolt file inside the data directory.
const FileName = "memrank-store.db"

// storeFormat is the on-disk layout version written in the meta bucket.
const storeFormat = "1"

var (
	bucketMeta        = []byte("memrank")
	bucketCollections = []byte("collections")
	bucketPoints      = []byte("points")
	bucketIndexes     = []byte("indexes")
	bucketAliases     = []byte("aliases") // alias name -> collection name
	keyFormat         = []byte("format")
	keyConfig         = []byte("config")
	keySeq            = []byte("seq")
)

// Options configures Open. The zero value is usable.
type Options struct {
	// LockTimeout is how long Open waits for the data directory's file lock
	// before reporting that another process uses it. Default 100ms.
	LockTimeout time.Duration
	// InitialMmapSize is the virtual address space bbolt maps up front
	// (default 1 GiB on 64-bit). A map large enough for the file means
	// readers never block a writer that grows the file. It is not memory
	// use: only touched pages become resident.
	InitialMmapSize int
	// SearchWorkers bounds the goroutines one exact search scans with.
	// Default GOMAXPROCS.
	SearchWorkers int
	// SampleSeed seeds the generator behind random sampling (Query sample:
	// random). With a seed, the same sequence of sample queries on the same
	// data draws the same points; zero seeds it randomly at Open.
	SampleSeed uint64
	// NoSync skips fsync on commit. Only for throwaway data (benchmarks of
	// the engine itself); with it, acknowledged writes are not durable.
	NoSync bool
	// MaxResults bounds the points one request may ask for (default
	// DefaultMaxResults): a scroll page is cut to it (its next_page_offset
	// continues), and a query whose limit + offset, or any prefetch limit,
	// exceeds it is refused. Without it, limit=10^9 reads and encodes the
	// whole collection in one answer.
	MaxResults int
	// MaxQueuedWrites bounds the write requests waiting for the committer
	// (default 1024); a writer beyond it waits for room (or for its
	// context). It also bounds how many requests share one commit.
	MaxQueuedWrites int
	// NoGroupCommit gives every write request its own transaction and
	// fsync instead of sharing one with the requests queued alongside it.
	// Only for measuring what group commit saves.
	NoGroupCommit bool
}

// DefaultMaxResults is the default Options.MaxResults.
const DefaultMaxResults = 10000

// Validate reports a bad option.
func (o Options) Validate() error {
	switch {
	case o.LockTimeout < 0:
		return errors.New("store: LockTimeout must not be negative")
	case o.InitialMmapSize < 0:
		return errors.New("store: InitialMmapSize must not be negative")
	case o.SearchWorkers < 0:
		return errors.New("store: SearchWorkers must not be negative")
	case o.MaxResults < 0:
		return errors.New("store: MaxResults must not be negative")
	case o.MaxQueuedWrites < 0:
		return errors.New("store: MaxQueuedWrites must not be negative")
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.LockTimeout == 0 {
		o.LockTimeout = 100 * time.Millisecond
	}
	if o.InitialMmapSize == 0 && (^uint(0))>>63 == 1 {
		o.InitialMmapSize = 1 << 30
	}
	if o.SearchWorkers == 0 {
		o.SearchWorkers = runtime.GOMAXPROCS(0)
	}
	if o.MaxResults == 0 {
		o.MaxResults = DefaultMaxResults
	}
	if o.MaxQueuedWrites == 0 {
		o.MaxQueuedWrites = 1024
	}
	return o
}

// DB is an open data directory: the embedded engine. All methods are safe
// for concurrent use.
type DB struct {
	dir     string
	opts    Options
	bolt    *bolt.DB
	kernels vecmath.Kernels
	sampler *sampler

	// closeMu is held shared by every operation and exclusively by Close,
	// so Close waits for operations in flight and none starts after it.
	closeMu sync.RWMutex
	closed  bool

	// wmu serialises everything that writes to bbolt: the committer's
	// groups and the collection and alias changes. Taken before any other
	// lock, it keeps a writer that holds bbolt's write transaction from
	// waiting for a collection lock held by another writer that waits for
	// that transaction.
	wmu     sync.Mutex
	commits *committer

	mu          sync.RWMutex // guards collections and aliases
	collections map[string]*collection
	aliases     map[string]string // alias -> collection
}

// Open opens (creating if needed) the data directory and loads it: every
// collection's config, points (vectors into memory) and payload indexes.
// A directory already opened by another process (or another DB in this
// process) fails at once with an error wrapping ErrDirectoryInUse.
func Open(dir string, opts Options) (*DB, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if dir == "" {
		return nil, errors.New("store: open: empty data directory")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	bdb, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{
		Timeout:         opts.LockTimeout,
		NoFreelistSync:  true,
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: opts.InitialMmapSize,
		NoSync:          opts.NoSync,
	})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("store: open %s: %w", dir, ErrDirectoryInUse)
		}
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	db := &DB{dir: dir, opts: opts, bolt: bdb, kernels: vecmath.ScanKernels(), sampler: newSampler(opts.SampleSeed), collections: map[string]*collection{}, aliases: map[string]string{}}
	if err := db.load(); err != nil {
		_ = bdb.Close()
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	db.startCommitter()
	return db, nil
}

// Dir returns the data directory.
func (db *DB) Dir() string { return db.dir }

// Close closes the data directory after the operations in flight finish.
// It is safe to call more than once.
func (db *DB) Close() error {
	db.closeMu.Lock()
	defer db.closeMu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	db.commits.stop()
	if err := db.bolt.Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", db.dir, err)
	}
	return nil
}

// enter marks the start of an operation; the returned func ends it.
func (db *DB) enter() (func(), error) {
	db.closeMu.RLock()
	if db.closed {
		db.closeMu.RUnlock()
		return nil, errClosed()
	}
	return db.closeMu.RUnlock, nil
}

func (db *DB) load() error {
	return db.bolt.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		switch f := meta.Get(keyFormat); {
		case f == nil:
			if err := meta.Put(keyFormat, []byte(storeFormat)); err != nil {
				return err
			}
		case string(f) != storeFormat:
			return fmt.Errorf("unsupported store format %q (this build reads %q)", f, storeFormat)
		}
		cols, err := tx.CreateBucketIfNotExists(bucketCollections)
		if err != nil {
			return err
		}
		al, err := tx.CreateBucketIfNotExists(bucketAliases)
		if err != nil {
			return err
		}
		err = al.ForEach(func(k, v []byte) error {
			db.aliases[string(k)] = string(v)
			return nil
		})
		if err != nil {
			return err
		}
		return cols.ForEachBucket(func(name []byte) error {
			c, err := db.loadCollection(string(name), cols.Bucket(name))
			if err != nil {
				return err
			}
			db.collections[c.name] = c
			return nil
		})
	})
}

func (db *DB) loadCollection(name string, b *bolt.Bucket) (*collection, error) {
	var cfg qdrant.CollectionConfig
	if err := proto.Unmarshal(b.Get(keyConfig), &cfg); err != nil {
		return nil, fmt.Errorf("collection %q: config: %w", name, err)
	}
	c, err := newCollection(name, &cfg, db.kernels)
	if err != nil {
		return nil, err
	}
	if s := b.Get(keySeq); len(s) == 8 {
		c.seq = binary.BigEndian.Uint64(s)
	}
	if ib := b.Bucket(bucketIndexes); ib != nil {
		err := ib.ForEach(func(k, v []byte) error {
			var info qdrant.PayloadSchemaInfo
			if err := proto.Unmarshal(v, &info); err != nil {
				return fmt.Errorf("collection %q: index %q: %w", name, k, err)
			}
			p, err := mustPath(string(k))
			if err != nil {
				return err
			}
			c.indexes[string(k)] = newFieldIndex(p, &info)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	pb := b.Bucket(bucketPoints)
	if pb == nil {
		return c, nil
	}
	vec := make([]float32, c.dim)
	err = pb.ForEach(func(k, v []byte) error {
		id, ok := idFromKey(k)
		if !ok {
			return fmt.Errorf("collection %q: corrupt point key %x", name, k)
		}
		rec, err := parseRecord(v, c.dim)
		if err != nil {
			return fmt.Errorf("collection %q: point %s: %w", name, id, err)
		}
		rec.vector(vec)
		var payload map[string]*qdrant.Value
		if len(c.indexes) > 0 {
			if payload, err = decodePayload(rec.payload); err != nil {
				return fmt.Errorf("collection %q: point %s: payload: %w", name, id, err)
			}
		}
		c.putPoint(id, rec.version, vec, payload, nil)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// collection returns the named collection or Qdrant's NotFound error. The
// name may be an alias, which wins over a collection of the same name, as
// in Qdrant's TableOfContent::resolve_name
// (lib/storage/src/content_manager/toc/mod.rs).
func (db *DB) collection(name string) (*collection, error) {
	db.mu.RLock()
	if real, ok := db.aliases[name]; ok {
		name = real
	}
	c := db.collections[name]
	db.mu.RUnlock()
	if c == nil {
		return nil, collectionNotFound(name)
	}
	return c, nil
}

// names returns the collection names, sorted.
func (db *DB) names() []string {
	db.mu.RLock()
	defer db.mu.RUnlock()
	out := make([]string, 0, len(db.collections))
	for n := range db.collections {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func putSeq(b *bolt.Bucket, seq uint64) error {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], seq)
	return b.Put(keySeq, buf[:])
}
