package native

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/qdrantjson"
)

// Writer is the write path as the native API uses it; *dedup.Engine
// satisfies it.
type Writer interface {
	Observe(ctx context.Context, obs dedup.Observation) (dedup.Outcome, error)
	Confirm(ctx context.Context, c dedup.Confirmation) (dedup.Outcome, error)
	Correct(ctx context.Context, obs dedup.Observation) (dedup.Outcome, error)
}

// Inspector reads what the write path stored; *dedup.Engine satisfies it.
type Inspector interface {
	Memory(ctx context.Context, collection, tenant, id string) (dedup.MemoryView, error)
	Stats(ctx context.Context, collection, tenant string) (dedup.Stats, error)
	ScanStats(ctx context.Context, collection, tenant string) (dedup.Stats, error)
}

var (
	_ Writer    = (*dedup.Engine)(nil)
	_ Inspector = (*dedup.Engine)(nil)
)

// observeFields are the keys of an observe body, in the order they are
// documented and encoded.
var observeFields = []string{
	"collection", "text", "memory_type", "source", "extractor_model", "extractor_logprob", "grounding",
	"session_id", "turn_id", "observed_at", "modality", "entities", "decay_category", "vector",
	"observation_id", "corrects", "attribution", "speaker",
}

var confirmFields = []string{"collection", "observation_id", "session_id", "turn_id", "at"}

// DecodeObserveRequest reads one POST /v1/observe body (also one line of
// `memrank import`) into the write path's observation:
//
//	{"collection": "memories", "text": "Dana uses Neovim",
//	 "memory_type": "preference", "source": "direct",
//	 "extractor_model": "gpt-4o", "extractor_logprob": -0.12,   // optional
//	 "grounding": "supported", "session_id": "s1", "turn_id": "t4",
//	 "observed_at": "2026-05-01T12:00:00Z",                     // optional, RFC 3339; default now
//	 "modality": "chat", "entities": ["Dana", "Neovim"],       // optional
//	 "decay_category": "preference", "vector": [0.1, ...],     // optional
//	 "observation_id": "obs-123", "corrects": "<memory id>",   // optional
//	 "speaker": "Dana"}                                          // optional: who said it
//
// The body is parsed by the same JSON parser as every other body memrank
// reads (qdrantjson). Decoding is strict: an unknown or repeated key, a
// value of the wrong type, a number beyond float64 (float32 in the vector)
// or a malformed time is refused. The rules on the values (lengths, a
// blank text, levels, ...) are the write path's: dedup.Observation.Validate,
// which the engine applies and callers without one apply themselves. The
// error is a *dedup.InputError naming the field ("body" when the JSON
// itself is at fault), and its text is safe to show the caller. Collection
// may be absent: the caller supplies one (import's --collection) or
// refuses. Tenant is never read from the body.
func DecodeObserveRequest(data []byte) (dedup.Observation, error) {
	var obs dedup.Observation
	err := decodeObject(data, observeFields, func(key string, v qdrantjson.Value) error {
		var err error
		switch key {
		case "collection":
			obs.Collection, err = jsonString(key, v)
		case "text":
			obs.Text, err = jsonString(key, v)
		case "memory_type":
			obs.MemoryType, err = jsonString(key, v)
		case "source":
			obs.Source, err = jsonString(key, v)
		case "extractor_model":
			obs.ExtractorModel, err = jsonString(key, v)
		case "extractor_logprob":
			obs.ExtractorLogprob, err = logprobField(v)
		case "grounding":
			obs.Grounding, err = jsonString(key, v)
		case "session_id":
			obs.SessionID, err = jsonString(key, v)
		case "turn_id":
			obs.TurnID, err = jsonString(key, v)
		case "observed_at":
			obs.ObservedAt, err = timeField(key, v)
		case "modality":
			obs.Modality, err = jsonString(key, v)
		case "entities":
			obs.Entities, err = entitiesField(v)
		case "decay_category":
			obs.DecayCategory, err = jsonString(key, v)
		case "vector":
			obs.Vector, err = vectorField(v)
		case "observation_id":
			obs.ObservationID, err = jsonString(key, v)
		case "corrects":
			obs.Corrects, err = idField(key, v)
		case "attribution":
			obs.Attribution, err = jsonString(key, v)
		case "speaker":
			obs.Speaker, err = jsonString(key, v)
		}
		return err
	})
	if err != nil {
		return dedup.Observation{}, err
	}
	return obs, nil
}

