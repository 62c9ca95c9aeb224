package rank

import (
	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/scoring"
)

// Result is a ranked answer to one query.
type Result struct {
	// Points are what the caller gets: Score is the weight (or Qdrant's
	// score when passed through), payload and vectors per the caller's
	// selectors.
	Points []*qdrant.ScoredPoint
	// PayloadWire, when not nil, has one entry per point: where not nil,
	// Points[i].Payload as the upstream sent its bytes (a ScoredPoint's
	// payload fields), which a gRPC reply may copy instead of encoding the
	// map (qdrantwire.EncodeScoredWire). Set when the caller asked for
	// whole payloads and the points came from the candidate cache.
	PayloadWire [][]byte
	// Explanations has one entry per point, in the same order (nil under
	// PointsOnly).
	Explanations []Explanation
	Reranked     bool
	// PassThrough says why the answer was not re-ranked ("" when it was);
	// one of the PassThrough* constants.
	PassThrough string
	// Requested is the number of candidates asked of the upstream and
	// Candidates the number it returned.
	Requested  uint64
	Candidates int
	// Detection is how the collection was recognised and which mode and
	// guard apply.
	Detection Detection
	// Guard is the relevance band of a re-ranked answer.
	Guard GuardReport
	// Shadow compares the store's answer with memrank's, in ModeShadow
	// (nil otherwise, or when this query was not sampled).
	Shadow *ShadowReport
	// Empty says why a re-ranked answer with candidates is empty (every
	// candidate excluded, or the offset past the results); "" otherwise.
	Empty string
	// Dropped are the candidates left out of the answer and why, so that
	// a query for 3 that returns 2 says what became of the rest: excluded
	// (superseded, not_retrievable, archived), below_gate,
	// folded into another result; candidates past the limit are not
	// listed. Nil under PointsOnly.
	Dropped []Dropped
}

// Dropped is one candidate left out of an answer.
type Dropped struct {
	ID        *qdrant.PointId
	Reason    string
	Into      *qdrant.PointId // the result it was folded into (folded only)
	BaseScore float64
}

// GroupsResult is a ranked answer to a grouped query.
type GroupsResult struct {
	Groups []*qdrant.PointGroup
	// Explanations[i][j] explains Groups[i].Hits[j].
	Explanations [][]Explanation
	Reranked     bool
	PassThrough  string
	Requested    uint64 // groups x group size asked of the upstream
	Candidates   int    // hits it returned, over all groups
	Detection    Detection
	Guard        GuardReport
}

// Explanation is every factor behind one returned point.
type Explanation struct {
	ID *qdrant.PointId
	// Weight is base x freshness x boost x confidence factor.
	Weight    float64
	BaseScore float64 // the base the weight started from
	// Score is what the point is returned with: its group's weight (its
	// own, unless it is shown for a folded group led by a nearer
	// duplicate), so scores never increase down the list.
	Score float64
	// Guard is where the relevance guard placed the point (its group's
	// best member): whether it counts as read.
	Guard GuardDecision
	// Explanation holds every scoring factor: confidence and its parts,
	// freshness, access count and boost, tier, gates. It is zero for a
	// passed-through point.
	scoring.Explanation
	// FoldedIDs are the duplicates folded into this result, and
	// FoldedTiers how each one was found ("text_hash", "vector",
	// "judge_cache").
	FoldedIDs   []*qdrant.PointId
	FoldedTiers []string
	// DedupTier is the least certain tier among the folds ("" when nothing
	// was folded): "judge_cache" over "vector" over "text_hash".
	DedupTier string
	// JudgeConsulted is true when a cached judge verdict decided a pair in
	// the judge band involving this result; false when there was no verdict
	// cache, no cached verdict for such a pair, or no such pair. JudgeNote
	// says which, in words ("" when no pair was in the band).
	JudgeConsulted bool
	JudgeNote      string
	// Problems are the memory's payload decoding problems.
	Problems []string
	// Archived says why the memory is out of answers (archived by a person
	// or a review, or stored as not retrievable); "" for a live memory. Only
	// a query under WithArchived returns such memories.
	Archived string
	// StoredTier is the tier the payload holds (the last consolidation's),
	// "" when it holds none; Explanation.Tier is the tier at the answer's
	// clock.
	StoredTier string
}

// Why a request was passed through un-reranked.
const (
	PassThroughNotMemory       = "not a memory collection"
	PassThroughScroll          = "scroll (no query)"
	PassThroughOrderBy         = "order_by"
	PassThroughSample          = "sample"
	PassThroughDiscover        = "discover"
	PassThroughContext         = "context"
	PassThroughMMR             = "mmr (the order is the diversity selection)"
	PassThroughFeedback        = "relevance feedback"
	PassThroughEuclid          = "euclid distance"
	PassThroughManhattan       = "manhattan distance"
	PassThroughDistance        = "unknown distance"
	PassThroughUnknownVector   = "unknown vector name"
	PassThroughUnknownQuery    = "unsupported query kind"
	PassThroughNoPrefetch      = "fusion or formula without prefetch"
	PassThroughPrefetchNoQuery = "prefetch without a query"
	PassThroughBadSelector     = "payload selector not understood"
	PassThroughLimitZero       = "limit 0"
	PassThroughNoInfo          = "collection info unavailable"
	PassThroughModeOff         = "mode off"
	PassThroughShadow          = "shadow mode: the store's answer"
)
