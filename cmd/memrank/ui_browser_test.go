package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memrank/memrank/internal/demo"

	"github.com/google/go-cmp/cmp"
)

// uiDir is the explain page's browser test (test/ui), from this package's
// directory.
const uiDir = "../../test/ui"

// uiBrowser returns node, Chromium and the absolute test/ui directory, or
// skips the test saying how to run it (needTool; MEMRANK_UI_TESTS).
func uiBrowser(t *testing.T) (node, chromium, dir string) {
	t.Helper()
	chromium = os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	node = needTool(t, "MEMRANK_UI_TESTS", "node",
		"install Node 20+ and Chromium (Debian: apt-get install chromium; or set CHROMIUM), run `npm ci --prefix test/ui`, then `go test -run TestUIBrowser ./cmd/memrank/`",
		chromium, filepath.Join(uiDir, "node_modules", "playwright-core", "package.json"))
	return node, chromium, absDir(t, uiDir)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// uiReport is what explain.mjs prints.
type uiReport struct {
	Checks []string `json:"checks"`
	First  struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	} `json:"first"`
	Bars       map[string]float64 `json:"bars"`
	Folded     int                `json:"folded"`
	Dropped    int                `json:"dropped"`
	Audit      []string           `json:"audit"`
	Screenshot string             `json:"screenshot"`
}

// uiKey is the store's API key in TestUIBrowser: the page must ask for it.
const uiKey = "explain-page-key"

// uiCall is one bounded request to the server under test, with its key.
func uiCall(t *testing.T, method, url, body string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Api-Key", uiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s %v", method, url, resp.StatusCode, b, err)
	}
	return b
}

// accessState is what reading a memory as an access changes in its payload.
func accessState(t *testing.T, base, id string) string {
	t.Helper()
	var m struct {
		Result struct {
			Payload map[string]json.RawMessage `json:"payload"`
		} `json:"result"`
	}
	b := uiCall(t, http.MethodGet, base+"/v1/memories/"+id+"?collection=dana_memories", "")
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("memory %s: %v: %s", id, err, b)
	}
	return fmt.Sprintf("access_counts %s, last_accessed_at %s", m.Result.Payload["access_counts"], m.Result.Payload["last_accessed_at"])
}