// EncodeObserveRequest is the POST /v1/observe body of obs (Tenant left
// out: it travels with the request's credentials). DecodeObserveRequest
// reads it back as obs. A non-finite logprob or vector element has no JSON
// form and is refused.
func EncodeObserveRequest(obs dedup.Observation) ([]byte, error) {
	b := []byte{'{'}
	key := func(k string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = qdrantjson.AppendString(b, k)
		b = append(b, ':')
	}
	str := func(k, v string) {
		if v != "" {
			key(k)
			b = qdrantjson.AppendString(b, v)
		}
	}
	str("collection", obs.Collection)
	key("text")
	b = qdrantjson.AppendString(b, obs.Text)
	str("memory_type", obs.MemoryType)
	str("source", obs.Source)
	str("extractor_model", obs.ExtractorModel)
	if lp := obs.ExtractorLogprob; lp != nil {
		if math.IsNaN(*lp) || math.IsInf(*lp, 0) {
			return nil, fmt.Errorf("native: encoding extractor_logprob: %v has no JSON form", *lp)
		}
		key("extractor_logprob")
		b = qdrantjson.AppendFloat64(b, *lp)
	}
	str("grounding", obs.Grounding)
	str("session_id", obs.SessionID)
	str("turn_id", obs.TurnID)
	if !obs.ObservedAt.IsZero() {
		str("observed_at", obs.ObservedAt.Format(time.RFC3339Nano))
	}
	str("modality", obs.Modality)
	if obs.Entities != nil {
		key("entities")
		b = append(b, '[')
		for i, e := range obs.Entities {
			if i > 0 {
				b = append(b, ',')
			}
			b = qdrantjson.AppendString(b, e)
		}
		b = append(b, ']')
	}
	str("decay_category", obs.DecayCategory)
	if obs.Vector != nil {
		key("vector")
		b = append(b, '[')
		for i, x := range obs.Vector {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("native: encoding vector[%d]: %v has no JSON form", i, x)
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = qdrantjson.AppendFloat32(b, x)
		}
		b = append(b, ']')
	}
	str("observation_id", obs.ObservationID)
	str("corrects", obs.Corrects)
	str("attribution", obs.Attribution)
	str("speaker", obs.Speaker)
	return append(b, '}'), nil
}

// decodeConfirm reads a POST /v1/memories/{id}/confirm body; its rules are
// dedup.Confirmation.Validate's.
func decodeConfirm(data []byte) (dedup.Confirmation, error) {
	var c dedup.Confirmation
	err := decodeObject(data, confirmFields, func(key string, v qdrantjson.Value) error {
		var err error
		switch key {
		case "collection":
			c.Collection, err = jsonString(key, v)
		case "observation_id":
			c.ObservationID, err = jsonString(key, v)
		case "session_id":
			c.SessionID, err = jsonString(key, v)
		case "turn_id":
			c.TurnID, err = jsonString(key, v)
		case "at":
			c.At, err = timeField(key, v)
		}
		return err
	})
	if err != nil {
		return dedup.Confirmation{}, err
	}
	return c, nil
}

