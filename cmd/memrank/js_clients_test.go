package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// jsDir is the JS client tests' package, from this package's directory.
const jsDir = "../../test/js"

// jsPackages are the packages plain_collection.mjs imports; npm ci installs
// them from test/js/package-lock.json.
var jsPackages = []string{"@qdrant/js-client-rest", "@langchain/qdrant", "@langchain/core"}

// jsNode returns the node binary and the absolute test/js directory, or
// skips the test saying how to run it (needTool).
func jsNode(t *testing.T) (node, dir string) {
	t.Helper()
	var files []string
	for _, p := range jsPackages {
		files = append(files, filepath.Join(jsDir, "node_modules", p, "package.json"))
	}
	node = needTool(t, "MEMRANK_JS_TESTS", "node",
		"install Node 20+ and run `npm ci --prefix test/js`, then `go test -run TestJSClients ./cmd/memrank/`", files...)
	return node, absDir(t, jsDir)
}

// jsReport is what plain_collection.mjs prints.
type jsReport struct {
	LCDocs       []jsCheck         `json:"lc_docs"`
	Plain        []jsCheck         `json:"plain"`
	Mem          jsPair            `json:"mem"`
	ScrollBefore map[string]string `json:"scroll_before"`
	ScrollAfter  map[string]string `json:"scroll_after"`
	Warnings     []string          `json:"warnings"`
	Traffic      []jsExchange      `json:"traffic"`
}

// jsCheck is one call made the same way through memrank and the store.
type jsCheck struct {
	Name string `json:"name"`
	jsPair
}

type jsPair struct {
	Direct  jsOutcome `json:"direct"`
	Memrank jsOutcome `json:"memrank"`
}

// jsOutcome is a call's value or the error it threw, kept as JSON so that
// numbers compare as the server wrote them.
type jsOutcome struct {
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// value decodes the outcome for comparison, numbers as written.
func (o jsOutcome) value(t *testing.T) any {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(o.raw()))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("outcome %s: %v", o.raw(), err)
	}
	return v
}

func (o jsOutcome) raw() []byte {
	b, _ := json.Marshal(o)
	return b
}

type jsExchange struct {
	Side   string `json:"side"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"`
	Body   string `json:"body"`
	Error  string `json:"error"`
}

