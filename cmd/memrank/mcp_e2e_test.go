package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/memrank/memrank/internal/demo"
	"github.com/memrank/memrank/server/mcpfront"
)

// mcpHeaders adds headers to every request of an MCP client, as a client
// configured with credentials does.
type mcpHeaders struct {
	header http.Header
	next   http.RoundTripper
}

func (h mcpHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range h.header {
		r.Header[k] = vs
	}
	return h.next.RoundTrip(r)
}

// mcpConnectHTTP connects the go-sdk's client to endpoint over streamable
// HTTP, sending header (name, value pairs) with every request.
func mcpConnectHTTP(t *testing.T, endpoint string, header ...string) *mcp.ClientSession {
	t.Helper()
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "memrank-e2e", Version: "v0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: mcpHeaders{h, tr}, Timeout: 20 * time.Second},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// mcpCall calls a tool, bounded; a protocol error fails the test (a tool
// error is a result).
func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// mcpOK calls a tool that must succeed and decodes its structured content
// into out; it returns the text summary.
func mcpOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	res := mcpCall(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s: tool error: %s", name, mcpText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, b, err)
	}
	return mcpText(res)
}

func mcpText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// nativeHit is what the comparisons read of a /v1/retrieve result.
type nativeHit struct {
	ID         string
	Score      float64
	Confidence *float64
	Freshness  *float64
	Tier       string
	Text       string
}

// nativeRetrieve asks the native API itself, over plain HTTP.
func nativeRetrieve(t *testing.T, base, collection, text string, limit int, header ...string) []nativeHit {
	t.Helper()
	return nativeRetrieveBody(t, base, map[string]any{"collection": collection, "text": text, "limit": limit}, header...)
}

