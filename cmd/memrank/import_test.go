package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/memrank/memrank/dedup"
)

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readState(t *testing.T, path string) importState {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st importState
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("state file: %v: %s", err, b)
	}
	return st
}

func texts(obs []dedup.Observation) []string {
	out := make([]string, len(obs))
	for i, o := range obs {
		out[i] = o.Text
	}
	return out
}

func importWith(op *fakeOpen) func(e *env) *cobra.Command {
	return func(e *env) *cobra.Command { return importCommand(e, op.open) }
}

// decideByText answers each observation by its text.
func decideByText(m map[string]error, decisions map[string]dedup.Decision) func(int, dedup.Observation) (dedup.Outcome, error) {
	return func(n int, obs dedup.Observation) (dedup.Outcome, error) {
		if err := m[obs.Text]; err != nil {
			return dedup.Outcome{}, err
		}
		d := decisions[obs.Text]
		if d == "" {
			d = dedup.DecisionInserted
		}
		return dedup.Outcome{Decision: d, MemoryID: fmt.Sprint(n)}, nil
	}
}

const mixedJSONL = `{"collection":"c","text":"one"}

{"text":"two"}
{"collection":"c","text":"three","memry_type":"x"}
not json
{"collection":"c","text":"four"}` + "\r\n" + `   ` + "\t" + `
{"collection":"c","text":"five","corrects":"9"}
{"collection":"c","text":"six"}`

func TestImportLinesInOrder(t *testing.T) {
	path := writeTemp(t, "obs.jsonl", mixedJSONL)
	fo := &fakeObserver{answer: decideByText(
		map[string]error{
			"four": fmt.Errorf("dedup: %w", &dedup.InputError{Field: "memory_type", Reason: `unknown type "x"`}),
			"five": fmt.Errorf("dedup: memory 9: %w", dedup.ErrNotFound),
		},
		map[string]dedup.Decision{"two": dedup.DecisionRestatement, "six": dedup.DecisionRejected},
	)}
	op := &fakeOpen{ob: fo}
	r := execute(t, importWith(op), "", nil, "--collection", "dflt", path)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (bad lines): %s", r.code, r.stderr)
	}
	got := fo.observed()
	if diff := cmp.Diff([]string{"one", "two", "four", "five", "six"}, texts(got)); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
	if got[0].Collection != "c" || got[1].Collection != "dflt" {
		t.Errorf("collections %q %q: --collection fills only a missing one", got[0].Collection, got[1].Collection)
	}
	wantErr := []string{
		path + `:4: memry_type: unknown field (known: collection, text,`,
		path + `:5: body: invalid JSON: invalid character 'o' in literal null (expecting 'u') at byte 2`,
		path + `:6: dedup: memory_type: unknown type "x"`,
		path + `:8: dedup: memory 9: dedup: not found`,
		`memrank: 4 line(s) could not be imported (reported above)`,
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != len(wantErr) {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
	for i, w := range wantErr {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("stderr line %d: %q, want prefix %q", i+1, lines[i], w)
		}
	}
	wantOut := "imported " + path + ": 9 lines read, 3 applied, 2 skipped (blank), 4 failed; last line 9\n" +
		"  inserted       1\n" +
		"  restatement    1\n" +
		"  rejected       1\n"
	if r.stdout != wantOut {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, wantOut)
	}
	st := readState(t, path+".progress")
	if st.Line != 9 || st.Offset != int64(len(mixedJSONL)) {
		t.Errorf("state %+v, want line 9 at byte %d", st, len(mixedJSONL))
	}
	if op.opened != 1 || op.closed != 1 {
		t.Errorf("write path opened %d, closed %d times", op.opened, op.closed)
	}

	// --output json: the same summary as an object.
	fo2 := &fakeObserver{answer: fo.answer}
	r = execute(t, importWith(&fakeOpen{ob: fo2}), "", nil, "--collection", "dflt", "--output", "json", "--state", filepath.Join(t.TempDir(), "s"), path)
	var sum importSummary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	want := importSummary{File: path, LastLine: 9, Lines: 9, Applied: 3, Skipped: 2, Failed: 4,
		Decisions: map[string]int{"inserted": 1, "restatement": 1, "rejected": 1}, State: sum.State}
	if diff := cmp.Diff(want, sum); diff != "" || !strings.HasSuffix(sum.State, "/s") {
		t.Errorf("JSON summary (-want +got):\n%s (state %q)", diff, sum.State)
	}
}

