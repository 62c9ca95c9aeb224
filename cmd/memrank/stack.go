package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/config"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/internal/demo"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/server/grpcfront"
	"github.com/memrank/memrank/server/native"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/telemetry"
	"github.com/memrank/memrank/telemetry/settings"
	"github.com/memrank/memrank/tenancy"
)

// stack is memrank's read path assembled from a Config, without listeners:
// the upstream (Qdrant, or the embedded store in process), the ranker with
// its access recorder, tenancy, the embedder and the native API. `serve` puts
// the fronts on top of it; `explain` calls the native API in process. It owns
// everything it opened; close releases it in reverse order.
type stack struct {
	cfg       config.Config
	tel       *telemetry.Telemetry
	replicaID string
	// upstreamName says where the data is, for the start-up message.
	upstreamName string

	db       *store.DB
	storeIP  *store.InProcess
	upstream *grpc.ClientConn // raw-codec connection the gRPC front forwards on
	source   *qdrant.Client   // typed client of the ranker, recorder, demo and readiness
	recorder *rank.Recorder
	ranker   *rank.Ranker
	policy   *tenancy.Policy
	embedder embed.Embedder
	judging  *dedup.Judging
	engine   *dedup.Engine // the write path
	native   *native.Service

	closers []func(context.Context) error
}

// ownContext adds memrank's own upstream credentials (upstream.api_key) to
// the calls memrank makes on its own behalf: access flushes, readiness, the
// demo load. Callers' requests carry their own credentials instead; memrank
// never lends its key to them.
func (s *stack) ownContext(ctx context.Context) context.Context {
	if k := s.cfg.Upstream.APIKey; k != "" {
		return metadata.AppendToOutgoingContext(ctx, "api-key", k)
	}
	return ctx
}

// replicaID is the configured replica id, or one made from the hostname.
func replicaID(c config.Config) (string, error) {
	if c.ReplicaID != "" {
		if rank.SanitizeReplicaID(c.ReplicaID) != c.ReplicaID {
			return "", usageError{fmt.Errorf("replica_id: %q has characters outside [A-Za-z0-9_-]", c.ReplicaID)}
		}
		return c.ReplicaID, nil
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "memrank"
	}
	return rank.SanitizeReplicaID(host), nil
}

