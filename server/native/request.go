package native

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/server/restapi"
)

// Request limits.
const (
	DefaultLimit = 10
	MaxLimit     = 1000
	MaxOffset    = 100000
)

// RetrieveRequest is the body of POST /v1/retrieve:
//
//	{"collection": "memories",
//	 "text": "what editor does Dana use",   // or "vector": [0.1, ...], not both
//	 "using": "dense",                       // optional: the named vector to search
//	 "filter": {"must": [...]},              // optional: Qdrant REST filter JSON
//	 "limit": 10, "offset": 0,               // limit 1..1000 (default 10)
//	 "score_threshold": 0.2,                 // optional: on the similarity, as Qdrant applies it
//	 "explain": true,                        // default true: every factor per result
//	 "with_payload": true,                   // default true; or a list of keys to include
//	 "mode": "off"}                          // optional: off (the store's own answer) or auto (the
//	                                         // collection's mode), this request only
type RetrieveRequest struct {
	Collection     string
	Vector         []float32 // set when the caller sent a vector
	Text           string    // set when the caller sent a text (HasText)
	HasText        bool
	Using          string
	Filter         *qdrant.Filter
	Limit          uint64
	Offset         uint64
	ScoreThreshold *float32
	Explain        bool
	WithPayload    *qdrant.WithPayloadSelector
	// Mode replaces the collection's read-path mode for this request
	// (rank.ModeAuto: the configured one).
	Mode rank.Mode
}

// requestError is a refusal of the caller's input, answered with its status
// and message as they are.
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func formatError(format string, args ...any) error {
	return &requestError{400, "Format error in JSON body: " + fmt.Sprintf(format, args...)}
}

func validationError(format string, args ...any) error {
	return &requestError{400, "Validation error in JSON body: [" + fmt.Sprintf(format, args...) + "]"}
}

// wireRequest is the JSON shape; every field is raw so that each can be
// checked and named in errors on its own.
type wireRequest struct {
	Collection     json.RawMessage `json:"collection"`
	Vector         json.RawMessage `json:"vector"`
	Text           json.RawMessage `json:"text"`
	Using          json.RawMessage `json:"using"`
	Filter         json.RawMessage `json:"filter"`
	Limit          json.RawMessage `json:"limit"`
	Offset         json.RawMessage `json:"offset"`
	ScoreThreshold json.RawMessage `json:"score_threshold"`
	Explain        json.RawMessage `json:"explain"`
	WithPayload    json.RawMessage `json:"with_payload"`
	Mode           json.RawMessage `json:"mode"`
}

