package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"

	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/internal/demo"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantwire"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/server/native"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/telemetry"
	"github.com/memrank/memrank/telemetry/settings"
	"github.com/memrank/memrank/tenancy"
	"github.com/memrank/memrank/upstream"
)

// stack is memrank's read and write paths assembled from a Config, without
// listeners: the upstream (Qdrant, or the embedded store in process), the
// ranker with its access recorder, tenancy, the embedder, the write path
// and the native API. `serve` puts the fronts on top of it; `explain` and
// `eval` call it in process. Everything it opened is in life, shut down in
// reverse order by close.
type stack struct {
	cfg       Config
	tel       *telemetry.Telemetry
	replicaID string
	// upstreamName says where the data is, for the start-up message.
	upstreamName string

	upstream *grpc.ClientConn // raw-codec connection the gRPC front forwards on
	source   *qdrant.Client   // typed client of the ranker, recorder, write path, demo and readiness
	recorder *rank.Recorder
	ranker   *rank.Ranker
	policy   *tenancy.Policy
	embedder *embed.Service
	judging  *dedup.Judging
	engine   *dedup.Engine
	upkeep   *consolidate.Job
	native   *native.Service

	life lifecycle
}

// replicaID is the configured replica id, or one made from the hostname.
func replicaID(c Config) string {
	if c.ReplicaID != "" {
		return c.ReplicaID // checked by Config.Validate
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "memrank"
	}
	return rank.SanitizeReplicaID(host)
}

// newStack builds the read and write paths. Logs go to logOut.
// recordAccess false leaves access counting off (explain must not count its
// own look-ups as uses); true starts the recorder's flush loop, which runs
// until ctx ends.
func newStack(ctx context.Context, c Config, logOut io.Writer, recordAccess bool) (_ *stack, err error) {
	s := &stack{cfg: c, replicaID: replicaID(c), life: lifecycle{grace: c.Shutdown.Grace}}
	defer func() {
		if err != nil {
			_ = s.close(context.Background())
		}
	}()
	codec, err := c.codec()
	if err != nil {
		return nil, usageError{err}
	}
	tc := c.Telemetry
	tc.ServiceVersion, tc.InstanceID = versionString(), s.replicaID
	if s.tel, err = telemetry.Setup(ctx, tc, logOut); err != nil {
		return nil, usageError{err}
	}
	s.life.opened("telemetry", s.tel.Shutdown)
	tel := s.tel.Settings()
	if err := s.openUpstream(ctx, tel); err != nil {
		return nil, err
	}
	if recordAccess {
		if err := s.startRecorder(ctx, tel); err != nil {
			return nil, err
		}
	}
	if s.embedder, err = embed.New(c.Embedder, tel); err != nil {
		return nil, usageError{err}
	}
	s.life.opened("embedder", s.embedder.Shutdown)
	if s.judging, err = c.Judge.Build(tel); err != nil {
		return nil, usageError{err}
	}
	s.life.opened("judge", s.judging.Shutdown)
	if err := s.buildPaths(codec, tel); err != nil {
		return nil, usageError{err}
	}
	return s, nil
}

// openUpstream connects to Qdrant, or opens the embedded store and serves
// it in process: the raw connection the gRPC front forwards on, and the
// typed client everything else uses.
func (s *stack) openUpstream(ctx context.Context, tel settings.Settings) error {
	c := s.cfg
	clientTel := upstream.ClientTelemetry(tel)
	var srcCfg *qdrant.Config
	var err error
	if c.Upstream.GRPC == "" {
		s.upstreamName = "the embedded store in " + c.Store.DataDir
		db, err := store.Open(c.Store.DataDir, c.Store.Options())
		if err != nil {
			return err
		}
		s.life.opened("store", closing(db.Close))
		auth := c.Store.Auth()
		if auth.Enabled() && s.cfg.Upstream.APIKey == "" {
			// memrank's own calls (access counts, the write path,
			// readiness) carry the store's key.
			s.cfg.Upstream.APIKey = auth.APIKey
		}
		ip := upstream.ServeInProcess(store.NewServer(db, auth.ServerOptions()...))
		s.life.opened("store server", ip.Shutdown)
		if s.upstream, err = upstream.DialInProcess(ctx, ip, clientTel); err != nil {
			return err
		}
		s.life.opened("upstream connection", closing(s.upstream.Close))
		srcCfg = ip.ClientConfig(clientTel)
	} else {
		s.upstreamName = "Qdrant at " + c.Upstream.GRPC
		opts := []grpc.DialOption{clientTel}
		creds, err := c.Upstream.Credentials()
		if err != nil {
			return usageError{fmt.Errorf("upstream.%w", err)}
		}
		if creds != nil {
			opts = append(opts, creds)
			s.upstreamName += " (TLS)"
		}
		if s.upstream, err = upstream.Dial(ctx, c.Upstream.GRPC, opts...); err != nil {
			return usageError{fmt.Errorf("upstream.grpc: %w", err)}
		}
		s.life.opened("upstream connection", closing(s.upstream.Close))
		if srcCfg, err = upstream.ClientConfig(c.Upstream.GRPC, opts...); err != nil {
			return usageError{fmt.Errorf("upstream.grpc: %w", err)}
		}
	}
	if s.source, err = qdrant.NewClient(srcCfg); err != nil {
		return fmt.Errorf("upstream client: %w", err)
	}
	s.life.opened("upstream client", closing(s.source.Close))
	return nil
}