// newStack builds the read path. Logs go to logOut. recordAccess false leaves
// access counting off (explain must not count its own look-ups as uses).
func newStack(ctx context.Context, c config.Config, logOut io.Writer, recordAccess bool) (_ *stack, err error) {
	s := &stack{cfg: c}
	defer func() {
		if err != nil {
			s.close(context.Background())
		}
	}()
	codec, err := codecFor(c)
	if err != nil {
		return nil, usageError{err}
	}
	if s.replicaID, err = replicaID(c); err != nil {
		return nil, err
	}
	s.tel, err = telemetry.Setup(ctx, telemetry.Config{
		ServiceName:    c.Telemetry.ServiceName,
		ServiceVersion: versionString(),
		InstanceID:     s.replicaID,
		LogLevel:       c.Telemetry.LogLevel,
		LogFormat:      c.Telemetry.LogFormat,
		OTLPEndpoint:   c.Telemetry.OTLPEndpoint,
	}, logOut)
	if err != nil {
		return nil, usageError{err}
	}
	s.closers = append(s.closers, s.tel.Shutdown)
	tel := s.tel.Settings()
	clientTel := grpcfront.ClientTelemetry(tel)

	var srcCfg *qdrant.Config
	if c.Upstream.GRPC == "" {
		s.upstreamName = "the embedded store in " + c.Store.DataDir
		if s.db, err = store.Open(c.Store.DataDir, store.Options{}); err != nil {
			return nil, err
		}
		s.closers = append(s.closers, func(context.Context) error { return s.db.Close() })
		if s.storeIP, err = store.NewInProcess(s.db); err != nil {
			return nil, err
		}
		s.closers = append(s.closers, func(context.Context) error { return s.storeIP.Close() })
		if s.upstream, err = grpcfront.DialInProcess(ctx, s.storeIP, clientTel); err != nil {
			return nil, err
		}
		if srcCfg, err = grpcfront.SourceConfigInProcess(s.storeIP, clientTel); err != nil {
			return nil, err
		}
	} else {
		s.upstreamName = "Qdrant at " + c.Upstream.GRPC
		if s.upstream, err = grpcfront.DialUpstream(ctx, c.Upstream.GRPC, clientTel); err != nil {
			return nil, usageError{fmt.Errorf("upstream.grpc %q: %w", c.Upstream.GRPC, err)}
		}
		if srcCfg, err = grpcfront.SourceConfig(c.Upstream.GRPC, clientTel); err != nil {
			return nil, usageError{fmt.Errorf("upstream.grpc %q: %w", c.Upstream.GRPC, err)}
		}
	}
	s.closers = append(s.closers, func(context.Context) error { return s.upstream.Close() })
	if s.source, err = qdrant.NewClient(srcCfg); err != nil {
		return nil, fmt.Errorf("upstream client: %w", err)
	}
	s.closers = append(s.closers, func(context.Context) error { return s.source.Close() })

	if recordAccess {
		s.recorder, err = rank.NewRecorder(s.source, rank.RecorderConfig{
			ReplicaID:     s.replicaID,
			FlushInterval: c.Access.FlushInterval,
			MaxPending:    c.Access.MaxPending,
			Keys:          payloadKeys(c.PayloadKeys),
			Timeout:       c.Upstream.Timeout,
			Telemetry:     tel,
			AuthContext:   s.ownContext,
		})
		if err != nil {
			return nil, usageError{err}
		}
	}
	var closeEmbedder func() error
	if s.embedder, closeEmbedder, err = newEmbedder(c, tel); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func(context.Context) error { return closeEmbedder() })
	if s.judging, err = newJudging(c, tel); err != nil {
		return nil, err
	}
	rc, err := rankConfig(c.Rank)
	if err != nil {
		return nil, usageError{err}
	}
	rc.Params, rc.Codec = codec.Params(), codec
	rc.SameThreshold, rc.JudgeThreshold = c.Dedup.SameThreshold, c.Dedup.JudgeThreshold
	rc.Recorder, rc.Verdicts = s.recorder, s.judging
	rc.Telemetry = tel
	if c.Upstream.APIKey != "" {
		// Recognising memory collections is memrank's own business: with
		// its own key, one caller's credentials never decide it for all.
		rc.AuthContext = s.ownContext
	}
	// With tenancy on, a tenant's points must not decide how every tenant's
	// queries are served: only an audit companion or the configuration
	// makes a memory collection.
	rc.Detect.CompanionOnly = c.Tenancy.Key != ""
	if s.ranker, err = rank.New(s.source, rc); err != nil {
		return nil, usageError{err}
	}
	s.policy = &tenancy.Policy{Key: c.Tenancy.Key, Header: c.Tenancy.Header, APIKeys: c.Tenancy.APIKeys}
	if err := s.policy.Validate(); err != nil {
		return nil, usageError{fmt.Errorf("tenancy: %w", err)}
	}
	var scope dedup.TenantScope
	if s.policy.Enabled() {
		scope = s.policy
	}
	s.engine, err = dedup.New(s.source, dedup.Config{
		Codec:                codec,
		Embedder:             s.embedder,
		Judging:              s.judging,
		SameThreshold:        c.Dedup.SameThreshold,
		JudgeThreshold:       c.Dedup.JudgeThreshold,
		RequireSurfaceChange: c.Dedup.RequireSurfaceChange,
		MinIndependentGap:    c.Dedup.MinIndependentGap,
		Tenancy:              scope,
		Timeout:              c.Upstream.Timeout,
		Telemetry:            tel,
	})
	if err != nil {
		return nil, usageError{err}
	}
	s.native, err = native.NewService(native.Config{
		Ranker:         s.ranker,
		Embedder:       s.embedder,
		Writer:         s.engine,
		Inspector:      s.engine,
		Ready:          s.ready,
		Metrics:        s.tel.MetricsHandler(),
		Tenancy:        s.policy,
		RequestTimeout: c.Upstream.Timeout,
		Telemetry:      tel,
	})
	if err != nil {
		return nil, usageError{err}
	}
	return s, nil
}

