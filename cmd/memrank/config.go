package main

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/memrank/memrank/admission"
	"github.com/memrank/memrank/config"
	"github.com/memrank/memrank/config/check"
	"github.com/memrank/memrank/consolidate"
	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/rank"
	"github.com/memrank/memrank/scoring"
	"github.com/memrank/memrank/server/hostguard"
	"github.com/memrank/memrank/server/ui"
	"github.com/memrank/memrank/store"
	"github.com/memrank/memrank/telemetry"
	"github.com/memrank/memrank/tenancy"
	"github.com/memrank/memrank/tlsfiles"
	"github.com/memrank/memrank/upstream"
)

// Config is every setting memrank has: each component's own section, under
// the key its koanf tag gives (scoring.weights.source). Each section holds
// its defaults (DefaultConfig) and checks itself (Validate, naming keys from
// the section); Config.Validate adds the rules that span sections. Fields
// tagged secret print as "***" in masked output and are never echoed in
// errors.
//
// A Config holds maps and slices: copies of a Config share them, so treat a
// loaded Config as read-only.
type Config struct {
	Scoring     scoring.Config      `koanf:"scoring"`
	Rank        rank.Config         `koanf:"rank"`
	Dedup       dedup.Config        `koanf:"dedup"`
	Judge       dedup.JudgeConfig   `koanf:"judge"`
	Forget      dedup.ForgetConfig  `koanf:"forget"`
	Embedder    embed.Config        `koanf:"embedder"`
	Upstream    upstream.Config     `koanf:"upstream"`
	Listen      Listen              `koanf:"listen"`
	Limits      admission.Config    `koanf:"limits"`
	Store       store.Config        `koanf:"store"`
	ReplicaID   string              `koanf:"replica_id"` // "" = the hostname
	Access      rank.RecorderConfig `koanf:"access"`
	Tenancy     tenancy.Config      `koanf:"tenancy"`
	PayloadKeys memory.Keys         `koanf:"payload_keys"`
	Telemetry   telemetry.Config    `koanf:"telemetry"`
	Shutdown    Shutdown            `koanf:"shutdown"`
	// Consolidation is the upkeep job (docs/consolidation.md).
	Consolidation consolidate.Config `koanf:"consolidation"`
	// MCP is the Model Context Protocol server (docs/mcp.md).
	MCP MCP `koanf:"mcp"`
	// UI is the explain page on the HTTP port (docs/explain-page.md).
	UI ui.Config `koanf:"ui"`
}

// MCP configures memrank's MCP server: /mcp on the HTTP port (enabled),
// and `memrank mcp` over stdio. Collection is the collection of a tool
// call that names none ("": calls must name one).
type MCP struct {
	Enabled    bool   `koanf:"enabled"`
	Collection string `koanf:"collection"`
}

// Validate checks the mcp section: a collection the write path would take.
func (m MCP) Validate() error {
	var k check.Checker
	switch {
	case len(m.Collection) > 255:
		k.Add("collection", "is longer than 255 bytes")
	case memory.IsCompanion(m.Collection):
		k.Add("collection", "%s is memrank's %s, not a memory collection", check.Quote(m.Collection), memory.CompanionWhat(m.Collection))
	}
	return k.Err()
}

// Listen holds the addresses memrank serves on, and their TLS.
type Listen struct {
	HTTP string `koanf:"http"`
	GRPC string `koanf:"grpc"`
	// TLS, when its cert_file is set, serves both listeners over TLS; the
	// files are re-read when they change.
	TLS tlsfiles.Server `koanf:"tls"`
	// AllowedHosts are the host names, besides localhost and IP
	// addresses, by which the HTTP port may be reached: by every request
	// when the port needs no credential, else by browsers (the explain
	// page, /mcp or the API from a page). Other names are refused, as a DNS
	// rebinding attack would use one (package hostguard). ["*"]: any name.
	AllowedHosts []string `koanf:"allowed_hosts"`
}

// Validate checks the listen section: two addresses, not the same one.
func (l Listen) Validate() error {
	var k check.Checker
	k.HostPort("http", l.HTTP, 0)
	k.HostPort("grpc", l.GRPC, 0)
	if l.HTTP == l.GRPC && !strings.HasSuffix(l.HTTP, ":0") {
		k.Add("grpc", "%s is also %s", check.Quote(l.GRPC), check.Ref("http"))
	}
	k.Sub("tls", l.TLS.Validate())
	for i, h := range l.AllowedHosts {
		if err := hostguard.ValidHost(h); err != nil {
			k.Add(fmt.Sprintf("allowed_hosts[%d]", i), "%s", err)
		}
	}
	if err := hostguard.ValidAny(l.AllowedHosts); err != nil {
		k.Add("allowed_hosts", "%s", err)
	}
	return k.Err()
}

// Shutdown says how `serve` stops on SIGINT or SIGTERM: /readyz fails
// first, for Drain, so load balancers stop sending; then the listeners
// close and each part (the servers, the access counts' final flush, the
// upstream) gets Grace to finish what it is doing.
type Shutdown struct {
	Drain time.Duration `koanf:"drain"`
	Grace time.Duration `koanf:"grace"`
}

// Validate checks the shutdown section.
func (s Shutdown) Validate() error {
	var k check.Checker
	if s.Drain < 0 {
		k.Add("drain", "%s is negative", check.Duration(s.Drain))
	}
	k.Timeout("grace", s.Grace)
	return k.Err()
}

