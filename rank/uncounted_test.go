package rank_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/rank"
)

// TestWithoutAccess: a query under WithoutAccess returns what the same
// query returns otherwise, and counts none of it as accessed.
func TestWithoutAccess(t *testing.T) {
	points := []*qdrant.ScoredPoint{
		scored(1, 0.90, memoryPayload("first", 0.9, 1, nil), nil),
		scored(2, 0.89, memoryPayload("second", 0.9, 1, nil), nil),
	}
	tests := []struct {
		name string
		ctx  context.Context
		want map[string]map[string]int64 // access totals written, by collection/id
	}{
		{"counted by default", context.Background(), map[string]map[string]int64{"mem/1": {"a": 1}, "mem/2": {"a": 1}}},
		{"not counted under WithoutAccess", rank.WithoutAccess(context.Background()), map[string]map[string]int64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := &fakePayloads{}
			rec := newRecorder(t, dst, func(c *rank.RecorderConfig) { c.Now = fixedNow })
			r := newRanker(t, &fakeSource{info: cosineInfo(), points: points}, func(c *rank.Config) { c.Recorder = rec })
			limit := uint64(10)
			res, err := r.Query(tc.ctx, &qdrant.QueryPoints{CollectionName: "mem", Query: qdrant.NewQueryDense(query()), Limit: &limit})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]uint64{1, 2}, ids(res.Points)); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			if err := rec.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, dst.totals()); diff != "" {
				t.Errorf("access counts written (-want +got):\n%s", diff)
			}
		})
	}
}
