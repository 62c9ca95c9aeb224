package store

import "github.com/memrank/memrank/config/check"

// Config is the store section of memrank's configuration: where the
// embedded store keeps its data when memrank fronts no Qdrant.
type Config struct {
	DataDir string `koanf:"data_dir"`
}

// DefaultConfig returns the store section's defaults.
func DefaultConfig() Config { return Config{DataDir: "./memrank-data"} }

// Validate checks the store section's values as they are.
func (c Config) Validate() error {
	var k check.Checker
	k.NonEmpty("data_dir", c.DataDir)
	return k.Err()
}
