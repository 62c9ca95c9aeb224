package rank

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memrank/memrank/config/check"

	"github.com/qdrant/go-client/qdrant"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/telemetry/settings"
)

// Payloads is where the Recorder writes; *qdrant.Client satisfies it.
type Payloads interface {
	SetPayload(ctx context.Context, req *qdrant.SetPayloadPoints) (*qdrant.UpdateResult, error)
}

// Recorder defaults.
const (
	DefaultFlushInterval = 2 * time.Second
	DefaultMaxPending    = 100_000
	DefaultFlushTimeout  = 10 * time.Second
	DefaultParallelism   = 8
)

// RecorderConfig configures a Recorder. Zero values mean the defaults.
type RecorderConfig struct {
	// ReplicaID is this replica's key inside access_counts: required,
	// [A-Za-z0-9_-]+ (SanitizeReplicaID makes one from a hostname). Two
	// live replicas must never share one.
	ReplicaID string
	// FlushInterval is how often pending totals are written (default 2s).
	FlushInterval time.Duration `koanf:"flush_interval"`
	// MaxPending bounds the distinct points holding unwritten increments
	// (default 100000). Past it new points' increments are dropped and
	// counted; failed writes waiting for a retry are kept even past it, so
	// the map holds at most twice this.
	MaxPending int `koanf:"max_pending"`
	// MaxKnown bounds the remembered totals already sent (default
	// MaxPending): they keep a read fetched before a flush committed from
	// pulling a total back.
	MaxKnown int
	// Parallelism bounds the SetPayload calls in flight during a flush
	// (default 8).
	Parallelism int
	// Keys names the payload keys; only AccessCounts and LastAccessedAt are
	// used (empty: the defaults).
	Keys memory.Keys
	// Timeout is the deadline of each write of a flush (default 10s).
	Timeout time.Duration `koanf:"timeout"`
	// SpoolFile, when set, is where totals still unwritten at Shutdown
	// (the upstream down or hung through the grace period) are kept, to
	// be written after the next Start. Put it on a persistent volume, and
	// keep the replica id stable across restarts: totals spooled under
	// another id are not loaded.
	SpoolFile string `koanf:"spool_file"`

	// Telemetry is where the recorder's logs, spans and metrics go; nil
	// members record nothing.
	Telemetry settings.Settings
	Now       func() time.Time // nil: time.Now
	// AuthContext adds memrank's own upstream credentials to the context of
	// its writes (flushes run outside any caller's request); nil: none.
	AuthContext func(ctx context.Context) context.Context
}

var replicaIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// SanitizeReplicaID turns a name (a hostname, usually) into a valid replica
// id: every character outside [A-Za-z0-9_-] becomes '-'; an empty name
// gives "".
func SanitizeReplicaID(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '-'
	}, name)
}

