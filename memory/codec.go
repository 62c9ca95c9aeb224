package memory

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/memrank/memrank/config/check"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/scoring"
)

// Keys are the payload keys of the record's fields (docs/memory-record.md), each
// renamable so that an existing collection is served without rewriting.
type Keys struct {
	Text             string `koanf:"text"`
	MemoryType       string `koanf:"memory_type"`
	Source           string `koanf:"source"`
	ExtractorModel   string `koanf:"extractor_model"`
	ExtractorLogprob string `koanf:"extractor_logprob"`
	Grounding        string `koanf:"grounding"`
	Observations     string `koanf:"observations"`
	Confidence       string `koanf:"confidence"`
	DecayCategory    string `koanf:"decay_category"`
	CreatedAt        string `koanf:"created_at"`
	LastObservedAt   string `koanf:"last_observed_at"`
	LastAccessedAt   string `koanf:"last_accessed_at"`
	AccessCounts     string `koanf:"access_counts"`
	SessionIDs       string `koanf:"session_ids"`
	TurnIDs          string `koanf:"turn_ids"`
	Entities         string `koanf:"entities"`
	TextHash         string `koanf:"text_hash"`
	Retrievable      string `koanf:"retrievable"`
	Tier             string `koanf:"tier"`
	SupersededBy     string `koanf:"superseded_by"`
	Corroborations   string `koanf:"corroborations"`
	Contradictions   string `koanf:"contradictions"`
	Modalities       string `koanf:"modalities"`
	Schema           string `koanf:"memrank_schema"`
	Attribution      string `koanf:"attribution"`
	Uses             string `koanf:"uses"`
	LastUsedAt       string `koanf:"last_used_at"`
	Flags            string `koanf:"flags"`
	Speaker          string `koanf:"speaker"`
}

// Validate refuses empty payload keys and two record fields stored under
// one payload key, which would make each overwrite the other. The keys it
// names are the section's (payload_keys.text).
func (k Keys) Validate() error {
	var c check.Checker
	owner := make(map[string]string)
	for f, p := range k.fields() {
		name := Field(f).String()
		switch prev, dup := owner[*p]; {
		case *p == "":
			c.Add(name, "must not be empty")
		case dup:
			c.Add(name, "%s is also %s", check.Quote(*p), check.Ref(prev))
		default:
			owner[*p] = name
		}
	}
	return c.Err()
}

// FieldOf returns the record field (its default key name) stored under
// payload key name.
func (k Keys) FieldOf(name string) (string, bool) {
	for f, p := range k.fields() {
		if *p == name {
			return Field(f).String(), true
		}
	}
	return "", false
}

// DefaultKeys are docs/memory-record.md's key names.
func DefaultKeys() Keys {
	var k Keys
	for f, p := range k.fields() {
		*p = Field(f).String()
	}
	return k
}

// fields lists pointers to the key of each Field, in Field order.
func (k *Keys) fields() [numFields]*string {
	return [numFields]*string{
		&k.Text, &k.MemoryType, &k.Source, &k.ExtractorModel, &k.ExtractorLogprob, &k.Grounding,
		&k.Observations, &k.Confidence, &k.DecayCategory, &k.CreatedAt, &k.LastObservedAt,
		&k.LastAccessedAt, &k.AccessCounts, &k.SessionIDs, &k.TurnIDs, &k.Entities, &k.TextHash,
		&k.Retrievable, &k.Tier, &k.SupersededBy, &k.Corroborations, &k.Contradictions,
		&k.Modalities, &k.Schema, &k.Attribution, &k.Uses, &k.LastUsedAt, &k.Flags, &k.Speaker,
	}
}

// Codec converts between memory records and payloads, with configured keys
// and the configured level tables (to recognise source levels and types). It
// is safe for concurrent use.
type Codec struct {
	params *scoring.Params
	keys   [numFields]string
	byKey  map[string]Field
	table  keyTable
	models modelCache
}

// Keys returns the payload keys the codec reads and writes.
func (c *Codec) Keys() Keys {
	var k Keys
	for f, p := range k.fields() {
		*p = c.keys[f]
	}
	return k
}

