// The client: one method per route of memrank's native API, each one HTTP
// call with a deadline, answered with the envelope's result or a typed
// error. Nothing is retried: a write with an observation_id is safe to
// retry, one without is counted again, and only the caller knows which it
// sent.

import { BadRequestError, ConnectionError, MemrankError, errorForStatus } from "./errors.js";
import type {
  CreatedCollection,
  EmbedOptions,
  EventFields,
  ForgetReport,
  MemoryHistory,
  ObserveFields,
  Outcome,
  PointId,
  Retrieval,
  RetrieveOptions,
  Stats,
  StatsOptions,
  UsedResult,
  Vector,
} from "./types.js";

/** Where memrank listens when no baseUrl is given: `memrank serve`'s default. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:6333";

/** How long one call may take, from the request to the last byte of the answer, when no timeoutMs is given. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The most of an answer that is read: a retrieve of 1,000 explained results
 * with payloads fits many times over, and a server that never stops sending
 * does not exhaust memory. The Go and Python clients stop there too.
 */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** How a client reaches memrank. Every field is optional. */
export interface ClientOptions {
  /** memrank's HTTP address, with a path prefix if a gateway adds one. Default http://127.0.0.1:6333. */
  baseUrl?: string;
  /** Sent as the `api-key` header (a tenant's key with tenancy on). */
  apiKey?: string;
  /** Sent as `Authorization: Bearer <token>` (an API key or a JWT). */
  bearerToken?: string;
  /** For deployments that take the tenant from a trusted header (`tenancy.header`): its name and value. */
  tenantHeader?: { name: string; value: string };
  /** Per call, default 30000. */
  timeoutMs?: number;
  /** Sent with every request (the client's own headers win on a clash). */
  headers?: Record<string, string>;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
}

/** Options of one call. */
export interface RequestOptions {
  /** Aborts the call; the abort's reason is thrown as it is. */
  signal?: AbortSignal;
  /** Replaces the client's timeout for this call. */
  timeoutMs?: number;
}

type Method = "GET" | "POST" | "PUT" | "DELETE";

/**
 * A client of memrank's native API. It holds no connection state of its
 * own (fetch pools connections), so one client can serve a whole process.
 *
 * ```ts
 * const mr = new MemrankClient({ apiKey: process.env.MEMRANK_API_KEY });
 * const { memory_id } = await mr.observe("notes", "Dana uses Neovim", { source: "direct" });
 * const { results } = await mr.retrieve("notes", "what editor does Dana use");
 * ```
 */
