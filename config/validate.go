package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
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

// checker collects Validate's errors.
type checker struct{ errs []error }

func (k *checker) add(key, format string, args ...any) {
	k.errs = append(k.errs, &Error{Key: key, Problem: fmt.Sprintf(format, args...)})
}

// unit checks that v is in [0, 1]; NaN is not.
func (k *checker) unit(key string, v float64) {
	if !(v >= 0 && v <= 1) {
		k.add(key, "%s is outside [0, 1]", fmtFloat(v))
	}
}

// unitMap checks every entry of a table of [0, 1] values and its names.
func (k *checker) unitMap(key string, m map[string]float64) {
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if name == "" {
			k.add(key, "has an entry with an empty name")
			continue
		}
		k.unit(key+"."+name, m[name])
	}
}

// positive checks a finite v > 0 (half-lives, slopes).
func (k *checker) positive(key string, v float64) {
	switch {
	case !(v > 0):
		k.add(key, "%s is not positive", fmtFloat(v))
	case math.IsInf(v, 0):
		k.add(key, "%s is not finite", fmtFloat(v))
	}
}

// timeout checks a duration that bounds a wait or paces a loop.
func (k *checker) timeout(key string, d time.Duration) {
	if d <= 0 {
		k.add(key, "%s is not positive", fmtDuration(d))
	}
}

// guard checks a relevance guard.
func (k *checker) guard(key string, g Guard) {
	k.guardPatch(key, GuardPatch{Band: &g.Band, Floor: &g.Floor, RelativeBand: &g.RelativeBand})
}

// guardPatch checks the keys a guard patch gives.
func (k *checker) guardPatch(key string, p GuardPatch) {
	if b := p.Band; b != nil && (!(*b >= 0) || math.IsInf(*b, 0)) {
		k.add(key+".band", "%s is not a non-negative number", fmtFloat(*b))
	}
	if f := p.Floor; f != nil && (math.IsNaN(*f) || math.IsInf(*f, 0)) {
		k.add(key+".floor", "%s is not a finite number", fmtFloat(*f))
	}
	if rb := p.RelativeBand; rb != nil {
		k.unit(key+".relative_band", *rb)
	}
}

func (k *checker) atLeast(key string, v, min int) {
	if v < min {
		k.add(key, "%d is less than %d", v, min)
	}
}

func (k *checker) oneOf(key, v string, allowed ...string) {
	if !slices.Contains(allowed, v) {
		k.add(key, "%s is not one of %s", quote(v), strings.Join(allowed, ", "))
	}
}

func (k *checker) nonEmpty(key, v string) {
	if v == "" {
		k.add(key, "must not be empty")
	}
}

// httpURL checks an optional base URL.
func (k *checker) httpURL(key, v string) {
	if v == "" {
		return
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		k.add(key, "%s is not an http(s) URL", quote(v))
	}
}

// hostPort checks an address; minPort is 0 for listen addresses (the OS
// picks a port), 1 for addresses memrank dials.
func (k *checker) hostPort(key, v string, minPort int) {
	_, port, err := net.SplitHostPort(v)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n < minPort || n > 65535 {
		k.add(key, "%s is not host:port", quote(v))
	}
}

// secret checks an API key without showing it. A key with white space or
// control characters is almost always a copy-paste accident (a trailing
// newline from a mounted secret) and would fail at the first request.
func (k *checker) secret(key, v string) {
	if strings.IndexFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		k.add(key, "contains white space or control characters (value not shown)")
	}
}

func (c Config) validate() []error {
	var k checker
	c.Scoring.validate(&k)
	c.validateServices(&k)
	c.validateTenancy(&k)
	c.PayloadKeys.validate(&k)
	return k.errs
}