// TestUIBrowser runs the explain page (GET /ui) in headless Chromium
// against `memrank serve --demo` with a store key (test/ui/explain.mjs): it
// is refused until the key is entered, then it asks the demo's
// question, checks the first result and the width of each of its bars
// against the answer, opens its audit trail and checks the stats. The
// page's reads must not count as accesses, and a memory's markup must show
// as text. Then it attacks: the page by a
// name rebound to memrank's address, and requests from a page of another
// origin, are refused (the host guard); on a second serve whose port needs
// no credential, a page on the rebound name cannot read the API with
// same-origin GETs either. MEMRANK_UI_SCREENSHOT=path keeps
// the screenshot there (docs/img/explain-page.png is taken so).
func TestUIBrowser(t *testing.T) {
	node, chromium, dir := uiBrowser(t)
	// Accesses are flushed at once, so that any the page counted would be
	// in the payload when it is read again.
	// The store asks for a key, as a shared deployment would.
	httpAddr, _, _ := startServeEnv(t, []string{"MEMRANK_ACCESS__FLUSH_INTERVAL=50ms", "MEMRANK_STORE__API_KEY=" + uiKey},
		"--demo", "--data", t.TempDir())
	base := "http://" + httpAddr
	// The rebinding attack's target: the demo with no key.
	openAddr, _, _ := startServeEnv(t, nil, "--demo", "--data", t.TempDir())

	// The memory the page must put first, confirmed once so that its audit
	// trail has a record to show. Asked with the page's limit: the
	// candidates are oversampled from the limit, so the first of a shorter
	// answer can be another memory.
	var ans struct {
		Result []struct {
			ID json.RawMessage `json:"id"`
		} `json:"result"`
	}
	b := uiCall(t, http.MethodPost, base+"/v1/retrieve", `{"collection":"dana_memories","text":"where does Dana live","limit":10,"count_access":false}`)
	if err := json.Unmarshal(b, &ans); err != nil || len(ans.Result) == 0 {
		t.Fatalf("retrieve: %v: %s", err, b)
	}
	id := strings.Trim(string(ans.Result[0].ID), `"`)
	uiCall(t, http.MethodPost, base+"/v1/memories/"+id+"/confirm", `{"collection":"dana_memories","session_id":"explain-page-test"}`)
	before := accessState(t, base, id)
	// A memory whose text is markup, in a collection of its own.
	uiCall(t, http.MethodPost, base+"/v1/observe", `{"collection":"ui_markup","text":`+
		`"Her favourite tag is <img src=x onerror=\"window.__pwned=1\"><script>window.__pwned=2</script><b>bold</b>",`+
		`"memory_type":"fact","source":"direct","extractor_model":"claude-3-5-sonnet","session_id":"s-markup"}`)

	shot := filepath.Join(t.TempDir(), "explain-page.png")
	if keep := os.Getenv("MEMRANK_UI_SCREENSHOT"); keep != "" {
		// Relative to cmd/memrank, where go test runs.
		abs, err := filepath.Abs(keep)
		if err != nil {
			t.Fatal(err)
		}
		shot = abs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "explain.mjs")
	cmd.Dir = dir
	live := demo.Queries()[1] // "where does Dana live"
	cmd.Env = append(os.Environ(), "EXPECT_FIRST="+live.Top, "MEMRANK_URL="+base, "SCREENSHOT="+shot, "EXPECT_AUDIT=confirm", "MARKUP=ui_markup", "API_KEY="+uiKey, "CHROMIUM="+chromium,
		"OPEN_URL=http://"+openAddr)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%w (timed out)", err)
		}
		t.Fatalf("node explain.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var rep uiReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("explain.mjs printed no report: %v\nstdout:\n%.2000s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}

	want := []string{"page served with its security headers", "the API key is asked for and used", "stats rendered", "question asked, read-only (count_access false)",
		"first result's bars, guard and gates", "folded duplicates and left-out candidates", "audit history on click", "screenshot",
		"a linked question runs on load; a stats failure says so and retries", "a memory's markup is shown as text",
		"a rebound name is refused", "another origin's requests are refused", "a rebinding page's reads of an open port are refused"}
	if diff := cmp.Diff(want, rep.Checks); diff != "" {
		t.Errorf("checks passed (-want +got):\n%s", diff)
	}
	if rep.First.ID != id || !strings.Contains(rep.First.Text, live.Top) {
		t.Errorf("first result %+v, want %s, the memory holding %q", rep.First, id, live.Top)
	}
	for _, f := range []string{"base", "freshness", "freshness_factor", "boost", "confidence", "score"} {
		if w, ok := rep.Bars[f]; !ok || w <= 0 || w > 1 {
			t.Errorf("bar %s: width %v, want in (0, 1]", f, w)
		}
	}
	// The demo's own record, then the test's confirmation.
	if diff := cmp.Diff([]string{"backfill", "confirm"}, rep.Audit); diff != "" {
		t.Errorf("audit trail shown (-want +got):\n%s", diff)
	}
	if rep.Dropped == 0 {
		t.Error("the question left nothing out: the left-out texts were not checked")
	}
	checkScreenshot(t, shot)

	// The page asked with count_access false: nothing it returned was
	// counted. An ordinary retrieve afterwards is, which shows the check
	// above can see a count.
	time.Sleep(300 * time.Millisecond)
	if after := accessState(t, base, id); after != before {
		t.Errorf("the page's reads were counted as accesses: before %s, after %s", before, after)
	}
	uiCall(t, http.MethodPost, base+"/v1/retrieve", `{"collection":"dana_memories","text":"where does Dana live","limit":10}`)
	deadline := time.Now().Add(5 * time.Second)
	for accessState(t, base, id) == before {
		if time.Now().After(deadline) {
			t.Fatal("a counted retrieve changed nothing either: the access check proves nothing")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkScreenshot: the page was captured, at the viewport's size.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != 1440 || b.Dy() != 1100 {
		t.Errorf("screenshot is %dx%d, want the 1440x1100 viewport", b.Dx(), b.Dy())
	}
}

// TestUIServed: serve answers /ui with the page by default, and with the
// REST API's 404 when ui.enabled is false.
func TestUIServed(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		code    int
		ctype   string
	}{
		{"default: served", nil, http.StatusOK, "text/html; charset=utf-8"},
		{"ui.enabled false: not served", []string{"MEMRANK_UI__ENABLED=false"}, http.StatusNotFound, "application/json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			httpAddr, _, _ := startServeEnv(t, tc.environ, "--data", t.TempDir())
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+httpAddr+"/ui", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.code || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.ctype) {
				t.Errorf("GET /ui: %d %s, want %d %s", resp.StatusCode, resp.Header.Get("Content-Type"), tc.code, tc.ctype)
			}
		})
	}
}
