package rank

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/config/check"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantwire"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/telemetry/settings"
)

// Source is where candidates come from. go-client's *qdrant.Client
// satisfies it. The caller's gRPC metadata (api-key, authorization) travels
// in ctx as outgoing metadata; rank never adds credentials.
type Source interface {
	Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error)
	GetCollectionInfo(ctx context.Context, name string) (*qdrant.CollectionInfo, error)
}

// GroupSource is the optional source of grouped queries (QueryGroups);
// *qdrant.Client satisfies it. New finds it on the Source by a type
// assertion.
type GroupSource interface {
	QueryGroups(ctx context.Context, req *qdrant.QueryPointGroups) ([]*qdrant.PointGroup, error)
}

// ListingSource is the optional source of the candidate cache's listings
// (a Query for ids, scores and versions, no payloads or vectors), decoded
// as the caller likes so long as the points are Query's;
// *qdrantwire.Client is one. New finds it on the Source by a type
// assertion; without it, listings are Source.Query calls.
type ListingSource interface {
	QueryListing(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error)
}

// WireSource is the optional source of the candidate cache's fetches of
// missing points that also returns each point's payload as wire bytes
// (qdrantwire.PayloadWires), which a reply can then copy;
// *qdrantwire.Client is one. New finds it on the Source by a type
// assertion; without it, fetches are Source.Query calls and replies encode
// payloads from their maps.
type WireSource interface {
	QueryWire(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, [][]byte, error)
}

// VerdictCache holds the LLM judge's verdicts (filled by the write path).
// Lookup is keyed by the two memories' text hashes in either order, and
// must be safe for concurrent use and fast: it is called on the read path.
// The verdicts are dedup's, so *dedup.Judging is one as it is. A "same"
// verdict folds a pair in the judge band; "different" and "contradicts"
// keep both.
type VerdictCache interface {
	Lookup(hashA, hashB string) (dedup.Verdict, bool)
}

var (
	_ Source        = (*qdrant.Client)(nil)
	_ GroupSource   = (*qdrant.Client)(nil)
	_ ListingSource = (*qdrantwire.Client)(nil)
	_ WireSource    = (*qdrantwire.Client)(nil)
	_ Payloads      = (*qdrant.Client)(nil)
)

// Defaults of the settings that are not part of the configuration file.
const (
	DefaultSameThreshold  = dedup.DefaultSameThreshold // the write path's, so both fold alike
	DefaultJudgeThreshold = dedup.DefaultJudgeThreshold
	DefaultInfoTTL        = 30 * time.Second
	DefaultInfoCacheSize  = 1024
	DefaultDetectTimeout  = 5 * time.Second
	// DefaultCandidateCacheBytes and DefaultCandidateCacheTTL are
	// CandidateCacheConfig's defaults (DefaultConfig's; a zero MaxBytes in a
	// Config built in code is "off").
	DefaultCandidateCacheBytes = 64 << 20
	DefaultCandidateCacheTTL   = 2 * time.Minute
)

// CandidateCacheConfig configures the candidate cache: with it, a
// re-ranked dense nearest query asks the upstream for its candidates' ids,
// scores and versions only, and takes their payloads and tier-2 vectors
// from the cache (fetching the misses in one Get). An entry is keyed by the
// collection name sent upstream, the point id and its version, and served
// only when the upstream's score equals the similarity of the query with
// the cached vector. A collection or alias change that passes through
// memrank's fronts invalidates every entry. What nothing catches: a
// collection deleted and recreated behind memrank (by another client or
// replica), or an alias moved by one, whose points have the same ids,
// versions and vectors but other payloads, is served the old payloads for
// up to TTL.
type CandidateCacheConfig struct {
	// MaxBytes bounds the entries' estimated size (payload and vectors as
	// encoded, plus overhead); 0 or negative: no cache.
	MaxBytes int `koanf:"max_bytes"`
	// TTL is how long an entry may be served after it was fetched.
	TTL time.Duration `koanf:"ttl"`
}

