package mcpfront

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	observeAnswer = `{"result":{"decision":"inserted","memory_id":"3bef7154-99a9-5f0c-9c8c-d14bbfd4ad34","confidence":0.715,` +
		`"observations":0,"dedup_tier":0,"judge":null,"replayed":false,"created_collection":true},"status":"ok","time":0.001}`
	confirmAnswer = `{"result":{"decision":"confirmed","memory_id":"1001","confidence":0.9,"observations":5,"dedup_tier":0,` +
		`"judge":null,"replayed":false},"status":"ok","time":0.001}`
	correctAnswer = `{"result":{"decision":"corrected","memory_id":"7c1e","confidence":0.8,"observations":0,"dedup_tier":0,` +
		`"judge":null,"superseded":"1001","replayed":false},"status":"ok","time":0.001}`
	retrieveAnswer = `{"result":[` +
		`{"id":1001,"score":3.169,"base_score":0.619,"weight":3.169,"guard":"relevant","confidence":0.851,"freshness":0.989,` +
		`"access_count":64,"access_boost":5.174,"render":true,"below_gate":false,"tier":"active","bucket":"high","retrievable":true,` +
		`"protected":false,"folded_ids":[1003,"553f9722-8ebe-5636-9720-a487cf263fc6"],"dedup":"vector","judge_consulted":false,"problems":[],` +
		`"payload":{"text":"Uses Neovim as her main editor","memory_type":"preference"},"explanation":{"unscored":false,"observations":4}},` +
		`{"id":"e9f63c27-b3a0-52ef-812a-fc38edc5ef3f","score":0.4289,"base_score":0.4289,"weight":0.4289,"guard":"below_band",` +
		`"confidence":null,"freshness":1,"access_count":null,"access_boost":null,"render":true,"below_gate":false,"tier":"active",` +
		`"bucket":null,"retrievable":true,"protected":false,"folded_ids":[],"dedup":null,"judge_consulted":false,"problems":[],` +
		`"payload":{"text":"Team wiki: editor setup guide"},"explanation":{"unscored":true}}],` +
		`"reranked":true,"mode":"rerank","detection":"has an audit companion (written by memrank)",` +
		`"guard":{"applied":true,"best":0.64,"cutoff":0.49,"band":0.15,"floor":0.2,"from":"default","relevant":1,"beyond":1},` +
		`"dropped":[{"id":1002,"reason":"below_gate","base_score":0.61},{"id":1005,"reason":"below_gate","base_score":0.58},` +
		`{"id":1003,"reason":"folded","into":1001,"base_score":0.64}],"status":"ok","time":0.002}`
	forgetAnswer = `{"result":{"collection":"notes","memories_updated":1,"memories_deleted":2,"audit_redacted":3,"audit_deleted":0,` +
		`"audit_kept":0,"audit_policy":"redact"},"status":"ok","time":0.001}`
	statsAnswer = `{"result":{"collection":"notes","method":"counted","memories":3,"archived":1,"superseded":0,"average_confidence":0.7,` +
		`"buckets":{"high":1,"medium":2},"histogram":[0,0,0,0,0,0,2,1,0,0],"tiers":{"active":3},"tiers_as_of":null,` +
		`"types":{"fact":2,"preference":1},"decisions":{"inserted":3},"judge":{"calls":0,"cache_hits":0,"cache_misses":0,"fallbacks":0,"cache_hit_rate":null}},` +
		`"status":"ok","time":0.001}`
)

func fakeAnswers() map[string]answer {
	return map[string]answer{
		"POST /v1/observe":                     {body: observeAnswer},
		"POST /v1/retrieve":                    {body: retrieveAnswer},
		"POST /v1/memories/1001/confirm":       {body: confirmAnswer},
		"POST /v1/memories/1001/correct":       {body: correctAnswer},
		"DELETE /v1/sessions/s 1":              {body: forgetAnswer},
		"DELETE /v1/memories/1001":             {body: forgetAnswer},
		"GET /v1/stats":                        {body: statsAnswer},
		"POST /v1/memories/locked/confirm":     {status: 401, body: `{"status":{"error":"Unauthorized: invalid API key"},"time":0}`},
		"POST /v1/memories/garbage/confirm":    {body: `{"result": [1, 2`},
		"POST /v1/memories/overloaded/confirm": {status: 503, body: `{"status":{"error":"Service unavailable: try again"},"time":0}`},
	}
}

