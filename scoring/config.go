package scoring

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"

	"github.com/memrank/memrank/config/check"
)

// Config is the scoring section of memrank's configuration: every number
// and table of the math as plain values. DefaultConfig holds the seeds'
// values (the one place they are written), Validate names each bad key, and
// Params compiles it into the Params the math runs on.
type Config struct {
	Weights      Weights            `koanf:"weights"`
	SourceLevels map[string]float64 `koanf:"source_levels"` // source level name -> s
	TypePriors   map[string]float64 `koanf:"type_priors"`   // memory type -> t
	Extractor    ExtractorConfig    `koanf:"extractor"`
	Grounding    GroundingParams    `koanf:"grounding"`
	Confirm      ConfirmConfig      `koanf:"confirm"`
	Gates        GatesConfig        `koanf:"gates"`
	// ConfidenceWeight is how much confidence scales the retrieval weight:
	// a factor 1 - w + w x confidence; 0 is the seeds' formula (confidence
	// only gates).
	ConfidenceWeight float64 `koanf:"confidence_weight"`
	// FreshnessWeight is the most age takes off the weight: a factor
	// 1 - w x focus x (1 - freshness), never below 1 - w.
	FreshnessWeight float64 `koanf:"freshness_weight"`
	// AccessWeight is the most reads add to the weight: a factor
	// 1 + w x r(access count), never above 1 + w.
	AccessWeight float64 `koanf:"access_weight"`
	// Focus says how a query's focus on recent memories is measured.
	Focus     FocusConfig     `koanf:"focus"`
	Decay     DecayParams     `koanf:"decay"`
	Protected ProtectedConfig `koanf:"protected"`
	Tiers     TierParams      `koanf:"tiers"`
	Stats     StatsConfig     `koanf:"stats"`
}

// ExtractorConfig maps an extractor model name to a quality e (docs/scoring.md).
type ExtractorConfig struct {
	Unknown float64 `koanf:"unknown"` // quality of a model no pattern matches
	// Models are tried in order; the first pattern that matches the model
	// name, case-insensitively and anywhere in it, gives the quality. A list
	// given in a file or the environment replaces this list entirely.
	Models []ExtractorPattern `koanf:"models"`
}

// ExtractorPattern is one row of the extractor table. Pattern is a Go
// regexp without flags.
type ExtractorPattern struct {
	Pattern string  `koanf:"pattern" required:"true"`
	Quality float64 `koanf:"quality" required:"true"`
}

// ConfirmConfig is what an explicit confirmation does (docs/scoring.md).
type ConfirmConfig struct {
	Source        float64 `koanf:"source"`         // s is raised to at least this
	MaxConfidence float64 `koanf:"max_confidence"` // confidence is clamped here
}

// GatesConfig are the retrieval and render thresholds (docs/scoring.md).
type GatesConfig struct {
	Retrieval float64 `koanf:"retrieval"`
	Render    float64 `koanf:"render"`
}

// FocusConfig measures a query's focus on recent memories (docs/scoring.md):
// how much fresher its Top most similar candidates are than its Pool most
// similar ones, never below Floor. A pool of a fixed size keeps the focus,
// and so the first answer, the same whatever limit the caller asks for.
type FocusConfig struct {
	Top   int     `koanf:"top"`
	Pool  int     `koanf:"pool"`
	Floor float64 `koanf:"floor"`
}

// ProtectedConfig says which memories are never archived by decay (docs/scoring.md).
type ProtectedConfig struct {
	MinConfidence   float64 `koanf:"min_confidence"`
	MinObservations int     `koanf:"min_observations"`
}

// StatsConfig are the confidence buckets of the stats endpoint (docs/scoring.md).
type StatsConfig struct {
	High   float64 `koanf:"high"`
	Medium float64 `koanf:"medium"`
}

// defaultExtractorPatterns are the seeds' model-name classes (seed 000), in
// match order: the first pattern that matches a model name wins.
var defaultExtractorPatterns = []ExtractorPattern{
	{`claude.*(sonnet|opus)`, 0.90},
	{`gpt-?4|gpt-?5|\bo[134]\b`, 0.85},
	{`claude.*haiku`, 0.80},
	{`gpt-?3\.5`, 0.65},
}

