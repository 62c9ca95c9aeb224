// Package memory is memrank's memory record (docs/memory-record.md): the
// payload of a Qdrant point seen as a memory, the text normaliser behind the
// tier-1 dedup key, and a codec between records and Qdrant payloads or JSON,
// with every payload key renamable so that collections written by other tools
// can be served as they are.
//
// Decoding is total. A missing, null or ill-typed value takes its default and
// is listed in the record's Problems; it never panics and never fails the
// whole record, because one odd point must not cost a caller their query.
package memory

import (
	"fmt"
	"strings"
	"time"

	"github.com/memrank/memrank/scoring"
)

// SchemaVersion is the payload schema memrank writes (memrank_schema).
const SchemaVersion = 1

// MergedAccessKey is the access_counts key that holds the access totals of
// memories merged into this one (docs/scoring.md); replica keys stay owned by
// their replicas.
const MergedAccessKey = "_merged"

// Memory is one memory record: the memory fields of a point's payload.
type Memory struct {
	Text             string
	MemoryType       string // canonical type name, e.g. "fact"
	Source           string // canonical source level, e.g. "direct"
	ExtractorModel   string
	ExtractorLogprob float64 // mean token log-probability, when HasLogprob
	HasLogprob       bool
	Grounding        scoring.Grounding
	Observations     int     // independent re-observations after the first
	Confidence       float64 // stored confidence, when HasConfidence
	HasConfidence    bool
	DecayCategory    string
	CreatedAt        time.Time
	LastObservedAt   time.Time
	LastAccessedAt   time.Time
	AccessCounts     []AccessCount // one entry per replica, sorted by replica
	SessionIDs       []string
	TurnIDs          []string
	Entities         []string
	TextHash         string // as stored; empty when absent (see Hash)
	Retrievable      bool
	Tier             scoring.Tier
	SupersededBy     string // point id ("42" or a UUID); empty when not superseded
	Corroborations   int
	Contradictions   int
	Modalities       []string
	Schema           int
	// Attribution is who asserted the memory: "self" (the speaker, first
	// hand) or "reported" (hearsay, capped at weak_inference); "" unknown.
	Attribution string
	// Uses counts the times an agent used the memory and the user did not
	// correct it (POST /v1/memories/{id}/used); LastUsedAt is the latest.
	Uses       int
	LastUsedAt time.Time
	// Flags are review marks the write path set, e.g. "recurring_event".
	Flags []string
	// Speaker is who stated the memory, when the observation said so: the
	// subject of a first-person statement ("" unknown).
	Speaker string

	// Levels are the numbers the codec resolved the record's names to, with
	// its configured tables; Codec.Inputs reads them.
	Levels Levels

	// Present records which fields the payload carried with a usable value.
	Present Fields
	// Seen records which fields the payload carried at all (non-null), usable
	// or not: a point with an unreadable source is still a memory.
	Seen Fields
	// Problems lists every value that was missing, null, ill-typed or invalid
	// and what was used instead.
	Problems []Problem
}

// Levels are a record's names resolved to numbers: source strength s, type
// prior t, extractor quality e and the freshness half-life in days.
type Levels struct {
	Source    float64
	Type      float64
	Extractor float64
	HalfLife  float64
}

// AccessCount is one replica's running access total.
type AccessCount struct {
	Replica string
	Count   int64
}

// AccessCount is the sum over replicas: how often the memory was returned.
func (m *Memory) AccessCount() int64 {
	var n int64
	for _, c := range m.AccessCounts {
		n += c.Count
	}
	return n
}

// Hash is the stored text_hash, or the hash of the text when none was stored.
func (m *Memory) Hash() string {
	if m.TextHash != "" {
		return m.TextHash
	}
	return TextHash(m.Text)
}

// IsRecord reports whether the payload was a memrank memory record (see
// Codec.IsMemoryRecord): the schema marker, or a memory type and a source
// with an extractor or a stored confidence.
func (m *Memory) IsRecord() bool {
	return m.Seen.Has(FieldSchema) || m.Seen.Has(FieldMemoryType) && m.Seen.Has(FieldSource) &&
		(m.Seen.Has(FieldExtractorModel) || m.Seen.Has(FieldExtractorLogprob) || m.Seen.Has(FieldConfidence))
}