// TestTools calls each tool through the SDK's client and checks what
// reached the native API (route, body, query) and what the model gets:
// the structured answer and a summary naming what matters.
func TestTools(t *testing.T) {
	f, api := newFake(t, fakeAnswers())
	cs := connect(t, Config{API: apiClient(t, api.URL), Collection: "notes"})
	for _, tt := range []struct {
		name      string
		tool      string
		args      map[string]any
		wantReq   sent // Method, Path, Query and Body are compared
		wantOut   any
		decode    func(*testing.T, *mcp.CallToolResult) any
		wantWords []string
	}{
		{
			name: "remember with the default collection", tool: "remember",
			args: map[string]any{"text": "Dana uses Neovim", "source": "direct", "session_id": "s1", "entities": []string{"Dana"},
				"observed_at": "2026-11-01T10:00:00Z", "memory_type": "preference"},
			wantReq: sent{Method: "POST", Path: "/v1/observe", Body: map[string]any{"collection": "notes", "text": "Dana uses Neovim",
				"source": "direct", "session_id": "s1", "entities": []any{"Dana"}, "observed_at": "2026-11-01T10:00:00Z", "memory_type": "preference"}},
			wantOut:   Outcome{Decision: "inserted", MemoryID: "3bef7154-99a9-5f0c-9c8c-d14bbfd4ad34", Confidence: 0.715, CreatedCollection: true},
			decode:    func(t *testing.T, r *mcp.CallToolResult) any { return structured[Outcome](t, r) },
			wantWords: []string{"new memory 3bef7154-99a9-5f0c-9c8c-d14bbfd4ad34", "confidence 0.71", "Created the collection notes"},
		},
		{
			name: "remember who said it", tool: "remember",
			args: map[string]any{"text": "I went hiking on Sunday", "speaker": "Caroline", "attribution": "self", "session_id": "s1"},
			wantReq: sent{Method: "POST", Path: "/v1/observe", Body: map[string]any{"collection": "notes", "text": "I went hiking on Sunday",
				"speaker": "Caroline", "attribution": "self", "session_id": "s1"}},
			wantOut: Outcome{Decision: "inserted", MemoryID: "3bef7154-99a9-5f0c-9c8c-d14bbfd4ad34", Confidence: 0.715, CreatedCollection: true},
			decode:  func(t *testing.T, r *mcp.CallToolResult) any { return structured[Outcome](t, r) },
		},
		{
			name: "recall", tool: "recall",
			args: map[string]any{"collection": "other", "query": "what editor does Dana use", "limit": 2,
				"filter": map[string]any{"must": []any{map[string]any{"key": "memory_type", "match": map[string]any{"value": "preference"}}}}},
			wantReq: sent{Method: "POST", Path: "/v1/retrieve", Body: map[string]any{"collection": "other", "text": "what editor does Dana use",
				"limit": 2.0, "explain": true,
				"filter": map[string]any{"must": []any{map[string]any{"key": "memory_type", "match": map[string]any{"value": "preference"}}}}}},
			wantOut: RecallOutput{Collection: "other", Query: "what editor does Dana use", Reranked: true,
				Memories: []Recalled{
					{ID: "1001", Text: "Uses Neovim as her main editor", Score: 3.169, Similarity: 0.619, Confidence: ptr(0.851),
						Freshness: ptr(0.989), Tier: "active", Relevance: "relevant", Render: true,
						Folded: []string{"1003", "553f9722-8ebe-5636-9720-a487cf263fc6"},
						Why: "relevant: as similar to the query as the best match; passed the confidence gate; 4 independent observations; " +
							"recalled 64 times before; 2 duplicates folded into it (near-identical meaning)"},
					{ID: "e9f63c27-b3a0-52ef-812a-fc38edc5ef3f", Text: "Team wiki: editor setup guide", Score: 0.4289, Similarity: 0.4289,
						Freshness: ptr(1.0), Tier: "active", Relevance: "below_band", Render: true,
						Why: "not a scored memory: ranked by similarity and freshness; less similar than the best match"},
				},
				LeftOut: map[string]int{"below_gate": 2, "folded": 1}},
			decode: func(t *testing.T, r *mcp.CallToolResult) any { return structured[RecallOutput](t, r) },
			wantWords: []string{"2 memories for \"what editor does Dana use\" in other", "1. Uses Neovim as her main editor",
				"id 1001 | score 3.169 | confidence 0.85 | freshness 0.99 | tier active", "confidence -",
				"Left out: 2 below the confidence gate, 1 folded into another result."},
		},
		{
			name: "confirm", tool: "confirm", args: map[string]any{"memory_id": "1001", "session_id": "s2"},
			wantReq:   sent{Method: "POST", Path: "/v1/memories/1001/confirm", Body: map[string]any{"collection": "notes", "session_id": "s2"}},
			wantOut:   Outcome{Decision: "confirmed", MemoryID: "1001", Confidence: 0.9, Observations: 5},
			decode:    func(t *testing.T, r *mcp.CallToolResult) any { return structured[Outcome](t, r) },
			wantWords: []string{"Memory 1001 confirmed: confidence now 0.90, 5 independent observations."},
		},
		{
			name: "correct", tool: "correct", args: map[string]any{"memory_id": "1001", "text": "Uses Helix", "speaker": "Dana"},
			wantReq: sent{Method: "POST", Path: "/v1/memories/1001/correct", Body: map[string]any{"collection": "notes", "text": "Uses Helix",
				"speaker": "Dana"}},
			wantOut:   Outcome{Decision: "corrected", MemoryID: "7c1e", Confidence: 0.8, Superseded: "1001"},
			decode:    func(t *testing.T, r *mcp.CallToolResult) any { return structured[Outcome](t, r) },
			wantWords: []string{"the correction is memory 7c1e", "memory 1001 is superseded"},
		},
		{
			name: "forget a session", tool: "forget", args: map[string]any{"session_id": "s 1"},
			wantReq:   sent{Method: "DELETE", Path: "/v1/sessions/s 1", Query: "collection=notes"},
			wantOut:   ForgetOutput{Collection: "notes", Forgot: "session", ID: "s 1", MemoriesUpdated: 1, MemoriesDeleted: 2, AuditRedacted: 3, AuditPolicy: "redact"},
			decode:    func(t *testing.T, r *mcp.CallToolResult) any { return structured[ForgetOutput](t, r) },
			wantWords: []string{"Forgot session s 1 in notes: 2 memories deleted, 1 updated"},
		},
		{
			name: "forget a memory", tool: "forget", args: map[string]any{"memory_id": "1001", "collection": "notes"},
			wantReq:   sent{Method: "DELETE", Path: "/v1/memories/1001", Query: "collection=notes"},
			wantOut:   ForgetOutput{Collection: "notes", Forgot: "memory", ID: "1001", MemoriesUpdated: 1, MemoriesDeleted: 2, AuditRedacted: 3, AuditPolicy: "redact"},
			decode:    func(t *testing.T, r *mcp.CallToolResult) any { return structured[ForgetOutput](t, r) },
			wantWords: []string{"Forgot memory 1001 in notes"},
		},
		{
			name: "stats", tool: "stats", args: map[string]any{},
			wantReq: sent{Method: "GET", Path: "/v1/stats", Query: "collection=notes"},
			wantOut: StatsOutput{Collection: "notes", Memories: 3, Archived: 1, AverageConfidence: ptr(0.7),
				Buckets: map[string]int{"high": 1, "medium": 2}, Tiers: map[string]int{"active": 3},
				Types: map[string]int{"fact": 2, "preference": 1}, Decisions: map[string]int64{"inserted": 3}},
			decode: func(t *testing.T, r *mcp.CallToolResult) any { return structured[StatsOutput](t, r) },
			wantWords: []string{"notes holds 3 memories (1 archived, 0 superseded); average confidence 0.70.",
				"by type: fact 2, preference 1", "write decisions in notes since this server started: inserted 3"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.requests())
			res := call(t, cs, tt.tool, tt.args)
			if res.IsError {
				t.Fatalf("tool error: %s", text(res))
			}
			got := f.requests()[before:]
			if len(got) != 1 {
				t.Fatalf("the native API got %d requests, want 1: %+v", len(got), got)
			}
			if diff := cmp.Diff(tt.wantReq, got[0], cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Header" }, cmp.Ignore())); diff != "" {
				t.Errorf("request to the native API (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOut, tt.decode(t, res)); diff != "" {
				t.Errorf("structured content (-want +got):\n%s", diff)
			}
			for _, w := range tt.wantWords {
				if !strings.Contains(text(res), w) {
					t.Errorf("summary lacks %q:\n%s", w, text(res))
				}
			}
		})
	}
}

