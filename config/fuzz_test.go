package config

import "errors"

// bytesProvider is a koanf.Provider of YAML already in memory, so tests and
// the fuzz target run the file path of Load without a file.
type bytesProvider []byte

func (b bytesProvider) ReadBytes() ([]byte, error) { return b, nil }

func (b bytesProvider) Read() (map[string]any, error) {
	return nil, errors.New("bytesProvider gives bytes only")
}
