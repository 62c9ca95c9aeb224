package native

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/tenancy"
	"github.com/memrank/memrank/upstream"
)

// usedEnv is the native API over a real write path on the embedded store.
func usedEnv(t *testing.T, policy *tenancy.Policy) http.Handler {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ip := upstream.ServeInProcess(store.NewServer(db))
	t.Cleanup(func() { ip.Close() })
	client, err := qdrant.NewClient(ip.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embed.NewLocal(64)
	if err != nil {
		t.Fatal(err)
	}
	cfg := dedup.Config{Codec: codec, Embedder: emb, Now: func() time.Time { return time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC) }}
	if policy != nil {
		cfg.Tenancy = policy
	}
	eng, err := dedup.New(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return newHandler(t, Config{Ranker: &fakeRetriever{}, Writer: eng, Inspector: eng, Tenancy: policy})
}

type outcomeEnvelope struct {
	Result dedup.Outcome `json:"result"`
}

func observeID(t *testing.T, h http.Handler, text string, header ...string) string {
	t.Helper()
	r := do(t, h, http.MethodPost, "/v1/observe", `{"collection":"m","text":"`+text+`"}`, header...)
	if r.code != http.StatusOK {
		t.Fatalf("observe: %d %s", r.code, r.body)
	}
	var out outcomeEnvelope
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Result.MemoryID
}

func TestUsedRoute(t *testing.T) {
	h := usedEnv(t, nil)
	id := observeID(t, h, "Dana uses Neovim")
	tests := []struct {
		name         string
		path, body   string
		header       []string
		wantCode     int
		wantUses     int
		wantReplayed bool
		wantInBody   string
	}{
		{name: "first use", path: "/v1/memories/" + id + "/used",
			body:     `{"collection":"m","observation_id":"u1","session_id":"s2","turn_id":"4","at":"2026-11-01T09:00:00Z"}`,
			wantCode: 200, wantUses: 1, wantInBody: `"decision":"used"`},
		{name: "the same observation id", path: "/v1/memories/" + id + "/used", body: `{"collection":"m","observation_id":"u1"}`,
			wantCode: 200, wantUses: 1, wantReplayed: true},
		{name: "the Idempotency-Key header", path: "/v1/memories/" + id + "/used", body: `{"collection":"m"}`,
			header: []string{"Idempotency-Key", "u1"}, wantCode: 200, wantUses: 1, wantReplayed: true},
		{name: "a new use", path: "/v1/memories/" + id + "/used", body: `{"collection":"m"}`, wantCode: 200, wantUses: 2},
		{name: "unknown id", path: "/v1/memories/42/used", body: `{"collection":"m"}`, wantCode: 404},
		{name: "bad id", path: "/v1/memories/nope/used", body: `{"collection":"m"}`, wantCode: 400, wantInBody: "id"},
		{name: "unknown field", path: "/v1/memories/" + id + "/used", body: `{"collection":"m","ids":["1"]}`, wantCode: 400, wantInBody: "ids"},
		{name: "no collection", path: "/v1/memories/" + id + "/used", body: `{}`, wantCode: 400, wantInBody: "collection"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, h, http.MethodPost, tc.path, tc.body, tc.header...)
			if r.code != tc.wantCode || !strings.Contains(string(r.body), tc.wantInBody) {
				t.Fatalf("status %d, body %s; want %d with %q", r.code, r.body, tc.wantCode, tc.wantInBody)
			}
			if tc.wantCode != 200 {
				return
			}
			var out outcomeEnvelope
			if err := json.Unmarshal(r.body, &out); err != nil {
				t.Fatal(err)
			}
			if out.Result.Uses != tc.wantUses || out.Result.Replayed != tc.wantReplayed || out.Result.MemoryID != id {
				t.Errorf("outcome %+v", out.Result)
			}
		})
	}
	if r := do(t, h, http.MethodGet, "/v1/memories/"+id+"/used", ""); r.code != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d", r.code)
	}
}

