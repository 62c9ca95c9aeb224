package rank_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/rank"
)

// The loop fixture: six topics, each asked about along its own axis, with
// three relevant memories (cosine 0.65 to 0.8 to its question, never read
// yet) and six popular distractors that resemble every question a little
// (cosine 0.35) and have been read 80 times each.
const (
	loopTopics      = 6
	loopRelevant    = 3
	loopDistractors = 6
	loopReads       = 80
)

func loopQuery(topic int) []float32 {
	v := make([]float32, dim)
	v[1+topic] = 1
	return v
}

// loopStray is a question the fixture has no answer to: it leans a little
// towards every topic (cosine 0.45 to the distractors, under 0.2 to every
// relevant memory) and points at an axis nothing uses.
func loopStray() []float32 {
	v := make([]float32, dim)
	for topic := range loopTopics {
		v[1+topic] = 0.25
	}
	v[dim-1] = 1
	return v
}

// loadLoop creates collection coll with the fixture and returns the
// distractors' ids.
func loadLoop(t *testing.T, e *env, coll string) (distractors map[uint64]bool) {
	t.Helper()
	e.create(t, coll, dim, qdrant.Distance_Cosine)
	axis := 1 + loopTopics // first free axis
	var pts []pt
	id := uint64(1)
	for topic := range loopTopics {
		for k := range loopRelevant {
			sim := 0.8 - 0.075*float64(k)
			v := make([]float32, dim)
			v[1+topic] = float32(sim)
			v[axis] = float32(math.Sqrt(1 - sim*sim))
			axis++
			pts = append(pts, pt{id: id, vec: v, payload: memoryPayload(fmt.Sprintf("topic %d fact %d", topic, k), 0.85, 5, nil)})
			id++
		}
	}
	distractors = map[uint64]bool{}
	for d := range loopDistractors {
		v := make([]float32, dim)
		var norm float64
		for topic := range loopTopics {
			v[1+topic] = 0.35
			norm += 0.35 * 0.35
		}
		v[axis] = float32(math.Sqrt(1 - norm))
		axis++
		p := memoryPayload(fmt.Sprintf("popular distractor %d", d), 0.9, 2, map[string]any{"old": loopReads})
		pts = append(pts, pt{id: id, vec: v, payload: p})
		distractors[id] = true
		id++
	}
	if axis > dim-1 { // the last axis is the stray question's
		t.Fatalf("the fixture needs %d axes, the vectors have %d", axis, dim)
	}
	e.upsert(t, coll, pts...)
	return distractors
}

// runLoop asks every topic's question for rounds rounds, flushing the access
// counts to the store after each round (so the next round ranks with them,
// as a live system does), and reports the reads the distractors gained and
// how many times one was returned above a relevant memory.
func runLoop(t *testing.T, e *env, coll string, guard rank.Guard, rounds int, strays bool) (gained int64, inversions int) {
	t.Helper()
	distractors := loadLoop(t, e, coll)
	rec, err := rank.NewRecorder(e.client, rank.RecorderConfig{ReplicaID: "loop", FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r := newRanker(t, e.client, func(c *rank.Config) { c.Guard, c.Recorder = guard, rec })
	for range rounds {
		for topic := range loopTopics {
			res, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryDense(loopQuery(topic)), Limit: u64(5)})
			if err != nil {
				t.Fatal(err)
			}
			// Every (distractor, relevant memory of the topic) pair where the
			// distractor is returned above the relevant memory, or returned
			// while the relevant memory is not.
			pos := map[uint64]int{}
			for i, p := range res.Points {
				pos[p.GetId().GetNum()] = i + 1
			}
			for d := range distractors {
				if pos[d] == 0 {
					continue
				}
				for k := range loopRelevant {
					id := uint64(topic*loopRelevant + k + 1)
					if pos[id] == 0 || pos[id] > pos[d] {
						inversions++
					}
				}
			}
		}
		if strays {
			if _, err := r.Query(context.Background(), &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryDense(loopStray()), Limit: u64(5)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var all []uint64
	for id := range distractors {
		all = append(all, id)
	}
	for id, s := range readCounts(t, e, coll, all...) {
		var sum int64
		for _, v := range s.Counts {
			sum += v
		}
		if sum < loopReads {
			t.Fatalf("distractor %d lost reads: %v", id, s.Counts)
		}
		gained += sum - loopReads
	}
	return gained, inversions
}

// TestSelfReinforcementLoop is the loop the issue found: with the seeds'
// unbounded access boost, popular distractors outranked relevant memories,
// each appearance counted as another read, and their lead grew. Bounded
// (reads add at most AccessWeight, 2%), they never rise above a relevant
// memory, even with the guard off, which counts every result it returns:
// the distractors filling the limit then still gain reads. With the
// guard, irrelevant memories gain no reads at all.
func TestSelfReinforcementLoop(t *testing.T) {
	e := newEnv(t)
	const rounds = 8
	gained, inversions := runLoop(t, e, "unguarded", rank.Guard{Off: true}, rounds, false)
	if inversions != 0 {
		t.Errorf("with the guard off: distractors ranked above (or instead of) relevant memories %d times, want 0: reads must not outweigh relevance", inversions)
	}
	if gained == 0 {
		t.Errorf("with the guard off: the distractors returned gained no reads; the fixture no longer shows what the guard stops")
	}
	t.Logf("without the guard, over %d rounds of %d questions: distractors gained %d reads and never ranked above a relevant memory", rounds, loopTopics, gained)
	gained, inversions = runLoop(t, e, "guarded", testGuard, rounds, false)
	if gained != 0 || inversions != 0 {
		t.Errorf("with the guard: distractors gained %d reads and ranked above relevant memories %d times, want 0 and 0", gained, inversions)
	}
	// The case: questions without an answer, whose nearest memories
	// are the popular ones at cosine 0.3-0.5. Below the default guard's
	// floor nothing is relevant, so nothing is counted.
	gained, inversions = runLoop(t, e, "defaults", rank.DefaultGuard(), rounds, true)
	if gained != 0 || inversions != 0 {
		t.Errorf("with the default guard and unanswered questions: distractors gained %d reads and ranked above relevant memories %d times, want 0 and 0", gained, inversions)
	}
	// A floor below those similarities lets them be counted: the floor is
	// what stops the loop on questions without an answer.
	low := rank.DefaultGuard()
	low.Floor = 0.3
	if gained, _ = runLoop(t, e, "low-floor", low, rounds, true); gained == 0 {
		t.Errorf("with a floor of 0.3 the distractors gained no reads from unanswered questions: the fixture no longer tests the floor")
	}
}
