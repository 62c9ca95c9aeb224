// Package dedup is memrank's write path (docs/write-path.md): it decides
// whether an observation is a new memory, a restatement of a stored one, an
// independent re-observation that raises its confidence, or a contradiction,
// and writes the result with an audit trail.
//
// # Tiers
//
// Engine.Observe validates the observation (a not_supported grounding is
// rejected, not stored), embeds its text (or takes the caller's vector),
// and looks for the fact it states among the stored memories of the same
// collection and tenant that are not superseded:
//
//  1. tier 1: the same text hash (memory.TextHash: NFKC, case folding,
//     punctuation stripped, white space collapsed), through a payload index;
//  2. tier 2: the nearest neighbours; cosine >= SameThreshold (0.92) is the
//     same fact, unless the two texts differ in a negation or a number
//     (seed 001's heuristics), which sends the pair to the judge;
//  3. tier 3: the LLM judge (Judging) for the band [JudgeThreshold,
//     SameThreshold) and for those pairs: same, different or contradicts.
//     A judge that is disabled, over its per-collection budget, slow,
//     failing, unparsable or paused by its provider's Retry-After gives
//     no verdict, and no verdict never merges:
//     the tier-2 decision (a new memory) stands. Verdicts are cached on the
//     ordered pair of text hashes; the read path consults the same cache.
//
// # Decisions
//
// A duplicate is independent when its session is not yet among the
// memory's, it arrives at least MinIndependentGap after the memory's first
// observation, and (RequireSurfaceChange) its wording or modality differs;
// independent raises n by one, a restatement leaves it but still adds its
// session and turn (scoring.Params.Reobserve, docs/scoring.md). Other stored
// memories that turn out to be the same fact are merged into the match
// (docs/scoring.md). A contradiction stores the new claim and supersedes the one
// with the lower confidence x freshness; Correct always supersedes the
// corrected memory. A new memory gets a deterministic id, MemoryID: UUIDv5
// of collection, tenant and text hash, so replicas converge. Observations
// that share an entity with a similar stored memory corroborate it.
//
// # Audit and idempotency
//
// Every change appends records to the companion collection
// <collection>_memrank_audit (AuditSuffix), written in one upsert per
// decision after the memory itself. An observation_id already recorded
// returns the earlier Outcome, marked Replayed, and changes nothing. The
// audit collection also holds the embedder model and dimension the
// collection was written with; a write with another is ErrEmbedderMismatch.
//
// Within a process, every write to one collection and tenant is serialised,
// so concurrent observations end as a serial replay would. Across
// replicas, two concurrent re-observations of one memory can lose an
// increment: the store has no conditional write to prevent it.
package dedup
