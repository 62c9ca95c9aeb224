package main

import (
	"fmt"
	"maps"
	"math"

	"github.com/memrank/memrank/config"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
)

// scoringParams builds the scoring parameters from a validated Config.
func scoringParams(c config.Config) (*scoring.Params, error) {
	s := c.Scoring
	p := &scoring.Params{
		Weights: scoring.Weights{
			Source:     s.Weights.Source,
			Repetition: s.Weights.Repetition,
			Extractor:  s.Weights.Extractor,
			Type:       s.Weights.Type,
		},
		SourceLevels:     maps.Clone(s.SourceLevels),
		TypePriors:       maps.Clone(s.TypePriors),
		ExtractorUnknown: s.Extractor.Unknown,
		Grounding: scoring.GroundingParams{
			Partial: s.Grounding.Partial,
			Unknown: s.Grounding.Unknown,
			Floor:   s.Grounding.Floor,
		},
		ConfirmSource:    s.Confirm.Source,
		MaxConfidence:    s.Confirm.MaxConfidence,
		RetrievalGate:    s.Gates.Retrieval,
		RenderGate:       s.Gates.Render,
		ConfidenceWeight: s.ConfidenceWeight,
		Decay: scoring.DecayParams{
			DefaultHalfLife: s.Decay.DefaultHalfLife,
			HalfLives:       maps.Clone(s.Decay.HalfLives),
			TypeCategories:  maps.Clone(s.Decay.TypeCategories),
			FloorK:          s.Decay.FloorK,
		},
		ProtectedConfidence:   s.Protected.MinConfidence,
		ProtectedObservations: s.Protected.MinObservations,
		Tiers: scoring.TierParams{
			Active:  s.Tiers.Active,
			Dormant: s.Tiers.Dormant,
			Stale:   s.Tiers.Stale,
		},
		StatsHigh:   s.Stats.High,
		StatsMedium: s.Stats.Medium,
	}
	for i, m := range s.Extractor.Models {
		re, err := scoring.CompileExtractorPattern(m.Pattern)
		if err != nil {
			return nil, fmt.Errorf("scoring.extractor.models[%d].pattern: %w", i, err)
		}
		p.ExtractorModels = append(p.ExtractorModels, scoring.ExtractorModel{Pattern: re, Quality: m.Quality})
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// rankConfig builds the read path's modes, guards, detection and shadow
// settings from a validated config.Rank. A guard patch (per collection or
// per embedder) applies over rank.guard.
func rankConfig(r config.Rank) (rank.Config, error) {
	mode, err := rank.ParseMode(r.Mode)
	if err != nil {
		return rank.Config{}, fmt.Errorf("rank.mode: %w", err)
	}
	guard := func(g config.Guard) rank.Guard {
		return rank.Guard{Off: !g.Enabled, Band: g.Band, Floor: g.Floor, RelativeBand: g.RelativeBand}
	}
	rc := rank.Config{
		Oversample:     r.Oversample,
		MaxCandidates:  r.MaxCandidates,
		Mode:           mode,
		Guard:          guard(r.Guard),
		Collections:    make(map[string]rank.CollectionConfig, len(r.Collections)),
		EmbedderGuards: make(map[string]rank.Guard, len(r.EmbedderGuards)),
		Detect:         rank.DetectConfig{SampleSize: r.Detect.SampleSize, TTL: r.Detect.TTL},
		Shadow:         rank.ShadowConfig{SampleRate: r.Shadow.SampleRate, LogInterval: r.Shadow.LogInterval},
	}
	if rc.Guard == (rank.Guard{}) {
		// Everything at zero is a guard that passes only the best score's
		// ties, not "use the default": keep it so.
		rc.Guard.Band = math.SmallestNonzeroFloat64
	}
	for name, cc := range r.Collections {
		var m rank.Mode
		if cc.Mode != "" {
			if m, err = rank.ParseMode(cc.Mode); err != nil {
				return rank.Config{}, fmt.Errorf("rank.collections.%s.mode: %w", name, err)
			}
		}
		col := rank.CollectionConfig{Mode: m}
		if !cc.Guard.IsZero() {
			g := guard(cc.Guard.Apply(r.Guard))
			col.Guard = &g
		}
		rc.Collections[name] = col
	}
	for model, p := range r.EmbedderGuards {
		rc.EmbedderGuards[model] = guard(p.Apply(r.Guard))
	}
	return rc, nil
}

// payloadKeys maps the configured payload key names onto the codec's.
func payloadKeys(k config.PayloadKeys) memory.Keys {
	return memory.Keys{
		Text:             k.Text,
		MemoryType:       k.MemoryType,
		Source:           k.Source,
		ExtractorModel:   k.ExtractorModel,
		ExtractorLogprob: k.ExtractorLogprob,
		Grounding:        k.Grounding,
		Observations:     k.Observations,
		Confidence:       k.Confidence,
		DecayCategory:    k.DecayCategory,
		CreatedAt:        k.CreatedAt,
		LastObservedAt:   k.LastObservedAt,
		LastAccessedAt:   k.LastAccessedAt,
		AccessCounts:     k.AccessCounts,
		SessionIDs:       k.SessionIDs,
		TurnIDs:          k.TurnIDs,
		Entities:         k.Entities,
		TextHash:         k.TextHash,
		Retrievable:      k.Retrievable,
		Tier:             k.Tier,
		SupersededBy:     k.SupersededBy,
		Corroborations:   k.Corroborations,
		Contradictions:   k.Contradictions,
		Modalities:       k.Modalities,
		Schema:           k.MemrankSchema,
	}
}

// codecFor builds the scoring parameters and the payload codec of a Config.
func codecFor(c config.Config) (*memory.Codec, error) {
	p, err := scoringParams(c)
	if err != nil {
		return nil, err
	}
	return memory.NewCodec(payloadKeys(c.PayloadKeys), p)
}
