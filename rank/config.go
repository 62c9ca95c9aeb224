package rank

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/memory"
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
	_ Source      = (*qdrant.Client)(nil)
	_ GroupSource = (*qdrant.Client)(nil)
	_ Payloads    = (*qdrant.Client)(nil)
)

// AuditSuffix ends the name of a memory collection's audit companion
// (DESIGN section 6). Such collections are never re-ranked, even when every
// collection is a memory collection.
const AuditSuffix = "_memrank_audit"

// Defaults.
const (
	DefaultOversample     = 4
	DefaultMaxCandidates  = 1000
	DefaultSameThreshold  = 0.92
	DefaultJudgeThreshold = 0.80
	DefaultInfoTTL        = 30 * time.Second
	DefaultInfoCacheSize  = 1024

	DefaultDetectSample      = 32
	DefaultDetectTTL         = time.Minute
	DefaultDetectTimeout     = 5 * time.Second
	DefaultShadowLogInterval = 10 * time.Second
)

// Config configures a Ranker. The zero value of every field means its
// default.
type Config struct {
	// Params are the scoring parameters; nil means Codec's, or the defaults
	// when Codec is nil too.
	Params *scoring.Params
	// Codec decodes payloads; nil means the default keys with Params.
	Codec *memory.Codec
	// Oversample multiplies offset + limit into the candidates asked for
	// (default 4).
	Oversample int
	// MaxCandidates caps (offset + limit) x Oversample (default 1000); the
	// cap never goes below offset + limit.
	MaxCandidates int
	// SameThreshold is tier 2's cosine (default 0.92).
	SameThreshold float64
	// JudgeThreshold is the lower edge of the judge band [JudgeThreshold,
	// SameThreshold) (default 0.80).
	JudgeThreshold float64
	// Mode is how collections not in Collections are served (default
	// ModeAuto: memory collections re-ranked, recognised from their
	// payloads or their audit companion; the others passed through).
	Mode Mode
	// Collections holds per-collection settings, by collection name.
	Collections map[string]CollectionConfig
	// Guard is the relevance guard for collections whose embedder has no
	// entry in EmbedderGuards (the zero value means DefaultGuard).
	Guard Guard
	// EmbedderGuards are guards by embedder model, for collections whose
	// audit companion records the embedder they were written with: an
	// exact model name ("memrank-local-hash-v1:384") or the name before
	// its ":dimensions" suffix.
	EmbedderGuards map[string]Guard
	// Detect configures how memory collections are recognised.
	Detect DetectConfig
	// Shadow configures shadow mode.
	Shadow ShadowConfig
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

func (c Config) withDefaults() Config {
	if c.Params == nil {
		if c.Codec != nil {
			c.Params = c.Codec.Params()
		} else {
			c.Params = scoring.DefaultParams()
		}
	}
	if c.Oversample == 0 {
		c.Oversample = DefaultOversample
	}
	if c.MaxCandidates == 0 {
		c.MaxCandidates = DefaultMaxCandidates
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
	if c.Guard == (Guard{}) {
		c.Guard = DefaultGuard()
	}
	if c.Detect.SampleSize == 0 {
		c.Detect.SampleSize = DefaultDetectSample
	}
	if c.Detect.TTL == 0 {
		c.Detect.TTL = DefaultDetectTTL
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
	if c.Shadow.SampleRate == 0 {
		c.Shadow.SampleRate = 1
	}
	if c.Shadow.LogInterval == 0 {
		c.Shadow.LogInterval = DefaultShadowLogInterval
	}
	c.Telemetry = c.Telemetry.WithDefaults()
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports settings the ranker cannot work with; zero values are
// checked as their defaults.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if err := c.Params.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Oversample < 1 || c.Oversample > 100 {
		errs = append(errs, fmt.Errorf("rank: oversample: %d is outside [1, 100]", c.Oversample))
	}
	if c.MaxCandidates < 1 {
		errs = append(errs, fmt.Errorf("rank: max_candidates: %d is not positive", c.MaxCandidates))
	}
	if !(c.SameThreshold > 0 && c.SameThreshold <= 1) {
		errs = append(errs, fmt.Errorf("rank: same_threshold: %v is outside (0, 1]", c.SameThreshold))
	}
	if !(c.JudgeThreshold > 0 && c.JudgeThreshold <= c.SameThreshold) || math.IsNaN(c.JudgeThreshold) {
		errs = append(errs, fmt.Errorf("rank: judge_threshold: %v is outside (0, same_threshold]", c.JudgeThreshold))
	}
	if c.Mode > ModeOff {
		errs = append(errs, fmt.Errorf("rank: mode: %v is not a mode", c.Mode))
	}
	for name, cc := range c.Collections {
		if strings.TrimSpace(name) == "" {
			errs = append(errs, errors.New("rank: collections: empty collection name"))
		}
		if cc.Mode > ModeOff {
			errs = append(errs, fmt.Errorf("rank: collections.%s.mode: %v is not a mode", name, cc.Mode))
		}
		if cc.Guard != nil {
			if err := cc.Guard.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("collections.%s: %w", name, err))
			}
		}
	}
	if err := c.Guard.Validate(); err != nil {
		errs = append(errs, err)
	}
	for model, g := range c.EmbedderGuards {
		if err := g.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("embedder_guards.%s: %w", model, err))
		}
	}
	if c.Detect.SampleSize < 1 || c.Detect.SampleSize > 1000 {
		errs = append(errs, fmt.Errorf("rank: detect sample size: %d is outside [1, 1000]", c.Detect.SampleSize))
	}
	if c.Detect.TTL < 0 || c.Detect.Timeout < 0 || c.Detect.FailureTTL < 0 {
		errs = append(errs, fmt.Errorf("rank: detect TTL %v, timeout %v, failure TTL %v: none may be negative", c.Detect.TTL, c.Detect.Timeout, c.Detect.FailureTTL))
	}
	if c.Detect.CacheSize < 1 {
		errs = append(errs, fmt.Errorf("rank: detect cache size: %d is not positive", c.Detect.CacheSize))
	}
	if !(c.Shadow.SampleRate > 0 && c.Shadow.SampleRate <= 1) {
		errs = append(errs, fmt.Errorf("rank: shadow sample rate: %v is outside (0, 1]", c.Shadow.SampleRate))
	}
	if c.Shadow.LogInterval < 0 {
		errs = append(errs, fmt.Errorf("rank: shadow log interval: %v is negative", c.Shadow.LogInterval))
	}
	if c.InfoTTL < 0 {
		errs = append(errs, fmt.Errorf("rank: info TTL: %v is negative", c.InfoTTL))
	}
	if c.InfoCacheSize < 1 {
		errs = append(errs, fmt.Errorf("rank: info cache size: %d is not positive", c.InfoCacheSize))
	}
	return errors.Join(errs...)
}

// ErrInvalidRequest is memrank's own refusal of a request it cannot even
// send upstream (a nil request). Fronts map it to InvalidArgument / 400.
var ErrInvalidRequest = errors.New("rank: invalid request")

// ErrGroupsUnsupported is returned by QueryGroups when the Source has no
// QueryGroups. Fronts map it to Unimplemented / 501.
var ErrGroupsUnsupported = errors.New("rank: the source does not support grouped queries")
