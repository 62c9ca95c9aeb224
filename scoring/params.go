// Package scoring is memrank's math: confidence, repetition, extractor
// quality, grounding, confirmation, merge, re-observation, freshness, access
// boost, retrieval weight, the retrieval and render gates, the decay floor,
// protection, tiers and stats buckets (docs/scoring.md).
//
// Everything here is a pure function of its arguments. There is no I/O and no
// clock: the current time is always passed in, so the same inputs give the
// same numbers in tests, in the CLI and in the server.
//
// Where the seeds print numbers that do not follow from their own formulas,
// the formulas win; the README lists every such departure (docs/scoring.md).
package scoring

import (
	"errors"
	"fmt"
	"math"
	"regexp"
)

// Canonical names of the built-in levels. Tables are keyed by these strings so
// that a deployment can add its own levels through configuration.
const (
	SourceDirect          = "direct"
	SourceConfirmed       = "confirmed"
	SourceStrongInference = "strong_inference"
	SourceWeakInference   = "weak_inference"
	SourceSpeculation     = "speculation"

	TypeEntity     = "entity"
	TypeEvent      = "event"
	TypeFact       = "fact"
	TypePreference = "preference"
	TypeRelation   = "relation"
)

// Grounding is how well the source span supports a memory (docs/scoring.md).
type Grounding uint8

// Grounding verdicts. NotSupported memories are rejected at write time; a
// stored one (written by someone else) is penalised like Partial.
const (
	GroundingSupported Grounding = iota
	GroundingPartial
	GroundingUnknown
	GroundingNotSupported
)

var groundingNames = [...]string{"supported", "partial", "unknown", "not_supported"}

func (g Grounding) String() string {
	if int(g) < len(groundingNames) {
		return groundingNames[g]
	}
	return fmt.Sprintf("grounding(%d)", g)
}

// Weights of the confidence formula (docs/scoring.md). They must sum to 1.
type Weights struct {
	Source     float64 `koanf:"source"`
	Repetition float64 `koanf:"repetition"`
	Extractor  float64 `koanf:"extractor"`
	Type       float64 `koanf:"type"`
}

// ExtractorModel maps extractor model names matching Pattern to a quality.
type ExtractorModel struct {
	Pattern *regexp.Regexp
	Quality float64
}

// GroundingParams are the write-time grounding penalties and their floor.
type GroundingParams struct {
	Partial float64 `koanf:"partial"`
	Unknown float64 `koanf:"unknown"`
	Floor   float64 `koanf:"floor"`
}

// DecayParams hold the freshness half-lives, in days.
type DecayParams struct {
	DefaultHalfLife float64            `koanf:"default_half_life"`
	HalfLives       map[string]float64 `koanf:"half_lives"`      // decay category -> half-life
	TypeCategories  map[string]string  `koanf:"type_categories"` // memory type -> decay category
	FloorK          float64            `koanf:"floor_k"`         // decay floor slope k of docs/scoring.md
}

// TierParams are the lower bounds of c x f for each tier (docs/scoring.md).
type TierParams struct {
	Active  float64 `koanf:"active"`  // above: active
	Dormant float64 `koanf:"dormant"` // at or above: dormant
	Stale   float64 `koanf:"stale"`   // at or above: stale; below: archived
}

// Params is every number and table the math uses. DefaultParams returns the
// seeds' values; configuration builds its own.
type Params struct {
	Weights      Weights
	SourceLevels map[string]float64
	TypePriors   map[string]float64

	ExtractorModels  []ExtractorModel
	ExtractorUnknown float64

	Grounding GroundingParams

	ConfirmSource float64 // s is raised to at least this on confirmation
	MaxConfidence float64 // confirmation clamps confidence here

	RetrievalGate float64
	RenderGate    float64

	// ConfidenceWeight is how much confidence scales the retrieval weight:
	// a factor 1 - w + w x confidence. 0 is the seeds' formula, where
	// confidence only gates.
	ConfidenceWeight float64
	// FreshnessWeight bounds what age takes off the weight, AccessWeight
	// what reads add (docs/scoring.md).
	FreshnessWeight float64
	AccessWeight    float64
	// FocusTop, FocusPool and FocusFloor measure a query's focus on recent
	// memories (Focus).
	FocusTop   int
	FocusPool  int
	FocusFloor float64

	Decay DecayParams

	ProtectedConfidence   float64
	ProtectedObservations int

	Tiers TierParams

	StatsHigh   float64
	StatsMedium float64
}