// Unscored reports a point that carries none of the confidence fields
// (source, memory type, extractor, confidence): a foreign point, never gated
// (docs/scoring.md).
func (m *Memory) Unscored() bool {
	return m.Seen&scoredFields == 0
}

// LastObserved is last_observed_at, or created_at when it is absent.
func (m *Memory) LastObserved() time.Time {
	if !m.LastObservedAt.IsZero() {
		return m.LastObservedAt
	}
	return m.CreatedAt
}

// Field names one field of the record.
type Field uint8

// The record's fields, in docs/memory-record.md's order.
const (
	FieldText Field = iota
	FieldMemoryType
	FieldSource
	FieldExtractorModel
	FieldExtractorLogprob
	FieldGrounding
	FieldObservations
	FieldConfidence
	FieldDecayCategory
	FieldCreatedAt
	FieldLastObservedAt
	FieldLastAccessedAt
	FieldAccessCounts
	FieldSessionIDs
	FieldTurnIDs
	FieldEntities
	FieldTextHash
	FieldRetrievable
	FieldTier
	FieldSupersededBy
	FieldCorroborations
	FieldContradictions
	FieldModalities
	FieldSchema
	FieldAttribution
	FieldUses
	FieldLastUsedAt
	FieldFlags
	FieldSpeaker
	numFields
)

var fieldNames = [numFields]string{
	"text", "memory_type", "source", "extractor_model", "extractor_logprob", "grounding",
	"observations", "confidence", "decay_category", "created_at", "last_observed_at",
	"last_accessed_at", "access_counts", "session_ids", "turn_ids", "entities", "text_hash",
	"retrievable", "tier", "superseded_by", "corroborations", "contradictions", "modalities",
	"memrank_schema", "attribution", "uses", "last_used_at", "flags", "speaker",
}

// String is the field's default payload key.
func (f Field) String() string {
	if f < numFields {
		return fieldNames[f]
	}
	return fmt.Sprintf("field(%d)", uint8(f))
}

// Fields is a set of fields.
type Fields uint32

// Has reports whether f is in the set.
func (s Fields) Has(f Field) bool { return s&(1<<f) != 0 }

func (s *Fields) add(f Field) { *s |= 1 << f }

// scoredFields are the fields whose presence makes a point a scored memory.
const scoredFields = Fields(1<<FieldSource | 1<<FieldMemoryType | 1<<FieldExtractorModel |
	1<<FieldExtractorLogprob | 1<<FieldConfidence)

// ProblemKind classifies a decoding problem.
type ProblemKind uint8

// Problem kinds.
const (
	ProblemMissing   ProblemKind = iota // the key is absent
	ProblemNull                         // the value is null
	ProblemWrongType                    // e.g. a string where a number belongs
	ProblemInvalid                      // the right type but an unusable value
)

var problemKindNames = [...]string{"missing", "null", "wrong type", "invalid"}

func (k ProblemKind) String() string {
	if int(k) < len(problemKindNames) {
		return problemKindNames[k]
	}
	return "problem"
}

// Problem is one value the decoder could not use as it was.
type Problem struct {
	Key    string // the payload key, as configured
	Kind   ProblemKind
	Detail string // what was found and what was used instead
}

func (p Problem) String() string {
	if p.Detail == "" {
		return p.Key + ": " + p.Kind.String()
	}
	return p.Key + ": " + p.Kind.String() + ": " + p.Detail
}

// canonical lower-cases a level name and turns spaces and hyphens into
// underscores, so "Direct statement" and "direct-statement" look alike.
func canonical(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if strings.ContainsAny(s, " -") {
		s = strings.NewReplacer(" ", "_", "-", "_").Replace(s)
	}
	return s
}