export class MemrankClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  // Private, so that credentials never show in console.log(client) or
  // JSON.stringify(client).
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = checkBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL);
    this.timeoutMs = checkTimeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, "timeoutMs");
    // Lower-cased, so that a caller's "API-Key" cannot travel beside ours.
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      headers[name.toLowerCase()] = value;
    }
    headers["accept"] = "application/json";
    if (options.apiKey !== undefined) {
      headers["api-key"] = options.apiKey;
    }
    if (options.bearerToken !== undefined) {
      headers["authorization"] = `Bearer ${options.bearerToken}`;
    }
    if (options.tenantHeader !== undefined) {
      headers[options.tenantHeader.name.toLowerCase()] = options.tenantHeader.value;
    }
    this.#headers = headers;
    const f = options.fetch ?? globalThis.fetch;
    if (typeof f !== "function") {
      throw new TypeError("memrank: no fetch: use Node 20 or later, or pass options.fetch");
    }
    this.#fetch = f;
  }

  /**
   * Sends an observation (POST /v1/observe) and answers the write path's
   * decision: inserted, restatement, independent, contradiction or
   * rejected. A rejection is an outcome, not an error. The collection is
   * created on its first observation (`created_collection`).
   */
  observe(collection: string, text: string, fields: ObserveFields = {}, options?: RequestOptions): Promise<Outcome> {
    return this.#call("POST", "/v1/observe", observeBody(collection, text, fields), options);
  }

  /**
   * Runs a query through the ranker (POST /v1/retrieve): a text, embedded
   * with the collection's embedder, or a vector. With explain (the
   * default) each result carries every factor of its score. `at` asks for
   * the answer as of that time.
   */
  async retrieve(collection: string, query: string | Vector, opts: RetrieveOptions = {}, options?: RequestOptions): Promise<Retrieval> {
    const body: Record<string, unknown> = { ...opts, collection };
    if (opts.at instanceof Date) {
      body["at"] = opts.at.toISOString();
    }
    if (typeof query === "string") {
      body["text"] = query;
    } else {
      body["vector"] = Array.from(query);
    }
    const { result, status: _status, time: _time, ...rest } = await this.#request("POST", "/v1/retrieve", body, options);
    return { results: result, ...rest } as Retrieval;
  }

  /**
   * Confirms a memory (POST /v1/memories/{id}/confirm): its source rises to
   * at least `confirmed`, n by one, and the confidence never falls.
   */
  async confirm(collection: string, id: PointId, fields: EventFields = {}, options?: RequestOptions): Promise<Outcome> {
    return this.#call("POST", memoryPath(id, "/confirm"), eventBody(collection, fields), options);
  }

  /**
   * Stores text as the correction of memory id (POST
   * /v1/memories/{id}/correct): the corrected memory is superseded by it
   * whatever the confidences (`superseded` names it). `source` defaults to
   * `direct`.
   */
  async correct(collection: string, id: PointId, text: string, fields: Omit<ObserveFields, "corrects"> = {}, options?: RequestOptions): Promise<Outcome> {
    return this.#call("POST", memoryPath(id, "/correct"), observeBody(collection, text, fields), options);
  }

  /**
   * Records that an answer used a memory (POST /v1/memories/{id}/used), or
   * several (POST /v1/memories/used, at most 100 ids: one result per
   * distinct id, an unknown one marked not_found).
   */
  used(collection: string, id: PointId, fields?: EventFields, options?: RequestOptions): Promise<Outcome>;
  used(collection: string, ids: readonly PointId[], fields?: EventFields, options?: RequestOptions): Promise<UsedResult[]>;
  async used(collection: string, ids: PointId | readonly PointId[], fields: EventFields = {}, options?: RequestOptions): Promise<Outcome | UsedResult[]> {
    if (isIdList(ids)) {
      return this.#call("POST", "/v1/memories/used", { ...eventBody(collection, fields), ids }, options);
    }
    return this.#call("POST", memoryPath(ids, "/used"), eventBody(collection, fields), options);
  }

  /**
   * Forgets everything one session contributed (DELETE /v1/sessions/{id}):
   * every memory is recomputed as if the session had never been observed,
   * memories only it supported are deleted (docs/forgetting.md).
   */
  async forgetSession(collection: string, sessionId: string, options?: RequestOptions): Promise<ForgetReport> {
    return this.#call("DELETE", `/v1/sessions/${idSegment(sessionId)}${query({ collection })}`, undefined, options);
  }

  /**
   * Deletes one memory and the duplicates merged into it (DELETE
   * /v1/memories/{id}). A memory that is not there is nothing to delete:
   * every count 0, no error.
   */
  async forgetMemory(collection: string, id: PointId, options?: RequestOptions): Promise<ForgetReport> {
    return this.#call("DELETE", memoryPath(id, query({ collection })), undefined, options);
  }

  /** A memory's stored payload and its audit trail, oldest first (GET /v1/memories/{id}). */
  async history(collection: string, id: PointId, options?: RequestOptions): Promise<MemoryHistory> {
    return this.#call("GET", memoryPath(id, query({ collection })), undefined, options);
  }

  /** Counts of a collection's memories by bucket, tier and type, and the server's write decisions in it (GET /v1/stats). */
  stats(collection: string, opts: StatsOptions = {}, options?: RequestOptions): Promise<Stats> {
    const q: Record<string, string> = { collection };
    if (opts.exact !== undefined) {
      q["exact"] = String(opts.exact);
    }
    return this.#call("GET", `/v1/stats${query(q)}`, undefined, options);
  }

  /**
   * Makes name a memory collection before anything is observed into it
   * (PUT /v1/collections/{name}), as its first observation would: the
   * collection at the server's embedder's size with cosine distance, its
   * payload indexes and its audit companion. An existing memory collection
   * is kept (`existed: true`, `created: false`); one of another vector size
   * is a ConflictError. With tenancy on it needs an administrator's key
   * (a tenant's is a ForbiddenError). A name that is empty, `.` or `..` is
   * refused with a BadRequestError before any request.
   */
  async createCollection(name: string, options?: RequestOptions): Promise<CreatedCollection> {
    if (name === "" || name === "." || name === "..") {
      throw new BadRequestError(400, `${JSON.stringify(name)} is not a collection name`);
    }
    return this.#call("PUT", `/v1/collections/${encodeURIComponent(name)}`, undefined, options);
  }

  /**
   * The server's embeddings of texts (POST /v1/embeddings, OpenAI's
   * embeddings API), one vector per text in order: exactly the float32
   * vectors /v1/observe stores for those texts. They travel in base64 (the
   * little-endian float32 bytes), so every value arrives exact. `model` is
   * the configured embedder's name (the default) or a built-in model
   * (`memrank-local-sem-v1:384`, `memrank-local-hash-v1` at `dimensions`);
   * an unknown one is a NotFoundError with the server's message.
   * `dimensions` must be the model's size: the server never shortens a
   * vector. At most 2048 texts a call, none empty.
   */
  async embed(texts: string | readonly string[], opts: EmbedOptions = {}, options?: RequestOptions): Promise<number[][]> {
    const input = typeof texts === "string" ? [texts] : Array.from(texts);
    const body: Record<string, unknown> = { input, encoding_format: "base64" };
    if (opts.model !== undefined) {
      body["model"] = opts.model;
    }
    if (opts.dimensions !== undefined) {
      body["dimensions"] = opts.dimensions;
    }
    const answer = await this.#request("POST", "/v1/embeddings", body, options, openAIAnswer);
    return embeddings(answer, input.length, `POST ${this.baseUrl}/v1/embeddings`);
  }

  async #call<T>(method: Method, path: string, body: unknown, options: RequestOptions | undefined): Promise<T> {
    const answer = await this.#request(method, path, body, options);
    return answer["result"] as T;
  }

  /**
   * One exchange: the answer's envelope, whose result is there (or what
   * read makes of the answer). Every failure is a MemrankError, except the
   * caller's own abort.
   */
  async #request(
    method: Method,
    path: string,
    body: unknown,
    options: RequestOptions = {},
    read: (res: Response, text: string) => Record<string, unknown> = envelope,
  ): Promise<Record<string, unknown>> {
    const timeoutMs = options.timeoutMs === undefined ? this.timeoutMs : checkTimeout(options.timeoutMs, "timeoutMs");
    const where = `${method} ${this.baseUrl}${path.split("?")[0]}`;
    const deadline = new Deadline(timeoutMs, options.signal);
    try {
      const headers = { ...this.#headers };
      // memrank never redirects. Following one would send the credentials,
      // and on 307 and 308 the body, to whatever host it names.
      const init: RequestInit = { method, headers, signal: deadline.signal, redirect: "manual" };
      if (body !== undefined) {
        headers["content-type"] = "application/json";
        init.body = JSON.stringify(body);
      }
      let text: string;
      let res: Response;
      try {
        res = await this.#fetch(this.baseUrl + path, init);
        if (res.type === "opaqueredirect" || (res.status >= 300 && res.status < 400)) {
          void res.body?.cancel().catch(() => {});
          throw redirectError(res, this.baseUrl + path, where);
        }
        text = await readAnswer(res, where);
      } catch (err) {
        throw err instanceof MemrankError ? err : deadline.failure(err, where);
      }
      return read(res, text);
    } finally {
      deadline.clear();
    }
  }
}