func TestUsedBatchRoute(t *testing.T) {
	h := usedEnv(t, nil)
	a, b := observeID(t, h, "Likes jazz"), observeID(t, h, "Plays chess")
	body := `{"collection":"m","ids":["` + a + `",42,"` + b + `"],"observation_id":"turn-9"}`
	for round := range 2 {
		r := do(t, h, http.MethodPost, "/v1/memories/used", body)
		if r.code != http.StatusOK {
			t.Fatalf("status %d: %s", r.code, r.body)
		}
		var resp UsedBatchResponse
		if err := json.Unmarshal(r.body, &resp); err != nil {
			t.Fatal(err)
		}
		got := resp.Result
		if len(got) != 3 || got[0].Outcome == nil || got[0].Outcome.Uses != 1 || got[0].Outcome.Replayed != (round == 1) ||
			got[1].MemoryID != "42" || got[1].Error != "not_found" || got[2].MemoryID != b {
			t.Errorf("round %d: %s", round, r.body)
		}
	}
	for _, tc := range []struct{ name, body, field string }{
		{"ids not an array", `{"collection":"m","ids":"x"}`, "ids"},
		{"no ids", `{"collection":"m"}`, "ids"},
		{"a bad id", `{"collection":"m","ids":["x"]}`, "ids[0]"},
	} {
		if r := do(t, h, http.MethodPost, "/v1/memories/used", tc.body); r.code != http.StatusBadRequest || !strings.Contains(string(r.body), tc.field) {
			t.Errorf("%s: status %d: %s", tc.name, r.code, r.body)
		}
	}
}

func TestUsedTenancy(t *testing.T) {
	h := usedEnv(t, &tenancy.Policy{Key: "user_id", Header: "x-tenant"})
	id := observeID(t, h, "Likes jazz", "X-Tenant", "alice")
	path := "/v1/memories/" + id + "/used"
	for _, tc := range []struct {
		name   string
		path   string
		body   string
		header []string
		want   int
	}{
		{"no tenant", path, `{"collection":"m"}`, nil, http.StatusForbidden},
		{"another tenant", path, `{"collection":"m"}`, []string{"X-Tenant", "bob"}, http.StatusNotFound},
		{"batch, another tenant", "/v1/memories/used", `{"collection":"m","ids":["` + id + `"]}`, []string{"X-Tenant", "bob"}, http.StatusOK},
		{"batch, no tenant", "/v1/memories/used", `{"collection":"m","ids":["` + id + `"]}`, nil, http.StatusForbidden},
		{"the owner", path, `{"collection":"m"}`, []string{"X-Tenant", "alice"}, http.StatusOK},
	} {
		r := do(t, h, http.MethodPost, tc.path, tc.body, tc.header...)
		if r.code != tc.want {
			t.Errorf("%s: status %d: %s", tc.name, r.code, r.body)
		}
		if tc.name == "batch, another tenant" && !strings.Contains(string(r.body), "not_found") {
			t.Errorf("%s: bob's batch reached alice's memory: %s", tc.name, r.body)
		}
	}
}

// TestUsedNotConfigured: a write path without outcome feedback answers 501.
func TestUsedNotConfigured(t *testing.T) {
	h := writeHandler(t, &fakeWritePath{}, Config{})
	for _, p := range []string{"/v1/memories/7/used", "/v1/memories/used"} {
		if r := do(t, h, http.MethodPost, p, `{"collection":"m","ids":["7"]}`); r.code != http.StatusNotImplemented {
			t.Errorf("%s: status %d: %s", p, r.code, r.body)
		}
	}
}

// FuzzDecodeUsed: any body of the used routes decodes or is refused with an
// input error, never panics; what is accepted keeps within the bounds.
func FuzzDecodeUsed(f *testing.F) {
	for _, s := range []string{
		`{"collection":"m","ids":["553f9722-8ebe-5636-9720-a487cf263fc6",42],"observation_id":"t1","at":"2026-11-01T10:00:00Z"}`,
		`{"collection":"m","session_id":"s","turn_id":"4"}`,
		`{"ids":[1,2,3,18446744073709551616]}`,
		`{"ids":"x"}`, `{"at":5}`, "{\"collection\":\"\xff\"}", `null`, `[]`, `{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		b, err := decodeUsed(body, usedBatchFields)
		if err != nil {
			var ie *dedup.InputError
			if !errors.As(err, &ie) || ie.Field == "" {
				t.Fatalf("error %T (%v) is not an input error naming a field", err, err)
			}
			return
		}
		if len(b.IDs) > dedup.MaxUseBatch {
			t.Fatalf("%d ids accepted", len(b.IDs))
		}
		for i, id := range b.IDs {
			if err := dedup.CheckMemoryID("ids", id); err != nil {
				t.Fatalf("ids[%d] %q accepted: %v", i, id, err)
			}
		}
	})
}