// DefaultConfig returns the seeds' values (seeds 000, 002, 003, 004 and
// docs/scoring.md). Every call returns fresh maps and slices.
func DefaultConfig() Config {
	return Config{
		Weights: Weights{Source: 0.45, Repetition: 0.20, Extractor: 0.25, Type: 0.10},
		SourceLevels: map[string]float64{
			SourceDirect:          0.95,
			SourceConfirmed:       0.80,
			SourceStrongInference: 0.70,
			SourceWeakInference:   0.50,
			SourceSpeculation:     0.30,
		},
		TypePriors: map[string]float64{
			TypeEntity:     0.90,
			TypeEvent:      0.85,
			TypeFact:       0.80,
			TypePreference: 0.75,
			TypeRelation:   0.70,
		},
		Extractor: ExtractorConfig{Unknown: 0.65, Models: slices.Clone(defaultExtractorPatterns)},
		Grounding: GroundingParams{Partial: 0.15, Unknown: 0.10, Floor: 0.30},
		Confirm:   ConfirmConfig{Source: 0.80, MaxConfidence: 0.99},
		Gates:     GatesConfig{Retrieval: 0.50, Render: 0.40},
		// Chosen with memrank eval on LoCoMo's dev conversations and the
		// shipped labeled set together (docs/scoring.md).
		FreshnessWeight: 0.7,
		AccessWeight:    0.02,
		Focus:           FocusConfig{Top: 5, Pool: 40, Floor: 0},
		Decay: DecayParams{
			DefaultHalfLife: 90,
			HalfLives: map[string]float64{
				"preference":     365,
				"relationship":   180,
				"contact":        180,
				"technical":      120,
				"opinion":        90,
				"price":          60,
				"project_status": 30,
			},
			TypeCategories: map[string]string{},
			FloorK:         1.25,
		},
		Protected: ProtectedConfig{MinConfidence: 0.80, MinObservations: 3},
		Tiers:     TierParams{Active: 0.60, Dormant: 0.30, Stale: 0.10},
		Stats:     StatsConfig{High: 0.80, Medium: 0.50},
	}
}

// weightTolerance is how far the confidence weights may sum from 1.
const weightTolerance = 1e-6

// Validate reports every bad value, each naming its key within the section.
func (c Config) Validate() error {
	var k check.Checker
	w := c.Weights
	k.Unit("weights.source", w.Source)
	k.Unit("weights.repetition", w.Repetition)
	k.Unit("weights.extractor", w.Extractor)
	k.Unit("weights.type", w.Type)
	if sum := w.Source + w.Repetition + w.Extractor + w.Type; !(math.Abs(sum-1) <= weightTolerance) {
		// Ten digits show why a sum is off without float noise (1.1, not
		// 1.0999999999999999).
		k.Add("weights", "sum is %s, want 1 (within 1e-6)", strconv.FormatFloat(sum, 'g', 10, 64))
	}
	k.UnitMap("source_levels", c.SourceLevels)
	k.UnitMap("type_priors", c.TypePriors)
	k.Unit("extractor.unknown", c.Extractor.Unknown)
	for i, m := range c.Extractor.Models {
		key := fmt.Sprintf("extractor.models[%d]", i)
		if m.Pattern == "" {
			// An empty pattern matches every model and hides the rows after it.
			k.Add(key+".pattern", "must not be empty")
		} else if _, err := regexp.Compile(m.Pattern); err != nil {
			k.Add(key+".pattern", "%s does not compile: %v", check.Quote(m.Pattern), err)
		}
		k.Unit(key+".quality", m.Quality)
	}
	k.Unit("grounding.partial", c.Grounding.Partial)
	k.Unit("grounding.unknown", c.Grounding.Unknown)
	k.Unit("grounding.floor", c.Grounding.Floor)
	k.Unit("confirm.source", c.Confirm.Source)
	if mc := c.Confirm.MaxConfidence; !(mc > 0 && mc <= 1) {
		k.Add("confirm.max_confidence", "%s is outside (0, 1]", check.Float(mc))
	}
	k.Unit("gates.retrieval", c.Gates.Retrieval)
	k.Unit("gates.render", c.Gates.Render)
	k.Unit("confidence_weight", c.ConfidenceWeight)
	k.Unit("freshness_weight", c.FreshnessWeight)
	k.Unit("access_weight", c.AccessWeight)
	k.AtLeast("focus.top", c.Focus.Top, 1)
	if c.Focus.Pool < c.Focus.Top {
		k.Add("focus.pool", "%d is below %s (%d)", c.Focus.Pool, check.Ref("focus.top"), c.Focus.Top)
	}
	k.Unit("focus.floor", c.Focus.Floor)
	c.validateDecay(&k)
	k.Unit("protected.min_confidence", c.Protected.MinConfidence)
	k.AtLeast("protected.min_observations", c.Protected.MinObservations, 0)
	t := c.Tiers
	k.Unit("tiers.active", t.Active)
	k.Unit("tiers.dormant", t.Dormant)
	k.Unit("tiers.stale", t.Stale)
	if !(t.Dormant < t.Active) {
		k.Add("tiers.dormant", "%s is not below %s (%s)", check.Float(t.Dormant), check.Ref("tiers.active"), check.Float(t.Active))
	}
	if !(t.Stale < t.Dormant) {
		k.Add("tiers.stale", "%s is not below %s (%s)", check.Float(t.Stale), check.Ref("tiers.dormant"), check.Float(t.Dormant))
	}
	k.Unit("stats.high", c.Stats.High)
	k.Unit("stats.medium", c.Stats.Medium)
	if c.Stats.High < c.Stats.Medium {
		k.Add("stats.high", "%s is below %s (%s)", check.Float(c.Stats.High), check.Ref("stats.medium"), check.Float(c.Stats.Medium))
	}
	return k.Err()
}

