package config

import (
	"errors"
	"fmt"
	"github.com/memrank/memrank/config/check"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// weightTolerance is how far the confidence weights may sum from 1.
const weightTolerance = 1e-6

// maxDimensions is the largest vector size Qdrant accepts.
const maxDimensions = 65536

var replicaIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]*$`)

// Validate reports every problem with c, each as an *Error naming the full
// key and the bad value, joined with errors.Join; nil means c is usable. It
// sees only values: unknown keys are caught by Load, which reads the keys.
func (c Config) Validate() error {
	return errors.Join(c.validate()...)
}

// checkGuard checks a relevance guard.
func checkGuard(k *check.Checker, key string, g Guard) {
	checkGuardPatch(k, key, GuardPatch{Band: &g.Band, Floor: &g.Floor, RelativeBand: &g.RelativeBand})
}

// checkGuardPatch checks the keys a guard patch gives.
func checkGuardPatch(k *check.Checker, key string, p GuardPatch) {
	if b := p.Band; b != nil && (!(*b >= 0) || math.IsInf(*b, 0)) {
		k.Add(key+".band", "%s is not a non-negative number", fmtFloat(*b))
	}
	if f := p.Floor; f != nil && (math.IsNaN(*f) || math.IsInf(*f, 0)) {
		k.Add(key+".floor", "%s is not a finite number", fmtFloat(*f))
	}
	if rb := p.RelativeBand; rb != nil {
		k.Unit(key+".relative_band", *rb)
	}
}

func (c Config) validate() []error {
	var k check.Checker
	c.Scoring.validate(&k)
	c.validateServices(&k)
	c.validateTenancy(&k)
	c.PayloadKeys.validate(&k)
	return flatten(Within("", k.Err()))
}

func (s Scoring) validate(k *check.Checker) {
	w := s.Weights
	k.Unit("scoring.weights.source", w.Source)
	k.Unit("scoring.weights.repetition", w.Repetition)
	k.Unit("scoring.weights.extractor", w.Extractor)
	k.Unit("scoring.weights.type", w.Type)
	if sum := w.Source + w.Repetition + w.Extractor + w.Type; !(math.Abs(sum-1) <= weightTolerance) {
		// Ten digits show why a sum is off without float noise (1.1, not
		// 1.0999999999999999).
		k.Add("scoring.weights", "sum is %s, want 1 (within 1e-6)", strconv.FormatFloat(sum, 'g', 10, 64))
	}
	k.UnitMap("scoring.source_levels", s.SourceLevels)
	k.UnitMap("scoring.type_priors", s.TypePriors)

	k.Unit("scoring.extractor.unknown", s.Extractor.Unknown)
	for i, m := range s.Extractor.Models {
		key := fmt.Sprintf("scoring.extractor.models[%d]", i)
		if m.Pattern == "" {
			// An empty pattern matches every model and hides the rows after it.
			k.Add(key+".pattern", "must not be empty")
		} else if _, err := regexp.Compile(m.Pattern); err != nil {
			k.Add(key+".pattern", "%s does not compile: %v", quote(m.Pattern), err)
		}
		k.Unit(key+".quality", m.Quality)
	}

	k.Unit("scoring.grounding.partial", s.Grounding.Partial)
	k.Unit("scoring.grounding.unknown", s.Grounding.Unknown)
	k.Unit("scoring.grounding.floor", s.Grounding.Floor)

	k.Unit("scoring.confirm.source", s.Confirm.Source)
	if mc := s.Confirm.MaxConfidence; !(mc > 0 && mc <= 1) {
		k.Add("scoring.confirm.max_confidence", "%s is outside (0, 1]", fmtFloat(mc))
	}

	k.Unit("scoring.gates.retrieval", s.Gates.Retrieval)
	k.Unit("scoring.gates.render", s.Gates.Render)
	k.Unit("scoring.confidence_weight", s.ConfidenceWeight)

	d := s.Decay
	k.Positive("scoring.decay.default_half_life", d.DefaultHalfLife)
	for _, name := range slices.Sorted(maps.Keys(d.HalfLives)) {
		if name == "" {
			k.Add("scoring.decay.half_lives", "has an entry with an empty name")
			continue
		}
		k.Positive("scoring.decay.half_lives."+name, d.HalfLives[name])
	}
	for _, typ := range slices.Sorted(maps.Keys(d.TypeCategories)) {
		if typ == "" {
			k.Add("scoring.decay.type_categories", "has an entry with an empty name")
			continue
		}
		if cat := d.TypeCategories[typ]; cat == "" {
			k.Add("scoring.decay.type_categories."+typ, "must not be empty")
		} else if _, ok := d.HalfLives[cat]; !ok {
			k.Add("scoring.decay.type_categories."+typ, "%s has no half-life in scoring.decay.half_lives", quote(cat))
		}
	}
	k.Positive("scoring.decay.floor_k", d.FloorK)

	k.Unit("scoring.protected.min_confidence", s.Protected.MinConfidence)
	k.AtLeast("scoring.protected.min_observations", s.Protected.MinObservations, 0)

	t := s.Tiers
	k.Unit("scoring.tiers.active", t.Active)
	k.Unit("scoring.tiers.dormant", t.Dormant)
	k.Unit("scoring.tiers.stale", t.Stale)
	if !(t.Dormant < t.Active) {
		k.Add("scoring.tiers.dormant", "%s is not below scoring.tiers.active (%s)", fmtFloat(t.Dormant), fmtFloat(t.Active))
	}
	if !(t.Stale < t.Dormant) {
		k.Add("scoring.tiers.stale", "%s is not below scoring.tiers.dormant (%s)", fmtFloat(t.Stale), fmtFloat(t.Dormant))
	}

	k.Unit("scoring.stats.high", s.Stats.High)
	k.Unit("scoring.stats.medium", s.Stats.Medium)
	if s.Stats.High < s.Stats.Medium {
		k.Add("scoring.stats.high", "%s is below scoring.stats.medium (%s)", fmtFloat(s.Stats.High), fmtFloat(s.Stats.Medium))
	}
}

// validateServices checks the read and write paths, the outbound services,
// the listeners and telemetry.
func (c Config) validateServices(k *check.Checker) {
	r := c.Rank
	k.AtLeast("rank.oversample", r.Oversample, 1)
	k.AtLeast("rank.max_candidates", r.MaxCandidates, 1)
	k.OneOf("rank.mode", r.Mode, ModeAuto, ModeRerank, ModeShadow, ModeOff)
	checkGuard(k, "rank.guard", r.Guard)
	for _, name := range slices.Sorted(maps.Keys(r.Collections)) {
		key := "rank.collections." + name
		if strings.TrimSpace(name) == "" {
			k.Add("rank.collections", "has an entry with an empty name")
			continue
		}
		if strings.HasSuffix(name, "_memrank_audit") {
			k.Add(key, "names an audit companion: memrank's own records are never re-ranked")
		}
		if m := r.Collections[name].Mode; m != "" {
			k.OneOf(key+".mode", m, ModeAuto, ModeRerank, ModeShadow, ModeOff)
		}
		checkGuardPatch(k, key+".guard", r.Collections[name].Guard)
	}
	for _, model := range slices.Sorted(maps.Keys(r.EmbedderGuards)) {
		if model == "" {
			k.Add("rank.embedder_guards", "has an entry with an empty name")
			continue
		}
		checkGuardPatch(k, "rank.embedder_guards."+model, r.EmbedderGuards[model])
	}
	if r.Detect.SampleSize < 1 || r.Detect.SampleSize > 1000 {
		k.Add("rank.detect.sample_size", "%d is outside [1, 1000]", r.Detect.SampleSize)
	}
	k.Timeout("rank.detect.ttl", r.Detect.TTL)
	if !(r.Shadow.SampleRate > 0 && r.Shadow.SampleRate <= 1) {
		k.Add("rank.shadow.sample_rate", "%s is outside (0, 1]", fmtFloat(r.Shadow.SampleRate))
	}
	k.Timeout("rank.shadow.log_interval", r.Shadow.LogInterval)

	dd := c.Dedup
	k.Unit("dedup.same_threshold", dd.SameThreshold)
	k.Unit("dedup.judge_threshold", dd.JudgeThreshold)
	if dd.JudgeThreshold > dd.SameThreshold {
		k.Add("dedup.judge_threshold", "%s is above dedup.same_threshold (%s)", fmtFloat(dd.JudgeThreshold), fmtFloat(dd.SameThreshold))
	}
	if dd.MinIndependentGap < 0 {
		k.Add("dedup.min_independent_gap", "%s is negative", fmtDuration(dd.MinIndependentGap))
	}

	j := c.Judge
	k.HTTPURL("judge.base_url", j.BaseURL)
	k.Secret("judge.api_key", j.APIKey)
	k.Timeout("judge.timeout", j.Timeout)
	k.AtLeast("judge.calls_per_minute", j.CallsPerMinute, 0)
	k.AtLeast("judge.cache_size", j.CacheSize, 0)
	if j.Enabled {
		checkOpenAI(k, "judge", "judge.enabled is true", j.BaseURL, j.Model, j.APIKey)
	}

	e := c.Embedder
	k.OneOf("embedder.driver", e.Driver, DriverLocal, DriverOpenAI)
	k.HTTPURL("embedder.base_url", e.BaseURL)
	k.Secret("embedder.api_key", e.APIKey)
	k.AtLeast("embedder.dimensions", e.Dimensions, 1)
	if e.Dimensions > maxDimensions {
		k.Add("embedder.dimensions", "%d is above %d, the largest vector Qdrant accepts", e.Dimensions, maxDimensions)
	}
	k.Timeout("embedder.timeout", e.Timeout)
	k.AtLeast("embedder.batch_size", e.BatchSize, 1)
	k.AtLeast("embedder.cache_size", e.CacheSize, 0)
	if e.Driver == DriverOpenAI {
		checkOpenAI(k, "embedder", `embedder.driver is "openai"`, e.BaseURL, e.Model, e.APIKey)
	}

	u := c.Upstream
	if u.GRPC != "" {
		k.HostPort("upstream.grpc", u.GRPC, 1)
	}
	k.HTTPURL("upstream.rest", u.REST)
	k.Secret("upstream.api_key", u.APIKey)
	k.Timeout("upstream.timeout", u.Timeout)

	k.HostPort("listen.http", c.Listen.HTTP, 0)
	k.HostPort("listen.grpc", c.Listen.GRPC, 0)
	if c.Listen.HTTP == c.Listen.GRPC && !strings.HasSuffix(c.Listen.HTTP, ":0") {
		k.Add("listen.grpc", "%s is also listen.http", quote(c.Listen.GRPC))
	}

	k.NonEmpty("store.data_dir", c.Store.DataDir)

	if !replicaIDPattern.MatchString(c.ReplicaID) {
		k.Add("replica_id", "%s has characters outside [A-Za-z0-9_-]", quote(c.ReplicaID))
	}

	k.Timeout("access.flush_interval", c.Access.FlushInterval)
	k.AtLeast("access.max_pending", c.Access.MaxPending, 1)

	t := c.Telemetry
	k.NonEmpty("telemetry.service_name", t.ServiceName)
	k.OneOf("telemetry.log_level", t.LogLevel, LogDebug, LogInfo, LogWarn, LogError)
	k.OneOf("telemetry.log_format", t.LogFormat, LogJSON, LogText)
}

// openAI checks an OpenAI-compatible client that is in use: it needs a
// model, and OpenAI's own API (no base URL) needs a key.
func checkOpenAI(k *check.Checker, section, because, baseURL, model, apiKey string) {
	if model == "" {
		k.Add(section+".model", "must not be empty when %s", because)
	}
	if baseURL == "" && apiKey == "" {
		k.Add(section+".api_key", "must not be empty when %s and %s.base_url is empty (OpenAI's API)", because, section)
	}
}

// validateTenancy fails closed: half a tenancy configuration is refused
// rather than run as no tenancy.
func (c Config) validateTenancy(k *check.Checker) {
	t := c.Tenancy
	if t.Header != "" && !validHeaderName(t.Header) {
		k.Add("tenancy.header", "%s is not a valid HTTP header name", quote(t.Header))
	}
	for _, e := range maskedAPIKeys(t.APIKeys) {
		if e.key == "" {
			k.Add("tenancy.api_keys."+e.placeholder, "the API key is empty")
		} else {
			k.Secret("tenancy.api_keys."+e.placeholder, e.key)
		}
		if e.tenant == "" {
			k.Add("tenancy.api_keys."+e.placeholder, "the tenant is empty")
		}
	}
	switch {
	case t.Key == "" && t.Header != "":
		k.Add("tenancy.key", "must not be empty when tenancy.header is set")
	case t.Key == "" && len(t.APIKeys) > 0:
		k.Add("tenancy.key", "must not be empty when tenancy.api_keys is set")
	case t.Key != "" && t.Header == "" && len(t.APIKeys) == 0:
		k.Add("tenancy.key", "%s is set but neither tenancy.header nor tenancy.api_keys says where a request's tenant comes from", quote(t.Key))
	case t.Header != "" && len(t.APIKeys) > 0:
		k.Add("tenancy.header", "%s is set together with tenancy.api_keys; set only one", quote(t.Header))
	}
	if t.Key != "" {
		if name, ok := c.PayloadKeys.recordField(t.Key); ok {
			k.Add("tenancy.key", "%s is also payload_keys.%s", quote(t.Key), name)
		}
	}
}

// validHeaderName reports whether s is an HTTP field name (RFC 9110 token).
func validHeaderName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return s != ""
}

// validate refuses empty payload keys and two record fields stored under one
// payload key, which would make each overwrite the other.
func (p PayloadKeys) validate(k *check.Checker) {
	owner := make(map[string]string)
	for _, f := range p.fields() {
		key := "payload_keys." + f.name
		switch prev, dup := owner[f.value]; {
		case f.value == "":
			k.Add(key, "must not be empty")
		case dup:
			k.Add(key, "%s is also payload_keys.%s", quote(f.value), prev)
		default:
			owner[f.value] = f.name
		}
	}
}
