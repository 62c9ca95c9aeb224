package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/memrank/memrank/internal/demo"
)

// sdkJSDir is the TypeScript SDK, from this package's directory.
const sdkJSDir = "../../sdk/js"

// sdkJSNode returns the node binary and the absolute sdk/js directory, or
// skips the test saying how to run it (needTool) when node or the SDK's
// pinned TypeScript (which its tests compile dist/ with) is missing.
func sdkJSNode(t *testing.T) (node, dir string) {
	t.Helper()
	node = needTool(t, "MEMRANK_JS_TESTS", "node",
		"install Node 20+ and run `npm ci --prefix sdk/js`, then `go test -run TestSDKJS ./cmd/memrank/`",
		filepath.Join(sdkJSDir, "node_modules", "typescript", "package.json"))
	return node, absDir(t, sdkJSDir)
}

// tapCount reads a count of node's TAP summary ("# pass 12").
var tapCount = regexp.MustCompile(`(?m)^# (pass|fail|cancelled|todo) (\d+)$`)

// TestSDKJS runs the TypeScript SDK's tests (sdk/js/test, node's test
// runner) against real servers: `memrank serve --demo` with tenancy off,
// one with tenants by API key and one with tenants by a trusted header, as
// sdk/js/test/helpers.mjs describes them. Node's output is the failure's
// message. Every test must run: a skip fails here too.
func TestSDKJS(t *testing.T) {
	node, dir := sdkJSNode(t)
	demoAddr, _, _ := startServe(t, "--demo", "--data", t.TempDir())
	byKey, _, _ := startServeEnv(t, []string{
		"MEMRANK_TENANCY__KEY=user_id",
		"MEMRANK_TENANCY__API_KEYS=sdk-key-alice=alice,sdk-key-bob=bob",
		"MEMRANK_TENANCY__ADMIN_API_KEYS=[sdk-key-admin]",
	}, "--data", t.TempDir())
	byHeader, _, _ := startServeEnv(t, []string{
		"MEMRANK_TENANCY__KEY=user_id",
		"MEMRANK_TENANCY__HEADER=x-tenant",
	}, "--data", t.TempDir())

	files, err := filepath.Glob(filepath.Join(dir, "test", "*.test.mjs"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in sdk/js/test (%v)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"--test", "--test-reporter=tap"}, files...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"MEMRANK_URL=http://"+demoAddr,
		"DEMO_QUESTION="+demo.Queries()[0].Text, "DEMO_TOP="+demo.Queries()[0].Top,
		"MEMRANK_TENANCY_URL=http://"+byKey,
		"MEMRANK_TENANT_HEADER_URL=http://"+byHeader,
		"MEMRANK_JS_TESTS=require", // everything is here: nothing may skip
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%w (timed out)", err)
	}
	counts := map[string]int{}
	for _, m := range tapCount.FindAllStringSubmatch(stdout.String(), -1) {
		counts[m[1]], _ = strconv.Atoi(m[2])
	}
	skipped := bytes.Contains(stdout.Bytes(), []byte("# SKIP"))
	if err != nil || counts["pass"] == 0 || counts["fail"]+counts["cancelled"]+counts["todo"] > 0 || skipped {
		t.Fatalf("node --test sdk/js/test: %v; %v, skips: %v\nstdout:\n%s\nstderr:\n%s", err, counts, skipped, stdout.String(), stderr.String())
	}
	t.Logf("sdk/js: %d tests passed", counts["pass"])
}