func inputError(field, format string, args ...any) *dedup.InputError {
	return &dedup.InputError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// decodeObject parses one JSON object with qdrantjson and hands each known
// key's value to field, in order. Keys match exactly (no case folding), a
// repeated key is refused rather than silently overwritten, and null counts
// as absent.
func decodeObject(data []byte, known []string, field func(key string, v qdrantjson.Value) error) error {
	if !utf8.Valid(data) {
		return badBody(data, "not valid UTF-8")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return badBody(data, "empty")
	}
	v, err := qdrantjson.Parse(string(data))
	if err != nil {
		var se *qdrantjson.SyntaxError
		if errors.As(err, &se) && strings.HasPrefix(se.Msg, "EOF while parsing") {
			return badBody(data, "the JSON ends in the middle of a value (%v)", err)
		}
		return badBody(data, "invalid JSON: %v", err)
	}
	if v.Kind != qdrantjson.KindObject {
		return &bodyError{InputError: inputError("body", "want a JSON object, got %s", kindName(v)), answer: qdrantjson.TypeError("", v, "a map")}
	}
	seen := make(map[string]bool, len(known))
	for _, m := range v.Members {
		if !slices.Contains(known, m.Key) {
			return inputError(unknownKey(m.Key), "unknown field (known: %s)", strings.Join(known, ", "))
		}
		if seen[m.Key] {
			return inputError(m.Key, "given twice")
		}
		seen[m.Key] = true
		if m.Val.Kind == qdrantjson.KindNull {
			continue
		}
		if err := field(m.Key, m.Val); err != nil {
			return err
		}
	}
	return nil
}

// bodyError is a body that is not one JSON object. Its text is the
// InputError's, which observe and import print per line; over HTTP it is
// answered as /v1/retrieve and the REST front answer the same body, in
// Qdrant's words ("Format error in JSON body: ..."), so that every /v1
// route words a bad body alike.
type bodyError struct {
	*dedup.InputError
	answer *qdrantjson.Error
}

func (e *bodyError) Unwrap() error { return e.InputError }

// badBody is a bodyError for data that does not parse, answered with the
// parser's own refusal of it.
func badBody(data []byte, format string, args ...any) error {
	_, err := qdrantjson.ParseBody(data)
	answer, ok := errors.AsType[*qdrantjson.Error](err)
	if !ok {
		answer = qdrantjson.FormatError("", format, args...)
	}
	return &bodyError{InputError: inputError("body", format, args...), answer: answer}
}

// unknownKey is how an unknown key is named in an error: as it is when it
// looks like a key, quoted and cut to 64 bytes when it does not.
func unknownKey(key string) string {
	plain := key != "" && len(key) <= 64
	for _, r := range key {
		if !unicode.IsPrint(r) || r == '"' {
			plain = false
			break
		}
	}
	if plain {
		return key
	}
	if len(key) > 64 {
		key = strings.ToValidUTF8(key[:64], "") + "..."
	}
	return strconv.Quote(key)
}

// kindName names a JSON value's kind for "want X, got Y" errors.
func kindName(v qdrantjson.Value) string {
	switch v.Kind {
	case qdrantjson.KindString:
		return "a string"
	case qdrantjson.KindObject:
		return "an object"
	case qdrantjson.KindArray:
		return "an array"
	case qdrantjson.KindBool:
		return "a boolean"
	case qdrantjson.KindNumber:
		return "a number"
	}
	return "null"
}

func jsonString(key string, v qdrantjson.Value) (string, error) {
	if v.Kind != qdrantjson.KindString {
		return "", inputError(key, "want a string, got %s", kindName(v))
	}
	return v.Text, nil
}

// logprobField reads a number. One beyond float64 is refused here: it has
// no value to hand on (the write path refuses non-finite ones too).
func logprobField(v qdrantjson.Value) (*float64, error) {
	const key = "extractor_logprob"
	if v.Kind != qdrantjson.KindNumber {
		return nil, inputError(key, "want a number, got %s", kindName(v))
	}
	f, err := strconv.ParseFloat(v.Text, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, inputError(key, "want a finite number, got %s", v.Text)
	}
	return &f, nil
}

func timeField(key string, v qdrantjson.Value) (time.Time, error) {
	s, err := jsonString(key, v)
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, inputError(key, "want an RFC 3339 time such as 2026-05-01T12:00:00Z, got %.80q", s)
	}
	return t, nil
}

