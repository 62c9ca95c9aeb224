// The requests and answers of memrank's native API, field for field. Field
// names are the API's own (snake_case), as docs/write-path.md,
// docs/read-path.md and docs/forgetting.md write them, so that what the docs
// say applies here word for word; only the client's own options are
// camelCase.

/**
 * A point id as Qdrant writes it: an unsigned integer or a UUID string. The
 * write path's memories always have UUIDs. Integers above 2^53 lose
 * precision in JavaScript numbers: give such points UUIDs.
 */
export type PointId = number | string;

/** A memory type; levels added in `scoring.type_priors` are accepted too. */
export type MemoryType = "entity" | "event" | "fact" | "preference" | "relation" | (string & {});

/** How a memory was learned; levels added in `scoring.source_levels` are accepted too. */
export type Source = "direct" | "confirmed" | "strong_inference" | "weak_inference" | "speculation" | (string & {});

/** How well the source supports the text. `not_supported` is rejected, not stored. */
export type Grounding = "supported" | "partial" | "unknown" | "not_supported";

/** Who asserts the claim: `reported` (or `hearsay`) caps its source. */
export type Attribution = "self" | "reported" | "hearsay";

/** What the write path decided. */
export type Decision =
  | "inserted"
  | "restatement"
  | "independent"
  | "contradiction"
  | "rejected"
  | "confirmed"
  | "corrected"
  | "used";

/** An RFC 3339 time, or a Date (sent as its ISO string). */
export type Time = string | Date;

/** A query or embedding vector. */
export type Vector = readonly number[] | Float32Array | Float64Array;

/**
 * The optional fields of an observation (POST /v1/observe), beside its
 * collection and text. Decoding is strict on the server: an unknown field
 * or a wrong type is a BadRequestError naming it.
 */
export interface ObserveFields {
  /** Default `fact`. */
  memory_type?: MemoryType;
  /** Default `weak_inference` (`direct` for a correction). */
  source?: Source;
  extractor_model?: string;
  /** The extractor's mean token log-probability, at most 0. */
  extractor_logprob?: number;
  /** Default `supported`. */
  grounding?: Grounding;
  /** Needed for a re-observation to count as independent. */
  session_id?: string;
  turn_id?: string;
  /** Default: now. */
  observed_at?: Time;
  /** chat, calendar, email, document, ... */
  modality?: string;
  /** At most 64. */
  entities?: readonly string[];
  decay_category?: string;
  /** The caller's embedding of the text; without it memrank embeds the text. */
  vector?: Vector;
  /** Idempotency key: a retry with the same id is answered from the first (`replayed: true`). */
  observation_id?: string;
  /** This observation corrects that memory (as {@link MemrankClient.correct} does). */
  corrects?: PointId;
  attribution?: Attribution;
  /**
   * Who said the text (a name): the subject of a first-person statement, so
   * two people's statements never fold together and the same words from two
   * speakers stay two memories. Not blank; at most as long as an entity.
   * Left out, a leading "Name:" of the text names the speaker. Stored as the
   * payload's `speaker`.
   */
  speaker?: string;
}

/** The optional fields of a confirmation or a use (POST /v1/memories/{id}/confirm, .../used). */
export interface EventFields {
  /** Idempotency key. */
  observation_id?: string;
  session_id?: string;
  turn_id?: string;
  /** Default: now. */
  at?: Time;
}

/** The judge's part in a decision; null in an outcome when it was not needed. */
export interface JudgeInfo {
  /** `same`, `different`, `contradicts`; "" when no verdict was used. */
  verdict: "same" | "different" | "contradicts" | "";
  cached: boolean;
  reason?: string;
  /** Why no verdict could be used: the tier-2 decision was taken instead. */
  fallback?: "disabled" | "budget" | "timeout" | "error" | "unparsable" | "paused";
}

/** The note of a hearsay observation. */
export interface AttributionInfo {
  attribution: string;
  /** Who decided it was hearsay. */
  from: "extractor" | "heuristic";
  /** The phrase the heuristic found. */
  cue?: string;
  /** The source was lowered to the cap. */
  capped: boolean;
  /** The source level given, when it was capped. */
  source?: string;
}

