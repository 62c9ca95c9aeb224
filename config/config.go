package config

import "time"

// Read-path modes (rank.mode, rank.collections.<name>.mode).
const (
	ModeAuto   = "auto"
	ModeRerank = "rerank"
	ModeShadow = "shadow"
	ModeOff    = "off"
)

func ptr[T any](v T) *T { return &v }

// Config is every setting memrank has. The koanf tag of each field is its key
// in the YAML file; a field's full key joins the tags from the root with dots
// (scoring.weights.source). Fields tagged secret print as "***" in masked
// output and are never echoed in error messages.
//
// A Config holds maps and slices: copies of a Config share them, so treat a
// loaded Config as read-only.
type Config struct {
	Scoring     Scoring     `koanf:"scoring"`
	Rank        Rank        `koanf:"rank"`
	Dedup       Dedup       `koanf:"dedup"`
	Judge       Judge       `koanf:"judge"`
	Embedder    Embedder    `koanf:"embedder"`
	Upstream    Upstream    `koanf:"upstream"`
	Listen      Listen      `koanf:"listen"`
	Store       Store       `koanf:"store"`
	ReplicaID   string      `koanf:"replica_id"` // "" = the hostname, resolved by the caller
	Access      Access      `koanf:"access"`
	Tenancy     Tenancy     `koanf:"tenancy"`
	PayloadKeys PayloadKeys `koanf:"payload_keys"`
	Telemetry   Telemetry   `koanf:"telemetry"`
}

// Scoring holds every number of the confidence, decay and gating math
// (DESIGN section 4). The tables are plain maps and slices so the caller can
// build the scoring package's parameters from them directly.
type Scoring struct {
	Weights      Weights            `koanf:"weights"`
	SourceLevels map[string]float64 `koanf:"source_levels"` // source level name -> s
	TypePriors   map[string]float64 `koanf:"type_priors"`   // memory type -> t
	Extractor    Extractor          `koanf:"extractor"`
	Grounding    Grounding          `koanf:"grounding"`
	Confirm      Confirm            `koanf:"confirm"`
	Gates        Gates              `koanf:"gates"`
	// ConfidenceWeight is how much confidence scales the retrieval weight:
	// base x freshness x boost x (1 - w + w x confidence); 0 is the seeds'
	// formula (confidence only gates).
	ConfidenceWeight float64   `koanf:"confidence_weight"`
	Decay            Decay     `koanf:"decay"`
	Protected        Protected `koanf:"protected"`
	Tiers            Tiers     `koanf:"tiers"`
	Stats            Stats     `koanf:"stats"`
}

// Weights of the confidence formula (DESIGN 4.1); they must sum to 1.
type Weights struct {
	Source     float64 `koanf:"source"`
	Repetition float64 `koanf:"repetition"`
	Extractor  float64 `koanf:"extractor"`
	Type       float64 `koanf:"type"`
}

// Extractor maps an extractor model name to a quality e (DESIGN 4.4).
type Extractor struct {
	Unknown float64 `koanf:"unknown"` // quality of a model no pattern matches
	// Models are tried in order; the first pattern that matches the model
	// name, case-insensitively and anywhere in it, gives the quality. A list
	// given in a file or the environment replaces this list entirely.
	Models []ExtractorModel `koanf:"models"`
}

// ExtractorModel is one row of the extractor table. Pattern is a Go regexp
// without flags; Validate checks that it compiles.
type ExtractorModel struct {
	Pattern string  `koanf:"pattern" required:"true"`
	Quality float64 `koanf:"quality" required:"true"`
}

// Grounding penalties and their floor (DESIGN 4.6).
type Grounding struct {
	Partial float64 `koanf:"partial"`
	Unknown float64 `koanf:"unknown"`
	Floor   float64 `koanf:"floor"`
}

// Confirm is what an explicit confirmation does (DESIGN 4.7).
type Confirm struct {
	Source        float64 `koanf:"source"`         // s is raised to at least this
	MaxConfidence float64 `koanf:"max_confidence"` // confidence is clamped here
}

// Gates are the retrieval and render thresholds (DESIGN 4.12).
type Gates struct {
	Retrieval float64 `koanf:"retrieval"`
	Render    float64 `koanf:"render"`
}

// Decay holds the freshness half-lives in days (DESIGN 4.10, 4.13).
type Decay struct {
	DefaultHalfLife float64            `koanf:"default_half_life"`
	HalfLives       map[string]float64 `koanf:"half_lives"`      // decay category -> half-life in days
	TypeCategories  map[string]string  `koanf:"type_categories"` // memory type -> decay category
	FloorK          float64            `koanf:"floor_k"`         // slope k of the decay floor
}

// Protected says which memories never drop out by decay (DESIGN 4.13).
type Protected struct {
	MinConfidence   float64 `koanf:"min_confidence"`
	MinObservations int     `koanf:"min_observations"`
}

