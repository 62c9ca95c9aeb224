// Package inprocess lets an HTTP client call a handler of the same process
// without a socket: a Transport serves each request with the handler, as
// the listener would. memrank's MCP server reaches the native API this way,
// so that a tool call goes through exactly the handler, credential checks
// and tenancy an HTTP caller's request goes through, and nothing else is
// listening or reachable.
package inprocess

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// DefaultMaxResponseBytes bounds an answer a handler writes: the Transport
// holds it whole before returning it.
const DefaultMaxResponseBytes = 64 << 20

// ErrTooLarge is the error of a round trip whose answer exceeded
// MaxResponseBytes.
var ErrTooLarge = errors.New("inprocess: the handler's answer is too large")

// Transport is an http.RoundTripper that serves each request with Handler
// in the caller's goroutine and returns what it wrote. The request's
// context is the handler's: a deadline or a cancellation reaches it.
type Transport struct {
	Handler http.Handler
	// MaxResponseBytes bounds one answer (0: DefaultMaxResponseBytes).
	MaxResponseBytes int
}

var _ http.RoundTripper = (*Transport)(nil)

// RoundTrip serves req with the handler. A handler that panics fails the
// round trip instead of the process, as a listener would drop the
// connection.
func (t *Transport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	if t.Handler == nil {
		return nil, errors.New("inprocess: no handler")
	}
	if req.Body != nil {
		defer req.Body.Close()
	}
	limit := t.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	w := &recorder{header: http.Header{}, limit: limit}
	sreq := serverRequest(req)
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("inprocess: the handler of %s %s panicked: %v", req.Method, req.URL.Path, p)
		}
	}()
	t.Handler.ServeHTTP(w, sreq)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	return w.response(req)
}

// serverRequest is req as a server would hand it to its handler: the
// path and query in RequestURI, the host in Host, a body that is never
// nil.
func serverRequest(req *http.Request) *http.Request {
	s := req.Clone(req.Context())
	s.RequestURI = req.URL.RequestURI()
	if s.Host == "" {
		s.Host = req.URL.Host
	}
	if s.Body == nil {
		s.Body = http.NoBody
	}
	s.RemoteAddr = "inprocess"
	s.Proto, s.ProtoMajor, s.ProtoMinor = "HTTP/1.1", 1, 1
	return s
}

// recorder is the handler's http.ResponseWriter: it keeps the status, the
// headers as they were when the handler wrote its first byte, and up to
// limit bytes of body.
type recorder struct {
	mu      sync.Mutex
	header  http.Header
	sent    http.Header
	status  int
	body    bytes.Buffer
	limit   int
	tooMuch bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writeHeaderLocked(code)
}

func (r *recorder) writeHeaderLocked(code int) {
	if r.status != 0 || code < 200 {
		// 1xx answers are informational; a second status is ignored, as
		// net/http ignores it.
		return
	}
	r.status = code
	r.sent = r.header.Clone()
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writeHeaderLocked(http.StatusOK)
	if r.body.Len()+len(p) > r.limit {
		r.tooMuch = true
		return 0, ErrTooLarge
	}
	return r.body.Write(p)
}

// Flush does nothing: the whole answer is returned at the end.
func (r *recorder) Flush() {}

func (r *recorder) response(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tooMuch {
		return nil, fmt.Errorf("%s %s: %w (more than %d bytes)", req.Method, req.URL.Path, ErrTooLarge, r.limit)
	}
	r.writeHeaderLocked(http.StatusOK)
	h := r.sent
	h.Set("Content-Length", strconv.Itoa(r.body.Len()))
	return &http.Response{
		Status:        strconv.Itoa(r.status) + " " + http.StatusText(r.status),
		StatusCode:    r.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(r.body.Bytes())),
		ContentLength: int64(r.body.Len()),
		Request:       req,
	}, nil
}
