package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/admission"
	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/server/ui"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/telemetry"
	"github.com/memrank/memrank/tenancy"
	"github.com/memrank/memrank/upstream"
)

func ptr[T any](v T) *T { return &v }

// TestDefault pins every default to the value of the schema (the
// seeds' numbers, docs/scoring.md), written out here independently of
// Default's own literal.
func TestDefault(t *testing.T) {
	want := Config{
		Scoring: scoring.Config{
			Weights:      scoring.Weights{Source: 0.45, Repetition: 0.20, Extractor: 0.25, Type: 0.10},
			SourceLevels: map[string]float64{"direct": 0.95, "confirmed": 0.80, "strong_inference": 0.70, "weak_inference": 0.50, "speculation": 0.30},
			TypePriors:   map[string]float64{"entity": 0.90, "event": 0.85, "fact": 0.80, "preference": 0.75, "relation": 0.70},
			Extractor: scoring.ExtractorConfig{Unknown: 0.65, Models: []scoring.ExtractorPattern{
				{Pattern: `claude.*(sonnet|opus)`, Quality: 0.90},
				{Pattern: `gpt-?4|gpt-?5|\bo[134]\b`, Quality: 0.85},
				{Pattern: `claude.*haiku`, Quality: 0.80},
				{Pattern: `gpt-?3\.5`, Quality: 0.65},
			}},
			Grounding: scoring.GroundingParams{Partial: 0.15, Unknown: 0.10, Floor: 0.30},
			Confirm:   scoring.ConfirmConfig{Source: 0.80, MaxConfidence: 0.99},
			Gates:     scoring.GatesConfig{Retrieval: 0.50, Render: 0.40},
			// Not the seeds': chosen with memrank eval on LoCoMo's dev
			// conversations and the shipped set (docs/scoring.md).
			FreshnessWeight: 0.7,
			AccessWeight:    0.02,
			Focus:           scoring.FocusConfig{Top: 5, Pool: 40, Floor: 0},
			Decay: scoring.DecayParams{
				DefaultHalfLife: 90,
				HalfLives:       map[string]float64{"preference": 365, "relationship": 180, "contact": 180, "technical": 120, "opinion": 90, "price": 60, "project_status": 30},
				TypeCategories:  map[string]string{},
				FloorK:          1.25,
			},
			Protected: scoring.ProtectedConfig{MinConfidence: 0.80, MinObservations: 3},
			Tiers:     scoring.TierParams{Active: 0.60, Dormant: 0.30, Stale: 0.10},
			Stats:     scoring.StatsConfig{High: 0.80, Medium: 0.50},
		},
		Rank: rank.Config{
			Oversample: 4, MinCandidates: 40, MaxCandidates: 1000, Mode: rank.ModeAuto, Collections: map[string]rank.CollectionConfig{},
			Guard: rank.Guard{Band: 0.015, Floor: 0.50, RelativeBand: 0.025},
			EmbedderGuards: map[string]rank.GuardPatch{
				"memrank-local-hash-v1": {Band: ptr(0.15), Floor: ptr(0.15)},
				"memrank-local-sem-v1":  {Band: ptr(0.03), Floor: ptr(0.2)},
			},
			Detect:         rank.DetectConfig{SampleSize: 32, TTL: time.Minute},
			Shadow:         rank.ShadowConfig{SampleRate: 1, LogInterval: 10 * time.Second},
			CandidateCache: rank.CandidateCacheConfig{MaxBytes: 64 << 20, TTL: 2 * time.Minute},
		},
		Dedup: dedup.Config{SameThreshold: 0.92, JudgeThreshold: 0.80, RequireSurfaceChange: true, MinIndependentGap: time.Hour, MaxClockSkew: 5 * time.Minute, Timeout: 10 * time.Second,
			Hearsay:                 dedup.HearsayConfig{CapSource: "weak_inference", Heuristics: true},
			ContradictionCandidates: dedup.ContradictionConfig{MinCosine: 0.40, MaxCosine: 0.75, MinSharedEntities: 2},
			RecurrenceFlags:         map[string]int{"event": 5},
			Corroboration:           dedup.CorroborationConfig{Boost: 0.05, ContradictionPenalty: 0.15, ProtectedConfidence: 0.80, MinCorroborations: 3},
		},
		Judge:    dedup.JudgeConfig{Enabled: false, Timeout: 5 * time.Second, CallsPerMinute: 60, CacheSize: 10000},
		Forget:   dedup.ForgetConfig{Audit: "redact"},
		Embedder: embed.Config{Driver: "semantic", Dimensions: 384, Timeout: 10 * time.Second, BatchSize: 64, CacheSize: 10000},
		Upstream: upstream.Config{Timeout: 10 * time.Second, LongTimeout: 10 * time.Minute},
		Listen:   Listen{HTTP: ":6333", GRPC: ":6334", AllowedHosts: []string{}},
		Limits: admission.Config{MaxInFlight: 32, MaxBodyBytes: 32 << 20, MaxBodyBytesInFlight: 256 << 20, BodyTimeout: 10 * time.Second,
			MaxConnections: 4096, MaxStreams: 100, RetryAfter: time.Second},
		Store:   store.Config{DataDir: "./memrank-data", MaxResults: 10000},
		Access:  rank.RecorderConfig{FlushInterval: 2 * time.Second, MaxPending: 100000, Timeout: 10 * time.Second},
		Tenancy: tenancy.Config{APIKeys: map[string]string{}, AdminAPIKeys: []string{}},
		PayloadKeys: memory.Keys{
			Text: "text", MemoryType: "memory_type", Source: "source",
			ExtractorModel: "extractor_model", ExtractorLogprob: "extractor_logprob",
			Grounding: "grounding", Observations: "observations", Confidence: "confidence",
			DecayCategory: "decay_category", CreatedAt: "created_at", LastObservedAt: "last_observed_at",
			LastAccessedAt: "last_accessed_at", AccessCounts: "access_counts", SessionIDs: "session_ids",
			TurnIDs: "turn_ids", Entities: "entities", TextHash: "text_hash", Retrievable: "retrievable",
			Tier: "tier", SupersededBy: "superseded_by", Corroborations: "corroborations",
			Contradictions: "contradictions", Modalities: "modalities", Schema: "memrank_schema",
			Attribution: "attribution", Uses: "uses", LastUsedAt: "last_used_at", Flags: "flags", Speaker: "speaker",
		},
		Telemetry: telemetry.Config{ServiceName: "memrank", LogLevel: "info", LogFormat: "json"},
		Shutdown:  Shutdown{Drain: 3 * time.Second, Grace: 10 * time.Second},
		Consolidation: consolidate.Config{Enabled: true, Collections: []string{}, Interval: 24 * time.Hour, BatchSize: 256, Rate: 2000,
			CompactReplicasAfter: 7 * 24 * time.Hour, Lease: time.Hour, Timeout: 30 * time.Second},
		MCP: MCP{Enabled: true},
		UI:  ui.Config{Enabled: true},
	}
	if diff := cmp.Diff(want, defaultConfig()); diff != "" {
		t.Errorf("defaultConfig() differs from the schema's defaults (-want +got):\n%s", diff)
	}
	if err := defaultConfig().Validate(); err != nil {
		t.Errorf("defaultConfig().Validate() = %v, want nil", err)
	}
}

// TestDefaultIsFresh guards against defaults held in package variables: a
// caller that extends one Config's tables must not change the next one's.
func TestDefaultIsFresh(t *testing.T) {
	a := defaultConfig()
	a.Scoring.Decay.HalfLives["legal"] = 45
	a.Scoring.SourceLevels["direct"] = 0
	a.Tenancy.APIKeys["k"] = "t"
	a.Scoring.Extractor.Models[0].Quality = 0
	b := defaultConfig()
	if _, ok := b.Scoring.Decay.HalfLives["legal"]; ok {
		t.Error("a category added to one defaultConfig() shows up in the next")
	}
	if b.Scoring.SourceLevels["direct"] != 0.95 || len(b.Tenancy.APIKeys) != 0 || b.Scoring.Extractor.Models[0].Quality != 0.90 {
		t.Error("changes to one defaultConfig() show up in the next")
	}
}