// nativeRetrieveBody posts req to /v1/retrieve.
func nativeRetrieveBody(t *testing.T, base string, req map[string]any, header ...string) []nativeHit {
	t.Helper()
	body, _ := json.Marshal(req)
	code, b := jsonRequest(t, "POST", base+"/v1/retrieve", string(body), header...)
	if code != http.StatusOK {
		t.Fatalf("/v1/retrieve: %d %s", code, b)
	}
	var ans struct {
		Result []struct {
			ID         json.RawMessage `json:"id"`
			Score      float64         `json:"score"`
			Confidence *float64        `json:"confidence"`
			Freshness  *float64        `json:"freshness"`
			Tier       *string         `json:"tier"`
			Payload    struct {
				Text string `json:"text"`
			} `json:"payload"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(b), &ans); err != nil {
		t.Fatalf("/v1/retrieve: %v: %s", err, b)
	}
	var hits []nativeHit
	for _, r := range ans.Result {
		h := nativeHit{ID: strings.Trim(string(r.ID), `"`), Score: r.Score, Confidence: r.Confidence, Freshness: r.Freshness, Text: r.Payload.Text}
		if r.Tier != nil {
			h.Tier = *r.Tier
		}
		hits = append(hits, h)
	}
	return hits
}

// sameScores compares scores computed moments apart: freshness decays
// between the two queries.
var sameScores = cmpopts.EquateApprox(1e-6, 0)

// recallHits is an MCP recall's answer in nativeHit's terms.
func recallHits(out mcpfront.RecallOutput) []nativeHit {
	var hits []nativeHit
	for _, m := range out.Memories {
		hits = append(hits, nativeHit{ID: m.ID, Score: m.Score, Confidence: m.Confidence, Freshness: m.Freshness, Tier: m.Tier, Text: m.Text})
	}
	return hits
}

// nativeMemory is GET /v1/memories/{id}: the stored payload and its audit
// decisions.
type nativeMemory struct {
	Payload struct {
		Text         string   `json:"text"`
		Confidence   float64  `json:"confidence"`
		Observations int      `json:"observations"`
		SupersededBy string   `json:"superseded_by"`
		Source       string   `json:"source"`
		SessionIDs   []string `json:"session_ids"`
		Speaker      string   `json:"speaker"`
	} `json:"payload"`
	Audit []struct {
		Decision string `json:"decision"`
	} `json:"audit"`
}

func nativeGetMemory(t *testing.T, base, collection, id string, header ...string) (int, nativeMemory) {
	t.Helper()
	code, b := jsonRequest(t, "GET", base+"/v1/memories/"+url.PathEscape(id)+"?collection="+url.QueryEscape(collection), "", header...)
	var ans struct {
		Result nativeMemory `json:"result"`
	}
	if code == http.StatusOK {
		if err := json.Unmarshal([]byte(b), &ans); err != nil {
			t.Fatalf("/v1/memories/%s: %v: %s", id, err, b)
		}
	}
	return code, ans.Result
}

// TestMCPEndToEnd runs `memrank serve --demo` and uses its MCP server at
// /mcp with the go-sdk's own client, as an agent would: recall answers
// the demo question with the memory the demo promises, and every tool's
// answer is what the native API answers or stores for the same thing
// (the same ids in the same order, scores, confidence, the stored
// memory's evidence and history).
func TestMCPEndToEnd(t *testing.T) {
	// No flush of access counts while comparing: a flush between two
	// queries would raise an access boost.
	httpAddr, _, _ := startServeEnv(t, []string{"MEMRANK_ACCESS__FLUSH_INTERVAL=1h"}, "--demo", "--data", t.TempDir())
	base := "http://" + httpAddr
	cs := mcpConnectHTTP(t, base+"/mcp")
	q := demo.Queries()[0]

	// recall on the demo set: memrank's answer, as /v1/retrieve gives it.
	var rec mcpfront.RecallOutput
	summary := mcpOK(t, cs, "recall", map[string]any{"collection": demo.Collection, "query": q.Text, "limit": 3}, &rec)
	if len(rec.Memories) != 3 || !strings.Contains(rec.Memories[0].Text, q.Top) || !rec.Reranked {
		t.Fatalf("recall %q: %+v, want 3 re-ranked memories, the first holding %q", q.Text, rec, q.Top)
	}
	if !strings.Contains(summary, "1. "+rec.Memories[0].Text) || !strings.Contains(summary, "why: relevant") {
		t.Errorf("recall's summary does not lead with the memory and why:\n%s", summary)
	}
	if diff := cmp.Diff(nativeRetrieve(t, base, demo.Collection, q.Text, 3), recallHits(rec), sameScores); diff != "" {
		t.Errorf("recall differs from /v1/retrieve (-native +mcp):\n%s", diff)
	}

	// recall as of a time: the answer /v1/retrieve gives with the same at,
	// the time echoed; a bad at is a tool error naming it.
	at := time.Now().UTC().AddDate(0, -3, 0).Truncate(time.Second).Format(time.RFC3339)
	var then mcpfront.RecallOutput
	summary = mcpOK(t, cs, "recall", map[string]any{"collection": demo.Collection, "query": q.Text, "limit": 5, "at": at}, &then)
	if then.At != at || !strings.Contains(summary, " as of "+at+", best first:") || len(then.Memories) == 0 {
		t.Errorf("recall as of %s: at %q, %d memories; summary:\n%s", at, then.At, len(then.Memories), summary)
	}
	if diff := cmp.Diff(nativeRetrieveBody(t, base, map[string]any{"collection": demo.Collection, "text": q.Text, "limit": 5, "at": at}),
		recallHits(then), sameScores); diff != "" {
		t.Errorf("recall as of %s differs from /v1/retrieve with that at (-native +mcp):\n%s", at, diff)
	}
	if bad := mcpCall(t, cs, "recall", map[string]any{"collection": demo.Collection, "query": q.Text, "at": "last spring"}); !bad.IsError ||
		!strings.Contains(mcpText(bad), `at: "last spring" is not an RFC 3339 time`) {
		t.Errorf("recall with at \"last spring\": %+v %s, want a tool error naming at", bad.IsError, mcpText(bad))
	}

	// remember: a new memory, stored as the outcome says.
	const coll = "mcp_e2e"
	var ins mcpfront.Outcome
	mcpOK(t, cs, "remember", map[string]any{"collection": coll, "text": "Dana's favourite tea is genmaicha",
		"source": "direct", "session_id": "s1", "entities": []string{"Dana"}, "memory_type": "preference"}, &ins)
	if ins.Decision != "inserted" || !ins.CreatedCollection || ins.MemoryID == "" {
		t.Fatalf("remember: %+v, want a new memory in a new collection", ins)
	}
	code, mem := nativeGetMemory(t, base, coll, ins.MemoryID)
	if code != 200 || mem.Payload.Text != "Dana's favourite tea is genmaicha" || mem.Payload.Confidence != ins.Confidence || mem.Payload.Source != "direct" {
		t.Fatalf("the stored memory: %d %+v, want the text with confidence %v", code, mem, ins.Confidence)
	}
	var other mcpfront.Outcome
	mcpOK(t, cs, "remember", map[string]any{"collection": coll, "text": "Dana walks to work along the river", "session_id": "s2"}, &other)
	var again mcpfront.Outcome
	mcpOK(t, cs, "remember", map[string]any{"collection": coll, "text": "Dana's favourite tea is genmaicha.", "session_id": "s1"}, &again)
	if again.Decision != "restatement" || again.MemoryID != ins.MemoryID {
		t.Errorf("the same fact again: %+v, want a restatement of %s", again, ins.MemoryID)
	}

	// remember with a speaker: the same words from two people are two
	// memories, each with its speaker (a collection of their own).
	const said = "mcp_e2e_speakers"
	var caroline, melanie mcpfront.Outcome
	mcpOK(t, cs, "remember", map[string]any{"collection": said, "text": "That's awesome!", "source": "direct", "session_id": "c1", "speaker": "Caroline"}, &caroline)
	mcpOK(t, cs, "remember", map[string]any{"collection": said, "text": "That's awesome!", "source": "direct", "session_id": "m1", "speaker": "Melanie"}, &melanie)
	if caroline.Decision != "inserted" || melanie.Decision != "inserted" || caroline.MemoryID == melanie.MemoryID {
		t.Errorf("the same words from Caroline and Melanie: %+v and %+v, want two new memories", caroline, melanie)
	}
	for id, want := range map[string]string{caroline.MemoryID: "Caroline", melanie.MemoryID: "Melanie"} {
		if _, m := nativeGetMemory(t, base, said, id); m.Payload.Speaker != want {
			t.Errorf("memory %s: speaker %q, want %s", id, m.Payload.Speaker, want)
		}
	}

	// recall in the new collection: the same as /v1/retrieve.
	mcpOK(t, cs, "recall", map[string]any{"collection": coll, "query": "what tea does Dana like", "limit": 5}, &rec)
	if len(rec.Memories) == 0 || rec.Memories[0].ID != ins.MemoryID {
		t.Fatalf("recall: %+v, want %s first", rec.Memories, ins.MemoryID)
	}
	if diff := cmp.Diff(nativeRetrieve(t, base, coll, "what tea does Dana like", 5), recallHits(rec), sameScores); diff != "" {
		t.Errorf("recall differs from /v1/retrieve (-native +mcp):\n%s", diff)
	}

	// confirm: the stored confidence is the outcome's, and the history
	// records it.
	var conf mcpfront.Outcome
	mcpOK(t, cs, "confirm", map[string]any{"collection": coll, "memory_id": ins.MemoryID, "session_id": "s3"}, &conf)
	if conf.Decision != "confirmed" || conf.Confidence <= ins.Confidence {
		t.Errorf("confirm: %+v, want confidence above %v", conf, ins.Confidence)
	}
	_, mem = nativeGetMemory(t, base, coll, ins.MemoryID)
	if mem.Payload.Confidence != conf.Confidence || mem.Payload.Observations != conf.Observations || mem.Audit[len(mem.Audit)-1].Decision != "confirmed" {
		t.Errorf("after confirm the memory is %+v, want confidence %v, n %d, a confirmed record last", mem, conf.Confidence, conf.Observations)
	}

	// correct: the correction supersedes the memory.
	var cor mcpfront.Outcome
	mcpOK(t, cs, "correct", map[string]any{"collection": coll, "memory_id": ins.MemoryID, "text": "Dana's favourite tea is sencha", "session_id": "s3",
		"speaker": "Dana"}, &cor)
	if cor.Decision != "corrected" || cor.Superseded != ins.MemoryID || cor.MemoryID == ins.MemoryID {
		t.Fatalf("correct: %+v, want a new memory superseding %s", cor, ins.MemoryID)
	}
	if _, mem = nativeGetMemory(t, base, coll, cor.MemoryID); mem.Payload.Speaker != "Dana" {
		t.Errorf("the correction's speaker is %q, want Dana", mem.Payload.Speaker)
	}
	if _, mem = nativeGetMemory(t, base, coll, ins.MemoryID); mem.Payload.SupersededBy != cor.MemoryID {
		t.Errorf("the corrected memory is superseded by %q, want %q", mem.Payload.SupersededBy, cor.MemoryID)
	}

	// stats: the native API's counts.
	var st mcpfront.StatsOutput
	mcpOK(t, cs, "stats", map[string]any{"collection": coll}, &st)
	_, b := jsonRequest(t, "GET", base+"/v1/stats?collection="+coll, "")
	var nst struct {
		Result struct{ Memories, Superseded int } `json:"result"`
	}
	if err := json.Unmarshal([]byte(b), &nst); err != nil {
		t.Fatal(err)
	}
	if st.Memories != nst.Result.Memories || st.Superseded != nst.Result.Superseded || st.Superseded != 1 {
		t.Errorf("stats: %+v, the native API counts %+v", st, nst.Result)
	}

	// forget a session, then a memory: gone from the store and from recall.
	var fs mcpfront.ForgetOutput
	mcpOK(t, cs, "forget", map[string]any{"collection": coll, "session_id": "s2"}, &fs)
	if fs.MemoriesDeleted != 1 {
		t.Errorf("forget session s2: %+v, want its one memory deleted", fs)
	}
	if code, _ := nativeGetMemory(t, base, coll, other.MemoryID); code != http.StatusNotFound {
		t.Errorf("the forgotten session's memory answers %d, want 404", code)
	}
	var fm mcpfront.ForgetOutput
	mcpOK(t, cs, "forget", map[string]any{"collection": coll, "memory_id": cor.MemoryID}, &fm)
	if fm.MemoriesDeleted < 1 {
		t.Errorf("forget memory: %+v, want it deleted", fm)
	}
	for _, h := range nativeRetrieve(t, base, coll, "what tea does Dana like", 10) {
		if h.ID == cor.MemoryID || h.ID == other.MemoryID {
			t.Errorf("/v1/retrieve still returns the forgotten memory %s", h.ID)
		}
	}
	mcpOK(t, cs, "forget", map[string]any{"collection": coll, "memory_id": cor.MemoryID}, &fm)
	if fm.MemoriesDeleted != 0 {
		t.Errorf("forgetting again: %+v, want nothing", fm)
	}

	// Failures are tool errors with the native API's words.
	res := mcpCall(t, cs, "confirm", map[string]any{"collection": coll, "memory_id": "00000000-0000-0000-0000-000000000001"})
	if !res.IsError || !strings.Contains(mcpText(res), "HTTP 404") {
		t.Errorf("confirming a memory that does not exist: %v %q, want a 404 tool error", res.IsError, mcpText(res))
	}
}

// TestMCPTenancy runs serve with tenants by API key: through /mcp a call
// acts with the key of the HTTP request that carried it. Without a key or
// with a wrong one every tool is a 401 tool error; a tenant sees its own
// memories and never another's, exactly as on the native API.
func TestMCPTenancy(t *testing.T) {
	httpAddr, _, _ := startServeEnv(t, []string{
		"MEMRANK_TENANCY__KEY=user_id",
		"MEMRANK_TENANCY__API_KEYS=key-alice=alice,key-bob=bob",
		"MEMRANK_ACCESS__FLUSH_INTERVAL=1h",
	}, "--data", t.TempDir())
	base := "http://" + httpAddr
	const coll = "mcp_tenants"
	alice := mcpConnectHTTP(t, base+"/mcp", "api-key", "key-alice")
	bob := mcpConnectHTTP(t, base+"/mcp", "Authorization", "Bearer key-bob")
	var out mcpfront.Outcome
	mcpOK(t, alice, "remember", map[string]any{"collection": coll, "text": "Alice keeps bees on her roof", "session_id": "a1"}, &out)
	if out.Decision != "inserted" {
		t.Fatalf("alice remembers: %+v", out)
	}
	for _, tt := range []struct {
		name   string
		header []string
		want   string
	}{
		{"no key", nil, "HTTP 401"},
		{"wrong key", []string{"api-key", "key-mallory"}, "HTTP 401"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := mcpConnectHTTP(t, base+"/mcp", tt.header...)
			for tool, args := range map[string]map[string]any{
				"recall":   {"collection": coll, "query": "bees"},
				"remember": {"collection": coll, "text": "Mallory was here"},
				"confirm":  {"collection": coll, "memory_id": out.MemoryID},
				"forget":   {"collection": coll, "memory_id": out.MemoryID},
				"stats":    {"collection": coll},
			} {
				res := mcpCall(t, cs, tool, args)
				if !res.IsError || !strings.Contains(mcpText(res), tt.want) || strings.Contains(mcpText(res), "bees") {
					t.Errorf("%s: %v %q, want a tool error with %q", tool, res.IsError, mcpText(res), tt.want)
				}
			}
		})
	}
	var rec mcpfront.RecallOutput
	mcpOK(t, bob, "recall", map[string]any{"collection": coll, "query": "who keeps bees"}, &rec)
	if len(rec.Memories) != 0 {
		t.Errorf("bob recalls alice's memories: %+v", rec.Memories)
	}
	if res := mcpCall(t, bob, "forget", map[string]any{"collection": coll, "memory_id": out.MemoryID}); res.IsError {
		t.Errorf("bob's forget: %s", mcpText(res))
	}
	mcpOK(t, alice, "recall", map[string]any{"collection": coll, "query": "who keeps bees"}, &rec)
	if len(rec.Memories) != 1 || rec.Memories[0].ID != out.MemoryID {
		t.Fatalf("alice recalls %+v, want her memory (bob cannot forget it)", rec.Memories)
	}
	if diff := cmp.Diff(nativeRetrieve(t, base, coll, "who keeps bees", 5, "api-key", "key-alice"), recallHits(rec), sameScores); diff != "" {
		t.Errorf("alice's recall differs from her /v1/retrieve (-native +mcp):\n%s", diff)
	}
	if code, _ := nativeGetMemory(t, base, coll, out.MemoryID, "api-key", "key-bob"); code != http.StatusNotFound {
		t.Errorf("bob reads alice's memory on the native API: %d", code)
	}
}

