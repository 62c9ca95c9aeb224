package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/memrank/memrank/config/check"
	"github.com/memrank/memrank/tlsfiles"
)

// Config is the upstream section of memrank's configuration.
type Config struct {
	// GRPC is Qdrant's gRPC address, host:port; "" is the embedded store.
	GRPC string `koanf:"grpc"`
	// REST is Qdrant's REST base URL, for the REST routes memrank does not
	// translate; "" is none (they answer 404).
	REST string `koanf:"rest"`
	// APIKey is memrank's own key for the upstream, sent only on memrank's
	// own calls (access flushes, readiness, detection, the demo load);
	// callers' requests carry their own.
	APIKey string `koanf:"api_key" secret:"true"`
	// Timeout is the deadline the fronts give a read (a query, a scroll,
	// collection info) that comes without one (the access counts and the
	// write path have their own: access.timeout, dedup.timeout).
	Timeout time.Duration `koanf:"timeout"`
	// LongTimeout is the deadline of a request that comes without one and
	// may rightly take long: point writes (a large batch with wait=true),
	// index builds, collection changes and snapshots.
	LongTimeout time.Duration `koanf:"long_timeout"`
	// TLS is how memrank reaches the upstream, over gRPC and REST: off
	// (plain text, for a Qdrant on loopback or a private network) unless
	// tls.enabled. Qdrant Cloud needs it.
	TLS tlsfiles.Client `koanf:"tls"`
}

// DefaultConfig returns the section's defaults: the embedded store, no REST
// upstream, no key, 10s for reads and 10m for long operations.
func DefaultConfig() Config { return Config{Timeout: 10 * time.Second, LongTimeout: 10 * time.Minute} }

// Validate checks the section's values as they are.
func (c Config) Validate() error {
	var k check.Checker
	if c.GRPC != "" {
		k.HostPort("grpc", c.GRPC, 1)
	}
	k.HTTPURL("rest", c.REST)
	k.Secret("api_key", c.APIKey)
	k.Timeout("timeout", c.Timeout)
	k.Timeout("long_timeout", c.LongTimeout)
	k.Sub("tls", c.TLS.Validate())
	return k.Err()
}

// RESTURL is REST parsed; nil when REST is empty.
func (c Config) RESTURL() (*url.URL, error) {
	if c.REST == "" {
		return nil, nil
	}
	u, err := url.Parse(c.REST)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream.rest: %s is not an http(s) URL", check.Quote(c.REST))
	}
	return u, nil
}

// OwnContext adds memrank's own key (APIKey) to ctx's outgoing metadata,
// for the calls memrank makes on its own behalf; without a key it returns
// ctx. Callers' requests never get it: memrank does not lend its key.
func (c Config) OwnContext(ctx context.Context) context.Context {
	if c.APIKey == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "api-key", c.APIKey)
}

// Credentials is the dial option of the TLS section: TLS with its
// configuration, or nil (plain text) when off.
func (c Config) Credentials() (grpc.DialOption, error) {
	cfg, err := c.TLS.Config()
	if err != nil || cfg == nil {
		return nil, err
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(cfg)), nil
}

// RESTTransport carries requests to the REST upstream: the default
// transport, with the TLS section's CA and client certificate when on.
func (c Config) RESTTransport() (http.RoundTripper, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	cfg, err := c.TLS.Config()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		cfg.NextProtos = nil // let the transport negotiate
		t.TLSClientConfig = cfg
	}
	return t, nil
}
