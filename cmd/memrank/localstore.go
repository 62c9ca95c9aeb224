package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/memrank/memrank/store"
)

// localHint is what a command run in process on the embedded store tells a
// person who may have meant a running server instead: inUse follows "in use
// by another process (a running memrank serve?): " when that server holds
// the data directory, newStore follows "no store there yet; " when the
// command created a store.
type localHint struct{ inUse, newStore string }

// urlHint is the hint of the commands with --url.
func urlHint() localHint {
	return localHint{
		inUse:    "give --url with its address (e.g. --url http://localhost:6333) to go through it",
		newStore: "--url reaches a running server",
	}
}

// stopHint is the hint of the commands without --url: what the running
// server offers instead (alternative; empty: nothing), else stop it.
func stopHint(alternative string) localHint {
	h := localHint{inUse: "stop it first", newStore: "--data names an existing one"}
	if alternative != "" {
		h.inUse = alternative + "; or stop it first"
	}
	return h
}

// openLocal is newStack for a command run in process. On the embedded
// store, a data directory a running serve holds is refused with hint.inUse,
// and a store created where there was none is announced on stderr: run
// from another folder, the command would otherwise work on a new, empty
// store unnoticed.
func (e *env) openLocal(ctx context.Context, c Config, logOut io.Writer, recordAccess bool, hint localHint) (*stack, error) {
	dir := c.Store.DataDir
	fresh := c.Upstream.GRPC == "" && !storeExists(dir)
	s, err := newStack(ctx, c, logOut, recordAccess)
	if fresh && storeExists(dir) {
		fmt.Fprintf(e.stderr, "memrank: created a new store in %s (no store there yet; %s)\n", dir, hint.newStore)
	}
	if errors.Is(err, store.ErrDirectoryInUse) {
		return nil, usageError{fmt.Errorf("the data directory %s is in use by another process (a running memrank serve?): %s", dir, hint.inUse)}
	}
	return s, err
}

// storeExists reports whether dir holds an embedded store. A directory it
// cannot look into counts as holding one: opening it says what is wrong.
func storeExists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, store.FileName))
	return !errors.Is(err, os.ErrNotExist)
}
