package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// CommitFloor measures the disk's single-commit floor under dir: the
// median latency of n tiny fsync'ed bbolt transactions (one 8-byte put
// each, the same bbolt options as a data directory), run one after the
// other in a scratch file that is removed afterwards. No write of the
// store can be acknowledged faster than this, so it is the yardstick for
// write latencies measured in the same run on the same disk. n is at
// least 1; dir must exist (a data directory or its parent).
func CommitFloor(dir string, n int) (time.Duration, error) {
	if n < 1 {
		return 0, errors.New("store: commit floor: n must be at least 1")
	}
	f, err := os.CreateTemp(dir, "memrank-commit-floor-*.db")
	if err != nil {
		return 0, fmt.Errorf("store: commit floor: %w", err)
	}
	path := f.Name()
	_ = f.Close()
	defer os.Remove(path)
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return 0, fmt.Errorf("store: commit floor: %w", err)
	}
	defer bdb.Close()
	bucket := []byte("floor")
	if err := bdb.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	}); err != nil {
		return 0, fmt.Errorf("store: commit floor: %w", err)
	}
	lat := make([]time.Duration, n)
	var v [8]byte
	for i := range lat {
		binary.BigEndian.PutUint64(v[:], uint64(i))
		start := time.Now()
		err := bdb.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put([]byte("k"), v[:]) })
		if err != nil {
			return 0, fmt.Errorf("store: commit floor: %w", err)
		}
		lat[i] = time.Since(start)
	}
	slices.Sort(lat)
	return lat[n/2], nil
}
