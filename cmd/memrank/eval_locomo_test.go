package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// locomoMini is a small hand-written file in LoCoMo's format (LoCoMo's own
// data is never read by the tests).
var locomoMini = filepath.Join("..", "..", "internal", "eval", "locomo", "testdata", "mini.json")

// locomoJSON is the part of eval --locomo --json the tests read.
type locomoJSON struct {
	File      string `json:"file"`
	At        string `json:"at"`
	RealDates bool   `json:"real_dates"`
	Embedder  struct {
		Model      string `json:"model"`
		Dimensions int    `json:"dimensions"`
	} `json:"embedder"`
	Limit     int `json:"limit"`
	Turns     int `json:"turns"`
	Questions int `json:"questions"`
	Skipped   struct {
		Adversarial int `json:"adversarial"`
		NoEvidence  int `json:"no_evidence"`
	} `json:"skipped"`
	Dropped       []map[string]any `json:"dropped_evidence"`
	Conversations []struct {
		SampleID    string   `json:"sample_id"`
		Dev         bool     `json:"dev"`
		Collections []string `json:"collections"`
		Turns       int      `json:"turns"`
		Questions   int      `json:"questions"`
		LastSession string   `json:"last_session"`
	} `json:"conversations"`
	Systems []struct {
		Name string `json:"name"`
	} `json:"systems"`
	Rows []struct {
		Group     string   `json:"group"`
		Subset    string   `json:"subset"`
		System    string   `json:"system"`
		Questions int      `json:"questions"`
		R5        *float64 `json:"r_at_5"`
		R10       *float64 `json:"r_at_10"`
		R25       *float64 `json:"r_at_25"`
		Hit10     *float64 `json:"hit_at_10"`
		MRR       *float64 `json:"mrr"`
		Empty     int      `json:"empty"`
		VsRaw     *float64 `json:"r_at_10_vs_raw"`
	} `json:"rows"`
	PerQuestion []struct {
		SampleID string   `json:"sample_id"`
		Question int      `json:"question"`
		Category int      `json:"category"`
		Recent   bool     `json:"recent"`
		Evidence []string `json:"evidence"`
		Systems  map[string]struct {
			R10      float64    `json:"r_at_10"`
			FirstHit *int       `json:"first_hit"`
			Returned int        `json:"returned"`
			Top10    [][]string `json:"top_10_turn_ids"`
		} `json:"systems"`
	} `json:"per_question"`
	Notes     []string `json:"notes"`
	Mode      string   `json:"mode"`
	WritePath *struct {
		Speaker bool   `json:"speaker"`
		Copy    string `json:"copy"`
		Groups  []struct {
			Group                string         `json:"group"`
			Observations         int            `json:"observations"`
			Decisions            map[string]int `json:"decisions"`
			DedupTiers           map[string]int `json:"dedup_tiers"`
			Memories             int            `json:"memories"`
			Superseded           int            `json:"superseded"`
			Folds                int            `json:"folds"`
			CrossSpeakerFolds    int            `json:"cross_speaker_folds"`
			EvidenceFolds        int            `json:"evidence_folds"`
			CrossSpeakerExamples []struct {
				SampleID string `json:"sample_id"`
				Text     string `json:"text"`
				Turns    []struct {
					TurnID  string `json:"turn_id"`
					Speaker string `json:"speaker"`
					Text    string `json:"text"`
				} `json:"turns"`
			} `json:"cross_speaker_examples"`
		} `json:"groups"`
	} `json:"write_path"`
}

func runLocomo(t *testing.T, args ...string) locomoJSON {
	t.Helper()
	code, out, errOut := runCLI(t, append([]string{"eval", "--locomo", locomoMini, "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if errOut != "" {
		t.Errorf("stderr: %s", errOut)
	}
	var all map[string]any
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatalf("eval --locomo --json is not JSON: %v\n%s", err, out)
	}
	var r locomoJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("eval --locomo --json: %v\n%s", err, out)
	}
	return r
}

