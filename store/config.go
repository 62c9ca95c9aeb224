package store

import "github.com/memrank/memrank/config/check"

// Config is the store section of memrank's configuration: where the
// embedded store keeps its data when memrank fronts no Qdrant.
type Config struct {
	DataDir string `koanf:"data_dir"`
	// MaxResults bounds the points one request may ask for
	// (Options.MaxResults).
	MaxResults int `koanf:"max_results"`
	// APIKey and ReadOnlyAPIKey are Qdrant's service.api_key and
	// service.read_only_api_key for the embedded store (Auth): open while
	// APIKey is empty.
	APIKey         string `koanf:"api_key" secret:"true"`
	ReadOnlyAPIKey string `koanf:"read_only_api_key" secret:"true"`
}

// DefaultConfig returns the store section's defaults.
func DefaultConfig() Config { return Config{DataDir: "./memrank-data", MaxResults: DefaultMaxResults} }

// Validate checks the store section's values as they are.
func (c Config) Validate() error {
	var k check.Checker
	k.NonEmpty("data_dir", c.DataDir)
	k.AtLeast("max_results", c.MaxResults, 1)
	k.Secret("api_key", c.APIKey)
	k.Secret("read_only_api_key", c.ReadOnlyAPIKey)
	if err := c.Auth().Validate(); err != nil {
		k.Add("read_only_api_key", "%v", err)
	}
	return k.Err()
}

// Auth is the section's API keys.
func (c Config) Auth() Auth { return Auth{APIKey: c.APIKey, ReadOnlyAPIKey: c.ReadOnlyAPIKey} }

// Options are the store options the section sets.
func (c Config) Options() Options { return Options{MaxResults: c.MaxResults} }
