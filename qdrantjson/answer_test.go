package qdrantjson

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// goClientError wraps a status the way go-client does ("Query() failed:
// ..."), which status.FromError would fold into the message.
type goClientError struct{ err error }

func (e *goClientError) Error() string { return "Query() failed: memories: " + e.err.Error() }
func (e *goClientError) Unwrap() error { return e.err }

// Every error is answered from the one table: refusals with their class's
// status and their own text (never their wrapper's), upstream statuses with
// Qdrant's HTTP status and the upstream's words (except transport and
// grpc-go's own texts), context ends as such, anything else as a 500 whose
// text is withheld.
func TestClassify(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want Answer
	}{
		{"format", FormatError("filter.must[0]", "missing field `key`"),
			Answer{Status: 400, Msg: "Format error in JSON body: filter.must[0]: missing field `key`"}},
		{"format of the body", FormatError("", "EOF while parsing a value at line 1 column 0"),
			Answer{Status: 400, Msg: "Format error in JSON body: EOF while parsing a value at line 1 column 0"}},
		{"validation", ValidationError("limit", "value 0 invalid, must be 1 or larger"),
			Answer{Status: 422, Msg: "Validation error in JSON body: [limit: value 0 invalid, must be 1 or larger]"}},
		{"validation without a field", ValidationError("", "vector or text: one is required"),
			Answer{Status: 422, Msg: "Validation error in JSON body: [vector or text: one is required]"}},
		{"query parameter", Errorf(ClassParamFormat, "wait: provided string was not `true` or `false`"),
			Answer{Status: 400, Msg: "Deserialize error in query parameters: wait: provided string was not `true` or `false`"}},
		{"query parameter validation", &Error{Class: ClassParamValidation, Path: "timeout", Detail: "value 0 invalid, must be 1 or larger"},
			Answer{Status: 422, Msg: "Validation error in query parameters: [timeout: value 0 invalid, must be 1 or larger]"}},
		{"payload", Errorf(ClassPayload, "JSON payload has exceeded limit (10 bytes)."),
			Answer{Status: 400, Msg: "JSON payload has exceeded limit (10 bytes)."}},
		{"a refusal under a wrapper", fmt.Errorf("native: /srv/secret: %w", Errorf(ClassBadRequest, "id: want a memory id")),
			Answer{Status: 400, Msg: "Bad request: id: want a memory id"}},
		{"forbidden", Errorf(ClassForbidden, "tenant required"), Answer{Status: 403, Msg: "Forbidden: tenant required"}},
		{"not found", Errorf(ClassNotFound, "no route GET /v2"), Answer{Status: 404, Msg: "Not found: no route GET /v2"}},
		{"method", Errorf(ClassMethodNotAllowed, "GET /v1/retrieve accepts POST"), Answer{Status: 405, Msg: "Method not allowed: GET /v1/retrieve accepts POST"}},
		{"conflict", Errorf(ClassConflict, "written with another embedder"), Answer{Status: 409, Msg: "Conflict: written with another embedder"}},
		{"not implemented", Errorf(ClassNotImplemented, "no write path"), Answer{Status: 501, Msg: "Not implemented: no write path"}},
		{"bad gateway", Errorf(ClassBadGateway, "the upstream Qdrant REST API did not answer"), Answer{Status: 502, Msg: "Service unavailable: the upstream Qdrant REST API did not answer"}},

		{"upstream invalid argument", status.Error(codes.InvalidArgument, "Wrong input: bad"), Answer{Status: 400, Msg: "Wrong input: bad"}},
		{"upstream under go-client", &goClientError{status.Error(codes.NotFound, "Not found: Collection `x` doesn't exist!")},
			Answer{Status: 404, Msg: "Not found: Collection `x` doesn't exist!"}},
		{"upstream already exists", status.Error(codes.AlreadyExists, "exists"), Answer{Status: 409, Msg: "exists"}},
		{"upstream aborted", status.Error(codes.Aborted, "aborted"), Answer{Status: 409, Msg: "aborted"}},
		{"upstream permission denied", status.Error(codes.PermissionDenied, "Forbidden: no"), Answer{Status: 403, Msg: "Forbidden: no"}},
		{"upstream unauthenticated", status.Error(codes.Unauthenticated, "Must provide an API key"), Answer{Status: 401, Msg: "Must provide an API key"}},
		{"upstream timeout", status.Error(codes.DeadlineExceeded, "Timeout error: slow"), Answer{Status: 408, Msg: "Timeout error: slow"}},
		{"grpc-go's deadline", status.Error(codes.DeadlineExceeded, "context deadline exceeded"),
			Answer{Status: 408, Msg: "Timeout error: the request did not complete in time"}},
		{"upstream precondition", status.Error(codes.FailedPrecondition, "Precondition failed"), Answer{Status: 500, Msg: "Precondition failed"}},
		{"upstream data loss", status.Error(codes.DataLoss, "Checksum mismatch"), Answer{Status: 400, Msg: "Checksum mismatch"}},
		{"upstream out of range", status.Error(codes.OutOfRange, "out"), Answer{Status: 400, Msg: "out"}},
		{"upstream unimplemented", status.Error(codes.Unimplemented, "unknown method"), Answer{Status: 501, Msg: "unknown method"}},
		{"upstream canceled", status.Error(codes.Canceled, "context canceled"), Answer{Status: 499, Msg: "context canceled"}},
		{"upstream internal", status.Error(codes.Internal, "Service internal error: boom"), Answer{Status: 500, Msg: "Service internal error: boom"}},
		{"upstream unknown", status.Error(codes.Unknown, ""), Answer{Status: 500, Msg: "Unknown"}},
		{"upstream unavailable", status.Error(codes.Unavailable, "dial tcp 10.9.9.9:6334: connect: connection refused"),
			Answer{Status: 503, Msg: "Service unavailable: the upstream is not reachable", Withheld: true}},
		{"rate limit", WithTrailer(status.Error(codes.ResourceExhausted, "Rate limiting exceeded"), metadata.Pairs("retry-after", "7")),
			Answer{Status: 429, Msg: "Rate limiting exceeded", RetryAfter: "7"}},
		{"rate limit without a valid retry-after", WithTrailer(status.Error(codes.ResourceExhausted, "Rate limiting exceeded"), metadata.Pairs("retry-after", "soon")),
			Answer{Status: 429, Msg: "Rate limiting exceeded"}},
		{"rate limit read by go-client", errors.Join(status.Error(codes.ResourceExhausted, "Rate limiting exceeded"), &qdrant.QdrantResourceExhaustedError{RetryAfterS: 3}),
			Answer{Status: 429, Msg: "Rate limiting exceeded", RetryAfter: "3"}},
		{"insufficient storage", WithTrailer(status.Error(codes.ResourceExhausted, "No space"), metadata.Pairs(InsufficientStorageKey, "1")),
			Answer{Status: 507, Msg: "No space"}},

		{"deadline", fmt.Errorf("rank: candidates: %w", context.DeadlineExceeded), Answer{Status: 408, Msg: "Timeout error: the request did not complete in time"}},
		{"cancelled", context.Canceled, Answer{Status: 499, Msg: "the request was cancelled"}},
		{"unexpected", errors.New("rank: decode: index out of range at /srv/secret/path"),
			Answer{Status: 500, Msg: "Service internal error: memrank failed to process the request", Withheld: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, Classify(c.err)); diff != "" {
				t.Errorf("Classify(%v) (-want +got):\n%s", c.err, diff)
			}
		})
	}
}

