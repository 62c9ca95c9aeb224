package main

import (
	"errors"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memrank/memrank/config"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/tenancy"
	"github.com/memrank/memrank/tlsfiles"
)

// TestValidate gives each rule of Validate a case with its exact text. Every
// case starts from the defaults and breaks one thing.
func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string // every line of the error, in order
	}{
		{"weights sum", func(c *Config) { c.Scoring.Weights.Type = 0.2 },
			"config: scoring.weights: sum is 1.1, want 1 (within 1e-6)"},
		{"weights sum within tolerance", func(c *Config) { c.Scoring.Weights.Type = 0.1000005 }, ""},
		{"weights sum just outside tolerance", func(c *Config) { c.Scoring.Weights.Type = 0.100002 },
			"config: scoring.weights: sum is 1.000002, want 1 (within 1e-6)"},
		{"weight outside [0, 1]", func(c *Config) { c.Scoring.Weights.Source = 1.25; c.Scoring.Weights.Repetition = -0.6 },
			"config: scoring.weights.source: 1.25 is outside [0, 1]\nconfig: scoring.weights.repetition: -0.6 is outside [0, 1]"},
		{"NaN weight", func(c *Config) { c.Scoring.Weights.Type = math.NaN() },
			"config: scoring.weights.type: NaN is outside [0, 1]\nconfig: scoring.weights: sum is NaN, want 1 (within 1e-6)"},
		{"source level", func(c *Config) { c.Scoring.SourceLevels["rumour"] = 1.2 },
			"config: scoring.source_levels.rumour: 1.2 is outside [0, 1]"},
		{"type prior", func(c *Config) { c.Scoring.TypePriors["fact"] = -0.1 },
			"config: scoring.type_priors.fact: -0.1 is outside [0, 1]"},
		{"empty table name", func(c *Config) { c.Scoring.TypePriors[""] = 0.5 },
			"config: scoring.type_priors: has an entry with an empty name"},
		{"extractor unknown", func(c *Config) { c.Scoring.Extractor.Unknown = 2 },
			"config: scoring.extractor.unknown: 2 is outside [0, 1]"},
		{"extractor quality", func(c *Config) { c.Scoring.Extractor.Models[2].Quality = 1.5 },
			"config: scoring.extractor.models[2].quality: 1.5 is outside [0, 1]"},
		{"extractor pattern", func(c *Config) { c.Scoring.Extractor.Models[1].Pattern = "gpt-(4" },
			"config: scoring.extractor.models[1].pattern: \"gpt-(4\" does not compile: error parsing regexp: missing closing ): `gpt-(4`"},
		{"empty extractor pattern", func(c *Config) { c.Scoring.Extractor.Models[0].Pattern = "" },
			"config: scoring.extractor.models[0].pattern: must not be empty"},
		{"no extractor models", func(c *Config) { c.Scoring.Extractor.Models = nil }, ""},
		{"grounding", func(c *Config) { c.Scoring.Grounding = scoring.GroundingParams{Partial: 1.5, Unknown: -1, Floor: 2} },
			"config: scoring.grounding.partial: 1.5 is outside [0, 1]\nconfig: scoring.grounding.unknown: -1 is outside [0, 1]\nconfig: scoring.grounding.floor: 2 is outside [0, 1]"},
		{"confirm source", func(c *Config) { c.Scoring.Confirm.Source = 1.01 },
			"config: scoring.confirm.source: 1.01 is outside [0, 1]"},
		{"confirm max_confidence zero", func(c *Config) { c.Scoring.Confirm.MaxConfidence = 0 },
			"config: scoring.confirm.max_confidence: 0 is outside (0, 1]"},
		{"confirm max_confidence one", func(c *Config) { c.Scoring.Confirm.MaxConfidence = 1 }, ""},
		{"gates", func(c *Config) { c.Scoring.Gates = scoring.GatesConfig{Retrieval: -0.5, Render: 1.5} },
			"config: scoring.gates.retrieval: -0.5 is outside [0, 1]\nconfig: scoring.gates.render: 1.5 is outside [0, 1]"},
		{"default half-life", func(c *Config) { c.Scoring.Decay.DefaultHalfLife = -1 },
			"config: scoring.decay.default_half_life: -1 is not positive"},
		{"category half-life", func(c *Config) { c.Scoring.Decay.HalfLives["price"] = 0 },
			"config: scoring.decay.half_lives.price: 0 is not positive"},
		{"infinite half-life", func(c *Config) { c.Scoring.Decay.HalfLives["price"] = math.Inf(1) },
			"config: scoring.decay.half_lives.price: +Inf is not finite"},
		{"floor_k", func(c *Config) { c.Scoring.Decay.FloorK = 0 },
			"config: scoring.decay.floor_k: 0 is not positive"},
		{"type category without half-life", func(c *Config) { c.Scoring.Decay.TypeCategories["fact"] = "legal" },
			`config: scoring.decay.type_categories.fact: "legal" has no half-life in scoring.decay.half_lives`},
		{"type category with half-life", func(c *Config) { c.Scoring.Decay.TypeCategories["preference"] = "preference" }, ""},
		{"protected", func(c *Config) {
			c.Scoring.Protected = scoring.ProtectedConfig{MinConfidence: 1.1, MinObservations: -1}
		},
			"config: scoring.protected.min_confidence: 1.1 is outside [0, 1]\nconfig: scoring.protected.min_observations: -1 is less than 0"},
		{"tiers equal", func(c *Config) { c.Scoring.Tiers.Dormant = 0.6 },
			"config: scoring.tiers.dormant: 0.6 is not below scoring.tiers.active (0.6)"},
		{"tiers reversed", func(c *Config) { c.Scoring.Tiers = scoring.TierParams{Active: 0.1, Dormant: 0.3, Stale: 0.6} },
			"config: scoring.tiers.dormant: 0.3 is not below scoring.tiers.active (0.1)\nconfig: scoring.tiers.stale: 0.6 is not below scoring.tiers.dormant (0.3)"},
		{"tier outside [0, 1]", func(c *Config) { c.Scoring.Tiers.Active = 1.2 },
			"config: scoring.tiers.active: 1.2 is outside [0, 1]"},
		{"stats reversed", func(c *Config) { c.Scoring.Stats = scoring.StatsConfig{High: 0.4, Medium: 0.5} },
			"config: scoring.stats.high: 0.4 is below scoring.stats.medium (0.5)"},
		{"stats equal", func(c *Config) { c.Scoring.Stats = scoring.StatsConfig{High: 0.5, Medium: 0.5} }, ""},
		{"stats outside [0, 1]", func(c *Config) { c.Scoring.Stats.High = 2 },
			"config: scoring.stats.high: 2 is outside [0, 1]"},
		{"oversample and max_candidates", func(c *Config) { c.Rank.Oversample = 0; c.Rank.MaxCandidates = -5 },
			"config: rank.oversample: 0 is less than 1\nconfig: rank.max_candidates: -5 is less than 1"},
		{"rank collections", func(c *Config) {
			c.Rank.Collections = map[string]rank.CollectionConfig{"": {}, "a": {Mode: rank.ModeOff}, "m_memrank_audit": {Mode: rank.ModeRerank}}
		}, "config: rank.collections: has an entry with an empty name\n" +
			"config: rank.collections.m_memrank_audit: names a companion (audit trail): memrank's own records are never re-ranked"},
		{"guards", func(c *Config) {
			c.Rank.Guard.Band = -1
			c.Rank.Collections = map[string]rank.CollectionConfig{"a": {Guard: rank.GuardPatch{Band: ptr(0.1), Floor: ptr(math.NaN())}}}
			c.Rank.EmbedderGuards = map[string]rank.GuardPatch{"m": {RelativeBand: ptr(2.0)}}
		}, "config: rank.guard.band: -1 is not a non-negative number\nconfig: rank.collections.a.guard.floor: NaN is not a finite number\n" +
			"config: rank.embedder_guards.m.relative_band: 2 is outside [0, 1]"},
		{"detection and shadow", func(c *Config) {
			c.Rank.Detect = rank.DetectConfig{SampleSize: 0, TTL: -time.Second}
			c.Rank.Shadow = rank.ShadowConfig{SampleRate: 0, LogInterval: -time.Second}
		}, "config: rank.detect.sample_size: 0 is outside [1, 1000]\nconfig: rank.detect.ttl: -1s is not positive\n" +
			"config: rank.shadow.sample_rate: 0 is outside (0, 1]\nconfig: rank.shadow.log_interval: -1s is not positive"},
		{"confidence weight", func(c *Config) { c.Scoring.ConfidenceWeight = 1.5 }, "config: scoring.confidence_weight: 1.5 is outside [0, 1]"},
		{"dedup thresholds outside [0, 1]", func(c *Config) { c.Dedup.SameThreshold = 1.1; c.Dedup.JudgeThreshold = -0.1 },
			"config: dedup.same_threshold: 1.1 is outside [0, 1]\nconfig: dedup.judge_threshold: -0.1 is outside [0, 1]"},
		{"judge band reversed", func(c *Config) { c.Dedup.JudgeThreshold = 0.95 },
			"config: dedup.judge_threshold: 0.95 is above dedup.same_threshold (0.92)"},
		{"judge band empty", func(c *Config) { c.Dedup.JudgeThreshold = 0.92 }, ""},
		{"negative independence gap", func(c *Config) { c.Dedup.MinIndependentGap = -time.Minute },
			"config: dedup.min_independent_gap: -1m is negative"},
		{"zero independence gap", func(c *Config) { c.Dedup.MinIndependentGap = 0 }, ""},
		{"negative clock skew", func(c *Config) { c.Dedup.MaxClockSkew = -time.Minute },
			"config: dedup.max_clock_skew: -1m is negative"},
		{"timeouts", func(c *Config) {
			c.Judge.Timeout = 0
			c.Embedder.Timeout = -time.Second
			c.Upstream.Timeout = 0
			c.Access.FlushInterval = 0
		}, "config: judge.timeout: 0s is not positive\nconfig: embedder.timeout: -1s is not positive\nconfig: upstream.timeout: 0s is not positive\nconfig: access.flush_interval: 0s is not positive"},
		{"judge counts", func(c *Config) { c.Judge.CallsPerMinute = -1; c.Judge.CacheSize = -1 },
			"config: judge.calls_per_minute: -1 is less than 0\nconfig: judge.cache_size: -1 is less than 0"},
		{"judge enabled without model or key", func(c *Config) { c.Judge.Enabled = true },
			"config: judge.model: must not be empty when judge.enabled is true\nconfig: judge.api_key: must not be empty when judge.enabled is true and judge.base_url is empty (OpenAI's API)"},
		{"judge enabled on a local server", func(c *Config) {
			c.Judge = dedup.JudgeConfig{Enabled: true, BaseURL: "http://localhost:11434/v1", Model: "qwen", Timeout: time.Second}
		}, ""},
		{"judge base URL", func(c *Config) { c.Judge.BaseURL = "localhost:11434" },
			`config: judge.base_url: "localhost:11434" is not an http(s) URL`},
		{"secret with a newline", func(c *Config) { c.Upstream.APIKey = "secret-value\n" },
			"config: upstream.api_key: contains white space or control characters (value not shown)"},
		{"embedder driver", func(c *Config) { c.Embedder.Driver = "onnx" },
			`config: embedder.driver: "onnx" is not one of semantic, local, openai`},
		{"embedder openai without model", func(c *Config) { c.Embedder.Driver = embed.DriverOpenAI; c.Embedder.APIKey = "k" },
			`config: embedder.model: must not be empty when embedder.driver is "openai"`},
		{"embedder sizes", func(c *Config) {
			c.Embedder.Dimensions = 0
			c.Embedder.BatchSize = 0
			c.Embedder.CacheSize = -1
		}, "config: embedder.dimensions: 0 is less than 1\nconfig: embedder.batch_size: 0 is less than 1\nconfig: embedder.cache_size: -1 is less than 0"},
		{"embedder dimensions above Qdrant's limit", func(c *Config) { c.Embedder.Dimensions = 70000 },
			"config: embedder.dimensions: 70000 is above 65536, the largest vector Qdrant accepts"},
		{"upstream grpc", func(c *Config) { c.Upstream.GRPC = "http://qdrant:6334" },
			`config: upstream.grpc: "http://qdrant:6334" is not host:port`},
		{"upstream grpc port zero", func(c *Config) { c.Upstream.GRPC = "qdrant:0" },
			`config: upstream.grpc: "qdrant:0" is not host:port`},
		{"upstream rest", func(c *Config) { c.Upstream.REST = "ftp://qdrant" },
			`config: upstream.rest: "ftp://qdrant" is not an http(s) URL`},
		{"listen addresses", func(c *Config) { c.Listen = Listen{HTTP: "6333", GRPC: ":99999"} },
			"config: listen.http: \"6333\" is not host:port\nconfig: listen.grpc: \":99999\" is not host:port"},
		{"listen on one address twice", func(c *Config) { c.Listen.GRPC = ":6333" },
			`config: listen.grpc: ":6333" is also listen.http`},
		{"listen on any port twice", func(c *Config) { c.Listen = Listen{HTTP: "127.0.0.1:0", GRPC: "127.0.0.1:0"} }, ""},
		{"allowed hosts: names, a suffix", func(c *Config) { c.Listen.AllowedHosts = []string{"memrank.internal", ".corp.example"} }, ""},
		{"allowed hosts: every name", func(c *Config) { c.Listen.AllowedHosts = []string{"*"} }, ""},
		{"allowed hosts: every name and another", func(c *Config) { c.Listen.AllowedHosts = []string{"memrank.internal", "*"} },
			`config: listen.allowed_hosts: "*" (every host name) must be the only entry`},
		{"allowed hosts: a port", func(c *Config) { c.Listen.AllowedHosts = []string{"memrank:6333"} },
			`config: listen.allowed_hosts[0]: "memrank:6333" is not a host name (no scheme, port, path or wildcard; a leading dot allows every name under it; "*" alone allows every name)`},
		{"mcp collection", func(c *Config) { c.MCP.Collection = "notes_memrank_audit" },
			`config: mcp.collection: "notes_memrank_audit" is memrank's audit trail, not a memory collection`},
		{"mcp collection too long", func(c *Config) { c.MCP.Collection = strings.Repeat("c", 256) },
			"config: mcp.collection: is longer than 255 bytes"},
		{"data dir", func(c *Config) { c.Store.DataDir = "" },
			"config: store.data_dir: must not be empty"},
		{"replica id", func(c *Config) { c.ReplicaID = "pod.1" },
			`config: replica_id: "pod.1" has characters outside [A-Za-z0-9_-]`},
		{"replica id allowed characters", func(c *Config) { c.ReplicaID = "Pod_1-a" }, ""},
		{"max pending", func(c *Config) { c.Access.MaxPending = 0 },
			"config: access.max_pending: 0 is less than 1"},
		{"log level and format", func(c *Config) { c.Telemetry.LogLevel = "INFO"; c.Telemetry.LogFormat = "" },
			"config: telemetry.log_level: \"INFO\" is not one of debug, info, warn, error\nconfig: telemetry.log_format: \"\" is not one of json, text"},
		{"service name", func(c *Config) { c.Telemetry.ServiceName = "" },
			"config: telemetry.service_name: must not be empty"},
		{"empty payload key", func(c *Config) { c.PayloadKeys.Tier = "" },
			"config: payload_keys.tier: must not be empty"},
		{"duplicate payload key", func(c *Config) { c.PayloadKeys.Modalities = "text" },
			`config: payload_keys.modalities: "text" is also payload_keys.text`},
		{"payload keys swapped", func(c *Config) { c.PayloadKeys.Text, c.PayloadKeys.Source = "source", "text" }, ""},
		{"upstream tls cert without key", func(c *Config) { c.Upstream.TLS = tlsfiles.Client{Enabled: true, CertFile: "c.pem"} },
			"config: upstream.tls.cert_file: and upstream.tls.key_file go together"},
		{"upstream tls files while off", func(c *Config) { c.Upstream.TLS.CAFile = "ca.pem" },
			"config: upstream.tls.enabled: is false, yet certificates or a server name are set: set it to true, or remove them"},
		{"listen tls key without cert", func(c *Config) { c.Listen.TLS.KeyFile = "k.pem" },
			"config: listen.tls.cert_file: and listen.tls.key_file go together"},
		{"tenancy header without key", func(c *Config) { c.Tenancy.Header = "X-Tenant" },
			"config: tenancy.key: must not be empty when tenancy.header is set"},
		{"tenancy api keys without key", func(c *Config) { c.Tenancy.APIKeys["k"] = "alice" },
			"config: tenancy.key: must not be empty when tenancy.api_keys is set"},
		{"tenancy key without a tenant source", func(c *Config) { c.Tenancy.Key = "user_id" },
			`config: tenancy.key: "user_id" is set but none of tenancy.header, tenancy.api_keys and tenancy.jwt.claim says where a request's tenant comes from`},
		{"tenancy header and api keys", func(c *Config) {
			c.Tenancy = tenancy.Config{Key: "user_id", Header: "X-Tenant", APIKeys: map[string]string{"k": "alice"}}
		}, `config: tenancy.key: set exactly one of tenancy.header, tenancy.api_keys and tenancy.jwt.claim: they are where a request's tenant comes from`},
		{"tenancy bad header", func(c *Config) { c.Tenancy = tenancy.Config{Key: "user_id", Header: "X Tenant"} },
			`config: tenancy.header: "X Tenant" is not a valid HTTP header name`},
		{"tenancy key is a payload key", func(c *Config) { c.Tenancy = tenancy.Config{Key: "source", Header: "X-Tenant"} },
			`config: tenancy.key: "source" is also payload_keys.source`},
		{"tenancy api key entries", func(c *Config) {
			c.Tenancy = tenancy.Config{Key: "user_id", APIKeys: map[string]string{"": "alice", "good-key": "", "bad key": "bob"}}
		}, "config: tenancy.api_keys.***1: the tenant is empty\n" +
			"config: tenancy.api_keys.***2: the API key is empty\n" +
			"config: tenancy.api_keys.***3: contains white space or control characters (value not shown)"},
		{"tenancy on with a header", func(c *Config) { c.Tenancy = tenancy.Config{Key: "user_id", Header: "X-Tenant"} }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := defaultConfig()
			tt.mutate(&c)
			err := c.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Validate():\n got %s\nwant %s", got, tt.want)
			}
			for _, e := range unjoin(err) {
				var ce *config.Error
				if !errors.As(e, &ce) {
					t.Fatalf("%v is not a *config.Error", e)
				}
				if ce.Source != "" || !keyExists(ce.Key) {
					t.Errorf("error %q: Source %q, Key %q; want no source and a key of the schema", e, ce.Source, ce.Key)
				}
			}
			if strings.Contains(got, "secret-value") || strings.Contains(got, "good-key") || strings.Contains(got, "bad key") {
				t.Errorf("error shows a secret: %s", got)
			}
		})
	}
}