// NewCodec checks that every key is set and no two fields share one.
func NewCodec(keys Keys, params *scoring.Params) (*Codec, error) {
	if params == nil {
		return nil, errors.New("memory: nil scoring parameters")
	}
	c := &Codec{params: params, byKey: make(map[string]Field, numFields)}
	for f, p := range keys.fields() {
		k := *p
		if k == "" {
			return nil, fmt.Errorf("memory: payload key for %s is empty", Field(f))
		}
		if other, dup := c.byKey[k]; dup {
			return nil, fmt.Errorf("memory: payload key %q is used by both %s and %s", k, other, Field(f))
		}
		c.keys[f] = k
		c.byKey[k] = Field(f)
	}
	c.table = newKeyTable(c.keys)
	return c, nil
}

// Key is the payload key of field f.
func (c *Codec) Key(f Field) string { return c.keys[f] }

// Params are the scoring parameters the codec resolves levels against.
func (c *Codec) Params() *scoring.Params { return c.params }

// nullIsAbsent are the fields where a null value is a natural way to write
// "none" (Python's None), so it is not reported.
const nullIsAbsent = Fields(1<<FieldExtractorLogprob | 1<<FieldSupersededBy | 1<<FieldLastAccessedAt |
	1<<FieldDecayCategory | 1<<FieldLastObservedAt | 1<<FieldAttribution | 1<<FieldLastUsedAt | 1<<FieldSpeaker)

// reportedMissing are the fields whose absence from a scored memory is worth
// telling: the score leans on a default for them.
const reportedMissing = Fields(1<<FieldText | 1<<FieldMemoryType | 1<<FieldSource | 1<<FieldConfidence |
	1<<FieldCreatedAt)

// decoder carries one record's decoding state.
type decoder struct {
	c *Codec
	m *Memory
}

func (d *decoder) problem(f Field, kind ProblemKind, detail string) {
	d.m.Problems = append(d.m.Problems, Problem{Key: d.c.keys[f], Kind: kind, Detail: detail})
}

// Decode reads the memory fields of a Qdrant payload into m (reset first).
// It walks the payload map once; keys that are not memory fields are ignored.
// The backing arrays of m's slices are reused, so a read path decoding into
// the same records query after query does not allocate them again; do not
// keep m's slices across calls.
func (c *Codec) Decode(payload map[string]*qdrant.Value, m *Memory) {
	c.decode(payload, m, 0)
}

// provenanceFields are the lists ranking never reads. Entities are read:
// folding tells subjects apart by them (dedup.Claim).
const provenanceFields = Fields(1<<FieldSessionIDs | 1<<FieldTurnIDs | 1<<FieldModalities | 1<<FieldFlags)

// DecodeRank is Decode for the read path: it skips the provenance lists
// (session and turn ids, modalities, flags), which ranking never reads, so
// they stay nil and unchecked; they are still marked in Seen.
func (c *Codec) DecodeRank(payload map[string]*qdrant.Value, m *Memory) {
	c.decode(payload, m, provenanceFields)
}

func (c *Codec) decode(payload map[string]*qdrant.Value, m *Memory, skip Fields) {
	reuse := [...][]string{m.SessionIDs[:0], m.TurnIDs[:0], m.Entities[:0], m.Modalities[:0], m.Flags[:0]}
	counts, problems := m.AccessCounts[:0], m.Problems[:0]
	*m = Memory{Retrievable: true, Grounding: scoring.GroundingSupported}
	m.SessionIDs, m.TurnIDs, m.Entities, m.Modalities, m.Flags = reuse[0], reuse[1], reuse[2], reuse[3], reuse[4]
	m.AccessCounts, m.Problems = counts, problems
	d := decoder{c: c, m: m}
	for k, v := range payload {
		f, ok := c.table.lookup(k)
		if !ok {
			continue
		}
		if v == nil || isNull(v) {
			if !nullIsAbsent.Has(f) {
				d.problem(f, ProblemNull, "using the default")
			}
			continue
		}
		m.Seen.add(f)
		if skip.Has(f) {
			continue
		}
		if d.field(f, v) {
			m.Present.add(f)
		}
	}
	d.finish()
	// Absent lists and problems read as nil, as they would without reuse.
	nilUnless(&m.SessionIDs, m.Present.Has(FieldSessionIDs))
	nilUnless(&m.TurnIDs, m.Present.Has(FieldTurnIDs))
	nilUnless(&m.Entities, m.Present.Has(FieldEntities))
	nilUnless(&m.Modalities, m.Present.Has(FieldModalities))
	nilUnless(&m.Flags, m.Present.Has(FieldFlags))
	nilUnless(&m.AccessCounts, m.Present.Has(FieldAccessCounts))
	nilUnless(&m.Problems, len(m.Problems) > 0)
}