// DecodeRetrieveRequest parses and validates a /v1/retrieve body. Errors
// are Qdrant-style texts meant for the caller ("Format error in JSON body:
// ..." for what is not the expected JSON, "Validation error in JSON body:
// [...]" for values out of range); they never panic on any input.
func DecodeRetrieveRequest(body []byte) (*RetrieveRequest, error) {
	if !utf8.Valid(body) {
		return nil, formatError("the body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var w wireRequest
	if err := dec.Decode(&w); err != nil {
		return nil, formatError("%s", jsonError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, formatError("trailing data after the JSON object")
	}

	req := &RetrieveRequest{Limit: DefaultLimit, Explain: true, WithPayload: qdrant.NewWithPayload(true)}
	var err error
	if req.Collection, err = stringField("collection", w.Collection); err != nil {
		return nil, err
	}
	if req.Collection == "" {
		return nil, validationError("collection: required")
	}
	if req.Using, err = stringField("using", w.Using); err != nil {
		return nil, err
	}
	if !isNull(w.Text) {
		if req.Text, err = stringField("text", w.Text); err != nil {
			return nil, err
		}
		req.HasText = true
		if strings.TrimSpace(req.Text) == "" {
			return nil, validationError("text: must not be empty")
		}
	}
	if !isNull(w.Vector) {
		if req.Vector, err = parseVector(w.Vector); err != nil {
			return nil, err
		}
		if len(req.Vector) == 0 {
			return nil, validationError("vector: must not be empty")
		}
	}
	switch {
	case req.HasText && req.Vector != nil:
		return nil, validationError("give either vector or text, not both")
	case !req.HasText && req.Vector == nil:
		return nil, validationError("vector or text: one is required")
	}
	if req.Filter, err = restapi.DecodeFilter(w.Filter); err != nil {
		msg := err.Error()
		if !strings.Contains(msg, "JSON body") {
			msg = "Format error in JSON body: filter: " + msg
		}
		return nil, &requestError{400, msg}
	}
	if req.Limit, err = uintField("limit", w.Limit, DefaultLimit, 1, MaxLimit); err != nil {
		return nil, err
	}
	if req.Offset, err = uintField("offset", w.Offset, 0, 0, MaxOffset); err != nil {
		return nil, err
	}
	if !isNull(w.ScoreThreshold) {
		var f float64
		if err := json.Unmarshal(w.ScoreThreshold, &f); err != nil || math.IsNaN(f) || math.Abs(f) > math.MaxFloat32 {
			return nil, formatError("score_threshold: want a number")
		}
		t := float32(f)
		req.ScoreThreshold = &t
	}
	if !isNull(w.Explain) {
		if err := json.Unmarshal(w.Explain, &req.Explain); err != nil {
			return nil, formatError("explain: want true or false")
		}
	}
	if !isNull(w.WithPayload) {
		if req.WithPayload, err = payloadSelector(w.WithPayload); err != nil {
			return nil, err
		}
	}
	if !isNull(w.Mode) {
		m, err := stringField("mode", w.Mode)
		if err != nil {
			return nil, err
		}
		// A caller may ask for the store's own order, never for more than the
		// operator configured: re-ranking a collection switched off writes
		// access counts into it, shadowing one doubles the load on the store.
		switch req.Mode, err = rank.ParseMode(m); {
		case err != nil:
			return nil, validationError("mode: %q is not one of auto, off", m)
		case req.Mode != rank.ModeAuto && req.Mode != rank.ModeOff:
			return nil, validationError("mode: %q cannot be asked per request (auto or off); configure rank.collections instead", m)
		}
	}
	return req, nil
}

// Query is the request as the ranker takes it. vector is the query vector
// (the caller's, or the text's embedding).
func (r *RetrieveRequest) Query(vector []float32, filter *qdrant.Filter) *qdrant.QueryPoints {
	q := &qdrant.QueryPoints{
		CollectionName: r.Collection,
		Query:          qdrant.NewQueryDense(vector),
		Filter:         filter,
		Limit:          qdrant.PtrOf(r.Limit),
		WithPayload:    r.WithPayload,
		ScoreThreshold: r.ScoreThreshold,
	}
	if r.Offset > 0 {
		q.Offset = qdrant.PtrOf(r.Offset)
	}
	if r.Using != "" {
		q.Using = qdrant.PtrOf(r.Using)
	}
	return q
}

// parseVector reads a JSON array of numbers as float32s. raw is valid JSON
// (the decoder checked it), so an array whose comma-separated pieces all
// parse as numbers is exactly that; anything else (nested values, strings,
// numbers beyond float32) goes through encoding/json for its error. This
// halves the cost of a 384-float query vector.
func parseVector(raw json.RawMessage) ([]float32, error) {
	b := bytes.TrimSpace(raw)
	if len(b) >= 2 && b[0] == '[' && b[len(b)-1] == ']' {
		inner := bytes.TrimSpace(b[1 : len(b)-1])
		if len(inner) == 0 {
			return []float32{}, nil
		}
		out := make([]float32, 0, bytes.Count(inner, []byte{','})+1)
		ok := true
		for piece := range bytes.SplitSeq(inner, []byte{','}) {
			piece = bytes.TrimSpace(piece)
			if len(piece) == 0 || piece[0] != '-' && (piece[0] < '0' || piece[0] > '9') {
				ok = false
				break
			}
			f, err := strconv.ParseFloat(string(piece), 32)
			if err != nil {
				ok = false
				break
			}
			out = append(out, float32(f))
		}
		if ok {
			return out, nil
		}
	}
	var v []float32
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, formatError("vector: want an array of numbers: %s", jsonError(err))
	}
	return v, nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

func stringField(name string, raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", formatError("%s: want a string", name)
	}
	return s, nil
}

// uintField reads a non-negative integer within [lo, hi]; absent or null is
// def. Numbers are read from their text so that 1e30 or 2.5 are named as
// such instead of overflowing or truncating.
func uintField(name string, raw json.RawMessage, def, lo, hi uint64) (uint64, error) {
	if isNull(raw) {
		return def, nil
	}
	var n json.Number
	// json.Number also takes a quoted number ("10"); Qdrant does not.
	if raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
		return 0, formatError("%s: want an integer", name)
	}
	s := n.String()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		// Negative, beyond u64, or not whole.
		// Out of range (negative, past u64, 1e30) is a validation error;
		// a fraction or 10.0 is not an integer.
		f, ferr := strconv.ParseFloat(s, 64)
		if (ferr == nil || math.IsInf(f, 0)) && f == math.Trunc(f) && (f < float64(lo) || f > float64(hi)) {
			return 0, validationError("%s: must be between %d and %d, got %s", name, lo, hi, s)
		}
		return 0, formatError("%s: want an integer, got %s", name, s)
	}
	if v < lo || v > hi {
		return 0, validationError("%s: must be between %d and %d, got %d", name, lo, hi, v)
	}
	return v, nil
}

// payloadSelector reads with_payload: true, false, or a list of keys to
// include (Qdrant's REST forms; {"include": [...]} and {"exclude": [...]}
// too).
func payloadSelector(raw json.RawMessage) (*qdrant.WithPayloadSelector, error) {
	var b bool
	if err := json.Unmarshal(raw, &b); err == nil {
		return qdrant.NewWithPayload(b), nil
	}
	var keys []string
	if err := json.Unmarshal(raw, &keys); err == nil {
		return qdrant.NewWithPayloadInclude(keys...), nil
	}
	var obj struct {
		Include []string `json:"include"`
		Exclude []string `json:"exclude"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err == nil && (obj.Include == nil) != (obj.Exclude == nil) {
		if obj.Include != nil {
			return qdrant.NewWithPayloadInclude(obj.Include...), nil
		}
		return qdrant.NewWithPayloadExclude(obj.Exclude...), nil
	}
	return nil, formatError(`with_payload: want true, false, a list of keys, {"include": [...]} or {"exclude": [...]}`)
}

// jsonError rewrites encoding/json's errors without Go type names.
func jsonError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return "the body is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends in the middle of a value"
	case errors.As(err, &se):
		return fmt.Sprintf("%s at byte %d", strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return fmt.Sprintf("want a JSON object, got %s", te.Value)
		}
		return fmt.Sprintf("%s: unexpected %s", field, te.Value)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
		return "unknown field " + f + " (known: collection, vector, text, using, filter, limit, offset, score_threshold, explain, with_payload)"
	}
	return msg
}
