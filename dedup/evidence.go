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
	// "apparently", "someone told me", "according to"... with a claim
	// after them: hearsayCue) when the observation gives no attribution. A cap it causes is marked as the
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

// The hearsay heuristics are a fallback for extractors that do not say who
// asserted a claim. A false cap costs more than a missed one (a capped
// first-person memory falls below the retrieval gate), so they mark a
// text as reported only when it relays someone else's claim, not when the
// speaker merely mentions hearing or telling (docs/write-path.md#hearsay-seed-000-reported-speech):
//
//   - "I heard that Acme is pivoting", "Sam told me Dana is moving" and
//     "my sister said she got the job" put a claim (a clause) in someone
//     else's mouth: reported;
//   - "I heard some cool stories from a veteran", "she told me a joke",
//     "I heard back from the recruiter", "I told my mom about the trip"
//     are the speaker's own experience (what follows the verb is a thing
//     heard or told, not a claim): not reported;
//   - "the doctor told me I need rest" is the speaker's own news, told to
//     them first hand: not reported either. "I think" is the speaker's own
//     hedge, weak inference already.

// hearsayAdverbs mark a relayed claim wherever they stand: no one uses
// "apparently" or "rumour has it" for what they saw themselves.
var hearsayAdverbs = regexp.MustCompile(`\b(?:apparently|reportedly|supposedly|allegedly|rumou?rs? (?:has it|have it|is|are|says?)|the rumou?r is|word (?:is|has it)|according to|(?:people|they) (?:say|are saying)|it is said|it's said|(?:through|on) the grapevine|from what (?:i|we)(?:'ve| have)? (?:heard|hear|was told|were told|read))\b`)

// hearsayVerbs are the verbs that can relay a claim: hearing or reading
// ("I heard", "I've heard", "we read"; group 1 is the hearer, so that "glad
// to hear" is left out), being told ("Sam told me", "I was told", "she
// texted me") and saying ("she said", "Tom mentioned", "the kids say";
// groups 2 and 3 are the sayer, so that the speaker's own "I said" and the
// listener's "you mentioned" are left out, and plain "say" needs a plural
// sayer, so that "I'd say" or "I have to say" is too). Each relays only
// when a clause follows (relays).
var hearsayVerbs = regexp.MustCompile(`\b(?:` +
	`(\w+)(?:'ve| have| has| had)? (?:heard|hears?|read)` +
	`|\w+ (?:told|tells|texted|messaged|emailed|wrote) (?:me|us)` +
	`|(?:i|we)(?: was| were| am|'m| have been|'ve been| had been) told` +
	`|(\w+)(?:'ve| have| has| had)?(?: always| never| just| also| even| once| \w+ly)? (?:said|says|mentioned|claims|claimed)` +
	`|(\w+s)(?: always| \w+ly)? say` +
	`)\b`)

// hearsayWords splits the text after a verb into words and punctuation.
var hearsayWords = regexp.MustCompile(`[a-z0-9]+(?:['-][a-z0-9]+)*|[,.;:!?()"\x{2013}\x{2014}]`)

// wordSet is a set of lower-case words.
type wordSet map[string]bool

