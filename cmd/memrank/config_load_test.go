package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/memrank/memrank/config"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/upstream"
)

// writeFile writes a YAML file in a fresh temporary directory.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memrank.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadSource loads src over the defaults, with OTEL_EXPORTER_OTLP_ENDPOINT
// filling telemetry.otlp_endpoint, as memrank does.
func loadSource(src config.Source) (Config, error) {
	cfg := defaultConfig()
	src.EnvDefaults, src.RemovedKeys = envDefaults(), removedKeys()
	if err := config.Load(src, &cfg); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// loadBytes loads a YAML document given as bytes under name.
func loadBytes(name string, data []byte) (Config, error) {
	cfg := defaultConfig()
	if err := config.Load(config.Source{File: name, Data: data, EnvDefaults: envDefaults()}, &cfg); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// mustLoad loads src and fails the test on any error.
func mustLoad(t *testing.T, src config.Source) Config {
	t.Helper()
	cfg, err := loadSource(src)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg
}

// flagSet is the shape of the command's flags: an upstream flag bound to a
// key, with a default of its own, and a --config flag that is not a key.
func flagSet(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("memrank", pflag.ContinueOnError)
	fs.String("upstream", "default-from-flag:6334", "Qdrant gRPC address")
	fs.String("config", "", "config file")
	fs.Float64("render-gate", 0.4, "render gate")
	fs.Duration("upstream-timeout", time.Second, "")
	fs.String("collections", "", "")
	fs.Bool("judge", false, "")
	fs.Int("oversample", 4, "")
	fs.String("weights", "", "")
	fs.StringToString("half-lives", nil, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

var flagKeys = map[string]string{
	"upstream":         "upstream.grpc",
	"render-gate":      "scoring.gates.render",
	"upstream-timeout": "upstream.timeout",
	"collections":      "rank.collections",
	"judge":            "judge.enabled",
	"oversample":       "rank.oversample",
	"weights":          "scoring.weights",
	"half-lives":       "scoring.decay.half_lives",
}

func TestPrecedence(t *testing.T) {
	file := writeFile(t, "upstream:\n  grpc: file:6334\n")
	env := []string{"MEMRANK_UPSTREAM__GRPC=env:6334"}
	tests := []struct {
		name string
		src  config.Source
		want string
	}{
		{"defaults alone", config.Source{}, ""},
		{"file over defaults", config.Source{File: file}, "file:6334"},
		{"env over file", config.Source{File: file, Environ: env}, "env:6334"},
		{"flag over env and file", config.Source{File: file, Environ: env, Flags: flagSet(t, "--upstream", "flag:6334"), FlagKeys: flagKeys}, "flag:6334"},
		{"flag over defaults", config.Source{Flags: flagSet(t, "--upstream=flag:6334"), FlagKeys: flagKeys}, "flag:6334"},
		// The flag's own default must not override what the user configured.
		{"unset flag does not override env", config.Source{File: file, Environ: env, Flags: flagSet(t), FlagKeys: flagKeys}, "env:6334"},
		{"unset flag does not override file", config.Source{File: file, Flags: flagSet(t, "--config", file), FlagKeys: flagKeys}, "file:6334"},
		{"unset flag does not override defaults", config.Source{Flags: flagSet(t), FlagKeys: flagKeys}, ""},
		{"flag without a binding is ignored", config.Source{File: file, Flags: flagSet(t, "--upstream=x:1"), FlagKeys: map[string]string{}}, "file:6334"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := mustLoad(t, tt.src).Upstream.GRPC; got != tt.want {
				t.Errorf("upstream.grpc = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPrecedenceIsPerKey checks that a higher source overrides only the keys
// it sets: the rest of a section keeps what the lower sources gave it.
func TestPrecedenceIsPerKey(t *testing.T) {
	file := writeFile(t, "upstream:\n  grpc: file:6334\n  rest: http://file:6333\njudge:\n  timeout: 3s\n")
	cfg := mustLoad(t, config.Source{
		File:     file,
		Environ:  []string{"MEMRANK_UPSTREAM__REST=http://env:6333"},
		Flags:    flagSet(t, "--upstream-timeout", "7s"),
		FlagKeys: flagKeys,
	})
	want := upstream.Config{GRPC: "file:6334", REST: "http://env:6333", Timeout: 7 * time.Second, LongTimeout: 10 * time.Minute}
	if diff := cmp.Diff(want, cfg.Upstream); diff != "" {
		t.Errorf("upstream (-want +got):\n%s", diff)
	}
	if cfg.Judge.Timeout != 3*time.Second {
		t.Errorf("judge.timeout = %v, want 3s from the file", cfg.Judge.Timeout)
	}
}

// TestInvalidFiles loads every file under testdata/invalid and compares the
// error text, the text users see, with the .err file beside it.
func TestInvalidFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/config/invalid/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no invalid files: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, err := loadSource(config.Source{File: file})
			if err == nil {
				t.Fatalf("config.Load(%s) succeeded, want an error", file)
			}
			if diff := cmp.Diff(Config{}, cfg); diff != "" {
				t.Errorf("Load returned a Config with its error (-want +got):\n%s", diff)
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(file, ".yaml") + ".err"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, rerr := os.ReadFile(golden)
			if rerr != nil {
				t.Fatalf("%v (run go test -update to create it)", rerr)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("error text (-want +got):\n%s", diff)
			}
			for _, e := range unjoin(err) {
				var ce *config.Error
				if !errors.As(e, &ce) {
					t.Errorf("%q is not a *config.Error", e)
				}
			}
		})
	}
}

// unjoin lists the errors an errors.Join holds.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestUnknownKeyIsTyped(t *testing.T) {
	_, err := loadSource(config.Source{File: "testdata/config/invalid/unknown_nested.yaml"})
	if !errors.Is(err, config.ErrUnknownKey) {
		t.Fatalf("errors.Is(%v, config.ErrUnknownKey) = false", err)
	}
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("no *config.Error in %v", err)
	}
	want := config.Error{Source: "testdata/config/invalid/unknown_nested.yaml", Key: "scoring.wieghts", Problem: "unknown key"}
	if diff := cmp.Diff(want, *ce, cmp.AllowUnexported(config.Error{}), cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".err" }, cmp.Ignore())); diff != "" {
		t.Errorf("error fields (-want +got):\n%s", diff)
	}
}

func TestMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.yaml")
	_, err := loadSource(config.Source{File: path})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(%v, fs.ErrNotExist) = false", err)
	}
	if want := "config: " + path + ": no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestEmptyFileGivesDefaults(t *testing.T) {
	for _, content := range []string{"", "# only a comment\n", "---\n", "judge:\n", "store:\n  data_dir:\n", "scoring: {weights: {source: null}}\n"} {
		cfg := mustLoad(t, config.Source{File: writeFile(t, content)})
		if diff := cmp.Diff(defaultConfig(), cfg); diff != "" {
			t.Errorf("file %q (-want +got):\n%s", content, diff)
		}
	}
}