// Tiers are the lower bounds of c x f for each maintenance tier (DESIGN 4.14).
type Tiers struct {
	Active  float64 `koanf:"active"`
	Dormant float64 `koanf:"dormant"`
	Stale   float64 `koanf:"stale"`
}

// Stats are the confidence buckets of the stats endpoint (DESIGN 4.14).
type Stats struct {
	High   float64 `koanf:"high"`
	Medium float64 `koanf:"medium"`
}

// Rank configures the read path (DESIGN section 5).
type Rank struct {
	Oversample    int `koanf:"oversample"`
	MaxCandidates int `koanf:"max_candidates"` // cap on (offset+limit) x oversample
	// Mode is how collections are served unless listed in Collections:
	// auto (memory collections, recognised from their payloads or audit
	// companion, are re-ranked; every other collection is served exactly as
	// the store serves it), rerank, shadow or off.
	Mode        string                    `koanf:"mode"`
	Collections map[string]RankCollection `koanf:"collections"` // per collection, by name
	// Guard is the relevance guard; EmbedderGuards change it for the
	// collections whose audit companion records that embedder model (an
	// exact name, or the name before ":dimensions").
	Guard          Guard                 `koanf:"guard"`
	EmbedderGuards map[string]GuardPatch `koanf:"embedder_guards"`
	Detect         RankDetect            `koanf:"detect"`
	Shadow         RankShadow            `koanf:"shadow"`
}

// RankCollection is one collection's read-path setting.
type RankCollection struct {
	Mode  string     `koanf:"mode"`  // rerank | shadow | off; auto (or empty) = rank.mode
	Guard GuardPatch `koanf:"guard"` // the keys given replace rank.guard's for this collection
}

// Guard is the relevance guard: freshness, confidence and the access boost
// re-order only the candidates whose similarity is within Band of the best
// one and at least Floor (for fusion, formula and sparse scores, within
// RelativeBand of the best, as a fraction).
type Guard struct {
	Enabled      bool    `koanf:"enabled"`
	Band         float64 `koanf:"band"`
	Floor        float64 `koanf:"floor"`
	RelativeBand float64 `koanf:"relative_band"`
}

// GuardPatch changes some keys of rank.guard; a key not given (null) keeps
// rank.guard's value.
type GuardPatch struct {
	Enabled      *bool    `koanf:"enabled"`
	Band         *float64 `koanf:"band"`
	Floor        *float64 `koanf:"floor"`
	RelativeBand *float64 `koanf:"relative_band"`
}

// Apply returns g with the keys p gives replaced.
func (p GuardPatch) Apply(g Guard) Guard {
	if p.Enabled != nil {
		g.Enabled = *p.Enabled
	}
	if p.Band != nil {
		g.Band = *p.Band
	}
	if p.Floor != nil {
		g.Floor = *p.Floor
	}
	if p.RelativeBand != nil {
		g.RelativeBand = *p.RelativeBand
	}
	return g
}

// IsZero reports a patch that changes nothing.
func (p GuardPatch) IsZero() bool {
	return p.Enabled == nil && p.Band == nil && p.Floor == nil && p.RelativeBand == nil
}

// RankDetect configures how memory collections are recognised.
type RankDetect struct {
	SampleSize int           `koanf:"sample_size"` // points sampled from a collection without an audit companion
	TTL        time.Duration `koanf:"ttl"`         // how long a verdict is kept
}

// RankShadow configures shadow mode.
type RankShadow struct {
	SampleRate  float64       `koanf:"sample_rate"`  // share of queries also ranked by memrank
	LogInterval time.Duration `koanf:"log_interval"` // least time between two logged comparisons
}

// Dedup configures the write path's duplicate tiers and independence rule
// (DESIGN section 6).
type Dedup struct {
	SameThreshold        float64       `koanf:"same_threshold"`
	JudgeThreshold       float64       `koanf:"judge_threshold"` // the judge band is [JudgeThreshold, SameThreshold)
	RequireSurfaceChange bool          `koanf:"require_surface_change"`
	MinIndependentGap    time.Duration `koanf:"min_independent_gap"`
}

// Judge configures the LLM judge of dedup tier 3.
type Judge struct {
	Enabled        bool          `koanf:"enabled"`
	BaseURL        string        `koanf:"base_url"` // "" = OpenAI's API
	Model          string        `koanf:"model"`
	APIKey         string        `koanf:"api_key" secret:"true"`
	Timeout        time.Duration `koanf:"timeout"`
	CallsPerMinute int           `koanf:"calls_per_minute"` // 0 = no limit
	CacheSize      int           `koanf:"cache_size"`       // verdicts kept; 0 = no cache
}