/** The write path's answer to an observation, confirmation, correction or use. */
export interface Outcome {
  decision: Decision;
  /** The memory the observation ended up in. */
  memory_id: string;
  /** That memory's stored confidence afterwards (null: not a finite number). */
  confidence: number | null;
  /** Its n (independent re-observations) afterwards. */
  observations: number;
  /** The dedup tier that found the match: 1 text hash, 2 vector, 3 judge; 0 none (and confirm, correct by id). */
  dedup_tier: number;
  judge: JudgeInfo | null;
  /** The memory a contradiction or correction superseded. */
  superseded?: string;
  /** Stored memories merged into memory_id. */
  merged?: string[];
  /** Why an observation was rejected, or another note. */
  reason?: string;
  /** Present for hearsay. */
  attribution?: AttributionInfo;
  /** Review marks this decision set (`recurring_event`). */
  flags?: string[];
  /** The memory's use count after a `used` decision. */
  uses?: number;
  /** The observation_id had been seen: the earlier outcome, nothing changed. */
  replayed: boolean;
  /**
   * Present and true on a confirmation whose session had already confirmed the memory (or,
   * without a session_id, when one without a session had): observations unchanged.
   */
  already_counted?: boolean;
  /** Present and true when this observation created the collection. */
  created_collection?: boolean;
  /**
   * What the caller may not expect of the stored memory, e.g. that its confidence is below
   * the retrieval gate (a text observed without its source, `weak_inference` by default): it
   * then comes back only as the best match of a question, flagged `below_gate`.
   */
  warnings?: string[];
}

/** One id's part of a batch use (POST /v1/memories/used). */
export interface UsedResult {
  memory_id: string;
  /** Absent when the memory was not found. */
  outcome?: Outcome;
  /** `not_found`: no such memory in the tenant; the other ids were still recorded. */
  error?: "not_found";
}

/**
 * A Qdrant REST filter (must, should, must_not, min_should), passed on as
 * it is. See Qdrant's filtering documentation.
 */
export interface Filter {
  must?: Condition | Condition[];
  should?: Condition | Condition[];
  must_not?: Condition | Condition[];
  min_should?: { conditions: Condition[]; min_count: number };
}

/** A filter condition (a field match or range, has_id, is_empty, is_null, nested, or a filter). */
export type Condition = Filter | { [key: string]: unknown };

/** The options of a retrieve, beside its collection and query. */
export interface RetrieveOptions {
  /** 1 to 1000, default 10. */
  limit?: number;
  /** Default 0, at most 100000. */
  offset?: number;
  filter?: Filter;
  /** The named vector to search. */
  using?: string;
  /** On the similarity, as Qdrant applies it. */
  score_threshold?: number;
  /** Default true: every factor of every score (`explanation`). */
  explain?: boolean;
  /**
   * Default true. False reads without counting the results as accessed: for a person or a
   * tool inspecting a ranking, whose looking must not raise the access boost of what it sees.
   */
  count_access?: boolean;
  /** Default true; or the payload keys to include. */
  with_payload?: boolean | readonly string[] | { include?: readonly string[]; exclude?: readonly string[] };
  /** `off`: the store's own answer; `auto`: the collection's mode (default). */
  mode?: "auto" | "off";
  /**
   * The memories a person or a review archived too, marked `archived` (`retrievable` false);
   * superseded ones stay out. Age alone never takes a memory out of an answer.
   */
  include_archived?: boolean;
  /**
   * The answer as of this time (an RFC 3339 string, or a Date sent as its ISO string in UTC):
   * freshness and tiers computed then, memories first observed later left out, supersessions
   * recorded later not yet applied, nothing counted as an access. Access counts and confidence
   * stay today's. The answer's `at` echoes it.
   */
  at?: Time;
}

/**
 * A memory's payload as stored. The keys listed are memrank's default
 * payload keys (docs/memory-record.md); a deployment may rename them, and
 * points written by other tools may carry anything, so every key is
 * optional and others are allowed.
 */
export interface MemoryPayload {
  text?: string;
  memory_type?: string;
  source?: string;
  extractor_model?: string;
  extractor_logprob?: number;
  grounding?: string;
  observations?: number;
  confidence?: number;
  decay_category?: string;
  created_at?: string;
  last_observed_at?: string;
  last_accessed_at?: string;
  access_counts?: Record<string, number>;
  session_ids?: string[];
  turn_ids?: string[];
  entities?: string[];
  text_hash?: string;
  retrievable?: boolean;
  tier?: string;
  superseded_by?: PointId;
  corroborations?: number;
  contradictions?: number;
  modalities?: string[];
  memrank_schema?: number;
  attribution?: string;
  uses?: number;
  last_used_at?: string;
  flags?: string[];
  /** Who said it, when the observation named a speaker. */
  speaker?: string;
  [key: string]: unknown;
}

/**
 * Every factor behind a score (docs/scoring.md). For an unscored point (a
 * foreign one) the confidence factors, `source` to `confidence`, are null.
 * Every other number is null when it is not finite (JSON has no infinity):
 * `days_to_archive` is null for a memory whose tier decay never turns
 * archived.
 *
 * weight = base × freshness_factor × access_boost × confidence_factor, where
 * freshness_factor = 1 − freshness_weight × focus × (1 − freshness) and
 * access_boost = 1 + access_weight × r(access_count): bounded factors that
 * reorder memories of similar relevance and never take one out of an answer.
 */