// startRecorder starts the access recorder; its shutdown flushes the counts
// while the upstream is still open.
func (s *stack) startRecorder(ctx context.Context, tel settings.Settings) error {
	rc := s.cfg.Access
	rc.ReplicaID, rc.Keys = s.replicaID, s.cfg.PayloadKeys
	rc.Telemetry, rc.AuthContext = tel, s.cfg.Upstream.OwnContext
	r, err := rank.NewRecorder(s.source, rc)
	if err != nil {
		return usageError{err}
	}
	if err := s.life.start(ctx, "access counts", r); err != nil {
		return err
	}
	s.recorder = r
	return nil
}

// buildPaths builds the ranker, tenancy, the write path and the native API
// on what is open.
func (s *stack) buildPaths(codec *memory.Codec, tel settings.Settings) error {
	c := s.cfg
	var err error
	if s.policy, err = c.Tenancy.Policy(); err != nil {
		return usageError{err}
	}
	if err := s.policy.Validate(); err != nil {
		return err
	}
	dc := c.Dedup
	dc.Codec, dc.Embedder, dc.Embedders, dc.Judging = codec, s.embedder, s.embedder, s.judging
	dc.Telemetry = tel
	dc.Forget = c.Forget
	dc.TiersAsOf = func(ctx context.Context, coll, tenant string) (time.Time, bool, error) {
		run, ok, err := consolidate.ReadLastRun(ctx, s.source, coll, tenant)
		return run.ComputedAt, ok, err
	}
	if s.policy.Enabled() {
		dc.Tenancy = s.policy
	}
	if s.engine, err = dedup.New(s.source, dc); err != nil {
		return err
	}
	rc := c.rankConfig(codec)
	// The write path's audit trail says when memories were superseded,
	// for queries asked as of an earlier time.
	rc.Recorder, rc.Verdicts, rc.History, rc.Telemetry = s.recorder, s.judging, s.engine, tel
	if c.Upstream.APIKey != "" {
		// Recognising memory collections is memrank's own business: with
		// its own key, one caller's credentials never decide it for all.
		rc.AuthContext = c.Upstream.OwnContext
	}
	// With tenancy on, a tenant's points must not decide how every tenant's
	// queries are served: only an audit companion or the configuration
	// makes a memory collection.
	rc.Detect.CompanionOnly = c.Tenancy.Key != ""
	if s.ranker, err = rank.New(qdrantwire.NewClient(s.source), rc); err != nil {
		return err
	}
	s.life.opened("ranker", s.ranker.Shutdown)
	if s.upkeep, err = s.newUpkeep(codec, tel); err != nil {
		return err
	}
	s.native, err = native.NewService(native.Config{
		Ranker:         s.ranker,
		Embedder:       s.embedder,
		Records:        s.ranker,
		Embedders:      s.embedder,
		Writer:         s.engine,
		Inspector:      s.engine,
		Forgetter:      s.engine,
		Collections:    s.engine,
		Authenticate:   s.authenticate,
		Review:         s.upkeep,
		Ready:          s.ready,
		Metrics:        s.tel.MetricsHandler(),
		Tenancy:        s.policy,
		RequestTimeout: c.Upstream.Timeout,
		MaxBodyBytes:   int64(c.Limits.MaxBodyBytes),
		Telemetry:      tel,
	})
	return err
}

// loadDemo loads the bundled demo set (once: an existing collection is
// kept) with the local embedder, under memrank's own credentials. Each
// memory gets the audit record a backfill writes for a memory it adopts:
// the set was written whole, not through the write path, and a newcomer
// clicking a result on the explain page should see where it came from.
func (s *stack) loadDemo(ctx context.Context) (demo.LoadResult, error) {
	if d := s.cfg.Embedder.Driver; d != embed.DriverSemantic && d != embed.DriverLocal {
		return demo.LoadResult{}, usageError{fmt.Errorf("--demo needs a local embedder (embedder.driver %q or %q, not %q)", embed.DriverSemantic, embed.DriverLocal, d)}
	}
	ctx, cancel := context.WithTimeout(s.cfg.Upstream.OwnContext(ctx), time.Minute)
	defer cancel()
	res, err := demo.Load(ctx, s.source, demo.LoadOptions{Embedder: s.embedder, Now: time.Now(), Audit: s.engine.RecordAdopted})
	if err != nil {
		return res, fmt.Errorf("demo: %w", err)
	}
	return res, nil
}

// authenticate checks the caller's credentials (in ctx) with the upstream,
// for the native routes that reach no collection: a retrieve would be
// refused with the same credentials, so an embedding is too.
func (s *stack) authenticate(ctx context.Context) error {
	_, err := s.source.ListCollections(ctx)
	return err
}

// ready reports whether the upstream answers its health check.
func (s *stack) ready(ctx context.Context) error {
	_, err := s.source.HealthCheck(s.cfg.Upstream.OwnContext(ctx))
	return err
}

// close shuts down everything the stack and serve started, last first.
// Safe to call twice.
func (s *stack) close(ctx context.Context) error { return s.life.shutdown(ctx) }
