// Package storetest is a conformance suite for stores that speak Qdrant's gRPC protocol, written
// as go-client calls.
//
// memrank reaches its store only through Qdrant's protocol, and its embedded store re-implements
// Qdrant's behaviour. The suite is the independent reading of that behaviour: its expectations
// come from real Qdrant (its source, its own tests and its documentation; the reference for each
// non-obvious one is noted next to it), not from the embedded engine. Running the same suite
// against the embedded store and against a real Qdrant tells where the two differ.
//
// Every case works in its own uniquely named collections and deletes them when it ends, so the
// suite can run against a Qdrant that other clients share.
package storetest

import (
	"testing"

	"github.com/qdrant/go-client/qdrant"
)

// Target is what the suite runs against.
type Target struct {
	// Connect returns a client to the store under test; the suite closes it.
	Connect func(t testing.TB) *qdrant.Client
	// Restart stops the store and starts it again on the same data. Nil when the target cannot be
	// restarted (an external Qdrant): persistence cases then skip, saying why.
	Restart func(t testing.TB)
	// RejectsNonFiniteVectors is set for stores that refuse vectors with NaN or ±Inf components
	// with InvalidArgument, as memrank's embedded store does. Real Qdrant (checked up to v1.19)
	// validates only the dimension and stores such vectors (qdrant/qdrant#9201, open), so the
	// case skips for targets that leave this false.
	RejectsNonFiniteVectors bool
	// AtomicUpdateBatch is set for stores that apply Points/UpdateBatch as one transaction, as
	// memrank's embedded store does: when an operation fails, nothing of the batch stays
	// applied. Real Qdrant applies the operations one by one, so those before the failing one
	// stay applied (src/tonic/api/update_common.rs update_batch); the case checks whichever
	// the target declares.
	AtomicUpdateBatch bool
}

// Run runs every case of the suite against target, each as a subtest named for what it checks.
// The cases run one after another: the persistence case restarts the store under all of them.
func Run(t *testing.T, target Target) {
	if target.Connect == nil {
		t.Fatal("storetest: Target.Connect is nil")
	}
	t.Run("Health", func(t *testing.T) { testHealth(t, target) })
	t.Run("Collections", func(t *testing.T) { testCollections(t, target) })
	t.Run("Aliases", func(t *testing.T) { testAliases(t, target) })
	t.Run("Upsert", func(t *testing.T) { testUpsert(t, target) })
	t.Run("Points", func(t *testing.T) { testPoints(t, target) })
	t.Run("Search", func(t *testing.T) { testSearch(t, target) })
	t.Run("Query", func(t *testing.T) { testQuery(t, target) })
	t.Run("Groups", func(t *testing.T) { testGroups(t, target) })
	t.Run("Filters", func(t *testing.T) { testFilters(t, target) })
	t.Run("Scroll", func(t *testing.T) { testScroll(t, target) })
	t.Run("Payload", func(t *testing.T) { testPayload(t, target) })
	t.Run("UpdateBatch", func(t *testing.T) { testUpdateBatch(t, target) })
	t.Run("DeleteVectors", func(t *testing.T) { testDeleteVectors(t, target) })
	t.Run("FieldIndex", func(t *testing.T) { testFieldIndex(t, target) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, target) })
	t.Run("Persistence", func(t *testing.T) { testPersistence(t, target) })
}