// TestEvalLocomoJSON runs the three systems on the embedded store, in
// process, over the hand-written file.
func TestEvalLocomoJSON(t *testing.T) {
	r := runLocomo(t)
	if r.File != locomoMini || r.At != "2026-12-01T00:00:00Z" || r.RealDates || r.Embedder.Model != "memrank-local-sem-v1:384" ||
		r.Limit != 25 || r.Turns != 14 || r.Questions != 7 || r.Skipped.Adversarial != 1 || r.Skipped.NoEvidence != 2 || len(r.Dropped) != 2 ||
		r.Mode != "direct" || r.WritePath != nil {
		t.Errorf("header %+v", r)
	}
	if len(r.Conversations) != 2 || r.Conversations[0].SampleID != "conv-26" || !r.Conversations[0].Dev || r.Conversations[1].Dev ||
		r.Conversations[1].LastSession != "2026-11-30T00:00:00Z" ||
		!cmp.Equal(r.Conversations[0].Collections, []string{"locomo_conv_26_retrieve", "locomo_conv_26_query"}) {
		t.Errorf("conversations %+v", r.Conversations)
	}
	var systems []string
	for _, s := range r.Systems {
		systems = append(systems, s.Name)
	}
	if diff := cmp.Diff([]string{"raw", "retrieve", "query"}, systems); diff != "" {
		t.Errorf("systems (-want +got):\n%s", diff)
	}
	if len(r.Rows) != 3*6*3 {
		t.Fatalf("%d rows", len(r.Rows))
	}
	for _, row := range r.Rows {
		if row.Questions == 0 {
			if row.R10 != nil || row.MRR != nil {
				t.Errorf("row %+v without questions has numbers", row)
			}
			continue
		}
		for _, v := range []*float64{row.R5, row.R10, row.R25, row.Hit10, row.MRR} {
			if v == nil || *v < 0 || *v > 1 || math.IsNaN(*v) {
				t.Errorf("row %s/%s/%s: a number outside [0, 1]: %+v", row.Group, row.Subset, row.System, row)
			}
		}
		if *row.R5 > *row.R10 || *row.R10 > *row.R25 {
			t.Errorf("row %s/%s/%s: R@5 > R@10 > R@25 broken: %+v", row.Group, row.Subset, row.System, row)
		}
		if (row.System == "raw") != (row.VsRaw == nil) {
			t.Errorf("row %s/%s/%s: R@10 vs raw %v", row.Group, row.Subset, row.System, row.VsRaw)
		}
		// Raw's order is the store's: every conversation has at most 9
		// turns, so 25 results hold them all.
		if row.System == "raw" && (*row.R10 != 1 || *row.R25 != 1 || *row.Hit10 != 1 || *row.MRR <= 0 || row.Empty != 0) {
			t.Errorf("raw row %s/%s: %+v", row.Group, row.Subset, row)
		}
		if row.Group == "all" && row.Subset == "all" && row.Questions != 7 || row.Group == "dev" && row.Subset == "all" && row.Questions != 4 {
			t.Errorf("row %s/%s/%s: %d questions", row.Group, row.Subset, row.System, row.Questions)
		}
	}
	if len(r.PerQuestion) != 7 {
		t.Fatalf("%d questions answered", len(r.PerQuestion))
	}
	for _, q := range r.PerQuestion {
		raw, ret, qry := q.Systems["raw"], q.Systems["retrieve"], q.Systems["query"]
		if raw.Returned != map[string]int{"conv-26": 5, "conv-44": 9}[q.SampleID] || raw.FirstHit == nil || len(raw.Top10) != raw.Returned {
			t.Errorf("%s qa[%d] raw: %+v", q.SampleID, q.Question, raw)
		}
		// Both memrank systems are the same ranker, over copies with the
		// same history of accesses.
		if !cmp.Equal(ret.Top10, qry.Top10) {
			t.Errorf("%s qa[%d]: /v1/retrieve %v, qdrant query %v", q.SampleID, q.Question, ret.Top10, qry.Top10)
		}
	}
	if q := r.PerQuestion[1]; q.SampleID != "conv-26" || q.Question != 1 || q.Category != 1 || !q.Recent ||
		!cmp.Equal(q.Evidence, []string{"D1:3", "D2:2"}) {
		t.Errorf("conv-26 qa[1]: %+v", q)
	}
}

// TestEvalLocomoWritePath observes every turn through the write path, in
// process, with and without the speaker: whatever the write path's fold
// rules, the numbers add up, a speaker's restated evidence turn (D2:2
// after D1:3) and paraphrase fold, and both copies answer alike.
func TestEvalLocomoWritePath(t *testing.T) {
	for _, speaker := range []bool{false, true} {
		t.Run(fmt.Sprintf("speaker %v", speaker), func(t *testing.T) {
			args := []string{"--write-path"}
			if speaker {
				args = append(args, "--speaker")
			}
			r := runLocomo(t, args...)
			if r.Mode != "write_path" || r.WritePath == nil || r.WritePath.Speaker != speaker || len(r.WritePath.Groups) != 3 ||
				!strings.Contains(r.WritePath.Copy, "copied to the _query copy") || r.Turns != 14 || r.Questions != 7 {
				t.Fatalf("header %+v", r)
			}
			if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "judge (tier 3) is off") }) {
				t.Errorf("notes %q", r.Notes)
			}
			for _, g := range r.WritePath.Groups {
				decided := 0
				for _, n := range g.Decisions {
					decided += n
				}
				want := map[string]int{"all": 14, "dev": 5, "held_out": 9}[g.Group]
				if g.Observations != want || decided != want || g.Superseded == 0 && g.Memories+g.Folds != want ||
					g.CrossSpeakerFolds > g.Folds || len(g.CrossSpeakerExamples) != g.CrossSpeakerFolds {
					t.Errorf("group %s: %+v", g.Group, g)
				}
				for _, ex := range g.CrossSpeakerExamples {
					speakers := map[string]bool{}
					for _, turn := range ex.Turns {
						speakers[turn.Speaker] = true
					}
					if len(speakers) < 2 || ex.Text == "" {
						t.Errorf("group %s: example %+v", g.Group, ex)
					}
				}
			}
			if all := r.WritePath.Groups[0]; all.Folds < 2 || all.EvidenceFolds != 1 || all.Decisions["inserted"]+all.Decisions["contradiction"] != all.Memories+all.Superseded {
				t.Errorf("all: %+v", all)
			}
			if dev := r.WritePath.Groups[1]; dev.Folds != 0 || dev.Memories != 5 {
				t.Errorf("dev: %+v", dev)
			}
			for _, q := range r.PerQuestion {
				ret, qry := q.Systems["retrieve"], q.Systems["query"]
				if !cmp.Equal(ret.Top10, qry.Top10) {
					t.Errorf("%s qa[%d]: /v1/retrieve %v, qdrant query %v", q.SampleID, q.Question, ret.Top10, qry.Top10)
				}
				for _, ids := range ret.Top10 {
					for _, id := range ids {
						if !strings.HasPrefix(id, "D") {
							t.Errorf("%s qa[%d]: turn id %q", q.SampleID, q.Question, id)
						}
					}
				}
			}
			// conv-44 qa[2]: its evidence turn D2:2 is in D1:3's memory.
			if q := r.PerQuestion[6]; q.Systems["raw"].R10 != 1 ||
				!slices.ContainsFunc(q.Systems["raw"].Top10, func(ids []string) bool { return cmp.Equal(ids, []string{"D1:3", "D2:2"}) }) {
				t.Errorf("conv-44 qa[2]: %+v", q.Systems["raw"])
			}
		})
	}
}