// TestTablesMergeListsReplace pins koanf-style layering where it matters:
// user tables extend the defaults, the extractor table is replaced.
func TestTablesMergeListsReplace(t *testing.T) {
	file := writeFile(t, `
scoring:
  source_levels: {rumour: 0.1}
  type_priors: {fact: 0.6}
  extractor:
    models:
      - {pattern: llama, quality: 0.7}
  decay:
    half_lives: {legal: 45, price: 20}
    type_categories: {preference: preference}
tenancy:
  key: user_id
  api_keys: {key-a: alice}
rank:
  collections:
    docs: {mode: "off"}
    memories: {guard: {floor: 0.2}}
`)
	cfg := mustLoad(t, config.Source{File: file, Environ: []string{
		"MEMRANK_TENANCY__API_KEYS=Key-B=bob",
		"MEMRANK_SCORING__DECAY__HALF_LIVES__TAX=30",
	}})

	wantHalfLives := defaultConfig().Scoring.Decay.HalfLives
	wantHalfLives["legal"] = 45
	wantHalfLives["price"] = 20
	wantHalfLives["tax"] = 30
	wantLevels := defaultConfig().Scoring.SourceLevels
	wantLevels["rumour"] = 0.1
	wantPriors := defaultConfig().Scoring.TypePriors
	wantPriors["fact"] = 0.6

	checks := []struct {
		name      string
		got, want any
	}{
		{"half_lives", cfg.Scoring.Decay.HalfLives, wantHalfLives},
		{"source_levels", cfg.Scoring.SourceLevels, wantLevels},
		{"type_priors", cfg.Scoring.TypePriors, wantPriors},
		{"type_categories", cfg.Scoring.Decay.TypeCategories, map[string]string{"preference": "preference"}},
		{"extractor.models", cfg.Scoring.Extractor.Models, []scoring.ExtractorPattern{{Pattern: "llama", Quality: 0.7}}},
		{"api_keys", cfg.Tenancy.APIKeys, map[string]string{"key-a": "alice", "Key-B": "bob"}},
		{"collections", cfg.Rank.Collections, map[string]rank.CollectionConfig{"docs": {Mode: rank.ModeOff}, "memories": {Guard: rank.GuardPatch{Floor: ptr(0.2)}}}},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestEnvTypedValues(t *testing.T) {
	tests := []struct {
		name string
		env  string
		got  func(Config) any
		want any
	}{
		{"float", "MEMRANK_SCORING__GROUNDING__FLOOR=0.35", func(c Config) any { return c.Scoring.Grounding.Floor }, 0.35},
		{"int", "MEMRANK_RANK__OVERSAMPLE= 8", func(c Config) any { return c.Rank.Oversample }, 8},
		{"bool", "MEMRANK_DEDUP__REQUIRE_SURFACE_CHANGE=false", func(c Config) any { return c.Dedup.RequireSurfaceChange }, false},
		{"duration", "MEMRANK_DEDUP__MIN_INDEPENDENT_GAP=1h30m", func(c Config) any { return c.Dedup.MinIndependentGap }, 90 * time.Minute},
		{"string", "MEMRANK_UPSTREAM__GRPC=qdrant:6334", func(c Config) any { return c.Upstream.GRPC }, "qdrant:6334"},
		{"secret", "MEMRANK_JUDGE__API_KEY=sk-Test", func(c Config) any { return c.Judge.APIKey }, "sk-Test"},
		{"top-level key", "MEMRANK_REPLICA_ID=pod-7", func(c Config) any { return c.ReplicaID }, "pod-7"},
		{"list, YAML flow", `MEMRANK_SCORING__EXTRACTOR__MODELS=[{pattern: "a,b", quality: 0.5}]`, func(c Config) any { return c.Scoring.Extractor.Models }, []scoring.ExtractorPattern{{Pattern: "a,b", Quality: 0.5}}},
		{"map entry of sections, YAML flow", "MEMRANK_RANK__COLLECTIONS__DOCS={mode: off}", func(c Config) any { return c.Rank.Collections["docs"] }, rank.CollectionConfig{Mode: rank.ModeOff}},
		{"optional value", "MEMRANK_RANK__EMBEDDER_GUARDS={m1: {band: 0.05}}", func(c Config) any { return c.Rank.EmbedderGuards["m1"] }, rank.GuardPatch{Band: ptr(0.05)}},
		{"map entry", "MEMRANK_SCORING__DECAY__HALF_LIVES__PROJECT_STATUS=14", func(c Config) any { return c.Scoring.Decay.HalfLives["project_status"] }, 14.0},
		{"map, key=value pairs", "MEMRANK_SCORING__DECAY__TYPE_CATEGORIES=preference=preference, fact=technical", func(c Config) any { return c.Scoring.Decay.TypeCategories }, map[string]string{"preference": "preference", "fact": "technical"}},
		{"map, YAML flow", "MEMRANK_SCORING__SOURCE_LEVELS={rumour: 0.1}", func(c Config) any { return c.Scoring.SourceLevels["rumour"] }, 0.1},
		{"list of rows, YAML flow", "MEMRANK_SCORING__EXTRACTOR__MODELS=[{pattern: 'llama', quality: 0.7}]", func(c Config) any { return c.Scoring.Extractor.Models }, []scoring.ExtractorPattern{{Pattern: "llama", Quality: 0.7}}},
		{"section, YAML flow", "MEMRANK_LISTEN={http: ':8080'}", func(c Config) any { return c.Listen }, Listen{HTTP: ":8080", GRPC: ":6334", AllowedHosts: []string{}}},
		{"OTLP endpoint from OTEL", "OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4317", func(c Config) any { return c.Telemetry.OTLPEndpoint }, "http://collector:4317"},
		{"other variables are not read", "UPSTREAM__GRPC=x", func(c Config) any { return c.Upstream.GRPC }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := mustLoad(t, config.Source{Environ: []string{"HOME=/root", tt.env}})
			if diff := cmp.Diff(tt.want, tt.got(cfg)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.env, diff)
			}
		})
	}
}

