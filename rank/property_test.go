package rank_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
)

// propMem is one memory of a random collection.
type propMem struct {
	id          uint64
	vec         []float32
	text        string
	conf        float64
	age         float64 // whole days
	reads       int
	superseded  bool
	unavailable bool // stored as not retrievable
}

func (m propMem) excluded() bool { return m.superseded || m.unavailable }

func (m propMem) payload() map[string]any {
	var counts map[string]any
	if m.reads > 0 {
		counts = map[string]any{"z": m.reads}
	}
	p := memoryPayload(m.text, m.conf, m.age, counts)
	if m.superseded {
		p["superseded_by"] = "1"
	}
	if m.unavailable {
		p["retrievable"] = false
	}
	return p
}

// randomCollection is 30 to 60 memories with random vectors, some of them
// restatements of an earlier one (the same text, tier 1) or near-identical
// to one (tier 2). With random metadata, their confidences (all above the
// retrieval gate), ages and reads vary, and some are superseded or not
// retrievable; without, every memory has the same.
func randomCollection(rng *rand.Rand, random bool) []propMem {
	n := 30 + rng.IntN(31)
	mems := make([]propMem, 0, n)
	for i := range n {
		m := propMem{id: uint64(i + 1), vec: randomUnit(rng), text: fmt.Sprintf("memory %d", i+1), conf: 0.8, age: 12, reads: 3}
		if i > 0 && rng.IntN(8) == 0 { // a tier-2 duplicate: cosine 0.95 to 0.99
			m.vec = jitterUnit(rng, mems[rng.IntN(i)].vec, 0.02+0.04*rng.Float64())
		}
		if i > 0 && rng.IntN(10) == 0 { // a restatement embeds as its original
			j := rng.IntN(i)
			m.text, m.vec = mems[j].text+"!", jitterUnit(rng, mems[j].vec, 0.002)
		}
		if random {
			m.conf = 0.5 + 0.49*rng.Float64()
			m.age = float64(rng.IntN(600))
			m.reads = 0
			if rng.IntN(3) == 0 {
				m.reads = rng.IntN(100)
			}
			m.superseded = rng.IntN(10) == 0
			m.unavailable = !m.superseded && rng.IntN(20) == 0
		}
		mems = append(mems, m)
	}
	return mems
}