// defaultConfig returns memrank's defaults, each section's own. Every call
// returns fresh maps and slices.
func defaultConfig() Config {
	return Config{
		Scoring:     scoring.DefaultConfig(),
		Rank:        rank.DefaultConfig(),
		Dedup:       dedup.DefaultConfig(),
		Judge:       dedup.DefaultJudgeConfig(),
		Forget:      dedup.DefaultForgetConfig(),
		Embedder:    embed.DefaultConfig(),
		Upstream:    upstream.DefaultConfig(),
		Listen:      Listen{HTTP: ":6333", GRPC: ":6334", AllowedHosts: []string{}},
		Limits:      admission.DefaultConfig(),
		Store:       store.DefaultConfig(),
		Access:      rank.DefaultRecorderConfig(),
		Tenancy:     tenancy.DefaultConfig(),
		PayloadKeys: memory.DefaultKeys(),
		Telemetry:   telemetry.DefaultConfig(),
		Shutdown:    Shutdown{Drain: 3 * time.Second, Grace: 10 * time.Second},

		Consolidation: consolidate.DefaultConfig(),
		MCP:           MCP{Enabled: true},
		UI:            ui.DefaultConfig(),
	}
}

// Validate reports every problem with c, each as a *config.Error naming
// the full key and the bad value, joined with errors.Join; nil means c is
// usable. It sees only values: unknown keys are caught by config.Load.
func (c Config) Validate() error {
	errs := []error{config.ValidateSections(c)}
	var k check.Checker
	if c.ReplicaID != "" && !rank.ValidReplicaID(c.ReplicaID) {
		k.Add("replica_id", "%s has characters outside [A-Za-z0-9_-]", check.Quote(c.ReplicaID))
	}
	if t := c.Tenancy.Key; t != "" {
		if field, ok := c.PayloadKeys.FieldOf(t); ok {
			k.Add("tenancy.key", "%s is also payload_keys.%s", check.Quote(t), field)
		}
	}
	errs = append(errs, config.Within("", k.Err()))
	return errors.Join(errs...)
}

// codec compiles the scoring section and builds the payload codec on the
// payload keys.
func (c Config) codec() (*memory.Codec, error) {
	params, err := c.Scoring.Params()
	if err != nil {
		return nil, err
	}
	return memory.NewCodec(c.PayloadKeys, params)
}

// rankConfig is the rank section with what the read path takes from the
// other sections: the codec and dedup's thresholds, which fold duplicates
// on the read path as the write path does.
func (c Config) rankConfig(codec *memory.Codec) rank.Config {
	rc := c.Rank
	if rc.Guard == (rank.Guard{}) {
		// A guard written as all zero passes only the best score's ties;
		// rank reads an all-zero Guard as "the default".
		rc.Guard.Band = math.SmallestNonzeroFloat64
	}
	rc.Params, rc.Codec = codec.Params(), codec
	rc.SameThreshold, rc.JudgeThreshold = c.Dedup.SameThreshold, c.Dedup.JudgeThreshold
	return rc
}

// YAML renders c as a YAML file that config.Load reads back to c; see
// config.YAML.
func (c Config) YAML(maskSecrets bool) ([]byte, error) { return config.YAML(c, maskSecrets) }

// envDefaults are the variables of other programs that fill memrank's keys
// when nothing else sets them: the OpenTelemetry SDK's standard endpoint.
func envDefaults() map[string]string {
	return map[string]string{"telemetry.otlp_endpoint": "OTEL_EXPORTER_OTLP_ENDPOINT"}
}

// envAPIKey is where `memrank mcp` finds its API key when --api-key is not
// given, so that an MCP client's configuration can keep it out of the
// command line (the JavaScript SDK's README reads it too).
const envAPIKey = "MEMRANK_API_KEY"

// notConfigEnv are the MEMRANK_ variables memrank documents that are not
// configuration: a client's key, the SDK tests' server addresses, the test
// switches CI exports, the image tag of deploy/compose.yaml. A shell that
// exports them for one of those must still run every memrank command, so
// the configuration neither reads nor refuses them; any other MEMRANK_
// variable that names no key stays an error, so that a typo fails loudly.
// docs/operations.md lists them.
func notConfigEnv() []string {
	return []string{
		envAPIKey, "MEMRANK_URL", "MEMRANK_TENANCY_URL", "MEMRANK_TENANT_HEADER_URL",
		"MEMRANK_JS_TESTS", "MEMRANK_PY_TESTS", "MEMRANK_UI_TESTS", "MEMRANK_UI_SCREENSHOT",
		"MEMRANK_VERSION",
	}
}

// removedKeys are keys earlier versions read, with what replaced them.
func removedKeys() map[string]string {
	return map[string]string{
		"rank.memory_collections": "removed: memory collections are recognised with no configuration; " +
			"set rank.collections.<name>.mode (rerank, shadow or off) per collection, or rank.mode: rerank for the old default of re-ranking every collection",
		"rank.guard.enabled": "renamed: rank.guard.off, inverted (enabled: false is off: true)",
	}
}

// loadConfig reads the configuration: defaults, then file (or
// $MEMRANK_CONFIG), environment and the flags fs sets (keys maps a flag to
// its key), then validates it.
func loadConfig(file string, environ []string, fs *pflag.FlagSet, keys map[string]string) (Config, error) {
	c := defaultConfig()
	err := config.Load(config.Source{File: file, Environ: environ, Flags: fs, FlagKeys: keys,
		EnvDefaults: envDefaults(), RemovedKeys: removedKeys(), NotConfig: notConfigEnv()}, &c)
	if err != nil {
		return Config{}, err
	}
	return c, nil
}
