package store

import "github.com/memrank/memrank/config/check"

// Config is the store section of memrank's configuration: where the
// embedded store keeps its data when memrank fronts no Qdrant.
type Config struct {
	DataDir string `koanf:"data_dir"`
	// MaxResults bounds the points one request may ask for
	// (Options.MaxResults).
	MaxResults int `koanf:"max_results"`
}

// DefaultConfig returns the store section's defaults.
func DefaultConfig() Config { return Config{DataDir: "./memrank-data", MaxResults: DefaultMaxResults} }

// Validate checks the store section's values as they are.
func (c Config) Validate() error {
	var k check.Checker
	k.NonEmpty("data_dir", c.DataDir)
	k.AtLeast("max_results", c.MaxResults, 1)
	return k.Err()
}

// Options are the store options the section sets.
func (c Config) Options() Options { return Options{MaxResults: c.MaxResults} }
