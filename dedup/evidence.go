package dedup

import (
	"math"
	"regexp"
	"strings"

	"github.com/memrank/memrank/config/check"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/textnorm"
)

// The evidence rules of the seeds that sit beside the three tiers
// (docs/write-path.md#evidence-rules): the hearsay cap (seed 000), the
// contradiction candidates sent to the judge and the use of corroboration
// and contradiction counts (seed 001), and the flag on a memory type seen
// too often to be one thing (seed 002).

// Attributions an observation may carry.
const (
	AttributionSelf     = "self"     // the speaker asserts it first hand
	AttributionReported = "reported" // hearsay: someone else said it
)

// attributions are the spellings the API accepts, and what each means.
var attributions = map[string]string{
	AttributionSelf: AttributionSelf, AttributionReported: AttributionReported, "hearsay": AttributionReported,
}

// Where an attribution came from.
const (
	fromExtractor = "extractor"
	fromHeuristic = "heuristic"
)

// reasonCorroboration is the audit reason of a corroboration, with seed
// 001's boost or without one (old == new); Related is the corroborating
// memory.
const reasonCorroboration = "corroboration"

// FlagRecurringEvent marks a memory whose type is seen too often to be one
// happening (seed 002: "why is the same event appearing five times?").
const FlagRecurringEvent = "recurring_event"

// Defaults of the evidence rules (seeds 001 and 002; seed 001's 0-10 scale
// read as memrank's 0-1: 0.5 -> 0.05, 1.5 -> 0.15, 8.0 -> 0.80).
const (
	DefaultContradictionMinCosine     = 0.40
	DefaultContradictionMaxCosine     = 0.75
	DefaultContradictionMinShared     = 2
	DefaultEventRecurrence            = 5
	DefaultCorroborationBoost         = 0.05
	DefaultContradictionPenalty       = 0.15
	DefaultEvidenceGateConfidence     = 0.80
	DefaultEvidenceGateCorroborations = 3
)

// HearsayConfig is the hearsay cap (seed 000, "Reported speech and
// hearsay"): a reported claim's source is capped at CapSource's level, and
// the memory notes the indirect attribution.
type HearsayConfig struct {
	// CapSource is the source level hearsay is capped at; default
	// weak_inference (0.50).
	CapSource string `koanf:"cap_source"`
	// Heuristics looks for hearsay cues in the text ("I heard that",
	// "apparently", "someone told me", "according to"...) when the
	// observation gives no attribution. A cap it causes is marked as the
	// heuristic's in the outcome and the audit. DefaultConfig turns it on.
	Heuristics bool `koanf:"heuristics"`
}

// ContradictionConfig picks seed 001's contradiction candidates: tier-2
// neighbours below the judge band that share at least MinSharedEntities
// entities with the observation and whose cosine is within [MinCosine,
// MaxCosine]. They are sent to the judge (when one is active) as possible
// contradictions.
type ContradictionConfig struct {
	MinCosine         float64 `koanf:"min_cosine"`          // default 0.40
	MaxCosine         float64 `koanf:"max_cosine"`          // default 0.75
	MinSharedEntities int     `koanf:"min_shared_entities"` // default 2
}

// CorroborationConfig is seed 001's use of the counts: each corroboration
// raises the corroborated memory's confidence by Boost, and a memory that
// survives a contradiction (it won on confidence x freshness) loses
// ContradictionPenalty. The evidence gate: corroboration never lifts a
// confidence above ProtectedConfidence until the memory has
// MinCorroborations corroborations.
type CorroborationConfig struct {
	Off                  bool    `koanf:"off"`                   // counts stay evidence only
	Boost                float64 `koanf:"boost"`                 // default 0.05
	ContradictionPenalty float64 `koanf:"contradiction_penalty"` // default 0.15
	ProtectedConfidence  float64 `koanf:"protected_confidence"`  // default 0.80
	MinCorroborations    int     `koanf:"min_corroborations"`    // default 3
}

