package importer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/dedup"
)

// fakeObserver records the observations it is offered and answers with
// answer (nil: inserted).
type fakeObserver struct {
	mu     sync.Mutex
	got    []dedup.Observation
	answer func(n int, obs dedup.Observation) (dedup.Outcome, error)
}

func (f *fakeObserver) Observe(ctx context.Context, obs dedup.Observation) (dedup.Outcome, error) {
	f.mu.Lock()
	f.got = append(f.got, obs)
	n := len(f.got)
	f.mu.Unlock()
	if f.answer == nil {
		return dedup.Outcome{Decision: dedup.DecisionInserted, MemoryID: fmt.Sprint("m", n)}, nil
	}
	return f.answer(n, obs)
}

func (f *fakeObserver) texts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.got))
	for i, o := range f.got {
		out[i] = o.Text
	}
	return out
}

// decideByText answers each observation by its text.
func decideByText(errs map[string]error, decisions map[string]dedup.Decision) func(int, dedup.Observation) (dedup.Outcome, error) {
	return func(n int, obs dedup.Observation) (dedup.Outcome, error) {
		if err := errs[obs.Text]; err != nil {
			return dedup.Outcome{}, err
		}
		d := decisions[obs.Text]
		if d == "" {
			d = dedup.DecisionInserted
		}
		return dedup.Outcome{Decision: d, MemoryID: fmt.Sprint(n)}, nil
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "obs.jsonl")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readState(t *testing.T, path string) State {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("state file: %v: %s", err, b)
	}
	return st
}

// runFile imports path from start with c (Path and StatePath filled in),
// and returns the summary, what was reported and the error.
func runFile(t *testing.T, c Config, path string, start State) (Summary, string, error) {
	t.Helper()
	var errs bytes.Buffer
	c.Path, c.Errors = path, &errs
	if c.StatePath == "" {
		c.StatePath = path + ".progress"
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := New(c).Run(context.Background(), f, start)
	return sum, errs.String(), err
}

const mixedJSONL = `{"collection":"c","text":"one"}

{"text":"two"}
{"collection":"c","text":"three","memry_type":"x"}
not json
{"collection":"c","text":"four"}` + "\r\n" + `   ` + "\t" + `
{"collection":"c","text":"five","corrects":"9"}
{"collection":"c","text":"six"}`

// TestRun: lines are offered in order; blank lines are skipped; bad lines
// and refused observations are reported and skipped; the summary counts
// the decisions and the state file records the last line.
func TestRun(t *testing.T) {
	path := writeTemp(t, mixedJSONL)
	fo := &fakeObserver{answer: decideByText(
		map[string]error{
			"four": fmt.Errorf("dedup: %w", &dedup.InputError{Field: "memory_type", Reason: `unknown type "x"`}),
			"five": fmt.Errorf("dedup: memory 9: %w", dedup.ErrNotFound),
		},
		map[string]dedup.Decision{"two": dedup.DecisionRestatement, "six": dedup.DecisionRejected},
	)}
	sum, reported, err := runFile(t, Config{Observer: fo, Collection: "dflt"}, path, State{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"one", "two", "four", "five", "six"}, fo.texts()); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
	if fo.got[0].Collection != "c" || fo.got[1].Collection != "dflt" {
		t.Errorf("collections %q %q: Collection fills only a missing one", fo.got[0].Collection, fo.got[1].Collection)
	}
	wantErr := []string{
		path + `:4: memry_type: unknown field (known: collection, text,`,
		path + `:5: body: invalid JSON: expected ident at line 1 column 2`,
		path + `:6: dedup: memory_type: unknown type "x"`,
		path + `:8: dedup: memory 9: dedup: not found`,
	}
	lines := strings.Split(strings.TrimSpace(reported), "\n")
	if len(lines) != len(wantErr) {
		t.Fatalf("reported:\n%s", reported)
	}
	for i, w := range wantErr {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("reported line %d: %q, want prefix %q", i+1, lines[i], w)
		}
	}
	want := Summary{File: path, LastLine: 9, Lines: 9, Applied: 3, Skipped: 2, Failed: 4,
		Decisions: map[string]int{"inserted": 1, "restatement": 1, "rejected": 1}, State: path + ".progress"}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	st := readState(t, path+".progress")
	if st.Line != 9 || st.Offset != int64(len(mixedJSONL)) {
		t.Errorf("state %+v, want line 9 at byte %d", st, len(mixedJSONL))
	}
}

