// Package client is the Go SDK for memrank's own HTTP API: the write path
// (observe, confirm, correct, used), retrieval with every factor explained,
// a memory's history (its audit trail), forgetting and stats. Reads of
// Qdrant's own API need no SDK: point any Qdrant client at memrank.
//
//	c, err := client.New("http://127.0.0.1:6333", client.WithAPIKey(key))
//	out, err := c.Observe(ctx, client.Observation{Collection: "memories", Text: "Dana lives in Lisbon"})
//	res, err := c.Retrieve(ctx, client.RetrieveRequest{Collection: "memories", Text: "where does Dana live"})
//
// Errors the server answers are *Error, with the HTTP status, the
// server's message and its Retry-After; errors.Is tells them apart by
// kind. A request that never got an answer is an *Error too, with Status
// 0. The kinds, the same in the TypeScript and Python SDKs:
//
//	ErrBadRequest    400, 405, 413, 422   the request itself is at fault
//	ErrUnauthorized  401                  no or unknown credentials
//	ErrForbidden     403                  the credentials may not do this
//	ErrNotFound      404                  no such memory, collection or route
//	ErrConflict      409                  e.g. written with another embedder
//	ErrRateLimited   429                  wait RetryAfter
//	ErrUnavailable   408, 502, 503, 504   try again later (408: the store missed its deadline)
//	ErrServer        any other 5xx        memrank failed; details in its log
//	ErrConnection    0                    no answer: refused, reset, timed out
//
// Any other status (a 3xx, which is never followed) is an *Error of no
// kind.
//
// Numbers the server writes as null (JSON has no infinity) are Float,
// null reading as +Inf, or *float64 where null means "none".
//
// The client is safe for concurrent use. It holds no state besides its
// options, so With makes a cheap copy acting with other credentials.
//
// It never follows a redirect, whatever http.Client it is given: memrank
// does not redirect, and following one would hand the credentials (and a
// POST's body) to the host it names. A 3xx answer is an *Error saying
// where it pointed.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults.
const (
	DefaultURL     = "http://127.0.0.1:6333"
	DefaultTimeout = 30 * time.Second
	// maxAnswer bounds how much of an answer is read: a retrieve of 1,000
	// explained results with payloads fits many times over.
	maxAnswer = 64 << 20
)

// Client calls one memrank server's native API.
type Client struct {
	base    string
	hc      *http.Client
	timeout time.Duration
	header  http.Header // credentials, tenant and extra headers sent on every call
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sends key in the api-key header, as Qdrant's clients do.
func WithAPIKey(key string) Option {
	return func(c *Client) { c.setHeader("api-key", key) }
}

// WithBearerToken sends token as Authorization: Bearer (a JWT, for servers
// that take tenants from verified tokens).
func WithBearerToken(token string) Option {
	return func(c *Client) {
		if token == "" {
			c.header.Del("Authorization")
			return
		}
		c.header.Set("Authorization", "Bearer "+token)
	}
}

// WithTenantHeader sends tenant in the header name, for servers that take
// the tenant from a header a trusted gateway sets (tenancy.header).
func WithTenantHeader(name, tenant string) Option {
	return func(c *Client) { c.setHeader(name, tenant) }
}

// WithHeader sends one more header on every call; an empty value removes
// it.
func WithHeader(name, value string) Option {
	return func(c *Client) { c.setHeader(name, value) }
}

// WithHTTPClient makes the calls with a copy of hc (a transport of your
// own, a proxy, TLS settings). Its Timeout, if any, applies besides
// WithTimeout's; its CheckRedirect does not: the copy never follows a
// redirect (see Client).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = noRedirects(hc)
		}
	}
}

// noRedirects is a shallow copy of hc that answers a redirect instead of
// following it. memrank's API never redirects; following one would send
// the api-key, the bearer token and the tenant header, and on 307 and 308
// the request's body, to whatever host the redirect names.
func noRedirects(hc *http.Client) *http.Client {
	cp := *hc
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cp
}

// WithTimeout bounds each call, from sending to reading the whole answer
// (default 30 s). Zero or less keeps the default.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.timeout = d
		}
	}
}

func (c *Client) setHeader(name, value string) {
	if value == "" {
		c.header.Del(name)
		return
	}
	c.header.Set(name, value)
}

// New makes a client of the memrank at baseURL (DefaultURL when empty),
// e.g. http://127.0.0.1:6333.
func New(baseURL string, opts ...Option) (*Client, error) {
	if baseURL == "" {
		baseURL = DefaultURL
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		if !strings.Contains(baseURL, "://") {
			return nil, fmt.Errorf("client: %q is not an http(s) URL: write it with its scheme, e.g. http://%s", baseURL, baseURL)
		}
		return nil, fmt.Errorf("client: %q is not an http(s) URL", baseURL)
	}
	c := &Client{
		base:    strings.TrimRight(baseURL, "/"),
		hc:      noRedirects(http.DefaultClient),
		timeout: DefaultTimeout,
		header:  http.Header{},
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// With returns a copy of c with opts applied on top, e.g. one caller's
// credentials; c is unchanged.
func (c *Client) With(opts ...Option) *Client {
	cp := *c
	cp.header = c.header.Clone()
	for _, o := range opts {
		o(&cp)
	}
	return &cp
}

// URL is the server's base URL.
func (c *Client) URL() string { return c.base }

// Do calls method path (with query, which may be nil) and decodes the
// whole JSON answer of a 200 into out (nil: discarded). body is sent as
// JSON: a []byte or json.RawMessage as it is, anything else marshalled;
// nil sends no body. It is for routes this package has no method for;
// any other status is an *Error.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case json.RawMessage:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("client: encoding the %s %s body: %w", method, path, err)
		}
		rd = bytes.NewReader(enc)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return &Error{Message: fmt.Sprintf("%s %s: %v", method, path, err), err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return &Error{Message: fmt.Sprintf("%s %s: reading the answer: %v", method, path, err), err: err}
	}
	if len(b) > maxAnswer {
		return &Error{Status: resp.StatusCode, Message: fmt.Sprintf("%s %s: the answer is larger than %d bytes", method, path, maxAnswer)}
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return redirectError(method, path, resp)
	}
	if resp.StatusCode != http.StatusOK {
		return statusError(resp, b)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("client: the answer of %s %s is not what memrank answers: %w", method, path, err)
	}
	return nil
}

