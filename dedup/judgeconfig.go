package dedup

import (
	"fmt"
	"time"

	"github.com/memrank/memrank/config/check"
	"github.com/memrank/memrank/telemetry/settings"
)

// openAIBaseURL is the API an enabled judge without a base_url talks to.
const openAIBaseURL = "https://api.openai.com/v1"

// JudgeConfig is the judge section of memrank's configuration: tier 3's
// LLM judge, its budget and its verdict cache. Build makes the Judging the
// write and read paths share.
type JudgeConfig struct {
	// Enabled sends the pairs in the judge band to the LLM judge; off, they
	// are never merged (the cache still answers the read path, empty).
	Enabled bool   `koanf:"enabled"`
	BaseURL string `koanf:"base_url"` // OpenAI-compatible API root; "" = OpenAI's API
	Model   string `koanf:"model"`
	APIKey  string `koanf:"api_key" secret:"true"`
	// Timeout bounds a whole decision, retries included.
	Timeout        time.Duration `koanf:"timeout"`
	CallsPerMinute int           `koanf:"calls_per_minute"` // per collection; 0 = no limit
	CacheSize      int           `koanf:"cache_size"`       // verdicts kept; 0 = no cache
}

// DefaultJudgeConfig returns the judge section's defaults: off, 5s, 60
// calls per minute, 10000 verdicts.
func DefaultJudgeConfig() JudgeConfig {
	return JudgeConfig{Timeout: DefaultJudgeTimeout, CallsPerMinute: 60, CacheSize: DefaultJudgeCacheSize}
}

// Validate checks the judge section's values as they are.
func (c JudgeConfig) Validate() error {
	var k check.Checker
	k.HTTPURL("base_url", c.BaseURL)
	k.Secret("api_key", c.APIKey)
	k.Timeout("timeout", c.Timeout)
	k.AtLeast("calls_per_minute", c.CallsPerMinute, 0)
	k.AtLeast("cache_size", c.CacheSize, 0)
	if c.Enabled {
		k.OpenAI(check.Ref("enabled")+" is true", c.BaseURL, c.Model, c.APIKey)
	}
	return k.Err()
}

// Build returns tier 3 as c configures it: the LLM judge when enabled,
// behind the verdict cache and the per-collection budget. Disabled, it
// still answers the read path's cache look-ups (with nothing), and every
// pair that needs a verdict stays unmerged.
func (c JudgeConfig) Build(tel settings.Settings) (*Judging, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("dedup: judge: %w", err)
	}
	cacheSize := c.CacheSize
	if cacheSize == 0 {
		cacheSize = -1 // 0 is "no cache" here, "the default" to JudgingConfig
	}
	cfg := JudgingConfig{
		CacheSize:      cacheSize,
		CallsPerMinute: c.CallsPerMinute,
		Timeout:        c.Timeout,
		Telemetry:      tel,
	}
	if c.Enabled {
		base := c.BaseURL
		if base == "" {
			base = openAIBaseURL
		}
		j, err := NewLLMJudge(LLMJudgeConfig{BaseURL: base, Model: c.Model, APIKey: c.APIKey, Timeout: c.Timeout, Telemetry: tel})
		if err != nil {
			return nil, err
		}
		cfg.Judge = j
	}
	return NewJudging(cfg)
}
