package rank_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/rank"
)

// TestPointsOnly: under PointsOnly a query returns the same points as
// without it, with the candidate cache on and off, cold and warm, and
// builds no explanations or drop list.
func TestPointsOnly(t *testing.T) {
	e := newEnv(t)
	e.create(t, "mem", dim, qdrant.Distance_Cosine)
	e.upsert(t, "mem", cacheFixture(1)...)
	plain := newRanker(t, e.client, func(c *rank.Config) { c.Guard = testGuard })
	cached, _ := cachedRanker(t, e.client, nil)
	for _, tc := range cacheQueries() {
		tc.req.CollectionName = "mem"
		want, err := plain.Query(context.Background(), tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, r := range []struct {
			name string
			r    *rank.Ranker
		}{{"uncached", plain}, {"cold", cached}, {"warm", cached}} {
			got, err := r.r.Query(rank.PointsOnly(context.Background()), tc.req)
			if err != nil {
				t.Fatalf("%s %s: %v", tc.name, r.name, err)
			}
			if diff := cmp.Diff(want.Points, got.Points, protocmp.Transform()); diff != "" {
				t.Errorf("%s %s: points differ (-full +points only):\n%s", tc.name, r.name, diff)
			}
			if got.Explanations != nil || got.Dropped != nil {
				t.Errorf("%s %s: explanations %d, dropped %d; want none", tc.name, r.name, len(got.Explanations), len(got.Dropped))
			}
			if got.Reranked != want.Reranked || got.Candidates != want.Candidates {
				t.Errorf("%s %s: reranked %v candidates %d; want %v %d", tc.name, r.name, got.Reranked, got.Candidates, want.Reranked, want.Candidates)
			}
		}
	}
}
