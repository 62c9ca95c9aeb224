package qdrantjson

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// WriteResult answers 200 with result (JSON) in Qdrant's envelope,
// {"result":...,"status":"ok","time":seconds since start}.
func WriteResult(w http.ResponseWriter, start time.Time, result []byte) {
	b := make([]byte, 0, len(result)+48)
	b = append(b, `{"result":`...)
	b = append(b, result...)
	b = append(b, `,"status":"ok","time":`...)
	b = appendTime(b, elapsed(start))
	b = append(b, '}')
	WriteJSON(w, http.StatusOK, b)
}

// WriteError answers err as Classify says, in Qdrant's error envelope
// {"status":{"error":msg},"time":seconds since start} (0 for a zero start),
// with Retry-After when the upstream gave one. The answer is returned for
// the front's log.
func WriteError(w http.ResponseWriter, start time.Time, err error) Answer {
	a := Classify(err)
	if a.RetryAfter != "" {
		w.Header().Set("Retry-After", a.RetryAfter)
	}
	b := make([]byte, 0, len(a.Msg)+48)
	b = append(b, `{"status":{"error":`...)
	b = AppendString(b, a.Msg)
	b = append(b, `},"time":`...)
	b = appendTime(b, elapsed(start))
	b = append(b, '}')
	WriteJSON(w, a.Status, b)
	return a
}

func elapsed(start time.Time) float64 {
	if start.IsZero() {
		return 0
	}
	return time.Since(start).Seconds()
}

// WriteJSON writes b, a JSON document, with status.
func WriteJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ReadBody reads a request body of at most limit bytes. Its errors are
// actix's texts, as Qdrant answers them (400).
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, Errorf(ClassPayload, "JSON payload (%d bytes) is larger than allowed (limit: %d bytes).", r.ContentLength, limit)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, Errorf(ClassPayload, "JSON payload has exceeded limit (%d bytes).", limit)
		}
		// actix's words; the reader's own text may name the connection's
		// addresses, so it is left out.
		return nil, Errorf(ClassPayload, "Error that occur during reading payload: the body could not be read")
	}
	if len(body) > 0 && !isJSON(r.Header.Get("Content-Type")) {
		// A web page can send a cross-origin POST without a preflight only
		// as text/plain, a form or with no type: refusing them keeps a
		// page in a browser from writing to a memrank on loopback.
		return nil, Errorf(ClassPayload, "Content type error: send the body with Content-Type: application/json")
	}
	return body, nil
}

// isJSON reports whether a Content-Type names JSON: application/json or
// application/<anything>+json, parameters allowed.
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// ParseBody parses a request body: one JSON value, valid UTF-8.
func ParseBody(body []byte) (Value, error) {
	if !utf8.Valid(body) {
		return Value{}, FormatError("", "invalid unicode code point (the body is not valid UTF-8)")
	}
	v, err := Parse(string(body))
	if err != nil {
		return Value{}, FormatError("", "%v", err)
	}
	return v, nil
}
