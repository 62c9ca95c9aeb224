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
	"strings"
	"testing"
	"time"

	"github.com/memrank/memrank/internal/demo"
)

// pyDir is the Python SDK, from this package's directory.
const pyDir = "../../sdk/python"

// python3 returns the python3 binary (3.9 or later), or skips the test
// saying how to run it (needTool).
func python3(t *testing.T) string {
	t.Helper()
	const how = "install Python 3.9+, then `go test -run TestSDKPython ./cmd/memrank/`"
	py := needTool(t, "MEMRANK_PY_TESTS", "python3", how)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "-c", "import sys; assert sys.version_info >= (3, 9), sys.version").CombinedOutput()
	if err != nil {
		skipOrFail(t, "MEMRANK_PY_TESTS", fmt.Sprintf("%s is not Python 3.9 or later: %v %s: %s", py, err, bytes.TrimSpace(out), how))
	}
	return py
}

// pyResult is one line of unittest's -v report: "name (module.Class...) ... ok".
var pyResult = regexp.MustCompile(`(?m)^(\w+) \((test_\w+)\.(\w+)[^)]*\) \.\.\. (\w+)`)

// TestSDKPython runs the Python SDK's tests (sdk/python/tests, unittest)
// against three real serves: the demo on the embedded store, one with
// tenants by API key and one with tenants from a trusted header. The live
// tests must run, not skip: a skip here would mean the SDK was tested
// against nothing.
func TestSDKPython(t *testing.T) {
	py := python3(t)
	dir, err := filepath.Abs(pyDir)
	if err != nil {
		t.Fatal(err)
	}
	demoAddr, _, _ := startServe(t, "--demo", "--data", t.TempDir())
	keysAddr, _, _ := startServeEnv(t, []string{
		"MEMRANK_TENANCY__KEY=user_id",
		// The keys test_live.py uses.
		"MEMRANK_TENANCY__API_KEYS=sdkpy-key-alice=alice,sdkpy-key-bob=bob",
	}, "--data", t.TempDir())
	headerAddr, _, _ := startServeEnv(t, []string{
		"MEMRANK_TENANCY__KEY=user_id",
		"MEMRANK_TENANCY__HEADER=x-tenant",
	}, "--data", t.TempDir())

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-m", "unittest", "discover", "-v", "-s", filepath.Join(dir, "tests"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"MEMRANK_URL=http://"+demoAddr,
		"DEMO_QUESTION="+demo.Queries()[0].Text, "DEMO_TOP="+demo.Queries()[0].Top,
		"MEMRANK_TENANCY_URL=http://"+keysAddr,
		"MEMRANK_TENANT_HEADER_URL=http://"+headerAddr,
		"PYTHONDONTWRITEBYTECODE=1", // no __pycache__ in the source tree
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%w (timed out)", err)
		}
		t.Fatalf("python3 -m unittest: %v\n%s", err, out.String())
	}

	passed := map[string]int{}
	for _, m := range pyResult.FindAllStringSubmatch(out.String(), -1) {
		name, module, class, result := m[1], m[2], m[3], m[4]
		switch {
		case result == "ok":
			passed[module+"."+class]++
		case module == "test_live":
			t.Errorf("%s.%s.%s: %s, want ok: the live tests must run here", module, class, name, result)
		}
	}
	for _, class := range []string{"test_client.RequestsTest", "test_client.ErrorsTest", "test_live.LiveTest", "test_live.TenancyTest", "test_live.TenantHeaderTest"} {
		if passed[class] == 0 {
			t.Errorf("no test of %s passed", class)
		}
	}
	if t.Failed() {
		t.Logf("unittest's report:\n%s", out.String())
	} else if !strings.Contains(out.String(), "\nOK") {
		t.Errorf("unittest did not report OK:\n%s", out.String())
	}
}
