package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/internal/demo"
)

// mcpTSDir is the TypeScript MCP client test's package, from this
// package's directory.
const mcpTSDir = "../../test/mcp"

// mcpNode returns the node binary and the absolute test/mcp directory, or
// skips the test saying how to run it (needTool).
func mcpNode(t *testing.T) (node, dir string) {
	t.Helper()
	node = needTool(t, "MEMRANK_JS_TESTS", "node",
		"install Node 20+ and run `npm ci --prefix test/mcp`, then `go test -run TestMCPTypeScriptClient ./cmd/memrank/`",
		filepath.Join(mcpTSDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	return node, absDir(t, mcpTSDir)
}

// tsHit is one result of a recall or a retrieve, as the script reports it.
type tsHit struct {
	ID         string   `json:"id"`
	Score      float64  `json:"score"`
	Confidence *float64 `json:"confidence"`
	Tier       *string  `json:"tier"`
	Text       string   `json:"text"`
}

type tsPair struct {
	MCP     []tsHit `json:"mcp"`
	Native  []tsHit `json:"native"`
	Summary string  `json:"summary"`
}

type tsCall struct {
	IsError    bool            `json:"isError"`
	Text       string          `json:"text"`
	Structured json.RawMessage `json:"structured"`
}

type tsNative struct {
	Status int `json:"status"`
	Body   struct {
		Result *nativeMemory `json:"result"`
	} `json:"body"`
}

// tsReport is what mcp_client.mjs prints.
type tsReport struct {
	Tools    []string `json:"tools"`
	RecallAt *struct {
		Type   string `json:"type"`
		Format string `json:"format"`
	} `json:"recall_at"`
	RememberSpeaker *struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	} `json:"remember_speaker"`
	AsOf struct {
		IsError  bool   `json:"isError"`
		At       string `json:"at"`
		Memories *int   `json:"memories"`
		Text     string `json:"text"`
	} `json:"as_of"`
	BadAt     tsCall   `json:"bad_at"`
	Demo      tsPair   `json:"demo"`
	Remember  tsCall   `json:"remember"`
	Stored    tsNative `json:"stored"`
	Recall    tsPair   `json:"recall"`
	Confirm   tsCall   `json:"confirm"`
	Confirmed tsNative `json:"confirmed"`
	Forget    tsCall   `json:"forget"`
	Forgotten tsNative `json:"forgotten"`
	BadInput  tsCall   `json:"bad_input"`
	NotFound  tsCall   `json:"not_found"`
}

// TestMCPTypeScriptClient runs the official MCP TypeScript SDK's client
// (test/mcp/mcp_client.mjs) against `memrank serve --demo`'s /mcp: it
// recalls the demo question, remembers, recalls, confirms and forgets, and
// each answer must be what the native API answers for the same thing (the
// SDK's client checks each structured answer against the tool's output
// schema); bad input and a missing memory are tool errors.
func TestMCPTypeScriptClient(t *testing.T) {
	node, dir := mcpNode(t)
	httpAddr, _, _ := startServeEnv(t, []string{"MEMRANK_ACCESS__FLUSH_INTERVAL=1h"}, "--demo", "--data", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "mcp_client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MEMRANK_URL=http://"+httpAddr, "COLLECTION=mcp_ts",
		"DEMO_COLLECTION="+demo.Collection, "DEMO_QUESTION="+demo.Queries()[0].Text)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node mcp_client.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	var r tsReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("the report: %v\n%s", err, stdout.String())
	}
	checkTSReport(t, r)
}

