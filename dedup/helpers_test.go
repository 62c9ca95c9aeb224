package dedup_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"github.com/zeebo/xxh3"
	"go.uber.org/goleak"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/upstream"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// t0 is the start of every story.
var t0 = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// newClient is the real go-client over an embedded store in process.
func newClient(t testing.TB) *qdrant.Client {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{NoSync: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	p := upstream.ServeInProcess(store.NewServer(db))
	client, err := qdrant.NewClient(p.ClientConfig())
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	t.Cleanup(func() {
		_ = client.Close()
		_ = p.Close()
		_ = db.Close()
	})
	return client
}

// topics is a test embedder whose geometry the test sets: a text registered
// on a topic gets a vector at a chosen cosine from the topic's axis, and
// two texts on one topic have a cosine of about the product of theirs.
// Unregistered texts get vectors of their own, nearly orthogonal to all.
type topics struct {
	mu    sync.Mutex
	texts map[string]placed
	calls atomic.Int64
}

type placed struct {
	topic string
	cos   float64
}

const topicDims = 256

func newTopics() *topics { return &topics{texts: map[string]placed{}} }

// on places text at cosine c from topic's axis.
func (e *topics) on(topic string, c float64, texts ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, t := range texts {
		e.texts[t] = placed{topic, c}
	}
}

func (e *topics) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	out := make([][]float32, len(texts))
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, t := range texts {
		noise := randomUnit("text:" + t)
		p, ok := e.texts[t]
		if !ok {
			out[i] = toF32(noise)
			continue
		}
		axis := randomUnit("topic:" + p.topic)
		// Remove the noise's component along the axis so the cosine is exact.
		var d float64
		for j := range noise {
			d += noise[j] * axis[j]
		}
		var n float64
		for j := range noise {
			noise[j] -= d * axis[j]
			n += noise[j] * noise[j]
		}
		n = math.Sqrt(n)
		s := math.Sqrt(1 - p.cos*p.cos)
		v := make([]float64, topicDims)
		for j := range v {
			v[j] = p.cos*axis[j] + s*noise[j]/n
		}
		out[i] = toF32(v)
	}
	return out, nil
}

func (e *topics) Dimensions() int { return topicDims }
func (e *topics) Model() string   { return "test-topics-v1:256" }

func randomUnit(seed string) []float64 {
	v := make([]float64, topicDims)
	var n float64
	h := xxh3.HashString(seed)
	for i := range v {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], h+uint64(i)*0x9E3779B97F4A7C15)
		x := xxh3.Hash(b[:])
		// Approximately normal: the sum of four uniforms, centred.
		var s float64
		for k := 0; k < 4; k++ {
			s += float64((x>>(16*k))&0xFFFF) / 65535
		}
		v[i] = s - 2
		n += v[i] * v[i]
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] /= n
	}
	return v
}

func toF32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// judgeServer is an OpenAI-compatible chat completions server that checks
// every request the judge sends and answers with decide's content.
type judgeServer struct {
	t      testing.TB
	srv    *httptest.Server
	calls  atomic.Int64
	mu     sync.Mutex
	decide func(user string) string // the assistant's message content
	bodies []string
}

const judgeModel = "judge-test-model"

func newJudgeServer(t testing.TB, decide func(user string) string) *judgeServer {
	j := &judgeServer{t: t, decide: decide}
	j.srv = httptest.NewServer(http.HandlerFunc(j.serve))
	t.Cleanup(j.srv.Close)
	return j
}