func entitiesField(v qdrantjson.Value) ([]string, error) {
	const key = "entities"
	if v.Kind != qdrantjson.KindArray {
		return nil, inputError(key, "want an array of strings, got %s", kindName(v))
	}
	items := v.Items()
	out := make([]string, len(items))
	for i, e := range items {
		s, err := jsonString(qdrantjson.Index(key, i), e)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// vectorField reads the caller's embedding: numbers within float32. The
// parser keeps an all-number array as its literals, so this is one
// ParseFloat per element.
func vectorField(v qdrantjson.Value) ([]float32, error) {
	const key = "vector"
	if v.Kind != qdrantjson.KindArray {
		return nil, inputError(key, "want an array of numbers, got %s", kindName(v))
	}
	if v.Nums == nil {
		for i, e := range v.Elems { // not all numbers: name the first that is not
			if e.Kind != qdrantjson.KindNumber {
				return nil, inputError(qdrantjson.Index(key, i), "want a number, got %s", kindName(e))
			}
		}
		return []float32{}, nil // an empty array
	}
	out := make([]float32, len(v.Nums))
	for i, n := range v.Nums {
		f, err := strconv.ParseFloat(n, 32)
		if err != nil {
			return nil, inputError(qdrantjson.Index(key, i), "%s is beyond float32's range", n)
		}
		out[i] = float32(f)
	}
	return out, nil
}

// idField reads a memory id, which Qdrant writes as a string (a UUID) or a
// number (an unsigned integer). A number is handed on as its literal, for
// the write path's rule (dedup.CheckMemoryID) to judge.
func idField(key string, v qdrantjson.Value) (string, error) {
	switch v.Kind {
	case qdrantjson.KindString:
		return v.Text, nil
	case qdrantjson.KindNumber:
		return v.Text, nil
	}
	return "", inputError(key, "want a memory id (a UUID string or an unsigned integer), got %s", kindName(v))
}

// OutcomeResponse is the answer of POST /v1/observe, /v1/memories/{id}/confirm
// and /v1/memories/{id}/correct in Qdrant's envelope, for clients to decode
// (the server writes the envelope with qdrantjson.WriteResult).
type OutcomeResponse struct {
	Result dedup.Outcome `json:"result"`
	Status string        `json:"status"`
	Time   float64       `json:"time"`
}

// errWriteOff and errInspectOff answer the write routes of a server built
// without a write path.
var (
	errWriteOff   = qdrantjson.Errorf(qdrantjson.ClassNotImplemented, "the write path is not configured on this server")
	errInspectOff = qdrantjson.Errorf(qdrantjson.ClassNotImplemented, "the write path is not configured on this server, so there are no memories or stats to read")
)

// writeContext is the context of one write-path call: the caller's
// credentials, a deadline, and the tenant when tenancy is on.
func (s *Service) writeContext(r *http.Request) (context.Context, context.CancelFunc, string, error) {
	tenant, err := s.cfg.Tenancy.Tenant(headerMetadata(r.Header))
	if err != nil {
		return nil, nil, "", err
	}
	ctx := s.cfg.AuthContext(r.Context(), r)
	cancel := context.CancelFunc(func() {})
	if _, ok := ctx.Deadline(); !ok {
		ctx, cancel = context.WithTimeout(ctx, s.cfg.RequestTimeout)
	}
	return ctx, cancel, tenant, nil
}

// pathID is the {id} of a /v1/memories route, checked by the write path's
// rule here, so that a bad id in the path of a correction is named id, not
// corrects.
func pathID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if err := dedup.CheckMemoryID("id", id); err != nil {
		return "", err
	}
	return id, nil
}

// queryCollection reads ?collection=C, the only parameter of the GET routes.
func queryCollection(r *http.Request) (string, error) {
	q, err := queryParams(r, "collection")
	if err != nil {
		return "", err
	}
	if q["collection"] == "" {
		return "", errNoCollection
	}
	return q["collection"], nil // its rules are the write path's
}

func (s *Service) serveObserve(w http.ResponseWriter, r *http.Request) {
	s.serveWrite(w, r, "observe", func(ctx context.Context, body []byte, tenant string) (dedup.Outcome, error) {
		obs, err := DecodeObserveRequest(body)
		if err != nil {
			return dedup.Outcome{}, err
		}
		if err := idempotencyKey(r, &obs.ObservationID); err != nil {
			return dedup.Outcome{}, err
		}
		obs.Tenant = tenant
		setWriteAttrs(ctx, obs.Collection)
		return s.cfg.Writer.Observe(ctx, obs)
	})
}

func (s *Service) serveConfirm(w http.ResponseWriter, r *http.Request) {
	s.serveWrite(w, r, "confirm", func(ctx context.Context, body []byte, tenant string) (dedup.Outcome, error) {
		id, err := pathID(r)
		if err != nil {
			return dedup.Outcome{}, err
		}
		c, err := decodeConfirm(body)
		if err != nil {
			return dedup.Outcome{}, err
		}
		if err := idempotencyKey(r, &c.ObservationID); err != nil {
			return dedup.Outcome{}, err
		}
		c.Tenant, c.MemoryID = tenant, id
		setWriteAttrs(ctx, c.Collection)
		return s.cfg.Writer.Confirm(ctx, c)
	})
}

func (s *Service) serveCorrect(w http.ResponseWriter, r *http.Request) {
	s.serveWrite(w, r, "correct", func(ctx context.Context, body []byte, tenant string) (dedup.Outcome, error) {
		id, err := pathID(r)
		if err != nil {
			return dedup.Outcome{}, err
		}
		obs, err := DecodeObserveRequest(body)
		if err != nil {
			return dedup.Outcome{}, err
		}
		if err := idempotencyKey(r, &obs.ObservationID); err != nil {
			return dedup.Outcome{}, err
		}
		if obs.Corrects != "" && obs.Corrects != id {
			return dedup.Outcome{}, inputError("corrects", "names %.80q, but the path corrects %q (leave it out)", obs.Corrects, id)
		}
		obs.Tenant, obs.Corrects = tenant, id
		setWriteAttrs(ctx, obs.Collection)
		return s.cfg.Writer.Correct(ctx, obs)
	})
}

// idempotencyKey applies the Idempotency-Key header: it is the observation
// id of a body that gives none, so that a client's retry of a write whose
// answer it lost is answered from the first (replayed) instead of counted
// twice.
func idempotencyKey(r *http.Request, id *string) error {
	vals := r.Header.Values("Idempotency-Key")
	switch {
	case len(vals) == 0:
		return nil
	case len(vals) > 1:
		return inputError("Idempotency-Key", "given twice")
	case *id != "" && *id != vals[0]:
		return inputError("Idempotency-Key", "differs from the body's observation_id (give one of them)")
	}
	*id = vals[0]
	return nil
}

// setWriteAttrs names the collection on the request's span. A name longer
// than any collection's is left out: the write path refuses it, and the
// body it came in may be megabytes long.
func setWriteAttrs(ctx context.Context, collection string) {
	if len(collection) <= dedup.MaxCollectionBytes {
		trace.SpanFromContext(ctx).SetAttributes(attribute.String("db.collection.name", collection))
	}
}

// serveWrite is what the three write routes share: method, configuration,
// body, tenancy, deadline, the answer.
func (s *Service) serveWrite(w http.ResponseWriter, r *http.Request, op string,
	call func(ctx context.Context, body []byte, tenant string) (dedup.Outcome, error)) {
	start := time.Now()
	if !allow(w, r, http.MethodPost) {
		return
	}
	if s.cfg.Writer == nil {
		s.fail(w, r, start, op, errWriteOff)
		return
	}
	body, err := qdrantjson.ReadBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	ctx, cancel, tenant, err := s.writeContext(r)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	defer cancel()
	out, err := call(ctx, body, tenant)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	trace.SpanFromContext(ctx).SetAttributes(
		attribute.String("memrank.decision", string(out.Decision)),
		attribute.Int("memrank.dedup.tier", out.Tier),
		attribute.Bool("memrank.replayed", out.Replayed),
	)
	s.answer(w, r, start, op, out)
}

func (s *Service) serveMemory(w http.ResponseWriter, r *http.Request) {
	const op = "memory"
	start, ok := s.begin(w, r, op, http.MethodGet, offUnless(s.cfg.Inspector != nil, errInspectOff))
	if !ok {
		return
	}
	id, err := pathID(r)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	collection, err := queryCollection(r)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	respond(s, w, r, start, op, collection, func(ctx context.Context, tenant string) (dedup.MemoryView, error) {
		return s.cfg.Inspector.Memory(ctx, collection, tenant, id)
	})
}

func (s *Service) serveStats(w http.ResponseWriter, r *http.Request) {
	const op = "stats"
	start, ok := s.begin(w, r, op, http.MethodGet, offUnless(s.cfg.Inspector != nil, errInspectOff))
	if !ok {
		return
	}
	collection, exact, err := statsQuery(r)
	if err != nil {
		s.fail(w, r, start, op, err)
		return
	}
	respond(s, w, r, start, op, collection, func(ctx context.Context, tenant string) (dedup.Stats, error) {
		st, err := s.stats(ctx, collection, tenant, exact)
		if st.Collection == "" {
			st.Collection = collection
		}
		return st, err
	})
}

// answer writes a 200 with result in Qdrant's envelope. The write path's
// results are written by their own MarshalJSON (dedup.Outcome,
// dedup.MemoryView, dedup.Stats).
func (s *Service) answer(w http.ResponseWriter, r *http.Request, start time.Time, op string, result any) {
	b, err := encode(result)
	if err != nil {
		s.fail(w, r, start, op, fmt.Errorf("native: encoding the %s response: %w", op, err))
		return
	}
	qdrantjson.WriteResult(w, start, b)
}