// Every gRPC code has a row of the table, and every class a status.
func TestTable(t *testing.T) {
	for code := codes.OK + 1; code <= codes.Unauthenticated; code++ {
		found := 0
		for _, row := range table {
			for _, rc := range row.codes {
				if rc == code {
					found++
				}
			}
		}
		if found != 1 {
			t.Errorf("code %v is in %d rows, want 1", code, found)
		}
	}
	for c := range Class(len(table)) {
		if c.Status() < 400 {
			t.Errorf("class %d has status %d", c, c.Status())
		}
	}
}

// The envelopes are Qdrant's: {"result","status":"ok","time"} and
// {"status":{"error"},"time"}, as JSON with its length and type.
func TestEnvelope(t *testing.T) {
	w := httptest.NewRecorder()
	WriteResult(w, time.Now(), []byte(`{"points":[]}`))
	var ok struct {
		Result json.RawMessage `json:"result"`
		Status string          `json:"status"`
		Time   *float64        `json:"time"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &ok); err != nil || w.Code != 200 || ok.Status != "ok" || string(ok.Result) != `{"points":[]}` || ok.Time == nil {
		t.Errorf("WriteResult: %d %s (%v)", w.Code, w.Body, err)
	}
	if w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Content-Length") != fmt.Sprint(w.Body.Len()) {
		t.Errorf("headers %v", w.Header())
	}

	w = httptest.NewRecorder()
	a := WriteError(w, time.Time{}, WithTrailer(status.Error(codes.ResourceExhausted, "Rate \"limit\"\n"), metadata.Pairs("retry-after", "7")))
	want := `{"status":{"error":"Rate \"limit\"\n"},"time":0}`
	if w.Code != 429 || w.Body.String() != want || w.Header().Get("Retry-After") != "7" || a.Status != 429 {
		t.Errorf("WriteError: %d %s, Retry-After %q, want 429 %s", w.Code, w.Body, w.Header().Get("Retry-After"), want)
	}
}

// A body over the limit is refused in actix's words, whether its length
// was announced or not; what is read is parsed strictly.
func TestReadAndParseBody(t *testing.T) {
	for _, c := range []struct {
		name, body string
		length     int64
		want       string
	}{
		{"announced", strings.Repeat("x", 20), 20, "JSON payload (20 bytes) is larger than allowed (limit: 10 bytes)."},
		{"streamed", strings.Repeat("x", 20), -1, "JSON payload has exceeded limit (10 bytes)."},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(c.body))
		r.ContentLength = c.length
		_, err := ReadBody(httptest.NewRecorder(), r, 10)
		if a := Classify(err); a.Status != 400 || a.Msg != c.want {
			t.Errorf("%s: %+v, want 400 %q", c.name, a, c.want)
		}
	}
	for _, c := range []struct{ body, want string }{
		{"{\"a\":\"\xff\"}", "Format error in JSON body: invalid unicode code point (the body is not valid UTF-8)"},
		{`{"a":1,}`, "Format error in JSON body: trailing comma at line 1 column 8"},
		{strings.Repeat("[", 200), "Format error in JSON body: recursion limit exceeded at line 1 column 129"},
	} {
		if _, err := ParseBody([]byte(c.body)); err == nil || err.Error() != c.want {
			t.Errorf("ParseBody(%.20q) = %v, want %q", c.body, err, c.want)
		}
	}
}