// TestRunStopsAndResumes: a failing write path stops the import with the
// lines before it acknowledged; a run from the state file goes on there.
func TestRunStopsAndResumes(t *testing.T) {
	var content strings.Builder
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&content, `{"collection":"c","text":"line %d","observation_id":"o%d"}`+"\n", i, i)
	}
	path := writeTemp(t, content.String())
	down := errors.New("rpc error: code = Unavailable desc = connection refused")
	fo := &fakeObserver{answer: decideByText(map[string]error{"line 4": down}, nil)}
	sum, _, err := runFile(t, Config{Observer: fo}, path, State{})
	var se *StopError
	if !errors.As(err, &se) || se.Line != 4 || !errors.Is(err, down) {
		t.Fatalf("error %v, want a StopError at line 4", err)
	}
	if !sum.Stopped || sum.LastLine != 3 || sum.Lines != 4 || sum.Applied != 3 {
		t.Errorf("summary %+v", sum)
	}
	firstThree := len(strings.Join(strings.SplitAfter(content.String(), "\n")[:3], ""))
	st, err := ReadState(path+".progress", int64(content.Len()))
	if err != nil || st.Line != 3 || st.Offset != int64(firstThree) {
		t.Fatalf("state %+v (%v), want line 3 at byte %d", st, err, firstThree)
	}

	// The cause is fixed: from the state, lines 4 to 6 only.
	fo2 := &fakeObserver{}
	sum, _, err = runFile(t, Config{Observer: fo2}, path, st)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"line 4", "line 5", "line 6"}, fo2.texts()); diff != "" {
		t.Errorf("resumed (-want +got):\n%s", diff)
	}
	if sum.ResumedAfter != 3 || sum.LastLine != 6 || sum.Lines != 3 {
		t.Errorf("summary %+v", sum)
	}

	// Lines appended later are all a further resume offers.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `{"collection":"c","text":"line 7"}`)
	f.Close()
	fo3 := &fakeObserver{}
	if _, _, err := runFile(t, Config{Observer: fo3}, path, readState(t, path+".progress")); err != nil || !cmp.Equal(fo3.texts(), []string{"line 7"}) {
		t.Errorf("observed %v: %v", fo3.texts(), err)
	}

	// Lines with an observation_id seen before are replays, counted apart.
	fo4 := &fakeObserver{answer: func(n int, obs dedup.Observation) (dedup.Outcome, error) {
		return dedup.Outcome{Decision: dedup.DecisionInserted, Replayed: obs.ObservationID != ""}, nil
	}}
	sum, _, err = runFile(t, Config{Observer: fo4}, path, State{})
	if err != nil || sum.Replayed != 6 || !cmp.Equal(sum.Decisions, map[string]int{"inserted": 1}) {
		t.Errorf("summary %+v: %v", sum, err)
	}
}

// TestRunCheck: Check validates without a write path and saves nothing.
func TestRunCheck(t *testing.T) {
	path := writeTemp(t, mixedJSONL)
	sum, reported, err := runFile(t, Config{Check: true}, path, State{})
	if err != nil {
		t.Fatal(err)
	}
	// Without Collection, line 3 has none.
	for _, s := range []string{path + ":3: collection: required (in the line, or --collection)", path + ":4: memry_type: unknown field", path + ":5: body: invalid JSON"} {
		if !strings.Contains(reported, s) {
			t.Errorf("reported lacks %q:\n%s", s, reported)
		}
	}
	want := Summary{File: path, LastLine: 9, Lines: 9, Applied: 4, Skipped: 2, Failed: 3, Decisions: map[string]int{}, Check: true}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(path + ".progress"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Check wrote a state file: %v", err)
	}
}

