package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/memrank/memrank/telemetry/settings"
)

const (
	testKey   = "sk-test-7f3a9c-SECRET"
	testModel = "test-embed"
	testDims  = 32
)

// embeddingsRequest is what an OpenAI-compatible server reads.
type embeddingsRequest struct {
	Input      []string `json:"input"`
	Model      string   `json:"model"`
	Dimensions *int     `json:"dimensions"`
}

// answer is what the fake server sends back for one call.
type answer struct {
	status int
	header map[string]string
	body   any // encoded as JSON; a string is sent as is
	block  bool
	hangUp bool // close the connection without an answer
}

// fakeOpenAI is an OpenAI-compatible embeddings server that checks every
// request (path, key, model, parameters) and records the inputs. By default
// it answers with Local's vectors of each text, so results can be compared.
type fakeOpenAI struct {
	t        *testing.T
	srv      *httptest.Server
	local    *Local
	wantDims int // the "dimensions" parameter expected; 0: must be absent
	// reply decides a call's answer (n counts from 1) given the correct
	// one; nil: the correct one.
	reply func(n int, req embeddingsRequest, vectors openai.EmbeddingResponse) answer

	mu      sync.Mutex
	inputs  [][]string
	release chan struct{} // closed at cleanup: frees blocked handlers
	arrived chan int      // each call's number, when it arrives
}

// newFakeOpenAI starts the server; wantDims is the "dimensions" parameter
// it expects (0: none). Everything it reads is set before it starts, so the
// handlers need no lock for it.
func newFakeOpenAI(t *testing.T, wantDims int, reply func(n int, req embeddingsRequest, vectors openai.EmbeddingResponse) answer) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{t: t, local: mustLocal(t, testDims), reply: reply, wantDims: wantDims,
		release: make(chan struct{}), arrived: make(chan int, 100)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		close(f.release)
		f.srv.Close()
	})
	return f
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	t := f.t
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		t.Errorf("request %s %s, want POST /v1/embeddings", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization %q, want the bearer key", got)
	}
	var raw map[string]json.RawMessage
	var req embeddingsRequest
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		t.Errorf("request body: %v", err)
	}
	for k := range raw {
		if k != "input" && k != "model" && k != "dimensions" {
			t.Errorf("unexpected request parameter %q", k)
		}
	}
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &req)
	if req.Model != testModel {
		t.Errorf("model %q, want %q", req.Model, testModel)
	}
	switch {
	case f.wantDims == 0 && req.Dimensions != nil:
		t.Errorf("dimensions parameter %d sent, want none", *req.Dimensions)
	case f.wantDims != 0 && (req.Dimensions == nil || *req.Dimensions != f.wantDims):
		t.Errorf("dimensions parameter %v, want %d", req.Dimensions, f.wantDims)
	}
	f.mu.Lock()
	f.inputs = append(f.inputs, req.Input)
	n := len(f.inputs)
	f.mu.Unlock()
	f.arrived <- n

	a := answer{status: http.StatusOK, body: f.vectors(req.Input)}
	if f.reply != nil {
		a = f.reply(n, req, f.vectors(req.Input))
	}
	switch {
	case a.block:
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
		return
	case a.hangUp:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		_ = conn.Close()
		return
	}
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	if s, ok := a.body.(string); ok {
		_, _ = w.Write([]byte(s))
		return
	}
	_ = json.NewEncoder(w).Encode(a.body)
}

// vectors is a correct answer: Local's vector of each text, in order, and
// one token per word.
func (f *fakeOpenAI) vectors(input []string) openai.EmbeddingResponse {
	resp := openai.EmbeddingResponse{Object: "list", Model: testModel + "-0613"}
	for i, text := range input {
		resp.Data = append(resp.Data, openai.Embedding{Object: "embedding", Index: i, Embedding: f.local.EmbedOne(text, nil)})
		resp.Usage.PromptTokens += len(strings.Fields(text))
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens
	return resp
}

func (f *fakeOpenAI) calls() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.inputs...)
}