func TestEnvErrors(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		want    string
	}{
		{"unknown variable", []string{"MEMRANK_UPSTREAM_GRPC=x:1"},
			`config: $MEMRANK_UPSTREAM_GRPC: unknown key "upstream_grpc"`},
		{"unknown nested variable", []string{"MEMRANK_SCORING__WIEGHTS__SOURCE=0.5"},
			`config: $MEMRANK_SCORING__WIEGHTS__SOURCE: unknown key "scoring.wieghts.source"`},
		{"below a value", []string{"MEMRANK_UPSTREAM__GRPC__HOST=x"},
			`config: $MEMRANK_UPSTREAM__GRPC__HOST: unknown key "upstream.grpc.host"`},
		{"the prefix alone", []string{"MEMRANK_=1"},
			`config: $MEMRANK_: unknown key ""`},
		{"not a number", []string{"MEMRANK_SCORING__WEIGHTS__SOURCE=high"},
			`config: $MEMRANK_SCORING__WEIGHTS__SOURCE: scoring.weights.source: want a number, got "high"`},
		{"not an integer", []string{"MEMRANK_RANK__OVERSAMPLE=2.5"},
			`config: $MEMRANK_RANK__OVERSAMPLE: rank.oversample: want an integer, got "2.5"`},
		{"not a bool", []string{"MEMRANK_JUDGE__ENABLED=yes"},
			`config: $MEMRANK_JUDGE__ENABLED: judge.enabled: want true or false, got "yes"`},
		{"not a duration", []string{"MEMRANK_JUDGE__TIMEOUT=5"},
			`config: $MEMRANK_JUDGE__TIMEOUT: judge.timeout: want a duration like "5s", got "5"`},
		{"bad map syntax", []string{"MEMRANK_SCORING__DECAY__HALF_LIVES=legal"},
			`config: $MEMRANK_SCORING__DECAY__HALF_LIVES: scoring.decay.half_lives: want key=value pairs separated by commas, got "legal"`},
		{"bad map value", []string{"MEMRANK_SCORING__DECAY__HALF_LIVES=legal=long"},
			`config: $MEMRANK_SCORING__DECAY__HALF_LIVES: scoring.decay.half_lives.legal: want a number, got "long"`},
		{"rows need YAML", []string{"MEMRANK_SCORING__EXTRACTOR__MODELS=llama"},
			`config: $MEMRANK_SCORING__EXTRACTOR__MODELS: scoring.extractor.models: want a YAML flow sequence like [{...}, {...}], got "llama"`},
		{"bad YAML", []string{"MEMRANK_SCORING__SOURCE_LEVELS={a: [}"},
			`config: $MEMRANK_SCORING__SOURCE_LEVELS: scoring.source_levels: cannot read "{a: [}" as YAML: did not find expected node content`},
		{"secret values are not shown", []string{"MEMRANK_TENANCY__API_KEYS=sk-live-123"},
			`config: $MEMRANK_TENANCY__API_KEYS: tenancy.api_keys: want key=value pairs separated by commas, got a string (secret, not shown)`},
		{"not UTF-8", []string{"MEMRANK_RANK__MODE=\xe6"},
			`config: $MEMRANK_RANK__MODE: rank.mode: want UTF-8 text, got "\xe6"`},
		{"entry name not UTF-8", []string{"MEMRANK_SCORING__DECAY__HALF_LIVES=\xe6=5"},
			`config: $MEMRANK_SCORING__DECAY__HALF_LIVES: scoring.decay.half_lives: has an entry whose name is not UTF-8 text: "\xe6"`},
		{"API key in the variable name", []string{"MEMRANK_TENANCY__KEY=user_id", "MEMRANK_TENANCY__API_KEYS__SK_LIVE=alice"},
			`config: $MEMRANK_TENANCY__API_KEYS__SK_LIVE: tenancy.api_keys: an API key cannot be part of a variable or flag name (its case is lost); set the whole table as key=tenant pairs` + "\n" +
				`config: $MEMRANK_TENANCY__KEY: tenancy.key: "user_id" is set but none of tenancy.header, tenancy.api_keys and tenancy.jwt.claim says where a request's tenant comes from`},
		// Validate sees merged values; the variable that set one it refuses
		// is still named, as it is for a value that does not decode.
		{"a valid value that fails Validate", []string{"MEMRANK_SCORING__GATES__RENDER=1.5"},
			`config: $MEMRANK_SCORING__GATES__RENDER: scoring.gates.render: 1.5 is outside [0, 1]`},
		{"a table entry Validate refuses, set with the whole table", []string{"MEMRANK_SCORING__DECAY__HALF_LIVES=legal=-1"},
			`config: $MEMRANK_SCORING__DECAY__HALF_LIVES: scoring.decay.half_lives.legal: -1 is not positive`},
		{"a list element Validate refuses", []string{"MEMRANK_SCORING__EXTRACTOR__MODELS=[{pattern: '(', quality: 0.5}]"},
			"config: $MEMRANK_SCORING__EXTRACTOR__MODELS: scoring.extractor.models[0].pattern: \"(\" does not compile: error parsing regexp: missing closing ): `(`"},
		{"a rule across keys is not one variable's", []string{"MEMRANK_SCORING__WEIGHTS__SOURCE=0.9"},
			`config: scoring.weights: sum is 1.45, want 1 (within 1e-6)`},
		{"every problem, in name order", []string{"MEMRANK_Z=1", "MEMRANK_A=1"},
			"config: $MEMRANK_A: unknown key \"a\"\nconfig: $MEMRANK_Z: unknown key \"z\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadSource(config.Source{Environ: tt.environ})
			if err == nil {
				t.Fatalf("config.Load(%q) succeeded, want %s", tt.environ, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got %s\nwant %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "sk-live") {
				t.Errorf("error shows a secret: %s", err)
			}
		})
	}
}