func (s Scoring) validate(k *checker) {
	w := s.Weights
	k.unit("scoring.weights.source", w.Source)
	k.unit("scoring.weights.repetition", w.Repetition)
	k.unit("scoring.weights.extractor", w.Extractor)
	k.unit("scoring.weights.type", w.Type)
	if sum := w.Source + w.Repetition + w.Extractor + w.Type; !(math.Abs(sum-1) <= weightTolerance) {
		// Ten digits show why a sum is off without float noise (1.1, not
		// 1.0999999999999999).
		k.add("scoring.weights", "sum is %s, want 1 (within 1e-6)", strconv.FormatFloat(sum, 'g', 10, 64))
	}
	k.unitMap("scoring.source_levels", s.SourceLevels)
	k.unitMap("scoring.type_priors", s.TypePriors)

	k.unit("scoring.extractor.unknown", s.Extractor.Unknown)
	for i, m := range s.Extractor.Models {
		key := fmt.Sprintf("scoring.extractor.models[%d]", i)
		if m.Pattern == "" {
			// An empty pattern matches every model and hides the rows after it.
			k.add(key+".pattern", "must not be empty")
		} else if _, err := regexp.Compile(m.Pattern); err != nil {
			k.add(key+".pattern", "%s does not compile: %v", quote(m.Pattern), err)
		}
		k.unit(key+".quality", m.Quality)
	}

	k.unit("scoring.grounding.partial", s.Grounding.Partial)
	k.unit("scoring.grounding.unknown", s.Grounding.Unknown)
	k.unit("scoring.grounding.floor", s.Grounding.Floor)

	k.unit("scoring.confirm.source", s.Confirm.Source)
	if mc := s.Confirm.MaxConfidence; !(mc > 0 && mc <= 1) {
		k.add("scoring.confirm.max_confidence", "%s is outside (0, 1]", fmtFloat(mc))
	}

	k.unit("scoring.gates.retrieval", s.Gates.Retrieval)
	k.unit("scoring.gates.render", s.Gates.Render)
	k.unit("scoring.confidence_weight", s.ConfidenceWeight)

	d := s.Decay
	k.positive("scoring.decay.default_half_life", d.DefaultHalfLife)
	for _, name := range slices.Sorted(maps.Keys(d.HalfLives)) {
		if name == "" {
			k.add("scoring.decay.half_lives", "has an entry with an empty name")
			continue
		}
		k.positive("scoring.decay.half_lives."+name, d.HalfLives[name])
	}
	for _, typ := range slices.Sorted(maps.Keys(d.TypeCategories)) {
		if typ == "" {
			k.add("scoring.decay.type_categories", "has an entry with an empty name")
			continue
		}
		if cat := d.TypeCategories[typ]; cat == "" {
			k.add("scoring.decay.type_categories."+typ, "must not be empty")
		} else if _, ok := d.HalfLives[cat]; !ok {
			k.add("scoring.decay.type_categories."+typ, "%s has no half-life in scoring.decay.half_lives", quote(cat))
		}
	}
	k.positive("scoring.decay.floor_k", d.FloorK)

	k.unit("scoring.protected.min_confidence", s.Protected.MinConfidence)
	k.atLeast("scoring.protected.min_observations", s.Protected.MinObservations, 0)

	t := s.Tiers
	k.unit("scoring.tiers.active", t.Active)
	k.unit("scoring.tiers.dormant", t.Dormant)
	k.unit("scoring.tiers.stale", t.Stale)
	if !(t.Dormant < t.Active) {
		k.add("scoring.tiers.dormant", "%s is not below scoring.tiers.active (%s)", fmtFloat(t.Dormant), fmtFloat(t.Active))
	}
	if !(t.Stale < t.Dormant) {
		k.add("scoring.tiers.stale", "%s is not below scoring.tiers.dormant (%s)", fmtFloat(t.Stale), fmtFloat(t.Dormant))
	}

	k.unit("scoring.stats.high", s.Stats.High)
	k.unit("scoring.stats.medium", s.Stats.Medium)
	if s.Stats.High < s.Stats.Medium {
		k.add("scoring.stats.high", "%s is below scoring.stats.medium (%s)", fmtFloat(s.Stats.High), fmtFloat(s.Stats.Medium))
	}
}

