package rank_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/rank"
)

// TestWithArchived: archived and decayed memories come back, marked, when
// asked for; superseded ones never do; without the option nothing changes;
// reading an archived memory is not an access.
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
		mem(2, 0.98, 0, map[string]any{"tier": "archived", "retrievable": false}),
		mem(3, 0.97, 5000, nil), // far past its decay floor
		mem(4, 0.60, 0, nil),
	}
	tests := []struct {
		name     string
		ctx      context.Context
		want     []uint64
		archived map[uint64]string
		// countsLive: memory 4 is relevant (the others, more similar, are
		// left out) and counted.
		countsLive bool
	}{
		{"absent: archived excluded", context.Background(), []uint64{4}, map[uint64]string{}, true},
		{"asked for: returned and marked", rank.WithArchived(context.Background()), []uint64{2, 4, 3},
			map[uint64]string{2: "stored as not retrievable", 3: "past its decay floor"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{info: cosineInfo(), points: points}
			dst := &fakePayloads{}
			rec := newRecorder(t, dst, func(c *rank.RecorderConfig) { c.Now = fixedNow })
			r := newRanker(t, src, func(c *rank.Config) { c.Recorder = rec })
			limit := uint64(10)
			res, err := r.Query(tc.ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: &limit})
			if err != nil {
				t.Fatal(err)
			}
			got := map[uint64]bool{}
			for _, id := range ids(res.Points) {
				got[id] = true
			}
			for _, id := range tc.want {
				if !got[id] {
					t.Errorf("%d not returned (got %v)", id, ids(res.Points))
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("returned %v, want %v", ids(res.Points), tc.want)
			}
			marks := map[uint64]string{}
			for _, e := range res.Explanations {
				if e.Archived != "" {
					marks[e.ID.GetNum()] = e.Archived
				}
			}
			if diff := cmp.Diff(tc.archived, marks); diff != "" {
				t.Errorf("archived marks (-want +got):\n%s", diff)
			}
			if err := rec.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			counted := map[uint64]bool{}
			for key := range dst.totals() { // "collection/id"
				counted[parseNum(t, key[strings.LastIndexByte(key, '/')+1:])] = true
			}
			for id := range tc.archived {
				if counted[id] {
					t.Errorf("reading archived memory %d counted as an access", id)
				}
			}
			if tc.countsLive && !counted[4] {
				t.Errorf("the live memory's access was not counted: %v", counted)
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
