package eval

import (
	"context"
	"testing"

	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
)

// TestShippedSet runs the shipped labeled set (examples/eval) with
// memrank's defaults and checks what the README reports: memrank's order is
// better than raw similarity on nDCG@10 and MRR, at least as good as the
// figures the LoCoMo issue set for it (0.825 and 0.914), with fewer
// inversions; and freshness weighed on every query (focus off) ranks worse
// than raw similarity, which is why a query's focus decides how much age
// counts. The README's table comes from `memrank eval
// examples/eval/seed1.jsonl.gz`.
func TestShippedSet(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 2,000 memories")
	}
	set, err := Open("../../examples/eval/seed1.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Memories) < 2000 || len(set.Queries) < 100 {
		t.Fatalf("%d memories and %d queries: the set must have at least 2,000 and 100", len(set.Memories), len(set.Queries))
	}
	rep, err := Run(context.Background(), Config{Set: set, Seed: set.Header.Seed, Collection: "eval", Where: "test",
		Store: newStore(t), Base: BaseSetting(rank.DefaultGuard(), scoring.DefaultParams())})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]Summary{}
	for _, r := range rep.Rows {
		rows[r.Name] = r.Summary
	}
	raw, mr, everyQuery := rows["raw"], rows["memrank"], rows["focus_off"]
	if mr.NDCG10 < 0.825 || mr.MRR < 0.914 || mr.Inversions >= raw.Inversions {
		t.Errorf("memrank nDCG@10 %.3f MRR %.3f inversions %d, want at least 0.825 and 0.914 and fewer than raw's %d",
			mr.NDCG10, mr.MRR, mr.Inversions, raw.Inversions)
	}
	if everyQuery.NDCG10 >= raw.NDCG10 {
		t.Errorf("freshness on every query: nDCG@10 %.3f against raw %.3f: the set no longer shows why the focus exists", everyQuery.NDCG10, raw.NDCG10)
	}
	t.Logf("nDCG@10 raw %.3f memrank %.3f (%+.3f), MRR %.3f -> %.3f, inversions %d -> %d, lifted %d, withheld %d",
		raw.NDCG10, mr.NDCG10, mr.NDCG10-raw.NDCG10, raw.MRR, mr.MRR, raw.Inversions, mr.Inversions, mr.Lifted, mr.Withheld)
}
