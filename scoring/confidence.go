package scoring

import (
	"math"
)

// Components are the raw inputs of the confidence formula: source strength s,
// independent re-observations n (after the first), extractor quality e and
// type prior t. s, e and t are in [0, 1]; out-of-range values are clamped.
type Components struct {
	Source       float64
	Observations int
	Extractor    float64
	Type         float64
}

// Repetition is r(n) = 1 - 1/(1 + ln(1+n)) (docs/scoring.md). Negative n counts as 0.
func Repetition(n int) float64 {
	if n <= 0 {
		return 0
	}
	return 1 - 1/(1+math.Log1p(float64(n)))
}

// unit clamps v into [0, 1]; NaN becomes 0 so that no NaN ever reaches a gate.
func unit(v float64) float64 {
	switch {
	case v > 1:
		return 1
	case v >= 0:
		return v
	default: // negative or NaN
		return 0
	}
}

// Confidence is min(1, ws s + wr r(n) + we e + wt t) before any grounding
// penalty (docs/scoring.md).
func (w Weights) Confidence(c Components) float64 {
	sum := w.Source*unit(c.Source) + w.Repetition*Repetition(c.Observations) +
		w.Extractor*unit(c.Extractor) + w.Type*unit(c.Type)
	return unit(sum)
}

// ExtractorFromLogprob is e = exp(mean token log-probability), clamped to
// [0, 1] (docs/scoring.md). A NaN mean gives 0: an extraction whose certainty
// cannot be read is not trusted.
func ExtractorFromLogprob(meanLogprob float64) float64 {
	return unit(math.Exp(meanLogprob))
}

// ExtractorFromModel is the quality of the first model pattern matching the
// name, or the unknown-model quality.
func (p *Params) ExtractorFromModel(model string) float64 {
	if model != "" {
		for _, m := range p.ExtractorModels {
			if m.Pattern != nil && m.Pattern.MatchString(model) {
				return m.Quality
			}
		}
	}
	return p.ExtractorUnknown
}

// Extractor picks the log-prob path when a log-prob is present, the model
// table otherwise.
func (p *Params) Extractor(model string, meanLogprob float64, hasLogprob bool) float64 {
	if hasLogprob {
		return ExtractorFromLogprob(meanLogprob)
	}
	return p.ExtractorFromModel(model)
}

// Penalty is the grounding penalty p of docs/scoring.md.
func (g GroundingParams) Penalty(gr Grounding) float64 {
	switch gr {
	case GroundingPartial, GroundingNotSupported:
		return g.Partial
	case GroundingUnknown:
		return g.Unknown
	default:
		return 0
	}
}

// Apply is conf' = max(conf - p, min(conf, floor)): the floor limits the
// penalty and never raises a confidence that was already below it.
func (g GroundingParams) Apply(conf float64, gr Grounding) float64 {
	return math.Max(conf-g.Penalty(gr), math.Min(conf, g.Floor))
}

// Grounded is the confidence of c with the grounding penalty applied: the
// number stored at write time.
func (p *Params) Grounded(c Components, gr Grounding) float64 {
	return p.Grounding.Apply(p.Weights.Confidence(c), gr)
}

// Evidence is what the write path knows about one stored memory or one new
// observation: its components, grounding and stored confidence.
type Evidence struct {
	Components
	Grounding  Grounding
	Confidence float64
}

// Confirm applies a user confirmation (docs/scoring.md): s = max(s, confirm
// source), n += 1, conf = min(max confidence, max(old conf, recomputed)). The
// clamp keeps headroom below 1 for ranking (seed 000); a stored confidence at
// or below the clamp never falls.
func (p *Params) Confirm(m Evidence) Evidence {
	out := m
	out.Source = math.Max(unit(m.Source), p.ConfirmSource)
	out.Observations = max(m.Observations, 0) + 1
	out.Confidence = math.Min(p.MaxConfidence, math.Max(m.Confidence, p.Grounded(out.Components, out.Grounding)))
	return out
}

// Merge folds two stored memories of the same fact (docs/scoring.md): n adds up,
// s, e, t and grounding come from the more confident one (a on a tie), and
// the confidence is the largest of both and the recomputed value.
func (p *Params) Merge(a, b Evidence) Evidence {
	win := a
	if b.Confidence > a.Confidence {
		win = b
	}
	out := win
	out.Observations = max(a.Observations, 0) + max(b.Observations, 0)
	out.Confidence = math.Max(math.Max(a.Confidence, b.Confidence), p.Grounded(out.Components, out.Grounding))
	return out
}

// Reobserve applies a new observation of a stored memory's fact (docs/scoring.md).
// An independent observation raises n by one; a restatement leaves it. The
// s, e, t and grounding kept are those of the more confident of the stored
// memory and the observation, each scored with its own n (the observation's
// is 0); the confidence never falls.
func (p *Params) Reobserve(stored, obs Evidence, independent bool) Evidence {
	n := max(stored.Observations, 0)
	if independent {
		n++
	}
	storedScore := p.Grounded(stored.Components, stored.Grounding)
	obsC := obs.Components
	obsC.Observations = 0
	obsScore := p.Grounded(obsC, obs.Grounding)

	out := stored
	if obsScore > storedScore {
		out.Components = obsC
		out.Grounding = obs.Grounding
	}
	out.Observations = n
	out.Confidence = math.Max(stored.Confidence, p.Grounded(out.Components, out.Grounding))
	return out
}
