package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Observation is one statement for the write path (POST /v1/observe; the
// fields and their rules are in docs/write-path.md). Collection and Text
// are required; the rest are optional and left out when zero.
type Observation struct {
	Collection string `json:"collection,omitempty"`
	Text       string `json:"text"`
	// MemoryType: fact, preference, event, ... (docs/scoring.md).
	MemoryType string `json:"memory_type,omitempty"`
	// Source: direct, indirect, weak_inference, ...
	Source           string   `json:"source,omitempty"`
	ExtractorModel   string   `json:"extractor_model,omitempty"`
	ExtractorLogprob *float64 `json:"extractor_logprob,omitempty"`
	Grounding        string   `json:"grounding,omitempty"`
	SessionID        string   `json:"session_id,omitempty"`
	TurnID           string   `json:"turn_id,omitempty"`
	// ObservedAt defaults to the server's now.
	ObservedAt    time.Time `json:"-"`
	Modality      string    `json:"modality,omitempty"`
	Entities      []string  `json:"entities,omitempty"`
	DecayCategory string    `json:"decay_category,omitempty"`
	Vector        []float32 `json:"vector,omitempty"`
	// ObservationID makes a retry safe: the same id is answered with the
	// first outcome, replayed.
	ObservationID string `json:"observation_id,omitempty"`
	// Corrects is the memory this observation corrects (Correct sets it).
	Corrects string `json:"corrects,omitempty"`
	// Attribution: self, or reported (hearsay, capped).
	Attribution string `json:"attribution,omitempty"`
	// Speaker is who said the text (a name): the subject of a first-person
	// statement, so two people's statements never fold together. Empty: a
	// leading "Name:" of the text, if any, names the speaker. Stored as the
	// memory's payload key "speaker".
	Speaker string `json:"speaker,omitempty"`
}

// MarshalJSON writes ObservedAt in RFC 3339, left out when zero.
func (o Observation) MarshalJSON() ([]byte, error) {
	type plain Observation
	v := struct {
		plain
		ObservedAt string `json:"observed_at,omitempty"`
	}{plain: plain(o)}
	if !o.ObservedAt.IsZero() {
		v.ObservedAt = o.ObservedAt.UTC().Format(time.RFC3339Nano)
	}
	return json.Marshal(v)
}

// Confirmation names a memory a caller confirms (Confirm) or used (Used).
type Confirmation struct {
	Collection    string    `json:"collection"`
	MemoryID      string    `json:"-"` // in the path
	ObservationID string    `json:"observation_id,omitempty"`
	SessionID     string    `json:"session_id,omitempty"`
	TurnID        string    `json:"turn_id,omitempty"`
	At            time.Time `json:"-"`
}

// MarshalJSON writes At in RFC 3339, left out when zero.
func (c Confirmation) MarshalJSON() ([]byte, error) {
	type plain Confirmation
	v := struct {
		plain
		At string `json:"at,omitempty"`
	}{plain: plain(c)}
	if !c.At.IsZero() {
		v.At = c.At.UTC().Format(time.RFC3339Nano)
	}
	return json.Marshal(v)
}

// Outcome is the write path's decision on an observation, a confirmation,
// a correction or a use.
type Outcome struct {
	// Decision: inserted, restatement, independent, contradiction,
	// rejected, confirmed, corrected or used.
	Decision     string `json:"decision"`
	MemoryID     string `json:"memory_id"` // the memory it ended up in
	Confidence   Float  `json:"confidence"`
	Observations int    `json:"observations"` // the memory's n afterwards
	// DedupTier is the tier that found the match: 1 text hash, 2 vector
	// similarity, 3 the judge; 0 when nothing matched.
	DedupTier         int          `json:"dedup_tier"`
	Judge             *JudgeInfo   `json:"judge"`
	Superseded        string       `json:"superseded,omitempty"`
	Merged            []string     `json:"merged,omitempty"`
	Reason            string       `json:"reason,omitempty"` // why it was rejected
	Replayed          bool         `json:"replayed"`
	AlreadyCounted    bool         `json:"already_counted,omitempty"` // a confirmation its session (or, without one, a sessionless one) had made: n unchanged
	CreatedCollection bool         `json:"created_collection,omitempty"`
	Attribution       *Attribution `json:"attribution,omitempty"`
	Flags             []string     `json:"flags,omitempty"`
	Uses              int          `json:"uses,omitempty"`
	// Warnings say what the caller may not expect of the stored memory,
	// e.g. that its confidence is below the retrieval gate (a text
	// observed without its source, weak_inference by default): it is then
	// returned only as the best match of a question, flagged below_gate.
	Warnings []string `json:"warnings,omitempty"`
}

// JudgeInfo is what the LLM judge said, when it was asked.
type JudgeInfo struct {
	Verdict  string `json:"verdict"`
	Cached   bool   `json:"cached"`
	Reason   string `json:"reason,omitempty"`
	Fallback string `json:"fallback,omitempty"`
}

// Attribution says an observation was hearsay, and whether its source was
// capped for it.
type Attribution struct {
	Attribution string `json:"attribution"`
	From        string `json:"from"`
	Cue         string `json:"cue,omitempty"`
	Capped      bool   `json:"capped"`
	Source      string `json:"source,omitempty"`
}

// RetrieveRequest is a POST /v1/retrieve body: a Text or a Vector.
type RetrieveRequest struct {
	Collection string    `json:"collection"`
	Text       string    `json:"text,omitempty"`
	Vector     []float32 `json:"vector,omitempty"`
	Using      string    `json:"using,omitempty"` // a named vector
	// Filter is a Qdrant REST filter, e.g. {"must": [...]}.
	Filter json.RawMessage `json:"filter,omitempty"`
	Limit  int             `json:"limit,omitempty"` // 1..1000; 0: the server's default (10)
	Offset int             `json:"offset,omitempty"`
	// ScoreThreshold applies to the similarity, as Qdrant applies it.
	ScoreThreshold *float64 `json:"score_threshold,omitempty"`
	// NoExplain leaves out every result's explanation (on by default).
	NoExplain bool `json:"-"`
	// NoCountAccess reads without counting the results as accessed
	// (count_access false): for a person or a tool inspecting a ranking,
	// whose looking must not raise the access boost of what it looks at.
	NoCountAccess bool `json:"-"`
	// NoPayload leaves out every result's payload (with_payload false);
	// PayloadKeys returns only those keys of it (with_payload [keys]).
	// Neither: the whole payload. Setting both is an error.
	NoPayload   bool     `json:"-"`
	PayloadKeys []string `json:"-"`
	// Mode: "off" for the store's own answer, "" for the collection's.
	Mode string `json:"mode,omitempty"`
	// IncludeArchived returns the memories a person or a review archived
	// too (Retrievable false, Archived saying why); superseded ones stay
	// out. Age alone never takes a memory out of an answer.
	IncludeArchived bool `json:"include_archived,omitempty"`
	// At, when not zero, asks for the answer as of that time (sent as
	// RFC 3339 in UTC): freshness and tiers computed then, memories first
	// observed later left out, supersessions recorded later not yet
	// applied, and nothing counted as an access. Access counts and
	// confidence stay today's: the store keeps no history of them.
	At time.Time `json:"-"`
}

// MarshalJSON writes explain from NoExplain, count_access from
// NoCountAccess, with_payload from NoPayload and PayloadKeys, and at (in
// UTC) from At; the last three only when they differ from the server's
// defaults.
func (r RetrieveRequest) MarshalJSON() ([]byte, error) {
	type plain RetrieveRequest
	v := struct {
		plain
		Explain     bool   `json:"explain"`
		CountAccess *bool  `json:"count_access,omitempty"`
		WithPayload any    `json:"with_payload,omitempty"`
		At          string `json:"at,omitempty"`
	}{plain: plain(r), Explain: !r.NoExplain}
	if r.NoCountAccess {
		v.CountAccess = new(bool)
	}
	if !r.At.IsZero() {
		v.At = r.At.UTC().Format(time.RFC3339Nano)
	}
	switch {
	case r.NoPayload && len(r.PayloadKeys) > 0:
		return nil, errors.New("client: a retrieve request sets both NoPayload and PayloadKeys")
	case r.NoPayload:
		v.WithPayload = false
	case len(r.PayloadKeys) > 0:
		v.WithPayload = r.PayloadKeys
	}
	return json.Marshal(v)
}

// RetrieveResponse is memrank's ranked answer with how it was reached.
type RetrieveResponse struct {
	Results []Result `json:"result"`
	// Reranked is false when the collection was passed through (not a
	// memory collection); PassThrough says why.
	Reranked    bool   `json:"reranked"`
	PassThrough string `json:"pass_through,omitempty"`
	Mode        string `json:"mode"`
	Detection   string `json:"detection"`
	// Embedder is the model the collection records and its dedup bands
	// (nil when none is recorded).
	Embedder *EmbedderReport `json:"embedder,omitempty"`
	// Guard is the relevance band of a re-ranked answer.
	Guard *GuardReport `json:"guard"`
	// Shadow compares the store's answer with memrank's, in shadow mode
	// (nil otherwise).
	Shadow *ShadowReport `json:"shadow,omitempty"`
	// Dropped are the candidates left out, and why.
	Dropped []Dropped `json:"dropped"`
	// At is the time the answer was computed as of, when the request
	// asked for one (RetrieveRequest.At); zero when it answered as of now.
	At time.Time `json:"at,omitzero"`
	// Empty says why a re-ranked answer is empty although the store had
	// candidates (every one superseded or archived, or the offset past
	// them); "" otherwise.
	Empty string `json:"empty,omitempty"`
}

// EmbedderReport is a collection's recorded embedder and its dedup bands:
// a cosine at or above SameThreshold is the same fact, from
// JudgeThreshold up to it goes to the judge. Nil bands: the server's
// configured ones apply.
type EmbedderReport struct {
	Model          string   `json:"model"`
	SameThreshold  *float64 `json:"same_threshold"`
	JudgeThreshold *float64 `json:"judge_threshold"`
}

// ShadowReport compares the store's order (the results, in shadow mode)
// with the order memrank would have answered.
type ShadowReport struct {
	Store      []ID  `json:"store"`
	Memrank    []ID  `json:"memrank"`
	Overlap    Float `json:"overlap"`
	TopChanged bool  `json:"top_changed"`
	Moved      int   `json:"moved"`
	Dropped    int   `json:"dropped"`
}

// Result is one ranked memory and every factor of its score.
type Result struct {
	ID ID `json:"id"`
	// Score is what memrank ranked the result by: its weight, base_score x
	// freshness_factor x access_boost x confidence factor (Qdrant's score
	// when the collection was passed through).
	Score     Float `json:"score"`
	BaseScore Float `json:"base_score"` // the similarity
	Weight    Float `json:"weight"`
	// Guard is the relevance guard's decision: relevant (counted as read),
	// below_band, below_floor, or off; nil when passed through.
	Guard *string `json:"guard"`
	// The factors; nil when the collection was passed through, and
	// Confidence and Bucket nil for a point that is not a scored memory.
	Confidence *float64 `json:"confidence"`
	// Freshness is f = 0.5^(age / half-life); FreshnessFactor is what age
	// took off the weight for this query (1 - freshness_weight x focus x
	// (1 - f)).
	Freshness       *float64 `json:"freshness"`
	FreshnessFactor *float64 `json:"freshness_factor"`
	AccessCount     *int64   `json:"access_count"`
	AccessBoost     *float64 `json:"access_boost"`
	Render          bool     `json:"render"`
	// BelowGate marks a memory below the confidence gate returned as the
	// best match of the question (nothing passing the gate was near it).
	BelowGate bool `json:"below_gate"`
	// Tier is the tier as of the answer's clock (RetrieveRequest.At, else
	// now); StoredTier the one the payload holds, as the last
	// consolidation wrote it (nil when it holds none).
	Tier       *string `json:"tier"`
	StoredTier *string `json:"stored_tier"`
	Bucket     *string `json:"bucket"`
	// Retrievable is false only for an archived memory returned because
	// IncludeArchived asked for it.
	Retrievable    bool            `json:"retrievable"`
	Protected      bool            `json:"protected"`
	FoldedIDs      []ID            `json:"folded_ids"`
	Dedup          *string         `json:"dedup"`
	JudgeConsulted bool            `json:"judge_consulted"`
	Problems       []string        `json:"problems"`
	Archived       string          `json:"archived,omitempty"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	Explanation    *Explanation    `json:"explanation,omitempty"`
}

// Text is the memory's text from its payload ("" when the payload has
// none or was not asked for).
func (r *Result) Text() string {
	var p struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(r.Payload, &p)
	return p.Text
}

// Explanation is every step from the stored evidence to the score
// (docs/scoring.md). The confidence factors, Source to Confidence, are nil
// for an unscored point (one that is not a scored memory: it has none).
// The other numbers are Floats: DaysToArchive is +Inf for a memory whose
// tier decay never turns archived (protected, or no decay).
//
// The weight is Base x FreshnessFactor x AccessBoost x ConfidenceFactor:
// FreshnessFactor = 1 - FreshnessWeight x Focus x (1 - Freshness), where
// Focus is how much the query is about recent memories, and AccessBoost =
// 1 + AccessWeight x r(AccessCount). Both are bounded: age and reads
// reorder memories of similar relevance, and never take one out of an
// answer.
type Explanation struct {
	Unscored           bool     `json:"unscored"`
	Source             *float64 `json:"source"`
	Observations       int      `json:"observations"`
	Repetition         *float64 `json:"repetition"`
	Extractor          *float64 `json:"extractor"`
	Type               *float64 `json:"type"`
	Grounding          string   `json:"grounding"`
	Formula            *float64 `json:"formula"`
	GroundingPenalty   *float64 `json:"grounding_penalty"`
	Computed           *float64 `json:"computed"`
	StoredConfidence   bool     `json:"stored_confidence"`
	ComputedConfidence bool     `json:"computed_confidence"`
	Confidence         *float64 `json:"confidence"`
	AgeDays            Float    `json:"age_days"`
	HalfLife           Float    `json:"half_life"`
	Freshness          Float    `json:"freshness"`
	FreshnessWeight    Float    `json:"freshness_weight"`
	Focus              Float    `json:"focus"`
	FreshnessFactor    Float    `json:"freshness_factor"`
	IdleDays           Float    `json:"idle_days"`
	DecayFloor         Float    `json:"decay_floor"`
	// DaysToArchive is how many idle days (neither observed nor read) the
	// memory has until its tier label turns archived; +Inf: never. The
	// label is for upkeep: an archived tier stays in answers.
	DaysToArchive    Float `json:"days_to_archive"`
	AccessCount      int64 `json:"access_count"`
	AccessWeight     Float `json:"access_weight"`
	AccessBoost      Float `json:"access_boost"`
	ConfidenceWeight Float `json:"confidence_weight"`
	ConfidenceFactor Float `json:"confidence_factor"`
	Base             Float `json:"base"`
	Weight           Float `json:"weight"`
	// WithinDecayFloor: the memory's freshness since its last use is at or
	// above the decay floor of its confidence (or it is protected).
	WithinDecayFloor bool    `json:"within_decay_floor"`
	Protected        bool    `json:"protected"`
	Tier             string  `json:"tier"`
	Bucket           *string `json:"bucket"`
	BelowGate        bool    `json:"below_gate"`
	Render           bool    `json:"render"`
}

// GuardReport is the relevance band of a re-ranked answer: results whose
// similarity is at least Cutoff are relevant and counted as read. Relevant
// and Beyond count the returned results inside and outside the band,
// Folded the relevant candidates folded into them; Focus is the query's
// focus on recent memories (0 to 1) the weights were computed with. Every
// result is ordered by its weight.
type GuardReport struct {
	Applied      bool   `json:"applied"`
	Relative     bool   `json:"relative"`
	Best         Float  `json:"best"`
	Cutoff       Float  `json:"cutoff"`
	Band         Float  `json:"band"`
	Floor        Float  `json:"floor"`
	RelativeBand Float  `json:"relative_band"`
	From         string `json:"from"`
	Relevant     int    `json:"relevant"`
	Beyond       int    `json:"beyond"`
	Folded       int    `json:"folded"`
	Focus        Float  `json:"focus"`
}

// Dropped is a candidate left out of a re-ranked answer: superseded,
// not_retrievable, archived, below_gate or folded (Into).
type Dropped struct {
	ID        ID     `json:"id"`
	Reason    string `json:"reason"`
	Into      *ID    `json:"into,omitempty"`
	BaseScore Float  `json:"base_score"`
}

// Float is a number the server writes as null when it is not finite (JSON
// has no infinity): null reads as +Inf, as memrank reads its own answers,
// so that a days_to_archive of null ("never archived") is not read as 0
// ("archived now"). Where null means "none" rather than "unbounded" (an
// unscored point's confidence, an average of nothing) the field is a
// *float64 instead.
type Float float64

// UnmarshalJSON reads a number, or null as +Inf.
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Float(math.Inf(1))
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("client: %.40s is not a number", b)
	}
	*f = Float(v)
	return nil
}

// MarshalJSON writes f, null when it is not finite, as the server does.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// ID is a point id: a UUID, or an unsigned integer written in decimal.
type ID string

// UnmarshalJSON reads a string or an integer id.
func (id *ID) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*id = ID(s)
		return nil
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("client: point id %.40s is neither a string nor an unsigned integer", b)
	}
	*id = ID(strconv.FormatUint(n, 10))
	return nil
}

// ForgetReport is what forgetting a session or deleting a memory changed
// (docs/forgetting.md); a repeat answers zero counts.
type ForgetReport struct {
	Collection      string `json:"collection"`
	MemoriesUpdated int    `json:"memories_updated"`
	MemoriesDeleted int    `json:"memories_deleted"`
	AuditRedacted   int    `json:"audit_redacted"`
	AuditDeleted    int    `json:"audit_deleted"`
	AuditKept       int    `json:"audit_kept"`
	AuditPolicy     string `json:"audit_policy"`
}

// Memory is a stored memory with its history: every audit record, oldest
// first.
type Memory struct {
	ID         string          `json:"id"`
	Collection string          `json:"collection"`
	Payload    json.RawMessage `json:"payload"` // as stored, Qdrant's REST shape
	Audit      []AuditRecord   `json:"audit"`
}

// AuditRecord is one change of a memory's confidence, tier or evidence.
type AuditRecord struct {
	MemoryID        string    `json:"memory_id"`
	ObservationID   string    `json:"observation_id"`
	Reason          string    `json:"reason"` // insert, restatement, independent, merge, confirm, correct, ...
	Old             Float     `json:"old"`
	New             Float     `json:"new"`
	OldN            int       `json:"old_n"`
	NewN            int       `json:"new_n"`
	At              time.Time `json:"-"`
	SessionID       string    `json:"session_id"`
	TurnID          string    `json:"turn_id"`
	Source          Float     `json:"source"`
	Extractor       Float     `json:"extractor"`
	Type            Float     `json:"type"`
	Grounding       string    `json:"grounding"`
	Decision        string    `json:"decision"`
	Related         string    `json:"related,omitempty"`
	Forgotten       bool      `json:"forgotten,omitempty"`
	Attribution     string    `json:"attribution,omitempty"`
	AttributionFrom string    `json:"attribution_from,omitempty"`
	Note            string    `json:"note,omitempty"`
	OldTier         string    `json:"old_tier,omitempty"`
	NewTier         string    `json:"new_tier,omitempty"`
}

// UnmarshalJSON reads at, "" meaning unknown.
func (a *AuditRecord) UnmarshalJSON(b []byte) error {
	type plain AuditRecord
	var v struct {
		plain
		At string `json:"at"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*a = AuditRecord(v.plain)
	if v.At != "" {
		t, err := time.Parse(time.RFC3339Nano, v.At)
		if err != nil {
			return fmt.Errorf("client: audit record time %q: %w", v.At, err)
		}
		a.At = t
	}
	return nil
}

// Stats describes a collection (the caller's tenant's part of it).
type Stats struct {
	Collection string `json:"collection"`
	// Method: counted (from payload indexes and stored tiers) or scanned.
	Method     string `json:"method"`
	Memories   int    `json:"memories"`
	Archived   int    `json:"archived"`
	Superseded int    `json:"superseded"`
	// AverageConfidence is nil when no memory is scored.
	AverageConfidence *float64         `json:"average_confidence"`
	Buckets           map[string]int   `json:"buckets"`
	Histogram         []int            `json:"histogram"` // ten bins of 0.1
	Tiers             map[string]int   `json:"tiers"`
	TiersAsOf         *time.Time       `json:"tiers_as_of"` // the last consolidation; nil: never
	Types             map[string]int   `json:"types"`
	Decisions         map[string]int64 `json:"decisions"`
	Judge             JudgeStats       `json:"judge"`
}

// JudgeStats counts the LLM judge's work in the server process.
type JudgeStats struct {
	Calls        int64    `json:"calls"`
	CacheHits    int64    `json:"cache_hits"`
	CacheMisses  int64    `json:"cache_misses"`
	Fallbacks    int64    `json:"fallbacks"`
	CacheHitRate *float64 `json:"cache_hit_rate"`
}
