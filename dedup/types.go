package dedup

import (
	"errors"
	"fmt"
	"time"
)

// Decision is what the write path did with an observation.
type Decision string

// Decisions.
const (
	DecisionInserted      Decision = "inserted"      // a new memory
	DecisionRestatement   Decision = "restatement"   // the same fact, not independent: n unchanged
	DecisionIndependent   Decision = "independent"   // the same fact, independently re-observed: n + 1
	DecisionContradiction Decision = "contradiction" // stored, and one of the two claims superseded
	DecisionRejected      Decision = "rejected"      // not stored (grounding not_supported)
	DecisionConfirmed     Decision = "confirmed"     // an explicit confirmation (docs/scoring.md)
	DecisionCorrected     Decision = "corrected"     // an explicit correction superseded the original
	DecisionForgotten     Decision = "forgotten"     // a session's evidence was removed (docs/forgetting.md)
	DecisionDeleted       Decision = "deleted"       // a memory was deleted on request (docs/forgetting.md)
	DecisionUsed          Decision = "used"          // an agent used the memory and the user did not correct it
)

// Observation is one candidate memory offered to the write path: what an
// extractor saw, in which session and turn, and how sure it was.
type Observation struct {
	Collection string
	// Tenant scopes the write when tenancy is on (the tenancy key's value);
	// "" when it is off.
	Tenant string
	// ObservationID makes the observation idempotent: one already in the
	// audit returns the earlier outcome and changes nothing. Optional.
	ObservationID    string
	Text             string
	MemoryType       string // entity | event | fact | preference | relation; "" = fact
	Source           string // direct | confirmed | strong_inference | weak_inference | speculation; "" = weak_inference
	ExtractorModel   string
	ExtractorLogprob *float64 // mean token log-probability, when the extractor reports it
	Grounding        string   // supported | partial | unknown | not_supported; "" = supported
	SessionID        string
	TurnID           string
	ObservedAt       time.Time // zero: now
	Modality         string    // chat, calendar, email, document...; "" = unspecified
	Entities         []string
	DecayCategory    string
	// Vector is the caller's embedding of Text; nil embeds Text with the
	// configured embedder.
	Vector []float32
	// Corrects is the id of a memory this observation corrects: it always
	// wins the contradiction and supersedes that memory.
	Corrects string
	// Speaker is who said the text (a name, as "Name:" would give it):
	// the subject of a first-person statement, so that two people's
	// statements never fold together (docs/write-path.md). "" unknown:
	// then a leading "Name:" of the text is the speaker, if it has one.
	Speaker string
	// Attribution is who asserted the claim, as the extractor saw it:
	// "self" (the speaker, first hand) or "reported" (hearsay: "I heard
	// that..."), whose source is capped (docs/write-path.md); "" unknown,
	// when the hearsay heuristics may decide.
	Attribution string
}

// Confirmation is an explicit confirmation of a stored memory (docs/scoring.md).
type Confirmation struct {
	Collection    string
	Tenant        string
	MemoryID      string
	ObservationID string // optional idempotency key
	// SessionID is who confirms: a memory counts one confirmation per
	// session, and one for all those without a session.
	SessionID string
	TurnID    string
	At        time.Time // zero: now
}

// JudgeInfo says whether and how the LLM judge took part in a decision.
type JudgeInfo struct {
	Verdict string `json:"verdict"`          // same | different | contradicts; "" when no verdict was used
	Cached  bool   `json:"cached"`           // the verdict came from the verdict cache
	Reason  string `json:"reason,omitempty"` // the judge's reason, or why there is no verdict
	// Fallback is set when the judge was needed and no verdict could be
	// used: "disabled", "budget", "timeout", "error", "unparsable",
	// "paused". The tier-2 decision (never a merge) was taken instead.
	Fallback string `json:"fallback,omitempty"`
}

// Outcome is the write path's answer to an observation, confirmation or
// correction. Its JSON (MarshalJSON) is the native API's answer; the tags
// name its members for reading it back.
type Outcome struct {
	Decision     Decision `json:"decision"`
	MemoryID     string   `json:"memory_id"`    // the memory the observation ended up in
	Confidence   float64  `json:"confidence"`   // that memory's stored confidence afterwards
	Observations int      `json:"observations"` // its n afterwards
	// Tier is the dedup tier that found the match: 1 text hash, 2 vector
	// similarity, 3 the judge; 0 when nothing matched (a new memory) or for
	// confirm and correct by id.
	Tier int `json:"dedup_tier"`
	// Judge is nil when the judge was not needed.
	Judge *JudgeInfo `json:"judge"`
	// Superseded is the memory superseded by a contradiction or a
	// correction, "" when none was.
	Superseded string `json:"superseded,omitempty"`
	// Contradicts is the stored memory this observation negates when no
	// judge resolved it: both are kept, the contradiction recorded on each.
	Contradicts string `json:"contradicts,omitempty"`
	// Merged lists stored memories folded into MemoryID (docs/scoring.md).
	Merged []string `json:"merged,omitempty"`
	// Reason explains a rejection.
	Reason string `json:"reason,omitempty"`
	// Replayed is true when the observation_id had been seen before: the
	// earlier outcome is returned and nothing changed.
	Replayed bool `json:"replayed"`
	// AlreadyCounted is true on a confirmation whose session had already
	// confirmed the memory (or, without a session, when one without a
	// session had): n is left as it was (docs/write-path.md, "Confirm").
	AlreadyCounted bool `json:"already_counted,omitempty"`
	// CreatedCollection is true when this observation created the
	// collection (and its audit companion): a misspelt name shows here.
	CreatedCollection bool `json:"created_collection,omitempty"`
	// Attribution is set when the observation was hearsay: where that was
	// learnt and whether its source was capped.
	Attribution *AttributionInfo `json:"attribution,omitempty"`
	// Flags are review marks this decision set on the memory
	// ("recurring_event").
	Flags []string `json:"flags,omitempty"`
	// Uses is the memory's use count after a "used" decision.
	Uses int `json:"uses,omitempty"`
	// Warnings say what the caller may not expect of the stored memory
	// (its confidence below the retrieval gate).
	Warnings []string `json:"warnings,omitempty"`
}