func TestImportStopsAndResumes(t *testing.T) {
	var content strings.Builder
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&content, `{"collection":"c","text":"line %d","observation_id":"o%d"}`+"\n", i, i)
	}
	path := writeTemp(t, "obs.jsonl", content.String())
	down := errors.New("rpc error: code = Unavailable desc = connection refused")
	fo := &fakeObserver{answer: decideByText(map[string]error{"line 4": down}, nil)}
	r := execute(t, importWith(&fakeOpen{ob: fo}), "", nil, path)
	if r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if diff := cmp.Diff([]string{"line 1", "line 2", "line 3", "line 4"}, texts(fo.observed())); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
	for _, s := range []string{
		path + ":4: rpc error: code = Unavailable desc = connection refused\n",
		"Lines up to 3 are acknowledged in " + path + ".progress",
		"continue with: memrank import --resume " + path,
	} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
	if !strings.HasPrefix(r.stdout, "stopped importing "+path+": 4 lines read, 3 applied, 0 skipped (blank), 0 failed; last line 3\n") {
		t.Errorf("stdout %q", r.stdout)
	}
	firstThree := len(strings.Join(strings.SplitAfter(content.String(), "\n")[:3], ""))
	if st := readState(t, path+".progress"); st.Line != 3 || st.Offset != int64(firstThree) {
		t.Errorf("state %+v, want line 3 at byte %d", st, firstThree)
	}

	// The cause is fixed: --resume offers lines 4 to 6 only.
	fo2 := &fakeObserver{}
	r = execute(t, importWith(&fakeOpen{ob: fo2}), "", nil, "--resume", path)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if diff := cmp.Diff([]string{"line 4", "line 5", "line 6"}, texts(fo2.observed())); diff != "" {
		t.Errorf("resumed (-want +got):\n%s", diff)
	}
	if want := "imported " + path + " after line 3: 3 lines read, 3 applied, 0 skipped (blank), 0 failed; last line 6\n  inserted       3\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	if st := readState(t, path+".progress"); st.Line != 6 || st.Offset != int64(content.Len()) {
		t.Errorf("state %+v", st)
	}

	// Lines appended later are all a further --resume offers.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `{"collection":"c","text":"line 7"}`)
	f.Close()
	fo3 := &fakeObserver{}
	r = execute(t, importWith(&fakeOpen{ob: fo3}), "", nil, "--resume", "-q", path)
	if r.code != 0 || len(fo3.observed()) != 1 || fo3.observed()[0].Text != "line 7" {
		t.Errorf("exit %d, observed %v: %s", r.code, texts(fo3.observed()), r.stderr)
	}

	// Without --resume it starts over, and says so. Lines with an
	// observation_id seen before are replays, counted apart.
	fo4 := &fakeObserver{answer: func(n int, obs dedup.Observation) (dedup.Outcome, error) {
		return dedup.Outcome{Decision: dedup.DecisionInserted, Replayed: obs.ObservationID != ""}, nil
	}}
	r = execute(t, importWith(&fakeOpen{ob: fo4}), "", nil, path)
	if r.code != 0 || len(fo4.observed()) != 7 || !strings.Contains(r.stderr, "records line 7 of an earlier import; starting from line 1") {
		t.Errorf("exit %d, observed %d: %s", r.code, len(fo4.observed()), r.stderr)
	}
	if want := "imported " + path + ": 7 lines read, 7 applied, 0 skipped (blank), 0 failed; last line 7\n" +
		"  inserted       1\n  replayed       6 (observation_id seen before: nothing changed)\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
}

func TestImportInterruptStops(t *testing.T) {
	path := writeTemp(t, "obs.jsonl", `{"collection":"c","text":"a"}`+"\n"+`{"collection":"c","text":"b"}`+"\n")
	fo := &fakeObserver{answer: decideByText(map[string]error{"b": fmt.Errorf("dedup: embed: %w", context.Canceled)}, nil)}
	r := execute(t, importWith(&fakeOpen{ob: fo}), "", nil, "--state", filepath.Join(t.TempDir(), "st.json"), path)
	if r.code != 1 || !strings.Contains(r.stderr, "--resume --state ") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	if r := execute(t, importWith(&fakeOpen{ob: fo}), "", nil, "--state", filepath.Join(t.TempDir(), "other"), "--resume", path); r.code != 2 {
		t.Errorf("resume from a state file that is not there: exit %d", r.code)
	}
}