// TestRunRules: a line the write path's rules refuse is reported with the
// rule's text and never offered, whether the import writes or checks.
func TestRunRules(t *testing.T) {
	path := writeTemp(t, `{"collection":"c","text":"?!"}
{"collection":"c","text":"x","grounding":"grounded"}
{"collection":"c","text":"x","entities":["Dana"," "]}
{"collection":"`+strings.Repeat("c", 256)+`","text":"x"}
{"collection":"c","text":"fine"}`)
	wantErr := []string{
		path + ":1: text: has no letters or digits",
		path + `:2: grounding: want one of supported, partial, unknown, not_supported, got "grounded"`,
		path + ":3: entities[1]: must not be blank",
		path + ":4: collection: at most 255 bytes, got 256",
	}
	for _, check := range []bool{false, true} {
		fo := &fakeObserver{}
		c := Config{Check: check}
		if !check {
			c.Observer = fo
		}
		sum, reported, err := runFile(t, c, path, State{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantErr, strings.Split(strings.TrimSpace(reported), "\n")); diff != "" {
			t.Errorf("check %v: reported (-want +got):\n%s", check, diff)
		}
		if sum.Applied != 1 || sum.Failed != 4 {
			t.Errorf("check %v: summary %+v", check, sum)
		}
		if !check && !cmp.Equal(fo.texts(), []string{"fine"}) {
			t.Errorf("offered %q, want only the valid line", fo.texts())
		}
	}
}

// fakeProgress records the bar's positions.
type fakeProgress struct {
	at     []int64
	clears int
}

func (p *fakeProgress) Update(n int64, _ int) error { p.at = append(p.at, n); return nil }
func (p *fakeProgress) Clear() error                { p.clears++; return nil }

// TestRunStateUpdates: the state file follows the acknowledged lines,
// every SaveEvery lines or SaveInterval, whichever comes first.
func TestRunStateUpdates(t *testing.T) {
	var content strings.Builder
	for i := 1; i <= 7; i++ {
		fmt.Fprintf(&content, `{"collection":"c","text":"t%d"}`+"\n", i)
	}
	content.WriteString("bad line\n")
	for _, tt := range []struct {
		name      string
		every     int
		interval  time.Duration
		clockStep time.Duration // the clock advances this much per observation
	}{
		{"every 2 lines", 2, time.Hour, 0},
		{"every second", 1000, time.Second, 600 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "obs.jsonl")
			if err := os.WriteFile(path, []byte(content.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			statePath := filepath.Join(dir, "state")
			clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var seen []int // the state's line when each line is offered
			fo := &fakeObserver{answer: func(n int, obs dedup.Observation) (dedup.Outcome, error) {
				clock = clock.Add(tt.clockStep)
				line := 0
				if b, err := os.ReadFile(statePath); err == nil {
					var st State
					if err := json.Unmarshal(b, &st); err != nil {
						t.Errorf("state file mid-import: %v", err)
					}
					line = st.Line
				}
				seen = append(seen, line)
				return dedup.Outcome{Decision: dedup.DecisionInserted}, nil
			}}
			bar := &fakeProgress{}
			sum, reported, err := runFile(t, Config{Observer: fo, StatePath: statePath, Progress: bar,
				SaveEvery: tt.every, SaveInterval: tt.interval, MaxLine: 1 << 20, Now: func() time.Time { return clock }}, path, State{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]int{0, 0, 2, 2, 4, 4, 6}, seen); diff != "" {
				t.Errorf("state line when each line was offered (-want +got):\n%s", diff)
			}
			if st := readState(t, statePath); st.Line != 8 || st.Offset != int64(content.Len()) {
				t.Errorf("final state %+v", st)
			}
			if sum.Applied != 7 || sum.Failed != 1 || !strings.HasPrefix(reported, path+":8: body: invalid JSON") {
				t.Errorf("summary %+v, reported %s", sum, reported)
			}
			if len(bar.at) != 9 || bar.at[0] != 0 || bar.at[8] != int64(content.Len()) || bar.clears != 1 {
				t.Errorf("progress %v, %d clears", bar.at, bar.clears)
			}
			matches, _ := filepath.Glob(filepath.Join(dir, "state.tmp*"))
			if len(matches) != 0 {
				t.Errorf("temporary state files left: %v", matches)
			}
		})
	}
}

func TestRunLongLines(t *testing.T) {
	// A line of about 1.3 MiB: a 65536-dimension vector (bufio.Scanner's
	// default would stop at 64 KiB).
	vec := make([]string, 65536)
	for i := range vec {
		vec[i] = fmt.Sprintf("0.%015d", i)
	}
	long := `{"collection":"c","text":"long","vector":[` + strings.Join(vec, ",") + `]}`
	if len(long) < 1<<20 {
		t.Fatalf("the long line has only %d bytes", len(long))
	}
	path := writeTemp(t, long+"\n"+`{"collection":"c","text":"after"}`+"\n")
	fo := &fakeObserver{}
	if _, reported, err := runFile(t, Config{Observer: fo}, path, State{}); err != nil || reported != "" {
		t.Fatalf("%v: %s", err, reported)
	}
	got := fo.got
	if len(got) != 2 || len(got[0].Vector) != 65536 || got[0].Vector[65535] != 0.000000000065535 || got[1].Text != "after" {
		t.Fatalf("observed %d, first vector %d elements", len(got), len(got[0].Vector))
	}

	// Past the line limit: reported, skipped, and the next line is read
	// from the right place.
	var reported bytes.Buffer
	fo2 := &fakeObserver{}
	content := `{"collection":"c","text":"a"}` + "\n" + long + "\n" + `{"collection":"c","text":"b"}` + "\n" + strings.Repeat("x", 5000)
	im := New(Config{Observer: fo2, Path: "f.jsonl", StatePath: filepath.Join(t.TempDir(), "st"), Errors: &reported, MaxLine: 4096})
	sum, err := im.Run(context.Background(), strings.NewReader(content), State{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, fo2.texts()); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
	want := "f.jsonl:2: longer than 4096 bytes, skipped\nf.jsonl:4: longer than 4096 bytes, skipped\n"
	if reported.String() != want || sum.Failed != 2 || sum.Lines != 4 || im.state.Offset != int64(len(content)) {
		t.Errorf("reported %q, summary %+v, offset %d", reported.String(), sum, im.state.Offset)
	}
}

func TestReadLine(t *testing.T) {
	for _, tt := range []struct {
		name  string
		in    string
		max   int
		lines []string // "!" marks a line too long
		sizes []int64
	}{
		{"empty", "", 10, nil, nil},
		{"no final newline", "ab\ncd", 10, []string{"ab", "cd"}, []int64{3, 2}},
		{"blank lines", "\n\nx\n", 10, []string{"", "", "x"}, []int64{1, 1, 2}},
		{"exactly the limit", "abcd\nabcde\n", 4, []string{"abcd", "!"}, []int64{5, 6}},
		{"long without newline", "abcdefgh", 4, []string{"!"}, []int64{8}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// bufio's smallest buffer, so that lines span reads.
			br := bufio.NewReaderSize(strings.NewReader(tt.in), 16)
			var lines []string
			var sizes []int64
			for range 100 {
				line, n, tooLong, err := readLine(br, tt.max)
				if err != nil {
					break
				}
				if tooLong {
					line = []byte("!")
				}
				lines, sizes = append(lines, string(line)), append(sizes, n)
			}
			if diff := cmp.Diff(tt.lines, lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.sizes, sizes); diff != "" {
				t.Errorf("sizes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadState(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", `{"file": "/x/obs.jsonl", "line": 3, "offset": 30}`)
	for _, tt := range []struct {
		name     string
		path     string
		size     int64
		want     State
		notExist bool
		msg      string
	}{
		{"good", good, 30, State{File: "/x/obs.jsonl", Line: 3, Offset: 30}, false, ""},
		{"size unchecked", good, -1, State{File: "/x/obs.jsonl", Line: 3, Offset: 30}, false, ""},
		{"missing", filepath.Join(dir, "none"), -1, State{}, true, "no such file"},
		{"beyond the file", good, 29, State{}, false, "records line 3 at byte 30, but the file has 29 bytes"},
		{"not JSON", write("notjson", `[1,2]`), -1, State{}, false, "is not an import state file"},
		{"negative line", write("neg", `{"line": -1}`), -1, State{}, false, "is not an import state file"},
		{"offset without a line", write("noline", `{"offset": 5}`), -1, State{}, false, "is not an import state file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadState(tt.path, tt.size)
			if errors.Is(err, fs.ErrNotExist) != tt.notExist {
				t.Errorf("error %v: matches fs.ErrNotExist %v, want %v", err, !tt.notExist, tt.notExist)
			}
			if tt.msg == "" && err != nil || tt.msg != "" && (err == nil || !strings.Contains(err.Error(), tt.msg)) {
				t.Errorf("error %v, want one with %q", err, tt.msg)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummaryText(t *testing.T) {
	for _, tt := range []struct {
		name string
		sum  Summary
		want string
	}{
		{"decisions in the write path's order, others after",
			Summary{File: "f", LastLine: 9, Lines: 9, Applied: 4, Skipped: 2, Failed: 3,
				Decisions: map[string]int{"rejected": 1, "zeta": 1, "inserted": 1, "restatement": 1}},
			"imported f: 9 lines read, 4 applied, 2 skipped (blank), 3 failed; last line 9\n" +
				"  inserted       1\n  restatement    1\n  rejected       1\n  zeta           1\n"},
		{"resumed, with replays",
			Summary{File: "f", ResumedAfter: 3, LastLine: 6, Lines: 3, Applied: 3, Decisions: map[string]int{"inserted": 1}, Replayed: 2},
			"imported f after line 3: 3 lines read, 3 applied, 0 skipped (blank), 0 failed; last line 6\n" +
				"  inserted       1\n  replayed       2 (observation_id seen before: nothing changed)\n"},
		{"stopped", Summary{File: "f", LastLine: 3, Lines: 4, Applied: 3, Stopped: true, Decisions: map[string]int{}},
			"stopped importing f: 4 lines read, 3 applied, 0 skipped (blank), 0 failed; last line 3\n"},
		{"checked", Summary{File: "f", LastLine: 2, Lines: 2, Applied: 2, Check: true, Decisions: map[string]int{}},
			"checked f: 2 lines read, 2 valid, 0 skipped (blank), 0 failed; last line 2\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.sum.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), tt.want)
			}
			b.Reset()
			if err := tt.sum.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			var back Summary
			if err := json.Unmarshal(b.Bytes(), &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.sum, back); diff != "" {
				t.Errorf("JSON round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProgressBar: the bar says the line and the observations per second,
// not bytes.
func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	bar := NewProgressBar(&b, "/tmp/obs.jsonl", 1000)
	for i, off := range []int64{0, 400, 1000} {
		if err := bar.Update(off, i+1); err != nil {
			t.Fatal(err)
		}
	}
	if out := b.String(); !strings.Contains(out, "importing obs.jsonl: line ") || !strings.Contains(out, "obs/s") || strings.Contains(out, "kB") {
		t.Errorf("bar %q", out)
	}
}