// Embedder driver names.
const (
	DriverLocal  = "local"
	DriverOpenAI = "openai"
)

// Embedder configures how texts become vectors.
type Embedder struct {
	Driver     string `koanf:"driver"`   // DriverLocal or DriverOpenAI
	BaseURL    string `koanf:"base_url"` // openai driver; "" = OpenAI's API
	Model      string `koanf:"model"`
	APIKey     string `koanf:"api_key" secret:"true"`
	Dimensions int    `koanf:"dimensions"`
	// SendDimensions sends dimensions in each embeddings request (models
	// that can shorten their vectors, like text-embedding-3-*); off, the
	// model's own size must equal Dimensions.
	SendDimensions bool          `koanf:"send_dimensions"`
	Timeout        time.Duration `koanf:"timeout"`
	BatchSize      int           `koanf:"batch_size"`
	CacheSize      int           `koanf:"cache_size"` // embeddings kept; 0 = no cache
}

// Upstream is the Qdrant memrank fronts.
type Upstream struct {
	GRPC    string        `koanf:"grpc"` // host:port of Qdrant gRPC; "" = the embedded store
	REST    string        `koanf:"rest"` // Qdrant REST base URL for routes memrank does not translate
	APIKey  string        `koanf:"api_key" secret:"true"`
	Timeout time.Duration `koanf:"timeout"`
}

// Listen holds the addresses memrank serves on.
type Listen struct {
	HTTP string `koanf:"http"`
	GRPC string `koanf:"grpc"`
}

// Store configures the embedded store.
type Store struct {
	DataDir string `koanf:"data_dir"`
}

// Access configures the access recorder (DESIGN section 5).
type Access struct {
	FlushInterval time.Duration `koanf:"flush_interval"`
	MaxPending    int           `koanf:"max_pending"` // distinct ids coalesced before increments are dropped
}

// Tenancy scopes every request to a tenant (DESIGN 5.1). It is off while Key
// is empty; when on, exactly one of Header and APIKeys says where a request's
// tenant comes from.
type Tenancy struct {
	Key     string            `koanf:"key"`                    // payload key holding the tenant
	Header  string            `koanf:"header"`                 // request header carrying the tenant
	APIKeys map[string]string `koanf:"api_keys" secret:"keys"` // API key -> tenant; the API keys are secrets
}

// PayloadKeys names the payload key of every field of the memory record
// (DESIGN section 3), so an existing collection can be served as it is.
type PayloadKeys struct {
	Text             string `koanf:"text"`
	MemoryType       string `koanf:"memory_type"`
	Source           string `koanf:"source"`
	ExtractorModel   string `koanf:"extractor_model"`
	ExtractorLogprob string `koanf:"extractor_logprob"`
	Grounding        string `koanf:"grounding"`
	Observations     string `koanf:"observations"`
	Confidence       string `koanf:"confidence"`
	DecayCategory    string `koanf:"decay_category"`
	CreatedAt        string `koanf:"created_at"`
	LastObservedAt   string `koanf:"last_observed_at"`
	LastAccessedAt   string `koanf:"last_accessed_at"`
	AccessCounts     string `koanf:"access_counts"`
	SessionIDs       string `koanf:"session_ids"`
	TurnIDs          string `koanf:"turn_ids"`
	Entities         string `koanf:"entities"`
	TextHash         string `koanf:"text_hash"`
	Retrievable      string `koanf:"retrievable"`
	Tier             string `koanf:"tier"`
	SupersededBy     string `koanf:"superseded_by"`
	Corroborations   string `koanf:"corroborations"`
	Contradictions   string `koanf:"contradictions"`
	Modalities       string `koanf:"modalities"`
	MemrankSchema    string `koanf:"memrank_schema"`
}

// Log levels and formats.
const (
	LogDebug = "debug"
	LogInfo  = "info"
	LogWarn  = "warn"
	LogError = "error"

	LogJSON = "json"
	LogText = "text"
)

// Telemetry configures logs, traces and metrics (DESIGN section 8).
type Telemetry struct {
	ServiceName  string `koanf:"service_name"`
	LogLevel     string `koanf:"log_level"`     // debug | info | warn | error
	LogFormat    string `koanf:"log_format"`    // json | text
	OTLPEndpoint string `koanf:"otlp_endpoint"` // "" = no OTLP export
}

// EnvDefaults are the variables of other programs that fill memrank's keys
// when nothing else sets them: the OpenTelemetry SDK's standard endpoint.
func EnvDefaults() map[string]string {
	return map[string]string{"telemetry.otlp_endpoint": "OTEL_EXPORTER_OTLP_ENDPOINT"}
}