func (c RecorderConfig) withDefaults() RecorderConfig {
	if c.FlushInterval == 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	if c.MaxPending == 0 {
		c.MaxPending = DefaultMaxPending
	}
	if c.MaxKnown == 0 {
		c.MaxKnown = c.MaxPending
	}
	if c.Parallelism == 0 {
		c.Parallelism = DefaultParallelism
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultFlushTimeout
	}
	def := memory.DefaultKeys()
	if c.Keys.AccessCounts == "" {
		c.Keys.AccessCounts = def.AccessCounts
	}
	if c.Keys.LastAccessedAt == "" {
		c.Keys.LastAccessedAt = def.LastAccessedAt
	}
	c.Telemetry = c.Telemetry.WithDefaults()
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// DefaultRecorderConfig returns the access section's defaults
// (flush_interval, max_pending); the other fields are zero: their defaults.
func DefaultRecorderConfig() RecorderConfig {
	return RecorderConfig{FlushInterval: DefaultFlushInterval, MaxPending: DefaultMaxPending, Timeout: DefaultFlushTimeout}
}

// Validate checks the access section's values as they are (the fields with
// a koanf tag); NewRecorder checks the rest after putting in defaults.
func (c RecorderConfig) Validate() error {
	var k check.Checker
	k.Timeout("flush_interval", c.FlushInterval)
	k.AtLeast("max_pending", c.MaxPending, 1)
	k.Timeout("timeout", c.Timeout)
	return k.Err()
}

// ValidReplicaID reports whether id can be a replica's key in
// access_counts: [A-Za-z0-9_-]+.
func ValidReplicaID(id string) bool { return replicaIDPattern.MatchString(id) }

// validateWiring reports settings the recorder cannot work with, defaults
// put in.
func (c RecorderConfig) validateWiring() error {
	var errs []error
	if err := c.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("rank: access: %w", err))
	}
	if !replicaIDPattern.MatchString(c.ReplicaID) {
		errs = append(errs, fmt.Errorf("rank: replica_id: %q does not match [A-Za-z0-9_-]+", c.ReplicaID))
	}
	if c.MaxKnown < 1 {
		errs = append(errs, fmt.Errorf("rank: access max known: %d is not positive", c.MaxKnown))
	}
	if c.Parallelism < 1 {
		errs = append(errs, fmt.Errorf("rank: access parallelism: %d is not positive", c.Parallelism))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("rank: access timeout: %v is negative", c.Timeout))
	}
	if c.Keys.AccessCounts == c.Keys.LastAccessedAt {
		errs = append(errs, fmt.Errorf("rank: access_counts and last_accessed_at share the key %q", c.Keys.AccessCounts))
	}
	return errors.Join(errs...)
}

// Recorder counts accesses and flushes this replica's running totals
// (docs/read-path.md).
//
// Each replica owns one key inside every point's access_counts object and
// only ever writes its absolute running total there:
// SetPayload(key "access_counts", {replica: total}), then
// SetPayload({last_accessed_at: time of the latest access}). Replicas never
// write each other's keys, and writing a total twice is harmless, so a
// failed or uncertain write is simply retried with the same total at the
// next flush.
//
// The total of a point is base + the increments recorded since, where base
// is the larger of the replica's own value read with the candidate
// (storedOwn) and the last total this process sent for it. The second term
// matters: a read fetched before a flush committed carries the old value
// and must not pull the total back. Totals sent are remembered (bounded by
// MaxKnown, least recently used first out) from the moment their write
// starts. After a restart the stored value is the truth, which is why Shutdown
// flushes.
//
// Flushes are serialised, so two writes of one point's total are never in
// flight at once.
type Recorder struct {
	dst     Payloads
	cfg     RecorderConfig
	log     *slog.Logger
	tracer  trace.Tracer
	metrics recorderMetrics
	reg     metric.Registration

	mu      sync.Mutex
	pending map[recKey]*pendingEntry
	known   *lru[recKey, int64]
	closed  bool
	// spoolLoaded says the spool file's totals are pending (the file is
	// cleared after the flush that writes them); spoolForeign are its lines
	// of other replica ids, kept for them.
	spoolLoaded  bool
	spoolForeign [][]byte
	// beats is when this replica last wrote its heartbeat to each
	// collection's companion.
	beats map[string]time.Time

	flushMu sync.Mutex

	startOnce sync.Once
	closeOnce sync.Once
	stop      chan struct{}
	wg        sync.WaitGroup
	closeErr  error

	stats struct {
		recorded, droppedCap, droppedClosed, written, failed, gone atomic.Int64
	}
}

type recKey struct {
	collection string
	id         string
}

type pendingEntry struct {
	id    *qdrant.PointId
	base  int64 // the stored or sent total the increments add to
	delta int64 // increments since
	last  time.Time
}

type recorderMetrics struct {
	dropped  metric.Int64Counter
	writes   metric.Int64Counter
	duration metric.Float64Histogram
	pending  metric.Int64ObservableGauge
}

