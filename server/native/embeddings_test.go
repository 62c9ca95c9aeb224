package native

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/telemetry/settings"
	"github.com/memrank/memrank/tenancy"
	"github.com/memrank/memrank/upstream"
)

// embedEnv is the native API over the real write path and the configured
// embedder (the default: semantic, 384) on the embedded store, and a
// client of that store.
func embedEnv(t *testing.T, cfg Config) (http.Handler, *qdrant.Client) {
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
	svc, err := embed.New(embed.DefaultConfig(), settings.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Shutdown(context.Background()) })
	eng, err := dedup.New(client, dedup.Config{Codec: codec, Embedder: svc, Embedders: svc, Tenancy: cfg.Tenancy})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Ranker, cfg.Embedder, cfg.Embedders = &fakeRetriever{}, svc, svc
	cfg.Writer, cfg.Inspector, cfg.Collections = eng, eng, eng
	return newHandler(t, cfg), client
}

type embeddingsAnswer struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// vectors reads the answer's vectors, in either encoding.
func (a embeddingsAnswer) vectors(t *testing.T) [][]float32 {
	t.Helper()
	var out [][]float32
	for _, d := range a.Data {
		var s string
		if json.Unmarshal(d.Embedding, &s) == nil {
			raw, err := base64.StdEncoding.DecodeString(s)
			if err != nil || len(raw)%4 != 0 {
				t.Fatalf("embedding %d: %v (%d bytes)", d.Index, err, len(raw))
			}
			v := make([]float32, len(raw)/4)
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
			out = append(out, v)
			continue
		}
		var v []float32
		if err := json.Unmarshal(d.Embedding, &v); err != nil {
			t.Fatalf("embedding %d: %v", d.Index, err)
		}
		out = append(out, v)
	}
	return out
}

func embeddings(t *testing.T, h http.Handler, body string, header ...string) embeddingsAnswer {
	t.Helper()
	r := do(t, h, http.MethodPost, "/v1/embeddings", body, header...)
	if r.code != http.StatusOK {
		t.Fatalf("embeddings: %d %s", r.code, r.body)
	}
	var a embeddingsAnswer
	if err := json.Unmarshal(r.body, &a); err != nil {
		t.Fatalf("embeddings: %v in %s", err, r.body)
	}
	return a
}

// storedVector is the vector /v1/observe stored for text.
func storedVector(t *testing.T, h http.Handler, client *qdrant.Client, coll, text string) []float32 {
	t.Helper()
	r := do(t, h, http.MethodPost, "/v1/observe", `{"collection":"`+coll+`","text":"`+text+`"}`)
	if r.code != http.StatusOK {
		t.Fatalf("observe: %d %s", r.code, r.body)
	}
	var out outcomeEnvelope
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatal(err)
	}
	pts, err := client.Get(context.Background(), &qdrant.GetPoints{CollectionName: coll,
		Ids: []*qdrant.PointId{qdrant.NewID(out.Result.MemoryID)}, WithVectors: qdrant.NewWithVectors(true)})
	if err != nil || len(pts) != 1 {
		t.Fatalf("stored point: %v (%d)", err, len(pts))
	}
	return pts[0].GetVectors().GetVector().GetDenseVector().GetData()
}

