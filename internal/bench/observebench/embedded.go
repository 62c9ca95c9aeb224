package observebench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// DefaultOptions are the options a zero Options stands for.
func DefaultOptions() Options { return Options{}.withDefaults() }

// Embedded says where RunEmbedded keeps its store.
type Embedded struct {
	// Dir is the data directory; "" is a temporary one, removed afterwards.
	Dir string
	// NoSync skips the fsync of each commit (not durable): what remains is
	// the write path's own cost.
	NoSync bool
}

// RunEmbedded is Run on the embedded store, reached as memrank reaches it
// (go-client over gRPC, in process), with the default payload keys and
// scoring parameters.
func RunEmbedded(ctx context.Context, where Embedded, opts Options) (_ Result, err error) {
	if opts.Memories < 0 || opts.Observations < 0 || opts.MixSize < 0 {
		return Result{}, errors.New("observebench: memories, observations and the mix must not be negative")
	}
	dir := where.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "memrank-bench-observe-")
		if err != nil {
			return Result{}, fmt.Errorf("observebench: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	db, err := store.Open(dir, store.Options{NoSync: where.NoSync})
	if err != nil {
		return Result{}, fmt.Errorf("observebench: %w", err)
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	ip := upstream.ServeInProcess(store.NewServer(db))
	defer ip.Close()
	client, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		return Result{}, fmt.Errorf("observebench: client: %w", err)
	}
	defer client.Close()
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		return Result{}, err
	}
	if opts.Commits == nil {
		opts.Commits = db.CommitStats
	}
	if opts.Floor == nil {
		opts.Floor = func(ctx context.Context) ([]time.Duration, error) {
			return commitFloor(ctx, filepath.Join(dir, "commit-floor.bolt"), where.NoSync)
		}
	}
	res, err := Run(ctx, client, codec, opts)
	res.Synced = !where.NoSync
	return res, err
}

// commitFloor times floorCommits tiny transactions in a bbolt file of its
// own, opened as the store opens its file: the cheapest commit this disk
// makes durable, the floor of any write through the store.
func commitFloor(ctx context.Context, path string, noSync bool) (_ []time.Duration, err error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoFreelistSync: true,
		FreelistType: bolt.FreelistMapType, NoSync: noSync})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, db.Close(), os.Remove(path)) }()
	bucket, key := []byte("floor"), []byte("k")
	lat := make([]time.Duration, 0, floorCommits)
	for i := range floorCommits {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := time.Now()
		err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucket)
			if err != nil {
				return err
			}
			return b.Put(key, binary.BigEndian.AppendUint64(nil, uint64(i)))
		})
		if err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t))
	}
	return lat, nil
}