// TestJSClients runs Qdrant's official JS client and LangChain.js
// (test/js/plain_collection.mjs) against `memrank serve` in front of
// `memrank qdrant-compat`, and against the store itself over qdrant-compat's
// REST API. Plain collections, a LangChain one and one written with the JS
// client whose payloads carry fields memories also have, must be served
// exactly as the store serves them (the same ids, order, scores and
// payloads) and never written to; a collection of memrank memory records
// must be re-ranked with no configuration.
func TestJSClients(t *testing.T) {
	node, dir := jsNode(t)
	compat, _ := startQdrantCompat(t, t.TempDir(), []string{"gRPC", "REST"},
		"--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0")
	// A short flush interval, so that any access counts memrank writes land
	// while the script waits, before its last scroll.
	httpAddr, _, _ := startServeEnv(t, []string{"MEMRANK_ACCESS__FLUSH_INTERVAL=200ms"},
		"--upstream", compat["gRPC"], "--replica-id", "js")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "plain_collection.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DIRECT=http://"+compat["REST"], "MEMRANK=http://"+httpAddr, "SETTLE_MS=1000")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%w (timed out)", err)
		}
		t.Fatalf("node plain_collection.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	var rep jsReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("plain_collection.mjs printed no report: %v\nstdout:\n%.2000s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if len(rep.Warnings) > 0 {
		t.Logf("JS client warnings: %q", rep.Warnings)
	}
	for _, x := range rep.Traffic {
		if x.Status != 200 {
			t.Logf("%s answered %s %s with %d %s%s", x.Side, x.Method, x.Path, x.Status, x.Body, x.Error)
		}
	}

	t.Run("plain collections are served as the store serves them", func(t *testing.T) {
		checks := map[string][]jsCheck{"lc_docs": rep.LCDocs, "plain": rep.Plain}
		for _, coll := range []string{"lc_docs", "plain"} {
			if len(checks[coll]) == 0 {
				t.Errorf("%s: the script made no calls", coll)
			}
			for _, c := range checks[coll] {
				// The store does not implement MMR (LangChain's
				// maxMarginalRelevanceSearch): memrank must fail the same
				// way. Every other call must work on the store, or the
				// comparison proves nothing.
				mmr := strings.HasPrefix(c.Name, "maxMarginalRelevanceSearch")
				if c.Direct.Error != nil && !mmr {
					t.Errorf("%s: %s failed on the store itself: %s", coll, c.Name, c.Direct.Error)
				}
				if diff := cmp.Diff(c.Direct.value(t), c.Memrank.value(t)); diff != "" {
					t.Errorf("%s: %s: memrank's answer differs from the store's (-store +memrank):\n%s", coll, c.Name, diff)
				}
			}
		}
	})

	t.Run("plain collections are not written", func(t *testing.T) {
		for _, coll := range []string{"lc_docs", "plain"} {
			before, after := rep.ScrollBefore[coll], rep.ScrollAfter[coll]
			if before == "" || after == "" {
				t.Errorf("%s: no scroll before (%d bytes) or after (%d bytes) the reads", coll, len(before), len(after))
				continue
			}
			if before == after {
				continue
			}
			var b, a any
			if err := json.Unmarshal([]byte(before), &b); err != nil {
				t.Fatalf("%s: scroll before: %v", coll, err)
			}
			if err := json.Unmarshal([]byte(after), &a); err != nil {
				t.Fatalf("%s: scroll after: %v", coll, err)
			}
			t.Errorf("%s: the stored points changed while memrank served reads (-before +after):\n%s", coll, cmp.Diff(b, a))
		}
	})

	t.Run("a memory collection is re-ranked", func(t *testing.T) {
		direct, memrank := memPoints(t, "store", rep.Mem.Direct), memPoints(t, "memrank", rep.Mem.Memrank)
		ids := func(ps []scored) []string {
			out := make([]string, len(ps))
			for i, p := range ps {
				out[i] = p.ID.String()
			}
			return out
		}
		// As built: by similarity the old, never-read memory comes first.
		if diff := cmp.Diff([]string{"101", "102", "103"}, ids(direct)); diff != "" {
			t.Fatalf("the store's own order is not the designed one (-want +got):\n%s", diff)
		}
		got := ids(memrank)
		pos := map[string]int{}
		for i, id := range got {
			pos[id] = i + 1
		}
		if pos["101"] == 0 || pos["102"] == 0 || pos["102"] > pos["101"] {
			t.Errorf("memrank's order %v: want the fresh, confident, much-read 102 re-ranked above the old, never-read 101, both returned", got)
		}
		if cmp.Equal(got, ids(direct)) {
			t.Errorf("memrank's order %v is the store's: not re-ranked", got)
		}
		// Every result is returned with its weight: 102's reads lift its
		// score above its similarity (101, never read and answered with
		// no focus on recent memories, keeps its own); the scores never
		// increase down the list.
		sim := map[string]json.Number{}
		for _, p := range direct {
			sim[p.ID.String()] = p.Score
		}
		prev := math.Inf(1)
		for _, p := range memrank {
			id := p.ID.String()
			if s, ok := sim[id]; ok && s == p.Score && id == "102" {
				t.Errorf("memrank's score of %s is its similarity %s, not its weight", p.ID, s)
			}
			f, err := p.Score.Float64()
			if err != nil || f > prev {
				t.Errorf("memrank's scores increase down the list at %s: %s after %v", id, p.Score, prev)
			}
			prev = f
		}
	})
}

// scored is a point of a query's answer.
type scored struct {
	ID    json.Number `json:"id"`
	Score json.Number `json:"score"`
}

// memPoints reads the points of a query's outcome.
func memPoints(t *testing.T, side string, o jsOutcome) []scored {
	t.Helper()
	if o.Error != nil {
		t.Fatalf("mem query through %s failed: %s", side, o.Error)
	}
	var r struct{ Points []scored }
	d := json.NewDecoder(bytes.NewReader(o.Result))
	d.UseNumber()
	if err := d.Decode(&r); err != nil {
		t.Fatalf("mem query through %s: %v: %s", side, err, o.Result)
	}
	return r.Points
}
