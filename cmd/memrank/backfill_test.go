package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// withStore runs f with a client of the embedded store in dir, then
// releases the store for the command.
func withStore(t *testing.T, dir string, f func(c *qdrant.Client)) {
	t.Helper()
	db, err := store.Open(dir, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	p := upstream.ServeInProcess(store.NewServer(db))
	c, err := qdrant.NewClient(p.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = c.Close()
		_ = p.Close()
		_ = db.Close()
	}()
	f(c)
}

func scrollAll(t *testing.T, c *qdrant.Client, coll string) []*qdrant.RetrievedPoint {
	t.Helper()
	limit := uint32(1000)
	pts, err := c.Scroll(context.Background(), &qdrant.ScrollPoints{CollectionName: coll, Limit: &limit, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		t.Fatal(err)
	}
	return pts
}

func runCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb, nil)
	return out.String(), errb.String(), code
}

// TestBackfillCommand: dry run, run, rollback of a small mem0 collection
// through the command, with its report.
func TestBackfillCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var before []*qdrant.RetrievedPoint
	withStore(t, dir, func(c *qdrant.Client) {
		ctx := context.Background()
		if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "m0",
			VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 4, Distance: qdrant.Distance_Cosine})}); err != nil {
			t.Fatal(err)
		}
		wait := true
		if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "m0", Wait: &wait, Points: []*qdrant.PointStruct{
			{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectorsDense([]float32{1, 0, 0, 0}),
				Payload: qdrant.NewValueMap(map[string]any{"data": "Dana uses Neovim", "user_id": "dana", "created_at": time.Now().Add(-time.Hour).Format(time.RFC3339)})},
			{Id: qdrant.NewIDNum(2), Vectors: qdrant.NewVectorsDense([]float32{0, 1, 0, 0}),
				Payload: qdrant.NewValueMap(map[string]any{"data": "Dana has a cat", "user_id": "dana"})},
		}}); err != nil {
			t.Fatal(err)
		}
		before = scrollAll(t, c, "m0")
	})
	base := []string{"backfill", "--data", dir, "--collection", "m0", "--mapping", "mem0"}

	out, errs, code := runCmd(t, append(base, "--dry-run")...)
	if code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, errs)
	}
	for _, want := range []string{"dry run: would backfill m0 with the mem0 mapping (embedder not named",
		"points 2 of 2: 1 memories, 0 already memories (left as they are), 1 left unscored",
		"tiers:    active 1, dormant 0, stale 0, archived 0", "  no_time", "  embedder_not_named", "assumptions:"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run report lacks %q:\n%s", want, out)
		}
	}
	if _, errs, code = runCmd(t, base...); code != exitFailure || !strings.Contains(errs, "--embedder-model") {
		t.Errorf("no embedder: exit %d, %s", code, errs)
	}
	if _, errs, code = runCmd(t, append(base, "--embedder-model", "text-embedding-3-small")...); code != exitFailure || !strings.Contains(errs, "has no time") {
		t.Errorf("no time: exit %d, %s", code, errs)
	}
	out, errs, code = runCmd(t, append(base, "--embedder-model", "text-embedding-3-small", "--leave-unscored", "-o", "json")...)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	var rep dedup.BackfillReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Resumed || rep.Backfilled != 1 || rep.Unscored != 1 || rep.Embedder != "text-embedding-3-small:4" {
		t.Errorf("report %+v (the refused run stopped on its first page, so this one resumes it)", rep)
	}

	out, errs, code = runCmd(t, "backfill", "--data", dir, "--collection", "m0", "--rollback")
	if code != 0 || !strings.Contains(out, "m0 rolled back: 1 points have their original payloads again") {
		t.Fatalf("rollback: exit %d: %s%s", code, out, errs)
	}
	withStore(t, dir, func(c *qdrant.Client) {
		if diff := cmp.Diff(before, scrollAll(t, c, "m0"), protocmp.Transform()); diff != "" {
			t.Errorf("after rollback (-orig +now):\n%s", diff)
		}
	})
}

func TestBackfillUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no collection", []string{"backfill", "--mapping", "mem0"}, "--collection is required"},
		{"no mapping", []string{"backfill", "--collection", "c"}, "--mapping is required"},
		{"bad mapping file", []string{"backfill", "--collection", "c", "--mapping", "/nonexistent.yaml"}, "not a readable file"},
		{"bad time", []string{"backfill", "--collection", "c", "--mapping", "mem0", "--assume-time", "yesterday"}, "RFC 3339"},
		{"bad batch", []string{"backfill", "--collection", "c", "--mapping", "mem0", "--batch", "0"}, "--batch 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCmd(t, tc.args...)
			if code != exitUsage || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, tc.want)
			}
		})
	}
}
