package scoretable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
)

var now = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

func testCodec(t *testing.T) *memory.Codec {
	t.Helper()
	c, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mem is one input line: a memory with the fields the tests vary.
func mem(id string, confidence float64, extra string) string {
	return fmt.Sprintf(`{"id": %q, "text": "t %s", "source": "direct", "memory_type": "fact", "extractor_model": "gpt-4o", "confidence": %v, "created_at": "2026-11-20T00:00:00Z"%s}`,
		id, id, confidence, extra)
}

func TestRead(t *testing.T) {
	for _, tt := range []struct {
		name    string
		in      string
		maxLine int
		ids     []string // the items' labels, in order
		lines   []int    // the items' line numbers
		bad     []string // "N: reason"
	}{
		{"empty", "", 100, nil, nil, nil},
		{"blank lines skipped", "\n  \n" + `{"id": "a"}` + "\n\n", 100, []string{"a"}, []int{3}, nil},
		{"numeric and missing ids", `{"id": 7}` + "\n" + `{"text": "x"}`, 100, []string{"7", ""}, []int{1, 2}, nil},
		{"not objects", `[1]` + "\n" + `{"id": "b"}` + "\n" + `{"id": "x"} {}`, 100, []string{"b"}, []int{2},
			[]string{"1: not a JSON object: got an array", "3: not a JSON object: trailing characters at line 1 column 13"}},
		{"too long, then read on", strings.Repeat("x", 40) + "\n" + `{"id": "c"}`, 20, []string{"c"}, []int{2},
			[]string{"1: longer than 20 bytes, skipped"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var bad []string
			items, err := read(strings.NewReader(tt.in), testCodec(t), tt.maxLine, func(line int, err error) {
				bad = append(bad, fmt.Sprintf("%d: %v", line, err))
			})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			var lines []int
			for _, it := range items {
				ids, lines = append(ids, it.id), append(lines, it.line)
			}
			if diff := cmp.Diff(tt.ids, ids); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.lines, lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.bad, bad); diff != "" {
				t.Errorf("bad lines (-want +got):\n%s", diff)
			}
		})
	}
}

// verdict is what the tests compare of a Result.
type verdict struct {
	ID       string
	Rank     int
	Decision string
	Reason   string
	Render   bool
}

func TestScore(t *testing.T) {
	for _, tt := range []struct {
		name  string
		lines []string
		limit int
		want  []verdict // in output order
	}{
		{
			// The rest come by weight, then by line: confidence does not
			// weigh at the default confidence weight, so here by line.
			name:  "returned best first, the limit cuts, the gate drops",
			lines: []string{mem("mid", 0.7, ""), mem("low", 0.3, ""), mem("best", 0.9, ""), mem("third", 0.6, "")},
			limit: 2,
			want: []verdict{
				{"best", 1, "returned", "", true}, {"mid", 2, "returned", "", true},
				{"low", 0, "gated", "", false}, {"third", 0, "cut", "", false},
			},
		},
		{
			name:  "superseded memories are excluded",
			lines: []string{mem("old", 0.9, `, "superseded_by": "new"`), mem("new", 0.8, "")},
			want:  []verdict{{"new", 1, "returned", "", true}, {"old", 0, "excluded", "superseded by new", false}},
		},
		{
			name:  "nothing passes the gate: the best come back below it",
			lines: []string{mem("a", 0.35, ""), mem("b", 0.45, "")},
			limit: 1,
			want:  []verdict{{"b", 1, "below_gate", "", true}, {"a", 0, "cut", "", false}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			codec := testCodec(t)
			items, err := Read(strings.NewReader(strings.Join(tt.lines, "\n")), codec, func(line int, err error) {
				t.Errorf("line %d: %v", line, err)
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []verdict
			for _, r := range Score(codec, items, 1, 1, now, tt.limit) {
				got = append(got, verdict{r.item.id, r.rank, r.decision, r.reason, r.expl.Render})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	codec := testCodec(t)
	in := mem("stored", 0.9, "") + "\n" + `{"id": "wiki", "text": "a page"}` + "\n" +
		strings.Replace(mem("odd", 0.9, ""), "0.9", `"high"`, 1)
	items, err := Read(strings.NewReader(in), codec, func(line int, err error) { t.Errorf("line %d: %v", line, err) })
	if err != nil {
		t.Fatal(err)
	}
	res := Score(codec, items, 1, 1, now, 0)

	var table bytes.Buffer
	if err := WriteTable(&table, res); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(table.String()), "\n")
	if len(rows) != 4 || !strings.HasPrefix(rows[0], "RANK  LINE  ID") {
		t.Fatalf("table:\n%s", table.String())
	}
	for _, want := range []string{"stored", "wiki", "odd"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}

	var out bytes.Buffer
	if err := WriteJSON(&out, res); err != nil {
		t.Fatal(err)
	}
	byID := map[string]jsonResult{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var j jsonResult
		if err := json.Unmarshal([]byte(line), &j); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		byID[j.ID] = j
	}
	for _, tt := range []struct {
		id       string
		unscored bool
		from     string
		problems int
	}{
		{"stored", false, "stored", 0},
		{"wiki", true, "none", 0},
		{"odd", false, "computed", 1},
	} {
		j, ok := byID[tt.id]
		if !ok {
			t.Errorf("%s: missing from %s", tt.id, out.String())
			continue
		}
		if j.Unscored != tt.unscored || j.ConfidenceFrom != tt.from || len(j.Problems) != tt.problems {
			t.Errorf("%s: unscored %v, confidence from %q, problems %q", tt.id, j.Unscored, j.ConfidenceFrom, j.Problems)
		}
		if (j.Confidence == nil) != tt.unscored || (j.Components == nil) != tt.unscored {
			t.Errorf("%s: confidence %v, components %v: want both only when scored", tt.id, j.Confidence, j.Components)
		}
	}
}