func nilUnless[T any](s *[]T, keep bool) {
	if !keep {
		*s = nil
	}
}

// DecodeQdrant is Decode into a new record.
func (c *Codec) DecodeQdrant(payload map[string]*qdrant.Value) Memory {
	var m Memory
	c.Decode(payload, &m)
	return m
}

func isNull(v *qdrant.Value) bool {
	_, null := v.GetKind().(*qdrant.Value_NullValue)
	return null || v.GetKind() == nil
}

// field decodes one present, non-null value and reports whether it was usable.
// It only dispatches: fields stored as plain strings, numbers, times and
// lists share the generic readers; each field with its own checks has its
// own method below.
func (d *decoder) field(f Field, v *qdrant.Value) bool {
	m := d.m
	switch f {
	case FieldText:
		return d.str(f, v, &m.Text)
	case FieldMemoryType:
		return d.memoryType(f, v)
	case FieldSource:
		return d.source(f, v)
	case FieldExtractorModel:
		return d.str(f, v, &m.ExtractorModel)
	case FieldExtractorLogprob:
		return d.logprob(f, v)
	case FieldGrounding:
		return d.grounding(f, v)
	case FieldObservations:
		return d.count(f, v, &m.Observations)
	case FieldConfidence:
		return d.confidence(f, v)
	case FieldDecayCategory:
		return d.decayCategory(f, v)
	case FieldCreatedAt:
		return d.time(f, v, &m.CreatedAt)
	case FieldLastObservedAt:
		return d.time(f, v, &m.LastObservedAt)
	case FieldLastAccessedAt:
		return d.time(f, v, &m.LastAccessedAt)
	case FieldAccessCounts:
		return d.accessCounts(f, v)
	case FieldSessionIDs:
		return d.strings(f, v, &m.SessionIDs)
	case FieldTurnIDs:
		return d.strings(f, v, &m.TurnIDs)
	case FieldEntities:
		return d.strings(f, v, &m.Entities)
	case FieldModalities:
		return d.strings(f, v, &m.Modalities)
	case FieldTextHash:
		return d.str(f, v, &m.TextHash)
	case FieldRetrievable:
		return d.retrievable(f, v)
	case FieldTier:
		return d.tier(f, v)
	case FieldSupersededBy:
		return d.supersededBy(f, v)
	case FieldCorroborations:
		return d.count(f, v, &m.Corroborations)
	case FieldContradictions:
		return d.count(f, v, &m.Contradictions)
	case FieldSchema:
		return d.count(f, v, &m.Schema)
	case FieldAttribution:
		return d.str(f, v, &m.Attribution)
	case FieldUses:
		return d.count(f, v, &m.Uses)
	case FieldLastUsedAt:
		return d.time(f, v, &m.LastUsedAt)
	case FieldFlags:
		return d.strings(f, v, &m.Flags)
	case FieldSpeaker:
		return d.str(f, v, &m.Speaker)
	}
	return true
}

// memoryType resolves the type against the configured priors, so a type
// the tables do not know falls back to finish's default instead of scoring
// with no prior.
func (d *decoder) memoryType(f Field, v *qdrant.Value) bool {
	var s string
	if !d.str(f, v, &s) {
		return false
	}
	t, prior, ok := ParseType(s, d.c.params.TypePriors)
	if !ok {
		d.problem(f, ProblemInvalid, fmt.Sprintf("unknown memory type %q, using %s", s, scoring.TypeFact))
		return false
	}
	d.m.MemoryType, d.m.Levels.Type = t, prior
	return true
}

// source resolves the source against the configured strengths, so an
// unknown source falls back to finish's default instead of scoring with no
// strength.
func (d *decoder) source(f Field, v *qdrant.Value) bool {
	var s string
	if !d.str(f, v, &s) {
		return false
	}
	src, strength, ok := ParseSource(s, d.c.params.SourceLevels)
	if !ok {
		d.problem(f, ProblemInvalid, fmt.Sprintf("unknown source %q, using %s", s, scoring.SourceWeakInference))
		return false
	}
	d.m.Source, d.m.Levels.Source = src, strength
	return true
}