export interface Explanation {
  unscored: boolean;
  source: number | null;
  observations: number;
  repetition: number | null;
  extractor: number | null;
  type: number | null;
  grounding: string;
  formula: number | null;
  grounding_penalty: number | null;
  computed: number | null;
  stored_confidence: boolean;
  computed_confidence: boolean;
  confidence: number | null;
  age_days: number | null;
  half_life: number | null;
  /** f = 0.5^(age / half-life). */
  freshness: number | null;
  /** The most age may take off a weight (`scoring.freshness_weight`). */
  freshness_weight: number | null;
  /** How much the query is about recent memories, 0 to 1. */
  focus: number | null;
  /** What age took off the weight: 1 − freshness_weight × focus × (1 − freshness). */
  freshness_factor: number | null;
  idle_days: number | null;
  decay_floor: number | null;
  /** Idle days until the tier label turns archived (null: never); an archived tier stays in answers. */
  days_to_archive: number | null;
  access_count: number;
  /** The most reads may add to a weight (`scoring.access_weight`). */
  access_weight: number | null;
  access_boost: number | null;
  confidence_weight: number | null;
  confidence_factor: number | null;
  base: number | null;
  weight: number | null;
  /** The memory has not crossed its decay floor (or is protected). */
  within_decay_floor: boolean;
  protected: boolean;
  tier: string;
  bucket: string | null;
  below_gate: boolean;
  render: boolean;
}

/** One retrieved memory with the factors of its score. The factors are null when the answer was passed through (`reranked` false). */
export interface RetrievedMemory {
  id: PointId;
  /** The weight memrank ranked it by (Qdrant's score when passed through). Null: not finite. */
  score: number | null;
  /** The similarity. */
  base_score: number | null;
  weight: number | null;
  /** The relevance guard's decision (`relevant` results are counted as read); null when passed through. */
  guard: "relevant" | "below_band" | "below_floor" | "off" | null;
  /** Null for an unscored point. */
  confidence: number | null;
  /** f = 0.5^(age / half-life). */
  freshness: number | null;
  /** What age took off the weight for this query. */
  freshness_factor: number | null;
  access_count: number | null;
  access_boost: number | null;
  render: boolean;
  /** Below the confidence gate, returned as the best match of the question. */
  below_gate: boolean;
  /** The tier as of the answer's clock (`at`, else now): active, dormant, stale, archived. */
  tier: string | null;
  /** The tier the payload holds, as the last consolidation wrote it; null when none. */
  stored_tier: string | null;
  /** The confidence bucket: high, medium, low; null for an unscored point. */
  bucket: string | null;
  /** False only for an archived memory returned because `include_archived` asked for it. */
  retrievable: boolean;
  protected: boolean;
  /** Duplicates folded into this result. */
  folded_ids: PointId[];
  /** How duplicates were folded: text_hash, vector, judge_cache; null: none. */
  dedup: string | null;
  judge_consulted: boolean;
  /** What was wrong with the payload (a missing or unreadable field and the default used). */
  problems: string[];
  /** Why an archived memory is in the answer (only with include_archived). */
  archived?: string;
  payload?: MemoryPayload;
  /** With explain (the default). */
  explanation?: Explanation;
}

/**
 * The relevance band of a re-ranked answer: results whose similarity is at
 * least `cutoff` are relevant and counted as read. Every result is ordered by
 * its weight.
 */
export interface GuardReport {
  applied: boolean;
  relative: boolean;
  /** The numbers are null when not finite. */
  best: number | null;
  cutoff: number | null;
  band: number | null;
  floor: number | null;
  relative_band: number | null;
  /** default, embedder <model>, collection */
  from: string;
  /** Returned results inside the band. */
  relevant: number;
  /** Returned results outside it. */
  beyond: number;
  /** Relevant candidates folded into the returned results. */
  folded: number;
  /** The query's focus on recent memories, 0 to 1. */
  focus: number | null;
}

/** The collection's recorded embedder and its dedup bands (null: the configured ones apply). */
export interface EmbedderReport {
  model: string;
  same_threshold: number | null;
  judge_threshold: number | null;
}

/** Shadow mode's comparison of the store's answer with memrank's. */
export interface ShadowReport {
  store: PointId[];
  memrank: PointId[];
  overlap: number | null;
  top_changed: boolean;
  moved: number;
  dropped: number;
}

/** A candidate left out of a re-ranked answer. */
export interface DroppedCandidate {
  id: PointId;
  /** superseded, not_retrievable, archived, below_gate, folded */
  reason: string;
  /** The result it was folded into. */
  into?: PointId;
  base_score: number | null;
}

