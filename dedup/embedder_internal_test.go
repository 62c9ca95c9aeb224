package dedup

import (
	"testing"
	"time"
)

// TestEnsuredExpires: a cached embedder record is trusted for ensuredTTL
// only, so that a reembed's mark written by another process is read again.
func TestEnsuredExpires(t *testing.T) {
	e := &Engine{ensured: map[string]ensured{}, verified: map[string]bool{}}
	e.remember("mem", ensured{model: "a", dims: 4, at: time.Now()})
	if _, ok := e.cached("mem"); !ok {
		t.Fatal("a fresh record is not cached")
	}
	e.remember("mem", ensured{model: "a", dims: 4, at: time.Now().Add(-ensuredTTL - time.Second)})
	if _, ok := e.cached("mem"); ok {
		t.Error("a record older than ensuredTTL is still trusted")
	}
	if _, ok := e.ensured["mem"]; ok {
		t.Error("the stale entry was kept")
	}
}