// NewRecorder builds a Recorder writing to dst. Call Start to run its flush
// loop and Shutdown to stop it.
func NewRecorder(dst Payloads, cfg RecorderConfig) (*Recorder, error) {
	if dst == nil {
		return nil, errors.New("rank: nil payload writer")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validateWiring(); err != nil {
		return nil, err
	}
	r := &Recorder{
		dst:     dst,
		cfg:     cfg,
		log:     cfg.Telemetry.Logger,
		tracer:  cfg.Telemetry.TracerProvider.Tracer(instrumentation),
		pending: make(map[recKey]*pendingEntry),
		known:   newLRU[recKey, int64](cfg.MaxKnown, KnownTTL),
		stop:    make(chan struct{}),
	}
	m := cfg.Telemetry.MeterProvider.Meter(instrumentation)
	var err error
	if r.metrics.dropped, err = m.Int64Counter("memrank.access.dropped",
		metric.WithUnit("{access}"), metric.WithDescription("Accesses not counted: the pending map was full, or the recorder closed.")); err != nil {
		return nil, err
	}
	if r.metrics.writes, err = m.Int64Counter("memrank.access.flush.writes",
		metric.WithUnit("{point}"), metric.WithDescription("Access-count writes per point, by result (ok, failed: retried, gone: point or collection deleted).")); err != nil {
		return nil, err
	}
	if r.metrics.duration, err = m.Float64Histogram("memrank.access.flush.duration",
		metric.WithUnit("s"), metric.WithDescription("Time to flush the pending access counts.")); err != nil {
		return nil, err
	}
	if r.metrics.pending, err = m.Int64ObservableGauge("memrank.access.pending",
		metric.WithUnit("{point}"), metric.WithDescription("Points with access counts waiting to be written.")); err != nil {
		return nil, err
	}
	if r.reg, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(r.metrics.pending, int64(r.Pending()))
		return nil
	}, r.metrics.pending); err != nil {
		return nil, err
	}
	return r, nil
}

// ReplicaID is the replica's key inside access_counts.
func (r *Recorder) ReplicaID() string { return r.cfg.ReplicaID }

// Start runs the flush loop until Shutdown. ctx lends the loop its values,
// not its lifetime: a signal that ends the caller's context must not cut a
// flush in progress, and accesses recorded while a server drains are still
// flushed on time. Calls after the first, or after Shutdown, do nothing.
func (r *Recorder) Start(ctx context.Context) error {
	var err error
	r.startOnce.Do(func() {
		r.mu.Lock()
		closed := r.closed
		r.mu.Unlock()
		if closed {
			return
		}
		if r.cfg.SpoolFile != "" {
			if err = r.unspool(ctx); err != nil {
				return
			}
		}
		r.wg.Add(1)
		go r.loop(context.WithoutCancel(ctx))
	})
	return err
}

func (r *Recorder) loop(ctx context.Context) {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			// Errors are counted and logged by Flush; the failed points
			// wait for the next tick.
			_ = r.Flush(ctx)
		}
	}
}

// idKey is a point id as a map key: numbers and UUIDs never collide.
func idKey(id *qdrant.PointId) (string, bool) {
	switch o := id.GetPointIdOptions().(type) {
	case *qdrant.PointId_Num:
		return "#" + strconv.FormatUint(o.Num, 10), true
	case *qdrant.PointId_Uuid:
		return strings.ToLower(o.Uuid), true
	}
	return "", false
}

// Record counts one access of a point. storedOwn is this replica's value
// found in the point's payload when it was read (access_counts.<replica>).
// It never blocks on I/O: past MaxPending distinct points, or after Shutdown,
// the access is dropped and counted.
func (r *Recorder) Record(collection string, id *qdrant.PointId, storedOwn int64) {
	key, ok := idKey(id)
	if !ok {
		return
	}
	k := recKey{collection: collection, id: key}
	now := r.cfg.Now()
	storedOwn = max(storedOwn, 0)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.stats.droppedClosed.Add(1)
		r.metrics.dropped.Add(context.Background(), 1, metric.WithAttributes(attrReason.String("closed")))
		return
	}
	e, ok := r.pending[k]
	if !ok {
		if len(r.pending) >= r.cfg.MaxPending {
			r.mu.Unlock()
			r.stats.droppedCap.Add(1)
			r.metrics.dropped.Add(context.Background(), 1, metric.WithAttributes(attrReason.String("max_pending")))
			return
		}
		e = &pendingEntry{id: id}
		if sent, ok := r.known.get(k, now); ok {
			e.base = sent
		}
		r.pending[k] = e
	}
	e.base = max(e.base, storedOwn)
	e.delta++
	if now.After(e.last) {
		e.last = now
	}
	r.mu.Unlock()
	r.stats.recorded.Add(1)
}