func apiError(status int, msg string) answer {
	return answer{status: status, body: map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}}}
}

// newTestOpenAI is a driver for f with fast retries; edit adjusts the
// configuration.
func newTestOpenAI(t *testing.T, f *fakeOpenAI, edit func(*OpenAIConfig)) *OpenAI {
	t.Helper()
	cfg := OpenAIConfig{
		BaseURL:        f.srv.URL + "/v1",
		Model:          testModel,
		APIKey:         testKey,
		Dimensions:     testDims,
		Timeout:        5 * time.Second,
		RetryBaseDelay: time.Millisecond,
		RetryMaxDelay:  20 * time.Millisecond,
		HTTPClient:     f.srv.Client(),
	}
	if edit != nil {
		edit(&cfg)
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close() })
	return o
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("memory %d: Dana said something about topic %d", i, i%9)
	}
	return out
}

func TestOpenAIBatchesInOrder(t *testing.T) {
	f := newFakeOpenAI(t, 0, nil)
	o := newTestOpenAI(t, f, func(c *OpenAIConfig) { c.BatchSize = 64 })
	in := texts(150)
	got, err := o.Embed(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{in[:64], in[64:128], in[128:]}
	if diff := cmp.Diff(want, f.calls()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(embedAll(t, f.local, in...), got); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	if o.Model() != "test-embed:32" || o.Dimensions() != testDims {
		t.Errorf("Model() = %q, Dimensions() = %d", o.Model(), o.Dimensions())
	}
}

func TestOpenAIDefaultBatchSize(t *testing.T) {
	f := newFakeOpenAI(t, 0, nil)
	o := newTestOpenAI(t, f, nil)
	if _, err := o.Embed(t.Context(), texts(DefaultOpenAIBatchSize+1)); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, c := range f.calls() {
		sizes = append(sizes, len(c))
	}
	if diff := cmp.Diff([]int{DefaultOpenAIBatchSize, 1}, sizes); diff != "" {
		t.Errorf("batch sizes (-want +got):\n%s", diff)
	}
}

func TestOpenAINoTextsNoRequest(t *testing.T) {
	f := newFakeOpenAI(t, 0, nil)
	o := newTestOpenAI(t, f, nil)
	got, err := o.Embed(t.Context(), nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("Embed(nil) = %v, %v", got, err)
	}
	if n := len(f.calls()); n != 0 {
		t.Errorf("%d requests for no text", n)
	}
}

func TestOpenAISendDimensions(t *testing.T) {
	f := newFakeOpenAI(t, testDims, nil) // the server checks it is sent
	o := newTestOpenAI(t, f, func(c *OpenAIConfig) { c.SendDimensions = true })
	if _, err := o.Embed(t.Context(), []string{"Dana uses Neovim"}); err != nil {
		t.Fatal(err)
	}
	if n := len(f.calls()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestOpenAINoKeyNoAuthorization(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(openai.EmbeddingResponse{Data: []openai.Embedding{{Embedding: make([]float32, 4)}}})
	}))
	defer srv.Close()
	o, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, Model: "m", Dimensions: 4, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{""}, got); diff != "" {
		t.Errorf("Authorization headers without a key (-want +got):\n%s", diff)
	}
}