// TestEmbeddingsMatchObserve: /v1/embeddings answers, bit for bit, the
// vectors /v1/observe stores for the same texts, in floats and in base64,
// under every name of the model.
func TestEmbeddingsMatchObserve(t *testing.T) {
	h, client := embedEnv(t, Config{})
	texts := []string{"Dana uses Neovim", "The deploy runs on Fridays at 5pm", "Ωmega café ☕ costs €3"}
	var stored [][]float32
	for _, text := range texts {
		stored = append(stored, storedVector(t, h, client, "m", text))
	}
	input, _ := json.Marshal(texts)
	tests := []struct {
		name, body string
	}{
		{"floats, full name", `{"model":"memrank-local-sem-v1:384","input":` + string(input) + `,"encoding_format":"float"}`},
		{"base64, full name", `{"model":"memrank-local-sem-v1:384","input":` + string(input) + `,"encoding_format":"base64"}`},
		{"bare name, its size", `{"model":"memrank-local-sem-v1","input":` + string(input) + `,"dimensions":384}`},
		{"no model", `{"input":` + string(input) + `,"user":"dana"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := embeddings(t, h, tt.body)
			got := a.vectors(t)
			bits := func(vs [][]float32) [][]uint32 {
				out := make([][]uint32, len(vs))
				for i, v := range vs {
					for _, x := range v {
						out[i] = append(out[i], math.Float32bits(x))
					}
				}
				return out
			}
			if d := cmp.Diff(bits(stored), bits(got)); d != "" {
				t.Errorf("vectors differ from the stored ones (-stored +answered):\n%s", d)
			}
			if a.Object != "list" || a.Model != "memrank-local-sem-v1:384" || a.Usage.PromptTokens != 15 || a.Usage.TotalTokens != 15 {
				t.Errorf("answer %+v", a)
			}
			for i, d := range a.Data {
				if d.Index != i || d.Object != "embedding" {
					t.Errorf("data[%d] = index %d, object %q", i, d.Index, d.Object)
				}
			}
		})
	}
	// One text: a string, not an array.
	one := embeddings(t, h, `{"model":"memrank-local-sem-v1:384","input":"Dana uses Neovim"}`).vectors(t)
	if len(one) != 1 || !cmp.Equal(one[0], stored[0]) {
		t.Errorf("a single input: %d vectors, equal %v", len(one), len(one) == 1 && cmp.Equal(one[0], stored[0]))
	}
}

// TestEmbeddingsModels: the built-in models at other sizes are models of
// their own (no truncation), and what the server cannot make is refused in
// OpenAI's shape.
func TestEmbeddingsModels(t *testing.T) {
	h, _ := embedEnv(t, Config{MaxEmbeddingInputs: 3})
	want := func(model string) []float32 {
		e, err := embed.NewBuiltin(model)
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.Embed(context.Background(), []string{"Dana uses Neovim"})
		if err != nil {
			t.Fatal(err)
		}
		return v[0]
	}
	for _, tt := range []struct{ name, body, model string }{
		{"hash model, full name", `{"model":"memrank-local-hash-v1:64","input":"Dana uses Neovim"}`, "memrank-local-hash-v1:64"},
		{"hash model, bare name", `{"model":"memrank-local-hash-v1","input":"Dana uses Neovim"}`, "memrank-local-hash-v1:384"},
		{"semantic at another size", `{"model":"memrank-local-sem-v1","input":"Dana uses Neovim","dimensions":256}`, "memrank-local-sem-v1:256"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := embeddings(t, h, tt.body)
			if got := a.vectors(t); a.Model != tt.model || len(got) != 1 || !cmp.Equal(got[0], want(tt.model)) {
				t.Errorf("model %q, want %q and its vector", a.Model, tt.model)
			}
		})
	}

	type oaiErr struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	str := func(s string) *string { return &s }
	refused := []struct {
		name, method, body string
		code               int
		want               oaiErr
		message            string // in Message
	}{
		{"unknown model", "POST", `{"model":"text-embedding-3-small","input":"x"}`, 404,
			oaiErr{Type: "invalid_request_error", Param: str("model"), Code: str("model_not_found")}, "memrank-local-sem-v1:384"},
		{"unknown size of a built-in", "POST", `{"model":"memrank-local-sem-v1:7","input":"x"}`, 404,
			oaiErr{Type: "invalid_request_error", Param: str("model"), Code: str("model_not_found")}, "does not exist"},
		{"another size than the model's", "POST", `{"model":"memrank-local-sem-v1:384","input":"x","dimensions":256}`, 400,
			oaiErr{Type: "invalid_request_error", Param: str("dimensions"), Code: str("invalid_value")}, "makes 384-dimensional vectors"},
		{"a size the built-in cannot make", "POST", `{"model":"memrank-local-sem-v1","input":"x","dimensions":8}`, 400,
			oaiErr{Type: "invalid_request_error", Param: str("dimensions"), Code: str("invalid_value")}, "cannot make 8-dimensional"},
		{"too many inputs", "POST", `{"input":["a","b","c","d"]}`, 400,
			oaiErr{Type: "invalid_request_error", Param: str("input")}, "at most 3 texts"},
		{"an empty text", "POST", `{"input":["a"," "]}`, 400,
			oaiErr{Type: "invalid_request_error", Param: str("input[1]")}, "must not be empty"},
		{"token arrays", "POST", `{"input":[1,2,3]}`, 400,
			oaiErr{Type: "invalid_request_error", Param: str("input")}, "token arrays"},
		{"no input", "POST", `{"model":"memrank-local-sem-v1:384"}`, 400,
			oaiErr{Type: "invalid_request_error", Param: str("input")}, "required"},
		{"another encoding", "POST", `{"input":"x","encoding_format":"int8"}`, 400,
			oaiErr{Type: "invalid_request_error", Param: str("encoding_format")}, "base64"},
		{"an unknown key", "POST", `{"input":"x","truncate":true}`, 400,
			oaiErr{Type: "invalid_request_error", Param: str("truncate")}, "unknown field"},
		{"not JSON", "POST", `{"input":`, 400,
			oaiErr{Type: "invalid_request_error"}, "Format error in JSON body"},
		{"GET", "GET", ``, 405, oaiErr{Type: "invalid_request_error"}, "accepts POST"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, h, tt.method, "/v1/embeddings", tt.body)
			var got struct {
				Error oaiErr `json:"error"`
			}
			if err := json.Unmarshal(r.body, &got); err != nil || r.code != tt.code {
				t.Fatalf("HTTP %d %s (%v), want %d", r.code, r.body, err, tt.code)
			}
			if !strings.Contains(got.Error.Message, tt.message) {
				t.Errorf("message %q, want it to contain %q", got.Error.Message, tt.message)
			}
			got.Error.Message = ""
			if d := cmp.Diff(tt.want, got.Error); d != "" {
				t.Errorf("error (-want +got):\n%s", d)
			}
		})
	}
}

// TestEmbeddingsAuth: /v1/embeddings refuses whom a retrieve would:
// tenancy's unknown keys, then whom the upstream refuses (Authenticate,
// with the caller's credentials).
func TestEmbeddingsAuth(t *testing.T) {
	// As the embedded store with an API key checks a call.
	upstreamCheck := func(ctx context.Context) error {
		md, _ := metadata.FromOutgoingContext(ctx)
		switch keys := md.Get("api-key"); {
		case len(keys) == 0:
			return status.Error(codes.Unauthenticated, "Must provide an API key")
		case keys[0] != "rw-key" && keys[0] != "dana-key":
			return status.Error(codes.PermissionDenied, "Invalid API key or JWT")
		}
		return nil
	}
	open, _ := embedEnv(t, Config{Authenticate: upstreamCheck})
	tenants, _ := embedEnv(t, Config{Authenticate: upstreamCheck,
		Tenancy: &tenancy.Policy{Key: "user_id", APIKeys: map[string]string{"dana-key": "dana", "eve-key": "eve"}}})
	body := `{"input":"Dana uses Neovim"}`
	for _, tt := range []struct {
		name string
		h    http.Handler
		key  string
		code int
		typ  string
	}{
		{"the store's key", open, "rw-key", 200, ""},
		{"no key", open, "", 401, "authentication_error"},
		{"a wrong key", open, "nope", 403, "permission_error"},
		{"a tenant", tenants, "dana-key", 200, ""},
		{"a tenant the upstream refuses", tenants, "eve-key", 403, "permission_error"},
		{"a key tenancy does not know", tenants, "nope", 401, "authentication_error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var header []string
			if tt.key != "" {
				header = []string{"api-key", tt.key}
			}
			r := do(t, tt.h, http.MethodPost, "/v1/embeddings", body, header...)
			var got struct {
				Error struct {
					Type string `json:"type"`
				} `json:"error"`
			}
			_ = json.Unmarshal(r.body, &got)
			if r.code != tt.code || got.Error.Type != tt.typ {
				t.Errorf("HTTP %d %s, want %d %q", r.code, r.body, tt.code, tt.typ)
			}
		})
	}
}
