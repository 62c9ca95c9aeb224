package observebench

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/qdrant/go-client/qdrant"

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
	return Run(ctx, client, codec, opts)
}