// logprob keeps only a real log-probability: anything else would skew the
// extractor level, which then comes from the model table instead.
func (d *decoder) logprob(f Field, v *qdrant.Value) bool {
	x, ok := d.number(f, v)
	if !ok {
		return false
	}
	if math.IsNaN(x) || x > 0 {
		d.problem(f, ProblemInvalid, fmt.Sprintf("%v is not a log-probability, using the model table", x))
		return false
	}
	d.m.ExtractorLogprob, d.m.HasLogprob = x, true
	return true
}

// grounding parses the grounding state; an unknown one leaves the reset
// default, supported, in place.
func (d *decoder) grounding(f Field, v *qdrant.Value) bool {
	var s string
	if !d.str(f, v, &s) {
		return false
	}
	g, ok := ParseGrounding(s)
	if !ok {
		d.problem(f, ProblemInvalid, fmt.Sprintf("unknown grounding %q, using supported", s))
		return false
	}
	d.m.Grounding = g
	return true
}

// confidence keeps a stored confidence only inside [0, 1] (NaN included
// in the refusal), so an out-of-range one is recomputed from the fields
// rather than trusted.
func (d *decoder) confidence(f Field, v *qdrant.Value) bool {
	x, ok := d.number(f, v)
	if !ok {
		return false
	}
	if !(x >= 0 && x <= 1) {
		d.problem(f, ProblemInvalid, fmt.Sprintf("%v is outside [0, 1], computing it from the fields", x))
		return false
	}
	d.m.Confidence, d.m.HasConfidence = x, true
	return true
}

// decayCategory keeps an unknown category, reporting it: the half-life
// lookup in finish falls back to the default on its own, and the stored
// name is still the record's.
func (d *decoder) decayCategory(f Field, v *qdrant.Value) bool {
	m := d.m
	if !d.str(f, v, &m.DecayCategory) {
		return false
	}
	if m.DecayCategory != "" {
		if _, ok := d.c.params.Decay.HalfLives[m.DecayCategory]; !ok {
			d.problem(f, ProblemInvalid, fmt.Sprintf("unknown decay category %q, using the default half-life", m.DecayCategory))
		}
	}
	return true
}

// retrievable accepts only a bool: any other kind is reported as the wrong
// type rather than guessed at, and the record stays retrievable.
func (d *decoder) retrievable(f Field, v *qdrant.Value) bool {
	b, ok := v.GetKind().(*qdrant.Value_BoolValue)
	if !ok {
		d.wrongType(f, v, "a bool")
		return false
	}
	d.m.Retrievable = b.BoolValue
	return true
}

// tier parses the lifecycle tier; an unknown one leaves the reset default,
// active, in place.
func (d *decoder) tier(f Field, v *qdrant.Value) bool {
	var s string
	if !d.str(f, v, &s) {
		return false
	}
	t, ok := ParseTier(s)
	if !ok {
		d.problem(f, ProblemInvalid, fmt.Sprintf("unknown tier %q, using active", s))
		return false
	}
	d.m.Tier = t
	return true
}

// supersededBy takes a point id in either of Qdrant's forms, a string or a
// non-negative number, since writers store both; the record keeps its
// string form ("42" or a UUID).
func (d *decoder) supersededBy(f Field, v *qdrant.Value) bool {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_StringValue:
		d.m.SupersededBy = k.StringValue
	case *qdrant.Value_IntegerValue:
		if k.IntegerValue < 0 {
			d.problem(f, ProblemInvalid, fmt.Sprintf("%d is not a point id", k.IntegerValue))
			return false
		}
		d.m.SupersededBy = strconv.FormatInt(k.IntegerValue, 10)
	default:
		d.wrongType(f, v, "a point id")
		return false
	}
	return true
}

