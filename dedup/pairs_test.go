package dedup_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

// pair is one line of examples/pairs/pairs.jsonl.
type pair struct {
	A, B, Kind, Why, Split string
}

func loadPairSet(t testing.TB) []pair {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "examples", "pairs", "pairs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pair
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p pair
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("pairs.jsonl line %d: %v", len(out)+1, err)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// pairScore is how the write path decided the pairs of one kind.
type pairScore struct{ right, total int }

func (s pairScore) rate() float64 { return float64(s.right) / float64(s.total) }

// decidePairs observes each pair's a, then its b in another session two
// hours later, on a collection of its own, with no judge, and counts the
// decisions that are right for the pair's kind: a paraphrase is folded into
// a's memory, anything else is stored as a memory of its own.
func decidePairs(t testing.TB, emb embed.Embedder, cfg dedup.Config, pairs []pair) (map[string]pairScore, []string) {
	t.Helper()
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: t0}
	cfg.Codec, cfg.Embedder, cfg.Now, cfg.RequireSurfaceChange = codec, emb, clk.Now, true
	eng, err := dedup.New(newClient(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	scores := map[string]pairScore{}
	var wrong []string
	for i, p := range pairs {
		coll := fmt.Sprintf("pair%d", i)
		clk.set(t0)
		first, err := eng.Observe(ctx, dedup.Observation{Collection: coll, Text: p.A, Source: "direct", SessionID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		clk.set(t0.Add(2 * time.Hour))
		second, err := eng.Observe(ctx, dedup.Observation{Collection: coll, Text: p.B, Source: "direct", SessionID: "s2"})
		if err != nil {
			t.Fatal(err)
		}
		merged := second.MemoryID == first.MemoryID
		s := scores[p.Kind]
		s.total++
		if merged == (p.Kind == "paraphrase") {
			s.right++
		} else {
			wrong = append(wrong, fmt.Sprintf("%s/%s: %q / %q: %s", p.Kind, p.Why, p.A, p.B, second.Decision))
		}
		scores[p.Kind] = s
	}
	return scores, wrong
}

// TestSemanticPairDecisions is the semantic embedder's acceptance on the
// shipped pair set, with its calibrated bands and no judge, on the held-out
// split: a negated pair never merges, related, unrelated and contradicting
// pairs are kept apart, and paraphrases merge far more often than with the
// lexical embedder. The goal is 90% right for every kind; held out, the
// semantic embedder reaches 97% (related), 89% (contradictions: values of
// one kind swapped in lower case, "aisle" / "window") and 73% (paraphrases),
// so the floors below are what it reaches, not the goal (docs/embedders.md).
func TestSemanticPairDecisions(t *testing.T) {
	// The fold rules of "Who said what" may not cost a pair: these are the
	// rates before them (paraphrases 37/55 merged).
	pairFloors := map[string]float64{"paraphrase": 0.67, "related": 0.97, "contradiction": 1, "unrelated": 1}
	if testing.Short() {
		t.Skip("observes 848 pairs")
	}
	sem, err := embed.NewSemantic(384)
	if err != nil {
		t.Fatal(err)
	}
	lex, err := embed.NewLocal(384)
	if err != nil {
		t.Fatal(err)
	}
	var held []pair
	for _, p := range loadPairSet(t) {
		if p.Split == "test" {
			held = append(held, p)
		}
	}
	scores, wrong := decidePairs(t, sem, dedup.Config{}, held)
	lexScores, _ := decidePairs(t, lex, dedup.Config{}, held)
	for _, kind := range []string{"paraphrase", "related", "contradiction", "unrelated"} {
		s, l := scores[kind], lexScores[kind]
		t.Logf("%-13s semantic %3d/%3d (%.0f%%), lexical %3d/%3d (%.0f%%)", kind, s.right, s.total, 100*s.rate(), l.right, l.total, 100*l.rate())
		if s.total == 0 {
			t.Fatalf("no %s pairs in the held-out split", kind)
		}
		if s.rate() < pairFloors[kind] {
			t.Errorf("%s: %.1f%% decided right, want at least %.0f%% (the goal is 90%%)", kind, 100*s.rate(), 100*pairFloors[kind])
		}
	}
	if p, l := scores["paraphrase"].rate(), lexScores["paraphrase"].rate(); p < l+0.4 {
		t.Errorf("paraphrases merged: semantic %.0f%%, lexical %.0f%%: want the semantic embedder well ahead", 100*p, 100*l)
	}
	for _, w := range wrong {
		if strings.HasPrefix(w, "contradiction/negation:") {
			t.Errorf("a negated pair merged: %s", w)
		}
		if testing.Verbose() {
			t.Log("wrong:", w)
		}
	}
}