// Config configures a Ranker. The fields with a koanf tag are the rank
// section of memrank's configuration (DefaultConfig holds their defaults,
// Validate checks them); the others are how the Ranker is wired: its
// collaborators and the settings other sections own. The zero value of
// every field means its default.
type Config struct {
	// Oversample multiplies offset + limit into the candidates asked for.
	Oversample int `koanf:"oversample"`
	// MinCandidates is the fewest candidates asked for, however small the
	// limit: with limit 1 and Oversample 4 the pool of four often misses
	// the memory that should lead (a better-supported one a little further
	// by vector), so a top-1 answer would differ from the first of a top-10
	// one. The default, 40, is what a limit of 10 asks and the pool the
	// query's focus on recent memories is measured against
	// (scoring.focus.pool), so that any limit up to 10 gets the same focus
	// and the same first answers. 1: no floor.
	MinCandidates int `koanf:"min_candidates"`
	// MaxCandidates caps (offset + limit) x Oversample and MinCandidates;
	// the cap never goes below offset + limit.
	MaxCandidates int `koanf:"max_candidates"`
	// Mode is how collections not in Collections are served: ModeAuto
	// re-ranks memory collections, recognised from their payloads or their
	// audit companion, and passes the others through.
	Mode Mode `koanf:"mode"`
	// Collections holds per-collection settings, by collection name.
	Collections map[string]CollectionConfig `koanf:"collections"`
	// Guard is the relevance guard (all zero: DefaultGuard); EmbedderGuards
	// change it for the collections whose audit companion records that
	// embedder model: an exact model name ("memrank-local-hash-v1:384") or
	// the name before its ":dimensions" suffix.
	Guard          Guard                 `koanf:"guard"`
	EmbedderGuards map[string]GuardPatch `koanf:"embedder_guards"`
	// Detect configures how memory collections are recognised.
	Detect DetectConfig `koanf:"detect"`
	// Shadow configures shadow mode.
	Shadow ShadowConfig `koanf:"shadow"`
	// CandidateCache configures the cache of candidates' payloads and
	// tier-2 vectors (see CandidateCacheConfig).
	CandidateCache CandidateCacheConfig `koanf:"candidate_cache"`

	// Params are the scoring parameters; nil means Codec's, or the defaults
	// when Codec is nil too.
	Params *scoring.Params
	// Codec decodes payloads; nil means the default keys with Params.
	Codec *memory.Codec
	// SameThreshold is tier 2's cosine (default 0.92) and JudgeThreshold
	// the lower edge of the judge band [JudgeThreshold, SameThreshold)
	// (default 0.80): the dedup section's.
	SameThreshold  float64
	JudgeThreshold float64
	// AuthContext adds memrank's own upstream credentials to the look-ups
	// that recognise memory collections, so that one caller's credentials
	// (a wrong key, a key for one collection only) never decide how every
	// caller is served; nil: those look-ups carry the caller's credentials.
	AuthContext func(context.Context) context.Context
	// Verdicts is the judge's verdict cache; nil means none (the explanation
	// says the judge was not consulted).
	Verdicts VerdictCache
	// Recorder counts returned memories as accessed; nil means no counting.
	Recorder *Recorder
	// History says when memories were superseded, for queries asked as of
	// a time (AsOf); nil: such queries keep today's supersessions.
	History History
	// InfoTTL is how long a collection's vector configuration is cached
	// (default 30s); InfoCacheSize bounds the collections cached (default
	// 1024).
	InfoTTL       time.Duration
	InfoCacheSize int
	// Telemetry is where the ranker's spans and metrics go, and its Logger
	// receives the shadow mode's sampled comparisons; nil members record
	// nothing.
	Telemetry settings.Settings
	Now       func() time.Time // nil = time.Now
}