func TestEvalLocomoWritePathTable(t *testing.T) {
	code, out, errOut := runCLI(t, "eval", "--locomo", locomoMini, "-q", "--write-path", "--speaker", "--conversations", "conv-44")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"memories: each turn observed through memrank's write path (POST /v1/observe, in conversation order, with its speaker)",
		"\nheld out (1: conv-44)\nwrite path: 9 observations (inserted ",
		"note: the write path's judge (tier 3) is off",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output without %q:\n%s", want, out)
		}
	}
}

func TestEvalLocomoRealDates(t *testing.T) {
	r := runLocomo(t, "--real-dates", "--conversations", "conv-44", "--at", "2026-06-01")
	if !r.RealDates || r.At != "2026-06-01T00:00:00Z" || len(r.Conversations) != 1 || r.Conversations[0].LastSession != "2022-04-23T11:04:00Z" ||
		r.Questions != 3 {
		t.Errorf("header %+v", r)
	}
	for _, row := range r.Rows {
		if row.Subset == "recent" && row.Questions != 0 || row.Group == "dev" && row.Questions != 0 {
			t.Errorf("row %+v", row)
		}
	}
}

func TestEvalLocomoTable(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "eval", "--locomo", locomoMini, "-q", "--data", dir, "--conversations", "conv-26")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"LoCoMo " + locomoMini + ": 1 conversation, 5 turns, 4 questions (categories 1-4 with evidence)",
		"at 2026-12-01T00:00:00Z, dates shifted (each conversation's latest session at 2026-11-30T00:00:00Z); embedder memrank-local-sem-v1:384; limit 25\n",
		"\nall 1 conversation\nsubset ", "\ndev (1: conv-26)\n", "/v1/retrieve", "qdrant query", "R@10 vs raw",
		"note: asked in process, on the embedded store in " + dir,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output without %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "held out") {
		t.Errorf("a group without conversations is printed:\n%s", out)
	}
	// --data keeps the store; a second run refuses its collections.
	code, _, errOut = runCLI(t, "eval", "--locomo", locomoMini, "-q", "--data", dir, "--conversations", "conv-26")
	if code != exitFailure || !strings.Contains(errOut, `collection "locomo_conv_26_retrieve" exists already`) {
		t.Errorf("second run: exit %d, %s", code, errOut)
	}
}

func TestEvalLocomoUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a set too", []string{"--locomo", locomoMini, smallSet}, "--locomo FILE takes no SET (got " + smallSet + ")"},
		{"set flags", []string{"--locomo", locomoMini, "--split", "test", "--fit", "--url", "http://x"}, "--split, --fit, --url: not with --locomo"},
		{"no file", []string{"--locomo", ""}, "--locomo needs a FILE"},
		{"missing file", []string{"--locomo", filepath.Join(t.TempDir(), "none.json")}, "no such file"},
		{"bad at", []string{"--locomo", locomoMini, "--at", "tomorrow"}, `--at "tomorrow" is neither RFC 3339`},
		{"unknown conversation", []string{"--locomo", locomoMini, "--conversations", "conv-26,conv-99"}, `no conversation "conv-99" in the file`},
		{"at without locomo", []string{"--at", "2026-01-01", smallSet}, "--at goes with --locomo"},
		{"real dates without locomo", []string{"--real-dates", smallSet}, "--real-dates goes with --locomo"},
		{"write path without locomo", []string{"--write-path", smallSet}, "--write-path goes with --locomo"},
		{"speaker without the write path", []string{"--locomo", locomoMini, "--speaker"}, "--speaker goes with --write-path"},
		{"no set", nil, "accepts 1 arg(s), received 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, append([]string{"eval"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, exitUsage, tc.want)
			}
		})
	}
}