func checkTSReport(t *testing.T, r tsReport) {
	t.Helper()
	if diff := cmp.Diff([]string{"confirm", "correct", "forget", "recall", "remember", "stats"}, r.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if r.RecallAt == nil || r.RecallAt.Type != "string" || r.RecallAt.Format != "date-time" {
		t.Errorf("recall's at in the tool list: %+v, want an optional date-time string", r.RecallAt)
	}
	if r.RememberSpeaker == nil || r.RememberSpeaker.Type != "string" || !strings.Contains(r.RememberSpeaker.Description, "who said") {
		t.Errorf("remember's speaker in the tool list: %+v, want an optional string saying who said it", r.RememberSpeaker)
	}
	if r.AsOf.IsError || r.AsOf.At != "2020-01-01T00:00:00Z" || r.AsOf.Memories == nil || *r.AsOf.Memories != 0 ||
		!strings.Contains(r.AsOf.Text, "as of 2020-01-01T00:00:00Z") {
		t.Errorf("recall as of 2020, before the collection's first memory: %+v, want no memory and the time echoed", r.AsOf)
	}
	if !r.BadAt.IsError || !strings.Contains(r.BadAt.Text, `at: "last spring" is not an RFC 3339 time`) {
		t.Errorf("recall with at \"last spring\": %+v, want a tool error naming at", r.BadAt)
	}
	top := demo.Queries()[0].Top
	if len(r.Demo.MCP) != 3 || !strings.Contains(r.Demo.MCP[0].Text, top) || !strings.Contains(r.Demo.Summary, top) {
		t.Errorf("the demo question: %+v, want 3 memories, the first holding %q", r.Demo, top)
	}
	for name, p := range map[string]tsPair{"demo": r.Demo, "recall": r.Recall} {
		if diff := cmp.Diff(p.Native, p.MCP, sameScores); diff != "" {
			t.Errorf("%s: recall differs from /v1/retrieve (-native +mcp):\n%s", name, diff)
		}
	}
	var ins struct {
		Decision   string  `json:"decision"`
		MemoryID   string  `json:"memory_id"`
		Confidence float64 `json:"confidence"`
	}
	if err := json.Unmarshal(r.Remember.Structured, &ins); err != nil || r.Remember.IsError || ins.Decision != "inserted" {
		t.Fatalf("remember: %+v (%v)", r.Remember, err)
	}
	if r.Stored.Status != 200 || r.Stored.Body.Result.Payload.Confidence != ins.Confidence || r.Stored.Body.Result.Payload.Text != "Dana's sister lives in Osaka" ||
		r.Stored.Body.Result.Payload.Speaker != "Dana" {
		t.Errorf("the stored memory: %+v, want the text with confidence %v, said by Dana", r.Stored, ins.Confidence)
	}
	if len(r.Recall.MCP) == 0 || r.Recall.MCP[0].ID != ins.MemoryID {
		t.Errorf("recall: %+v, want %s first", r.Recall.MCP, ins.MemoryID)
	}
	var conf struct {
		Decision     string  `json:"decision"`
		Confidence   float64 `json:"confidence"`
		Observations int     `json:"observations"`
	}
	if err := json.Unmarshal(r.Confirm.Structured, &conf); err != nil || conf.Decision != "confirmed" {
		t.Fatalf("confirm: %+v (%v)", r.Confirm, err)
	}
	if p := r.Confirmed.Body.Result.Payload; p.Confidence != conf.Confidence || p.Observations != conf.Observations || conf.Confidence <= ins.Confidence {
		t.Errorf("after confirm the memory is %+v, the tool said %+v", p, conf)
	}
	if r.Forget.IsError || !strings.Contains(r.Forget.Text, "Forgot memory "+ins.MemoryID) || r.Forgotten.Status != 404 {
		t.Errorf("forget: %+v, then the native API answers %d (want 404)", r.Forget, r.Forgotten.Status)
	}
	if !r.BadInput.IsError || !strings.Contains(r.BadInput.Text, "exactly one of session_id and memory_id") {
		t.Errorf("forget with both ids: %+v, want a tool error", r.BadInput)
	}
	if !r.NotFound.IsError || !strings.Contains(r.NotFound.Text, "HTTP 404") {
		t.Errorf("confirming a forgotten memory: %+v, want a 404 tool error", r.NotFound)
	}
}