// TestRelevanceProperty compares memrank's top k with the store's own top
// k for the same query over a few hundred random collections, at the
// focus each query has and at full focus.
//
// With equal metadata every weight is the similarity times one factor, so
// memrank's top k plus what was folded into it holds the store's top k.
//
// With random metadata that is not guaranteed (freshness and reads
// re-order memories of similar relevance), so the test holds the bound
// that is: a memory of the store's top k that is neither excluded, nor
// returned, nor folded into a returned result, is missing only because it
// weighs no more than every returned result's score (its group's weight),
// and the answer is full. The weights and the
// focus are computed here from the fixture, with the scoring package.
func TestRelevanceProperty(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i, variant := range []struct {
		name        string
		random      bool
		floor       float64 // the focus floor: 1 weighs age fully
		collections int
	}{
		{"equal metadata", false, 0, 80},
		{"equal metadata, full focus", false, 1, 20},
		{"random metadata", true, 0, 70},
		{"random metadata, full focus", true, 1, 70},
	} {
		if testing.Short() {
			variant.collections /= 5
		}
		t.Run(variant.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2026, uint64(i)))
			params := focusFloor(variant.floor)
			r := newRanker(t, e.client, func(c *rank.Config) { c.Guard, c.Params = testGuard, params })
			folds, missing := 0, 0
			for c := range variant.collections {
				coll := fmt.Sprintf("prop-%d-%d", i, c)
				mems := randomCollection(rng, variant.random)
				e.create(t, coll, dim, qdrant.Distance_Cosine)
				var pts []pt
				for _, m := range mems {
					pts = append(pts, pt{id: m.id, vec: m.vec, payload: m.payload()})
				}
				e.upsert(t, coll, pts...)
				// Half the queries near a stored memory, half anywhere.
				vec := randomUnit(rng)
				if c%2 == 0 {
					vec = jitterUnit(rng, mems[rng.IntN(len(mems))].vec, 0.05+0.2*rng.Float64())
				}
				k := uint64(1 + rng.IntN(10))
				// The store's answer to the candidates memrank asks for (40, the
				// floor), in its own order.
				all, err := e.client.Query(ctx, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryDense(vec), Limit: u64(40)})
				if err != nil {
					t.Fatal(err)
				}
				raw := all[:k] // the store's own top k
				res, err := r.Query(ctx, &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryDense(vec), Limit: &k})
				if err != nil {
					t.Fatal(err)
				}
				if res.Requested != uint64(len(all)) && res.Requested < uint64(len(mems)) {
					t.Fatalf("%s: memrank asked for %d candidates, the test for %d", coll, res.Requested, len(all))
				}
				if !res.Reranked || len(res.Explanations) != len(res.Points) {
					t.Fatalf("%s: reranked %v (%s), %d explanations for %d points", coll, res.Reranked, res.PassThrough, len(res.Explanations), len(res.Points))
				}
				covered := map[uint64]bool{}
				for _, ex := range res.Explanations {
					covered[ex.ID.GetNum()] = true
					for _, id := range ex.FoldedIDs {
						covered[id.GetNum()] = true
						folds++
					}
				}
				if !variant.random {
					for _, p := range raw {
						if !covered[p.GetId().GetNum()] {
							t.Errorf("%s, k %d: the store's %d is neither returned nor folded: store %v, memrank %v", coll, k, p.GetId().GetNum(), ids(raw), ids(res.Points))
						}
					}
					continue
				}
				// The weights, from the fixture: the focus over the kept
				// candidates (the store's top 40, the floor of what is asked,
				// less the excluded: every confidence passes the gate).
				base := map[uint64]float32{}
				var cands []focusCand
				for _, p := range all {
					id := p.GetId().GetNum()
					base[id] = p.GetScore()
					if m := mems[id-1]; !m.excluded() {
						cands = append(cands, focusCand{base: float64(p.GetScore()), fresh: scoring.Freshness(m.age, 120)})
					}
				}
				focus := expectedFocus(params, cands)
				if math.Abs(res.Guard.Focus-focus) > 1e-9 {
					t.Errorf("%s: focus %v, want %v", coll, res.Guard.Focus, focus)
				}
				w := func(id uint64) float64 {
					m := mems[id-1]
					return weight(base[id], m.age, int64(m.reads), res.Guard.Focus)
				}
				lowest := math.Inf(1)
				for _, ex := range res.Explanations {
					id := ex.ID.GetNum()
					if mems[id-1].excluded() {
						t.Errorf("%s: %d returned, superseded or not retrievable", coll, id)
					}
					if math.Abs(ex.Weight-w(id)) > 1e-9 {
						t.Errorf("%s: %d weighs %v, want %v", coll, id, ex.Weight, w(id))
					}
					lowest = min(lowest, ex.Score)
				}
				into := map[uint64]uint64{}
				for _, d := range res.Dropped {
					if d.Reason == "folded" {
						into[d.ID.GetNum()] = d.Into.GetNum()
					}
				}
				for _, p := range raw {
					id := p.GetId().GetNum()
					if mems[id-1].excluded() || covered[id] {
						continue
					}
					missing++
					group := id
					if g, ok := into[id]; ok {
						group = g
					}
					if uint64(len(res.Points)) != k || w(id) > lowest+1e-12 {
						t.Errorf("%s, k %d: the store's %d (group %d, weight %v) is missing while a result scores %v (%d results): store %v, memrank %v",
							coll, k, id, group, w(id), lowest, len(res.Points), ids(raw), ids(res.Points))
					}
				}
			}
			t.Logf("%d collections: %d folds returned; %d of the store's top memories missing, each outweighed by every result",
				variant.collections, folds, missing)
			if folds == 0 {
				t.Errorf("no duplicate was folded: the collections no longer test folding")
			}
		})
	}
}
