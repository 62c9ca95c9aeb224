package native

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/qdrantjson"
	"github.com/memrank/memrank/rank"
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
//	 "mode": "off",                          // optional: off (the store's own answer) or auto (the
//	                                         // collection's mode), this request only
//	 "include_archived": true,               // optional: memories a person archived too, marked
//	 "count_access": false,                  // default true: false reads without counting accesses
//	 "at": "2026-06-01T00:00:00Z"}           // optional: answer as of this time (never counted)
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
	// IncludeArchived returns the memories a person or a review archived
	// (and others stored as not retrievable) too, marked archived
	// (docs/consolidation.md); superseded ones stay out.
	IncludeArchived bool
	// CountAccess counts the returned memories as accessed (the default).
	// False is for a person inspecting the ranking (the explain page):
	// their reads must not raise the access boost of what they look at.
	CountAccess bool
	// At, when not zero, asks for the answer as of that time (rank.AsOf):
	// freshness and tiers then, memories first observed later left out,
	// later supersessions not yet applied; never counted as an access.
	At time.Time
}

var retrieveFields = []string{"collection", "vector", "text", "using", "filter", "limit", "offset", "score_threshold", "explain", "with_payload", "mode", "include_archived", "count_access", "at"}

// DecodeRetrieveRequest parses and validates a /v1/retrieve body with the
// REST front's parser, so that a body that is not JSON, an unknown or
// repeated field and the filter are refused in the same words on both
// fronts. Errors are *qdrantjson.Error, meant for the caller ("Format error
// in JSON body: ..." for what is not the expected JSON, 422 "Validation
// error in JSON body: [...]" for values out of range); they never panic on
// any input.
func DecodeRetrieveRequest(body []byte) (*RetrieveRequest, error) {
	v, err := qdrantjson.ParseBody(body)
	if err != nil {
		return nil, err
	}
	o, err := qdrantjson.ReadObject(v, "", retrieveFields...)
	if err != nil {
		return nil, err
	}
	req := &RetrieveRequest{Limit: DefaultLimit, Explain: true, CountAccess: true, WithPayload: qdrant.NewWithPayload(true)}
	if err := req.decodeQuery(o); err != nil {
		return nil, err
	}
	if req.Filter, err = o.Filter("filter"); err != nil {
		return nil, err
	}
	if req.Limit, err = uintField(o, "limit", DefaultLimit, 1, MaxLimit); err != nil {
		return nil, err
	}
	if req.Offset, err = uintField(o, "offset", 0, 0, MaxOffset); err != nil {
		return nil, err
	}
	if req.ScoreThreshold, err = scoreThreshold(o); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"explain", &req.Explain}, {"include_archived", &req.IncludeArchived}, {"count_access", &req.CountAccess}} {
		if v, ok := o.Get(f.name); ok {
			if v.Kind != qdrantjson.KindBool {
				return nil, qdrantjson.FormatError(f.name, "want true or false")
			}
			*f.dst = v.Bool
		}
	}
	if pv, ok := o.Get("with_payload"); ok {
		if req.WithPayload, err = qdrantjson.WithPayload(pv, "with_payload"); err != nil {
			return nil, err
		}
	}
	if req.Mode, err = modeField(o); err != nil {
		return nil, err
	}
	if req.At, err = AtField(o, "at"); err != nil {
		return nil, err
	}
	return req, nil
}

// AtField reads an optional RFC 3339 time (absent or null: zero). A time
// that does not parse, or whose year is outside 1 to 9999, is a format
// error naming the field.
func AtField(o qdrantjson.Object, name string) (time.Time, error) {
	v, ok := o.Get(name)
	if !ok {
		return time.Time{}, nil
	}
	if v.Kind != qdrantjson.KindString {
		return time.Time{}, qdrantjson.FormatError(name, "want an RFC 3339 time, e.g. \"2026-06-01T00:00:00Z\"")
	}
	t, err := time.Parse(time.RFC3339Nano, v.Text)
	if err != nil || t.UTC().Year() < 1 || t.UTC().Year() > 9999 || t.IsZero() {
		return time.Time{}, qdrantjson.FormatError(name, "want an RFC 3339 time between years 1 and 9999, e.g. \"2026-06-01T00:00:00Z\"")
	}
	return t.UTC(), nil
}

