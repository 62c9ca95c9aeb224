package native

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/internal/demo"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/tenancy"
	"github.com/memrank/memrank/upstream"
)

// demoEnv is the real stack under the native API: the embedded store served
// in process, go-client, rank.Ranker, the local embedder, and the demo set
// loaded as `memrank serve --demo` loads it.
type demoEnv struct {
	client  *qdrant.Client
	emb     embed.Embedder
	handler http.Handler
	ranker  *rank.Ranker
	now     time.Time
}

func newDemoEnv(t *testing.T) *demoEnv {
	t.Helper()
	return newDemoEnvWith(t, nil)
}

// vector embeds text as the demo's collection was.
func (e *demoEnv) vector(t *testing.T, text string) []float32 {
	t.Helper()
	v, err := e.emb.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

// demoEmbedder is an embedder the demo stack can load with: the default,
// semantic one, or the lexical one (local).
func demoEmbedder(t *testing.T, local bool) embed.Embedder {
	t.Helper()
	var (
		e   embed.Embedder
		err error
	)
	if local {
		e, err = embed.NewLocal(384)
	} else {
		e, err = embed.NewSemantic(384)
	}
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// newDemoEnvWith builds the demo stack with a tenancy policy (nil: off) and
// options for the store's gRPC server (interceptors that watch what reaches
// the upstream).
func newDemoEnvWith(t *testing.T, policy *tenancy.Policy, opts ...grpc.ServerOption) *demoEnv {
	t.Helper()
	return newDemoEnvEmbedder(t, demoEmbedder(t, false), policy, opts...)
}

// newDemoEnvEmbedder builds the demo stack with the embedder emb.
func newDemoEnvEmbedder(t *testing.T, emb embed.Embedder, policy *tenancy.Policy, opts ...grpc.ServerOption) *demoEnv {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ip := upstream.ServeInProcess(store.NewServer(db, opts...))
	t.Cleanup(func() { ip.Close() })
	client, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	// A fixed "today" a few months after the set was written: the loader
	// shifts the timestamps to it, the ranker measures ages from it.
	now := demo.Anchor().Add(98 * 24 * time.Hour)
	ctx := context.Background()
	res, err := demo.Load(ctx, client, demo.LoadOptions{Embedder: emb, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if res.Points < 180 {
		t.Fatalf("loaded %d points", res.Points)
	}
	params := scoring.DefaultParams()
	codec, err := memory.NewCodec(memory.DefaultKeys(), params)
	if err != nil {
		t.Fatal(err)
	}
	// The demo's collection records the local embedder: rank's default
	// embedder guards give it a lower band and floor.
	ranker, err := rank.New(client, rank.Config{Params: params, Codec: codec, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Ranker: ranker, Embedder: emb, Tenancy: policy, Ready: func(ctx context.Context) error {
		_, err := client.HealthCheck(ctx)
		return err
	}})
	if err != nil {
		t.Fatal(err)
	}
	return &demoEnv{client: client, emb: emb, handler: h, now: now, ranker: ranker}
}

func (e *demoEnv) retrieve(t *testing.T, body string) RetrieveResponse {
	t.Helper()
	r := do(t, e.handler, http.MethodPost, "/v1/retrieve", body)
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	var resp RetrieveResponse
	if err := json.Unmarshal(r.body, &resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestDemoQueriesRerank runs the demo's example questions through the real
// ranker over the embedded store: memrank's order differs from the raw
// vector order, and the memory the demo promises comes first.
func TestDemoQueriesRerank(t *testing.T) {
	for _, local := range []bool{false, true} {
		env := newDemoEnvEmbedder(t, demoEmbedder(t, local), nil)
		t.Run(env.emb.Model(), func(t *testing.T) { testDemoQueries(t, env) })
	}
}

func testDemoQueries(t *testing.T, env *demoEnv) {
	ctx := context.Background()
	const limit = 5
	for _, q := range demo.Queries() {
		t.Run(q.Text, func(t *testing.T) {
			raw, err := env.client.Query(ctx, &qdrant.QueryPoints{
				CollectionName: demo.Collection,
				Query:          qdrant.NewQueryDense(env.vector(t, q.Text)),
				Limit:          qdrant.PtrOf(uint64(limit)),
				WithPayload:    qdrant.NewWithPayload(true),
			})
			if err != nil {
				t.Fatal(err)
			}
			var rawIDs, rawTexts []string
			for _, p := range raw {
				rawIDs = append(rawIDs, NewPointID(p.GetId()).String())
				rawTexts = append(rawTexts, p.GetPayload()["text"].GetStringValue())
			}
			resp := env.retrieve(t, fmt.Sprintf(`{"collection":%q,"text":%q,"limit":%d}`, demo.Collection, q.Text, limit))
			if !resp.Reranked {
				t.Fatalf("not re-ranked: %s", resp.PassThrough)
			}
			var ids, texts []string
			for _, r := range resp.Result {
				ids = append(ids, r.ID.String())
				var p struct{ Text string }
				_ = json.Unmarshal(r.Payload, &p)
				texts = append(texts, p.Text)
				if r.Explanation == nil {
					t.Errorf("%s: no explanation", r.ID)
				}
			}
			if slices.Equal(ids, rawIDs) {
				t.Errorf("memrank's order is the raw order:\n%s", strings.Join(texts, "\n"))
			}
			if top := q.TopFor(env.emb.Model()); len(texts) == 0 || !strings.Contains(texts[0], top) {
				t.Errorf("first result %q, want the memory holding %q\nmemrank: %q\nraw:     %q", first(texts), top, texts, rawTexts)
			}
			if testing.Verbose() {
				t.Logf("raw:     %q\nmemrank: %q", rawTexts, texts)
			}
		})
	}
}

// rawResults checks a 200 and returns the results with every field's JSON
// text as sent.
func rawResults(t *testing.T, r response) []map[string]json.RawMessage {
	t.Helper()
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	var env struct{ Result []map[string]json.RawMessage }
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatal(err)
	}
	return env.Result
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// TestDemoStories pins what the demo's README tells: superseded memories
// are never returned, duplicates fold into the best copy, speculation is
// gated out, unscored imports keep a null confidence, and u64 ids and
// float payload values survive the JSON answer.
func TestDemoStories(t *testing.T) {
	env := newDemoEnv(t)

	live := env.retrieve(t, `{"collection":"dana_memories","text":"where does Dana live","limit":10}`)
	for _, r := range live.Result {
		if r.ID.Num == 1016 { // "Lives in Chicago", superseded by 1015
			t.Errorf("the superseded Chicago memory was returned")
		}
		if r.Confidence != nil && float64(*r.Confidence) < 0.5 && !r.BelowGate {
			t.Errorf("%s: confidence %v returned without the gate's fallback", r.ID, *r.Confidence)
		}
	}

	editor := env.retrieve(t, `{"collection":"dana_memories","text":"what editor does Dana use","limit":3}`)
	top := editor.Result[0]
	if top.ID.Num != 1001 || len(top.FoldedIDs) == 0 || top.Dedup == nil {
		t.Errorf("editor: first %v with folded %v (%v), want 1001 with its copies folded in", top.ID, top.FoldedIDs, top.Dedup)
	}
	if top.Explanation == nil || !top.Explanation.StoredConfidence || *top.AccessCount != 64 {
		t.Errorf("editor: explanation %+v, access count %v", top.Explanation, top.AccessCount)
	}

	db := env.retrieve(t, `{"collection":"dana_memories","text":"database version upgrade runbook","limit":10}`)
	var runbook *Result
	for i := range db.Result {
		if db.Result[i].Confidence == nil {
			runbook = &db.Result[i]
		}
	}
	if runbook == nil || !runbook.Explanation.Unscored || runbook.Bucket != nil || runbook.BelowGate {
		t.Errorf("the unscored runbook: %+v", runbook)
	}

	// The demo's wiki page (a UUID id) carries "version": 3 (an integer) and
	// "score": 3.0 (a float), and the desk memory has the id 2^53+1. Both are
	// asked for by id so that the check does not hang on the ranking; the
	// numbers are read from the answer's text, never through float64.
	const atlasPage, deskID = "5bc18d5a-42b0-5b33-8885-c2c54065f085", "9007199254740993"
	r := do(t, env.handler, http.MethodPost, "/v1/retrieve", `{"collection":"dana_memories",
		"text":"Project Atlas one-pager routing delivery fleets","limit":3,"explain":false,
		"filter":{"must":[{"has_id":["`+atlasPage+`"]}]}}`)
	page := rawResults(t, r)
	if len(page) != 1 || string(page[0]["id"]) != `"`+atlasPage+`"` {
		t.Fatalf("has_id %s: %s", atlasPage, r.body)
	}
	var payload map[string]json.RawMessage
	if err := json.Unmarshal(page[0]["payload"], &payload); err != nil {
		t.Fatal(err)
	}
	if string(payload["version"]) != "3" || string(payload["score"]) != "3.0" {
		t.Errorf("payload version %s, score %s: want the integer 3 and the float 3.0 kept apart", payload["version"], payload["score"])
	}
	if string(page[0]["confidence"]) != "null" {
		t.Errorf("the unscored wiki page has confidence %s", page[0]["confidence"])
	}
	r = do(t, env.handler, http.MethodPost, "/v1/retrieve", `{"collection":"dana_memories",
		"text":"her desk at the Acme office by the window","limit":3,"explain":false,
		"filter":{"must":[{"has_id":[`+deskID+`]}]}}`)
	desk := rawResults(t, r)
	if len(desk) != 1 || string(desk[0]["id"]) != deskID {
		t.Errorf("the id 2^53+1 did not come back exactly: %.300s", r.body)
	}

	// Upstream errors come back Qdrant-shaped with Qdrant's codes.
	r = do(t, env.handler, http.MethodPost, "/v1/retrieve", `{"collection":"nope","text":"hello"}`)
	if r.code != http.StatusNotFound || qdrantError(t, r) != "Not found: Collection `nope` doesn't exist!" {
		t.Errorf("unknown collection: %d %s", r.code, r.body)
	}
	r = do(t, env.handler, http.MethodPost, "/v1/retrieve", `{"collection":"dana_memories","vector":[0.1,0.2,0.3]}`)
	if r.code != http.StatusBadRequest || qdrantError(t, r) != "Wrong input: Vector dimension error: expected dim: 384, got 3" {
		t.Errorf("wrong dimension: %d %s", r.code, r.body)
	}
	if r := do(t, env.handler, http.MethodGet, "/readyz", ""); r.code != http.StatusOK {
		t.Errorf("readyz over the embedded store: %d %s", r.code, r.body)
	}
}

// TestDemoReadmeTable checks the table of examples/demo/README.md: for each
// question, the raw nearest neighbour is the memory the README names, and
// memrank's first result is the one it names.
func TestDemoReadmeTable(t *testing.T) {
	env := newDemoEnv(t)
	ctx := context.Background()
	// rawFate is what the README says becomes of the raw nearest neighbour:
	// "folded" (into memrank's first), "first" (memrank's first too),
	// "gated" (returned only below the confidence gate, if at all).
	tests := []struct{ question, raw, memrank, rawFate string }{
		{"what editor does Dana use", "Neovim is the editor she uses every day", "Uses Neovim as her main editor", "folded"},
		{"where does Dana live", "Her parents live in Madison, Wisconsin", "Her parents live in Madison, Wisconsin", "first"},
		{"when does Project Atlas launch", "Project Atlas might be cancelled", "Project Atlas launches on January 15", "gated"},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			raw, err := env.client.Query(ctx, &qdrant.QueryPoints{
				CollectionName: demo.Collection,
				Query:          qdrant.NewQueryDense(env.vector(t, tt.question)),
				Limit:          qdrant.PtrOf(uint64(1)),
				WithPayload:    qdrant.NewWithPayload(true),
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) != 1 || !strings.Contains(raw[0].GetPayload()["text"].GetStringValue(), tt.raw) {
				t.Errorf("raw nearest neighbour %v, the README says %q", raw, tt.raw)
			}
			resp := env.retrieve(t, fmt.Sprintf(`{"collection":%q,"text":%q,"limit":3,"explain":false}`, demo.Collection, tt.question))
			if len(resp.Result) == 0 {
				t.Fatal("no results")
			}
			var p struct{ Text string }
			if err := json.Unmarshal(resp.Result[0].Payload, &p); err != nil {
				t.Fatal(err)
			}
			if p.Text != tt.memrank {
				t.Errorf("memrank's first result %q, the README says %q", p.Text, tt.memrank)
			}
			for i, r := range resp.Result {
				var q struct{ Text string }
				_ = json.Unmarshal(r.Payload, &q)
				if !strings.Contains(q.Text, tt.raw) {
					continue
				}
				switch {
				case tt.rawFate == "folded":
					t.Errorf("the folded %q (%s) is returned at %d", q.Text, r.ID, i)
				case tt.rawFate == "gated" && !r.BelowGate:
					t.Errorf("the speculation %q (%s) is returned above the gate at %d", q.Text, r.ID, i)
				case tt.rawFate == "first" && i != 0:
					t.Errorf("the raw nearest neighbour %q (%s) is at %d, not first", q.Text, r.ID, i)
				}
			}
		})
	}
}

// upstreamCalls records, per gRPC method reaching the embedded store, the
// api-key metadata and whether the call had a deadline.
type upstreamCalls struct {
	mu    sync.Mutex
	keys  map[string][]string
	noDDL []string
}

func (u *upstreamCalls) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	_, hasDeadline := ctx.Deadline()
	u.mu.Lock()
	u.keys[info.FullMethod] = append(u.keys[info.FullMethod], md.Get("api-key")...)
	if !hasDeadline {
		u.noDDL = append(u.noDDL, info.FullMethod)
	}
	u.mu.Unlock()
	return h(ctx, req)
}

func (u *upstreamCalls) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.keys, u.noDDL = map[string][]string{}, nil
}

// TestTenancyAndCredentialsEndToEnd: with tenancy on (tenants from API
// keys), the caller's api-key reaches the store on the query, with a
// deadline; a tenant only ever gets its own memories, whatever filter it
// sends; no key is refused with 403 and a filter on the tenant key with 400.
func TestTenancyAndCredentialsEndToEnd(t *testing.T) {
	calls := &upstreamCalls{}
	calls.reset()
	policy := &tenancy.Policy{Key: "user_id", APIKeys: map[string]string{"dana-key": "dana", "eve-key": "eve"}}
	env := newDemoEnvWith(t, policy, grpc.ChainUnaryInterceptor(calls.intercept))
	ctx := context.Background()

	// Eve has copies of three of Dana's memories, used far more: without the
	// scope they would lead Dana's own answers.
	texts := []string{"Uses Neovim as her main editor", "Lives in Lisbon, in the Alfama neighbourhood", "Is allergic to peanuts"}
	var eve []*qdrant.PointStruct
	for i, text := range texts {
		payload, err := qdrantjson.DecodePayload([]byte(fmt.Sprintf(`{"text":%q,"user_id":"eve","memory_type":"fact","source":"direct",
			"confidence":0.95,"observations":5,"created_at":%q,"access_counts":{"replica-a":500}}`, text, memory.FormatTime(env.now.Add(-24*time.Hour)))))
		if err != nil {
			t.Fatal(err)
		}
		eve = append(eve, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(5000 + i)),
			Vectors: qdrant.NewVectorsDense(env.vector(t, text)), Payload: payload})
	}
	if _, err := env.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: demo.Collection, Wait: qdrant.PtrOf(true), Points: eve}); err != nil {
		t.Fatal(err)
	}
	calls.reset()

	tenantOf := func(t *testing.T, r response) []string {
		t.Helper()
		var out []string
		for _, res := range rawResults(t, r) {
			var p struct {
				UserID string `json:"user_id"`
			}
			if err := json.Unmarshal(res["payload"], &p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p.UserID)
		}
		return out
	}
	for _, tt := range []struct{ key, tenant, filter string }{
		{"dana-key", "dana", ``},
		{"eve-key", "eve", ``},
		// Hostile filters cannot widen the scope: they are ANDed with it.
		{"eve-key", "eve", `,"filter":{"should":[{"has_id":[1001,1015]},{"key":"memory_type","match":{"value":"fact"}}]}`},
		{"dana-key", "dana", `,"filter":{"must_not":[{"key":"source","match":{"value":"speculation"}}]}`},
	} {
		for _, q := range texts {
			r := do(t, env.handler, http.MethodPost, "/v1/retrieve",
				fmt.Sprintf(`{"collection":%q,"text":%q,"limit":10%s}`, demo.Collection, q, tt.filter), "Api-Key", tt.key)
			got := tenantOf(t, r)
			if len(got) == 0 {
				t.Errorf("%s %q%s: no results", tt.tenant, q, tt.filter)
			}
			// How the collection was recognised is not said to a tenant: a
			// rule from an unscoped sample would tell of others' points.
			var head struct{ Mode, Detection string }
			if err := json.Unmarshal(r.body, &head); err != nil || head.Mode != "rerank" || head.Detection != "" {
				t.Errorf("%s: mode %q detection %q (%v), want rerank and nothing more", tt.tenant, head.Mode, head.Detection, err)
			}
			for _, u := range got {
				if u != tt.tenant {
					t.Errorf("%s %q%s: a memory of %q came back", tt.tenant, q, tt.filter, u)
				}
			}
		}
	}
	calls.mu.Lock()
	queryKeys, noDDL := calls.keys["/qdrant.Points/Query"], calls.noDDL
	calls.mu.Unlock()
	if len(queryKeys) != 4*len(texts) || queryKeys[0] != "dana-key" || queryKeys[len(queryKeys)-1] != "dana-key" || queryKeys[len(texts)] != "eve-key" {
		t.Errorf("api-keys on the upstream queries: %q", queryKeys)
	}
	if len(noDDL) != 0 {
		t.Errorf("upstream calls without a deadline: %v", noDDL)
	}

	// Eve cannot reach Dana's memory by id either.
	r := do(t, env.handler, http.MethodPost, "/v1/retrieve",
		fmt.Sprintf(`{"collection":%q,"text":"editor","filter":{"must":[{"has_id":[1001]}]}}`, demo.Collection), "Api-Key", "eve-key")
	if got := rawResults(t, r); len(got) != 0 {
		t.Errorf("eve got dana's memory 1001: %s", r.body)
	}
	calls.reset()
	for _, tt := range []struct {
		name, body string
		header     []string
		code       int
	}{
		{"no key", `{"collection":"dana_memories","text":"editor"}`, nil, http.StatusUnauthorized},
		{"unknown key", `{"collection":"dana_memories","text":"editor"}`, []string{"Api-Key", "mallory"}, http.StatusUnauthorized},
		{"filter on the tenant key", `{"collection":"dana_memories","text":"editor","filter":{"must":[{"key":"user_id","match":{"value":"dana"}}]}}`,
			[]string{"Api-Key", "eve-key"}, http.StatusBadRequest},
		{"nested filter on the tenant key", `{"collection":"dana_memories","text":"editor","filter":{"should":[{"must_not":[{"key":"user_id","match":{"value":"eve"}}]}]}}`,
			[]string{"Api-Key", "eve-key"}, http.StatusBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, env.handler, http.MethodPost, "/v1/retrieve", tt.body, tt.header...)
			if r.code != tt.code {
				t.Fatalf("status %d, want %d: %s", r.code, tt.code, r.body)
			}
			qdrantError(t, r)
		})
	}
	calls.mu.Lock()
	defer calls.mu.Unlock()
	if n := len(calls.keys["/qdrant.Points/Query"]); n != 0 {
		t.Errorf("%d refused requests reached the store", n)
	}
}

