package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/internal/apiclient"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

// newStore is an embedded store reached as memrank reaches it: go-client
// over gRPC in process.
func newStore(t *testing.T) *qdrant.Client {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ip := upstream.ServeInProcess(store.NewServer(db))
	client, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.Close()
		ip.Close()
		db.Close()
	})
	return client
}

func openSmall(t *testing.T) *Set {
	t.Helper()
	s, err := Open("testdata/small.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rawSmall is the raw row of testdata/small.jsonl, by hand. Cosines:
//
//	q-editor: 7 0.999, 1 0.995, 2 0.975, 4 0.306, 3 0.100, ...: fact
//	  editor/neovim at 1 (7; 1 restates it at 2): P@5 1/5, nDCG 1.
//	q-home (limit 3): 3 0.995, 4 0.970, 2 0.409: P@5 1/5, nDCG 1.
//	q-drink: 9007199254740993 0.995, the UUID 0.970, 4 0.211, ...: both
//	  relevant first, P@5 2/5, nDCG 1.
//	q-none: no relevant memory.
//
// No irrelevant memory is above a relevant one.
var rawSmall = Summary{Queries: 4, WithRelevant: 3, Without: 1,
	P5: (0.2 + 0.2 + 0.4) / 3, P10: (0.1 + 0.1 + 0.2) / 3, NDCG10: 1, MRR: 1}

func TestRunEmbedded(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	set := openSmall(t)
	cfg := Config{Set: set, Seed: 1, Collection: "eval", Where: "test", Store: st, Base: BaseSetting(rank.DefaultGuard(), scoring.DefaultParams())}
	var stages []string
	cfg.Progress = func(stage string, done, total int) {
		if done == 0 {
			stages = append(stages, stage)
		}
		if done > total {
			t.Errorf("%s: %d of %d", stage, done, total)
		}
	}
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"loading", "ranking"}, stages); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	var names []string
	for _, r := range rep.Rows {
		names = append(names, r.Name)
		if r.Queries != 4 || r.WithRelevant != 3 || r.Without != 1 {
			t.Errorf("%s: %d queries, %d with relevant memories", r.Name, r.Queries, r.WithRelevant)
		}
		if r.PassedThrough != 0 {
			t.Errorf("%s: %d passed through (%s)", r.Name, r.PassedThrough, r.PassThroughReason)
		}
		if r.Reads != (r.Name != "raw") {
			t.Errorf("%s: reads reported %v", r.Name, r.Reads)
		}
	}
	if diff := cmp.Diff([]string{"raw", "memrank", "freshness_weight_0", "focus_off", "access_weight_0", "confidence_weight_1", "gate_off"}, names); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(rawSmall, rep.Rows[0].Summary, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("raw row (-want +got):\n%s", diff)
	}
	if rep.Limit != 0 || rep.Set.Memories != 7 || rep.Set.Queries != 4 || len(rep.PerQuery) != 4 || len(rep.Notes) != 0 {
		t.Errorf("report %+v", rep)
	}
	if got := rep.PerQuery[2].Metrics["raw"]; got.P5 != 0.4 {
		t.Errorf("q-drink raw P@5 %v, want 0.4: the u64 and UUID ids must match the set's", got.P5)
	}

	// Run again on the same store: the collection is used as it is.
	cfg.Progress = nil
	cfg.Part = PartTest
	rep2, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep2.Notes) != 1 || !strings.Contains(rep2.Notes[0], `collection "eval" existed: used as it is`) {
		t.Errorf("notes %q", rep2.Notes)
	}
	if rep2.Rows[0].Queries != 1 || rep2.Split != "test" {
		t.Errorf("test split: %d queries, split %q; want 1 of the 4 topics' queries", rep2.Rows[0].Queries, rep2.Split)
	}
	var table bytes.Buffer
	if err := rep2.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "split test (split seed 1): 1 query (") {
		t.Errorf("table:\n%s", table.String())
	}

	// A collection of another dim is refused.
	other := *set
	other.Header.Dim = 8
	if _, err := Load(ctx, st, &other, "eval", "", nil); err == nil || !strings.Contains(err.Error(), "vectors of 4 dimensions; the set's dim is 8") {
		t.Errorf("Load with another dim: %v", err)
	}
}