// TestMCPHTTPRefusals: /mcp is behind serve's host guard, so a browser
// page cannot call it: not from another origin, not by a name rebound to
// memrank's address (DNS rebinding). The port needs no credential, so an
// agent reaches it by a name only when the name is allowed (a reverse
// proxy's, listed). GET is refused (the stateless server keeps no stream);
// mcp.enabled false takes /mcp away.
func TestMCPHTTPRefusals(t *testing.T) {
	httpAddr, _, _ := startServeEnv(t, []string{"MEMRANK_LISTEN__ALLOWED_HOSTS=[memrank.example.com]"}, "--data", t.TempDir())
	port := httpAddr[strings.LastIndex(httpAddr, ":"):]
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`
	send := func(addr, method, host string, header ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+addr+"/mcp", strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tt := range []struct {
		name, method, host string
		header             []string
		code               int
		says               string
	}{
		{"an MCP client", "POST", "", nil, 200, `"name":"memrank"`},
		{"an MCP client behind a proxy, by a listed name", "POST", "memrank.example.com", nil, 200, `"name":"memrank"`},
		{"an MCP client by an unlisted name", "POST", "memrank.svc" + port, nil, 403, "listen.allowed_hosts"},
		{"a page of another origin", "POST", "", []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}, 403, "another origin"},
		{"another site, no Origin", "POST", "", []string{"Sec-Fetch-Site", "cross-site"}, 403, "another site"},
		{"a page by a rebound name", "POST", "evil.example" + port, []string{"Origin", "http://evil.example" + port, "Sec-Fetch-Site", "same-origin"}, 403, "DNS rebinding"},
		{"GET", "GET", "", nil, http.StatusMethodNotAllowed, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if code, body := send(httpAddr, tt.method, tt.host, tt.header...); code != tt.code || !strings.Contains(body, tt.says) {
				t.Errorf("HTTP %d %s, want %d saying %q", code, body, tt.code, tt.says)
			}
		})
	}
	offAddr, _, stopOff := startServeEnv(t, []string{"MEMRANK_MCP__ENABLED=false"}, "--data", t.TempDir())
	if code, body := send(offAddr, "POST", ""); code != http.StatusNotFound {
		t.Errorf("mcp.enabled false: %d %s, want 404", code, body)
	}
	_, stderr := stopOff()
	if line := listenLine.FindString(stderr); line == "" || strings.Contains(line, "/mcp") {
		t.Errorf("mcp.enabled false: serve announces %q, want a listen line without /mcp", line)
	}
}

// TestMCPStdio runs `memrank mcp` in process on stdin and stdout pipes
// with the go-sdk's client: in process on a data directory, it remembers
// and recalls; it stops when the client closes stdin, leaving no
// goroutine behind; stdout carries only the protocol.
func TestMCPStdio(t *testing.T) {
	before := goleak.IgnoreCurrent()
	dir := t.TempDir()
	code, stderr := runMCPStdio(t, []string{"mcp", "--data", dir, "--collection", "notes"}, nil, func(cs *mcp.ClientSession) {
		var out mcpfront.Outcome
		mcpOK(t, cs, "remember", map[string]any{"text": "Dana's cat is called Miso", "source": "direct", "session_id": "s1"}, &out)
		if out.Decision != "inserted" {
			t.Errorf("remember: %+v", out)
		}
		var rec mcpfront.RecallOutput
		mcpOK(t, cs, "recall", map[string]any{"query": "what is the name of Dana's cat"}, &rec)
		if len(rec.Memories) != 1 || rec.Memories[0].ID != out.MemoryID || rec.Collection != "notes" {
			t.Errorf("recall: %+v, want %s in notes", rec, out.MemoryID)
		}
	})
	if code != exitOK {
		t.Fatalf("memrank mcp exited %d; stderr:\n%s", code, stderr)
	}
	goleak.VerifyNone(t, before)
}

// TestMCPStdioURL runs `memrank mcp --url` against a running serve with
// tenancy: its key comes from $MEMRANK_API_KEY (which the configuration
// does not read as a key of its own); and without --url on the data
// directory serve holds, it says to use --url.
func TestMCPStdioURL(t *testing.T) {
	dir := t.TempDir()
	httpAddr, _, _ := startServeEnv(t, []string{"MEMRANK_TENANCY__KEY=user_id", "MEMRANK_TENANCY__API_KEYS=key-alice=alice"}, "--data", dir)
	environ := []string{"MEMRANK_TENANCY__KEY=user_id", "MEMRANK_TENANCY__API_KEYS=key-alice=alice", "MEMRANK_API_KEY=key-alice"}
	var id string
	code, stderr := runMCPStdio(t, []string{"mcp", "--url", "http://" + httpAddr, "--collection", "notes"}, environ, func(cs *mcp.ClientSession) {
		var out mcpfront.Outcome
		mcpOK(t, cs, "remember", map[string]any{"text": "Alice's bike is red"}, &out)
		id = out.MemoryID
	})
	if code != exitOK || id == "" {
		t.Fatalf("memrank mcp --url exited %d, remembered %q; stderr:\n%s", code, id, stderr)
	}
	if code, mem := nativeGetMemory(t, "http://"+httpAddr, "notes", id, "api-key", "key-alice"); code != 200 || mem.Payload.Text != "Alice's bike is red" {
		t.Errorf("alice's memory on the native API: %d %+v", code, mem)
	}
	var stdout, errOut strings.Builder
	code = run(context.Background(), []string{"mcp", "--data", dir}, strings.NewReader(""), &stdout, &errOut, environ)
	if code != exitUsage || !strings.Contains(errOut.String(), "in use by another process (a running memrank serve?): give --url") {
		t.Errorf("mcp on a data directory serve holds: exit %d, %s; want %d saying to use --url", code, errOut.String(), exitUsage)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout is not the protocol's only: %q", stdout.String())
	}
}

// TestMCPStdioTenantHeader runs `memrank mcp --url --tenant` against a
// serve that takes tenants from a header: the tenant goes in
// --tenant-header with no tenancy configured locally (which would need a
// whole tenancy section), or in the configured tenancy.header; either way
// the memory is the tenant's on the native API, and another tenant's
// header does not find it.
func TestMCPStdioTenantHeader(t *testing.T) {
	serverTenancy := []string{"MEMRANK_TENANCY__KEY=user_id", "MEMRANK_TENANCY__HEADER=x-tenant"}
	httpAddr, _, _ := startServeEnv(t, serverTenancy, "--data", t.TempDir())
	base := "http://" + httpAddr
	for _, tt := range []struct {
		name, tenant, text string
		args, environ      []string
	}{
		{"--tenant-header, nothing configured", "alice", "Alice's kayak is yellow", []string{"--tenant-header", "X-Tenant"}, nil},
		{"the configured tenancy.header", "bob", "Bob's kayak is green", nil, serverTenancy},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"mcp", "--url", base, "--collection", "boats", "--tenant", tt.tenant}, tt.args...)
			var id string
			code, stderr := runMCPStdio(t, args, tt.environ, func(cs *mcp.ClientSession) {
				var out mcpfront.Outcome
				mcpOK(t, cs, "remember", map[string]any{"text": tt.text}, &out)
				id = out.MemoryID
			})
			if code != exitOK || id == "" {
				t.Fatalf("memrank mcp exited %d, remembered %q; stderr:\n%s", code, id, stderr)
			}
			if code, mem := nativeGetMemory(t, base, "boats", id, "x-tenant", tt.tenant); code != http.StatusOK || mem.Payload.Text != tt.text {
				t.Errorf("%s's memory on the native API: %d %+v, want %q", tt.tenant, code, mem, tt.text)
			}
			if code, _ := nativeGetMemory(t, base, "boats", id, "x-tenant", "mallory"); code != http.StatusNotFound {
				t.Errorf("another tenant reads %s's memory: %d, want 404", tt.tenant, code)
			}
		})
	}
}

// runMCPStdio runs memrank with args on pipes, connects the go-sdk's
// client to them, calls use, closes the client, and returns the exit code
// and stderr.
func runMCPStdio(t *testing.T, args, environ []string, use func(*mcp.ClientSession)) (int, string) {
	t.Helper()
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		code := run(context.Background(), args, stdinR, stdoutW, stderr, environ)
		stdoutW.Close()
		done <- code
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "memrank-e2e", Version: "v0"}, nil).Connect(ctx,
		&mcp.IOTransport{Reader: stdoutR, Writer: stdinW}, nil)
	if err != nil {
		stdinW.Close()
		t.Fatalf("connecting to memrank mcp: %v; stderr:\n%s", err, stderr.String())
	}
	use(cs)
	cs.Close()
	select {
	case code := <-done:
		return code, stderr.String()
	case <-time.After(30 * time.Second):
		t.Fatalf("memrank mcp did not stop when stdin closed; stderr:\n%s", stderr.String())
	}
	return 0, ""
}

// TestMCPCommandRefuses: `memrank mcp` refuses to start, with a usage
// error on stderr and nothing on stdout, when it could not serve as asked.
func TestMCPCommandRefuses(t *testing.T) {
	tenancy := []string{"MEMRANK_TENANCY__KEY=user_id", "MEMRANK_TENANCY__API_KEYS=key-alice=alice"}
	for _, tt := range []struct {
		name    string
		args    []string
		environ []string
		says    string
	}{
		{"no timeout", []string{"--url", "http://127.0.0.1:1", "--timeout", "0s"}, nil, "--timeout 0s must be positive"},
		{"not a URL", []string{"--url", "127.0.0.1:6333"}, nil, "write it with its scheme"},
		{"--url, a tenant, no header to send it in", []string{"--url", "http://127.0.0.1:1", "--tenant", "alice"}, tenancy, "--tenant: give --tenant-header NAME"},
		{"in process, a tenant, tenants not from a header", []string{"--data", t.TempDir(), "--tenant", "alice"}, tenancy, "--tenant: tenancy.header is not configured"},
		{"--tenant-header in process", []string{"--data", t.TempDir(), "--tenant-header", "x-tenant", "--tenant", "alice"}, nil, "--tenant-header: only with --url"},
		{"--tenant-header without a tenant", []string{"--url", "http://127.0.0.1:1", "--tenant-header", "x-tenant"}, nil, "give --tenant too"},
		{"--tenant-header not a header name", []string{"--url", "http://127.0.0.1:1", "--tenant-header", "x tenant", "--tenant", "alice"}, nil, `"x tenant" is not an HTTP header name`},
		{"--tenant-header a credential's", []string{"--url", "http://127.0.0.1:1", "--tenant-header", "Authorization", "--tenant", "alice"}, nil, "carries credentials"},
		{"--url, tenancy.header configured alone", []string{"--url", "http://127.0.0.1:1", "--tenant", "alice"}, []string{"MEMRANK_TENANCY__HEADER=x-tenant"},
			"tenancy.key: must not be empty when tenancy.header is set\nwith --url, tenancy is the server's: give the header it takes tenants from with --tenant-header"},
		{"--url, another configuration problem", []string{"--url", "http://127.0.0.1:1"}, []string{"MEMRANK_RANK__OVERSAMPLE=0"}, "config: $MEMRANK_RANK__OVERSAMPLE: rank.oversample: 0 is less than 1\n"}, // no tenancy hint
		{"--url with --data", []string{"--url", "http://127.0.0.1:1", "--data", t.TempDir()}, nil, "--data: not with --url"},
		{"--url with --upstream", []string{"--url", "http://127.0.0.1:1", "--upstream", "127.0.0.1:6334"}, nil, "--upstream: not with --url"},
		{"tenancy on, no key, in process", []string{"--data", t.TempDir()}, tenancy, "tenancy is on"},
		{"tenancy on, a wrong key, in process", []string{"--data", t.TempDir(), "--api-key", "key-mallory"}, tenancy, "tenancy is on"},
		{"an audit companion as the collection", []string{"--url", "http://127.0.0.1:1", "--collection", "m_memrank_audit"}, nil, "mcp.collection"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := run(context.Background(), append([]string{"mcp"}, tt.args...), strings.NewReader(""), &stdout, &stderr, tt.environ)
			if code != exitUsage || !strings.Contains(stderr.String(), tt.says) || stdout.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want %d saying %q", code, stderr.String(), stdout.String(), exitUsage, tt.says)
			}
		})
	}
}