// TestDemoReadmeCurls runs every curl request of examples/demo/README.md
// (the bodies after -d) against the demo stack: each is a valid request
// that answers results, the first of which is the memory the README's table
// promises for that question.
func TestDemoReadmeCurls(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "examples", "demo", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	bodies := regexp.MustCompile(`(?s)curl -s localhost:6333/v1/retrieve .*?-d '([^']*)'`).FindAllSubmatch(readme, -1)
	if len(bodies) < 3 {
		t.Fatalf("found %d curl requests in the README", len(bodies))
	}
	tops := map[string]string{}
	for _, q := range demo.Queries() {
		tops[q.Text] = q.Top
	}
	env := newDemoEnv(t)
	for _, m := range bodies {
		body := string(m[1])
		var req struct {
			Text   string
			Filter json.RawMessage
		}
		if err := json.Unmarshal(m[1], &req); err != nil {
			t.Fatalf("README body %s: %v", body, err)
		}
		resp := env.retrieve(t, body)
		if len(resp.Result) == 0 {
			t.Fatalf("%s: no results", body)
		}
		var p struct {
			Text       string
			MemoryType string `json:"memory_type"`
		}
		if err := json.Unmarshal(resp.Result[0].Payload, &p); err != nil {
			t.Fatal(err)
		}
		if top, ok := tops[req.Text]; !ok || !strings.Contains(p.Text, top) {
			t.Errorf("%s: first result %q, want the memory holding %q", body, p.Text, top)
		}
		if req.Filter != nil {
			for _, r := range resp.Result {
				if err := json.Unmarshal(r.Payload, &p); err != nil || p.MemoryType != "fact" {
					t.Errorf("%s: result %s of type %q escaped the filter", body, r.ID, p.MemoryType)
				}
			}
		}
	}
}