func TestRunFit(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	set := openSmall(t)
	rep, err := Run(ctx, Config{Set: set, Seed: 1, Collection: "eval", Store: st, Base: BaseSetting(rank.DefaultGuard(), scoring.DefaultParams()), Fit: true})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Fit
	if f == nil || f.Collection != "eval_fit" || len(f.Rows) != 2 || f.Rows[0].Name != "default" || f.Rows[1].Name != "fitted" {
		t.Fatalf("fit report %+v", f)
	}
	if f.Candidates < 1771 || f.TrainPairs+f.TestPairs == 0 || f.TestQueries != 1 {
		t.Errorf("fit report %+v", f)
	}
	if f.Rows[0].Test == nil || f.Rows[0].Test.Queries != 1 {
		t.Errorf("held-out metrics %+v", f.Rows[0].Test)
	}
	// The fit's copy has no stored confidence; the first collection keeps
	// them.
	for coll, want := range map[string]bool{"eval_fit": false, "eval": true} {
		pts, err := st.Get(ctx, &qdrant.GetPoints{CollectionName: coll, Ids: []*qdrant.PointId{qdrant.NewIDNum(1)}, WithPayload: qdrant.NewWithPayload(true)})
		if err != nil || len(pts) != 1 {
			t.Fatalf("%s: %v, %v", coll, pts, err)
		}
		if _, has := pts[0].GetPayload()["confidence"]; has != want {
			t.Errorf("%s: confidence stored %v, want %v", coll, has, want)
		}
		if got := pts[0].GetPayload()["text"].GetStringValue(); got != "Dana uses Neovim" {
			t.Errorf("%s: text %q", coll, got)
		}
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("JSON: %v\n%s", err, buf.String())
	}
	if _, ok := back["fit"].(map[string]any)["rows"]; !ok {
		t.Errorf("JSON without fit rows: %s", buf.String())
	}
}

