package embed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/memrank/memrank/config/check"
	"github.com/memrank/memrank/telemetry/settings"
)

// Driver names (Config.Driver).
const (
	DriverSemantic = "semantic" // NewSemantic: local, word vectors and surface features
	DriverLocal    = "local"    // NewLocal: local, lexical (surface features only)
	DriverOpenAI   = "openai"
)

// Config is the embedder section of memrank's configuration: which driver
// turns texts into vectors, and the cache in front of it. New builds it.
type Config struct {
	Driver     string `koanf:"driver"`   // DriverSemantic, DriverLocal or DriverOpenAI
	BaseURL    string `koanf:"base_url"` // openai driver; "" = OpenAI's API
	Model      string `koanf:"model"`
	APIKey     string `koanf:"api_key" secret:"true"`
	Dimensions int    `koanf:"dimensions"`
	// SendDimensions sends dimensions in each embeddings request (models
	// that can shorten their vectors, like text-embedding-3-*); off, the
	// model's own size must equal Dimensions.
	SendDimensions bool          `koanf:"send_dimensions"`
	Timeout        time.Duration `koanf:"timeout"`
	BatchSize      int           `koanf:"batch_size"`
	CacheSize      int           `koanf:"cache_size"` // embeddings kept; 0 = no cache
}

// DefaultConfig returns the embedder section's defaults: the semantic local
// driver at 384 dimensions, 10s, batches of 64, 10000 embeddings cached.
func DefaultConfig() Config {
	return Config{
		Driver:     DriverSemantic,
		Dimensions: 384,
		Timeout:    DefaultOpenAITimeout,
		BatchSize:  DefaultOpenAIBatchSize,
		CacheSize:  10000,
	}
}

// Validate checks the embedder section's values as they are.
func (c Config) Validate() error {
	var k check.Checker
	k.OneOf("driver", c.Driver, DriverSemantic, DriverLocal, DriverOpenAI)
	k.HTTPURL("base_url", c.BaseURL)
	k.Secret("api_key", c.APIKey)
	k.AtLeast("dimensions", c.Dimensions, 1)
	if c.Dimensions > MaxDimensions {
		k.Add("dimensions", "%d is above %d, the largest vector Qdrant accepts", c.Dimensions, MaxDimensions)
	}
	if c.Driver == DriverSemantic && c.Dimensions >= 1 && c.Dimensions < MinSemanticDimensions {
		k.Add("dimensions", "%d is below %d, the smallest the semantic embedder makes", c.Dimensions, MinSemanticDimensions)
	}
	k.Timeout("timeout", c.Timeout)
	k.AtLeast("batch_size", c.BatchSize, 1)
	k.AtLeast("cache_size", c.CacheSize, 0)
	if c.Driver == DriverOpenAI {
		k.OpenAI(check.Ref("driver")+` is "openai"`, c.BaseURL, c.Model, c.APIKey)
	}
	return k.Err()
}

// Service is the configured embedder: the driver behind the (model, text)
// cache. For also gives the built-in embedders of models that collections
// recorded.
type Service struct {
	*Cached
	driver  Embedder
	builtin builtins
}

// For returns the embedder for a collection that recorded model: the
// configured one when model is "" or its own, a built-in local embedder when
// model names one (a collection keeps the embedder it was written with after
// the default changes), and false for any other model (an external model
// that is not configured: its vectors cannot be made here).
func (s *Service) For(model string) (Embedder, bool) {
	if model == "" || model == s.Model() {
		return s, true
	}
	return s.builtin.get(model)
}

// Shutdown ends the embeddings in flight and closes the driver's idle
// connections; safe to call more than once.
func (s *Service) Shutdown(ctx context.Context) error {
	err := s.Cached.Shutdown(ctx)
	if c, ok := s.driver.(io.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	return err
}

// New builds the embedder c configures, behind the cache.
func New(c Config, tel settings.Settings) (*Service, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	var driver Embedder
	switch c.Driver {
	case DriverSemantic:
		sem, err := NewSemantic(c.Dimensions)
		if err != nil {
			return nil, err
		}
		driver = sem
	case DriverLocal:
		l, err := NewLocal(c.Dimensions)
		if err != nil {
			return nil, err
		}
		driver = l
	default: // DriverOpenAI: Validate allows nothing else
		o, err := NewOpenAI(OpenAIConfig{
			BaseURL:        c.BaseURL,
			Model:          c.Model,
			APIKey:         c.APIKey,
			Dimensions:     c.Dimensions,
			SendDimensions: c.SendDimensions,
			Timeout:        c.Timeout,
			BatchSize:      c.BatchSize,
			Telemetry:      tel,
		})
		if err != nil {
			return nil, err
		}
		driver = o
	}
	return &Service{Cached: NewCached(driver, c.CacheSize), driver: driver}, nil
}