// TestDemoDropped: an answer says what it left out and why: the demo's
// editor question folds a restatement into 1001 and gates weak memories.
func TestDemoDropped(t *testing.T) {
	env := newDemoEnv(t)
	resp := env.retrieve(t, `{"collection":"dana_memories","text":"what editor does Dana use","limit":3}`)
	reasons := map[string]int{}
	folded := false
	for _, d := range resp.Dropped {
		reasons[d.Reason]++
		if d.Reason == "folded" && d.Into != nil && d.Into.String() == "1001" {
			folded = true
		}
		switch d.Reason {
		case "superseded", "not_retrievable", "archived", "decay_floor", "below_gate", "folded":
		default:
			t.Errorf("unknown reason %q", d.Reason)
		}
		for _, r := range resp.Result {
			if r.ID == d.ID {
				t.Errorf("%s is both returned and dropped", d.ID)
			}
		}
	}
	if !folded || reasons["below_gate"] == 0 {
		t.Errorf("dropped %+v: want a restatement folded into 1001 and gated memories", resp.Dropped)
	}
}

// builtins gives memrank's built-in embedders by model name, as
// embed.Service does.
type builtins struct{ configured embed.Embedder }

func (b builtins) For(model string) (embed.Embedder, bool) {
	if model == "" || model == b.configured.Model() {
		return b.configured, true
	}
	e, err := embed.NewBuiltin(model)
	return e, err == nil
}