func TestRunErrors(t *testing.T) {
	set := openSmall(t)
	st := newStore(t)
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no set", Config{Collection: "c", Store: st}, "no set"},
		{"both", Config{Set: set, Collection: "c", Store: st, Remote: remoteAt(t, "http://x")}, "not both"},
		{"neither", Config{Set: set, Collection: "c"}, "not both"},
		{"fit remote", Config{Set: set, Collection: "c", Remote: remoteAt(t, "http://x"), Fit: true}, "needs a store"},
		{"limit", Config{Set: set, Collection: "c", Store: st, Limit: 1001}, "limit 1001"},
		{"text without embedder", Config{Set: withText(t), Collection: "c", Store: st}, "1 items have a text and no vector, and there is no embedder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func withText(t *testing.T) *Set {
	s, err := Parse(strings.NewReader(lines(header,
		`{"memory": {"id": 1, "text": "a memory", "payload": {}}}`,
		`{"query": {"id": "q", "vector": [1, 0]}}`)), "s")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeMemrank answers /v1/retrieve: the store's order for mode off, a
// re-ranked one otherwise; it records the bodies.
type fakeMemrank struct {
	t      *testing.T
	mu     sync.Mutex
	bodies []map[string]any
}

func (f *fakeMemrank) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/retrieve" || r.Header.Get("api-key") != "k" {
		http.Error(w, `{"status": {"error": "wrong request"}}`, http.StatusBadRequest)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		f.t.Errorf("body %s: %v", b, err)
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.mu.Unlock()
	if body["collection"] != "mem" {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"status": {"error": "Not found: Collection mem2 doesn't exist!"}, "time": 0}`)
		return
	}
	switch body["mode"] {
	case "off":
		io.WriteString(w, `{"result": [{"id": 1, "score": 0.9}, {"id": 9007199254740993, "score": 0.8}], "status": "ok", "time": 0, "reranked": false, "pass_through": "mode off"}`)
	default:
		io.WriteString(w, `{"result": [{"id": 9007199254740993, "score": 0.9}, {"id": "6F9619FF-8B86-D011-B42D-00C04FC964FF", "score": 0.8}], "status": "ok", "time": 0, "reranked": true}`)
	}
}

func TestRunRemote(t *testing.T) {
	fake := &fakeMemrank{t: t}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	set, err := Parse(strings.NewReader(lines(header,
		`{"memory": {"id": 9007199254740993, "vector": [1, 0], "payload": {}}}`,
		`{"memory": {"id": "6f9619ff-8b86-d011-b42d-00c04fc964ff", "vector": [1, 0], "payload": {}}}`,
		`{"memory": {"id": 1, "vector": [1, 0], "payload": {}}}`,
		`{"query": {"id": "q1", "vector": [0.5, 0.25], "relevant": {"9007199254740993": 2, "6f9619ff-8b86-d011-b42d-00c04fc964ff": 1}, "limit": 2}}`,
		`{"query": {"id": "q2", "text": "a question"}}`,
	)), "s")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{Set: set, Collection: "mem", Remote: remoteAt(t, srv.URL+"/")})
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"collection": "mem", "vector": []any{0.5, 0.25}, "limit": 2.0, "explain": false, "mode": "off"},
		{"collection": "mem", "vector": []any{0.5, 0.25}, "limit": 2.0, "explain": false},
		// Without a vector the text goes: the server embeds it as its
		// collection was embedded.
		{"collection": "mem", "text": "a question", "limit": 10.0, "explain": false, "mode": "off"},
		{"collection": "mem", "text": "a question", "limit": 10.0, "explain": false},
	}
	sortBodies := cmpopts.SortSlices(func(a, b map[string]any) bool {
		return strings.Compare(jsonText(a), jsonText(b)) < 0
	})
	if diff := cmp.Diff(want, fake.bodies, sortBodies); diff != "" {
		t.Errorf("bodies (-want +got):\n%s", diff)
	}
	if len(rep.Rows) != 2 || rep.Rows[0].Name != "raw" || rep.Rows[1].Name != "memrank" || rep.Memrank != nil {
		t.Fatalf("rows %+v", rep.Rows)
	}
	// raw: 1 (irrelevant) then 9007199254740993 (grade 2): P@5 1/5, MRR
	// 1/2, one inversion (the UUID is not listed). memrank: both relevant
	// first.
	ideal := 3 + 1/1.584962500721156
	if diff := cmp.Diff(Summary{Queries: 2, WithRelevant: 1, Without: 1, P5: 0.2, P10: 0.1, NDCG10: (3 / 1.584962500721156) / ideal, MRR: 0.5, Inversions: 1},
		rep.Rows[0].Summary, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("raw (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Summary{Queries: 2, WithRelevant: 1, Without: 1, P5: 0.4, P10: 0.2, NDCG10: 1, MRR: 1},
		rep.Rows[1].Summary, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("memrank (-want +got):\n%s", diff)
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "its own clock") {
		t.Errorf("notes %q", rep.Notes)
	}

	// The server's errors come back with its message.
	_, err = Run(context.Background(), Config{Set: set, Collection: "mem2", Remote: remoteAt(t, srv.URL)})
	if err == nil || !strings.Contains(err.Error(), "Collection mem2 doesn't exist! (HTTP 404)") {
		t.Errorf("error %v", err)
	}
}

// remoteAt is the CLI's client of the memrank at url, with api-key k.
func remoteAt(t *testing.T, url string) *apiclient.Remote {
	t.Helper()
	r, err := apiclient.NewRemote(apiclient.RemoteConfig{URL: url, APIKey: "k", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
