package rank

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/memrank/memrank/config/check"
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
	return 0, fmt.Errorf("%s is not one of auto, rerank, shadow, off", strconv.Quote(s))
}

// MarshalText writes the mode's name, as the configuration file has it.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads a mode's name (ParseMode).
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Guard is the relevance guard: which returned results count as read (a
// read of an irrelevant memory would raise its access boost for the next
// question too). A candidate is relevant (in the band) when its base score
// is within Band of the best candidate's and at least Floor; for scores
// that are not a similarity (fusion, formula, sparse dot products) when it
// is within RelativeBand x |best| of the best, and then nothing is counted.
// Every result is ordered by its weight whatever the guard says; the band
// also decides when the confidence gate yields to the best match.
type Guard struct {
	// Off disables the guard: every returned result counts as read.
	Off bool `koanf:"off"`
	// Band is the width of the relevance band below the best similarity
	// (Cosine and Dot scores), in score units.
	Band float64 `koanf:"band"`
	// Floor is the similarity below which no candidate is relevant, however
	// close to the best: nothing is counted for a query whose best match is
	// below it.
	Floor float64 `koanf:"floor"`
	// RelativeBand is the band for scores without a fixed scale (fusion,
	// formula, sparse vectors), as a fraction of the best score's magnitude.
	RelativeBand float64 `koanf:"relative_band"`
}

// DefaultGuard is the guard for an embedder memrank knows nothing about:
// chosen with `memrank eval` on the shipped labeled set, whose similarities
// model a modern embedding model (see examples/eval).
func DefaultGuard() Guard {
	return Guard{Band: 0.015, Floor: 0.50, RelativeBand: 0.025}
}

// Validate reports band, floor and relative_band values the guard cannot
// use.
func (g Guard) Validate() error {
	var k check.Checker
	g.check(&k, "")
	return k.Err()
}

// check adds the guard's problems, under key.
func (g Guard) check(k *check.Checker, key string) {
	GuardPatch{Band: &g.Band, Floor: &g.Floor, RelativeBand: &g.RelativeBand}.check(k, key)
}

// GuardPatch changes some settings of a guard (per collection, per
// embedder); a nil member keeps the guard's.
type GuardPatch struct {
	Off          *bool    `koanf:"off"`
	Band         *float64 `koanf:"band"`
	Floor        *float64 `koanf:"floor"`
	RelativeBand *float64 `koanf:"relative_band"`
}

// Apply returns g with the settings p gives replaced.
func (p GuardPatch) Apply(g Guard) Guard {
	if p.Off != nil {
		g.Off = *p.Off
	}
	if p.Band != nil {
		g.Band = *p.Band
	}
	if p.Floor != nil {
		g.Floor = *p.Floor
	}
	if p.RelativeBand != nil {
		g.RelativeBand = *p.RelativeBand
	}
	return g
}

// check adds the problems of the settings p gives, under key.
func (p GuardPatch) check(k *check.Checker, key string) {
	if key != "" {
		key += "."
	}
	if b := p.Band; b != nil && (!(*b >= 0) || math.IsInf(*b, 0)) {
		k.Add(key+"band", "%s is not a non-negative number", check.Float(*b))
	}
	if f := p.Floor; f != nil && (math.IsNaN(*f) || math.IsInf(*f, 0)) {
		k.Add(key+"floor", "%s is not a finite number", check.Float(*f))
	}
	if rb := p.RelativeBand; rb != nil {
		k.Unit(key+"relative_band", *rb)
	}
}

// CollectionConfig is one collection's setting.
type CollectionConfig struct {
	// Mode replaces Config.Mode for the collection (ModeAuto: Config.Mode).
	Mode Mode `koanf:"mode"`
	// Guard changes the guard for this collection: its settings replace
	// Config.Guard's, and an embedder's guard no longer applies.
	Guard GuardPatch `koanf:"guard"`
}

// DetectConfig configures how memory collections are recognised.
type DetectConfig struct {
	// SampleSize is how many points are read to recognise a collection
	// without an audit companion.
	SampleSize int `koanf:"sample_size"`
	// TTL is how long a collection's verdict is kept; a collection can be
	// deleted and created again as something else.
	TTL time.Duration `koanf:"ttl"`
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
	// memrank also ranks: each costs a second, oversampled upstream query.
	SampleRate float64 `koanf:"sample_rate"`
	// LogInterval is the least time between two logged comparisons; every
	// comparison is counted in the metrics.
	LogInterval time.Duration `koanf:"log_interval"`
}