// evidenceDefaults fills the zero values of the evidence rules.
func (c Config) evidenceDefaults() Config {
	if c.Hearsay.CapSource == "" {
		c.Hearsay.CapSource = scoring.SourceWeakInference
	}
	cc := &c.ContradictionCandidates
	if cc.MinCosine == 0 {
		cc.MinCosine = DefaultContradictionMinCosine
	}
	if cc.MaxCosine == 0 {
		cc.MaxCosine = DefaultContradictionMaxCosine
	}
	if cc.MinSharedEntities == 0 {
		cc.MinSharedEntities = DefaultContradictionMinShared
	}
	if c.RecurrenceFlags == nil {
		c.RecurrenceFlags = map[string]int{scoring.TypeEvent: DefaultEventRecurrence}
	}
	co := &c.Corroboration
	if co.Boost == 0 {
		co.Boost = DefaultCorroborationBoost
	}
	if co.ContradictionPenalty == 0 {
		co.ContradictionPenalty = DefaultContradictionPenalty
	}
	if co.ProtectedConfidence == 0 {
		co.ProtectedConfidence = DefaultEvidenceGateConfidence
	}
	if co.MinCorroborations == 0 {
		co.MinCorroborations = DefaultEvidenceGateCorroborations
	}
	return c
}

// validateEvidence checks the evidence rules' keys as they are.
func (c Config) validateEvidence(k *check.Checker) {
	cc := c.ContradictionCandidates
	k.Unit("contradiction_candidates.min_cosine", cc.MinCosine)
	k.Unit("contradiction_candidates.max_cosine", cc.MaxCosine)
	if cc.MinCosine > cc.MaxCosine {
		k.Add("contradiction_candidates.min_cosine", "%s is above %s (%s)", check.Float(cc.MinCosine),
			check.Ref("contradiction_candidates.max_cosine"), check.Float(cc.MaxCosine))
	}
	k.AtLeast("contradiction_candidates.min_shared_entities", cc.MinSharedEntities, 1)
	for typ, n := range c.RecurrenceFlags {
		k.AtLeast("recurrence_flags."+typ, n, 0)
	}
	co := c.Corroboration
	k.Unit("corroboration.boost", co.Boost)
	k.Unit("corroboration.contradiction_penalty", co.ContradictionPenalty)
	k.Unit("corroboration.protected_confidence", co.ProtectedConfidence)
	k.AtLeast("corroboration.min_corroborations", co.MinCorroborations, 0)
}

// hearsayCues are phrases that put a claim in someone else's mouth. They
// are a fallback for extractors that do not say who asserted a claim, so
// they lean towards the unambiguous: "I think" (the speaker's own hedge)
// is weak inference already and is not hearsay.
var hearsayCues = regexp.MustCompile(`\b(?:i(?: have|'ve)? heard|i was told|i've been told|(?:some(?:one|body)|people|they|he|she|\w+) (?:told|tells) me|apparently|rumou?r (?:has it|is)|according to|word is|reportedly|supposedly|allegedly|people (?:say|said)|it is said|it's said|they say|(?:he|she|they) said that|so i hear)\b`)

// hearsayCue returns the first hearsay cue in text, "" when there is none.
func hearsayCue(text string) string {
	t := strings.ToLower(strings.NewReplacer("\u2019", "'", "\u2018", "'").Replace(text))
	return hearsayCues.FindString(t)
}

// attribution decides o's attribution and applies the hearsay cap to its
// source. It runs after the source level is resolved.
func (e *Engine) attribution(o *observation) {
	switch {
	case o.Attribution != "":
		o.attribution, o.attributionFrom = attributions[o.Attribution], fromExtractor
	case e.cfg.Hearsay.Heuristics:
		if cue := hearsayCue(o.Text); cue != "" {
			o.attribution, o.attributionFrom, o.hearsayCue = AttributionReported, fromHeuristic, cue
		}
	}
	if o.attribution != AttributionReported {
		return
	}
	info := &AttributionInfo{Attribution: AttributionReported, From: o.attributionFrom, Cue: o.hearsayCue}
	o.attributionInfo = info
	capName := e.cfg.Hearsay.CapSource
	capLevel, ok := e.params.SourceLevels[capName]
	if ok && o.ev.Source > capLevel {
		info.Capped, info.SourceGiven = true, o.sourceName
		o.sourceName, o.ev.Source = capName, capLevel
	}
}

