package store_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"

	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// crashServerEnv, when set to a data directory, turns the test binary into
// a store server (see TestMain): it serves on 127.0.0.1:0, prints
// "ADDR host:port" and runs until killed or until its stdin closes, so an
// orphan never outlives the test.
const crashServerEnv = "MEMRANK_STORE_CRASH_SERVER_DIR"

func runCrashServer(dir string) int {
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("ADDR %s\n", lis.Addr())
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	if err := upstream.Serve(ctx, store.NewServer(db), lis, time.Second); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type serverProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string
}

func startServer(t *testing.T, dir string) *serverProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashServerEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serverProc{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
				addrc <- a
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case p.addr = <-addrc:
	case <-time.After(30 * time.Second):
		t.Fatal("server did not print its address within 30s")
	}
	return p
}

func connectTCP(t *testing.T, addr string) *qdrant.Client {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, PoolSize: 1, VersionCheckTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A server killed with SIGKILL in the middle of a write loop loses no
// acknowledged write: after a restart on the same directory every
// acknowledged point is there with its payload, the payload index still
// answers, and the bbolt file passes its consistency check.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir := t.TempDir()
	srv := startServer(t, dir)
	c := connectTCP(t, srv.addr)
	opctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.CreateCollection(opctx, &qdrant.CreateCollection{CollectionName: "crash",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 4, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateFieldIndex(opctx, &qdrant.CreateFieldIndexCollection{CollectionName: "crash", FieldName: "n",
		FieldType: qdrant.FieldType_FieldTypeInteger.Enum()}); err != nil {
		t.Fatal(err)
	}

	// The writer upserts small batches until a write fails (the kill).
	var mu sync.Mutex
	var acked []uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := uint64(0); i < 100000; i += 4 {
			batch := make([]*qdrant.PointStruct, 4)
			for j := range batch {
				id := i + uint64(j)
				batch[j] = &qdrant.PointStruct{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectors(float32(id%7)+1, float32(id%5), 1, 0),
					Payload: qdrant.NewValueMap(map[string]any{"n": int64(id), "s": fmt.Sprintf("value-%d", id), "f": float64(id) + 0.5})}
			}
			wctx, wcancel := context.WithTimeout(opctx, 5*time.Second)
			_, err := c.Upsert(wctx, &qdrant.UpsertPoints{CollectionName: "crash", Wait: qdrant.PtrOf(true), Points: batch})
			wcancel()
			if err != nil {
				return
			}
			mu.Lock()
			for j := range batch {
				acked = append(acked, i+uint64(j))
			}
			mu.Unlock()
		}
	}()
	// Kill once a few hundred points are acknowledged, while writes run.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 400 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := srv.cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = srv.cmd.Wait()
	<-done
	_ = c.Close()
	mu.Lock()
	want := append([]uint64(nil), acked...)
	mu.Unlock()
	if len(want) == 0 {
		t.Fatal("no write was acknowledged before the kill")
	}
	t.Logf("%d points acknowledged before SIGKILL", len(want))

	srv2 := startServer(t, dir)
	c2 := connectTCP(t, srv2.addr)
	defer c2.Close()
	for i, p := range getAcked(opctx, t, c2, want) {
		id := want[i]
		pl := p.GetPayload()
		if pl["n"].GetIntegerValue() != int64(id) || pl["s"].GetStringValue() != fmt.Sprintf("value-%d", id) || pl["f"].GetDoubleValue() != float64(id)+0.5 {
			t.Fatalf("point %d payload = %v", id, pl)
		}
	}
	last := want[len(want)-1]
	n, err := c2.Count(opctx, &qdrant.CountPoints{CollectionName: "crash", Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("n", int64(last))}}})
	if err != nil || n != 1 {
		t.Fatalf("indexed filter on the last acknowledged point: %d, %v", n, err)
	}
	// Stop the second server cleanly (stdin EOF) and check the file.
	_ = srv2.stdin.Close()
	if err := srv2.cmd.Wait(); err != nil {
		t.Fatalf("second server exit: %v", err)
	}
	bdb, err := bolt.Open(filepath.Join(dir, store.FileName), 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	err = bdb.View(func(tx *bolt.Tx) error {
		var first error
		for err := range tx.Check() {
			if first == nil {
				first = err
			}
		}
		return first
	})
	if err != nil {
		t.Fatalf("bbolt consistency check: %v", err)
	}
}