// Servers need not keep the input order; the index field says which text a
// vector belongs to.
func TestOpenAIOrdersByIndex(t *testing.T) {
	f := newFakeOpenAI(t, 0, func(_ int, _ embeddingsRequest, resp openai.EmbeddingResponse) answer {
		for i, j := 0, len(resp.Data)-1; i < j; i, j = i+1, j-1 {
			resp.Data[i], resp.Data[j] = resp.Data[j], resp.Data[i]
		}
		return answer{status: http.StatusOK, body: resp}
	})
	o := newTestOpenAI(t, f, nil)
	in := texts(5)
	got, err := o.Embed(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(embedAll(t, f.local, in...), got); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
}

func TestOpenAIRefusesBadAnswers(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*openai.EmbeddingResponse)
		raw    string // sent instead of the edited answer when set
		wantIs error
	}{
		{"short vector", func(r *openai.EmbeddingResponse) { r.Data[1].Embedding = r.Data[1].Embedding[:16] }, "", ErrDimensions},
		{"long vector", func(r *openai.EmbeddingResponse) { r.Data[0].Embedding = append(r.Data[0].Embedding, 0) }, "", ErrDimensions},
		{"missing vector", func(r *openai.EmbeddingResponse) { r.Data = r.Data[:1] }, "", ErrResponse},
		{"extra vector", func(r *openai.EmbeddingResponse) { r.Data = append(r.Data, r.Data[0]) }, "", ErrResponse},
		{"duplicate index", func(r *openai.EmbeddingResponse) { r.Data[1].Index = 0 }, "", ErrResponse},
		{"index out of range", func(r *openai.EmbeddingResponse) { r.Data[1].Index = 2 }, "", ErrResponse},
		{"negative index", func(r *openai.EmbeddingResponse) { r.Data[0].Index = -1 }, "", ErrResponse},
		{"no data", func(r *openai.EmbeddingResponse) { r.Data = nil }, "", ErrResponse},
		{"not json", nil, "<html>proxy error</html>", nil},
		{"wrong json", nil, `{"data": "nope"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeOpenAI(t, 0, func(_ int, _ embeddingsRequest, resp openai.EmbeddingResponse) answer {
				if tt.raw != "" {
					return answer{status: http.StatusOK, body: tt.raw}
				}
				tt.edit(&resp)
				return answer{status: http.StatusOK, body: resp}
			})
			o := newTestOpenAI(t, f, nil)
			got, err := o.Embed(t.Context(), []string{"Dana uses Neovim", "Dana lives in Lisbon"})
			if err == nil {
				t.Fatalf("Embed accepted the answer: %v", got)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v, want %v", err, tt.wantIs)
			}
			if n := len(f.calls()); n != 1 {
				t.Errorf("%d requests, want 1: a bad answer is not retried", n)
			}
		})
	}
}

func TestOpenAIRetries(t *testing.T) {
	type step struct {
		status int
		header map[string]string
		hangUp bool
	}
	tests := []struct {
		name       string
		steps      []step // answers in turn; after them, vectors
		maxRetries int
		maxDelay   time.Duration
		wantCalls  int
		wantStatus int           // the final error's status; 0: success
		minElapsed time.Duration // the waits the server asked for
	}{
		{name: "429 then success, retry-after-ms honoured",
			steps: []step{{status: 429, header: map[string]string{"retry-after-ms": "60"}}}, maxDelay: time.Second,
			wantCalls: 2, minElapsed: 60 * time.Millisecond},
		{name: "429 then success, Retry-After capped",
			steps: []step{{status: 429, header: map[string]string{"Retry-After": "3600"}}}, maxDelay: 40 * time.Millisecond,
			wantCalls: 2, minElapsed: 40 * time.Millisecond},
		{name: "503 then success", steps: []step{{status: 503}}, wantCalls: 2},
		{name: "connection dropped then success", steps: []step{{hangUp: true}}, wantCalls: 2},
		{name: "500 until MaxRetries", steps: []step{{status: 500}, {status: 500}, {status: 500}, {status: 500}},
			maxRetries: 2, wantCalls: 3, wantStatus: 500},
		{name: "500 with default MaxRetries", steps: []step{{status: 502}, {status: 502}, {status: 502}, {status: 502}, {status: 502}},
			wantCalls: 1 + DefaultOpenAIMaxRetries, wantStatus: 502},
		{name: "negative MaxRetries: no retry", steps: []step{{status: 500}}, maxRetries: -1, wantCalls: 1, wantStatus: 500},
		{name: "400 not retried", steps: []step{{status: 400}}, wantCalls: 1, wantStatus: 400},
		{name: "401 not retried", steps: []step{{status: 401}}, wantCalls: 1, wantStatus: 401},
		{name: "404 not retried", steps: []step{{status: 404}}, wantCalls: 1, wantStatus: 404},
		{name: "408 not retried", steps: []step{{status: 408}}, wantCalls: 1, wantStatus: 408},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeOpenAI(t, 0, func(n int, _ embeddingsRequest, resp openai.EmbeddingResponse) answer {
				if n > len(tt.steps) {
					return answer{status: http.StatusOK, body: resp}
				}
				s := tt.steps[n-1]
				a := apiError(s.status, "the server says no")
				a.header, a.hangUp = s.header, s.hangUp
				return a
			})
			o := newTestOpenAI(t, f, func(c *OpenAIConfig) {
				c.MaxRetries = tt.maxRetries
				if tt.maxDelay > 0 {
					c.RetryMaxDelay = tt.maxDelay
				}
			})
			start := time.Now()
			got, err := o.Embed(t.Context(), []string{"Dana uses Neovim"})
			elapsed := time.Since(start)
			if n := len(f.calls()); n != tt.wantCalls {
				t.Errorf("%d requests, want %d", n, tt.wantCalls)
			}
			if elapsed < tt.minElapsed {
				t.Errorf("done after %v, want at least %v (the server's Retry-After)", elapsed, tt.minElapsed)
			}
			if elapsed > 3*time.Second {
				t.Errorf("done after %v: waits not capped", elapsed)
			}
			if tt.wantStatus == 0 {
				if err != nil || len(got) != 1 {
					t.Fatalf("Embed = %v, %v; want one vector", got, err)
				}
				return
			}
			var serr *StatusError
			if !errors.As(err, &serr) || serr.StatusCode != tt.wantStatus {
				t.Fatalf("error %v, want a StatusError %d", err, tt.wantStatus)
			}
			if !strings.Contains(err.Error(), "the server says no") || !strings.Contains(err.Error(), "test-embed:32") {
				t.Errorf("error %q lacks the server's message or the model", err)
			}
		})
	}
}

func TestOpenAIAttemptTimeout(t *testing.T) {
	f := newFakeOpenAI(t, 0, func(int, embeddingsRequest, openai.EmbeddingResponse) answer { return answer{block: true} })
	o := newTestOpenAI(t, f, func(c *OpenAIConfig) {
		c.Timeout = 50 * time.Millisecond
		c.MaxRetries = 1
	})
	// The caller's own bound is far off: a hang fails the test instead of
	// stalling it.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := o.Embed(ctx, []string{"Dana uses Neovim"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want DeadlineExceeded", err)
	}
	if !strings.Contains(err.Error(), "timed out after 50ms") {
		t.Errorf("error %q does not say which timeout", err)
	}
	if n := len(f.calls()); n != 2 {
		t.Errorf("%d requests, want 2 (a timed-out attempt is retried)", n)
	}
	if e := time.Since(start); e < 100*time.Millisecond || e > 3*time.Second {
		t.Errorf("done after %v, want about 2 x 50ms", e)
	}
}

func TestOpenAIContextCancel(t *testing.T) {
	tests := []struct {
		name  string
		reply answer
	}{
		{"during a request", answer{block: true}},
		{"during a retry wait", answer{status: 503, header: map[string]string{"Retry-After": "3600"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeOpenAI(t, 0, func(int, embeddingsRequest, openai.EmbeddingResponse) answer { return tt.reply })
			o := newTestOpenAI(t, f, func(c *OpenAIConfig) { c.RetryMaxDelay = time.Hour })
			ctx, cancel := context.WithCancel(t.Context())
			defer time.AfterFunc(10*time.Second, cancel).Stop() // a hang fails on the elapsed time
			go func() {
				<-f.arrived
				time.Sleep(20 * time.Millisecond) // into the answer or the wait
				cancel()
			}()
			start := time.Now()
			_, err := o.Embed(ctx, []string{"Dana uses Neovim"})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want Canceled", err)
			}
			if e := time.Since(start); e > 3*time.Second {
				t.Errorf("returned %v after the start, not at the cancel", e)
			}
			if n := len(f.calls()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

// A wait longer than the caller's deadline is not waited: the caller gets
// the server's answer at once.
func TestOpenAINoRetryPastDeadline(t *testing.T) {
	f := newFakeOpenAI(t, 0, func(int, embeddingsRequest, openai.EmbeddingResponse) answer {
		return answer{status: 429, header: map[string]string{"Retry-After": "30"}}
	})
	o := newTestOpenAI(t, f, func(c *OpenAIConfig) { c.RetryMaxDelay = time.Minute })
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := o.Embed(ctx, []string{"x"})
	var serr *StatusError
	if !errors.As(err, &serr) || serr.StatusCode != 429 {
		t.Fatalf("error %v, want the 429", err)
	}
	if e := time.Since(start); e > time.Second {
		t.Errorf("waited %v for a retry the deadline did not allow", e)
	}
}

func TestOpenAIKeyNeverInErrors(t *testing.T) {
	echo := "Incorrect API key provided: " + testKey + ". You can find your API key at https://platform.openai.com."
	tests := []struct {
		name  string
		reply answer
	}{
		{"401 echoing the key", apiError(401, echo)},
		{"500 echoing the key", apiError(500, echo)},
		{"plain text body echoing the key", answer{status: 403, body: "forbidden for " + testKey}},
		{"bad 200 body echoing the key", answer{status: 200, body: "<p>" + testKey + "</p>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeOpenAI(t, 0, func(int, embeddingsRequest, openai.EmbeddingResponse) answer { return tt.reply })
			o := newTestOpenAI(t, f, func(c *OpenAIConfig) { c.MaxRetries = 1 })
			_, err := o.Embed(t.Context(), []string{"x"})
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(fmt.Sprintf("%+v", err), testKey) {
				t.Errorf("the key is in the error: %q", err)
			}
			// Nothing the error unwraps to shows the key either.
			for e := error(err); e != nil; e = errors.Unwrap(e) {
				if strings.Contains(e.Error(), testKey) {
					t.Errorf("the key is in a wrapped error %T: %q", e, e)
				}
			}
		})
	}
	cfg := OpenAIConfig{Model: testModel, APIKey: testKey, Dimensions: testDims}
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%v %+v %#v", cfg, cfg, cfg)} {
		if strings.Contains(s, testKey) {
			t.Errorf("the key is in the formatted configuration: %s", s)
		}
	}
}

func TestOpenAIConfigValidate(t *testing.T) {
	ok := OpenAIConfig{Model: "m", Dimensions: 8}
	tests := []struct {
		name string
		edit func(*OpenAIConfig)
		want string // a piece of the error; "" for a valid configuration
	}{
		{"minimal", func(*OpenAIConfig) {}, ""},
		{"local server", func(c *OpenAIConfig) { c.BaseURL = "http://localhost:8080/v1" }, ""},
		{"no model", func(c *OpenAIConfig) { c.Model = " " }, "Model is required"},
		{"no dimensions", func(c *OpenAIConfig) { c.Dimensions = 0 }, "Dimensions 0"},
		{"too many dimensions", func(c *OpenAIConfig) { c.Dimensions = MaxDimensions + 1 }, "Dimensions"},
		{"relative base URL", func(c *OpenAIConfig) { c.BaseURL = "localhost:8080" }, "BaseURL"},
		{"ftp base URL", func(c *OpenAIConfig) { c.BaseURL = "ftp://host/v1" }, "BaseURL"},
		{"negative timeout", func(c *OpenAIConfig) { c.Timeout = -time.Second }, "negative"},
		{"negative batch", func(c *OpenAIConfig) { c.BatchSize = -1 }, "BatchSize"},
		{"too many retries", func(c *OpenAIConfig) { c.MaxRetries = MaxOpenAIRetries + 1 }, "MaxRetries"},
		{"no retries", func(c *OpenAIConfig) { c.MaxRetries = -1 }, ""},
		{"base delay over cap", func(c *OpenAIConfig) { c.RetryBaseDelay = time.Minute }, "exceeds RetryMaxDelay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			err := cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate() = %v, want an error with %q", err, tt.want)
			}
			o, nerr := NewOpenAI(cfg)
			if (nerr == nil) != (err == nil) || (nerr == nil && o == nil) {
				t.Errorf("NewOpenAI = %v, %v; Validate = %v", o, nerr, err)
			}
		})
	}
	if err := (OpenAIConfig{Model: "m"}).Validate(); !errors.Is(err, ErrDimensions) {
		t.Errorf("missing dimensions: %v, want ErrDimensions", err)
	}
}

// One span per request, named after the model, with the gen_ai attributes,
// the HTTP client span of its own transport under it; failures mark it.
func TestOpenAITelemetry(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })

	f := newFakeOpenAI(t, 0, func(n int, _ embeddingsRequest, resp openai.EmbeddingResponse) answer {
		if n == 3 {
			return apiError(400, "bad input")
		}
		return answer{status: http.StatusOK, body: resp}
	})
	o := newTestOpenAI(t, f, func(c *OpenAIConfig) {
		c.HTTPClient = nil // its own, instrumented
		c.Telemetry = settings.Settings{TracerProvider: tp, MeterProvider: mp}
		c.BatchSize = 2
	})
	ctx, root := tp.Tracer("test").Start(t.Context(), "observe")
	if _, err := o.Embed(ctx, []string{"Dana uses Neovim", "Dana lives in Lisbon", "one two three"}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Embed(ctx, []string{"x"}); err == nil {
		t.Fatal("the 400 did not fail Embed")
	}
	root.End()

	var embeds []tracetest.SpanStub
	children := map[string]int{}
	for _, s := range exp.GetSpans() {
		if s.Name == "embeddings "+testModel {
			embeds = append(embeds, s)
		}
		children[s.Parent.SpanID().String()]++
	}
	if len(embeds) != 3 {
		t.Fatalf("%d embeddings spans, want one per request (3)", len(embeds))
	}
	wantTokens := []int64{7, 3, 0}
	for i, s := range embeds {
		attrs := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes {
			attrs[kv.Key] = kv.Value
		}
		if s.Parent.SpanID() != root.SpanContext().SpanID() {
			t.Errorf("span %d is not under the caller's span", i)
		}
		if children[s.SpanContext.SpanID().String()] == 0 {
			t.Errorf("span %d has no HTTP client span under it", i)
		}
		for k, want := range map[attribute.Key]string{"gen_ai.operation.name": "embeddings", "gen_ai.request.model": testModel, "server.address": "127.0.0.1"} {
			if got := attrs[k].AsString(); got != want {
				t.Errorf("span %d: %s = %q, want %q", i, k, got, want)
			}
		}
		if got := attrs["gen_ai.embeddings.dimension.count"].AsInt64(); got != testDims {
			t.Errorf("span %d: dimension count %d", i, got)
		}
		if got := attrs["gen_ai.usage.input_tokens"].AsInt64(); got != wantTokens[i] {
			t.Errorf("span %d: input tokens %d, want %d", i, got, wantTokens[i])
		}
		failed := i == 2
		if (s.Status.Code == codes.Error) != failed || (attrs["error.type"].AsString() == "400") != failed {
			t.Errorf("span %d: status %v, error.type %q; failed %v", i, s.Status, attrs["error.type"].AsString(), failed)
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != scope {
			continue
		}
		for _, m := range sm.Metrics {
			found[m.Name] = true
			if h, ok := m.Data.(metricdata.Histogram[int64]); ok && m.Name == "gen_ai.client.token.usage" {
				var sum int64
				for _, dp := range h.DataPoints {
					sum += dp.Sum
				}
				if sum != 10 {
					t.Errorf("token usage %d, want 10", sum)
				}
			}
		}
	}
	for _, name := range []string{"gen_ai.client.operation.duration", "gen_ai.client.token.usage"} {
		if !found[name] {
			t.Errorf("no %s metric", name)
		}
	}
}

func TestOrderVectors(t *testing.T) {
	v := func(x ...float32) []float32 { return x }
	tests := []struct {
		name string
		data []openai.Embedding
		want [][]float32
		err  error
	}{
		{"in order", []openai.Embedding{{Index: 0, Embedding: v(1, 0)}, {Index: 1, Embedding: v(0, 1)}}, [][]float32{v(1, 0), v(0, 1)}, nil},
		{"reversed", []openai.Embedding{{Index: 1, Embedding: v(0, 1)}, {Index: 0, Embedding: v(1, 0)}}, [][]float32{v(1, 0), v(0, 1)}, nil},
		{"NaN", []openai.Embedding{{Index: 0, Embedding: v(float32(math.NaN()), 0)}, {Index: 1, Embedding: v(0, 1)}}, nil, ErrResponse},
		{"Inf", []openai.Embedding{{Index: 0, Embedding: v(1, 0)}, {Index: 1, Embedding: v(0, float32(math.Inf(-1)))}}, nil, ErrResponse},
		{"empty vector", []openai.Embedding{{Index: 0}, {Index: 1, Embedding: v(0, 1)}}, nil, ErrDimensions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := orderVectors(tt.data, 2, 2)
			if !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"milliseconds win", map[string]string{"Retry-After": "2", "retry-after-ms": "150"}, 150 * time.Millisecond},
		{"HTTP date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"far date", map[string]string{"Retry-After": "Wed, 01 Oct 2100 00:00:00 GMT"}, 24 * time.Hour},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{"negative", map[string]string{"Retry-After": "-5"}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"NaN", map[string]string{"Retry-After": "NaN"}, 0},
		{"huge", map[string]string{"Retry-After": "1e300"}, 24 * time.Hour},
		{"bad ms falls back", map[string]string{"Retry-After": "3", "retry-after-ms": "x"}, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := RetryAfter(h, now); got != tt.want {
				t.Errorf("retryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRetryWaits: the waits between attempts double from RetryBaseDelay
// with jitter, never exceed RetryMaxDelay, honour the server's Retry-After
// up to that cap, and stop retrying when the caller's deadline would pass
// first.
func TestRetryWaits(t *testing.T) {
	o := &OpenAI{cfg: OpenAIConfig{RetryBaseDelay: 100 * time.Millisecond, RetryMaxDelay: time.Second}}
	for range 50 {
		w := o.retryWaits(context.Background())
		w.Reset() // as backoff.Retry does
		for n := 1; n <= 12; n++ {
			interval := min(100*time.Millisecond<<(n-1), time.Second)
			lo, hi := interval/2, min(interval*3/2+1, time.Second)
			if d := w.NextBackOff(); d < lo || d > hi {
				t.Fatalf("wait %d = %v, want in [%v, %v]", n, d, lo, hi)
			}
		}
	}
	tests := []struct {
		name       string
		retryAfter time.Duration
		deadline   time.Duration // 0: none
		want       time.Duration
	}{
		{name: "Retry-After above the backoff", retryAfter: 700 * time.Millisecond, want: 700 * time.Millisecond},
		{name: "Retry-After capped", retryAfter: time.Hour, want: time.Second},
		{name: "deadline before the wait ends", retryAfter: 700 * time.Millisecond, deadline: 50 * time.Millisecond, want: backoff.Stop},
		{name: "deadline after the wait ends", retryAfter: 700 * time.Millisecond, deadline: time.Minute, want: 700 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			w := o.retryWaits(ctx)
			w.Reset()
			w.retryAfter = tc.retryAfter
			if d := w.NextBackOff(); d != tc.want {
				t.Errorf("wait %v, want %v", d, tc.want)
			}
		})
	}
}

func FuzzOrderVectors(f *testing.F) {
	f.Add([]byte(`[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,1]}]`), 2, 2)
	f.Add([]byte(`[{"index":1,"embedding":[0,1]},{"index":1,"embedding":[1,0]}]`), 2, 2)
	f.Add([]byte(`[{"index":-3,"embedding":[]}]`), 1, 1)
	f.Add([]byte(`[{"index":9223372036854775807,"embedding":[1e39]}]`), 1, 1)
	f.Fuzz(func(t *testing.T, body []byte, n, dims int) {
		n, dims = n&0xff, 1+dims&0xff
		var data []openai.Embedding
		if json.Unmarshal(body, &data) != nil {
			return
		}
		got, err := orderVectors(data, n, dims)
		if err != nil {
			return
		}
		if len(got) != n {
			t.Fatalf("%d vectors for %d texts", len(got), n)
		}
		for i, v := range got {
			if len(v) != dims {
				t.Fatalf("vector %d has %d components, want %d", i, len(v), dims)
			}
		}
	})
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "1", "0.25", "-1", "1e400", "NaN", "Inf", "Wed, 21 Oct 2015 07:28:00 GMT", "x"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, seconds, ms string) {
		h := http.Header{}
		h.Set("Retry-After", seconds)
		h.Set("Retry-After-Ms", ms)
		if d := RetryAfter(h, time.Now()); d < 0 || d > 24*time.Hour {
			t.Fatalf("RetryAfter(%q, %q) = %v", seconds, ms, d)
		}
	})
}

// recordingDoer answers every request with 500 and keeps it.
type recordingDoer struct{ reqs []*http.Request }

func (d *recordingDoer) Do(r *http.Request) (*http.Response, error) {
	d.reqs = append(d.reqs, r)
	return &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(`{"error":{"message":"no"}}`)), Request: r}, nil
}

// TestNewOpenAIClient: the one go-openai client builder (the embeddings
// driver's and dedup's judge's) sends to the base URL, through the doer,
// with the key as a bearer token only when there is one.
func TestNewOpenAIClient(t *testing.T) {
	tests := []struct {
		name, base, key string
		wantURL         string
		wantAuth        string
	}{
		{name: "base and key", base: "http://127.0.0.1:9/v1", key: "k", wantURL: "http://127.0.0.1:9/v1/embeddings", wantAuth: "Bearer k"},
		{name: "trailing slash", base: "http://127.0.0.1:9/v1/", wantURL: "http://127.0.0.1:9/v1/embeddings"},
		{name: "default base", base: "", key: "k", wantURL: DefaultOpenAIBaseURL + "/embeddings", wantAuth: "Bearer k"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &recordingDoer{}
			c := NewOpenAIClient(tc.base, tc.key, d)
			if _, err := c.CreateEmbeddings(t.Context(), openai.EmbeddingRequestStrings{Input: []string{"x"}, Model: "m"}); err == nil {
				t.Fatal("the doer's 500 did not fail the call")
			}
			if len(d.reqs) != 1 {
				t.Fatalf("%d requests through the doer, want 1", len(d.reqs))
			}
			got := struct{ URL, Auth string }{d.reqs[0].URL.String(), d.reqs[0].Header.Get("Authorization")}
			if diff := cmp.Diff(struct{ URL, Auth string }{tc.wantURL, tc.wantAuth}, got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}
