package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/internal/importer"
)

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readState(t *testing.T, path string) importer.State {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st importer.State
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
{"collection":"c","text":"six","speaker":"Caroline"}`

// TestImportLinesInOrder: the command wires the flags to internal/importer
// (whose tests cover the import itself), reports bad lines on stderr,
// prints the summary in either format and exits 1 when a line failed.
func TestImportLinesInOrder(t *testing.T) {
	path := writeTemp(t, "obs.jsonl", mixedJSONL)
	fo := &fakeObserver{answer: decideByText(
		map[string]error{"four": fmt.Errorf("dedup: %w", &dedup.InputError{Field: "memory_type", Reason: `unknown type "x"`})},
		map[string]dedup.Decision{"two": dedup.DecisionRestatement},
	)}
	op := &fakeOpen{ob: fo}
	r := execute(t, importWith(op), "", nil, "--collection", "dflt", path)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (bad lines): %s", r.code, r.stderr)
	}
	if diff := cmp.Diff([]string{"one", "two", "four", "five", "six"}, texts(fo.observed())); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
	if got := fo.observed()[1].Collection; got != "dflt" {
		t.Errorf("collection %q: --collection fills a missing one", got)
	}
	if got := fo.observed()[4].Speaker; got != "Caroline" {
		t.Errorf("speaker %q, want the line's Caroline", got)
	}
	for _, s := range []string{path + `:4: memry_type: unknown field`, path + `:6: dedup: memory_type: unknown type "x"`,
		"memrank: 3 line(s) could not be imported (reported above)\n"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
	wantOut := "imported " + path + ": 9 lines read, 4 applied, 2 skipped (blank), 3 failed; last line 9\n" +
		"  inserted       3\n" +
		"  restatement    1\n"
	if r.stdout != wantOut {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, wantOut)
	}
	if st := readState(t, path+".progress"); st.Line != 9 {
		t.Errorf("state %+v, want line 9 in FILE.progress", st)
	}
	if op.opened != 1 || op.closed != 1 {
		t.Errorf("write path opened %d, closed %d times", op.opened, op.closed)
	}

	// --output json: the same summary as an object; --state names the file.
	r = execute(t, importWith(&fakeOpen{ob: &fakeObserver{answer: fo.answer}}), "", nil,
		"--collection", "dflt", "--output", "json", "--state", filepath.Join(t.TempDir(), "s"), path)
	var sum importer.Summary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if sum.Lines != 9 || sum.Failed != 3 || !strings.HasSuffix(sum.State, "/s") {
		t.Errorf("JSON summary %+v", sum)
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
	if st := readState(t, path+".progress"); st.Line != 3 {
		t.Errorf("state %+v, want line 3", st)
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

	// Without --resume it starts over, and says so. Lines with an
	// observation_id seen before are replays, counted apart.
	fo4 := &fakeObserver{answer: func(n int, obs dedup.Observation) (dedup.Outcome, error) {
		return dedup.Outcome{Decision: dedup.DecisionInserted, Replayed: obs.ObservationID != ""}, nil
	}}
	r = execute(t, importWith(&fakeOpen{ob: fo4}), "", nil, path)
	if r.code != 0 || len(fo4.observed()) != 6 || !strings.Contains(r.stderr, "records line 6 of an earlier import; starting from line 1") {
		t.Errorf("exit %d, observed %d: %s", r.code, len(fo4.observed()), r.stderr)
	}
	if want := "imported " + path + ": 6 lines read, 6 applied, 0 skipped (blank), 0 failed; last line 6\n" +
		"  replayed       6 (observation_id seen before: nothing changed)\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
}

func TestImportInterruptStops(t *testing.T) {
	path := writeTemp(t, "obs.jsonl", `{"collection":"c","text":"a"}`+"\n"+`{"collection":"c","text":"b"}`+"\n")
	fo := &fakeObserver{answer: decideByText(map[string]error{"b": fmt.Errorf("dedup: embed: %w", context.Canceled)}, nil)}
	r := execute(t, importWith(&fakeOpen{ob: fo}), "", nil, "--state", filepath.Join(t.TempDir(), "st.json"), path)
	if r.code != 1 || !strings.Contains(r.stderr, "continue with: memrank import --state ") || !strings.Contains(r.stderr, " --resume ") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	if r := execute(t, importWith(&fakeOpen{ob: fo}), "", nil, "--state", filepath.Join(t.TempDir(), "other"), "--resume", path); r.code != 2 {
		t.Errorf("resume from a state file that is not there: exit %d", r.code)
	}
}

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
		fmt.Fprintf(&content, `{"text":"t%d","session_id":"s%d","speaker":"p%d"}`+"\n", i, i, i)
	}
	path := writeTemp(t, "obs.jsonl", content.String())
	srv := &observeServer{t: t, answer: func(n int) (int, string) {
		switch n {
		case 2:
			return 400, `{"status":{"error":"Bad request: source: unknown source \"gossip\""},"time":0}`
		case 4:
			return 503, `{"status":{"error":"Service unavailable: the upstream is not reachable"},"time":0}`
		}
		return 200, `{"result":{"decision":"independent","memory_id":"7","confidence":0.8,"observations":1,"dedup_tier":2,"judge":null,"replayed":false},"status":"ok","time":0}`
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
		if want := fmt.Sprintf("t%d", i+1); obs.Text != want || obs.Collection != "notes" || obs.SessionID != fmt.Sprintf("s%d", i+1) ||
			obs.Speaker != fmt.Sprintf("p%d", i+1) {
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
	// A resume with the printed command goes on at line 4 with the server
	// back (it answers 200 from its fifth call on); the same command with
	// another key is another target, refused.
	if !strings.Contains(r.stderr, "continue with: memrank import --api-key <your key> --collection notes --url "+ts.URL+" --resume "+path) {
		t.Errorf("the hint does not repeat the command:\n%s", r.stderr)
	}
	if r := execute(t, newImportCmd, "", nil, "--url", ts.URL, "--api-key", "other", "--collection", "notes", "--resume", path); r.code != 2 {
		t.Errorf("a resume with another key: exit %d: %s", r.code, r.stderr)
	}
	r = execute(t, newImportCmd, "", nil, "--url", ts.URL, "--api-key", "k", "--collection", "notes", "--resume", path)
	if r.code != 0 || srv.calls.Load() != 6 || srv.got[4].Text != "t4" || srv.got[5].Text != "t5" {
		t.Errorf("exit %d, %d calls: %s", r.code, srv.calls.Load(), r.stderr)
	}
	if !strings.HasPrefix(r.stdout, "imported "+path+" after line 3: 2 lines read, 2 applied") {
		t.Errorf("summary %q", r.stdout)
	}
}

// TestImportRemoteTenant: with --url, each observation carries the tenant in
// --tenant-header, and the state file's target names the tenant, so that a
// resume as another tenant is refused.
func TestImportRemoteTenant(t *testing.T) {
	path := writeTemp(t, "obs.jsonl", `{"text":"t1"}`+"\n"+`{"text":"t2"}`+"\n")
	srv := &observeServer{t: t, answer: func(n int) (int, string) {
		if n == 2 {
			return 503, `{"status":{"error":"Service unavailable: the upstream is not reachable"},"time":0}`
		}
		return 200, `{"result":{"decision":"inserted","memory_id":"7","confidence":0.8,"observations":0,"dedup_tier":0,"judge":null,"replayed":false},"status":"ok","time":0}`
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	r := execute(t, newImportCmd, "", nil, "--url", ts.URL, "--tenant-header", "X-Org-Tenant", "--tenant", "alice", "--collection", "notes", path)
	if r.code != 1 || srv.calls.Load() != 2 {
		t.Fatalf("exit %d after %d calls: %s", r.code, srv.calls.Load(), r.stderr)
	}
	for i, h := range srv.header {
		if h.Get("X-Org-Tenant") != "alice" {
			t.Errorf("post %d: headers %v, want X-Org-Tenant: alice", i+1, h)
		}
	}
	if st := readState(t, path+".progress"); !strings.Contains(st.Target, "tenant alice") {
		t.Errorf("state target %q does not name the tenant", st.Target)
	}
	r = execute(t, newImportCmd, "", nil, "--url", ts.URL, "--tenant-header", "X-Org-Tenant", "--tenant", "bob", "--collection", "notes", "--resume", path)
	if r.code != 2 || srv.calls.Load() != 2 {
		t.Errorf("a resume as another tenant: exit %d after %d calls, want a refusal before any call: %s", r.code, srv.calls.Load(), r.stderr)
	}
}
