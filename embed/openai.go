package embed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cenkalti/backoff/v5"
	"github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/telemetry/settings"
)

// Defaults of OpenAIConfig.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultOpenAITimeout    = 10 * time.Second
	DefaultOpenAIBatchSize  = 64
	DefaultOpenAIMaxRetries = 3
	DefaultRetryBaseDelay   = 250 * time.Millisecond
	DefaultRetryMaxDelay    = 10 * time.Second

	// MaxOpenAIRetries bounds MaxRetries, so a typo cannot make one write
	// wait for minutes.
	MaxOpenAIRetries = 10
)

// OpenAIConfig configures the driver for an OpenAI-compatible embeddings
// API (OpenAI itself, or a local server such as vLLM, Ollama, LiteLLM or
// text-embeddings-inference). Zero values take the defaults above.
type OpenAIConfig struct {
	// BaseURL is the API root that "/embeddings" is appended to, e.g.
	// "http://localhost:8080/v1"; "" is OpenAI's API.
	BaseURL string
	// Model is the server's model name, e.g. "text-embedding-3-small".
	// Required.
	Model string
	// APIKey is sent as a bearer token when not empty. It never appears in
	// an error, a log line or a span.
	APIKey string
	// Dimensions is the length of the vectors the server must return
	// (required). Answers of another length are refused.
	Dimensions int
	// SendDimensions sends Dimensions as the request's "dimensions"
	// parameter, for models that can shorten their vectors (OpenAI's
	// text-embedding-3 family). Many other servers refuse the parameter.
	SendDimensions bool
	// Timeout bounds each HTTP attempt (default 10s).
	Timeout time.Duration
	// BatchSize is the number of texts per request (default 64).
	BatchSize int
	// MaxRetries is the number of retries after a first attempt that got a
	// 429, a 5xx or a transport error (default 3; negative: none; at most
	// MaxOpenAIRetries).
	MaxRetries int
	// RetryBaseDelay is the first retry's delay before jitter (default
	// 250ms); each further retry doubles it.
	RetryBaseDelay time.Duration
	// RetryMaxDelay caps every wait between attempts, a server's
	// Retry-After included (default 10s).
	RetryMaxDelay time.Duration
	// HTTPClient sends the requests; nil: a client of its own whose
	// transport is instrumented with otelhttp.
	HTTPClient *http.Client

	// Telemetry is where the driver's logs, spans and metrics go; nil
	// members record nothing.
	Telemetry settings.Settings
}

// String describes the configuration without the API key, so a logged
// configuration does not leak it.
func (c OpenAIConfig) String() string {
	key := "unset"
	if c.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("OpenAIConfig{BaseURL:%q Model:%q Dimensions:%d SendDimensions:%t APIKey:%s}",
		c.BaseURL, c.Model, c.Dimensions, c.SendDimensions, key)
}

// GoString is String, for %#v.
func (c OpenAIConfig) GoString() string { return c.String() }

// Validate reports a configuration NewOpenAI cannot use.
func (c OpenAIConfig) Validate() error {
	var errs []error
	if strings.TrimSpace(c.Model) == "" {
		errs = append(errs, errors.New("embed: openai: Model is required"))
	}
	if c.Dimensions < 1 || c.Dimensions > MaxDimensions {
		errs = append(errs, fmt.Errorf("%w: openai: Dimensions %d (want 1 to %d)", ErrDimensions, c.Dimensions, MaxDimensions))
	}
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// The URL itself is not repeated: it may carry credentials.
			errs = append(errs, errors.New("embed: openai: BaseURL must be an absolute http or https URL"))
		}
	}
	if c.Timeout < 0 || c.RetryBaseDelay < 0 || c.RetryMaxDelay < 0 {
		errs = append(errs, errors.New("embed: openai: Timeout, RetryBaseDelay and RetryMaxDelay must not be negative"))
	}
	if c.BatchSize < 0 {
		errs = append(errs, fmt.Errorf("embed: openai: BatchSize %d must not be negative", c.BatchSize))
	}
	if c.MaxRetries > MaxOpenAIRetries {
		errs = append(errs, fmt.Errorf("embed: openai: MaxRetries %d (at most %d)", c.MaxRetries, MaxOpenAIRetries))
	}
	if d := c.withDefaults(); d.RetryBaseDelay > d.RetryMaxDelay {
		errs = append(errs, fmt.Errorf("embed: openai: RetryBaseDelay %v exceeds RetryMaxDelay %v", d.RetryBaseDelay, d.RetryMaxDelay))
	}
	return errors.Join(errs...)
}

