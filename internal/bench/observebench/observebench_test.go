package observebench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"go.uber.org/goleak"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/internal/bench/observebench"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func client(tb testing.TB) *qdrant.Client {
	tb.Helper()
	db, err := store.Open(tb.TempDir(), store.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	p := upstream.ServeInProcess(store.NewServer(db))
	c, err := qdrant.NewClient(p.ClientConfig())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Close(); _ = p.Close(); _ = db.Close() })
	return c
}

func codec(tb testing.TB) *memory.Codec {
	c, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestRunSmall(t *testing.T) {
	// The lexical embedder keeps every generated fact apart: exact counts.
	res, err := observebench.Run(context.Background(), client(t), codec(t),
		observebench.Options{Memories: 600, Observations: 100, MixSize: 300, Embedder: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if res.P50 <= 0 || res.P99 < res.P50 {
		t.Errorf("latencies p50 %v p99 %v", res.P50, res.P99)
	}
	// Half the timed observations repeat stored memories, half are new.
	if res.Decisions[dedup.DecisionInserted] != 50 || res.Decisions[dedup.DecisionRestatement]+res.Decisions[dedup.DecisionIndependent] != 50 {
		t.Errorf("timed decisions %v, want 50 new and 50 repeats", res.Decisions)
	}
	// Every timed observation looks its text up, writes its memory and is
	// audited; the new ones also search for neighbours and look their
	// deterministic id up.
	counts := map[string]int{}
	for _, c := range res.Calls {
		if c.P50 <= 0 || c.PerObs <= 0 {
			t.Errorf("%s: p50 %v, %v per observation", c.Kind, c.P50, c.PerObs)
		}
		counts[c.Kind] = c.Count
	}
	if diff := cmp.Diff(map[string]int{"tier-1 look-up": 100, "tier-2 search": 50, "id look-up": 50, "memory write": 100, "audit write": 100}, counts); diff != "" {
		t.Errorf("upstream calls of the timed phase (-want +got):\n%s", diff)
	}
	if res.Writers != 8 || res.Throughput <= 0 || res.WritersP99 < res.WritersP50 {
		t.Errorf("throughput phase: %d writers, %.0f/s, p50 %v p99 %v", res.Writers, res.Throughput, res.WritersP50, res.WritersP99)
	}
	if res.StoreFloor <= 0 || res.Floor != 0 {
		t.Errorf("floors %v (store) %v (disk, not measured here)", res.StoreFloor, res.Floor)
	}
	m := res.Mix
	if m.New+m.Repeats+m.Paraphrases+m.NearMisses+m.Contradictions != 300 {
		t.Errorf("mix %+v does not add up to 300", m)
	}
	if res.JudgeCalls == 0 || res.JudgeCalls > m.NearMisses+m.Contradictions+m.Paraphrases {
		t.Errorf("%d judge calls for mix %+v", res.JudgeCalls, m)
	}
	if res.MixDecisions[dedup.DecisionInserted] < m.New {
		t.Errorf("%d inserted for %d new facts: %v", res.MixDecisions[dedup.DecisionInserted], m.New, res.MixDecisions)
	}
}

// TestRunSemantic: with the semantic embedder (the default) fewer
// observations reach the judge than with the lexical one, and more
// contradictions are found.
func TestRunSemantic(t *testing.T) {
	ctx := context.Background()
	lex, err := observebench.Run(ctx, client(t), codec(t), observebench.Options{Memories: 200, Observations: 20, MixSize: 300, Embedder: "local", Writers: -1})
	if err != nil {
		t.Fatal(err)
	}
	sem, err := observebench.Run(ctx, client(t), codec(t), observebench.Options{Memories: 200, Observations: 20, MixSize: 300, Writers: -1})
	if err != nil {
		t.Fatal(err)
	}
	if sem.Model != "memrank-local-sem-v1:384" {
		t.Errorf("default embedder %q", sem.Model)
	}
	if sem.JudgeRate >= lex.JudgeRate {
		t.Errorf("judge rate: semantic %.3f, lexical %.3f", sem.JudgeRate, lex.JudgeRate)
	}
	if sem.MixDecisions[dedup.DecisionContradiction] <= lex.MixDecisions[dedup.DecisionContradiction] {
		t.Errorf("contradictions found: semantic %d, lexical %d", sem.MixDecisions[dedup.DecisionContradiction], lex.MixDecisions[dedup.DecisionContradiction])
	}
}

// TestRunEmbedded: the embedded run measures the disk's commit floor in
// the store's directory and says whether the goal line applies.
func TestRunEmbedded(t *testing.T) {
	tests := []struct {
		name    string
		noSync  bool
		writers int
		goal    string
	}{
		{name: "fsync on, one writer only", writers: -1, goal: "goal         p50 <= floor x 2 + 0.3 ms"},
		{name: "no fsync", noSync: true, writers: 3, goal: "goal         not judged"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := observebench.RunEmbedded(context.Background(), observebench.Embedded{Dir: t.TempDir(), NoSync: tc.noSync},
				observebench.Options{Memories: 100, Observations: 30, MixSize: 20, Embedder: "local", Writers: tc.writers})
			if err != nil {
				t.Fatal(err)
			}
			if res.Floor <= 0 || res.StoreFloor <= 0 || res.Synced == tc.noSync {
				t.Errorf("floor %v, store floor %v, synced %v", res.Floor, res.StoreFloor, res.Synced)
			}
			// Each timed observation commits its memory and its audit record.
			if c := res.Commits; c.Commits < uint64(res.Observations) || c.Pages < c.Commits || c.Time <= 0 {
				t.Errorf("commits of the timed phase: %+v for %d observations", c, res.Observations)
			}
			if want := max(tc.writers, 0); res.Writers != want {
				t.Errorf("%d writers, want %d", res.Writers, want)
			}
			var b strings.Builder
			if _, err := res.WriteTo(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "per observation (the store's, timed phase)") {
				t.Errorf("report lacks the store's commits:\n%s", b.String())
			}
			if !strings.Contains(b.String(), tc.goal) {
				t.Errorf("report lacks %q:\n%s", tc.goal, b.String())
			}
			if got := strings.Contains(b.String(), "bound        tier-1 look-up p50 + store floor x 2"); got != !tc.noSync {
				t.Errorf("bound line present: %v, want %v:\n%s", got, !tc.noSync, b.String())
			}
		})
	}
}

// TestObservationIDsDecideAlike: sending observation_ids (the write path
// then also looks each up, alongside tiers 1 and 2) changes no decision.
func TestObservationIDsDecideAlike(t *testing.T) {
	ctx := context.Background()
	run := func(ids bool) observebench.Result {
		res, err := observebench.Run(ctx, client(t), codec(t), observebench.Options{Memories: 300, Observations: 80, MixSize: 10,
			Embedder: "local", Writers: -1, ObservationIDs: ids})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	without, with := run(false), run(true)
	if diff := cmp.Diff(without.Decisions, with.Decisions); diff != "" {
		t.Errorf("decisions with observation_ids (-without +with):\n%s", diff)
	}
}

// TestBoundLine: the report adds up the calls no observation can skip, at
// their fastest, and says when the goal is below that sum.
func TestBoundLine(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name  string
		res   observebench.Result
		want  string // "" when the report must have no bound line
		above bool
	}{
		{
			name: "above the goal",
			res: observebench.Result{Floor: ms / 4, StoreFloor: ms * 4 / 10, Synced: true, P50: 3 * ms,
				Calls: []observebench.Call{{Kind: "tier-1 look-up", Count: 10, P50: ms / 8}}},
			want: "bound        tier-1 look-up p50 + store floor x 2 = 0.925 ms", above: true,
		},
		{
			name: "below the goal",
			res: observebench.Result{Floor: 2 * ms, StoreFloor: ms, Synced: true, P50: 3 * ms,
				Calls: []observebench.Call{{Kind: "tier-1 look-up", Count: 10, P50: ms / 2}}},
			want: "bound        tier-1 look-up p50 + store floor x 2 = 2.500 ms",
		},
		{
			name: "no tier-1 call",
			res:  observebench.Result{Floor: ms, StoreFloor: ms, Synced: true, P50: 3 * ms},
		},
		{
			name: "not synced",
			res: observebench.Result{Floor: ms, StoreFloor: ms, P50: 3 * ms,
				Calls: []observebench.Call{{Kind: "tier-1 look-up", Count: 10, P50: ms}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if _, err := tc.res.WriteTo(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if tc.want == "" {
				if strings.Contains(out, "bound ") {
					t.Errorf("report has a bound line:\n%s", out)
				}
				return
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("report lacks %q:\n%s", tc.want, out)
			}
			if got := strings.Contains(out, "(above the goal)"); got != tc.above {
				t.Errorf("says above the goal: %v, want %v:\n%s", got, tc.above, out)
			}
		})
	}
}