/**
 * The error of a redirect, which is not followed: it names where it
 * pointed, without any user information the Location carried (a browser's
 * opaque redirect shows nothing).
 */
function redirectError(res: Response, requested: string, where: string): MemrankError {
  let to = "a place the answer does not show";
  const location = res.headers.get("location");
  if (location !== null) {
    try {
      const u = new URL(location, requested);
      u.username = "";
      u.password = "";
      to = u.href;
    } catch {
      to = "an unreadable Location";
    }
  }
  return new MemrankError(
    res.status,
    `${where}: the server redirected to ${to}; memrank does not redirect, so the request was not followed (check baseUrl)`,
  );
}

/** The answer's body as text, refused past MAX_ANSWER_BYTES. */
async function readAnswer(res: Response, where: string): Promise<string> {
  if (res.body === null) {
    return "";
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      break;
    }
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      void reader.cancel().catch(() => {});
      throw new MemrankError(res.status, `${where}: the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

/**
 * The client's timeout joined with the caller's signal. The timer covers
 * the answer's body too: fetch resolves at its headers.
 */
class Deadline {
  readonly signal: AbortSignal;
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly #ms: number;
  readonly #caller: AbortSignal | undefined;
  readonly #onAbort: () => void;
  #timedOut = false;

  constructor(ms: number, caller: AbortSignal | undefined) {
    const ctl = new AbortController();
    this.signal = ctl.signal;
    this.#ms = ms;
    this.#caller = caller;
    this.#onAbort = () => ctl.abort(caller?.reason);
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      ctl.abort();
    }, ms);
    if (caller?.aborted) {
      this.#onAbort();
    } else {
      caller?.addEventListener("abort", this.#onAbort, { once: true });
    }
  }

  /** What a failed fetch or body read is thrown as. */
  failure(err: unknown, where: string): unknown {
    if (this.#caller?.aborted && !this.#timedOut) {
      return this.#caller.reason ?? err; // the caller's own abort, as it is
    }
    if (this.#timedOut) {
      return new ConnectionError(`${where}: no answer within ${this.#ms} ms`, { cause: err });
    }
    return new ConnectionError(`${where}: ${transportProblem(err)}`, { cause: err });
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#caller?.removeEventListener("abort", this.#onAbort);
  }
}