// TestRetrieveRecordedEmbedder: a server whose configured embedder is the
// semantic one answers text questions about a collection written with the
// lexical one with the lexical model (the answer names it), and refuses
// them for a collection recorded with an external model it does not have.
func TestRetrieveRecordedEmbedder(t *testing.T) {
	lexEnv := newDemoEnvEmbedder(t, demoEmbedder(t, true), nil)
	sem := demoEmbedder(t, false)
	h, err := New(Config{Ranker: lexEnv.ranker, Embedder: sem, Records: lexEnv.ranker, Embedders: builtins{sem}})
	if err != nil {
		t.Fatal(err)
	}
	q := demo.Queries()[0]
	r := do(t, h, http.MethodPost, "/v1/retrieve", fmt.Sprintf(`{"collection":%q,"text":%q,"limit":3}`, demo.Collection, q.Text))
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	var resp RetrieveResponse
	if err := json.Unmarshal(r.body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Embedder == nil || resp.Embedder.Model != "memrank-local-hash-v1:384" || resp.Embedder.SameThreshold != nil {
		t.Errorf("embedder %+v, want the lexical model with the configured bands", resp.Embedder)
	}
	var p struct{ Text string }
	if top := q.TopFor(resp.Embedder.Model); len(resp.Result) == 0 || json.Unmarshal(resp.Result[0].Payload, &p) != nil || !strings.Contains(p.Text, top) {
		t.Errorf("first result %q, want %q", p.Text, top)
	}

	// A collection served as it is (mode off) is still embedded with its
	// model: the raw nearest neighbour of the lexical vector comes first.
	off, err := rank.New(lexEnv.client, rank.Config{Params: scoring.DefaultParams(),
		Collections: map[string]rank.CollectionConfig{demo.Collection: {Mode: rank.ModeOff}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err = New(Config{Ranker: off, Embedder: sem, Records: off, Embedders: builtins{sem}})
	if err != nil {
		t.Fatal(err)
	}
	r = do(t, h, http.MethodPost, "/v1/retrieve", fmt.Sprintf(`{"collection":%q,"text":%q,"limit":1}`, demo.Collection, q.Text))
	raw, err := lexEnv.client.Query(context.Background(), &qdrant.QueryPoints{CollectionName: demo.Collection,
		Query: qdrant.NewQueryDense(lexEnv.vector(t, q.Text)), Limit: qdrant.PtrOf(uint64(1))})
	if err != nil || len(raw) != 1 {
		t.Fatalf("raw query: %v", err)
	}
	if res := rawResults(t, r); len(res) != 1 || string(res[0]["id"]) != NewPointID(raw[0].GetId()).String() {
		t.Errorf("mode off: %s, want the lexical nearest neighbour %v", r.body, raw[0].GetId())
	}

	// Recorded with a model this server cannot make: refused, not guessed.
	ctx := context.Background()
	companion := demo.Collection + memory.AuditSuffix
	rec := memory.EmbedderRecord{Model: "text-embedding-3-small:384", Dimensions: 384, Collection: demo.Collection}
	if _, err := lexEnv.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: companion, Wait: qdrant.PtrOf(true),
		Points: []*qdrant.PointStruct{rec.Point()}}); err != nil {
		t.Fatal(err)
	}
	ranker, err := rank.New(lexEnv.client, rank.Config{Params: scoring.DefaultParams()})
	if err != nil {
		t.Fatal(err)
	}
	h, err = New(Config{Ranker: ranker, Embedder: sem, Records: ranker, Embedders: builtins{sem}})
	if err != nil {
		t.Fatal(err)
	}
	r = do(t, h, http.MethodPost, "/v1/retrieve", fmt.Sprintf(`{"collection":%q,"text":%q}`, demo.Collection, q.Text))
	want := "Bad request: collection dana_memories was written with the embedder text-embedding-3-small:384, which this server is not configured with; send a vector"
	if r.code != http.StatusBadRequest || qdrantError(t, r) != want {
		t.Errorf("%d %s, want 400 %q", r.code, r.body, want)
	}

	// Being re-embedded: refused (409) until the run ends.
	rec.Model, rec.MigratingTo = "memrank-local-hash-v1:384", "memrank-local-sem-v1:384"
	if _, err := lexEnv.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: companion, Wait: qdrant.PtrOf(true),
		Points: []*qdrant.PointStruct{rec.Point()}}); err != nil {
		t.Fatal(err)
	}
	moving, err := rank.New(lexEnv.client, rank.Config{Params: scoring.DefaultParams()})
	if err != nil {
		t.Fatal(err)
	}
	h, err = New(Config{Ranker: moving, Embedder: sem, Records: moving, Embedders: builtins{sem}})
	if err != nil {
		t.Fatal(err)
	}
	r = do(t, h, http.MethodPost, "/v1/retrieve", fmt.Sprintf(`{"collection":%q,"text":%q}`, demo.Collection, q.Text))
	if r.code != http.StatusConflict || !strings.Contains(qdrantError(t, r), "is being re-embedded from memrank-local-hash-v1:384 to memrank-local-sem-v1:384") {
		t.Errorf("%d %s, want 409 naming the move", r.code, r.body)
	}
}
