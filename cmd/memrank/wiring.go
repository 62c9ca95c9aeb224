package main

import (
	"fmt"
	"maps"

	"github.com/memrank/memrank/config"
	"github.com/memrank/memrank/memory"
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
		ConfirmSource: s.Confirm.Source,
		MaxConfidence: s.Confirm.MaxConfidence,
		RetrievalGate: s.Gates.Retrieval,
		RenderGate:    s.Gates.Render,
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