// loadDemo loads the bundled demo set (once: an existing collection is
// kept) with the local embedder, under memrank's own credentials.
func (s *stack) loadDemo(ctx context.Context) (demo.LoadResult, error) {
	if s.cfg.Embedder.Driver != config.DriverLocal {
		return demo.LoadResult{}, usageError{fmt.Errorf("--demo needs the local embedder (embedder.driver %q)", s.cfg.Embedder.Driver)}
	}
	ctx, cancel := context.WithTimeout(s.ownContext(ctx), time.Minute)
	defer cancel()
	res, err := demo.Load(ctx, s.source, demo.LoadOptions{Embedder: s.embedder, Now: time.Now()})
	if err != nil {
		return res, fmt.Errorf("demo: %w", err)
	}
	return res, nil
}

// ready reports whether the upstream answers its health check.
func (s *stack) ready(ctx context.Context) error {
	_, err := s.source.HealthCheck(s.ownContext(ctx))
	return err
}

// start runs the access recorder's flush loop until ctx ends.
func (s *stack) start(ctx context.Context) {
	if s.recorder != nil {
		s.recorder.Start(ctx)
	}
}

// close flushes the access counts (the upstream must still be there), then
// releases everything in reverse order of opening. Safe to call twice.
func (s *stack) close(ctx context.Context) error {
	var errs []error
	if s.recorder != nil {
		fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := s.recorder.Close(fctx); err != nil {
			errs = append(errs, fmt.Errorf("access counts: final flush: %w", err))
		}
		cancel()
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		if err := s.closers[i](ctx); err != nil && !errors.Is(err, grpc.ErrClientConnClosing) {
			errs = append(errs, err)
		}
	}
	s.closers = nil
	return errors.Join(errs...)
}

// upstreamREST parses upstream.rest; "" means none.
func upstreamREST(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError{fmt.Errorf("upstream.rest: %q is not an http(s) URL", raw)}
	}
	return u, nil
}

// newEmbedder builds the configured embedder behind the (model, text) cache.
// The func closes the driver's idle connections.
func newEmbedder(c config.Config, tel settings.Settings) (embed.Embedder, func() error, error) {
	switch c.Embedder.Driver {
	case config.DriverLocal:
		l, err := embed.NewLocal(c.Embedder.Dimensions)
		if err != nil {
			return nil, nil, usageError{fmt.Errorf("embedder: %w", err)}
		}
		return embed.NewCached(l, c.Embedder.CacheSize), func() error { return nil }, nil
	case config.DriverOpenAI:
		o, err := embed.NewOpenAI(embed.OpenAIConfig{
			BaseURL:        c.Embedder.BaseURL,
			Model:          c.Embedder.Model,
			APIKey:         c.Embedder.APIKey,
			Dimensions:     c.Embedder.Dimensions,
			SendDimensions: c.Embedder.SendDimensions,
			Timeout:        c.Embedder.Timeout,
			BatchSize:      c.Embedder.BatchSize,
			Telemetry:      tel,
		})
		if err != nil {
			return nil, nil, usageError{fmt.Errorf("embedder: %w", err)}
		}
		return embed.NewCached(o, c.Embedder.CacheSize), o.Close, nil
	}
	return nil, nil, usageError{fmt.Errorf("embedder.driver: unknown driver %q", c.Embedder.Driver)}
}

// newJudging builds tier 3: the LLM judge when judge.enabled, behind the verdict cache and the
// per-collection budget. Disabled, it still answers the read path's cache
// look-ups (with nothing) and makes every pair that needs a verdict stay
// unmerged.
func newJudging(c config.Config, tel settings.Settings) (*dedup.Judging, error) {
	cacheSize := c.Judge.CacheSize
	if cacheSize == 0 {
		cacheSize = -1 // judge.cache_size 0 means no cache; JudgingConfig reads 0 as its default
	}
	cfg := dedup.JudgingConfig{
		CacheSize:      cacheSize,
		CallsPerMinute: c.Judge.CallsPerMinute,
		Timeout:        c.Judge.Timeout,
		Telemetry:      tel,
	}
	if c.Judge.Enabled {
		j, err := dedup.NewLLMJudge(dedup.LLMJudgeConfig{
			BaseURL:   c.Judge.BaseURL,
			Model:     c.Judge.Model,
			APIKey:    c.Judge.APIKey,
			Timeout:   c.Judge.Timeout,
			Telemetry: tel,
		})
		if err != nil {
			return nil, usageError{fmt.Errorf("judge: %w", err)}
		}
		cfg.Judge = j
	}
	j, err := dedup.NewJudging(cfg)
	if err != nil {
		return nil, usageError{fmt.Errorf("judge: %w", err)}
	}
	return j, nil
}
