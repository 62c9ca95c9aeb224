package dedup_test

import (
	"context"
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/dedup"
)

// TestStatsDecisionsPerCollection: a collection's stats count the
// decisions made in that collection only, every decision named (0 when
// none), not those of the process's other collections.
func TestStatsDecisionsPerCollection(t *testing.T) {
	h := newHarness(t)
	h.observe(t, dedup.Observation{Collection: "mem", Text: "Dana is a pilot", Source: "direct"})
	h.observe(t, dedup.Observation{Collection: "mem", Text: "Dana is a pilot", Source: "direct"})
	h.observe(t, dedup.Observation{Collection: "notes", Text: "Sam likes jazz", Source: "direct"})
	zero := map[string]int64{"inserted": 0, "restatement": 0, "independent": 0, "contradiction": 0,
		"rejected": 0, "confirmed": 0, "corrected": 0, "used": 0}
	with := func(counts map[string]int64) map[string]int64 {
		out := maps.Clone(zero)
		for k, v := range counts {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name, collection string
		want             map[string]int64
	}{
		{name: "two observations of one fact", collection: "mem", want: with(map[string]int64{"inserted": 1, "restatement": 1})},
		{name: "another collection", collection: "notes", want: with(map[string]int64{"inserted": 1})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := h.eng.Stats(context.Background(), tc.collection, "")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, st.Decisions); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}