// TestRecallAsOf: recall's at goes to the native API in UTC and comes back
// in the answer; a best match below the confidence gate and what age took
// off a weight are said; an empty answer says why; remember relays the
// write path's warnings.
func TestRecallAsOf(t *testing.T) {
	const belowGate = `{"result":[{"id":"b1","score":0.52,"base_score":0.61,"weight":0.52,"guard":"relevant","confidence":0.4675,` +
		`"freshness":0.5,"freshness_factor":0.86,"access_count":0,"access_boost":1,"render":true,"below_gate":true,"tier":"dormant",` +
		`"stored_tier":"active","bucket":"low","retrievable":true,"protected":false,"folded_ids":[],"dedup":null,"judge_consulted":false,` +
		`"problems":[],"payload":{"text":"Dana keeps bees"},"explanation":{"unscored":false,"observations":0}},` +
		`{"id":"g1","score":0.31,"base_score":0.31,"weight":0.31,"guard":"below_band","confidence":0.8,` +
		`"freshness":1,"freshness_factor":1,"access_count":0,"access_boost":1,"render":true,"below_gate":false,"tier":"active",` +
		`"stored_tier":"active","bucket":"high","retrievable":true,"protected":false,"folded_ids":[],"dedup":null,"judge_consulted":false,` +
		`"problems":[],"payload":{"text":"Dana grows tomatoes"},"explanation":{"unscored":false,"observations":1}}],` +
		`"reranked":true,"mode":"rerank","detection":"d","guard":{"applied":true,"best":0.61,"cutoff":0.58,"band":0.03,"floor":0.2,` +
		`"from":"default","relevant":1,"beyond":1,"folded":0,"focus":0.4},"dropped":[{"id":"s1","reason":"superseded","base_score":0.3}],` +
		`"at":"2026-06-01T10:00:00Z","status":"ok","time":0.002}`
	const noneAbove = `{"result":[{"id":"b1","score":0.52,"base_score":0.61,"weight":0.52,"guard":"relevant","confidence":0.45,` +
		`"freshness":1,"freshness_factor":1,"access_count":0,"access_boost":1,"render":true,"below_gate":true,"tier":"dormant",` +
		`"stored_tier":null,"bucket":"low","retrievable":true,"protected":false,"folded_ids":[],"dedup":null,"judge_consulted":false,` +
		`"problems":[],"payload":{"text":"Dana might keep bees"},"explanation":{"unscored":false,"observations":0}}],` +
		`"reranked":true,"mode":"rerank","detection":"d","guard":{"applied":true,"best":0.61,"cutoff":0.58,"band":0.03,"floor":0.2,` +
		`"from":"default","relevant":1,"beyond":0,"folded":0,"focus":0},"dropped":[],"status":"ok","time":0.002}`
	const empty = `{"result":[],"reranked":true,"mode":"rerank","detection":"d","guard":null,` +
		`"dropped":[{"id":"s1","reason":"superseded","base_score":0.3},{"id":"a1","reason":"archived","base_score":0.2}],` +
		`"empty":"all 2 candidates were left out: 1 superseded, 1 archived","status":"ok","time":0.002}`
	const warned = `{"result":{"decision":"inserted","memory_id":"b1","confidence":0.4675,"observations":0,"dedup_tier":0,"judge":null,` +
		`"replayed":false,"warnings":["the memory's confidence 0.4675 is below the retrieval gate 0.5: it is returned only as the best match of a question."]},` +
		`"status":"ok","time":0.001}`
	for _, tt := range []struct {
		name, answer string
		args         map[string]any
		wantBody     map[string]any
		wantAt       string
		wantEmpty    string
		wantWords    []string
	}{
		{
			name: "as of a time, a best match below the gate", answer: belowGate,
			args:     map[string]any{"query": "who keeps bees", "at": "2026-06-01T12:00:00+02:00"},
			wantBody: map[string]any{"collection": "notes", "text": "who keeps bees", "limit": 5.0, "explain": true, "at": "2026-06-01T10:00:00Z"},
			wantAt:   "2026-06-01T10:00:00Z",
			wantWords: []string{"2 memories for \"who keeps bees\" in notes as of 2026-06-01T10:00:00Z, best first:",
				"tier dormant | below the confidence gate: uncertain",
				"why: relevant: as similar to the query as the best match; below the confidence gate: the best match, and nothing passing the gate was as close; " +
					"0 independent observations; age took 14% off its weight",
				"Left out: 1 superseded."},
		},
		{
			name: "nothing passed the gate", answer: noneAbove,
			args:      map[string]any{"query": "who keeps bees"},
			wantBody:  map[string]any{"collection": "notes", "text": "who keeps bees", "limit": 5.0, "explain": true},
			wantWords: []string{"below the confidence gate: nothing passed it, so the best come back"},
		},
		{
			name: "an empty answer says why", answer: empty,
			args:      map[string]any{"query": "who keeps bees", "include_archived": false},
			wantBody:  map[string]any{"collection": "notes", "text": "who keeps bees", "limit": 5.0, "explain": true},
			wantEmpty: "all 2 candidates were left out: 1 superseded, 1 archived",
			wantWords: []string{"No memories found for \"who keeps bees\" in notes: all 2 candidates were left out: 1 superseded, 1 archived.",
				"Left out: 1 archived by a person or a review, 1 superseded."},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, api := newFake(t, map[string]answer{"POST /v1/retrieve": {body: tt.answer}})
			cs := connect(t, Config{API: apiClient(t, api.URL), Collection: "notes"})
			res := call(t, cs, "recall", tt.args)
			if res.IsError {
				t.Fatalf("tool error: %s", text(res))
			}
			if got := f.requests(); len(got) != 1 || !cmp.Equal(tt.wantBody, got[0].Body) {
				t.Errorf("requests %+v, want one with the body %v", got, tt.wantBody)
			}
			out := structured[RecallOutput](t, res)
			if out.At != tt.wantAt || out.Empty != tt.wantEmpty {
				t.Errorf("at %q, empty %q; want %q, %q", out.At, out.Empty, tt.wantAt, tt.wantEmpty)
			}
			for _, w := range tt.wantWords {
				if !strings.Contains(text(res), w) {
					t.Errorf("summary lacks %q:\n%s", w, text(res))
				}
			}
			if strings.Contains(text(res), "decay floor") {
				t.Errorf("the summary speaks of the decay floor:\n%s", text(res))
			}
		})
	}
	t.Run("remember relays the warnings", func(t *testing.T) {
		_, api := newFake(t, map[string]answer{"POST /v1/observe": {body: warned}})
		cs := connect(t, Config{API: apiClient(t, api.URL), Collection: "notes"})
		res := call(t, cs, "remember", map[string]any{"text": "Dana keeps bees"})
		out := structured[Outcome](t, res)
		if len(out.Warnings) != 1 || !strings.Contains(text(res), "Warning: the memory's confidence 0.4675 is below the retrieval gate 0.5: it is returned only as the best match of a question.") {
			t.Errorf("warnings %q, summary:\n%s", out.Warnings, text(res))
		}
	})
}

