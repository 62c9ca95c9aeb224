package consolidate_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
)

// After a consolidation, /v1/stats' counted answer (the stored tiers) is
// the scan's (every memory scored at the same clock), and it says when the
// tiers were computed: the consolidation's clock. Before it, it says it
// does not know.
func TestCountedStatsAfterConsolidation(t *testing.T) {
	h := newHarness(t)
	h.seed(t, 120)
	emb, err := embed.NewLocal(64)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := dedup.New(h.client, dedup.Config{Codec: h.codec, Embedder: emb, Now: h.clock.Now,
		TiersAsOf: func(ctx context.Context, coll, tenant string) (time.Time, bool, error) {
			run, ok, err := consolidate.ReadLastRun(ctx, h.client, coll, tenant)
			return run.ComputedAt, ok, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before, err := eng.Stats(ctx, "mem", "")
	if err != nil {
		t.Fatal(err)
	}
	if !before.TiersAsOf.IsZero() || before.Tiers["active"] != 120 {
		t.Errorf("before any consolidation: tiers %v as of %v, want the write path's 120 active as of nothing", before.Tiers, before.TiersAsOf)
	}
	if _, err := h.job(t, consolidate.Config{}, "r1").Run(ctx, consolidate.Request{Collection: "mem"}); err != nil {
		t.Fatal(err)
	}
	counted, err := eng.Stats(ctx, "mem", "")
	if err != nil {
		t.Fatal(err)
	}
	scanned, err := eng.ScanStats(ctx, "mem", "")
	if err != nil {
		t.Fatal(err)
	}
	if !counted.TiersAsOf.Equal(t0) {
		t.Errorf("tiers as of %v, want the consolidation's clock %v", counted.TiersAsOf, t0)
	}
	if counted.Tiers["archived"] == 0 || counted.Tiers["stale"]+counted.Tiers["dormant"] == 0 {
		t.Errorf("the seed gave one tier only: %v", counted.Tiers)
	}
	ignore := cmpopts.IgnoreFields(dedup.Stats{}, "Method", "Average", "TiersAsOf")
	if diff := cmp.Diff(scanned, counted, ignore); diff != "" {
		t.Errorf("counted after consolidation differs from the scan (-scan +counted):\n%s", diff)
	}
}