// fakeProgress records the bar's positions.
type fakeProgress struct {
	at     []int64
	clears int
}

func (p *fakeProgress) Set64(n int64) error { p.at = append(p.at, n); return nil }
func (p *fakeProgress) Clear() error        { p.clears++; return nil }

// TestImportStateUpdates: the state file follows the acknowledged lines,
// every saveEvery lines or saveInterval, whichever comes first.
func TestImportStateUpdates(t *testing.T) {
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
					var st importState
					if err := json.Unmarshal(b, &st); err != nil {
						t.Errorf("state file mid-import: %v", err)
					}
					line = st.Line
				}
				seen = append(seen, line)
				return dedup.Outcome{Decision: dedup.DecisionInserted}, nil
			}}
			var stderr bytes.Buffer
			bar := &fakeProgress{}
			im := &importer{obs: fo, path: path, statePath: statePath, stderr: &stderr, bar: bar,
				saveEvery: tt.every, saveInterval: tt.interval, maxLine: 1 << 20, now: func() time.Time { return clock }}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sum, err := im.run(context.Background(), f, importState{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]int{0, 0, 2, 2, 4, 4, 6}, seen); diff != "" {
				t.Errorf("state line when each line was offered (-want +got):\n%s", diff)
			}
			if st := readState(t, statePath); st.Line != 8 || st.Offset != int64(content.Len()) {
				t.Errorf("final state %+v", st)
			}
			if sum.Applied != 7 || sum.Failed != 1 || !strings.HasPrefix(stderr.String(), path+":8: body: invalid JSON") {
				t.Errorf("summary %+v, stderr %s", sum, stderr.String())
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

func TestImportLongLines(t *testing.T) {
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
	path := writeTemp(t, "obs.jsonl", long+"\n"+`{"collection":"c","text":"after"}`+"\n")
	fo := &fakeObserver{}
	r := execute(t, importWith(&fakeOpen{ob: fo}), "", nil, path)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := fo.observed()
	if len(got) != 2 || len(got[0].Vector) != 65536 || got[0].Vector[65535] != 0.000000000065535 || got[1].Text != "after" {
		t.Fatalf("observed %d, first vector %d elements", len(got), len(got[0].Vector))
	}

	// Past the line limit: reported, skipped, and the next line is read
	// from the right place.
	var stderr bytes.Buffer
	fo2 := &fakeObserver{}
	content := `{"collection":"c","text":"a"}` + "\n" + long + "\n" + `{"collection":"c","text":"b"}` + "\n" + strings.Repeat("x", 5000)
	im := &importer{obs: fo2, path: "f.jsonl", statePath: filepath.Join(t.TempDir(), "st"), stderr: &stderr,
		saveEvery: 100, saveInterval: time.Hour, maxLine: 4096, now: time.Now}
	sum, err := im.run(context.Background(), strings.NewReader(content), importState{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, texts(fo2.observed())); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
	want := "f.jsonl:2: longer than 4096 bytes, skipped\nf.jsonl:4: longer than 4096 bytes, skipped\n"
	if stderr.String() != want || sum.Failed != 2 || sum.Lines != 4 || im.state.Offset != int64(len(content)) {
		t.Errorf("stderr %q, summary %+v, offset %d", stderr.String(), sum, im.state.Offset)
	}
}

func TestReadImportLine(t *testing.T) {
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
			br := bufioReader(tt.in)
			var lines []string
			var sizes []int64
			for range 100 {
				line, n, tooLong, err := readImportLine(br, tt.max)
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

// bufioReader has bufio's smallest buffer, so that lines span reads.
func bufioReader(s string) *bufio.Reader { return bufio.NewReaderSize(strings.NewReader(s), 16) }

func TestImportCheck(t *testing.T) {
	path := writeTemp(t, "obs.jsonl", mixedJSONL)
	op := &fakeOpen{err: errors.New("the write path must not be opened")}
	r := execute(t, importWith(op), "", nil, "--check", path)
	if r.code != 1 || op.opened != 0 {
		t.Fatalf("exit %d, opened %d: %s", r.code, op.opened, r.stderr)
	}
	// Without --collection, line 3 has none.
	for _, s := range []string{path + ":3: collection: required (in the line, or --collection)", path + ":4: memry_type: unknown field", path + ":5: body: invalid JSON"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
	if want := "checked " + path + ": 9 lines read, 4 valid, 2 skipped (blank), 3 failed; last line 9\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	if _, err := os.Stat(path + ".progress"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--check wrote a state file: %v", err)
	}
}

func TestImportUsage(t *testing.T) {
	path := writeTemp(t, "obs.jsonl", `{"collection":"c","text":"a"}`+"\n")
	badState := writeTemp(t, "bad.progress", `{"line": 3, "offset": 99999}`)
	notState := writeTemp(t, "not.progress", `[1,2]`)
	for _, tt := range []struct {
		name string
		args []string
		msg  string
	}{
		{"no file", nil, "accepts 1 arg(s), received 0"},
		{"two files", []string{path, path}, "accepts 1 arg(s), received 2"},
		{"missing file", []string{path + ".nope"}, "no such file"},
		{"a directory", []string{filepath.Dir(path)}, "is a directory"},
		{"resume without state", []string{"--resume", path}, "--resume: no state file " + path + ".progress"},
		{"state beyond the file", []string{"--resume", "--state", badState, path}, "records line 3 at byte 99999, but the file has 30 bytes"},
		{"not a state file", []string{"--resume", "--state", notState, path}, "is not an import state file"},
		{"check and resume", []string{"--check", "--resume", path}, "--check reads the whole file"},
		{"bad output", []string{"--output", "xml", path}, `--output "xml"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			op := &fakeOpen{ob: &fakeObserver{}}
			r := execute(t, importWith(op), "", nil, tt.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.msg) {
				t.Errorf("exit %d, stderr %q lacks %q", r.code, r.stderr, tt.msg)
			}
			if op.opened != 0 {
				t.Error("the write path was opened")
			}
		})
	}
}

func TestImportRemote(t *testing.T) {
	var content strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&content, `{"text":"t%d","session_id":"s%d"}`+"\n", i, i)
	}
	path := writeTemp(t, "obs.jsonl", content.String())
	srv := &observeServer{t: t, answer: func(n int) (int, string) {
		switch n {
		case 2:
			return 400, `{"status":{"error":"Bad request: source: unknown source \"gossip\""},"time":0}`
		case 4:
			return 503, `{"status":{"error":"Service unavailable: the upstream is not reachable"},"time":0}`
		}
		return 200, `{"result":{"decision":"independent","memory_id":"7","confidence":0.8,"observations":1,"tier":2,"judge":null,"replayed":false},"status":"ok","time":0}`
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	r := execute(t, newImportCmd, "", nil, "--url", ts.URL, "--api-key", "k", "--collection", "notes", path)
	if r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if srv.calls.Load() != 4 {
		t.Fatalf("server called %d times, want 4 (stopped at the 503)", srv.calls.Load())
	}
	for i, obs := range srv.got {
		if want := fmt.Sprintf("t%d", i+1); obs.Text != want || obs.Collection != "notes" || obs.SessionID != fmt.Sprintf("s%d", i+1) {
			t.Errorf("post %d: %+v", i+1, obs)
		}
		if srv.header[i].Get("Api-Key") != "k" {
			t.Errorf("post %d without the api-key", i+1)
		}
	}
	for _, s := range []string{
		path + `:2: Bad request: source: unknown source "gossip" (HTTP 400)`,
		path + ":4: Service unavailable: the upstream is not reachable (HTTP 503)",
		"import stopped at line 4",
	} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
	if !strings.HasPrefix(r.stdout, "stopped importing "+path+": 4 lines read, 2 applied, 0 skipped (blank), 1 failed; last line 3\n  independent    2\n") {
		t.Errorf("stdout %q", r.stdout)
	}
	if st := readState(t, path+".progress"); st.Line != 3 {
		t.Errorf("state %+v", st)
	}
	// A resume goes on at line 4 with the server back.
	srv2 := &observeServer{t: t}
	ts2 := httptest.NewServer(srv2)
	defer ts2.Close()
	r = execute(t, newImportCmd, "", nil, "--url", ts2.URL, "--collection", "notes", "--resume", path)
	if r.code != 0 || srv2.calls.Load() != 2 || srv2.got[0].Text != "t4" || srv2.got[1].Text != "t5" {
		t.Errorf("exit %d, %d calls: %s", r.code, srv2.calls.Load(), r.stderr)
	}
	if !strings.HasPrefix(r.stdout, "imported "+path+" after line 3: 2 lines read, 2 applied") {
		t.Errorf("summary %q", r.stdout)
	}
}