// SIGKILL while concurrent writers share commits and payload-only batches
// (the access flush's shape) commit beside them: after reopening, every
// acknowledged write is there and no batch is half applied.
func TestCrashKeepsGroupedAndPayloadWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir := t.TempDir()
	srv := startServer(t, dir)
	c := connectTCP(t, srv.addr)
	opctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const flushed = 32
	if err := c.CreateCollection(opctx, &qdrant.CreateCollection{CollectionName: "crash",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 4, Distance: qdrant.Distance_Dot})}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateFieldIndex(opctx, &qdrant.CreateFieldIndexCollection{CollectionName: "crash", FieldName: "gen",
		FieldType: qdrant.FieldType_FieldTypeInteger.Enum()}); err != nil {
		t.Fatal(err)
	}
	seed := make([]*qdrant.PointStruct, flushed)
	for i := range seed {
		seed[i] = &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i)), Vectors: qdrant.NewVectors(1, 0, 0, 0),
			Payload: qdrant.NewValueMap(map[string]any{"gen": 0})}
	}
	if _, err := c.Upsert(opctx, &qdrant.UpsertPoints{CollectionName: "crash", Wait: qdrant.PtrOf(true), Points: seed}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var acked []uint64 // upserted ids
	var lastGen int64  // last acknowledged flush
	var wg sync.WaitGroup
	const writers = 4
	for w := range uint64(writers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := uint64(0); i < 20000; i++ {
				id := 1000 + i*writers + w
				wctx, wcancel := context.WithTimeout(opctx, 5*time.Second)
				_, err := c.Upsert(wctx, &qdrant.UpsertPoints{CollectionName: "crash", Wait: qdrant.PtrOf(true),
					Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectors(0, 1, 0, 0),
						Payload: qdrant.NewValueMap(map[string]any{"n": int64(id)})}}})
				wcancel()
				if err != nil {
					return
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := int64(1); k < 20000; k++ {
			req := &qdrant.UpdateBatchPoints{CollectionName: "crash", Wait: qdrant.PtrOf(true)}
			for i := range uint64(flushed) {
				req.Operations = append(req.Operations, qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
					Payload: qdrant.NewValueMap(map[string]any{"gen": k}), PointsSelector: qdrant.NewPointsSelector(qdrant.NewIDNum(i)),
				}))
			}
			wctx, wcancel := context.WithTimeout(opctx, 5*time.Second)
			_, err := c.UpdateBatch(wctx, req)
			wcancel()
			if err != nil {
				return
			}
			mu.Lock()
			lastGen = k
			mu.Unlock()
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n, g := len(acked), lastGen
		mu.Unlock()
		if (n >= 300 && g >= 20) || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := srv.cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = srv.cmd.Wait()
	wg.Wait()
	_ = c.Close()
	mu.Lock()
	want, wantGen := append([]uint64(nil), acked...), lastGen
	mu.Unlock()
	if len(want) == 0 || wantGen == 0 {
		t.Fatalf("acknowledged before the kill: %d upserts, flush %d", len(want), wantGen)
	}
	t.Logf("acknowledged before SIGKILL: %d single-point upserts from %d writers, %d flushes", len(want), writers, wantGen)

	srv2 := startServer(t, dir)
	c2 := connectTCP(t, srv2.addr)
	defer c2.Close()
	for _, p := range getAcked(opctx, t, c2, want) {
		if p.GetPayload()["n"].GetIntegerValue() != int64(p.GetId().GetNum()) {
			t.Fatalf("point %d payload = %v", p.GetId().GetNum(), p.GetPayload())
		}
	}
	ids := make([]*qdrant.PointId, flushed)
	for i := range ids {
		ids[i] = qdrant.NewIDNum(uint64(i))
	}
	got, err := c2.Get(opctx, &qdrant.GetPoints{CollectionName: "crash", Ids: ids, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil || len(got) != flushed {
		t.Fatalf("flushed points: %d, %v", len(got), err)
	}
	gen := got[0].GetPayload()["gen"].GetIntegerValue()
	for _, p := range got {
		if g := p.GetPayload()["gen"].GetIntegerValue(); g != gen {
			t.Fatalf("half a flush after reopen: gens %d and %d", gen, g)
		}
	}
	if gen < wantGen {
		t.Fatalf("flush %d was acknowledged but the points hold %d", wantGen, gen)
	}
	n, err := c2.Count(opctx, &qdrant.CountPoints{CollectionName: "crash", Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("gen", gen)}}})
	if err != nil || n != flushed {
		t.Fatalf("index on gen %d after reopen: %d points, %v", gen, n, err)
	}
	_ = srv2.stdin.Close()
	if err := srv2.cmd.Wait(); err != nil {
		t.Fatalf("second server exit: %v", err)
	}
}

// getAcked reads the acknowledged points of collection "crash" back, in
// the order of ids (Get answers in request order), failing if any is gone.
func getAcked(ctx context.Context, t *testing.T, c *qdrant.Client, ids []uint64) []*qdrant.RetrievedPoint {
	t.Helper()
	var out []*qdrant.RetrievedPoint
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		req := &qdrant.GetPoints{CollectionName: "crash", WithPayload: qdrant.NewWithPayload(true)}
		for _, id := range chunk {
			req.Ids = append(req.Ids, qdrant.NewIDNum(id))
		}
		got, err := c.Get(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(chunk) {
			t.Fatalf("%d of %d acknowledged points came back", len(got), len(chunk))
		}
		out = append(out, got...)
	}
	return out
}