/** The envelope of a 2xx answer, or the error of any other. */
function envelope(res: Response, text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const msg = errorText(parsed) ?? `HTTP ${res.status}${res.statusText ? " " + res.statusText : ""} (the answer carries no memrank error)`;
    throw errorForStatus(res.status, msg, res.headers.get("retry-after"));
  }
  if (!isObject(parsed) || !("result" in parsed)) {
    throw new MemrankError(res.status, `HTTP ${res.status}: the answer is not memrank's JSON envelope`);
  }
  return parsed;
}

/**
 * The answer of /v1/embeddings, OpenAI's shape with no envelope; the error
 * of any status but 2xx, as envelope's.
 */
function openAIAnswer(res: Response, text: string): Record<string, unknown> {
  if (!res.ok) {
    return envelope(res, text); // throws the status's error
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!isObject(parsed) || !Array.isArray(parsed["data"])) {
    throw new MemrankError(res.status, `HTTP ${res.status}: the answer is not OpenAI's embeddings list`);
  }
  return parsed;
}

/** The vectors of an embeddings answer for n texts, by their index. */
function embeddings(answer: Record<string, unknown>, n: number, where: string): number[][] {
  const data = answer["data"] as unknown[];
  if (data.length !== n) {
    throw new MemrankError(200, `${where}: the server answered ${data.length} embeddings for ${n} texts`);
  }
  const out: (number[] | undefined)[] = new Array<number[] | undefined>(n).fill(undefined);
  for (const d of data) {
    const index = isObject(d) ? d["index"] : undefined;
    const v = isObject(d) && typeof d["embedding"] === "string" ? float32s(d["embedding"]) : undefined;
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= n || out[index] !== undefined || v === undefined) {
      throw new MemrankError(200, `${where}: the server answered a malformed embedding (index ${String(index)})`);
    }
    out[index] = v;
  }
  return out as number[][];
}