// Pending is the number of points with totals waiting to be written.
func (r *Recorder) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// RecorderStats are the recorder's counters since it was built.
type RecorderStats struct {
	Recorded      int64 // accesses counted
	DroppedCap    int64 // accesses dropped: MaxPending distinct points reached
	DroppedClosed int64 // accesses dropped: recorded after Shutdown
	Written       int64 // point writes that succeeded
	Failed        int64 // point writes that failed (retried at the next flush)
	Gone          int64 // point writes abandoned: the point or collection no longer exists
}

// Stats returns the recorder's counters.
func (r *Recorder) Stats() RecorderStats {
	return RecorderStats{
		Recorded:      r.stats.recorded.Load(),
		DroppedCap:    r.stats.droppedCap.Load(),
		DroppedClosed: r.stats.droppedClosed.Load(),
		Written:       r.stats.written.Load(),
		Failed:        r.stats.failed.Load(),
		Gone:          r.stats.gone.Load(),
	}
}

type flushItem struct {
	key   recKey
	id    *qdrant.PointId
	total int64
	last  time.Time
}

// Flush writes every pending total now. Points whose write fails stay
// pending with the same total (or a larger one, if accessed meanwhile) and
// are written again by the next flush. It returns an error summarising the
// failures; each is also counted and logged.
func (r *Recorder) Flush(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	start := time.Now()

	r.mu.Lock()
	if len(r.pending) == 0 {
		r.mu.Unlock()
		return nil
	}
	now := r.cfg.Now()
	batch := make([]flushItem, 0, len(r.pending))
	for k, e := range r.pending {
		total := e.base + e.delta
		batch = append(batch, flushItem{key: k, id: e.id, total: total, last: e.last})
		// Remembered before the write starts: a read racing the write
		// must build on this total, not on the value it fetched.
		r.known.add(k, total, now)
	}
	clear(r.pending)
	r.mu.Unlock()

	ctx, span := r.tracer.Start(ctx, "rank.access.flush", trace.WithAttributes(
		attribute.Int("memrank.access.points", len(batch)), attribute.String("memrank.replica", r.cfg.ReplicaID)))
	defer span.End()
	if r.cfg.AuthContext != nil {
		ctx = r.cfg.AuthContext(ctx)
	}
	errs := make([]error, len(batch))
	chunks := r.chunks(batch)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(r.cfg.Parallelism, len(chunks)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(chunks) {
					return
				}
				r.writeChunk(ctx, batch, chunks[i], errs)
			}
		})
	}
	wg.Wait()

	var failed, gone int
	var first error
	r.mu.Lock()
	for i, err := range errs {
		if err == nil {
			continue
		}
		it := &batch[i]
		if status.Code(err) == grpccodes.NotFound {
			// The point or its collection was deleted: nothing to count,
			// and a point created again under the same id starts afresh
			// rather than from the deleted one's total.
			gone++
			if e, ok := r.known.get(it.key, now); ok && e == it.total {
				r.known.remove(it.key)
			}
			continue
		}
		failed++
		if first == nil {
			first = err
		}
		if _, ok := r.pending[it.key]; !ok {
			// Accessed meanwhile: that entry's base already includes
			// this total, and its write will carry both.
			r.pending[it.key] = &pendingEntry{id: it.id, base: it.total, last: it.last}
		}
	}
	r.mu.Unlock()

	r.heartbeat(ctx, batch, errs, now)
	ok := len(batch) - failed - gone
	r.stats.written.Add(int64(ok))
	r.stats.failed.Add(int64(failed))
	r.stats.gone.Add(int64(gone))
	for _, c := range []struct {
		result string
		n      int
	}{{"ok", ok}, {"failed", failed}, {"gone", gone}} {
		if c.n > 0 {
			r.metrics.writes.Add(ctx, int64(c.n), metric.WithAttributes(attrResult.String(c.result)))
		}
	}
	r.metrics.duration.Record(ctx, time.Since(start).Seconds())
	span.SetAttributes(attribute.Int("memrank.access.failed", failed), attribute.Int("memrank.access.gone", gone))
	if gone > 0 {
		r.log.InfoContext(ctx, "access counts: points no longer exist, their counts were dropped", "points", gone)
	}
	if failed == 0 {
		if r.cfg.SpoolFile != "" {
			r.spooled() // the loaded totals are written: clear the file
		}
		return nil
	}
	span.SetStatus(codes.Error, "access flush failed")
	r.log.WarnContext(ctx, "access counts: writes failed, retrying at the next flush",
		"failed", failed, "points", len(batch), "error", first)
	return fmt.Errorf("rank: access flush: %d of %d point writes failed: %w", failed, len(batch), first)
}