// sourceAliases maps spellings seen in the seeds and in other tools to the
// canonical source levels.
var sourceAliases = map[string]string{
	"direct_statement": scoring.SourceDirect,
	"user_statement":   scoring.SourceDirect,
	"stated":           scoring.SourceDirect,
	"explicit":         scoring.SourceDirect,
	"confirmation":     scoring.SourceConfirmed,
	"user_confirmed":   scoring.SourceConfirmed,
	"strong":           scoring.SourceStrongInference,
	"inferred_strong":  scoring.SourceStrongInference,
	"weak":             scoring.SourceWeakInference,
	"inference":        scoring.SourceWeakInference,
	"inferred":         scoring.SourceWeakInference,
	"speculative":      scoring.SourceSpeculation,
	"agent_inferred":   scoring.SourceSpeculation,
}

var typeAliases = map[string]string{
	"entities":      scoring.TypeEntity,
	"events":        scoring.TypeEvent,
	"facts":         scoring.TypeFact,
	"preferences":   scoring.TypePreference,
	"pref":          scoring.TypePreference,
	"relations":     scoring.TypeRelation,
	"relationship":  scoring.TypeRelation,
	"relationships": scoring.TypeRelation,
}

var groundingNames = map[string]scoring.Grounding{
	"supported":           scoring.GroundingSupported,
	"grounded":            scoring.GroundingSupported,
	"partial":             scoring.GroundingPartial,
	"partially_supported": scoring.GroundingPartial,
	"partially":           scoring.GroundingPartial,
	"unknown":             scoring.GroundingUnknown,
	"unverified":          scoring.GroundingUnknown,
	"not_supported":       scoring.GroundingNotSupported,
	"unsupported":         scoring.GroundingNotSupported,
	"ungrounded":          scoring.GroundingNotSupported,
}

var tierNames = map[string]scoring.Tier{
	"active":   scoring.TierActive,
	"dormant":  scoring.TierDormant,
	"stale":    scoring.TierStale,
	"archived": scoring.TierArchived,
	"archive":  scoring.TierArchived,
}

// ParseSource resolves a source level name against a table of levels (the
// configured ones), case-insensitively and through the usual aliases, and
// returns the canonical name with its strength.
func ParseSource(s string, levels map[string]float64) (string, float64, bool) {
	return parseLevel(s, levels, sourceAliases)
}

// ParseType resolves a memory type name against a table of type priors and
// returns the canonical name with its prior.
func ParseType(s string, priors map[string]float64) (string, float64, bool) {
	return parseLevel(s, priors, typeAliases)
}

func parseLevel(s string, table map[string]float64, aliases map[string]string) (string, float64, bool) {
	if v, ok := table[s]; ok {
		return s, v, true // already canonical: the common case, and no allocation
	}
	c := canonical(s)
	if v, ok := table[c]; ok {
		return c, v, true
	}
	if a, ok := aliases[c]; ok {
		if v, ok := table[a]; ok {
			return a, v, true
		}
	}
	return "", 0, false
}

// ParseGrounding resolves a grounding verdict name.
func ParseGrounding(s string) (scoring.Grounding, bool) {
	switch s { // the canonical spellings, without hashing
	case "supported":
		return scoring.GroundingSupported, true
	case "partial":
		return scoring.GroundingPartial, true
	case "unknown":
		return scoring.GroundingUnknown, true
	}
	g, ok := groundingNames[canonical(s)]
	return g, ok
}

// ParseTier resolves a tier name.
func ParseTier(s string) (scoring.Tier, bool) {
	switch s { // the canonical spellings, without hashing
	case "active":
		return scoring.TierActive, true
	case "dormant":
		return scoring.TierDormant, true
	case "stale":
		return scoring.TierStale, true
	}
	t, ok := tierNames[canonical(s)]
	return t, ok
}

// Exclusion says why the read path leaves a memory out before the gates
// (docs/read-path.md), or "" when it stays a candidate: superseded, archived
// by a person or a review (archived and not retrievable), or stored as not
// retrievable by another writer (a correction). Age never excludes: the
// tier consolidation stores is a label for upkeep, and so is the one
// computed at read time.
func (m *Memory) Exclusion() string {
	switch {
	case m.SupersededBy != "":
		return "superseded by " + m.SupersededBy
	case !m.Retrievable && m.Tier == scoring.TierArchived:
		return "archived"
	case !m.Retrievable:
		return "stored as not retrievable"
	}
	return ""
}
