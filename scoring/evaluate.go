package scoring

import (
	"math"
	"time"
)

// Inputs are the fields of one memory that the read-time math needs, already
// decoded and mapped to numbers (package memory does that).
type Inputs struct {
	// Unscored marks a point carrying none of the confidence fields (source,
	// memory type, extractor, confidence): a foreign point that is never
	// gated and ranked by base x freshness x boost alone.
	Unscored bool
	Components
	Grounding Grounding
	// Confidence is the stored confidence, used when HasConfidence is true
	// (seed 002: r(n) is baked in at write time); otherwise it is computed.
	Confidence    float64
	HasConfidence bool
	HalfLife      float64   // days; <= 0 means never decays
	LastObserved  time.Time // zero: unknown, counts as age 0
	LastAccessed  time.Time
	AccessCount   int64
	// Seq breaks ties after weight and confidence, lower first (e.g. the
	// candidate's position in the store's answer).
	Seq int
}

// Score is the read-time verdict on one memory: small enough to sort by value.
type Score struct {
	Weight     float64
	Confidence float64 // stored or computed; 0 when unscored
	Freshness  float64 // f = 0.5^(age / half-life)
	// FreshnessFactor is FreshnessFactor(Params.FreshnessWeight, Focus,
	// Freshness): what age takes off the weight for this query.
	FreshnessFactor float64
	// Focus is the query's focus on recent memories (Params.Focus) the
	// weight was computed with; 1 until Refocus.
	Focus float64
	// AccessBoost is AccessBoost(Params.AccessWeight, access count).
	AccessBoost float64
	// ConfidenceFactor is ConfidenceFactor(Params.ConfidenceWeight,
	// Confidence); 1 for an unscored memory.
	ConfidenceFactor float64
	Seq              int
	// Tier is the maintenance tier at the time of scoring: archived past
	// the decay floor or below the stale tier. A label, never an exclusion.
	Tier   Tier
	Bucket Bucket
	Flags  Flags
}

// Flags are the boolean facts of a Score.
type Flags uint8

// Score flags.
const (
	FlagUnscored           Flags = 1 << iota // no confidence fields: never gated
	FlagComputedConfidence                   // stored confidence absent or invalid: computed
	FlagWithinFloor                          // decay floor not crossed (or protected)
	FlagProtected                            // conf and n past the evidence gate
	FlagBelowGate                            // returned below the retrieval gate (a fallback, or the best match)
	FlagRender                               // passes the render gate (or its fallback)
)

// Has reports whether every flag in f2 is set.
func (f Flags) Has(f2 Flags) bool { return f&f2 == f2 }

// Evaluate scores one memory at time now against a base score, the store's
// similarity (or Qdrant's fused score), with the query's focus at 1 (see
// Refocus). A negative base keeps its sign and its order (Weight); a NaN or
// infinite one counts as 0.
func (p *Params) Evaluate(in *Inputs, base float64, now time.Time) Score {
	nowSec, nowNsec := now.Unix(), int64(now.Nanosecond())
	s := Score{Seq: in.Seq, ConfidenceFactor: 1, Focus: 1}
	s.Freshness = Freshness(ageDaysAt(in.LastObserved, nowSec, nowNsec), in.HalfLife)
	s.AccessBoost = AccessBoost(p.AccessWeight, in.AccessCount)
	if in.Unscored {
		s.Flags = FlagUnscored | FlagWithinFloor | FlagRender
		s.Tier = TierActive
		p.Refocus(&s, base, 1)
		return s
	}
	if in.HasConfidence {
		s.Confidence = unit(in.Confidence)
	} else {
		s.Confidence = p.Grounded(in.Components, in.Grounding)
		s.Flags |= FlagComputedConfidence
	}
	s.ConfidenceFactor = ConfidenceFactor(p.ConfidenceWeight, s.Confidence)
	p.Refocus(&s, base, 1)
	protected := p.Protected(s.Confidence, in.Observations)
	if protected {
		s.Flags |= FlagProtected
	}
	// The decay floor and the tier are measured from the last use: an access
	// keeps a memory alive even when nobody restates it (seed 003 resets decay
	// on reinforcement, and use counts as reinforcement). The weight keeps the
	// freshness since the last observation (docs/scoring.md).
	sinceUse := s.Freshness
	if in.LastAccessed.After(in.LastObserved) {
		sinceUse = Freshness(ageDaysAt(in.LastAccessed, nowSec, nowNsec), in.HalfLife)
	}
	s.Tier = p.TierOf(s.Confidence, sinceUse, protected)
	if p.WithinFloor(s.Confidence, sinceUse, protected) {
		s.Flags |= FlagWithinFloor
	} else {
		s.Tier = TierArchived
	}
	s.Bucket = p.BucketOf(s.Confidence)
	return s
}