// decodeQuery reads what is searched: the collection, the named vector,
// and a text or a vector.
func (req *RetrieveRequest) decodeQuery(o qdrantjson.Object) error {
	var err error
	if req.Collection, err = stringField(o, "collection"); err != nil {
		return err
	}
	if req.Collection == "" {
		return qdrantjson.ValidationError("collection", "required")
	}
	if req.Using, err = stringField(o, "using"); err != nil {
		return err
	}
	if o.Has("text") {
		if req.Text, err = stringField(o, "text"); err != nil {
			return err
		}
		req.HasText = true
		if strings.TrimSpace(req.Text) == "" {
			return qdrantjson.ValidationError("text", "must not be empty")
		}
	}
	if vv, ok := o.Get("vector"); ok {
		if req.Vector, err = queryVector(vv); err != nil {
			return err
		}
		if len(req.Vector) == 0 {
			return qdrantjson.ValidationError("vector", "must not be empty")
		}
	}
	switch {
	case req.HasText && req.Vector != nil:
		return qdrantjson.ValidationError("", "give either vector or text, not both")
	case !req.HasText && req.Vector == nil:
		return qdrantjson.ValidationError("", "vector or text: one is required")
	}
	return nil
}

// queryVector reads the query vector: an array of numbers within float32.
func queryVector(v qdrantjson.Value) ([]float32, error) {
	if v.Kind != qdrantjson.KindArray || v.Nums == nil && len(v.Elems) > 0 {
		return nil, qdrantjson.FormatError("vector", "want an array of numbers")
	}
	out := make([]float32, len(v.Nums))
	for i, n := range v.Nums {
		f, err := strconv.ParseFloat(n, 32)
		if err != nil {
			return nil, qdrantjson.FormatError("vector", "want an array of numbers: [%d]: %s is beyond float32's range", i, n)
		}
		out[i] = float32(f)
	}
	return out, nil
}

func scoreThreshold(o qdrantjson.Object) (*float32, error) {
	v, ok := o.Get("score_threshold")
	if !ok {
		return nil, nil
	}
	f, err := strconv.ParseFloat(v.Text, 64)
	if v.Kind != qdrantjson.KindNumber || err != nil || math.Abs(f) > math.MaxFloat32 {
		return nil, qdrantjson.FormatError("score_threshold", "want a number")
	}
	t := float32(f)
	return &t, nil
}

// modeField reads mode. A caller may ask for the store's own order, never
// for more than the operator configured: re-ranking a collection switched
// off writes access counts into it, shadowing one doubles the load on the
// store.
func modeField(o qdrantjson.Object) (rank.Mode, error) {
	m, err := stringField(o, "mode")
	if err != nil || !o.Has("mode") {
		return rank.ModeAuto, err
	}
	switch mode, err := rank.ParseMode(m); {
	case err != nil:
		return rank.ModeAuto, qdrantjson.ValidationError("mode", "%q is not one of auto, off", m)
	case mode != rank.ModeAuto && mode != rank.ModeOff:
		return rank.ModeAuto, qdrantjson.ValidationError("mode", "%q cannot be asked per request (auto or off); configure rank.collections instead", m)
	default:
		return mode, nil
	}
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

// stringField reads an optional string; absent or null is "".
func stringField(o qdrantjson.Object, name string) (string, error) {
	v, ok := o.Get(name)
	if !ok {
		return "", nil
	}
	if v.Kind != qdrantjson.KindString {
		return "", qdrantjson.FormatError(name, "want a string")
	}
	return v.Text, nil
}

// uintField reads a non-negative integer within [lo, hi]; absent or null is
// def. Numbers are read from their literal so that 1e30 or 2.5 are named as
// such instead of overflowing or truncating.
func uintField(o qdrantjson.Object, name string, def, lo, hi uint64) (uint64, error) {
	n, ok := o.Get(name)
	if !ok {
		return def, nil
	}
	if n.Kind != qdrantjson.KindNumber {
		return 0, qdrantjson.FormatError(name, "want an integer")
	}
	s := n.Text
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		// Out of range (negative, past u64, 1e30) is a validation error;
		// a fraction or 10.0 is not an integer.
		f, ferr := strconv.ParseFloat(s, 64)
		if (ferr == nil || math.IsInf(f, 0)) && f == math.Trunc(f) && (f < float64(lo) || f > float64(hi)) {
			return 0, qdrantjson.ValidationError(name, "must be between %d and %d, got %s", lo, hi, s)
		}
		return 0, qdrantjson.FormatError(name, "want an integer, got %s", s)
	}
	if v < lo || v > hi {
		return 0, qdrantjson.ValidationError(name, "must be between %d and %d, got %d", lo, hi, v)
	}
	return v, nil
}
