package rank_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/rank"
)

// TestAcceptanceAccessCountsTwoReplicas is issue #5's acceptance test of
// access counting: two memrank replicas (two Rankers, each with its own
// Recorder, replica ids "a" and "b", flushing every few milliseconds) over
// one embedded store, under a bounded concurrent load of mixed retrievals
// (Query, Search, QueryGroups, offsets, thresholds). After both stop
// gracefully, every point's access_counts add up to its stored count before
// the load plus the number of times either replica returned it. Exactly.
func TestAcceptanceAccessCountsTwoReplicas(t *testing.T) {
	const (
		points     = 80
		workers    = 4
		perWorker  = 50
		collection = "mem"
	)
	e := newEnv(t)
	e.create(t, collection, dim, qdrant.Distance_Cosine)
	r := rand.New(rand.NewPCG(5, 2026))
	initial := map[uint64]int64{}
	var pts []pt
	var prev []float32
	for i := range points {
		id := uint64(i + 1)
		vec := randomUnit(r)
		text := fmt.Sprintf("memory %d about topic %d", id, r.IntN(20))
		switch {
		case i%10 == 3: // a restatement of the previous memory: tier 1
			text = pts[i-1].payload["text"].(string) + "!"
		case i%10 == 6: // a near-identical vector: tier 2
			vec = jitterUnit(r, prev, 0.02)
		}
		prev = vec
		conf := 0.4 + 0.6*r.Float64() // some below the gate
		var counts map[string]any
		if i%4 == 0 { // counts from an earlier replica
			initial[id] = int64(r.IntN(30))
			counts = map[string]any{"old": initial[id]}
		}
		p := memoryPayload(text, conf, float64(r.IntN(200)), counts)
		p["user"] = fmt.Sprintf("u%d", i%5)
		if i%17 == 5 {
			p["superseded_by"] = "1"
		}
		pts = append(pts, pt{id: id, vec: vec, payload: p})
	}
	e.upsert(t, collection, pts...)

	type replica struct {
		rec *rank.Recorder
		r   *rank.Ranker
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reps []replica
	for _, id := range []string{"a", "b"} {
		client := e.newClient(t)
		rec, err := rank.NewRecorder(client, rank.RecorderConfig{ReplicaID: id, FlushInterval: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		_ = rec.Start(ctx)
		// A wide band with a floor at 0: random queries then return both
		// relevant results (counted) and results beyond the band (not).
		ranker, err := rank.New(client, rank.Config{Recorder: rec, Now: fixedNow, Guard: rank.Guard{Band: 0.25, Floor: 0}})
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, replica{rec: rec, r: ranker})
	}

	// The queries, prepared up front so the workers share no random source.
	type job struct {
		kind   int
		vec    []float32
		limit  uint64
		offset uint64
	}
	jobs := make([][]job, workers)
	for w := range jobs {
		for range perWorker {
			jobs[w] = append(jobs[w], job{kind: r.IntN(4), vec: randomUnit(r), limit: 1 + uint64(r.IntN(8)), offset: uint64(r.IntN(3))})
		}
	}
	var mu sync.Mutex
	returned := map[uint64]int64{}
	beyond := 0
	// count tallies the returned results that must be counted as accessed:
	// those inside the relevance band.
	count := func(exps []rank.Explanation) {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range exps {
			if e.Guard == rank.GuardRelevant {
				returned[e.ID.GetNum()]++
			} else {
				beyond++
			}
		}
	}
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i, j := range jobs[w] {
				rep := reps[(w+i)%2].r
				switch j.kind {
				case 0:
					res, err := rep.Query(ctx, &qdrant.QueryPoints{CollectionName: collection, Query: qdrant.NewQueryDense(j.vec), Limit: &j.limit, Offset: &j.offset})
					if err != nil {
						errs <- err
						return
					}
					count(res.Explanations)
				case 1:
					thr := float32(0.05)
					res, err := rep.Search(ctx, &qdrant.SearchPoints{CollectionName: collection, Vector: j.vec, Limit: j.limit, ScoreThreshold: &thr, WithPayload: qdrant.NewWithPayloadInclude("text")})
					if err != nil {
						errs <- err
						return
					}
					count(res.Explanations)
				case 2:
					size := uint64(2)
					res, err := rep.QueryGroups(ctx, &qdrant.QueryPointGroups{CollectionName: collection, Query: qdrant.NewQueryDense(j.vec), GroupBy: "user", Limit: &j.limit, GroupSize: &size})
					if err != nil {
						errs <- err
						return
					}
					for _, exps := range res.Explanations {
						count(exps)
					}
				case 3: // filtered
					res, err := rep.Query(ctx, &qdrant.QueryPoints{
						CollectionName: collection, Query: qdrant.NewQueryDense(j.vec), Limit: &j.limit,
						Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("user", fmt.Sprintf("u%d", i%5))}},
					})
					if err != nil {
						errs <- err
						return
					}
					count(res.Explanations)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("retrieval: %v", err)
	}
	for i, rep := range reps {
		if err := rep.rec.Shutdown(context.Background()); err != nil {
			t.Fatalf("replica %d close: %v", i, err)
		}
		if st := rep.rec.Stats(); st.DroppedCap != 0 || st.DroppedClosed != 0 || st.Failed != 0 {
			t.Errorf("replica %d stats %+v: nothing may be dropped or failed", i, st)
		}
	}

	var all []uint64
	for i := range points {
		all = append(all, uint64(i+1))
	}
	stored := readCounts(t, e, collection, all...)
	var total int64
	for _, id := range all {
		s := stored[id]
		var sum int64
		for _, v := range s.Counts {
			sum += v
		}
		if want := initial[id] + returned[id]; sum != want {
			t.Errorf("point %d: access_counts %v sum to %d, want %d (%d before + %d returned)", id, s.Counts, sum, want, initial[id], returned[id])
		}
		if got := s.LastAccessed != ""; got != (returned[id] > 0) {
			t.Errorf("point %d: last_accessed_at %q, returned %d times", id, s.LastAccessed, returned[id])
		}
		if s.Counts["old"] != initial[id] {
			t.Errorf("point %d: another replica's count changed: %v, want old=%d", id, s.Counts, initial[id])
		}
		total += returned[id]
	}
	// The load must have exercised both replicas and the dedup, not
	// returned nothing.
	if total < workers*perWorker || beyond == 0 {
		t.Errorf("%d results counted and %d beyond the band over %d retrievals: want both kinds", total, beyond, workers*perWorker)
	}
	var a, b int64
	for _, s := range stored {
		a, b = a+s.Counts["a"], b+s.Counts["b"]
	}
	if a == 0 || b == 0 {
		t.Errorf("replica totals a=%d b=%d: both replicas must have counted", a, b)
	}
	t.Logf("%d results counted: replica a %d, replica b %d, %d points returned", total, a, b, len(returned))
}

func randomUnit(r *rand.Rand) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

func jitterUnit(r *rand.Rand, v []float32, eps float64) []float32 {
	out := make([]float32, len(v))
	var n float64
	for i := range v {
		x := float64(v[i]) + eps*r.NormFloat64()
		out[i] = float32(x)
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range out {
		out[i] = float32(float64(out[i]) / n)
	}
	return out
}