// TestEnvEntryWinsOverTable pins the documented order: variables apply in
// name order, so an entry variable overrides the whole-table variable.
func TestEnvEntryWinsOverTable(t *testing.T) {
	cfg := mustLoad(t, config.Source{Environ: []string{
		"MEMRANK_SCORING__DECAY__HALF_LIVES__LEGAL=50",
		"MEMRANK_SCORING__DECAY__HALF_LIVES=legal=45,tax=30",
	}})
	got := cfg.Scoring.Decay.HalfLives
	if got["legal"] != 50 || got["tax"] != 30 || got["preference"] != 365 {
		t.Errorf("half_lives = %v, want legal 50 (entry variable), tax 30, the defaults kept", got)
	}
}

func TestNullTableEntryIsAnError(t *testing.T) {
	file := writeFile(t, "scoring:\n  decay:\n    half_lives:\n      legal:\n")
	_, err := loadSource(config.Source{File: file})
	want := "config: " + file + ": scoring.decay.half_lives.legal: want a number, got null"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n got %v\nwant %s", err, want)
	}
}

func TestEnvConfigFile(t *testing.T) {
	fromEnv := writeFile(t, "replica_id: from-env-file\n")
	fromFlag := writeFile(t, "replica_id: from-flag-file\n")
	env := []string{config.EnvConfigFile + "=" + fromEnv}
	if got := mustLoad(t, config.Source{Environ: env}).ReplicaID; got != "from-env-file" {
		t.Errorf("with only $MEMRANK_CONFIG, replica_id = %q, want the file's", got)
	}
	if got := mustLoad(t, config.Source{File: fromFlag, Environ: env}).ReplicaID; got != "from-flag-file" {
		t.Errorf("with File and $MEMRANK_CONFIG, replica_id = %q, want File's", got)
	}
}