func (j *judgeServer) serve(w http.ResponseWriter, r *http.Request) {
	j.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		j.t.Errorf("judge request to %s, want .../chat/completions", r.URL.Path)
	}
	var req struct {
		Model          string   `json:"model"`
		Temperature    *float64 `json:"temperature"`
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Strict bool            `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		j.t.Errorf("judge request is not JSON: %v", err)
	}
	switch {
	case req.Model != judgeModel:
		j.t.Errorf("judge model %q, want %q", req.Model, judgeModel)
	case req.Temperature == nil || *req.Temperature != 0:
		j.t.Errorf("judge temperature not sent as 0: %s", body)
	case req.ResponseFormat.Type != "json_schema" || !req.ResponseFormat.JSONSchema.Strict:
		j.t.Errorf("judge response_format is not a strict json_schema: %s", body)
	case !strings.Contains(string(req.ResponseFormat.JSONSchema.Schema), `"contradicts"`):
		j.t.Errorf("judge schema lacks the verdict enum: %s", req.ResponseFormat.JSONSchema.Schema)
	}
	var user, system string
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			user += m.Content
		case "system":
			system += m.Content
		}
	}
	if !strings.Contains(strings.ToLower(system+user), "data") {
		j.t.Errorf("judge prompt does not mark the texts as data: %s", body)
	}
	j.mu.Lock()
	j.bodies = append(j.bodies, user)
	j.mu.Unlock()
	content := j.decide(user)
	resp := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": judgeModel,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// verdict is a well-formed judge answer.
func verdict(v, reason string) string {
	b, _ := json.Marshal(map[string]string{"verdict": v, "reason": reason})
	return string(b)
}

// mentions reports whether the judge's user message carries text (JSON
// escaped, as the judge delimits it).
func mentions(user, text string) bool {
	b, _ := json.Marshal(text)
	return strings.Contains(user, string(b[1:len(b)-1]))
}

type harness struct {
	tb     testing.TB
	client *qdrant.Client
	emb    *topics
	clock  *clock
	eng    *dedup.Engine
	judge  *judgeServer
	codec  *memory.Codec
}

type option func(*dedup.Config, *harness)

func withJudge(decide func(user string) string) option {
	return func(c *dedup.Config, h *harness) {
		h.judge = newJudgeServer(h.tb, decide)
		j, err := dedup.NewLLMJudge(dedup.LLMJudgeConfig{BaseURL: h.judge.srv.URL + "/v1", Model: judgeModel,
			APIKey: "sk-test", Timeout: 2 * time.Second, MaxRetries: -1})
		if err != nil {
			h.tb.Fatalf("judge: %v", err)
		}
		c.Judging = mustJudging(h.tb, dedup.JudgingConfig{Judge: j, CacheSize: 1000, Timeout: 2 * time.Second})
	}
}

func mustJudging(t testing.TB, cfg dedup.JudgingConfig) *dedup.Judging {
	t.Helper()
	j, err := dedup.NewJudging(cfg)
	if err != nil {
		t.Fatalf("judging: %v", err)
	}
	return j
}

func newHarness(t testing.TB, opts ...option) *harness {
	t.Helper()
	h := &harness{tb: t, client: newClient(t), emb: newTopics(), clock: &clock{now: t0}}
	codec, err := memory.NewCodec(memory.DefaultKeys(), scoring.DefaultParams())
	if err != nil {
		t.Fatalf("codec: %v", err)
	}
	h.codec = codec
	cfg := dedup.Config{Codec: codec, Embedder: h.emb, RequireSurfaceChange: true, Now: h.clock.Now}
	for _, o := range opts {
		o(&cfg, h)
	}
	if h.eng, err = dedup.New(h.client, cfg); err != nil {
		t.Fatalf("engine: %v", err)
	}
	return h
}

func (h *harness) observe(t testing.TB, o dedup.Observation) dedup.Outcome {
	t.Helper()
	if o.Collection == "" {
		o.Collection = "mem"
	}
	out, err := h.eng.Observe(context.Background(), o)
	if err != nil {
		t.Fatalf("observe %q: %v", o.Text, err)
	}
	return out
}

// get reads a memory's record.
func (h *harness) get(t testing.TB, coll, id string) memory.Memory {
	t.Helper()
	pid := qdrant.NewID(id)
	if n, err := strconv.ParseUint(id, 10, 64); err == nil {
		pid = qdrant.NewIDNum(n)
	}
	pts, err := h.client.Get(context.Background(), &qdrant.GetPoints{CollectionName: coll,
		Ids: []*qdrant.PointId{pid}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil || len(pts) != 1 {
		t.Fatalf("get %s: %v (%d points)", id, err, len(pts))
	}
	return h.codec.DecodeQdrant(pts[0].GetPayload())
}

func (h *harness) count(t testing.TB, coll string) uint64 {
	t.Helper()
	exact := true
	n, err := h.client.Count(context.Background(), &qdrant.CountPoints{CollectionName: coll, Exact: &exact})
	if err != nil {
		t.Fatalf("count %s: %v", coll, err)
	}
	return n
}

func (h *harness) audit(t testing.TB, coll, id string) []dedup.AuditRecord {
	t.Helper()
	v, err := h.eng.Memory(context.Background(), coll, "", id)
	if err != nil {
		t.Fatalf("memory %s: %v", id, err)
	}
	return v.Audit
}

// formula is docs/scoring.md with the default weights.
func formula(s float64, n int, e, t float64) float64 {
	return scoring.DefaultParams().Weights.Confidence(scoring.Components{Source: s, Observations: n, Extractor: e, Type: t})
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func within(a, b, tol float64) bool { return math.Abs(a-b) <= tol }