// validateServices checks the read and write paths, the outbound services,
// the listeners and telemetry.
func (c Config) validateServices(k *checker) {
	r := c.Rank
	k.atLeast("rank.oversample", r.Oversample, 1)
	k.atLeast("rank.max_candidates", r.MaxCandidates, 1)
	k.oneOf("rank.mode", r.Mode, ModeAuto, ModeRerank, ModeShadow, ModeOff)
	k.guard("rank.guard", r.Guard)
	for _, name := range slices.Sorted(maps.Keys(r.Collections)) {
		key := "rank.collections." + name
		if strings.TrimSpace(name) == "" {
			k.add("rank.collections", "has an entry with an empty name")
			continue
		}
		if strings.HasSuffix(name, "_memrank_audit") {
			k.add(key, "names an audit companion: memrank's own records are never re-ranked")
		}
		if m := r.Collections[name].Mode; m != "" {
			k.oneOf(key+".mode", m, ModeAuto, ModeRerank, ModeShadow, ModeOff)
		}
		k.guardPatch(key+".guard", r.Collections[name].Guard)
	}
	for _, model := range slices.Sorted(maps.Keys(r.EmbedderGuards)) {
		if model == "" {
			k.add("rank.embedder_guards", "has an entry with an empty name")
			continue
		}
		k.guardPatch("rank.embedder_guards."+model, r.EmbedderGuards[model])
	}
	if r.Detect.SampleSize < 1 || r.Detect.SampleSize > 1000 {
		k.add("rank.detect.sample_size", "%d is outside [1, 1000]", r.Detect.SampleSize)
	}
	k.timeout("rank.detect.ttl", r.Detect.TTL)
	if !(r.Shadow.SampleRate > 0 && r.Shadow.SampleRate <= 1) {
		k.add("rank.shadow.sample_rate", "%s is outside (0, 1]", fmtFloat(r.Shadow.SampleRate))
	}
	k.timeout("rank.shadow.log_interval", r.Shadow.LogInterval)

	dd := c.Dedup
	k.unit("dedup.same_threshold", dd.SameThreshold)
	k.unit("dedup.judge_threshold", dd.JudgeThreshold)
	if dd.JudgeThreshold > dd.SameThreshold {
		k.add("dedup.judge_threshold", "%s is above dedup.same_threshold (%s)", fmtFloat(dd.JudgeThreshold), fmtFloat(dd.SameThreshold))
	}
	if dd.MinIndependentGap < 0 {
		k.add("dedup.min_independent_gap", "%s is negative", fmtDuration(dd.MinIndependentGap))
	}

	j := c.Judge
	k.httpURL("judge.base_url", j.BaseURL)
	k.secret("judge.api_key", j.APIKey)
	k.timeout("judge.timeout", j.Timeout)
	k.atLeast("judge.calls_per_minute", j.CallsPerMinute, 0)
	k.atLeast("judge.cache_size", j.CacheSize, 0)
	if j.Enabled {
		k.openAI("judge", "judge.enabled is true", j.BaseURL, j.Model, j.APIKey)
	}

	e := c.Embedder
	k.oneOf("embedder.driver", e.Driver, DriverLocal, DriverOpenAI)
	k.httpURL("embedder.base_url", e.BaseURL)
	k.secret("embedder.api_key", e.APIKey)
	k.atLeast("embedder.dimensions", e.Dimensions, 1)
	if e.Dimensions > maxDimensions {
		k.add("embedder.dimensions", "%d is above %d, the largest vector Qdrant accepts", e.Dimensions, maxDimensions)
	}
	k.timeout("embedder.timeout", e.Timeout)
	k.atLeast("embedder.batch_size", e.BatchSize, 1)
	k.atLeast("embedder.cache_size", e.CacheSize, 0)
	if e.Driver == DriverOpenAI {
		k.openAI("embedder", `embedder.driver is "openai"`, e.BaseURL, e.Model, e.APIKey)
	}

	u := c.Upstream
	if u.GRPC != "" {
		k.hostPort("upstream.grpc", u.GRPC, 1)
	}
	k.httpURL("upstream.rest", u.REST)
	k.secret("upstream.api_key", u.APIKey)
	k.timeout("upstream.timeout", u.Timeout)

	k.hostPort("listen.http", c.Listen.HTTP, 0)
	k.hostPort("listen.grpc", c.Listen.GRPC, 0)
	if c.Listen.HTTP == c.Listen.GRPC && !strings.HasSuffix(c.Listen.HTTP, ":0") {
		k.add("listen.grpc", "%s is also listen.http", quote(c.Listen.GRPC))
	}

	k.nonEmpty("store.data_dir", c.Store.DataDir)

	if !replicaIDPattern.MatchString(c.ReplicaID) {
		k.add("replica_id", "%s has characters outside [A-Za-z0-9_-]", quote(c.ReplicaID))
	}

	k.timeout("access.flush_interval", c.Access.FlushInterval)
	k.atLeast("access.max_pending", c.Access.MaxPending, 1)

	t := c.Telemetry
	k.nonEmpty("telemetry.service_name", t.ServiceName)
	k.oneOf("telemetry.log_level", t.LogLevel, LogDebug, LogInfo, LogWarn, LogError)
	k.oneOf("telemetry.log_format", t.LogFormat, LogJSON, LogText)
}

