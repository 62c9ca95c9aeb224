package scoring

import (
	"math"
	"time"
)

// AgeDays is the age of t at now in days; a zero t or a t in the future is age 0.
func AgeDays(t, now time.Time) float64 {
	if t.IsZero() || !t.Before(now) {
		return 0
	}
	return now.Sub(t).Hours() / 24
}

// Freshness is 0.5^(age/half-life) (docs/scoring.md). A non-positive or NaN
// half-life is treated as "never decays" rather than producing NaN.
func Freshness(ageDays, halfLifeDays float64) float64 {
	if !(halfLifeDays > 0) || !(ageDays > 0) {
		return 1
	}
	return halfPow(-ageDays / halfLifeDays)
}

// HalfLife resolves the half-life of a memory: its decay category's when the
// category is known, else its memory type's category (if the type map names
// one), else the default. known reports whether a non-empty category was found
// in the table, so callers can flag unknown categories.
func (d DecayParams) HalfLife(category, memoryType string) (days float64, known bool) {
	if category != "" {
		if h, ok := d.HalfLives[category]; ok {
			return h, true
		}
		return d.DefaultHalfLife, false
	}
	if c, ok := d.TypeCategories[memoryType]; ok {
		if h, ok := d.HalfLives[c]; ok {
			return h, true
		}
	}
	return d.DefaultHalfLife, true
}

// AccessBoost is the bounded access factor 1 + w x r(count) for an access
// weight w in [0, 1] (docs/scoring.md): r is the repetition curve of the
// confidence formula, 1 - 1/(1 + ln(1 + count)), so reads raise the weight
// by at most w, the first reads most. Seed 000's 1 + ln(1 + count) has no
// bound: a memory read 90 times outweighed one five times as similar.
func AccessBoost(weight float64, count int64) float64 {
	if count <= 0 {
		return 1
	}
	return 1 + unit(weight)*Repetition(int(min(count, math.MaxInt32)))
}

// FreshnessFactor is the bounded freshness factor 1 - w x focus x (1 - f)
// for a freshness weight w and a query's focus, both in [0, 1]
// (docs/scoring.md): age takes at most w of the weight, and only as much of
// it as the query is about recent memories. Seed 000 multiplies by f
// itself (w = 1, focus 1), which lets age alone bury a memory.
func FreshnessFactor(weight, focus, freshness float64) float64 {
	return 1 - unit(weight)*unit(focus)*(1-unit(freshness))
}

// Weight is the retrieval weight base x freshness factor x access factor
// (docs/scoring.md). A negative base (a similarity below zero) is returned
// as it is: the factors only ever lift what resembles the query, and
// scaling a negative number by them would turn their meaning around (a
// stale memory would rise), so negative similarities keep their order.
func Weight(base, freshness, boost float64) float64 {
	if base < 0 {
		return base
	}
	return base * freshness * boost
}

// ConfidenceFactor is the confidence's share in the weight: 1 - w + w x c
// for a confidence weight w in [0, 1]. At w = 0 (seed 000: confidence
// "does not directly appear in the final weight") it is 1; at w = 1 the
// weight is multiplied by the confidence itself.
func ConfidenceFactor(weight, conf float64) float64 {
	return 1 - weight + weight*unit(conf)
}

// Focus is how much a query is about recent memories, in [0, 1]
// (docs/scoring.md): how much fresher its best matches are than the
// candidates it was answered from. topFresh is the mean freshness of the
// FocusTop candidates most similar to the query, poolFresh that of the
// FocusPool most similar; the share of the distance from poolFresh to 1
// that topFresh covers, raised to at least FocusFloor. A question whose best matches are
// as old as the rest is answered by similarity (focus at the floor); one
// whose best matches are all new weighs freshness fully.
func (p *Params) Focus(topFresh, poolFresh float64) float64 {
	focus := 0.0
	if room := 1 - poolFresh; room > 1e-9 && topFresh > poolFresh {
		focus = min(1, (topFresh-poolFresh)/room)
	}
	return p.FocusFloor + (1-p.FocusFloor)*focus
}

// DecayFloor is floor(c) = clamp(k (1 - c), 0, 1) (docs/scoring.md).
func (d DecayParams) DecayFloor(conf float64) float64 {
	return unit(d.FloorK * (1 - unit(conf)))
}

// Protected reports seed 001's evidence gate: confident and independently
// observed often enough that decay never archives the memory (docs/scoring.md).
func (p *Params) Protected(conf float64, observations int) bool {
	return conf >= p.ProtectedConfidence && observations >= p.ProtectedObservations
}

// WithinFloor reports whether a memory's freshness since it was last
// observed or accessed stays at or above the decay floor of its confidence.
// Past it, the memory's tier is archived: a label for upkeep (the review
// queue, stats), never a reason to leave it out of an answer. Protected
// memories never cross it.
func (p *Params) WithinFloor(conf, freshnessSinceUse float64, protected bool) bool {
	return protected || freshnessSinceUse >= p.Decay.DecayFloor(conf)
}

// DaysToArchive is how many days without observation or access a memory of
// confidence conf stays within its decay floor at the given half-life (its
// tier turns archived after that): the inverse of the decay floor, used in
// explanations and the worked numbers of docs/scoring.md.
func (d DecayParams) DaysToArchive(conf, halfLifeDays float64) float64 {
	floor := d.DecayFloor(conf)
	if floor <= 0 {
		return math.Inf(1)
	}
	return halfLifeDays * math.Log2(1/floor)
}

// Tier is a maintenance tier of seed 003.
type Tier uint8

// Tiers from most to least alive.
const (
	TierActive Tier = iota
	TierDormant
	TierStale
	TierArchived
)

var tierNames = [...]string{"active", "dormant", "stale", "archived"}

func (t Tier) String() string {
	if int(t) < len(tierNames) {
		return tierNames[t]
	}
	return "unknown"
}

// TierOf places c x f in a tier (docs/scoring.md): active above Active, dormant
// from Dormant, stale from Stale, archived below. Protected memories stop at
// dormant.
func (p *Params) TierOf(conf, freshness float64, protected bool) Tier {
	v := conf * freshness
	var t Tier
	switch {
	case v > p.Tiers.Active:
		t = TierActive
	case v >= p.Tiers.Dormant:
		t = TierDormant
	case v >= p.Tiers.Stale:
		t = TierStale
	default:
		t = TierArchived
	}
	if protected && t > TierDormant {
		t = TierDormant
	}
	return t
}

// Bucket is a stats bucket of seed 004.
type Bucket uint8

// Buckets of confidence.
const (
	BucketHigh Bucket = iota
	BucketMedium
	BucketLow
)

var bucketNames = [...]string{"high", "medium", "low"}

func (b Bucket) String() string {
	if int(b) < len(bucketNames) {
		return bucketNames[b]
	}
	return "unknown"
}

// BucketOf is high at or above StatsHigh, medium at or above StatsMedium, low below.
func (p *Params) BucketOf(conf float64) Bucket {
	switch {
	case conf >= p.StatsHigh:
		return BucketHigh
	case conf >= p.StatsMedium:
		return BucketMedium
	default:
		return BucketLow
	}
}