// BatchPayloads is the optional batched writer of a Payloads
// (*qdrant.Client has it): a flush then writes up to FlushBatch points of a
// collection in one UpdateBatch call, one commit upstream instead of two per
// point. Writes commit under the collection's write lock on the embedded
// store (and are fsync'ed), so per-point writes would hold back the very
// reads being counted.
type BatchPayloads interface {
	UpdateBatch(ctx context.Context, req *qdrant.UpdateBatchPoints) ([]*qdrant.UpdateResult, error)
}

// FlushBatch is the most points one UpdateBatch of a flush carries.
const FlushBatch = 256

// chunks splits the batch into runs of at most FlushBatch items of one
// collection (indexes into batch). Without a batched writer every item is
// its own chunk.
func (r *Recorder) chunks(batch []flushItem) [][]int {
	idx := make([]int, len(batch))
	for i := range idx {
		idx[i] = i
	}
	if _, ok := r.dst.(BatchPayloads); !ok {
		out := make([][]int, len(idx))
		for i := range idx {
			out[i] = idx[i : i+1]
		}
		return out
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(batch[a].key.collection, batch[b].key.collection) })
	var out [][]int
	for start := 0; start < len(idx); {
		end := start + 1
		for end < len(idx) && end-start < FlushBatch && batch[idx[end]].key.collection == batch[idx[start]].key.collection {
			end++
		}
		out = append(out, idx[start:end])
		start = end
	}
	return out
}

// writeChunk writes the chunk's items, recording each one's error in errs.
// A chunk of several goes as one UpdateBatch; if that fails (a point was
// deleted meanwhile, say), each item is written on its own so that one bad
// point neither fails nor hides the others. Writing again what a partly
// applied batch already wrote is harmless: the totals are absolute. When the
// upstream is unreachable the whole chunk fails at once and waits for the
// next flush.
func (r *Recorder) writeChunk(ctx context.Context, batch []flushItem, chunk []int, errs []error) {
	if bp, ok := r.dst.(BatchPayloads); ok && len(chunk) > 1 {
		wait := true
		key := r.cfg.Keys.AccessCounts
		ops := make([]*qdrant.PointsUpdateOperation, 0, 2*len(chunk))
		for _, i := range chunk {
			it := &batch[i]
			sel := qdrant.NewPointsSelector(it.id)
			ops = append(ops,
				qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
					Payload:        map[string]*qdrant.Value{r.cfg.ReplicaID: qdrant.NewValueInt(it.total)},
					PointsSelector: sel,
					Key:            &key,
				}),
				qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
					Payload:        map[string]*qdrant.Value{r.cfg.Keys.LastAccessedAt: qdrant.NewValueString(memory.FormatTime(it.last))},
					PointsSelector: sel,
				}))
		}
		cctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
		_, err := bp.UpdateBatch(cctx, &qdrant.UpdateBatchPoints{
			CollectionName: batch[chunk[0]].key.collection,
			Wait:           &wait,
			Operations:     ops,
		})
		cancel()
		switch status.Code(err) {
		case grpccodes.OK:
			return
		case grpccodes.NotFound, grpccodes.InvalidArgument, grpccodes.Unimplemented:
			// Something in the batch was refused: find what, point by point.
			r.log.DebugContext(ctx, "access counts: batched write refused, writing point by point", "points", len(chunk), "error", err)
		default:
			// Unavailable, a deadline...: point-by-point writes would fail
			// the same way, many times over. The next flush retries.
			for _, i := range chunk {
				errs[i] = err
			}
			return
		}
	}
	for _, i := range chunk {
		errs[i] = r.write(ctx, &batch[i])
	}
}

