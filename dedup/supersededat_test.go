package dedup_test

import (
	"context"
	"testing"
	"time"

	"github.com/memrank/memrank/dedup"
)

// TestSupersededAt: the audit trail says when a memory was last
// superseded (the correction's time); a memory never superseded, and a
// collection with no audit trail, have no answer.
func TestSupersededAt(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	first := h.observe(t, dedup.Observation{Text: "Dana uses Neovim", Source: "direct", SessionID: "s1", ObservedAt: t0.Add(-48 * time.Hour)})
	other := h.observe(t, dedup.Observation{Text: "Dana drinks green tea", Source: "direct", SessionID: "s1", ObservedAt: t0.Add(-48 * time.Hour)})
	corrected := t0.Add(-24 * time.Hour)
	out := h.observe(t, dedup.Observation{Text: "Dana switched to Helix", Corrects: first.MemoryID, SessionID: "s2", ObservedAt: corrected})
	if out.Decision != dedup.DecisionCorrected || out.Superseded != first.MemoryID {
		t.Fatalf("correction: %+v", out)
	}
	when, err := h.eng.SupersededAt(ctx, "mem", []string{first.MemoryID, other.MemoryID, "not-a-memory"})
	if err != nil {
		t.Fatal(err)
	}
	if len(when) != 1 || !when[first.MemoryID].Equal(corrected) {
		t.Errorf("superseded at %v, want only %s at %v", when, first.MemoryID, corrected)
	}
	if when, err := h.eng.SupersededAt(ctx, "nothing-written", []string{first.MemoryID}); err != nil || len(when) != 0 {
		t.Errorf("a collection without an audit trail: %v, %v; want nothing", when, err)
	}
}