// openAI checks an OpenAI-compatible client that is in use: it needs a
// model, and OpenAI's own API (no base URL) needs a key.
func (k *checker) openAI(section, because, baseURL, model, apiKey string) {
	if model == "" {
		k.add(section+".model", "must not be empty when %s", because)
	}
	if baseURL == "" && apiKey == "" {
		k.add(section+".api_key", "must not be empty when %s and %s.base_url is empty (OpenAI's API)", because, section)
	}
}

// validateTenancy fails closed: half a tenancy configuration is refused
// rather than run as no tenancy.
func (c Config) validateTenancy(k *checker) {
	t := c.Tenancy
	if t.Header != "" && !validHeaderName(t.Header) {
		k.add("tenancy.header", "%s is not a valid HTTP header name", quote(t.Header))
	}
	for _, e := range maskedAPIKeys(t.APIKeys) {
		if e.key == "" {
			k.add("tenancy.api_keys."+e.placeholder, "the API key is empty")
		} else {
			k.secret("tenancy.api_keys."+e.placeholder, e.key)
		}
		if e.tenant == "" {
			k.add("tenancy.api_keys."+e.placeholder, "the tenant is empty")
		}
	}
	switch {
	case t.Key == "" && t.Header != "":
		k.add("tenancy.key", "must not be empty when tenancy.header is set")
	case t.Key == "" && len(t.APIKeys) > 0:
		k.add("tenancy.key", "must not be empty when tenancy.api_keys is set")
	case t.Key != "" && t.Header == "" && len(t.APIKeys) == 0:
		k.add("tenancy.key", "%s is set but neither tenancy.header nor tenancy.api_keys says where a request's tenant comes from", quote(t.Key))
	case t.Header != "" && len(t.APIKeys) > 0:
		k.add("tenancy.header", "%s is set together with tenancy.api_keys; set only one", quote(t.Header))
	}
	if t.Key != "" {
		if name, ok := c.PayloadKeys.recordField(t.Key); ok {
			k.add("tenancy.key", "%s is also payload_keys.%s", quote(t.Key), name)
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
func (p PayloadKeys) validate(k *checker) {
	owner := make(map[string]string)
	for _, f := range p.fields() {
		key := "payload_keys." + f.name
		switch prev, dup := owner[f.value]; {
		case f.value == "":
			k.add(key, "must not be empty")
		case dup:
			k.add(key, "%s is also payload_keys.%s", quote(f.value), prev)
		default:
			owner[f.value] = f.name
		}
	}
}
