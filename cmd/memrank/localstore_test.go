package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memrank/memrank/store"
)

// TestLocalStoreInUse: every command that opens the embedded store in
// process, on a data directory another process holds (a running serve),
// fails at once as a usage error saying how to reach that server instead:
// --url where the command has it.
func TestLocalStoreInUse(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lines := filepath.Join(t.TempDir(), "obs.jsonl")
	if err := os.WriteFile(lines, []byte(`{"text":"Dana drinks tea"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const url = "give --url with its address (e.g. --url http://localhost:6333) to go through it"
	tests := []struct {
		name string
		args []string
		hint string
	}{
		{name: "observe", args: []string{"observe", "--collection", "mem", "--text", "x"}, hint: url},
		{name: "import", args: []string{"import", "--collection", "mem", lines}, hint: url},
		{name: "explain", args: []string{"explain", "--collection", "mem", "--text", "x"}, hint: url},
		{name: "mcp", args: []string{"mcp", "--collection", "mem"}, hint: url},
		{name: "consolidate", args: []string{"consolidate", "--collection", "mem"},
			hint: "it consolidates on its own schedule (consolidation.enabled); or stop it first"},
		{name: "forget", args: []string{"forget", "--collection", "mem", "--session", "s1"},
			hint: "DELETE /v1/sessions/{id} or /v1/memories/{id} on it forgets the same way; or stop it first"},
		{name: "review", args: []string{"review", "--collection", "mem"},
			hint: "GET /v1/review and POST /v1/review/{id} on it do the same; or stop it first"},
		{name: "reembed", args: []string{"reembed", "--collection", "mem"}, hint: "stop it first"},
		{name: "backfill", args: []string{"backfill", "--collection", "mem", "--mapping", "mem0"}, hint: "stop it first"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append(tc.args, "--data", dir), strings.NewReader(""), &stdout, &stderr, nil)
			want := "memrank: the data directory " + dir + " is in use by another process (a running memrank serve?): " + tc.hint + "\n"
			if code != exitUsage || stderr.String() != want {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", code, stderr.String(), exitUsage, want)
			}
		})
	}
}

// TestLocalStoreCreated: a command that creates the embedded store where
// there was none says so on stderr, in one line, with how to reach a
// running server (or an existing store) instead; on an existing store it
// says nothing of the kind.
func TestLocalStoreCreated(t *testing.T) {
	const urlNote = " (no store there yet; --url reaches a running server)\n"
	tests := []struct {
		name  string
		data  string // --data; empty: the default, in a fresh working directory
		args  []string
		code  int
		first string // the line on stderr the first run starts with
	}{
		{name: "observe, default directory", args: []string{"observe", "--collection", "mem", "--text", "Dana drinks tea"},
			first: "memrank: created a new store in ./memrank-data" + urlNote},
		{name: "observe, --data", data: "elsewhere", args: []string{"observe", "--collection", "mem", "--text", "Dana drinks tea"},
			first: "memrank: created a new store in elsewhere" + urlNote},
		{name: "consolidate, no such collection", data: "elsewhere", args: []string{"consolidate", "--collection", "mem"}, code: exitFailure,
			first: "memrank: created a new store in elsewhere (no store there yet; --data names an existing one)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			args := tc.args
			if tc.data != "" {
				args = append(args, "--data", tc.data)
			}
			for i, want := range []string{tc.first, ""} {
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr, nil)
				if code != tc.code {
					t.Fatalf("run %d: exit %d, want %d; stderr:\n%s", i+1, code, tc.code, stderr.String())
				}
				got := stderr.String()
				if want != "" && !strings.HasPrefix(got, want) {
					t.Errorf("run %d: stderr:\n%s\nwant it to start with:\n%s", i+1, got, want)
				}
				if want == "" && strings.Contains(got, "created a new store") {
					t.Errorf("run %d, on the store the first made: stderr:\n%s", i+1, got)
				}
			}
		})
	}
}