// finish applies the defaults that depend on what was present.
func (d *decoder) finish() {
	m := d.m
	p := d.c.params
	if !m.Present.Has(FieldMemoryType) {
		m.MemoryType = scoring.TypeFact
		m.Levels.Type = p.TypePriors[scoring.TypeFact]
	}
	if !m.Present.Has(FieldSource) {
		m.Source = scoring.SourceWeakInference
		m.Levels.Source = p.SourceLevels[scoring.SourceWeakInference]
	}
	if !m.Present.Has(FieldSchema) {
		m.Schema = SchemaVersion
	}
	m.Levels.Extractor = d.c.extractor(m)
	m.Levels.HalfLife, _ = p.Decay.HalfLife(m.DecayCategory, m.MemoryType)
	if m.Unscored() {
		// A foreign point: its missing memory fields are expected, not problems.
		return
	}
	for f := Field(0); f < numFields; f++ {
		if reportedMissing.Has(f) && !m.Present.Has(f) && !d.reported(f) {
			d.problem(f, ProblemMissing, missingDetail[f])
		}
	}
	// memrank writes extractor_model only when it knows the model: on its
	// own records (the schema marker) the key's absence is not a problem.
	if !m.Present.Has(FieldExtractorModel) && !m.HasLogprob && !m.Present.Has(FieldSchema) && !d.reported(FieldExtractorModel) {
		d.problem(FieldExtractorModel, ProblemMissing, "unknown extractor quality used")
	}
}

var missingDetail = map[Field]string{
	FieldText:       "empty text",
	FieldMemoryType: "using " + scoring.TypeFact,
	FieldSource:     "using " + scoring.SourceWeakInference,
	FieldConfidence: "computed from the fields",
	FieldCreatedAt:  "age unknown, treated as fresh",
}

// reported tells whether a problem for f is already listed (null, wrong type).
func (d *decoder) reported(f Field) bool {
	k := d.c.keys[f]
	for _, p := range d.m.Problems {
		if p.Key == k {
			return true
		}
	}
	return false
}

func kindName(v *qdrant.Value) string {
	switch v.GetKind().(type) {
	case *qdrant.Value_StringValue:
		return "a string"
	case *qdrant.Value_IntegerValue:
		return "an integer"
	case *qdrant.Value_DoubleValue:
		return "a float"
	case *qdrant.Value_BoolValue:
		return "a bool"
	case *qdrant.Value_StructValue:
		return "an object"
	case *qdrant.Value_ListValue:
		return "a list"
	}
	return "null"
}

func (d *decoder) wrongType(f Field, v *qdrant.Value, want string) {
	d.problem(f, ProblemWrongType, fmt.Sprintf("want %s, got %s; using the default", want, kindName(v)))
}

func (d *decoder) str(f Field, v *qdrant.Value, dst *string) bool {
	s, ok := v.GetKind().(*qdrant.Value_StringValue)
	if !ok {
		d.wrongType(f, v, "a string")
		return false
	}
	*dst = s.StringValue
	return true
}

// number accepts integers and floats alike: JSON writers cannot always tell
// 1 from 1.0.
func (d *decoder) number(f Field, v *qdrant.Value) (float64, bool) {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_DoubleValue:
		return k.DoubleValue, true
	case *qdrant.Value_IntegerValue:
		return float64(k.IntegerValue), true
	}
	d.wrongType(f, v, "a number")
	return 0, false
}

// integer accepts an integer, or a float with an integral value.
func (d *decoder) integer(f Field, v *qdrant.Value) (int64, bool) {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_IntegerValue:
		return k.IntegerValue, true
	case *qdrant.Value_DoubleValue:
		x := k.DoubleValue
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
		d.problem(f, ProblemInvalid, fmt.Sprintf("%v is not a whole number, using the default", x))
		return 0, false
	}
	d.wrongType(f, v, "an integer")
	return 0, false
}

// count decodes a non-negative integer that fits an int.
func (d *decoder) count(f Field, v *qdrant.Value, dst *int) bool {
	n, ok := d.integer(f, v)
	if !ok {
		return false
	}
	if n < 0 || n > math.MaxInt32 {
		d.problem(f, ProblemInvalid, fmt.Sprintf("%d is not a count, using the default", n))
		return false
	}
	*dst = int(n)
	return true
}

// timeLayouts are tried in order: RFC 3339 (with or without a fraction), then
// the zone-less forms Python's isoformat() writes, read as UTC.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// ParseTime reads a timestamp as memrank stores it (RFC 3339) or as other
// writers commonly do.
func ParseTime(s string) (time.Time, bool) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func (d *decoder) time(f Field, v *qdrant.Value, dst *time.Time) bool {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_StringValue:
		t, ok := ParseTime(k.StringValue)
		if !ok {
			d.problem(f, ProblemInvalid, fmt.Sprintf("%q is not an RFC 3339 time, using the default", truncate(k.StringValue)))
			return false
		}
		*dst = t
		return true
	case *qdrant.Value_IntegerValue, *qdrant.Value_DoubleValue:
		// Unix time, in seconds, or in milliseconds past year 5138 in seconds.
		x, _ := d.number(f, v)
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > 1e16 {
			d.problem(f, ProblemInvalid, fmt.Sprintf("%v is not a Unix time, using the default", x))
			return false
		}
		if x >= 1e11 {
			x /= 1000
		}
		sec, frac := math.Modf(x)
		*dst = time.Unix(int64(sec), int64(frac*1e9)).UTC()
		return true
	}
	d.wrongType(f, v, "an RFC 3339 string")
	return false
}

func truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "..."
}

// strings decodes a list of strings. A lone string is taken as a list of one
// (a common slip of hand-written payloads), reported as a wrong type.
func (d *decoder) strings(f Field, v *qdrant.Value, dst *[]string) bool {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_StringValue:
		d.problem(f, ProblemWrongType, "want a list of strings, got a string; used as a list of one")
		*dst = append((*dst)[:0], k.StringValue)
		return true
	case *qdrant.Value_ListValue:
		vals := k.ListValue.GetValues()
		out := (*dst)[:0]
		skipped := 0
		for _, e := range vals {
			if s, ok := e.GetKind().(*qdrant.Value_StringValue); ok {
				out = append(out, s.StringValue)
			} else {
				skipped++
			}
		}
		if skipped > 0 {
			d.problem(f, ProblemWrongType, fmt.Sprintf("%d element(s) are not strings, skipped", skipped))
		}
		*dst = out
		return true
	}
	d.wrongType(f, v, "a list of strings")
	return false
}

func (d *decoder) accessCounts(f Field, v *qdrant.Value) bool {
	s, ok := v.GetKind().(*qdrant.Value_StructValue)
	if !ok {
		d.wrongType(f, v, "an object of replica counts")
		return false
	}
	fields := s.StructValue.GetFields()
	out := d.m.AccessCounts[:0]
	for replica, cv := range fields {
		var n int64
		switch k := cv.GetKind().(type) {
		case *qdrant.Value_IntegerValue:
			n = k.IntegerValue
		case *qdrant.Value_DoubleValue:
			if k.DoubleValue != math.Trunc(k.DoubleValue) || math.Abs(k.DoubleValue) >= 1<<53 {
				d.problem(f, ProblemInvalid, fmt.Sprintf("replica %q: %v is not a count, skipped", truncate(replica), k.DoubleValue))
				continue
			}
			n = int64(k.DoubleValue)
		default:
			d.problem(f, ProblemWrongType, fmt.Sprintf("replica %q: want an integer, got %s; skipped", truncate(replica), kindName(cv)))
			continue
		}
		if n < 0 {
			d.problem(f, ProblemInvalid, fmt.Sprintf("replica %q: %d is negative, skipped", truncate(replica), n))
			continue
		}
		out = append(out, AccessCount{Replica: replica, Count: n})
	}
	// Map order is random; replicas are few, so an insertion sort is cheapest.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Replica < out[j-1].Replica; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	d.m.AccessCounts = out
	return true
}