// AttributionInfo is the outcome's note of a hearsay observation.
type AttributionInfo struct {
	Attribution string `json:"attribution"`      // "reported"
	From        string `json:"from"`             // "extractor" or "heuristic"
	Cue         string `json:"cue,omitempty"`    // the phrase the heuristic found
	Capped      bool   `json:"capped"`           // the source was lowered to the cap
	SourceGiven string `json:"source,omitempty"` // the source level given, when capped
}

// note is the audit note of the hearsay cap, "" when there was none.
func (a *AttributionInfo) note() string {
	if a == nil || !a.Capped {
		return ""
	}
	n := "hearsay: source " + a.SourceGiven + " capped"
	if a.From == fromHeuristic {
		n += " (heuristic cue " + quote(a.Cue) + ")"
	}
	return n
}

func quote(s string) string { return `"` + s + `"` }

// sharedEntities counts the entities of a that b also names (after
// normalisation).
func sharedEntities(a, b []string) int {
	seen := make(map[string]bool, len(a))
	for _, x := range a {
		if n := textnorm.Normalize(x); n != "" {
			seen[n] = true
		}
	}
	count := 0
	for _, y := range b {
		n := textnorm.Normalize(y)
		if seen[n] {
			count++
			delete(seen, n) // each shared entity counts once
		}
	}
	return count
}

// contradictionCandidate is seed 001's candidate among the neighbours: the
// nearest one below the judge band, within the candidate cosines, sharing
// enough entities. nil when there is none or no judge is active (without a
// judge nothing changes).
func (w *write) contradictionCandidate(nb []scored) *scored {
	if !w.e.cfg.Judging.Active() || len(w.o.Entities) == 0 {
		return nil
	}
	cc := w.e.cfg.ContradictionCandidates
	for i := range nb {
		c := &nb[i]
		if c.score >= w.bands.Judge || c.score > cc.MaxCosine {
			continue
		}
		if c.score < cc.MinCosine {
			break // neighbours are sorted best first
		}
		if sharedEntities(w.o.Entities, c.st.m.Entities) >= cc.MinSharedEntities {
			return c
		}
	}
	return nil
}

// recurrence flags an event-like memory seen too often to be one thing
// (seed 002) and reports whether it did. From then on its re-observations
// no longer raise its confidence: they are counted (n), flagged for review,
// and the confidence waits for a person or the judge to say it is a
// pattern.
func (e *Engine) recurring(m *memory.Memory, sightings int) bool {
	if hasFlag(m.Flags, FlagRecurringEvent) {
		return true
	}
	limit := e.cfg.RecurrenceFlags[m.MemoryType]
	return limit > 0 && sightings >= limit && memoryFlags{&m.Flags}.add(FlagRecurringEvent)
}

// memoryFlags is a memory's flag list.
type memoryFlags struct{ list *[]string }

// add adds flag once; it reports whether it was new.
func (f memoryFlags) add(flag string) bool {
	for _, x := range *f.list {
		if x == flag {
			return false
		}
	}
	*f.list = append(*f.list, flag)
	return true
}

func hasFlag(list []string, flag string) bool {
	for _, x := range list {
		if x == flag {
			return true
		}
	}
	return false
}

// corroborationBoost is seed 001's boost of a corroborated memory's
// confidence, behind the evidence gate: above the protected confidence only
// with enough corroborations. It never lowers a confidence and stays below
// the confirm clamp.
func (e *Engine) corroborationBoost(conf float64, corroborations int) float64 {
	co := e.cfg.Corroboration
	next := conf + co.Boost
	if corroborations < co.MinCorroborations {
		next = math.Min(next, math.Max(conf, co.ProtectedConfidence))
	}
	return math.Max(conf, math.Min(next, e.params.MaxConfidence))
}

// contradictionPenalty is seed 001's penalty of a memory that was
// contradicted and kept: it loses ContradictionPenalty, down to the
// grounding floor (a contradiction it survived is not evidence that it is
// false).
func (e *Engine) contradictionPenalty(conf float64) float64 {
	floor := e.params.Grounding.Floor
	return math.Max(conf-e.cfg.Corroboration.ContradictionPenalty, math.Min(conf, floor))
}