func TestOTLPEndpoint(t *testing.T) {
	otel := "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel:4317"
	file := writeFile(t, "telemetry:\n  otlp_endpoint: http://file:4317\n")
	tests := []struct {
		name string
		src  config.Source
		want string
	}{
		{"unset", config.Source{}, ""},
		{"from OTEL when nothing sets it", config.Source{Environ: []string{otel}}, "http://otel:4317"},
		{"file wins over OTEL", config.Source{File: file, Environ: []string{otel}}, "http://file:4317"},
		{"MEMRANK_ wins over OTEL", config.Source{Environ: []string{otel, "MEMRANK_TELEMETRY__OTLP_ENDPOINT=http://mine:4317"}}, "http://mine:4317"},
		{"the last of duplicates wins", config.Source{Environ: []string{otel, "OTEL_EXPORTER_OTLP_ENDPOINT=http://last:4317"}}, "http://last:4317"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustLoad(t, tt.src).Telemetry.OTLPEndpoint; got != tt.want {
				t.Errorf("otlp_endpoint = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFlagTypes(t *testing.T) {
	cfg := mustLoad(t, config.Source{
		Flags: flagSet(t,
			"--render-gate=0.3", "--upstream-timeout=250ms", "--collections={a: {mode: shadow}}",
			"--judge", "--oversample=6", "--half-lives=legal=45",
			"--weights={source: 0.4, repetition: 0.25}",
			// judge.enabled needs a model and a key, which come from the env.
		),
		FlagKeys: flagKeys,
		Environ:  []string{"MEMRANK_JUDGE__MODEL=gpt-4o-mini", "MEMRANK_JUDGE__API_KEY=sk-x"},
	})
	checks := []struct {
		name      string
		got, want any
	}{
		{"float flag", cfg.Scoring.Gates.Render, 0.3},
		{"duration flag", cfg.Upstream.Timeout, 250 * time.Millisecond},
		{"map of sections flag", cfg.Rank.Collections, map[string]rank.CollectionConfig{"a": {Mode: rank.ModeShadow}}},
		{"bool flag", cfg.Judge.Enabled, true},
		{"int flag", cfg.Rank.Oversample, 6},
		{"map flag merges", cfg.Scoring.Decay.HalfLives["legal"], 45.0},
		{"map flag keeps defaults", cfg.Scoring.Decay.HalfLives["preference"], 365.0},
		{"section from a string flag", cfg.Scoring.Weights, scoring.Weights{Source: 0.4, Repetition: 0.25, Extractor: 0.25, Type: 0.10}},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		src  config.Source
		want string
	}{
		{"binding to an unknown key, flag unset", config.Source{Flags: flagSet(t), FlagKeys: map[string]string{"upstream": "upstrem.grpc"}},
			`config: --upstream: unknown key "upstrem.grpc"`},
		{"binding to an unknown key, flag set", config.Source{Flags: flagSet(t, "--upstream=x:1"), FlagKeys: map[string]string{"upstream": "upstream.grpc.host"}},
			`config: --upstream: unknown key "upstream.grpc.host"`},
		{"binding checked without a flag set", config.Source{FlagKeys: map[string]string{"x": "scoring..weights"}},
			`config: --x: unknown key "scoring..weights"`},
		{"wrong type", config.Source{Flags: flagSet(t, "--upstream=x:1"), FlagKeys: map[string]string{"upstream": "scoring.gates.render"}},
			`config: --upstream: scoring.gates.render: want a number, got "x:1"`},
		{"typed flag of the wrong type", config.Source{Flags: flagSet(t, "--upstream-timeout=1s"), FlagKeys: map[string]string{"upstream-timeout": "rank.oversample"}},
			`config: --upstream-timeout: rank.oversample: want an integer, got 1s`},
		{"value refused by Validate", config.Source{Flags: flagSet(t, "--render-gate=2"), FlagKeys: flagKeys},
			`config: --render-gate: scoring.gates.render: 2 is outside [0, 1]`},
		{"the flag wins over the variable it overrides", config.Source{Environ: []string{"MEMRANK_SCORING__GATES__RENDER=0.5"},
			Flags: flagSet(t, "--render-gate=2"), FlagKeys: flagKeys},
			`config: --render-gate: scoring.gates.render: 2 is outside [0, 1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadSource(tt.src)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestLoadReportsEverySource checks that one Load lists the problems of the
// file, the environment, the flags and Validate together, so a user fixes
// them in one round.
func TestLoadReportsEverySource(t *testing.T) {
	file := writeFile(t, "scoring:\n  wieghts: {}\n")
	_, err := loadSource(config.Source{
		File:     file,
		Environ:  []string{"MEMRANK_NOPE=1"},
		Flags:    flagSet(t, "--oversample=0"),
		FlagKeys: flagKeys,
	})
	want := strings.Join([]string{
		`config: ` + file + `: unknown key "scoring.wieghts"`,
		`config: $MEMRANK_NOPE: unknown key "nope"`,
		`config: --oversample: rank.oversample: 0 is less than 1`,
	}, "\n")
	if err == nil || err.Error() != want {
		t.Errorf("error:\n got %v\nwant %s", err, want)
	}
}

// TestLoadIsPure runs loads concurrently under -race: Load must share no
// state between calls.
func TestLoadIsPure(t *testing.T) {
	file := writeFile(t, "scoring:\n  decay:\n    half_lives: {legal: 45}\n")
	for i := range 8 {
		t.Run(fmt.Sprint("oversample ", i+1), func(t *testing.T) {
			t.Parallel()
			cfg := mustLoad(t, config.Source{File: file, Environ: []string{"MEMRANK_RANK__OVERSAMPLE=" + string(rune('1'+i))}})
			cfg.Scoring.Decay.HalfLives["mine"] = 1
			if cfg.Rank.Oversample != i+1 {
				t.Errorf("oversample = %d, want %d", cfg.Rank.Oversample, i+1)
			}
		})
	}
}

// TestFileValueTypes pins how strictly a file's YAML types are read: YAML
// already says what a value is, so a quoted "0.45" is a string, not a
// number, while an integral 4.0 is still an integer.
func TestFileValueTypes(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		name, yaml string
		want       string // error text without the "config: FILE: " prefix; "" = loads
	}{
		{"integral float as an integer", "rank: {oversample: 4.0}", ""},
		{"fraction as an integer", "rank: {oversample: 4.5}", "rank.oversample: want an integer, got 4.5"},
		{"huge float as an integer", "rank: {oversample: 1e300}", "rank.oversample: want an integer, got 1e+300"},
		{"integer beyond int64", "rank: {oversample: 18446744073709551615}", "rank.oversample: want an integer, got 18446744073709551615"},
		{"integer as a float", "scoring: {weights: {source: 0, repetition: 1, extractor: 0, type: 0}}", ""},
		{"quoted number", "scoring: {weights: {source: '0.45'}}", `scoring.weights.source: want a number, got "0.45"`},
		{"quoted bool", "judge: {enabled: 'true'}", `judge.enabled: want true or false, got "true"`},
		{"YAML 1.1 bool", "dedup: {require_surface_change: yes}", `dedup.require_surface_change: want true or false, got "yes"`},
		{"number as a string", "replica_id: 42", "replica_id: want a string, got 42"},
		{"list as a string", "store: {data_dir: [a]}", "store.data_dir: want a string, got a list"},
		{"scalar as a section", "scoring: {weights: 1}", "scoring.weights: want a mapping, got 1"},
		{"scalar as a list", "scoring: {extractor: {models: notes}}", `scoring.extractor.models: want a list, got "notes"`},
		{"null in a list", "scoring: {extractor: {models: [{pattern: a, quality: 1}, null]}}", "scoring.extractor.models[1]: want a mapping, got null"},
		{"optional value of the wrong type", "rank: {collections: {a: {guard: {floor: x}}}}", `rank.collections.a.guard.floor: want a number, got "x"`},
		{"the old list of memory collections", "rank: {memory_collections: [a]}", `unknown key "rank.memory_collections" (removed: memory collections are recognised with no configuration; ` +
			`set rank.collections.<name>.mode (rerank, shadow or off) per collection, or rank.mode: rerank for the old default of re-ranking every collection)`},
		{"the guard's old switch", "rank: {guard: {enabled: false}}", `unknown key "rank.guard.enabled" (renamed: rank.guard.off, inverted (enabled: false is off: true))`},
		{"long value is cut", "scoring: {gates: {render: " + long + "}}", `scoring.gates.render: want a number, got "` + long[:64] + `"...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, tt.yaml+"\n")
			_, err := loadSource(config.Source{File: file})
			got := ""
			if err != nil {
				got = strings.TrimPrefix(err.Error(), "config: "+file+": ")
			}
			if got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestSectionEntriesMerge: an entry of a table of sections given in a file
// changes the keys it names and keeps the others of the entry it replaces.
func TestSectionEntriesMerge(t *testing.T) {
	cfg := mustLoad(t, config.Source{File: writeFile(t, "rank: {embedder_guards: {memrank-local-hash-v1: {floor: 0.2}, other: {band: 0.1}}}\n")})
	want := map[string]rank.GuardPatch{
		"memrank-local-hash-v1": {Band: ptr(0.15), Floor: ptr(0.2)},
		"memrank-local-sem-v1":  {Band: ptr(0.03), Floor: ptr(0.2)},
		"other":                 {Band: ptr(0.1)},
	}
	if diff := cmp.Diff(want, cfg.Rank.EmbedderGuards); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