/** The answer of a retrieve (POST /v1/retrieve without its envelope). */
export interface Retrieval {
  /** The answer's `result`: the memories, best first. */
  results: RetrievedMemory[];
  /** False when the collection was passed through (pass_through says why; scores are then Qdrant's). */
  reranked: boolean;
  pass_through?: string;
  /** How the collection was served: rerank, shadow or off. */
  mode: string;
  /** The rule that decided the mode ("" with tenancy on). */
  detection: string;
  embedder?: EmbedderReport;
  guard: GuardReport | null;
  shadow?: ShadowReport;
  /** Null when the answer was not re-ranked. */
  dropped: DroppedCandidate[] | null;
  /** The time the answer was computed as of (RFC 3339), when `at` asked for one. */
  at?: string;
  /** Why a re-ranked answer is empty although the store had candidates. */
  empty?: string;
}

/** One confidence change of a memory, from its audit companion. */
export interface AuditRecord {
  memory_id: string;
  observation_id: string;
  /** insert, restatement, independent, merge, confirm, correct, contradiction, superseded, corroboration, used, backfill, tier, archive, forget, delete */
  reason: string;
  old: number | null;
  new: number | null;
  old_n: number;
  new_n: number;
  /** RFC 3339, UTC; "" when unknown. */
  at: string;
  session_id: string;
  turn_id: string;
  /** The observation's source strength, extractor quality and type prior. */
  source: number | null;
  extractor: number | null;
  type: number | null;
  grounding: string;
  decision: string;
  /** The other memory of a merge, contradiction or corroboration. */
  related?: string;
  /** The record's session was forgotten, or its memory deleted. */
  forgotten?: boolean;
  attribution?: string;
  attribution_from?: string;
  /** What an evidence rule did (a hearsay cap, a flag, a penalty, the use count). */
  note?: string;
  old_tier?: string;
  new_tier?: string;
}

/** A stored memory and its audit trail, oldest first (GET /v1/memories/{id}). */
export interface MemoryHistory {
  id: string;
  collection: string;
  payload: MemoryPayload;
  audit: AuditRecord[];
}

/** The judge's work in the answering process. */
export interface JudgeStats {
  calls: number;
  cache_hits: number;
  cache_misses: number;
  fallbacks: number;
  /** Null before the first look-up. */
  cache_hit_rate: number | null;
}

/** GET /v1/stats: a collection's memories (the tenant's part with tenancy on). */
export interface Stats {
  collection: string;
  /** `counted` (payload indexes) or `scanned` (exact). */
  method: "counted" | "scanned";
  /** Memories answers draw from: neither superseded nor archived. */
  memories: number;
  /** Memories a person or a review archived (out of answers); `tiers.archived` counts the archived tier label, which answers still return. */
  archived: number;
  superseded: number;
  /** Null when nothing is scored. */
  average_confidence: number | null;
  /** high, medium, low, unscored */
  buckets: Record<string, number>;
  /** Ten counts of confidence: [0, 0.1), ..., [0.9, 1]. */
  histogram: number[];
  /** active, dormant, stale, archived */
  tiers: Record<string, number>;
  /** When the tiers were computed; null: never consolidated. */
  tiers_as_of: string | null;
  types: Record<string, number>;
  /** The server process's write decisions in this collection since it started (empty with tenancy on). */
  decisions: Record<string, number>;
  /** The server process's judge use, across every collection (zero with tenancy on). */
  judge: JudgeStats;
}

/** The options of stats. */
export interface StatsOptions {
  /** Score every memory at the server's clock instead of counting from indexes (slow on large collections). */
  exact?: boolean;
}

/** What forgetting a session or deleting a memory changed. A repeated call answers every count 0. */
export interface ForgetReport {
  collection: string;
  memories_updated: number;
  memories_deleted: number;
  audit_redacted: number;
  audit_deleted: number;
  audit_kept: number;
  /** The `forget.audit` in force: redact, delete or keep. */
  audit_policy: string;
}

/** What createCollection made, or found (PUT /v1/collections/{name}). */
export interface CreatedCollection {
  collection: string;
  /** This call made the collection. */
  created: boolean;
  /** It was a memory collection already, kept as it is. */
  existed: boolean;
  /** The embedder the collection records (e.g. `memrank-local-sem-v1:384`). */
  model: string;
  /** Its vectors' size. */
  dimensions: number;
  /** `Cosine`. */
  distance: string;
  /** Its audit companion (`<collection>_memrank_audit`). */
  audit_collection: string;
}

/** The options of embed, beside its texts (POST /v1/embeddings). */
export interface EmbedOptions {
  /**
   * The configured embedder's name (the default), with or without its size, or a built-in
   * model: `memrank-local-sem-v1:N`, `memrank-local-hash-v1:N`, or either bare name at
   * `dimensions` (else 384). Another is a NotFoundError.
   */
  model?: string;
  /** The model's size; the server never shortens a vector, so another size is a BadRequestError. */
  dimensions?: number;
}
