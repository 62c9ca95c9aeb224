package dedup

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/memrank/memrank/qdrantjson"
)

// The write path's results are what the native API answers (POST
// /v1/observe, GET /v1/memories/{id}, GET /v1/stats) and what memrank
// observe --output json prints. They are written by hand, member by member,
// for what struct tags cannot say: members in the documented order, floats
// in their shortest form and null when they are not finite (JSON has no NaN),
// maps that are {} rather than null, times in RFC 3339. Strings are escaped
// as encoding/json escapes them, HTML characters left to the encoder that
// calls these methods (the native API does not escape them). The json tags
// on Outcome and JudgeInfo are for reading an outcome back (UnmarshalJSON).

// MarshalJSON implements json.Marshaler.
func (o Outcome) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 256)
	b = append(b, `{"decision":`...)
	b = qdrantjson.AppendString(b, string(o.Decision))
	b = append(b, `,"memory_id":`...)
	b = qdrantjson.AppendString(b, o.MemoryID)
	b = append(b, `,"confidence":`...)
	b = appendFloat(b, o.Confidence)
	b = append(b, `,"observations":`...)
	b = strconv.AppendInt(b, int64(o.Observations), 10)
	b = append(b, `,"dedup_tier":`...)
	b = strconv.AppendInt(b, int64(o.Tier), 10)
	b = append(b, `,"judge":`...)
	b = appendJudge(b, o.Judge)
	if o.Superseded != "" {
		b = append(b, `,"superseded":`...)
		b = qdrantjson.AppendString(b, o.Superseded)
	}
	if o.Contradicts != "" {
		b = append(b, `,"contradicts":`...)
		b = qdrantjson.AppendString(b, o.Contradicts)
	}
	if len(o.Merged) > 0 {
		b = append(b, `,"merged":[`...)
		for i, id := range o.Merged {
			if i > 0 {
				b = append(b, ',')
			}
			b = qdrantjson.AppendString(b, id)
		}
		b = append(b, ']')
	}
	if o.Reason != "" {
		b = append(b, `,"reason":`...)
		b = qdrantjson.AppendString(b, o.Reason)
	}
	b = appendEvidence(b, &o)
	b = append(b, `,"replayed":`...)
	b = strconv.AppendBool(b, o.Replayed)
	if o.AlreadyCounted {
		b = append(b, `,"already_counted":true`...)
	}
	if o.CreatedCollection {
		b = append(b, `,"created_collection":true`...)
	}
	return append(b, '}'), nil
}

// appendEvidence appends the members the evidence rules add to an outcome,
// each only when it has something to say.
func appendEvidence(b []byte, o *Outcome) []byte {
	if a := o.Attribution; a != nil {
		b = append(b, `,"attribution":{"attribution":`...)
		b = qdrantjson.AppendString(b, a.Attribution)
		b = append(b, `,"from":`...)
		b = qdrantjson.AppendString(b, a.From)
		if a.Cue != "" {
			b = append(b, `,"cue":`...)
			b = qdrantjson.AppendString(b, a.Cue)
		}
		b = append(b, `,"capped":`...)
		b = strconv.AppendBool(b, a.Capped)
		if a.SourceGiven != "" {
			b = append(b, `,"source":`...)
			b = qdrantjson.AppendString(b, a.SourceGiven)
		}
		b = append(b, '}')
	}
	if len(o.Flags) > 0 {
		b = append(b, `,"flags":[`...)
		for i, f := range o.Flags {
			if i > 0 {
				b = append(b, ',')
			}
			b = qdrantjson.AppendString(b, f)
		}
		b = append(b, ']')
	}
	if o.Uses > 0 {
		b = append(b, `,"uses":`...)
		b = strconv.AppendInt(b, int64(o.Uses), 10)
	}
	if len(o.Warnings) > 0 {
		b = append(b, `,"warnings":[`...)
		for i, w := range o.Warnings {
			if i > 0 {
				b = append(b, ',')
			}
			b = qdrantjson.AppendString(b, w)
		}
		b = append(b, ']')
	}
	return b
}

