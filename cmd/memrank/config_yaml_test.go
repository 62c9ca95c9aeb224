package main

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memrank/memrank/config"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/tenancy"
	"github.com/memrank/memrank/upstream"
)

const defaultGolden = "testdata/config/default.golden.yaml"

// TestDefaultYAMLGolden pins what `memrank config print` shows for the
// defaults: key order, number and duration formats, masked secrets.
func TestDefaultYAMLGolden(t *testing.T) {
	got, err := defaultConfig().YAML(true)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(defaultGolden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(defaultGolden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("YAML(true) of the defaults (-want +got):\n%s", diff)
	}
	again, _ := defaultConfig().YAML(true)
	if !bytes.Equal(got, again) {
		t.Error("YAML(true) is not deterministic")
	}
}

// TestDefaultYAMLRoundTrip loads the golden file back: the printed defaults
// are a valid config file that means exactly the defaults.
func TestDefaultYAMLRoundTrip(t *testing.T) {
	cfg := mustLoad(t, config.Source{File: defaultGolden})
	if diff := cmp.Diff(defaultConfig(), cfg); diff != "" {
		t.Errorf("loading %s (-want +got):\n%s", defaultGolden, diff)
	}
}

// custom is a Config that differs from the defaults in every kind of value,
// with every secret set.
func custom() Config {
	c := defaultConfig()
	c.Scoring.Weights = scoring.Weights{Source: 0.4, Repetition: 0.3, Extractor: 0.2, Type: 0.1}
	c.Scoring.SourceLevels["rumour"] = 0.125
	c.Scoring.Extractor.Models = []scoring.ExtractorPattern{{Pattern: `llama-?3(\.1)?`, Quality: 0.7}, {Pattern: `^o1$`, Quality: 0.85}}
	c.Scoring.Decay.HalfLives["legal"] = 45.5
	c.Scoring.Decay.TypeCategories["fact"] = "legal"
	c.Rank.Mode = rank.ModeShadow
	c.Rank.Collections = map[string]rank.CollectionConfig{"memories": {Mode: rank.ModeRerank, Guard: rank.GuardPatch{Floor: ptr(0.2), Off: ptr(true)}}, "notes: work": {}, "true": {Mode: rank.ModeOff}}
	c.Rank.EmbedderGuards["text-embedding-3-small"] = rank.GuardPatch{Band: ptr(0.1)}
	c.Scoring.ConfidenceWeight = 0.25
	c.Dedup.MinIndependentGap = 90 * time.Minute
	c.Dedup.RequireSurfaceChange = false
	c.Judge = dedup.JudgeConfig{Enabled: true, BaseURL: "http://llm:8080/v1", Model: "judge-1", APIKey: "sk-judge-secret", Timeout: 1500 * time.Millisecond, CallsPerMinute: 0, CacheSize: 5}
	c.Embedder.Driver = embed.DriverOpenAI
	c.Embedder.Model = "text-embedding-3-small"
	c.Embedder.APIKey = "sk-embed-secret"
	c.Upstream = upstream.Config{GRPC: "qdrant:6334", REST: "http://qdrant:6333", APIKey: "qdrant-secret", Timeout: 3 * time.Second, LongTimeout: 4 * time.Minute}
	c.ReplicaID = "pod-1"
	c.Tenancy = tenancy.Config{Key: "user_id", APIKeys: map[string]string{"tenant-key-b": "bob", "tenant-key-a2": "alice", "tenant-key-a1": "alice"},
		AdminAPIKeys: []string{"admin-key-1", "admin-key-2", "store-secret", "store-ro-secret"}}
	c.Store.APIKey, c.Store.ReadOnlyAPIKey = "store-secret", "store-ro-secret"
	c.PayloadKeys.Text = "data"
	c.Telemetry.OTLPEndpoint = "http://otel:4317"
	return c
}

var secrets = []string{"sk-judge-secret", "sk-embed-secret", "qdrant-secret", "tenant-key-b", "tenant-key-a1", "tenant-key-a2", "admin-key-1", "admin-key-2", "store-secret", "store-ro-secret"}

func TestYAMLMasksSecrets(t *testing.T) {
	c := custom()
	if err := c.Validate(); err != nil {
		t.Fatalf("the test config is invalid: %v", err)
	}
	out, err := c.YAML(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if bytes.Contains(out, []byte(s)) {
			t.Errorf("YAML(true) shows the secret %q", s)
		}
	}
	// Parse the output rather than grep it: each secret key is "***", and
	// tenancy.api_keys shows one placeholder per key, by tenant.
	back := mustLoad(t, config.Source{File: writeFile(t, string(out))})
	for key, got := range map[string]string{"judge.api_key": back.Judge.APIKey, "embedder.api_key": back.Embedder.APIKey, "upstream.api_key": back.Upstream.APIKey} {
		if got != "***" {
			t.Errorf("%s prints as %q, want \"***\"", key, got)
		}
	}
	wantKeys := map[string]string{"***1": "alice", "***2": "alice", "***3": "bob"}
	if diff := cmp.Diff(wantKeys, back.Tenancy.APIKeys); diff != "" {
		t.Errorf("masked tenancy.api_keys (-want +got):\n%s", diff)
	}

	// Unset secrets print as "", not "***": the output must not claim a key
	// is configured when none is.
	out, _ = defaultConfig().YAML(true)
	if n := strings.Count(string(out), `api_key: ""`); n != 5 {
		t.Errorf("YAML(true) of the defaults has %d empty api_key lines, want 5", n)
	}
	if strings.Contains(string(out), "***") {
		t.Error("YAML(true) of the defaults masks a secret that is not set")
	}
}

// TestYAMLRoundTrip checks that YAML(false) shows every secret and that
// loading it gives back the same Config, for values of every kind.
func TestYAMLRoundTrip(t *testing.T) {
	c := custom()
	out, err := c.YAML(false)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if !bytes.Contains(out, []byte(s)) {
			t.Errorf("YAML(false) does not show %q", s)
		}
	}
	back := mustLoad(t, config.Source{File: writeFile(t, string(out))})
	if diff := cmp.Diff(c, back); diff != "" {
		t.Errorf("YAML(false) round trip (-want +got):\n%s\n%s", diff, out)
	}
}

// TestYAMLNonFinite checks that a hand-built Config with non-finite numbers
// still renders, as YAML's own spellings, so `config print` can show what
// Validate refuses.
func TestYAMLNonFinite(t *testing.T) {
	c := defaultConfig()
	c.Scoring.Weights.Source = math.NaN()
	c.Scoring.Decay.HalfLives["forever"] = math.Inf(1)
	c.Scoring.Decay.FloorK = math.Inf(-1)
	out, err := c.YAML(false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"source: .nan\n", "forever: .inf\n", "floor_k: -.inf\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("YAML(false) lacks %q", want)
		}
	}
}