// call is Do for the routes whose answer is Qdrant's envelope: it returns
// the envelope's result.
func call[T any](ctx context.Context, c *Client, method, path string, query url.Values, body any) (*T, error) {
	var env struct {
		Result *T `json:"result"`
	}
	if err := c.Do(ctx, method, path, query, body, &env); err != nil {
		return nil, err
	}
	if env.Result == nil {
		return nil, fmt.Errorf("client: the answer of %s %s has no result", method, path)
	}
	return env.Result, nil
}

// Error is an answer other than 200, or no answer at all (Status 0).
type Error struct {
	Status  int    // the HTTP status; 0 when the request got no answer
	Message string // the server's message ({"status": {"error": ...}}), or what went wrong
	// RetryAfter is the server's Retry-After, sent with a 429 or with a
	// 503 of load shedding (0: none).
	RetryAfter time.Duration
	err        error // the transport's error, when Status is 0
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return e.Message
	}
	return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status)
}

// Unwrap returns the transport's error of a request that got no answer.
func (e *Error) Unwrap() error { return e.err }

// Kinds of Error, for errors.Is.
var (
	ErrBadRequest   = errors.New("bad request")      // 400, 405, 413, 422: the request itself is at fault
	ErrUnauthorized = errors.New("unauthorized")     // 401: no or unknown credentials
	ErrForbidden    = errors.New("forbidden")        // 403: the credentials may not do this
	ErrNotFound     = errors.New("not found")        // 404: no such memory, collection or route
	ErrConflict     = errors.New("conflict")         // 409: e.g. the collection is being re-embedded
	ErrRateLimited  = errors.New("rate limited")     // 429: see RetryAfter
	ErrUnavailable  = errors.New("unavailable")      // 408, 502, 503, 504: try again later
	ErrServer       = errors.New("server error")     // any other 5xx
	ErrConnection   = errors.New("connection error") // no answer: refused, reset, timed out
)

// Is reports whether the error is of kind target (one of the Err values).
func (e *Error) Is(target error) bool {
	return kind(e.Status) == target
}

func kind(status int) error {
	switch {
	case status == 0:
		return ErrConnection
	case status == http.StatusBadRequest || status == http.StatusMethodNotAllowed ||
		status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity:
		return ErrBadRequest
	case status == http.StatusUnauthorized:
		return ErrUnauthorized
	case status == http.StatusForbidden:
		return ErrForbidden
	case status == http.StatusNotFound:
		return ErrNotFound
	case status == http.StatusConflict:
		return ErrConflict
	case status == http.StatusTooManyRequests:
		return ErrRateLimited
	case status == http.StatusRequestTimeout || status == http.StatusBadGateway ||
		status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout:
		// 408: memrank answers it when the store missed its deadline.
		return ErrUnavailable
	case status >= 500:
		return ErrServer
	}
	return nil
}

// redirectError is the *Error of a 3xx answer, which was not followed. It
// names where the redirect pointed, without any user information the
// Location carried; the client's own credentials are in headers, never in
// a message.
func redirectError(method, path string, resp *http.Response) *Error {
	to := "nowhere (no Location)"
	if u, err := resp.Location(); err == nil {
		to = u.Redacted()
	}
	return &Error{Status: resp.StatusCode, Message: fmt.Sprintf(
		"%s %s: the server redirected to %s; memrank does not redirect, so the request was not followed (check the client's URL)",
		method, path, to)}
}

// statusError reads Qdrant's error envelope, {"status": {"error": ...}},
// or OpenAI's, {"error": {"message": ...}} (/v1/embeddings); an answer of
// another shape (a proxy's page) is quoted, shortened.
func statusError(resp *http.Response, b []byte) *Error {
	e := &Error{Status: resp.StatusCode}
	var qe struct {
		Status struct {
			Error string `json:"error"`
		} `json:"status"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	decoded := json.Unmarshal(b, &qe) == nil
	switch {
	case decoded && qe.Status.Error != "":
		e.Message = qe.Status.Error
	case decoded && qe.Error.Message != "":
		e.Message = qe.Error.Message
	default:
		e.Message = fmt.Sprintf("%.200s", bytes.TrimSpace(b))
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if d, err := time.ParseDuration(s + "s"); err == nil && d > 0 {
			e.RetryAfter = d
		}
	}
	return e
}