// The built-in embedders' model names without their dimensions.
const (
	localEmbedder    = embed.LocalModelVersion
	semanticEmbedder = embed.SemanticModelVersion
)

// DefaultConfig returns the rank section's defaults (the other fields are
// zero: their defaults). The guard's were chosen with memrank eval on the
// training split of the shipped set (examples/eval): the highest floor that
// loses no read of a relevant memory.
func DefaultConfig() Config {
	return Config{
		Oversample:    4,
		MinCandidates: 40,
		MaxCandidates: 1000,
		Mode:          ModeAuto,
		Collections:   map[string]CollectionConfig{},
		Guard:         DefaultGuard(),
		// The local embedder is lexical: a question and its answer share a
		// few words (0.2 to 0.4), unrelated texts score near 0 (95% below
		// 0.15): set from the demo's questions, not from a labeled set. The
		// semantic one puts a question and its answer at 0.3 to 0.65 and 90%
		// of the unrelated pairs of examples/pairs below 0.2; its band was
		// set on LoCoMo's dev conversations, where at 0.15 17 of every 25
		// results counted as read, at 0.03 about 2 (docs/scoring.md).
		EmbedderGuards: map[string]GuardPatch{
			localEmbedder:    {Band: ptr(0.15), Floor: ptr(0.15)},
			semanticEmbedder: {Band: ptr(0.03), Floor: ptr(0.2)},
		},
		Detect:         DetectConfig{SampleSize: 32, TTL: time.Minute},
		Shadow:         ShadowConfig{SampleRate: 1, LogInterval: 10 * time.Second},
		CandidateCache: CandidateCacheConfig{MaxBytes: DefaultCandidateCacheBytes, TTL: DefaultCandidateCacheTTL},
	}
}

func ptr[T any](v T) *T { return &v }

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Params == nil {
		if c.Codec != nil {
			c.Params = c.Codec.Params()
		} else {
			c.Params = scoring.DefaultParams()
		}
	}
	if c.Oversample == 0 {
		c.Oversample = d.Oversample
	}
	if c.MinCandidates == 0 {
		c.MinCandidates = d.MinCandidates
	}
	if c.MaxCandidates == 0 {
		c.MaxCandidates = d.MaxCandidates
	}
	if c.EmbedderGuards == nil {
		c.EmbedderGuards = d.EmbedderGuards
	}
	if c.Guard == (Guard{}) {
		c.Guard = d.Guard
	}
	if c.Detect.SampleSize == 0 {
		c.Detect.SampleSize = d.Detect.SampleSize
	}
	if c.Detect.TTL == 0 {
		c.Detect.TTL = d.Detect.TTL
	}
	if c.Shadow.SampleRate == 0 {
		c.Shadow.SampleRate = d.Shadow.SampleRate
	}
	if c.Shadow.LogInterval == 0 {
		c.Shadow.LogInterval = d.Shadow.LogInterval
	}
	if c.CandidateCache.TTL == 0 {
		c.CandidateCache.TTL = d.CandidateCache.TTL
	}
	if c.SameThreshold == 0 {
		c.SameThreshold = DefaultSameThreshold
	}
	if c.JudgeThreshold == 0 {
		c.JudgeThreshold = DefaultJudgeThreshold
	}
	if c.InfoTTL == 0 {
		c.InfoTTL = DefaultInfoTTL
	}
	if c.InfoCacheSize == 0 {
		c.InfoCacheSize = DefaultInfoCacheSize
	}
	if c.Detect.CacheSize == 0 {
		c.Detect.CacheSize = DefaultInfoCacheSize
	}
	if c.Detect.Timeout == 0 {
		c.Detect.Timeout = DefaultDetectTimeout
	}
	if c.Detect.FailureTTL == 0 {
		c.Detect.FailureTTL = DefaultDetectTimeout
	}
	c.Telemetry = c.Telemetry.WithDefaults()
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate checks the rank section's values as they are (New checks a
// Config after putting in the defaults of its zero values).
func (c Config) Validate() error {
	var k check.Checker
	k.AtLeast("oversample", c.Oversample, 1)
	if c.Oversample > 100 {
		k.Add("oversample", "%d is more than 100", c.Oversample)
	}
	k.AtLeast("min_candidates", c.MinCandidates, 1)
	k.AtLeast("max_candidates", c.MaxCandidates, 1)
	if c.Mode > ModeOff {
		k.Add("mode", "%d is not a mode", c.Mode)
	}
	c.Guard.check(&k, "guard")
	for _, name := range slices.Sorted(maps.Keys(c.Collections)) {
		key := "collections." + name
		if strings.TrimSpace(name) == "" {
			k.Add("collections", "has an entry with an empty name")
			continue
		}
		if memory.IsCompanion(name) {
			k.Add(key, "names a companion (%s): memrank's own records are never re-ranked", memory.CompanionWhat(name))
		}
		if m := c.Collections[name].Mode; m > ModeOff {
			k.Add(key+".mode", "%d is not a mode", m)
		}
		c.Collections[name].Guard.check(&k, key+".guard")
	}
	for _, model := range slices.Sorted(maps.Keys(c.EmbedderGuards)) {
		if model == "" {
			k.Add("embedder_guards", "has an entry with an empty name")
			continue
		}
		c.EmbedderGuards[model].check(&k, "embedder_guards."+model)
	}
	if c.Detect.SampleSize < 1 || c.Detect.SampleSize > 1000 {
		k.Add("detect.sample_size", "%d is outside [1, 1000]", c.Detect.SampleSize)
	}
	k.Timeout("detect.ttl", c.Detect.TTL)
	if !(c.Shadow.SampleRate > 0 && c.Shadow.SampleRate <= 1) {
		k.Add("shadow.sample_rate", "%s is outside (0, 1]", check.Float(c.Shadow.SampleRate))
	}
	k.Timeout("shadow.log_interval", c.Shadow.LogInterval)
	k.Timeout("candidate_cache.ttl", c.CandidateCache.TTL)
	return k.Err()
}