// Refocus sets the score's weight for a query whose focus on recent
// memories is focus (Params.Focus): base x freshness factor x access boost
// x confidence factor, the factors only where the base is positive.
func (p *Params) Refocus(s *Score, base, focus float64) {
	if math.IsNaN(base) || math.IsInf(base, 0) {
		base = 0 // a NaN or infinite score must not poison the ranking
	}
	s.Focus = unit(focus)
	s.FreshnessFactor = FreshnessFactor(p.FreshnessWeight, s.Focus, s.Freshness)
	s.Weight = Weight(base, s.FreshnessFactor, s.AccessBoost)
	if base > 0 {
		s.Weight *= s.ConfidenceFactor
	}
}

// ageDaysAt is AgeDays against a now split once into Unix seconds and
// nanoseconds: the time.Time arithmetic it replaces was a fifth of a read's
// scoring cost. Seconds rather than UnixNano, which overflows outside
// 1678-2262 and payload timestamps can be anything.
func ageDaysAt(t time.Time, nowSec, nowNsec int64) float64 {
	if t.IsZero() {
		return 0
	}
	d := float64(nowSec-t.Unix()) + float64(nowNsec-int64(t.Nanosecond()))*1e-9
	if !(d > 0) {
		return 0
	}
	return d / 86400
}

// Explanation is every factor behind a Score, for humans and the explain API.
// It is computed on demand (for returned results only), so the hot path stays
// small.
type Explanation struct {
	Unscored         bool
	Source           float64
	Observations     int
	Repetition       float64
	Extractor        float64
	Type             float64
	Grounding        Grounding
	Formula          float64 // weighted sum before grounding
	GroundingPenalty float64 // what grounding actually took off
	Computed         float64 // formula with grounding: what the fields imply now
	StoredConfidence bool    // the stored value was used
	Confidence       float64
	AgeDays          float64
	HalfLife         float64
	Freshness        float64
	// FreshnessWeight is the Params' bound on what age takes; Focus the
	// query's focus on recent memories; FreshnessFactor what age took.
	FreshnessWeight float64
	Focus           float64
	FreshnessFactor float64
	IdleDays        float64 // since the later of last observed and last accessed
	DecayFloor      float64
	DaysToArchive   float64 // idle days until the archived tier (+Inf: never)
	AccessCount     int64
	// AccessWeight is the Params' bound on what reads add; AccessBoost what
	// they added.
	AccessWeight       float64
	AccessBoost        float64
	ConfidenceWeight   float64 // the Params' weight of confidence in the weight
	ConfidenceFactor   float64 // 1 - ConfidenceWeight + ConfidenceWeight x Confidence
	Base               float64
	Weight             float64
	WithinFloor        bool
	Protected          bool
	Tier               Tier
	Bucket             Bucket
	BelowGate          bool
	Render             bool
	ComputedConfidence bool
}

// Explain expands a Score evaluated from in at now into every factor.
func (p *Params) Explain(in *Inputs, s Score, base float64, now time.Time) Explanation {
	e := Explanation{
		Unscored:           in.Unscored,
		Source:             unit(in.Source),
		Observations:       max(in.Observations, 0),
		Repetition:         Repetition(in.Observations),
		Extractor:          unit(in.Extractor),
		Type:               unit(in.Type),
		Grounding:          in.Grounding,
		AgeDays:            AgeDays(in.LastObserved, now),
		HalfLife:           in.HalfLife,
		Freshness:          s.Freshness,
		FreshnessWeight:    p.FreshnessWeight,
		Focus:              s.Focus,
		FreshnessFactor:    s.FreshnessFactor,
		AccessCount:        max(in.AccessCount, 0),
		AccessWeight:       p.AccessWeight,
		AccessBoost:        s.AccessBoost,
		ConfidenceWeight:   p.ConfidenceWeight,
		ConfidenceFactor:   s.ConfidenceFactor,
		Base:               base,
		Weight:             s.Weight,
		Confidence:         s.Confidence,
		WithinFloor:        s.Flags.Has(FlagWithinFloor),
		Protected:          s.Flags.Has(FlagProtected),
		Tier:               s.Tier,
		Bucket:             s.Bucket,
		BelowGate:          s.Flags.Has(FlagBelowGate),
		Render:             s.Flags.Has(FlagRender),
		ComputedConfidence: s.Flags.Has(FlagComputedConfidence),
	}
	last := in.LastObserved
	if in.LastAccessed.After(last) {
		last = in.LastAccessed
	}
	e.IdleDays = AgeDays(last, now)
	if in.Unscored {
		e.DaysToArchive = math.Inf(1)
		return e
	}
	e.Formula = p.Weights.Confidence(in.Components)
	e.Computed = p.Grounding.Apply(e.Formula, in.Grounding)
	e.GroundingPenalty = e.Formula - e.Computed
	e.StoredConfidence = !s.Flags.Has(FlagComputedConfidence)
	e.DecayFloor = p.Decay.DecayFloor(s.Confidence)
	if e.Protected || !(in.HalfLife > 0) {
		e.DaysToArchive = math.Inf(1)
	} else {
		e.DaysToArchive = p.Decay.DaysToArchive(s.Confidence, in.HalfLife)
	}
	return e
}