var listIndex = regexp.MustCompile(`\[\d+\]`)

// keyExists reports whether key names a setting of the schema; list
// elements and masked map entries count.
func keyExists(key string) bool {
	t := reflect.TypeFor[Config]()
	path := strings.Split(listIndex.ReplaceAllString(key, ""), ".")
	for i, seg := range path {
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := t.FieldByNameFunc(func(name string) bool {
				sf, _ := t.FieldByName(name)
				return sf.Tag.Get("koanf") == seg
			})
			if !ok {
				return false
			}
			t = f.Type
		case reflect.Map:
			if t.Elem().Kind() != reflect.Struct {
				return i == len(path)-1
			}
			t = t.Elem() // an entry of a map of sections: its name, then its keys
		default:
			return false
		}
	}
	return true
}

// TestValidateZeroConfig checks that a Config built by hand with nothing set
// is refused, not accepted or crashed on.
func TestValidateZeroConfig(t *testing.T) {
	err := Config{}.Validate()
	if err == nil {
		t.Fatal("Config{}.Validate() = nil, want errors")
	}
	for _, want := range []string{
		"config: scoring.weights: sum is 0, want 1 (within 1e-6)",
		"config: scoring.decay.default_half_life: 0 is not positive",
		"config: embedder.driver: \"\" is not one of semantic, local, openai",
		"config: payload_keys.text: must not be empty",
	} {
		if !strings.Contains(err.Error(), want+"\n") {
			t.Errorf("Config{}.Validate() does not report %q", want)
		}
	}
}
