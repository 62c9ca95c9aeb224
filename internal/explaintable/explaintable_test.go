package explaintable

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/server/native"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestWrite renders a demo answer (captured with `memrank explain --demo
// --json`) and compares it with the golden tables: every column (no width,
// explain --wide or a pipe) and fitted to 100 and 60 columns.
func TestWrite(t *testing.T) {
	resp := demoAnswer(t)
	tests := []struct {
		name, golden string
		width        int
	}{
		{"wide", "demo.golden", 0},
		{"100 columns", "demo-100.golden", 100},
		{"60 columns", "demo-60.golden", 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, resp, Options{TextKey: "text", Width: tt.width}); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("table (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteFits: at any width down to what the columns never left out
// need, no line is wider; the weight, the id and the text of every result
// stay, the columns left out are named, and fewer are left out as the
// width grows.
func TestWriteFits(t *testing.T) {
	resp := demoAnswer(t)
	prevLeft := 1 << 30
	for _, width := range []int{70, 80, 100, 120, 160, 200, 260, 400} {
		var b bytes.Buffer
		if err := Write(&b, resp, Options{TextKey: "text", Width: width}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("width %d: a line of %d:\n%s", width, n, l)
			}
		}
		for _, s := range []string{"#", "ID", "WEIGHT", "TEXT", "e9f63c27-b3a0-52ef-812a-fc38edc5ef3f", "0.6272", "Uses Neovim"} {
			if !strings.Contains(out, s) {
				t.Errorf("width %d: %q left out:\n%s", width, s, out)
			}
		}
		left := 0
		if m := regexp.MustCompile(`(?m)^(\d+) columns left out for the width \(`).FindStringSubmatch(out); m != nil {
			left, _ = strconv.Atoi(m[1])
		}
		if left > prevLeft {
			t.Errorf("width %d leaves out %d columns, more than a narrower one (%d)", width, left, prevLeft)
		}
		prevLeft = left
		if width >= 400 && left != 0 {
			t.Errorf("width %d leaves out %d columns", width, left)
		}
	}
}

func demoAnswer(t *testing.T) *native.RetrieveResponse {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	var resp native.RetrieveResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	return &resp
}

// TestWriteLines: what the table says of an answer asked as of a time, an
// empty answer, a memory returned by include_archived, a best match below
// the gate, the guard's other forms and a passed-through answer.
func TestWriteLines(t *testing.T) {
	const scored = `{"id":%s,"score":0.5,"base_score":0.6,"weight":0.5,"guard":%s,"confidence":0.45,"freshness":0.5,` +
		`"freshness_factor":0.8,"access_count":0,"access_boost":1,"render":false,"below_gate":%s,"tier":"dormant",` +
		`"stored_tier":%s,"bucket":"low","retrievable":%s,"protected":false,"folded_ids":[],"dedup":null,` +
		`"judge_consulted":false,"problems":[],"archived":%s,"payload":{"text":"Dana keeps bees"},` +
		`"explanation":{"unscored":false,"freshness_weight":0.7,"access_weight":0.02,"confidence_factor":1,"confidence":0.45}}`
	result := func(id, guard, belowGate, stored, retrievable, archived string) string {
		return fmt.Sprintf(scored, id, guard, belowGate, stored, retrievable, archived)
	}
	tests := []struct {
		name   string
		answer string
		want   []string // lines, or the start of lines
		absent []string
	}{
		{
			name: "as of a time, a best match below the gate, the stored tier",
			answer: `{"result":[` + result("7", `"relevant"`, "true", `"active"`, "true", `""`) + `],"status":"ok","time":0,` +
				`"reranked":true,"mode":"rerank","detection":"d","at":"2026-06-01T00:00:00Z",` +
				`"guard":{"applied":true,"relative":false,"best":0.6,"cutoff":0.57,"band":0.03,"floor":0.2,"relative_band":0.025,` +
				`"from":"default","relevant":1,"beyond":0,"folded":3,"focus":0.25},"dropped":[]}`,
			want: []string{
				"as of 2026-06-01T00:00:00Z: freshness and tiers then, memories first observed later left out, later supersessions not applied; access counts and confidence are today's",
				"relevance guard (default): relevant when the similarity is at least 0.5700 (the best, 0.6000, less 0.03; floor 0.20): 1 relevant, 0 beyond, 3 folded; focus 0.25; ordered by weight",
				"weight = base x fresh_f x boost x conf_f, where fresh_f = 1 - 0.70 x focus x (1 - f) and boost = 1 + 0.02 x r(access)",
				"1  7   relevant  0.5000  0.6000  0.800      1.000    1.000     0.500  0.450",
				"7: below the confidence gate, returned as the best match (nothing passing the gate was near it)",
			},
			absent: []string{"left out:", "out of answers"},
		},
		{
			name: "include_archived: an archived memory; the left-out reasons in order, glossed",
			answer: `{"result":[` + result(`"a1"`, `"below_band"`, "false", `"archived"`, "false", `"archived"`) + `],"status":"ok","time":0,` +
				`"reranked":true,"mode":"rerank","detection":"d",` +
				`"guard":{"applied":true,"relative":true,"best":0.9,"cutoff":0.8,"band":0,"floor":0,"relative_band":0.1,` +
				`"from":"collection","relevant":0,"beyond":1,"folded":0,"focus":1},` +
				`"dropped":[{"id":3,"reason":"folded","into":"a1","base_score":0.5},{"id":4,"reason":"new_reason","base_score":0.4},` +
				`{"id":5,"reason":"below_gate","base_score":0.4},{"id":6,"reason":"superseded","base_score":0.3},` +
				`{"id":8,"reason":"not_retrievable","base_score":0.3}]}`,
			want: []string{
				"relevance guard (collection): relevant when the score is at least 0.8000 (the best, 0.9000, less 0.10 of it): 0 relevant, 1 beyond, 0 folded; focus 1.00; ordered by weight",
				"1  a1  below_band  0.5000  0.6000  0.800      1.000    1.000     0.500  0.450  0.00  0  0.000  0.00  0.00          0.0    0       0       pass  no      dormant (stored archived)",
				"a1: out of answers (archived), returned because include_archived asked for it",
				"left out: 5 candidates",
				"  superseded (1, replaced by a correction or a contradiction): 6",
				"  not_retrievable (1, stored as not retrievable): 8",
				"  below_gate (1, below the confidence gate): 5",
				"  folded (1, duplicates of a result): 3 into a1",
				"  new_reason (1): 4",
			},
			absent: []string{"as of", "below the confidence gate, returned"},
		},
		{
			name: "an empty answer says why",
			answer: `{"result":[],"status":"ok","time":0,"reranked":true,"mode":"rerank","detection":"d",` +
				`"guard":{"applied":false,"relative":false,"best":0,"cutoff":0,"band":0,"floor":0,"relative_band":0,"from":"collection",` +
				`"relevant":0,"beyond":0,"folded":0,"focus":0},"dropped":[{"id":6,"reason":"superseded","base_score":0.3}],` +
				`"empty":"all 1 candidates were left out: 1 superseded"}`,
			want: []string{
				"relevance guard off (collection): every result counted as read; 0 folded; focus 0.00; ordered by weight",
				"no results: all 1 candidates were left out: 1 superseded",
				"  superseded (1, replaced by a correction or a contradiction): 6",
			},
			absent: []string{"weight = base"},
		},
		{
			name: "passed through",
			answer: `{"result":[{"id":1,"score":0.7,"base_score":0.7,"weight":0.7,"guard":null,"confidence":null,"freshness":null,` +
				`"freshness_factor":null,"access_count":null,"access_boost":null,"render":true,"below_gate":false,"tier":null,` +
				`"stored_tier":null,"bucket":null,"retrievable":true,"protected":false,"folded_ids":[],"dedup":null,` +
				`"judge_consulted":false,"problems":[]}],"status":"ok","time":0,"reranked":false,"pass_through":"not a memory collection",` +
				`"mode":"rerank","detection":"d","guard":null,"dropped":null}`,
			want: []string{
				"not re-ranked (not a memory collection): weights are Qdrant's scores",
				"1  1   -      0.7000  0.7000  -          -        -         -",
			},
			absent: []string{"relevance guard", "left out:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var resp native.RetrieveResponse
			if err := json.Unmarshal([]byte(tt.answer), &resp); err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := Write(&b, &resp, Options{TextKey: "text"}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(b.String(), "\n")
			for _, w := range tt.want {
				if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, w) }) {
					t.Errorf("no line starts with %q:\n%s", w, b.String())
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(b.String(), a) {
					t.Errorf("the table says %q:\n%s", a, b.String())
				}
			}
		})
	}
}

func TestPayloadText(t *testing.T) {
	tests := []struct {
		name, payload, key, want string
	}{
		{"default key", `{"text":"Dana uses Neovim"}`, "text", "Dana uses Neovim"},
		{"renamed key", `{"text":"not this","content":"Dana uses Neovim"}`, "content", "Dana uses Neovim"},
		{"key absent", `{"text":"Dana uses Neovim"}`, "content", "-"},
		{"not a string", `{"text":7}`, "text", "-"},
		{"no payload", ``, "text", "-"},
		{"not an object", `[1]`, "text", "-"},
		{"spaces folded", "{\"text\":\"  Dana\\n\\tuses   Neovim \"}", "text", "Dana uses Neovim"},
		{"cut to n runes", `{"text":"éééééééééééééééééé"}`, "text", "ééééééééééééééé…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := payloadText(json.RawMessage(tt.payload), tt.key, 16); got != tt.want {
				t.Errorf("payloadText(%s, %q) = %q, want %q", tt.payload, tt.key, got, tt.want)
			}
		})
	}
}
