package dedup_test

import (
	"context"
	"testing"

	"github.com/memrank/memrank/dedup"
)

// TestObserveIntoDroppedCollection: a memory collection dropped through
// Qdrant's API while memrank knew it (this process's cache, or the
// embedder record its audit companion keeps for a new process) is made
// again by the next observation, which is then the first of a new
// collection, not a "not found" on every write.
func TestObserveIntoDroppedCollection(t *testing.T) {
	for _, tc := range []struct {
		name       string
		newProcess bool
	}{
		{name: "this process knew it"},
		{name: "a new process finds the embedder record", newProcess: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			h := newHarness(t)
			h.observe(t, dedup.Observation{Text: "Dana is a pilot", Source: "direct"})
			if err := h.client.DeleteCollection(ctx, "mem"); err != nil {
				t.Fatal(err)
			}
			eng := h.eng
			if tc.newProcess {
				var err error
				if eng, err = dedup.New(h.client, dedup.Config{Codec: h.codec, Embedder: h.emb, RequireSurfaceChange: true, Now: h.clock.Now}); err != nil {
					t.Fatal(err)
				}
			}
			out, err := eng.Observe(ctx, dedup.Observation{Collection: "mem", Text: "Dana is a pilot", Source: "direct"})
			if err != nil {
				t.Fatalf("observe after the drop: %v", err)
			}
			if out.Decision != dedup.DecisionInserted || !out.CreatedCollection {
				t.Errorf("decision %s, created_collection %v; want inserted into a collection made again", out.Decision, out.CreatedCollection)
			}
			if got := h.get(t, "mem", out.MemoryID); got.Text != "Dana is a pilot" {
				t.Errorf("stored text %q", got.Text)
			}
		})
	}
}

// TestObserveAfterCompanionDropped: with the audit companion dropped, the
// write that finds it gone fails (its memory is written, its record cannot
// be), and the next write makes the companion again.
func TestObserveAfterCompanionDropped(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	h.observe(t, dedup.Observation{Text: "Dana is a pilot", Source: "direct"})
	if err := h.client.DeleteCollection(ctx, "mem_memrank_audit"); err != nil {
		t.Fatal(err)
	}
	// The first write after the drop may fail (its record has nowhere to go).
	_, _ = h.eng.Observe(ctx, dedup.Observation{Collection: "mem", Text: "Sam likes jazz", Source: "direct"})
	h.observe(t, dedup.Observation{Text: "Sam likes jazz", Source: "direct", SessionID: "s2"})
	exists, err := h.client.CollectionExists(ctx, "mem_memrank_audit")
	if err != nil || !exists {
		t.Fatalf("audit companion exists = %v (%v), want it made again", exists, err)
	}
}
