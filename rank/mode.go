package rank

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Mode is how the read path serves a collection.
type Mode uint8

// Modes. The zero value is ModeAuto.
const (
	// ModeAuto re-ranks memory collections, recognised with no
	// configuration, and serves every other collection exactly as the store
	// does.
	ModeAuto Mode = iota
	// ModeRerank always re-ranks.
	ModeRerank
	// ModeShadow answers with the store's own answer, computes memrank's
	// order beside it and exports how the two differ (metrics and a
	// sampled log); it writes nothing.
	ModeShadow
	// ModeOff always passes through.
	ModeOff
)

var modeNames = [...]string{"auto", "rerank", "shadow", "off"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// ParseMode reads a mode's name: auto, rerank, shadow or off.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if strings.EqualFold(s, n) {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("rank: unknown mode %q (want auto, rerank, shadow or off)", s)
}

// Guard is the relevance guard: freshness, confidence and the access boost
// re-order memories among the relevant candidates only, so they never lift
// an irrelevant memory over a relevant one. A candidate is relevant (in the
// band) when its base score is within Band of the best candidate's and at
// least Floor; for scores that are not a similarity (fusion, formula,
// sparse dot products) when it is within RelativeBand x |best| of the best.
// Relevant memories come first, by weight; the rest follow in similarity
// order, flagged, so a caller asking for k still gets k.
type Guard struct {
	// Off disables the guard: every candidate is ordered by weight alone,
	// as the seeds' formula does.
	Off bool
	// Band is the width of the relevance band below the best similarity
	// (Cosine and Dot scores), in score units.
	Band float64
	// Floor is the similarity below which no candidate is relevant, however
	// close to the best: a query whose best match is below it is answered in
	// similarity order.
	Floor float64
	// RelativeBand is the band for scores without a fixed scale (fusion,
	// formula, sparse vectors), as a fraction of the best score's magnitude.
	RelativeBand float64
}

// DefaultGuard is the guard for an embedder memrank knows nothing about:
// chosen with `memrank eval` on the shipped labeled set, whose similarities
// model a modern embedding model (see examples/eval).
func DefaultGuard() Guard {
	return Guard{Band: 0.015, Floor: 0.50, RelativeBand: 0.025}
}

// Validate reports a guard the ranker cannot use.
func (g Guard) Validate() error {
	switch {
	case g.Off:
		return nil
	case !(g.Band >= 0) || math.IsInf(g.Band, 0):
		return fmt.Errorf("rank: guard band: %v is not a non-negative number", g.Band)
	case math.IsNaN(g.Floor) || math.IsInf(g.Floor, 0):
		return fmt.Errorf("rank: guard floor: %v is not a number", g.Floor)
	case !(g.RelativeBand >= 0 && g.RelativeBand <= 1):
		return fmt.Errorf("rank: guard relative band: %v is outside [0, 1]", g.RelativeBand)
	}
	return nil
}

// CollectionConfig is one collection's setting.
type CollectionConfig struct {
	Mode Mode
	// Guard replaces the embedder's or the default guard for this
	// collection; nil keeps it.
	Guard *Guard
}

// DetectConfig configures how memory collections are recognised.
type DetectConfig struct {
	// SampleSize is how many points are read to recognise a collection
	// without an audit companion (default 32).
	SampleSize int
	// TTL is how long a collection's verdict is kept (default 1 minute); a
	// collection can be deleted and created again as something else.
	TTL time.Duration
	// CacheSize bounds the verdicts kept (default 1024).
	CacheSize int
	// Timeout bounds one look-up (default 5s); FailureTTL is how long a
	// failed one is remembered before the store is asked again (default 5s),
	// so an unreadable collection does not cost every query extra calls.
	Timeout    time.Duration
	FailureTTL time.Duration
	// CompanionOnly recognises memory collections by their audit companion
	// alone, never by sampling their points: with tenancy on, a tenant
	// could otherwise write points that change how every tenant's queries
	// are served.
	CompanionOnly bool
}

// ShadowConfig configures shadow mode.
type ShadowConfig struct {
	// SampleRate is the fraction of a shadowed collection's queries that
	// memrank also ranks (default 1): each costs a second, oversampled
	// upstream query.
	SampleRate float64
	// LogInterval is the least time between two logged comparisons (default
	// 10s); every comparison is counted in the metrics.
	LogInterval time.Duration
}