func words(s string) wordSet {
	m := wordSet{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var (
	// clauseBreaks end the words a verb's complement is looked for in:
	// punctuation, conjunctions, and relative pronouns ("I heard a song
	// that reminded me of you": what follows "that" there is about the
	// song, not a claim heard).
	clauseBreaks = words(`, . ; : ! ? ( ) " – — and but or so when while because until after before since if as then who which that where whose`)
	// notAClaim: a complement starting with one of these is a thing
	// heard or told, an instruction or a reply: "told me to rest", "heard
	// back", "told me about the trip", "heard of the band", "they said
	// yes".
	notAClaim = words(`to back about of yes no`)
	// claimSources open where a claim was heard, before its "that".
	claimSources = words(`from on in at`)
	// notHearers come before a hearing verb that reports nothing: "glad to
	// hear", "sorry to hear that", "can't wait to hear how it goes", "catch
	// up and hear all about it".
	notHearers = words(`to and or`)
	// speakerSubjects: a claim about the speaker is their own news ("the
	// doctor told me I need rest", "I heard I got in"), and "I said" or
	// "we always said" is the speaker's own word.
	speakerSubjects = words(`i i'm i've i'd i'll we we're we've we'd we'll`)
	// claimSubjects: a nominative pronoun after the verb can only start a
	// clause ("I heard she got the job"; an object would be "her").
	claimSubjects = words(`he she they he's she's they're they've they'd they'll he'd she'd he'll she'll you're you've you'll there's there it's it'll`)
	// finiteVerbs show a clause after a noun ("I heard the bakery is
	// closing", "Sam told me Kevin quit"); "I heard my daughter sing" or
	// "I heard the crowd cheering" have none and are perception.
	finiteVerbs = words(`is are was were am be been has have had do does did will would can could should might may must shall ` +
		`isn't aren't wasn't weren't hasn't haven't hadn't doesn't didn't won't wouldn't can't couldn't shouldn't ` +
		`got went left quit broke bought sold lost won took made came became began found gave ran fell met paid kept built grew knew thought saw ` +
		`takes costs goes wants lives likes loves knows thinks seems means gets makes says`)
	// notSayers end in s but name no one: "I always say", "the label
	// does say".
	notSayers = words(`always does is was has this its us yes perhaps sometimes`)
	// afterIs: "'s" before one of these or an -ing word is "is" or "has"
	// ("Dana's moving"), not a possessive ("Dana's band").
	afterIs = words(`been not gone got`)
	// determiners: an -ed word after one is an adjective ("a retired
	// nurse"), not a verb ("the agency changed its rules").
	// notPast are -ed words that are no verb of a clause: "a veteran named
	// Samuel", "a band called Ash".
	notPast     = words(`hundred named called`)
	determiners = words(`a an the my your his her our their its this these those some so very most more well all two three many`)
)

// hearsayCue returns the cue that marks text as a relayed claim, "" when
// there is none: the earliest adverb, or the earliest verb that relays.
func hearsayCue(text string) string {
	t := strings.ToLower(strings.NewReplacer("\u2019", "'", "\u2018", "'").Replace(text))
	cue, at := "", len(t)
	if m := hearsayAdverbs.FindStringIndex(t); m != nil {
		cue, at = t[m[0]:m[1]], m[0]
	}
	for _, m := range hearsayVerbs.FindAllStringSubmatchIndex(t, -1) {
		if m[0] >= at {
			break
		}
		if m[2] >= 0 && notHearers[t[m[2]:m[3]]] {
			continue // "glad to hear you're well", "catch up and hear all about it"
		}
		if m[4] >= 0 && (speakerSubjects[t[m[4]:m[5]]] || t[m[4]:m[5]] == "you") || m[6] >= 0 && notSayers[t[m[6]:m[7]]] {
			continue // "I said ...", "I always say ...": the speaker's own words; "you said ...": the listener's
		}
		if ok, that := relays(t[:m[0]], t[m[1]:]); ok {
			cue = t[m[0]:m[1]]
			if that {
				cue += " that"
			}
			break
		}
	}
	return cue
}

// relays says whether a reporting verb, between before and after, relays
// a claim: whether a clause follows it, or it stands aside from one ("Dana
// is moving, Sam told me"). that says the clause began with "that".
func relays(before, after string) (ok, that bool) {
	w := hearsayWords.FindAllString(after, 12)
	if len(w) > 1 && claimSources[w[0]] { // "I heard from a friend that ...", "they said on the radio that ..."
		for i := 1; i < len(w) && i <= 5; i++ {
			if w[i] == "that" {
				w = w[i:]
				break
			}
		}
	}
	if len(w) > 0 && w[0] == "that" { // "that" opens a clause, or names a thing ("that song")
		w, that = w[1:], true
	}
	for i, x := range w {
		if clauseBreaks[x] {
			w = w[:i]
			break
		}
	}
	if len(w) == 0 {
		// Nothing follows: a parenthetical report of what came before
		// ("Dana is moving, Sam told me", "as she said") or a bare "she
		// told me".
		b := strings.TrimSpace(before)
		return !that && (strings.HasSuffix(b, ",") || strings.HasSuffix(b, " as") || strings.HasSuffix(b, " so") || b == "as"), false
	}
	switch {
	case notAClaim[w[0]], speakerSubjects[w[0]]:
		return false, false
	case claimSubjects[w[0]]:
		return true, that
	}
	for i, x := range w {
		if finiteVerbs[x] || i > 0 && pastTense(x, w[i-1]) ||
			strings.HasSuffix(x, "'s") && i+1 < len(w) && (afterIs[w[i+1]] || len(w[i+1]) > 4 && strings.HasSuffix(w[i+1], "ing")) {
			return true, that
		}
	}
	return false, false
}

// pastTense says whether x, after prev, reads as a regular past tense verb
// ("changed", "moved"): an -ed word not after a determiner, and not a
// noun such as "speed" or "hundred".
func pastTense(x, prev string) bool {
	return len(x) > 4 && strings.HasSuffix(x, "ed") && !strings.HasSuffix(x, "eed") && !notPast[x] && !determiners[prev]
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
