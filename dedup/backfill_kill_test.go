package dedup_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/foreign"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// killDirEnv tells a re-executed test binary to run the backfill child.
const killDirEnv = "MEMRANK_TEST_BACKFILL_KILL_DIR"

// killPoints is the acceptance run's size: 10,000 points (about 5 s),
// 2,000 under the race detector (about 10 s).
var killPoints = map[bool]int{false: 10000, true: 2000}[raceOn]

const killBatch = 250

// openAt is an engine over the embedded store in dir (which it locks).
func openAt(t testing.TB, dir string) (*qdrant.Client, *dedup.Engine, func()) {
	t.Helper()
	db, err := store.Open(dir, store.Options{NoSync: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	p := upstream.ServeInProcess(store.NewServer(db))
	client, err := qdrant.NewClient(p.ClientConfig())
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	eng, err := dedup.New(client, dedup.Config{Codec: codec, Embedder: newTopics(), Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	return client, eng, func() {
		_ = client.Close()
		_ = p.Close()
		_ = db.Close()
	}
}

func killBackfill() dedup.Backfill {
	return dedup.Backfill{Collection: "mem0", Mapping: foreign.Mem0(), EmbedderModel: "text-embedding-3-small",
		ExtractorModel: "gpt-4o-mini", BatchSize: killBatch}
}

// TestBackfillKillChild is the process TestBackfillSurvivesSIGKILL kills:
// it backfills and prints its progress until it is killed.
func TestBackfillKillChild(t *testing.T) {
	dir := os.Getenv(killDirEnv)
	if dir == "" {
		t.Skip("run by TestBackfillSurvivesSIGKILL")
	}
	_, eng, closeAll := openAt(t, dir)
	defer closeAll()
	b := killBackfill()
	b.Progress = func(done int) {
		fmt.Printf("DONE %d\n", done) // the kill lands wherever the run is by then
	}
	if _, err := eng.Backfill(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// mem0Set is a generated mem0 collection: users, ISO times with offsets,
// some updated, some duplicates.
func mem0Set(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		created := t0.AddDate(0, 0, -(i % 700)).In(time.FixedZone("PDT", -7*3600))
		updated := ""
		if i%5 == 0 {
			updated = created.Add(48 * time.Hour).Format("2006-01-02T15:04:05.000000-07:00")
		}
		p := mem0Payload(fmt.Sprintf("User %d fact %d", i%97, i/2), "user-"+strconv.Itoa(i%97),
			created.Format("2006-01-02T15:04:05.000000-07:00"), updated)
		if i%3 == 0 {
			p["agent_id"] = "agent-1"
		}
		out[i] = p
	}
	return out
}

// TestBackfillSurvivesSIGKILL is the acceptance run: a generated
// mem0-shaped collection of 10,000 points, a backfill killed with SIGKILL
// part way, resumed to the end with every point done once and one audit
// record each, then rolled back to payloads equal to the originals.
func TestBackfillSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	client, _, closeAll := openAt(t, dir)
	seedForeign(t, client, "mem0", mem0Set(killPoints))
	before := pointPayloads(t, client, "mem0")
	closeAll()

	killed := runAndKill(t, dir)
	t.Logf("killed after %d points were reported done", killed)

	client, eng, closeAll := openAt(t, dir)
	defer closeAll()
	partial := 0
	for _, p := range pointPayloads(t, client, "mem0") {
		if p[memory.FieldSchema.String()] != nil {
			partial++
		}
	}
	if partial == 0 || partial == killPoints {
		t.Fatalf("%d of %d points backfilled at the kill: not mid-run", partial, killPoints)
	}
	start := time.Now()
	rep, err := eng.Backfill(context.Background(), killBackfill())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("resumed in %s: %+v", time.Since(start), rep)
	if !rep.Resumed || rep.Points != killPoints || rep.Backfilled != killPoints || rep.Already != 0 || rep.Unscored != 0 {
		t.Errorf("report %+v", rep)
	}
	after := pointPayloads(t, client, "mem0")
	for id, p := range after {
		if p[memory.FieldSchema.String()] == nil || p["text"].GetStringValue() != before[id]["data"].GetStringValue() {
			t.Fatalf("point %s not backfilled: %v", id, p)
		}
	}
	perMemory := map[string]int{}
	for _, p := range pointPayloads(t, client, "mem0_memrank_audit") {
		if p["kind"].GetStringValue() == "audit" {
			perMemory[p["memory_id"].GetStringValue()]++
		}
	}
	if len(perMemory) != killPoints {
		for id := range after {
			if perMemory[id] == 0 {
				t.Errorf("memory %s has no audit record", id)
			}
		}
		t.Errorf("%d memories have audit records, want %d", len(perMemory), killPoints)
	}
	for id, n := range perMemory {
		if n != 1 {
			t.Errorf("memory %s has %d backfill records, want 1", id, n)
		}
	}

	start = time.Now()
	rb, err := eng.RollbackBackfill(context.Background(), dedup.BackfillRollback{Collection: "mem0", BatchSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rolled back in %s: %+v", time.Since(start), rb)
	if diff := cmp.Diff(before, pointPayloads(t, client, "mem0"), protocmp.Transform()); diff != "" {
		t.Errorf("after rollback (-orig +now):\n%s", diff)
	}
}

// runAndKill runs the child on dir and kills it with SIGKILL once it has
// done a quarter of the points; it returns the points it reported done.
func runAndKill(t *testing.T, dir string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBackfillKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), killDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	lines := make(chan int)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if s, ok := strings.CutPrefix(sc.Text(), "DONE "); ok {
				n, _ := strconv.Atoi(s)
				lines <- n
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case n, ok := <-lines:
			if !ok {
				t.Fatal("the child ended before it was killed")
			}
			if n >= killPoints/4 {
				if err := cmd.Process.Kill(); err != nil { // SIGKILL
					t.Fatal(err)
				}
				go func() {
					for range lines { // drain until the pipe closes
					}
				}()
				return n
			}
		case <-timeout:
			_ = cmd.Process.Kill()
			t.Fatal("the child did not reach a quarter of the points in 60s")
		}
	}
}

// BenchmarkBackfill backfills a generated mem0-shaped collection of 5,000
// points on the embedded store and reports points/s.
func BenchmarkBackfill(b *testing.B) {
	const n = 5000
	set := mem0Set(n)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		client, eng, closeAll := openAt(b, b.TempDir())
		seedForeign(b, client, "mem0", set)
		bf := killBackfill()
		b.StartTimer()
		start := time.Now()
		if _, err := eng.Backfill(context.Background(), bf); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		b.StopTimer()
		closeAll()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "points/s")
}