// write sends one point's total and its last access time, each call under
// its own deadline.
func (r *Recorder) write(ctx context.Context, it *flushItem) error {
	wait := true
	key := r.cfg.Keys.AccessCounts
	sel := qdrant.NewPointsSelector(it.id)
	cctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	_, err := r.dst.SetPayload(cctx, &qdrant.SetPayloadPoints{
		CollectionName: it.key.collection,
		Wait:           &wait,
		Payload:        map[string]*qdrant.Value{r.cfg.ReplicaID: qdrant.NewValueInt(it.total)},
		PointsSelector: sel,
		Key:            &key,
	})
	cancel()
	if err != nil {
		return err
	}
	cctx, cancel = context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	_, err = r.dst.SetPayload(cctx, &qdrant.SetPayloadPoints{
		CollectionName: it.key.collection,
		Wait:           &wait,
		Payload:        map[string]*qdrant.Value{r.cfg.Keys.LastAccessedAt: qdrant.NewValueString(memory.FormatTime(it.last))},
		PointsSelector: sel,
	})
	return err
}

// flushUntil flushes, and flushes again what failed, until nothing is
// pending or ctx ends (a context without a deadline: three tries): an
// upstream that recovers within the grace period still gets every total.
func (r *Recorder) flushUntil(ctx context.Context) error {
	_, bounded := ctx.Deadline()
	for try, wait := 1, 50*time.Millisecond; ; try, wait = try+1, min(2*wait, time.Second) {
		err := r.Flush(ctx)
		if err == nil || r.Pending() == 0 || ctx.Err() != nil || !bounded && try >= 3 {
			return err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return err
		}
	}
}

// Shutdown stops the flush loop (letting a flush in progress finish),
// refuses further accesses and flushes what is pending, within ctx. It is
// safe to call more than once; later calls return the first call's result.
func (r *Recorder) Shutdown(ctx context.Context) error {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		close(r.stop)
		r.wg.Wait()
		pending, written := r.Pending(), r.stats.written.Load()
		r.closeErr = r.flushUntil(ctx)
		r.log.InfoContext(ctx, "access counts: final flush", "points", pending, "written", r.stats.written.Load()-written,
			"unwritten", r.Pending())
		if r.cfg.SpoolFile != "" {
			n, err := r.spool()
			switch {
			case err != nil:
				r.closeErr = errors.Join(r.closeErr, fmt.Errorf("rank: access spool: %w", err))
				r.log.ErrorContext(ctx, "access counts: unwritten at close and not spooled, lost", "points", r.Pending(), "error", err)
			case n > 0:
				r.log.WarnContext(ctx, "access counts: unwritten at close, spooled for the next start", "points", n, "file", r.cfg.SpoolFile)
			}
		} else if n := r.Pending(); n > 0 {
			r.log.ErrorContext(ctx, "access counts: unwritten at close, lost (set access.spool_file to keep them)", "points", n)
		}
		if r.reg != nil {
			_ = r.reg.Unregister()
		}
	})
	return r.closeErr
}
