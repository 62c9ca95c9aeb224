package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/config"
)

// bytesProvider (load.go) is a koanf.Provider of YAML already in memory, so tests and
// the fuzz target run the file path of Load without a file.
// checkResult is the property every load must have: either a valid Config
// that YAML(false) renders and Load reads back unchanged, or no Config and
// only *config.Error values, each in the documented "config: " form.
func checkResult(t *testing.T, cfg Config, err error) {
	t.Helper()
	if err != nil {
		if diff := cmp.Diff(Config{}, cfg); diff != "" {
			t.Fatalf("Load returned a Config with its error %v", err)
		}
		for _, e := range unjoin(err) {
			var ce *config.Error
			if !errors.As(e, &ce) || !strings.HasPrefix(e.Error(), "config: ") {
				t.Fatalf("error %q is not a *config.Error in the documented form", e)
			}
		}
		return
	}
	if verr := cfg.Validate(); verr != nil {
		t.Fatalf("Load succeeded with an invalid Config: %v", verr)
	}
	if _, err := cfg.YAML(true); err != nil {
		t.Fatalf("YAML(true): %v", err)
	}
	out, err := cfg.YAML(false)
	if err != nil {
		t.Fatalf("YAML(false): %v", err)
	}
	back, err := loadBytes("round-trip.yaml", out)
	if err != nil {
		t.Fatalf("reloading YAML(false): %v\n%s", err, out)
	}
	if diff := cmp.Diff(cfg, back); diff != "" {
		t.Fatalf("YAML(false) does not round-trip (-loaded +reloaded):\n%s\n%s", diff, out)
	}
}

// FuzzLoadYAML feeds arbitrary bytes to Load as the config file: no input
// may panic, and every result must have the property of checkResult.
func FuzzLoadYAML(f *testing.F) {
	files, _ := filepath.Glob("testdata/config/invalid/*.yaml")
	for _, name := range append(files, defaultGolden) {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"scoring:\n  decay:\n    half_lives: {legal: 45}\n    type_categories: {fact: legal}\n",
		"tenancy: {key: user_id, api_keys: {k1: alice, k2: bob}}\n",
		"rank: {collections: {a: {mode: 'off', guard: {floor: 0.2, enabled: false}}, 'b: c': {}}}\n",
		"a: &x {b: *x}\n",
		"scoring: {weights: {source: .nan}}\n",
		"judge: {timeout: 9223372036854775807ns}\n",
		"rank: {oversample: 1e300}\n",
		"? [a, b]\n: c\n",
		"scoring:\n  type_priors: {1: 0.5, true: 0.5}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := loadBytes("fuzz.yaml", data)
		checkResult(t, cfg, err)
	})
}

// FuzzLoadEnv feeds one arbitrary MEMRANK_ variable to Load.
func FuzzLoadEnv(f *testing.F) {
	for _, kv := range [][2]string{
		{"SCORING__WEIGHTS__SOURCE", "0.5"},
		{"RANK__COLLECTIONS", "{a: {mode: shadow}}"},
		{"SCORING__DECAY__HALF_LIVES", "legal=45,tax=30"},
		{"SCORING__EXTRACTOR__MODELS", "[{pattern: x, quality: 0.5}]"},
		{"TENANCY__API_KEYS", "{k: alice}"},
		{"LISTEN", "{http: ':1'}"},
		{"JUDGE__TIMEOUT", "5s"},
		{"UPSTREAM__GRPC__X", "1"},
		{"", ""},
	} {
		f.Add(kv[0], kv[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		cfg, err := loadSource(config.Source{Environ: []string{config.EnvPrefix + name + "=" + value}})
		checkResult(t, cfg, err)
	})
}