func (c OpenAIConfig) withDefaults() OpenAIConfig {
	if c.BaseURL == "" {
		c.BaseURL = DefaultOpenAIBaseURL
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultOpenAITimeout
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultOpenAIBatchSize
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = DefaultOpenAIMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	if c.RetryBaseDelay == 0 {
		c.RetryBaseDelay = DefaultRetryBaseDelay
	}
	if c.RetryMaxDelay == 0 {
		c.RetryMaxDelay = DefaultRetryMaxDelay
	}
	c.Telemetry = c.Telemetry.WithDefaults()
	return c
}

// OpenAI embeds texts with an OpenAI-compatible embeddings API. It is safe
// for concurrent use. Close releases the idle connections of the HTTP
// client it made for itself.
type OpenAI struct {
	cfg    OpenAIConfig
	model  string
	client *openai.Client
	own    *http.Transport // nil when the caller gave the HTTP client

	tracer    trace.Tracer
	attrs     []attribute.KeyValue // on every span and measurement
	duration  metric.Float64Histogram
	tokens    metric.Int64Histogram
	retries   metric.Int64Counter
	redaction *strings.Replacer
}

var _ Embedder = (*OpenAI)(nil)

const scope = "github.com/memrank/memrank/embed"

// NewOpenAI checks cfg and builds the driver. It makes no request: a wrong
// model or key shows on the first Embed.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	explicitBase := cfg.BaseURL != ""
	cfg = cfg.withDefaults()
	o := &OpenAI{cfg: cfg, model: cfg.Model + ":" + strconv.Itoa(cfg.Dimensions)}

	httpClient := cfg.HTTPClient
	if httpClient == nil {
		if base, ok := http.DefaultTransport.(*http.Transport); ok {
			o.own = base.Clone() // its proxy, dial and TLS settings, its own pool
		} else {
			o.own = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
		}
		httpClient = &http.Client{Transport: otelhttp.NewTransport(o.own,
			otelhttp.WithTracerProvider(cfg.Telemetry.TracerProvider),
			otelhttp.WithMeterProvider(cfg.Telemetry.MeterProvider),
		)}
	}
	o.client = NewOpenAIClient(cfg.BaseURL, cfg.APIKey, httpClient)

	o.redaction = strings.NewReplacer() // no key: nothing to hide
	if cfg.APIKey != "" {
		o.redaction = strings.NewReplacer(cfg.APIKey, "[redacted]")
	}

	o.attrs = []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "embeddings"),
		attribute.String("gen_ai.request.model", cfg.Model),
	}
	if !explicitBase {
		o.attrs = append(o.attrs, attribute.String("gen_ai.provider.name", "openai"))
	}
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		o.attrs = append(o.attrs, attribute.String("server.address", u.Hostname()))
		port := u.Port()
		if port == "" && u.Scheme == "https" {
			port = "443"
		} else if port == "" {
			port = "80"
		}
		if p, err := strconv.Atoi(port); err == nil {
			o.attrs = append(o.attrs, attribute.Int("server.port", p))
		}
	}

	o.tracer = cfg.Telemetry.TracerProvider.Tracer(scope)
	meter := cfg.Telemetry.MeterProvider.Meter(scope)
	var err error
	o.duration, err = meter.Float64Histogram("gen_ai.client.operation.duration",
		metric.WithUnit("s"), metric.WithDescription("Duration of embeddings requests, retries included."),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
	if err != nil {
		return nil, fmt.Errorf("embed: openai: metrics: %w", err)
	}
	o.tokens, err = meter.Int64Histogram("gen_ai.client.token.usage",
		metric.WithUnit("{token}"), metric.WithDescription("Input tokens of embeddings requests, as the server counted them."),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576))
	if err != nil {
		return nil, fmt.Errorf("embed: openai: metrics: %w", err)
	}
	o.retries, err = meter.Int64Counter("memrank.embed.retries",
		metric.WithUnit("{retry}"), metric.WithDescription("Embeddings requests sent again after a 429, a 5xx or a transport error."))
	if err != nil {
		return nil, fmt.Errorf("embed: openai: metrics: %w", err)
	}
	return o, nil
}

// NewOpenAIClient builds the go-openai client for an OpenAI-compatible API
// rooted at baseURL ("" is OpenAI's), sending apiKey as the bearer token
// when it is not empty and every request through doer (nil: a plain
// http.Client). It is the one builder of such clients: this package's
// embeddings driver and dedup's LLM judge both use it, so both address a
// server alike.
func NewOpenAIClient(baseURL, apiKey string, doer openai.HTTPDoer) *openai.Client {
	cc := openai.DefaultConfig(apiKey)
	if baseURL != "" {
		// go-openai appends "/embeddings", "/chat/completions"...: a
		// trailing slash would double.
		cc.BaseURL = strings.TrimRight(baseURL, "/")
	}
	if doer != nil {
		cc.HTTPClient = doer
	}
	return openai.NewClientWithConfig(cc)
}