/** base64 of little-endian float32s, decoded exactly; undefined when it is not that. */
function float32s(b64: string): number[] | undefined {
  let bin: string;
  try {
    bin = atob(b64);
  } catch {
    return undefined;
  }
  if (bin.length % 4 !== 0) {
    return undefined;
  }
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) {
    bytes[i] = bin.charCodeAt(i);
  }
  const view = new DataView(bytes.buffer);
  const v = new Array<number>(bytes.length / 4);
  for (let i = 0; i < v.length; i++) {
    v[i] = view.getFloat32(4 * i, true);
  }
  return v;
}

/**
 * The text of Qdrant's error envelope, {"status": {"error": "..."}}, or of
 * OpenAI's, {"error": {"message": "..."}} (/v1/embeddings).
 */
function errorText(v: unknown): string | undefined {
  const status = isObject(v) ? v["status"] : undefined;
  if (isObject(status) && typeof status["error"] === "string") {
    return status["error"];
  }
  const error = isObject(v) ? v["error"] : undefined;
  return isObject(error) && typeof error["message"] === "string" ? error["message"] : undefined;
}

/** A transport failure in words: undici hides the cause (ECONNREFUSED, ...) behind "fetch failed". */
function transportProblem(err: unknown): string {
  const cause = err instanceof Error ? err.cause : undefined;
  if (cause instanceof Error) {
    // An AggregateError (every address refused) may have no message of its own.
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && !cause.message.includes(code)) {
      return cause.message ? `${code}: ${cause.message}` : code;
    }
    if (cause.message) {
      return cause.message;
    }
  }
  return err instanceof Error ? err.message : String(err);
}

function observeBody(collection: string, text: string, fields: ObserveFields): Record<string, unknown> {
  const body: Record<string, unknown> = { ...fields, collection, text };
  if (fields.observed_at instanceof Date) {
    body["observed_at"] = fields.observed_at.toISOString();
  }
  if (fields.vector !== undefined) {
    body["vector"] = Array.from(fields.vector);
  }
  return body;
}

function eventBody(collection: string, fields: EventFields): Record<string, unknown> {
  const body: Record<string, unknown> = { ...fields, collection };
  if (fields.at instanceof Date) {
    body["at"] = fields.at.toISOString();
  }
  return body;
}

function memoryPath(id: PointId, rest: string): string {
  return `/v1/memories/${idSegment(String(id))}${rest}`;
}

/**
 * id as one path segment. "", "." and ".." are refused before any request:
 * encodeURIComponent leaves the dots as they are, and URL parsing (and the
 * server's router) would take /v1/memories/../confirm for another route.
 */
function idSegment(id: string): string {
  if (id === "" || id === "." || id === "..") {
    throw new BadRequestError(400, id === "" ? "a memory or session id is required" : `"${id}" is not a memory or session id`);
  }
  return encodeURIComponent(id);
}

function query(params: Record<string, string>): string {
  return "?" + new URLSearchParams(params).toString();
}

function isIdList(v: PointId | readonly PointId[]): v is readonly PointId[] {
  return Array.isArray(v);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The base URL without a trailing slash. Credentials in it are refused: they
 * would show in every error message, and fetch refuses them anyway.
 */
function checkBaseUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new TypeError("memrank: baseUrl is not a URL (want e.g. http://127.0.0.1:6333)");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new TypeError(`memrank: baseUrl must be http or https, not ${u.protocol}`);
  }
  if (u.username !== "" || u.password !== "") {
    throw new TypeError("memrank: baseUrl must not carry credentials: use apiKey or bearerToken");
  }
  if (u.search !== "" || u.hash !== "") {
    throw new TypeError("memrank: baseUrl must not have a query or a fragment");
  }
  return (u.origin + u.pathname).replace(/\/+$/, "");
}

function checkTimeout(ms: number, name: string): number {
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new RangeError(`memrank: ${name} must be a positive number of milliseconds`);
  }
  return ms;
}
