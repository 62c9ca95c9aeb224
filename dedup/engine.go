package dedup

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
)

// Store is what the write path needs from Qdrant; go-client's
// *qdrant.Client satisfies it.
type Store interface {
	Query(ctx context.Context, req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error)
	Scroll(ctx context.Context, req *qdrant.ScrollPoints) ([]*qdrant.RetrievedPoint, error)
	Get(ctx context.Context, req *qdrant.GetPoints) ([]*qdrant.RetrievedPoint, error)
	Upsert(ctx context.Context, req *qdrant.UpsertPoints) (*qdrant.UpdateResult, error)
	SetPayload(ctx context.Context, req *qdrant.SetPayloadPoints) (*qdrant.UpdateResult, error)
	DeletePayload(ctx context.Context, req *qdrant.DeletePayloadPoints) (*qdrant.UpdateResult, error)
	CollectionExists(ctx context.Context, name string) (bool, error)
	CreateCollection(ctx context.Context, req *qdrant.CreateCollection) error
	GetCollectionInfo(ctx context.Context, name string) (*qdrant.CollectionInfo, error)
	CreateFieldIndex(ctx context.Context, req *qdrant.CreateFieldIndexCollection) (*qdrant.UpdateResult, error)
}

var _ Store = (*qdrant.Client)(nil)

// TenantScope says how a tenant is stored and selected; *tenancy.Policy
// satisfies it.
type TenantScope interface {
	Enabled() bool
	PayloadKey() string
	Value(tenant string) *qdrant.Value
	Condition(tenant string) *qdrant.Condition
}

// Config configures the write path. Codec and Embedder are required.
type Config struct {
	Codec    *memory.Codec
	Embedder embed.Embedder
	// Judging is tier 3 and the verdict cache; nil: no judge (pairs that
	// need one are never merged) and no cache.
	Judging *Judging

	SameThreshold        float64       // tier 2: cosine at or above is the same fact; default 0.92
	JudgeThreshold       float64       // the judge band is [JudgeThreshold, SameThreshold); default 0.80
	CorroborateThreshold float64       // cosine for corroboration between memories sharing an entity; default 0.85
	RequireSurfaceChange bool          // independence needs another wording or modality (DESIGN 6)
	MinIndependentGap    time.Duration // independence needs this long since created_at; default 1h
	Neighbours           int           // tier-2 candidates examined; default 5

	// Tenancy scopes every write when enabled; nil: off.
	Tenancy TenantScope
	// Timeout bounds each store call that has no earlier deadline; default 10s.
	Timeout time.Duration
	// Now is the clock; nil: time.Now.
	Now func() time.Time

	Logger         *slog.Logger
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
}

// Engine is the write path. It is safe for concurrent use: writes to one
// collection and tenant are serialised within the process.
type Engine struct {
	store Store
	cfg   Config
}

// New returns a write path over store.
func New(store Store, cfg Config) (*Engine, error) {
	if store == nil || cfg.Codec == nil || cfg.Embedder == nil {
		return nil, errors.New("dedup: store, codec and embedder are required")
	}
	return &Engine{store: store, cfg: cfg}, nil
}

// Observe decides what one observation is (new, a restatement, an
// independent re-observation or a contradiction) and writes it.
func (e *Engine) Observe(ctx context.Context, obs Observation) (Outcome, error) {
	panic("dedup: Observe: being written") // TODO(write path): replaced in this change
}

// Confirm applies an explicit confirmation to a stored memory (DESIGN 4.7).
func (e *Engine) Confirm(ctx context.Context, c Confirmation) (Outcome, error) {
	panic("dedup: Confirm: being written")
}

// Correct stores obs as the correction of memory obs.Corrects, which it
// supersedes whatever the two confidences.
func (e *Engine) Correct(ctx context.Context, obs Observation) (Outcome, error) {
	panic("dedup: Correct: being written")
}

// Memory returns a stored memory with its audit trail.
func (e *Engine) Memory(ctx context.Context, collection, tenant, id string) (MemoryView, error) {
	panic("dedup: Memory: being written")
}

// Stats counts a collection's memories (a tenant's, with tenancy on).
func (e *Engine) Stats(ctx context.Context, collection, tenant string) (Stats, error) {
	panic("dedup: Stats: being written")
}