// Dimensions is the configured vector length.
func (o *OpenAI) Dimensions() int { return o.cfg.Dimensions }

// Model is "<model>:<dimensions>", e.g. "text-embedding-3-small:1536":
// one model at two dimensions gives incomparable vectors.
func (o *OpenAI) Model() string { return o.model }

// Close closes the idle connections of the HTTP client NewOpenAI made; a
// client given in the configuration is the caller's to close. Close is safe
// to call more than once, and Embed still works afterwards (it dials anew).
func (o *OpenAI) Close() error {
	if o.own != nil {
		o.own.CloseIdleConnections()
	}
	return nil
}

// Embed returns one vector per text, in order, sending at most BatchSize
// texts per request, one request at a time. A failed request fails the
// call: no partial result is returned.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.cfg.BatchSize {
		end := min(start+o.cfg.BatchSize, len(texts))
		vecs, err := o.request(ctx, texts[start:end])
		if err != nil {
			if len(texts) > end-start {
				return nil, fmt.Errorf("embed: %s: texts %d to %d of %d: %w", o.model, start, end-1, len(texts), err)
			}
			return nil, fmt.Errorf("embed: %s: %w", o.model, err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// ErrResponse is wrapped by errors about an embeddings answer that cannot be
// used: vectors missing, duplicated or not finite.
var ErrResponse = errors.New("invalid embeddings response")

// StatusError is an embedding server's error answer. Message is the
// server's text, shortened, with the API key removed.
type StatusError struct {
	StatusCode int
	Message    string
}

func (e *StatusError) Error() string {
	s := "embedding server answered " + strconv.Itoa(e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		s += " " + t
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// redactedError carries a failure's text with the API key removed. It
// unwraps only to values whose own text is safe (context errors,
// *StatusError), never to the client library's errors.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.cause }

// failure is one attempt's error, classified.
type failure struct {
	err        error  // safe to show: no API key
	kind       string // error.type
	retry      bool
	retryAfter time.Duration // the server's Retry-After, 0 when absent
}

// request sends one batch, with retries, under one span.
func (o *OpenAI) request(ctx context.Context, batch []string) ([][]float32, error) {
	ctx, span := o.tracer.Start(ctx, "embeddings "+o.cfg.Model,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(o.attrs...),
		trace.WithAttributes(
			attribute.Int("gen_ai.embeddings.dimension.count", o.cfg.Dimensions),
			attribute.Int("memrank.embed.texts", len(batch)),
		))
	defer span.End()
	start := time.Now()

	waits := o.retryWaits(ctx)
	var (
		attempts int
		last     failure // the last attempt's
		resp     openai.EmbeddingResponse
	)
	vecs, err := backoff.Retry(ctx, func() ([][]float32, error) {
		attempts++
		vecs, r, err := o.attempt(ctx, batch)
		if err == nil {
			resp = r
			return vecs, nil
		}
		last = o.classify(ctx, r, err)
		waits.retryAfter = last.retryAfter
		if !last.retry {
			return nil, backoff.Permanent(last.err)
		}
		return nil, last.err
	},
		backoff.WithBackOff(waits),
		backoff.WithMaxTries(uint(1+o.cfg.MaxRetries)),
		backoff.WithMaxElapsedTime(0), // the attempts and ctx bound it
		backoff.WithNotify(func(_ error, wait time.Duration) {
			span.AddEvent("retry", trace.WithAttributes(
				attribute.Int("memrank.embed.attempt", attempts),
				attribute.String("error.type", last.kind),
				attribute.Float64("memrank.embed.retry_wait_s", wait.Seconds()),
			))
			o.retries.Add(ctx, 1, metric.WithAttributes(o.attrs...), metric.WithAttributes(attribute.String("error.type", last.kind)))
			o.cfg.Telemetry.Logger.LogAttrs(ctx, slog.LevelWarn, "embeddings request failed; retrying",
				slog.String("model", o.cfg.Model), slog.Int("attempt", attempts),
				slog.Duration("wait", wait), slog.String("error", last.err.Error()))
		}))
	if err == nil {
		span.SetAttributes(attribute.Int("memrank.embed.attempts", attempts))
		if resp.Model != "" {
			span.SetAttributes(attribute.String("gen_ai.response.model", string(resp.Model)))
		}
		if n := resp.Usage.PromptTokens; n > 0 {
			span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", n))
			o.tokens.Record(ctx, int64(n), metric.WithAttributes(o.attrs...), metric.WithAttributes(attribute.String("gen_ai.token.type", "input")))
		}
		o.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(o.attrs...))
		return vecs, nil
	}
	f := last
	if cerr := ctx.Err(); cerr != nil && err != last.err {
		// The caller gave up while Retry waited to send the batch again.
		f = failure{err: &redactedError{msg: cerr.Error() + " while waiting to retry after: " + last.err.Error(), cause: cerr}, kind: ctxKind(cerr)}
	}

	err = f.err
	if attempts > 1 {
		err = fmt.Errorf("%d attempts: %w", attempts, err)
	}
	span.SetAttributes(attribute.Int("memrank.embed.attempts", attempts), attribute.String("error.type", f.kind))
	span.RecordError(err)
	span.SetStatus(codes.Error, f.kind)
	o.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(o.attrs...), metric.WithAttributes(attribute.String("error.type", f.kind)))
	return nil, err
}

// attempt sends one request under the per-attempt timeout and checks the
// answer. resp carries the response headers even on an error status.
func (o *OpenAI) attempt(ctx context.Context, batch []string) ([][]float32, openai.EmbeddingResponse, error) {
	actx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	req := openai.EmbeddingRequestStrings{Input: batch, Model: openai.EmbeddingModel(o.cfg.Model)}
	if o.cfg.SendDimensions {
		req.Dimensions = o.cfg.Dimensions
	}
	resp, err := o.client.CreateEmbeddings(actx, req)
	if err != nil {
		return nil, resp, err
	}
	vecs, err := orderVectors(resp.Data, len(batch), o.cfg.Dimensions)
	return vecs, resp, err
}

// orderVectors puts the answer's vectors in input order (by their index
// field: servers need not keep it) and checks there is exactly one per text,
// each of dims finite components.
func orderVectors(data []openai.Embedding, n, dims int) ([][]float32, error) {
	if len(data) != n {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrResponse, len(data), n)
	}
	out := make([][]float32, n)
	for _, d := range data {
		if d.Index < 0 || d.Index >= n {
			return nil, fmt.Errorf("%w: vector index %d outside 0 to %d", ErrResponse, d.Index, n-1)
		}
		if out[d.Index] != nil {
			return nil, fmt.Errorf("%w: two vectors with index %d", ErrResponse, d.Index)
		}
		if len(d.Embedding) != dims {
			return nil, fmt.Errorf("%w: the server returned %d components for text %d, want %d (check the model and Dimensions)",
				ErrDimensions, len(d.Embedding), d.Index, dims)
		}
		for _, x := range d.Embedding {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("%w: vector %d has a component %v", ErrResponse, d.Index, x)
			}
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// classify decides whether an attempt's error is worth another attempt
// (429, 5xx, transport errors and attempt timeouts) and makes its text safe.
func (o *OpenAI) classify(ctx context.Context, resp openai.EmbeddingResponse, err error) failure {
	if cerr := ctx.Err(); cerr != nil {
		// The caller gave up: its own error, not the transport's echo of it.
		return failure{err: cerr, kind: ctxKind(cerr)}
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	status, msg := 0, ""
	switch {
	case errors.As(err, &apiErr):
		status, msg = apiErr.HTTPStatusCode, apiErr.Message
	case errors.As(err, &reqErr):
		status, msg = reqErr.HTTPStatusCode, string(reqErr.Body)
	}
	if status != 0 {
		serr := &StatusError{StatusCode: status, Message: o.redact(msg, 300)}
		f := failure{err: serr, kind: strconv.Itoa(status)}
		if status == http.StatusTooManyRequests || status >= 500 {
			f.retry = true
			f.retryAfter = RetryAfter(resp.Header(), time.Now())
		}
		return f
	}
	switch {
	case errors.Is(err, ErrDimensions), errors.Is(err, ErrResponse):
		return failure{err: &redactedError{msg: o.redact(err.Error(), 300), cause: errors.Unwrap(err)}, kind: "response"}
	case errors.Is(err, context.DeadlineExceeded):
		return failure{
			err:   &redactedError{msg: "attempt timed out after " + o.cfg.Timeout.String(), cause: context.DeadlineExceeded},
			kind:  "timeout",
			retry: true,
		}
	case isTransport(err):
		return failure{err: &redactedError{msg: o.redact(err.Error(), 300)}, kind: "transport", retry: true}
	}
	// A 2xx answer that is not an embeddings response (a proxy's HTML
	// page, a JSON error without a status): sending it again would not help.
	return failure{err: &redactedError{msg: "unreadable answer: " + o.redact(err.Error(), 300)}, kind: "response"}
}

// ctxKind is the error.type of a context's error.
func ctxKind(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return "canceled"
}

// isTransport reports a failure to reach the server or to read its whole
// answer.
func isTransport(err error) bool {
	var uerr *url.Error
	var nerr interface{ Timeout() bool }
	return errors.As(err, &uerr) || errors.As(err, &nerr) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// redact removes the API key from a server's or a transport's text, keeps
// it on one line and shortens it to at most max bytes.
func (o *OpenAI) redact(s string, max int) string {
	s = o.redaction.Replace(s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