func (c Config) validateDecay(k *check.Checker) {
	d := c.Decay
	k.Positive("decay.default_half_life", d.DefaultHalfLife)
	for _, name := range slices.Sorted(maps.Keys(d.HalfLives)) {
		if name == "" {
			k.Add("decay.half_lives", "has an entry with an empty name")
			continue
		}
		k.Positive("decay.half_lives."+name, d.HalfLives[name])
	}
	for _, typ := range slices.Sorted(maps.Keys(d.TypeCategories)) {
		if typ == "" {
			k.Add("decay.type_categories", "has an entry with an empty name")
			continue
		}
		if cat := d.TypeCategories[typ]; cat == "" {
			k.Add("decay.type_categories."+typ, "must not be empty")
		} else if _, ok := d.HalfLives[cat]; !ok {
			k.Add("decay.type_categories."+typ, "%s has no half-life in %s", check.Quote(cat), check.Ref("decay.half_lives"))
		}
	}
	k.Positive("decay.floor_k", d.FloorK)
}

// Params compiles a valid Config into the math's parameters: the extractor
// patterns become case-insensitive regexps, the tables fresh copies.
func (c Config) Params() (*Params, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p := &Params{
		Weights:          c.Weights,
		SourceLevels:     maps.Clone(c.SourceLevels),
		TypePriors:       maps.Clone(c.TypePriors),
		ExtractorUnknown: c.Extractor.Unknown,
		Grounding:        c.Grounding,
		ConfirmSource:    c.Confirm.Source,
		MaxConfidence:    c.Confirm.MaxConfidence,
		RetrievalGate:    c.Gates.Retrieval,
		RenderGate:       c.Gates.Render,
		ConfidenceWeight: c.ConfidenceWeight,
		FreshnessWeight:  c.FreshnessWeight,
		AccessWeight:     c.AccessWeight,
		FocusTop:         c.Focus.Top,
		FocusPool:        c.Focus.Pool,
		FocusFloor:       c.Focus.Floor,
		Decay: DecayParams{
			DefaultHalfLife: c.Decay.DefaultHalfLife,
			HalfLives:       maps.Clone(c.Decay.HalfLives),
			TypeCategories:  maps.Clone(c.Decay.TypeCategories),
			FloorK:          c.Decay.FloorK,
		},
		ProtectedConfidence:   c.Protected.MinConfidence,
		ProtectedObservations: c.Protected.MinObservations,
		Tiers:                 c.Tiers,
		StatsHigh:             c.Stats.High,
		StatsMedium:           c.Stats.Medium,
	}
	for i, m := range c.Extractor.Models {
		re, err := CompileExtractorPattern(m.Pattern)
		if err != nil {
			return nil, fmt.Errorf("scoring: extractor.models[%d].pattern: %w", i, err)
		}
		p.ExtractorModels = append(p.ExtractorModels, ExtractorModel{Pattern: re, Quality: m.Quality})
	}
	return p, nil
}
