package rank_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
)

// TestWithArchived: memories taken out of answers (stored as not
// retrievable, with the tier archived or not) come back, marked, when
// asked for; superseded ones never do; reading them that way is not an
// access. Age and a stored tier archived alone are labels: such memories
// are returned, unmarked, and counted, with or without the option.
func TestWithArchived(t *testing.T) {
	mem := func(id uint64, score float32, age float64, extra map[string]any) *qdrant.ScoredPoint {
		p := memoryPayload("archived memory "+idString(qdrant.NewIDNum(id)), 0.9, age, nil)
		for k, v := range extra {
			p[k] = v
		}
		return scored(id, score, p, nil)
	}
	points := []*qdrant.ScoredPoint{
		mem(1, 0.99, 0, map[string]any{"superseded_by": "4"}),
		mem(2, 0.98, 0, map[string]any{"tier": "archived", "retrievable": false}), // archived by a review
		mem(5, 0.975, 0, map[string]any{"retrievable": false}),                    // a correction by another writer
		mem(3, 0.97, 5000, nil),                              // far past its decay floor
		mem(6, 0.965, 0, map[string]any{"tier": "archived"}), // a stored label, still retrievable
		mem(4, 0.90, 0, nil),
	}
	type tiers struct{ Tier, Stored string }
	tests := []struct {
		name        string
		ctx         context.Context
		want        []uint64
		archived    map[uint64]string
		wantDropped map[uint64]string
		wantCounted []uint64
	}{
		{
			name: "absent: left out", ctx: context.Background(),
			want: []uint64{3, 6, 4}, archived: map[uint64]string{},
			wantDropped: map[uint64]string{1: "superseded", 2: "archived", 5: "not_retrievable"},
			wantCounted: []uint64{3, 4, 6},
		},
		{
			name: "asked for: returned and marked", ctx: rank.WithArchived(context.Background()),
			want:        []uint64{2, 5, 3, 6, 4},
			archived:    map[uint64]string{2: "archived", 5: "stored as not retrievable"},
			wantDropped: map[uint64]string{1: "superseded"},
			wantCounted: []uint64{3, 4, 6},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{info: cosineInfo(), points: points}
			dst := &fakePayloads{}
			rec := newRecorder(t, dst, func(c *rank.RecorderConfig) { c.Now = fixedNow })
			r := newRanker(t, src, func(c *rank.Config) { c.Recorder, c.Guard = rec, testGuard })
			limit := uint64(10)
			res, err := r.Query(tc.ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: &limit})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(res.Points)); diff != "" {
				t.Errorf("returned (-want +got):\n%s", diff)
			}
			marks := map[uint64]string{}
			gotTiers := map[uint64]tiers{}
			for _, e := range res.Explanations {
				if e.Archived != "" {
					marks[e.ID.GetNum()] = e.Archived
				}
				gotTiers[e.ID.GetNum()] = tiers{e.Tier.String(), e.StoredTier}
			}
			if diff := cmp.Diff(tc.archived, marks); diff != "" {
				t.Errorf("archived marks (-want +got):\n%s", diff)
			}
			// 3's tier is archived by age (computed), 6's by a stored label:
			// neither leaves it out.
			if got := gotTiers[3]; got != (tiers{scoring.TierArchived.String(), ""}) {
				t.Errorf("memory 3: tier %+v, want archived (computed), none stored", got)
			}
			if got := gotTiers[6]; got != (tiers{scoring.TierActive.String(), "archived"}) {
				t.Errorf("memory 6: tier %+v, want active (computed), archived stored", got)
			}
			dropped := map[uint64]string{}
			for _, d := range res.Dropped {
				dropped[d.ID.GetNum()] = d.Reason
			}
			if diff := cmp.Diff(tc.wantDropped, dropped); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
			if err := rec.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			var counted []uint64
			for key := range dst.totals() { // "collection/id"
				counted = append(counted, parseNum(t, key[strings.LastIndexByte(key, '/')+1:]))
			}
			if diff := cmp.Diff(tc.wantCounted, counted, cmpopts.SortSlices(func(a, b uint64) bool { return a < b })); diff != "" {
				t.Errorf("counted as accessed (-want +got):\n%s", diff)
			}
		})
	}
}

func parseNum(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return n
}
