package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/store"
)

// TestJobsOnCollectionsWrittenThroughQdrant: a collection created and
// filled through the embedded store's Qdrant REST API has no audit
// companion; the jobs a user runs on it by name that audit their changes
// create the companion first, as the write path does, and succeed.
func TestJobsOnCollectionsWrittenThroughQdrant(t *testing.T) {
	const coll = "notes"
	// A memory-shaped point labelled active, observed ten years ago (a
	// consolidation labels it archived), seen in session s1.
	const points = `{"points":[{"id":1,"vector":[1,0],"payload":{"text":"Dana lived in Oslo","memory_type":"fact",` +
		`"source":"direct","confidence":0.9,"created_at":"2016-05-01T09:00:00Z","tier":"active","retrievable":true,"session_ids":["s1"]}}]}`
	tests := []struct {
		name string
		args []string
		want []string // lines of stdout
	}{
		{
			name: "consolidate",
			args: []string{"consolidate", "--collection", coll, "--quiet"},
			want: []string{
				"created the audit companion notes_memrank_audit: memrank now treats notes as a memory collection (re-ranks its queries, consolidates it on schedule)",
				"writes: 1, audit records: 1, conflicts (left for the next run): 0",
			},
		},
		{
			name: "review --archive",
			args: []string{"review", "--collection", coll, "--archive", "1"},
			want: []string{"archived 1 (was active)"},
		},
		{
			name: "forget",
			args: []string{"forget", "--collection", coll, "--session", "s1"},
			want: []string{"forgot session s1 in notes: 0 memories updated, 1 deleted; audit records (forget.audit redact): 0 redacted, 0 deleted, 0 kept"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			addrs, stop := startQdrantCompat(t, dir, []string{"REST"}, "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0")
			base := "http://" + addrs["REST"]
			for _, r := range []struct{ method, path, body string }{
				{"PUT", "/collections/" + coll, `{"vectors":{"size":2,"distance":"Cosine"}}`},
				{"PUT", "/collections/" + coll + "/points?wait=true", points},
			} {
				if code, body := jsonRequest(t, r.method, base+r.path, r.body); code != 200 {
					t.Fatalf("%s %s: %d %s", r.method, r.path, code, body)
				}
			}
			if code, errText := stop(); code != exitOK {
				t.Fatalf("qdrant-compat: exit %d: %s", code, errText)
			}

			var stdout, stderr bytes.Buffer
			args := append(tc.args, "--data", dir)
			if code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr, nil); code != exitOK {
				t.Fatalf("memrank %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
			}
			lines := strings.Split(stdout.String(), "\n")
			for _, w := range tc.want {
				found := false
				for _, l := range lines {
					found = found || l == w
				}
				if !found {
					t.Errorf("stdout lacks the line %q:\n%s", w, stdout.String())
				}
			}

			db, err := store.Open(dir, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if ok, err := db.CollectionExists(context.Background(), memory.AuditCollection(coll)); err != nil || !ok {
				t.Errorf("the companion %s exists: %v, %v", memory.AuditCollection(coll), ok, err)
			}
		})
	}
}