// UnmarshalJSON implements json.Unmarshaler: it reads what MarshalJSON
// writes, a null confidence as +Inf.
func (o *Outcome) UnmarshalJSON(data []byte) error {
	type tagged Outcome // the fields and their tags, without these methods
	var v struct {
		tagged
		Confidence json.RawMessage `json:"confidence"` // shadows tagged's: it may be null
		OldTier    *int            `json:"tier"`       // outcomes audited before dedup_tier
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*o = Outcome(v.tagged)
	if v.OldTier != nil && o.Tier == 0 {
		o.Tier = *v.OldTier
	}
	switch c := string(v.Confidence); c {
	case "":
	case "null":
		o.Confidence = math.Inf(1)
	default:
		f, err := strconv.ParseFloat(c, 64)
		if err != nil {
			return errors.New("dedup: an outcome's confidence is not a number")
		}
		o.Confidence = f
	}
	return nil
}

// appendJudge appends j, null when there is none.
func appendJudge(b []byte, j *JudgeInfo) []byte {
	if j == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"verdict":`...)
	b = qdrantjson.AppendString(b, j.Verdict)
	b = append(b, `,"cached":`...)
	b = strconv.AppendBool(b, j.Cached)
	if j.Reason != "" {
		b = append(b, `,"reason":`...)
		b = qdrantjson.AppendString(b, j.Reason)
	}
	if j.Fallback != "" {
		b = append(b, `,"fallback":`...)
		b = qdrantjson.AppendString(b, j.Fallback)
	}
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler. An empty payload is written as
// {}; one that is not JSON is an error, not an answer with a broken
// member.
func (v MemoryView) MarshalJSON() ([]byte, error) {
	payload := v.Payload
	if len(bytes.TrimSpace(payload)) == 0 {
		payload = []byte("{}")
	} else if !json.Valid(payload) {
		return nil, errors.New("dedup: the stored payload is not valid JSON")
	}
	b := make([]byte, 0, 128+len(payload)+len(v.Audit)*400)
	b = append(b, `{"id":`...)
	b = qdrantjson.AppendString(b, v.ID)
	b = append(b, `,"collection":`...)
	b = qdrantjson.AppendString(b, v.Collection)
	b = append(b, `,"payload":`...)
	b = append(b, payload...)
	b = append(b, `,"audit":[`...)
	for i := range v.Audit {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendAudit(b, &v.Audit[i])
	}
	return append(b, "]}"...), nil
}

// MarshalJSON implements json.Marshaler.
func (a AuditRecord) MarshalJSON() ([]byte, error) {
	return appendAudit(make([]byte, 0, 400), &a), nil
}

// appendAudit appends a: At in RFC 3339, UTC ("" when unset), Related only
// when there is one.
func appendAudit(b []byte, a *AuditRecord) []byte {
	b = append(b, `{"memory_id":`...)
	b = qdrantjson.AppendString(b, a.MemoryID)
	b = append(b, `,"observation_id":`...)
	b = qdrantjson.AppendString(b, a.ObservationID)
	b = append(b, `,"reason":`...)
	b = qdrantjson.AppendString(b, a.Reason)
	b = append(b, `,"old":`...)
	b = appendFloat(b, a.Old)
	b = append(b, `,"new":`...)
	b = appendFloat(b, a.New)
	b = append(b, `,"old_n":`...)
	b = strconv.AppendInt(b, int64(a.OldN), 10)
	b = append(b, `,"new_n":`...)
	b = strconv.AppendInt(b, int64(a.NewN), 10)
	b = append(b, `,"at":`...)
	at := ""
	if !a.At.IsZero() {
		at = a.At.UTC().Format(time.RFC3339Nano)
	}
	b = qdrantjson.AppendString(b, at)
	b = append(b, `,"session_id":`...)
	b = qdrantjson.AppendString(b, a.SessionID)
	b = append(b, `,"turn_id":`...)
	b = qdrantjson.AppendString(b, a.TurnID)
	b = append(b, `,"source":`...)
	b = appendFloat(b, a.Source)
	b = append(b, `,"extractor":`...)
	b = appendFloat(b, a.Extractor)
	b = append(b, `,"type":`...)
	b = appendFloat(b, a.Type)
	b = append(b, `,"grounding":`...)
	b = qdrantjson.AppendString(b, a.Grounding)
	b = append(b, `,"decision":`...)
	b = qdrantjson.AppendString(b, string(a.Decision))
	if a.Related != "" {
		b = append(b, `,"related":`...)
		b = qdrantjson.AppendString(b, a.Related)
	}
	if a.Forgotten {
		b = append(b, `,"forgotten":true`...)
	}
	for _, kv := range [...][2]string{{"attribution", a.Attribution}, {"attribution_from", a.AttributionFrom}, {"note", a.Note}} {
		if kv[1] != "" {
			b = append(b, `,"`+kv[0]+`":`...)
			b = qdrantjson.AppendString(b, kv[1])
		}
	}
	if a.OldTier != "" || a.NewTier != "" {
		b = append(b, `,"old_tier":`...)
		b = qdrantjson.AppendString(b, a.OldTier)
		b = append(b, `,"new_tier":`...)
		b = qdrantjson.AppendString(b, a.NewTier)
	}
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler. Maps are objects with their keys
// in order, {} when empty or nil; the judge's cache hit rate is null
// before its first look-up.
func (s Stats) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 512)
	b = append(b, `{"collection":`...)
	b = qdrantjson.AppendString(b, s.Collection)
	b = append(b, `,"method":`...)
	b = qdrantjson.AppendString(b, s.Method)
	b = append(b, `,"memories":`...)
	b = strconv.AppendInt(b, int64(s.Memories), 10)
	b = append(b, `,"archived":`...)
	b = strconv.AppendInt(b, int64(s.Archived), 10)
	b = append(b, `,"superseded":`...)
	b = strconv.AppendInt(b, int64(s.Superseded), 10)
	b = append(b, `,"average_confidence":`...)
	if s.Memories-s.Buckets["unscored"] > 0 {
		b = appendFloat(b, s.Average)
	} else {
		b = append(b, "null"...) // nothing scored: no average, not 0
	}
	b = append(b, `,"buckets":`...)
	b = appendCounts(b, s.Buckets)
	b = append(b, `,"histogram":[`...)
	for i, n := range s.Histogram {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, `],"tiers":`...)
	b = appendCounts(b, s.Tiers)
	b = append(b, `,"tiers_as_of":`...)
	if s.TiersAsOf.IsZero() {
		b = append(b, "null"...)
	} else {
		b = qdrantjson.AppendString(b, s.TiersAsOf.UTC().Format(time.RFC3339Nano))
	}
	b = append(b, `,"types":`...)
	b = appendCounts(b, s.Types)
	b = append(b, `,"decisions":`...)
	b = appendCounts(b, s.Decisions)
	j := &s.Judge
	b = append(b, `,"judge":{"calls":`...)
	b = strconv.AppendInt(b, j.Calls, 10)
	b = append(b, `,"cache_hits":`...)
	b = strconv.AppendInt(b, j.CacheHits, 10)
	b = append(b, `,"cache_misses":`...)
	b = strconv.AppendInt(b, j.CacheMisses, 10)
	b = append(b, `,"fallbacks":`...)
	b = strconv.AppendInt(b, j.Fallbacks, 10)
	b = append(b, `,"cache_hit_rate":`...)
	rate := j.CacheHitRate
	if j.CacheHits+j.CacheMisses == 0 {
		rate = math.NaN() // no look-ups: no rate, not 0
	}
	b = appendFloat(b, rate)
	return append(b, "}}"...), nil
}

func appendCounts[N int | int64](b []byte, m map[string]N) []byte {
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = qdrantjson.AppendString(b, k)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(m[k]), 10)
	}
	return append(b, '}')
}

// appendFloat appends f in its shortest form ('g': 1e-05, not 0.00001),
// null when it is not finite.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}