// validateWiring checks what New needs beyond the section.
func (c Config) validateWiring() error {
	var errs []error
	if err := c.Params.Validate(); err != nil {
		errs = append(errs, err)
	}
	if !(c.SameThreshold > 0 && c.SameThreshold <= 1) {
		errs = append(errs, fmt.Errorf("rank: same_threshold: %v is outside (0, 1]", c.SameThreshold))
	}
	if !(c.JudgeThreshold > 0 && c.JudgeThreshold <= c.SameThreshold) || math.IsNaN(c.JudgeThreshold) {
		errs = append(errs, fmt.Errorf("rank: judge_threshold: %v is outside (0, same_threshold]", c.JudgeThreshold))
	}
	if c.Detect.Timeout < 0 || c.Detect.FailureTTL < 0 || c.InfoTTL < 0 {
		errs = append(errs, fmt.Errorf("rank: detect timeout %v, failure TTL %v, info TTL %v: none may be negative", c.Detect.Timeout, c.Detect.FailureTTL, c.InfoTTL))
	}
	if c.Detect.CacheSize < 1 || c.InfoCacheSize < 1 {
		errs = append(errs, fmt.Errorf("rank: cache sizes %d and %d must be positive", c.Detect.CacheSize, c.InfoCacheSize))
	}
	return errors.Join(errs...)
}

// ErrInvalidRequest is memrank's own refusal of a request it cannot even
// send upstream (a nil request). Fronts map it to InvalidArgument / 400.
var ErrInvalidRequest = errors.New("rank: invalid request")

// ErrGroupsUnsupported is returned by QueryGroups when the Source has no
// QueryGroups. Fronts map it to Unimplemented / 501.
var ErrGroupsUnsupported = errors.New("rank: the source does not support grouped queries")