// Encode writes the record as a Qdrant payload with the configured keys. It
// writes every field memrank owns, computing text_hash when it is unset, so
// that what it writes decodes back to the same record.
func (c *Codec) Encode(m *Memory) map[string]*qdrant.Value {
	p := make(map[string]*qdrant.Value, numFields)
	set := func(f Field, v *qdrant.Value) { p[c.keys[f]] = v }
	set(FieldText, qdrant.NewValueString(m.Text))
	set(FieldMemoryType, qdrant.NewValueString(orDefault(m.MemoryType, scoring.TypeFact)))
	set(FieldSource, qdrant.NewValueString(orDefault(m.Source, scoring.SourceWeakInference)))
	if m.ExtractorModel != "" {
		set(FieldExtractorModel, qdrant.NewValueString(m.ExtractorModel))
	}
	if m.HasLogprob {
		set(FieldExtractorLogprob, qdrant.NewValueDouble(m.ExtractorLogprob))
	}
	set(FieldGrounding, qdrant.NewValueString(m.Grounding.String()))
	set(FieldObservations, qdrant.NewValueInt(int64(m.Observations)))
	if m.HasConfidence {
		set(FieldConfidence, qdrant.NewValueDouble(RoundConfidence(m.Confidence)))
	}
	if m.DecayCategory != "" {
		set(FieldDecayCategory, qdrant.NewValueString(m.DecayCategory))
	}
	for _, t := range []struct {
		f Field
		t time.Time
	}{{FieldCreatedAt, m.CreatedAt}, {FieldLastObservedAt, m.LastObservedAt}, {FieldLastAccessedAt, m.LastAccessedAt}} {
		if !t.t.IsZero() {
			set(t.f, qdrant.NewValueString(FormatTime(t.t)))
		}
	}
	counts := make(map[string]*qdrant.Value, len(m.AccessCounts))
	for _, a := range m.AccessCounts {
		counts[a.Replica] = qdrant.NewValueInt(a.Count)
	}
	set(FieldAccessCounts, qdrant.NewValueFromFields(counts))
	set(FieldSessionIDs, stringList(m.SessionIDs))
	set(FieldTurnIDs, stringList(m.TurnIDs))
	set(FieldEntities, stringList(m.Entities))
	set(FieldModalities, stringList(m.Modalities))
	set(FieldTextHash, qdrant.NewValueString(m.Hash()))
	set(FieldRetrievable, qdrant.NewValueBool(m.Retrievable))
	set(FieldTier, qdrant.NewValueString(m.Tier.String()))
	if m.SupersededBy != "" {
		if n, err := strconv.ParseUint(m.SupersededBy, 10, 63); err == nil {
			set(FieldSupersededBy, qdrant.NewValueInt(int64(n)))
		} else {
			set(FieldSupersededBy, qdrant.NewValueString(m.SupersededBy))
		}
	}
	set(FieldCorroborations, qdrant.NewValueInt(int64(m.Corroborations)))
	set(FieldContradictions, qdrant.NewValueInt(int64(m.Contradictions)))
	schema := m.Schema
	if schema == 0 {
		schema = SchemaVersion
	}
	set(FieldSchema, qdrant.NewValueInt(int64(schema)))
	// The evidence fields below are written only when they say something, so
	// that memories without them keep the payload they always had.
	if m.Attribution != "" {
		set(FieldAttribution, qdrant.NewValueString(m.Attribution))
	}
	if m.Uses > 0 {
		set(FieldUses, qdrant.NewValueInt(int64(m.Uses)))
	}
	if !m.LastUsedAt.IsZero() {
		set(FieldLastUsedAt, qdrant.NewValueString(FormatTime(m.LastUsedAt)))
	}
	if len(m.Flags) > 0 {
		set(FieldFlags, stringList(m.Flags))
	}
	if m.Speaker != "" {
		set(FieldSpeaker, qdrant.NewValueString(m.Speaker))
	}
	return p
}

// FormatTime is how memrank writes timestamps: RFC 3339 in UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func stringList(ss []string) *qdrant.Value {
	vals := make([]*qdrant.Value, len(ss))
	for i, s := range ss {
		vals[i] = qdrant.NewValueString(s)
	}
	return qdrant.NewValueFromList(vals...)
}

// Inputs maps a decoded record to the numbers the read-time math needs. The
// record must have been decoded by this codec (or by one with the same
// tables), since the levels were resolved then.
func (c *Codec) Inputs(m *Memory) scoring.Inputs {
	in := scoring.Inputs{
		Unscored:     m.Unscored(),
		HalfLife:     m.Levels.HalfLife,
		LastObserved: m.LastObserved(),
		LastAccessed: m.LastAccessedAt,
		// Outcome feedback feeds the boost as well as reads: a use is a read
		// the user did not correct (docs/scoring.md#outcome-feedback).
		AccessCount: m.AccessCount() + int64(m.Uses),
	}
	if in.Unscored {
		return in
	}
	in.Components = scoring.Components{
		Source:       m.Levels.Source,
		Observations: m.Observations,
		Extractor:    m.Levels.Extractor,
		Type:         m.Levels.Type,
	}
	in.Grounding = m.Grounding
	in.Confidence, in.HasConfidence = m.Confidence, m.HasConfidence
	return in
}

// RoundConfidence is a confidence as stored and shown: to 1e-9, so that
// the float error of the formula's sums (0.6699999999999999) does not
// show, while every decision stays as computed.
func RoundConfidence(c float64) float64 {
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return c
	}
	return math.Round(c*1e9) / 1e9
}
