package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestObserveSurvivesSIGKILL runs `memrank serve` on the embedded store as
// its own process, has several writers observe over the native API, kills
// the process with SIGKILL at a random moment while writes are in flight,
// and restarts it on the same data directory, a few times. Every
// observation that was acknowledged (200 with its memory_id) must then be
// there: its memory, with the audit record of that observation. An
// acknowledgement is a promise that both commits are on disk.
func TestObserveSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts memrank five times")
	}
	exe := memrankExecutable(t)
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("kill points from seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	const kills, writers = 4, 6
	var acked []ackedObservation
	for round := range kills + 1 {
		srv := startServeProcess(t, exe, dir)
		verifyAcknowledged(t, srv.base, acked)
		if t.Failed() {
			srv.kill(t)
			return
		}
		if round == kills {
			srv.kill(t)
			break
		}
		// Kill once a random number of observations were acknowledged in
		// this round, with every writer still writing.
		killAt := 20 + rng.IntN(60)
		got := observeUntilKilled(t, srv, round, writers, killAt)
		t.Logf("round %d: killed after %d acknowledged observations (target %d)", round, len(got), killAt)
		acked = append(acked, got...)
	}
	if len(acked) < kills*20 {
		t.Errorf("only %d observations acknowledged over %d rounds", len(acked), kills)
	}
}

// ackedObservation is an observation memrank answered 200 to.
type ackedObservation struct {
	id, memoryID string
}

// observeUntilKilled runs writers that each send observations until the
// server is gone, and kills it (SIGKILL) once killAt were acknowledged. The
// texts repeat now and then, so that writes update stored memories as well
// as insert new ones.
func observeUntilKilled(t *testing.T, srv *serveProcess, round, writers, killAt int) []ackedObservation {
	t.Helper()
	var mu sync.Mutex
	var acked []ackedObservation
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	killed := make(chan struct{})
	var once sync.Once
	kill := func() { once.Do(func() { srv.kill(t); close(killed) }) }
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 20 * time.Second}
			// Bounded: the kill comes long before, unless every request fails.
			for i := range 2000 {
				if ctx.Err() != nil {
					return
				}
				obsID := fmt.Sprintf("r%d-w%d-%d", round, w, i)
				body, _ := json.Marshal(map[string]any{
					"collection": "crash", "text": crashFact(round*7+w*3+i, i%3 == 0),
					"source": "direct", "observation_id": obsID,
					"session_id": fmt.Sprintf("s-%d-%d-%d", round, w, i/4), "turn_id": fmt.Sprint(i),
				})
				memoryID, ok := observeOnce(ctx, client, srv.base, body)
				if !ok {
					select {
					case <-killed:
						return
					case <-ctx.Done():
						return
					case <-time.After(10 * time.Millisecond):
						continue // a refusal under load is no acknowledgement; try the next
					}
				}
				mu.Lock()
				acked = append(acked, ackedObservation{id: obsID, memoryID: memoryID})
				n := len(acked)
				mu.Unlock()
				if n >= killAt {
					kill()
					return
				}
			}
		}()
	}
	// However slow the machine, the round ends.
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Errorf("round %d: %d observations acknowledged in 60s, want %d", round, len(acked), killAt)
		kill()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	return acked
}

// crashFact is one of a few hundred statements; repeat picks among the
// first few, which every round sees again.
func crashFact(i int, repeat bool) string {
	names := []string{"Dana", "Omar", "Priya", "Lena", "Tomas", "Aiko", "Femi", "Rosa"}
	things := []string{"green tea", "chess", "Lisbon", "jazz", "ramen", "Volvo", "botany", "vinyl records", "padel", "Osaka"}
	if repeat {
		i %= 5
	}
	return fmt.Sprintf("%s likes %s (note %d)", names[i%len(names)], things[(i/len(names))%len(things)], i/80)
}

// observeOnce posts one observation; ok only for a 200 that names its memory.
func observeOnce(ctx context.Context, client *http.Client, base string, body []byte) (memoryID string, ok bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/observe", strings.NewReader(string(body)))
	if err != nil {
		return "", false
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", false
	}
	var out struct {
		Result struct {
			MemoryID string `json:"memory_id"`
		} `json:"result"`
	}
	if json.Unmarshal(b, &out) != nil || out.Result.MemoryID == "" {
		return "", false
	}
	return out.Result.MemoryID, true
}

// verifyAcknowledged checks that every acknowledged observation's memory
// is stored and its audit trail has the observation's record.
func verifyAcknowledged(t *testing.T, base string, acked []ackedObservation) {
	t.Helper()
	byMemory := map[string][]string{}
	for _, a := range acked {
		byMemory[a.memoryID] = append(byMemory[a.memoryID], a.id)
	}
	client := &http.Client{Timeout: 20 * time.Second}
	for id, obs := range byMemory {
		resp, err := client.Get(base + "/v1/memories/" + id + "?collection=crash")
		if err != nil {
			t.Fatalf("read memory %s: %v", id, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("memory %s of acknowledged observations %v: %d %s", id, obs, resp.StatusCode, b)
			continue
		}
		var view struct {
			Result struct {
				Audit []struct {
					ObservationID string `json:"observation_id"`
				} `json:"audit"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &view); err != nil {
			t.Fatalf("memory %s: %v: %s", id, err, b)
		}
		have := map[string]bool{}
		for _, r := range view.Result.Audit {
			have[r.ObservationID] = true
		}
		for _, o := range obs {
			if !have[o] {
				t.Errorf("acknowledged observation %s: memory %s has no audit record of it", o, id)
			}
		}
	}
}

// memrankExecutable is this test binary under the name memrank, which
// TestMain runs as the command (testscript's convention).
func memrankExecutable(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "memrank")
	if err := os.Symlink(self, exe); err != nil {
		t.Fatal(err)
	}
	return exe
}

// serveProcess is `memrank serve` running as a process of its own.
type serveProcess struct {
	cmd  *exec.Cmd
	base string
	done chan struct{} // closed when the process has exited
}

// startServeProcess starts memrank serve on loopback ports over dir and
// waits until it listens.
func startServeProcess(t *testing.T, exe, dir string) *serveProcess {
	t.Helper()
	cmd := exec.Command(exe, "serve", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0", "--data", dir)
	cmd.Env = append(os.Environ(), "MEMRANK_CONFIG=", "OTEL_EXPORTER_OTLP_ENDPOINT=", "MEMRANK_SHUTDOWN__DRAIN=0s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	var logMu sync.Mutex
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := listenLine.FindStringSubmatch(sc.Text() + " "); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill(t) })
	select {
	case a := <-addr:
		p.base = "http://" + a
		return p
	case <-p.done:
	case <-time.After(60 * time.Second):
	}
	p.kill(t)
	logMu.Lock()
	defer logMu.Unlock()
	t.Fatalf("memrank serve did not listen; stderr:\n%s", log.String())
	return nil
}

// kill sends SIGKILL and waits for the process to be gone; safe twice.
func (p *serveProcess) kill(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Errorf("memrank serve %d did not exit after SIGKILL", p.cmd.Process.Pid)
	}
}