// CompileExtractorPattern compiles a model-name pattern the way memrank
// matches it: case-insensitively, anywhere in the name.
func CompileExtractorPattern(pattern string) (*regexp.Regexp, error) {
	return regexp.Compile("(?i)" + pattern)
}

// DefaultParams returns the seeds' values, compiled from DefaultConfig.
func DefaultParams() *Params {
	p, err := DefaultConfig().Params()
	if err != nil {
		panic("scoring: the default configuration is invalid: " + err.Error()) // a programming error, caught by the tests
	}
	return p
}

// Validate reports parameters the math cannot work with. Config.Validate
// gives the user-facing, key-named errors; this guards callers that build
// Params by hand.
func (p *Params) Validate() error {
	var errs []error
	unit := func(name string, v float64) {
		if !(v >= 0 && v <= 1) {
			errs = append(errs, fmt.Errorf("scoring: %s: %v is outside [0, 1]", name, v))
		}
	}
	w := p.Weights
	for _, c := range []struct {
		n string
		v float64
	}{{"weights.source", w.Source}, {"weights.repetition", w.Repetition}, {"weights.extractor", w.Extractor}, {"weights.type", w.Type}} {
		unit(c.n, c.v)
	}
	if sum := w.Source + w.Repetition + w.Extractor + w.Type; !(math.Abs(sum-1) <= weightTolerance) {
		errs = append(errs, fmt.Errorf("scoring: weights: sum is %v, want 1 (within 1e-6)", sum))
	}
	for k, v := range p.SourceLevels {
		unit("source_levels."+k, v)
	}
	for k, v := range p.TypePriors {
		unit("type_priors."+k, v)
	}
	for i, m := range p.ExtractorModels {
		if m.Pattern == nil {
			errs = append(errs, fmt.Errorf("scoring: extractor.models[%d]: nil pattern", i))
		}
		unit(fmt.Sprintf("extractor.models[%d].quality", i), m.Quality)
	}
	unit("extractor.unknown", p.ExtractorUnknown)
	unit("grounding.partial", p.Grounding.Partial)
	unit("grounding.unknown", p.Grounding.Unknown)
	unit("grounding.floor", p.Grounding.Floor)
	unit("confirm.source", p.ConfirmSource)
	unit("confirm.max_confidence", p.MaxConfidence)
	unit("gates.retrieval", p.RetrievalGate)
	unit("gates.render", p.RenderGate)
	unit("confidence_weight", p.ConfidenceWeight)
	unit("freshness_weight", p.FreshnessWeight)
	unit("access_weight", p.AccessWeight)
	unit("focus.floor", p.FocusFloor)
	if p.FocusTop < 1 || p.FocusPool < p.FocusTop {
		errs = append(errs, fmt.Errorf("scoring: focus: top %d, pool %d: want 1 <= top <= pool", p.FocusTop, p.FocusPool))
	}
	unit("protected.min_confidence", p.ProtectedConfidence)
	unit("tiers.active", p.Tiers.Active)
	unit("tiers.dormant", p.Tiers.Dormant)
	unit("tiers.stale", p.Tiers.Stale)
	unit("stats.high", p.StatsHigh)
	unit("stats.medium", p.StatsMedium)
	if !(p.Decay.DefaultHalfLife > 0) || math.IsInf(p.Decay.DefaultHalfLife, 0) {
		errs = append(errs, fmt.Errorf("scoring: decay.default_half_life: %v is not positive", p.Decay.DefaultHalfLife))
	}
	for k, v := range p.Decay.HalfLives {
		if !(v > 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("scoring: decay.half_lives.%s: %v is not positive", k, v))
		}
	}
	if !(p.Decay.FloorK > 0) || math.IsInf(p.Decay.FloorK, 0) {
		errs = append(errs, fmt.Errorf("scoring: decay.floor_k: %v is not positive", p.Decay.FloorK))
	}
	return errors.Join(errs...)
}