// AuditRecord is one confidence change of one memory (docs/write-path.md),
// stored as a point of the companion collection <collection>_memrank_audit.
type AuditRecord struct {
	MemoryID      string
	ObservationID string
	Reason        string // insert | restatement | independent | merge | confirm | correct | contradiction | superseded
	Old           float64
	New           float64
	OldN          int
	NewN          int
	At            time.Time
	SessionID     string
	TurnID        string
	Source        float64 // the observation's s, e, t and grounding
	Extractor     float64
	Type          float64
	Grounding     string
	Decision      Decision
	Related       string // the other memory of a merge or contradiction

	// The rest is what the observation brought, recorded so that forgetting
	// a session can recompute a memory from the evidence that remains
	// (docs/forgetting.md). Records written before these fields existed
	// have Evidence false.
	Evidence         bool
	TextHash         string // the observation's text hash (the independence rule's surface change)
	Modality         string
	Entities         []string
	SourceName       string // the names behind Source, Type and Extractor
	TypeName         string
	ExtractorModel   string
	ExtractorLogprob *float64
	// Forgotten marks a record whose session was forgotten, or whose memory
	// was deleted: it no longer counts as evidence.
	Forgotten bool
	// Attribution is "reported" for hearsay, "self" when the extractor said
	// so; AttributionFrom says who decided: "extractor" or "heuristic".
	Attribution     string
	AttributionFrom string
	// Note says what an evidence rule did (a hearsay cap, a flag, a
	// corroboration boost, a contradiction penalty).
	Note string
	// OldTier and NewTier are a tier transition's (reason tier, written by
	// consolidation, or archive, a reviewer's): "" on the write path's
	// records.
	OldTier string
	NewTier string
}

// MemoryView is a stored memory with its audit trail, oldest first.
type MemoryView struct {
	ID         string
	Collection string
	// Payload is the point's payload as JSON (Qdrant's REST shape).
	Payload []byte
	Audit   []AuditRecord
}

// Stats describes one collection (one tenant's part of it when tenancy is
// on) and this process's judge.
type Stats struct {
	Collection string
	// Method is "counted" (payload indexes, stored tiers) or "scanned"
	// (every payload scored at the engine's clock).
	Method   string
	Memories int // memories answers draw from: neither superseded nor archived
	// Archived counts the memories a person or a review archived (out of
	// answers), apart from Memories; Tiers["archived"] counts the memories
	// whose tier label is archived, which answers still return.
	Archived   int
	Superseded int            // superseded memories
	Buckets    map[string]int // stats bucket (high | medium | low | unscored) -> memories
	// Average is the mean confidence of the scored memories (NaN: none);
	// counted, it is within 0.005 of the exact mean.
	Average float64
	// Histogram counts the scored memories' confidence in ten bins of 0.1:
	// [0, 0.1), ..., [0.9, 1].
	Histogram []int
	Tiers     map[string]int // tier (active | dormant | stale | archived) -> memories
	// TiersAsOf is when the tiers were computed: the last consolidation for
	// counted stats (zero: never consolidated, tiers as written), now for
	// scanned ones.
	TiersAsOf time.Time
	Types     map[string]int // memory type -> memories
	Judge     JudgeStats
	// Decisions counts this process's write decisions in the collection
	// since it started: decision -> observations (confirmations, uses).
	Decisions map[string]int64
}

// JudgeStats counts the judge's work in this process.
type JudgeStats struct {
	Calls        int64 // calls made to the LLM
	CacheHits    int64
	CacheMisses  int64
	Fallbacks    int64 // verdicts needed and not obtained (timeouts, errors, budget, disabled)
	CacheHitRate float64
}

// Errors at the write path's edge. The fronts map them to statuses.
var (
	// ErrNotFound: the memory (or collection) does not exist.
	ErrNotFound = errors.New("dedup: not found")
	// ErrEmbedderMismatch: the collection was written with another embedder
	// model or dimension.
	ErrEmbedderMismatch = errors.New("embedder mismatch")
)

// InputError is an observation the write path refuses: Field names the bad
// field. Its text is safe to show the caller.
type InputError struct {
	Field  string
	Reason string
}

func (e *InputError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Reason) }