// TestToolErrors: every failure is a tool error (IsError) saying what the
// native API said, or a fixed text when it did not answer; a bad input is
// refused before any request; nothing internal reaches the model.
func TestToolErrors(t *testing.T) {
	f, api := newFake(t, fakeAnswers())
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	cs := connect(t, Config{API: apiClient(t, api.URL), Logger: log})
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	csDown := connect(t, Config{API: apiClient(t, downURL), Collection: "notes", Logger: log})
	for _, tt := range []struct {
		name     string
		cs       *mcp.ClientSession
		tool     string
		args     map[string]any
		want     string
		requests int // reaching the fake
	}{
		{"no collection, no default", cs, "remember", map[string]any{"text": "x"}, "collection: required", 0},
		{"missing text", cs, "remember", map[string]any{"collection": "c"}, "text", 0},
		{"unknown argument", cs, "stats", map[string]any{"collection": "c", "zzz": 1}, "zzz", 0},
		{"wrong type", cs, "recall", map[string]any{"collection": "c", "query": 3}, "query", 0},
		{"limit too large", cs, "recall", map[string]any{"collection": "c", "query": "q", "limit": 51}, "limit", 0},
		{"bad grounding", cs, "remember", map[string]any{"collection": "c", "text": "x", "grounding": "sure"}, "grounding", 0},
		{"speaker not a string", cs, "remember", map[string]any{"collection": "c", "text": "x", "speaker": []string{"Ann", "Cy"}}, "speaker", 0},
		{"bad time", cs, "remember", map[string]any{"collection": "c", "text": "x", "observed_at": "yesterday"}, "observed_at: \"yesterday\" is not an RFC 3339 time", 0},
		{"bad at", cs, "recall", map[string]any{"collection": "c", "query": "q", "at": "yesterday"}, "at: \"yesterday\" is not an RFC 3339 time", 0},
		{"at without a zone", cs, "recall", map[string]any{"collection": "c", "query": "q", "at": "2026-06-01T00:00:00"}, "at: \"2026-06-01T00:00:00\" is not an RFC 3339 time", 0},
		{"at of year 0", cs, "recall", map[string]any{"collection": "c", "query": "q", "at": "0000-06-01T00:00:00Z"}, "at: \"0000-06-01T00:00:00Z\" is not an RFC 3339 time", 0},
		{"at not a string", cs, "recall", map[string]any{"collection": "c", "query": "q", "at": 20260601}, "at", 0},
		{"forget both", cs, "forget", map[string]any{"collection": "c", "session_id": "s", "memory_id": "m"}, "exactly one of session_id and memory_id", 0},
		{"forget neither", cs, "forget", map[string]any{"collection": "c"}, "exactly one of session_id and memory_id", 0},
		{"not found", cs, "confirm", map[string]any{"collection": "c", "memory_id": "nope"}, "confirm: memrank refused the call (HTTP 404 Not Found): no such memory or collection", 1},
		{"unauthorized", cs, "confirm", map[string]any{"collection": "c", "memory_id": "locked"}, "(HTTP 401 Unauthorized): Unauthorized: invalid API key", 1},
		{"unavailable", cs, "confirm", map[string]any{"collection": "c", "memory_id": "overloaded"}, "(HTTP 503 Service Unavailable): Service unavailable: try again", 1},
		{"unreadable answer", cs, "confirm", map[string]any{"collection": "c", "memory_id": "garbage"}, "confirm: memrank's answer could not be read", 1},
		{"unreachable", csDown, "stats", map[string]any{}, "stats: memrank's API could not be reached", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.requests())
			res := call(t, tt.cs, tt.tool, tt.args)
			if !res.IsError {
				t.Fatalf("not a tool error: %s", text(res))
			}
			if got := text(res); !strings.Contains(got, tt.want) {
				t.Errorf("tool error %q, want it to contain %q", got, tt.want)
			}
			if strings.Contains(text(res), "127.0.0.1") {
				t.Errorf("the tool error names an address: %q", text(res))
			}
			if n := len(f.requests()) - before; n != tt.requests {
				t.Errorf("%d requests reached the native API, want %d", n, tt.requests)
			}
		})
	}
	if !strings.Contains(logs.String(), "127.0.0.1") {
		t.Errorf("the log does not have the cause of the unreachable API:\n%s", logs.String())
	}
}

