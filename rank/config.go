package rank

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/scoring"
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
type VerdictCache interface {
	Lookup(hashA, hashB string) (Verdict, bool)
}

// Verdict is the judge's verdict on a pair of memories. The zero value is
// no verdict.
type Verdict uint8

// Verdicts.
const (
	VerdictSame        Verdict = iota + 1 // the same fact: folded at read time
	VerdictDifferent                      // different facts
	VerdictContradicts                    // the two contradict each other
)

func (v Verdict) String() string {
	switch v {
	case VerdictSame:
		return "same"
	case VerdictDifferent:
		return "different"
	case VerdictContradicts:
		return "contradicts"
	}
	return "none"
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
	// MemoryCollections are the re-ranked collections; empty means all
	// (audit companions, named *_memrank_audit, excepted).
	MemoryCollections []string
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

	TracerProvider trace.TracerProvider // nil = noop
	MeterProvider  metric.MeterProvider // nil = noop
	Now            func() time.Time     // nil = time.Now
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
	for i, name := range c.MemoryCollections {
		if strings.TrimSpace(name) == "" {
			errs = append(errs, fmt.Errorf("rank: memory_collections[%d]: empty name", i))
		}
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