// Default returns memrank's defaults: the seeds' values (DESIGN section 4).
// Every call returns fresh maps and slices.
func Default() Config {
	return Config{
		Scoring: Scoring{
			Weights: Weights{Source: 0.45, Repetition: 0.20, Extractor: 0.25, Type: 0.10},
			SourceLevels: map[string]float64{
				"direct":           0.95,
				"confirmed":        0.80,
				"strong_inference": 0.70,
				"weak_inference":   0.50,
				"speculation":      0.30,
			},
			TypePriors: map[string]float64{
				"entity":     0.90,
				"event":      0.85,
				"fact":       0.80,
				"preference": 0.75,
				"relation":   0.70,
			},
			Extractor: Extractor{
				Unknown: 0.65,
				Models: []ExtractorModel{
					{Pattern: `claude.*(sonnet|opus)`, Quality: 0.90},
					{Pattern: `gpt-?4|gpt-?5|\bo[134]\b`, Quality: 0.85},
					{Pattern: `claude.*haiku`, Quality: 0.80},
					{Pattern: `gpt-?3\.5`, Quality: 0.65},
				},
			},
			Grounding: Grounding{Partial: 0.15, Unknown: 0.10, Floor: 0.30},
			Confirm:   Confirm{Source: 0.80, MaxConfidence: 0.99},
			Gates:     Gates{Retrieval: 0.50, Render: 0.40},
			Decay: Decay{
				DefaultHalfLife: 90,
				HalfLives: map[string]float64{
					"preference":     365,
					"relationship":   180,
					"contact":        180,
					"technical":      120,
					"opinion":        90,
					"price":          60,
					"project_status": 30,
				},
				TypeCategories: map[string]string{},
				FloorK:         1.25,
			},
			Protected: Protected{MinConfidence: 0.80, MinObservations: 3},
			Tiers:     Tiers{Active: 0.60, Dormant: 0.30, Stale: 0.10},
			Stats:     Stats{High: 0.80, Medium: 0.50},
		},
		Rank: Rank{
			Oversample: 4, MaxCandidates: 1000,
			Mode:        ModeAuto,
			Collections: map[string]RankCollection{},
			// Chosen with `memrank eval` on the training split of the shipped
			// set (examples/eval): the widest band that lifts no irrelevant
			// memory over a relevant one, the highest floor that loses no
			// read of a relevant memory.
			Guard: Guard{Enabled: true, Band: 0.015, Floor: 0.50, RelativeBand: 0.025},
			// The local embedder is lexical: a question and its answer share a
			// few words (0.2 to 0.4), unrelated texts score near 0 (95% below
			// 0.15). Set from the demo's similarities, not from a labeled set.
			EmbedderGuards: map[string]GuardPatch{"memrank-local-hash-v1": {Band: ptr(0.15), Floor: ptr(0.15)}},
			Detect:         RankDetect{SampleSize: 32, TTL: time.Minute},
			Shadow:         RankShadow{SampleRate: 1, LogInterval: 10 * time.Second},
		},
		Dedup: Dedup{
			SameThreshold:        0.92,
			JudgeThreshold:       0.80,
			RequireSurfaceChange: true,
			MinIndependentGap:    time.Hour,
		},
		Judge: Judge{Timeout: 5 * time.Second, CallsPerMinute: 60, CacheSize: 10000},
		Embedder: Embedder{
			Driver:     DriverLocal,
			Dimensions: 384,
			Timeout:    10 * time.Second,
			BatchSize:  64,
			CacheSize:  10000,
		},
		Upstream: Upstream{Timeout: 10 * time.Second},
		Listen:   Listen{HTTP: ":6333", GRPC: ":6334"},
		Store:    Store{DataDir: "./memrank-data"},
		Access:   Access{FlushInterval: 2 * time.Second, MaxPending: 100000},
		Tenancy:  Tenancy{APIKeys: map[string]string{}},
		PayloadKeys: PayloadKeys{
			Text:             "text",
			MemoryType:       "memory_type",
			Source:           "source",
			ExtractorModel:   "extractor_model",
			ExtractorLogprob: "extractor_logprob",
			Grounding:        "grounding",
			Observations:     "observations",
			Confidence:       "confidence",
			DecayCategory:    "decay_category",
			CreatedAt:        "created_at",
			LastObservedAt:   "last_observed_at",
			LastAccessedAt:   "last_accessed_at",
			AccessCounts:     "access_counts",
			SessionIDs:       "session_ids",
			TurnIDs:          "turn_ids",
			Entities:         "entities",
			TextHash:         "text_hash",
			Retrievable:      "retrievable",
			Tier:             "tier",
			SupersededBy:     "superseded_by",
			Corroborations:   "corroborations",
			Contradictions:   "contradictions",
			Modalities:       "modalities",
			MemrankSchema:    "memrank_schema",
		},
		Telemetry: Telemetry{ServiceName: "memrank", LogLevel: LogInfo, LogFormat: LogJSON},
	}
}
