package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// openAIFake is one OpenAI-compatible server for embeddings and chat
// completions that checks what memrank sends.
type openAIFake struct {
	t          *testing.T
	embedCalls atomic.Int64
	judgeCalls atomic.Int64
	vectors    map[string][]float32
}

func (f *openAIFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v1/embeddings":
		f.embedCalls.Add(1)
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.Model != "fake-embed" || r.Header.Get("Authorization") != "Bearer sk-embed" {
			f.t.Errorf("embeddings request: model %q auth %q body %s", req.Model, r.Header.Get("Authorization"), body)
		}
		var data []map[string]any
		for i, text := range req.Input {
			v, ok := f.vectors[text]
			if !ok {
				f.t.Errorf("embeddings asked for an unexpected text %q", text)
				v = []float32{0, 0, 0, 1}
			}
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": v})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data,
			"usage": map[string]int{"prompt_tokens": 3, "total_tokens": 3}})
	case "/v1/chat/completions":
		f.judgeCalls.Add(1)
		var req struct {
			Model       string   `json:"model"`
			Temperature *float64 `json:"temperature"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.Model != "fake-judge" || req.Temperature == nil || *req.Temperature != 0 ||
			r.Header.Get("Authorization") != "Bearer sk-judge" || !strings.Contains(string(body), "json_schema") {
			f.t.Errorf("judge request: %s", body)
		}
		content, _ := json.Marshal(map[string]string{"verdict": "same", "reason": "both say Dana cycles to work"})
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": string(content)}}}})
	default:
		f.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	}
}

// TestServeWritePath runs serve with the OpenAI-compatible embedder and
// judge pointed at a fake, and drives the native write API: a new memory, a
// paraphrase the judge calls the same (an independent observation from
// another session), the memory with its audit, a confirmation, stats, and a
// retrieve that finds it.
func TestServeWritePath(t *testing.T) {
	fake := &openAIFake{t: t, vectors: map[string][]float32{
		"Dana cycles to work":               {1, 0, 0, 0},
		"Dana rides her bike to the office": {0.85, 0.5268, 0, 0}, // cosine 0.85: the judge band
		"how does Dana get to work":         {0.9, 0.4359, 0, 0},
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	environ := []string{
		"MEMRANK_EMBEDDER__DRIVER=openai", "MEMRANK_EMBEDDER__BASE_URL=" + srv.URL + "/v1",
		"MEMRANK_EMBEDDER__MODEL=fake-embed", "MEMRANK_EMBEDDER__API_KEY=sk-embed", "MEMRANK_EMBEDDER__DIMENSIONS=4",
		"MEMRANK_JUDGE__ENABLED=true", "MEMRANK_JUDGE__BASE_URL=" + srv.URL + "/v1",
		"MEMRANK_JUDGE__MODEL=fake-judge", "MEMRANK_JUDGE__API_KEY=sk-judge",
	}
	httpAddr, _, stop := startServeEnv(t, environ, "--data", t.TempDir())
	base := "http://" + httpAddr

	type outcome struct {
		Result struct {
			Decision     string  `json:"decision"`
			MemoryID     string  `json:"memory_id"`
			Observations int     `json:"observations"`
			Confidence   float64 `json:"confidence"`
			Tier         int     `json:"dedup_tier"`
			Judge        *struct {
				Verdict string `json:"verdict"`
				Cached  bool   `json:"cached"`
			} `json:"judge"`
		} `json:"result"`
	}
	observe := func(body string) outcome {
		t.Helper()
		code, b := post(t, base+"/v1/observe", body)
		if code != http.StatusOK {
			t.Fatalf("observe: %d %s", code, b)
		}
		var o outcome
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("observe answer %s: %v", b, err)
		}
		return o
	}
	first := observe(`{"collection":"mem","text":"Dana cycles to work","memory_type":"fact","source":"direct","extractor_model":"gpt-4o","session_id":"s1","turn_id":"1","observed_at":"2026-11-01T10:00:00Z"}`)
	if first.Result.Decision != "inserted" {
		t.Fatalf("first: %+v", first.Result)
	}
	second := observe(`{"collection":"mem","text":"Dana rides her bike to the office","memory_type":"fact","source":"direct","extractor_model":"gpt-4o","session_id":"s2","turn_id":"4","observed_at":"2026-11-02T10:00:00Z"}`)
	if r := second.Result; r.Decision != "independent" || r.MemoryID != first.Result.MemoryID || r.Tier != 3 || r.Observations != 1 ||
		r.Judge == nil || r.Judge.Verdict != "same" {
		t.Fatalf("second: %+v judge %+v", r, r.Judge)
	}
	if fake.judgeCalls.Load() != 1 {
		t.Errorf("%d judge calls, want 1", fake.judgeCalls.Load())
	}

	resp, err := http.Get(base + "/v1/memories/" + first.Result.MemoryID + "?collection=mem")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"reason":"independent"`) || !strings.Contains(string(b), `"session_ids":["s1","s2"]`) {
		t.Errorf("memory: %d %s", resp.StatusCode, b)
	}
	code, b := post(t, base+"/v1/memories/"+first.Result.MemoryID+"/confirm", `{"collection":"mem"}`)
	if code != http.StatusOK || !strings.Contains(string(b), `"decision":"confirmed"`) || !strings.Contains(string(b), `"observations":2`) {
		t.Errorf("confirm: %d %s", code, b)
	}
	resp, err = http.Get(base + "/v1/stats?collection=mem")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"memories":1`) || !strings.Contains(string(b), `"calls":1`) {
		t.Errorf("stats: %d %s", resp.StatusCode, b)
	}
	code, b = post(t, base+"/v1/retrieve", `{"collection":"mem","text":"how does Dana get to work","limit":3}`)
	if code != http.StatusOK || !strings.Contains(string(b), first.Result.MemoryID) {
		t.Errorf("retrieve: %d %s", code, b)
	}
	// Each text was embedded once: the second look-up of a text is cached.
	if got := fake.embedCalls.Load(); got != 3 {
		t.Errorf("%d embedding calls, want 3", got)
	}
	if code, stderr := stop(); code != 0 {
		t.Errorf("serve exited %d:\n%s", code, stderr)
	}
}