// TestToolList: the six tools, each described, with the required
// arguments in its schema and hints that match what it does.
func TestToolList(t *testing.T) {
	_, api := newFake(t, nil)
	cs := connect(t, Config{API: apiClient(t, api.URL)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Required    []string
		ReadOnly    bool
		Destructive bool
	}
	got := map[string]summary{}
	for _, tool := range res.Tools {
		if len(tool.Description) < 80 {
			t.Errorf("%s: description too short to guide a model: %q", tool.Name, tool.Description)
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s: no output schema", tool.Name)
		}
		s := structuredSchema(t, tool.InputSchema)
		slices.Sort(s.Required)
		props := structured[struct {
			Properties map[string]struct {
				Type                any // a string, or a list of them
				Format, Description string
			}
		}](t, &mcp.CallToolResult{StructuredContent: tool.InputSchema}).Properties
		switch tool.Name {
		case "recall":
			// at: an RFC 3339 time, optional.
			if at := props["at"]; at.Type != "string" || at.Format != "date-time" || !strings.Contains(at.Description, "RFC 3339") {
				t.Errorf("recall's at: %+v", at)
			}
		case "remember", "correct":
			// speaker: who said it, an optional name.
			if sp := props["speaker"]; sp.Type != "string" || !strings.Contains(sp.Description, "who said") {
				t.Errorf("%s's speaker: %+v", tool.Name, sp)
			}
		}
		got[tool.Name] = summary{Required: s.Required, ReadOnly: tool.Annotations.ReadOnlyHint,
			Destructive: tool.Annotations.DestructiveHint != nil && *tool.Annotations.DestructiveHint}
	}
	want := map[string]summary{
		"remember": {Required: []string{"text"}},
		"recall":   {Required: []string{"query"}, ReadOnly: true},
		"confirm":  {Required: []string{"memory_id"}},
		"correct":  {Required: []string{"memory_id", "text"}, Destructive: true},
		"forget":   {Destructive: true},
		"stats":    {ReadOnly: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func structuredSchema(t *testing.T, s any) struct{ Required []string } {
	t.Helper()
	return structured[struct{ Required []string }](t, &mcp.CallToolResult{StructuredContent: s})
}

// TestPanicIsToolError: a handler that panics answers a tool error and the
// server goes on serving.
func TestPanicIsToolError(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v0"}, nil)
	add(srv, slog.New(slog.DiscardHandler), &mcp.Tool{Name: "boom", InputSchema: nil},
		func(context.Context, *mcp.CallToolRequest, StatsInput) (string, StatsOutput, error) {
			var out *StatsOutput
			return "", *out, nil // a nil pointer: panics
		})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()
	for range 2 {
		res := call(t, cs, "boom", map[string]any{})
		if !res.IsError || text(res) != "boom: internal error" {
			t.Errorf("got %+v %q, want the tool error \"boom: internal error\"", res.IsError, text(res))
		}
	}
}

func TestConfigValidate(t *testing.T) {
	_, api := newFake(t, nil)
	for _, tt := range []struct {
		name string
		c    Config
		want string
	}{
		{"ok", Config{API: apiClient(t, api.URL)}, ""},
		{"no API", Config{}, "API is required"},
		{"long collection", Config{API: apiClient(t, api.URL), Collection: strings.Repeat("c", 256)}, "longer than 255"},
		{"bad header", Config{API: apiClient(t, api.URL), TenantHeader: "x tenant"}, "not a header name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
			if _, nerr := New(tt.c); (nerr == nil) != (err == nil) {
				t.Errorf("New() = %v, Validate() = %v", nerr, err)
			}
		})
	}
}
