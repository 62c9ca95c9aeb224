package deploy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The memrank binary the tests run: built once per test binary from the
// repository's main module (the directory above this module).
var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
	buildDir  string
)

// memrankBinary builds ../cmd/memrank (CGO off, as the image does) and
// returns its path.
func memrankBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "memrank-deploy-test-")
		if buildErr != nil {
			return
		}
		buildPath = filepath.Join(buildDir, "memrank")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=v0.0.0-test", "-o", buildPath, "./cmd/memrank")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// TestMain removes the binary built for the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// freeAddr returns a loopback address no one listens on (the port was free
// a moment ago).
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// process is a started binary whose output is kept for failure messages.
type process struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed when the process has exited
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs bin with args and env (added to a minimal environment) and
// stops it (SIGTERM, then kill after 15s) when the test ends.
func start(t testing.TB, bin string, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	p := &process{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := p.done
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return p
}

// qdrantCompat starts the embedded store alone (`memrank qdrant-compat`) as
// the Qdrant a deployment points at, and returns its gRPC address.
func qdrantCompat(t testing.TB) string {
	t.Helper()
	addr := freeAddr(t)
	p := start(t, memrankBinary(t), nil, "qdrant-compat", "--data", t.TempDir(), "--grpc", addr)
	waitTCP(t, addr, p)
	return addr
}

// waitTCP waits up to 20s for addr to accept connections.
func waitTCP(t testing.TB, addr string, p *process) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never accepted connections; output:\n%s", addr, p.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// probe GETs url until it answers 200 (up to 20s) and returns the body.
func probe(t testing.TB, url string, p *process) string {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(20 * time.Second)
	var last string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			cancel()
			if resp.StatusCode == http.StatusOK {
				return string(b)
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, b)
		} else {
			cancel()
			last = err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s never answered 200 (last: %s); output:\n%s", url, last, p.out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
