import type { CreatedCollection, EmbedOptions, EventFields, ForgetReport, MemoryHistory, ObserveFields, Outcome, PointId, Retrieval, RetrieveOptions, Stats, StatsOptions, UsedResult, Vector } from "./types.js";
/** Where memrank listens when no baseUrl is given: `memrank serve`'s default. */
export declare const DEFAULT_BASE_URL = "http://127.0.0.1:6333";
/** How long one call may take, from the request to the last byte of the answer, when no timeoutMs is given. */
export declare const DEFAULT_TIMEOUT_MS = 30000;
/**
 * The most of an answer that is read: a retrieve of 1,000 explained results
 * with payloads fits many times over, and a server that never stops sending
 * does not exhaust memory. The Go and Python clients stop there too.
 */
export declare const MAX_ANSWER_BYTES: number;
/** How a client reaches memrank. Every field is optional. */
export interface ClientOptions {
    /** memrank's HTTP address, with a path prefix if a gateway adds one. Default http://127.0.0.1:6333. */
    baseUrl?: string;
    /** Sent as the `api-key` header (a tenant's key with tenancy on). */
    apiKey?: string;
    /** Sent as `Authorization: Bearer <token>` (an API key or a JWT). */
    bearerToken?: string;
    /** For deployments that take the tenant from a trusted header (`tenancy.header`): its name and value. */
    tenantHeader?: {
        name: string;
        value: string;
    };
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
export declare class MemrankClient {
    #private;
    readonly baseUrl: string;
    readonly timeoutMs: number;
    constructor(options?: ClientOptions);
    /**
     * Sends an observation (POST /v1/observe) and answers the write path's
     * decision: inserted, restatement, independent, contradiction or
     * rejected. A rejection is an outcome, not an error. The collection is
     * created on its first observation (`created_collection`).
     */
    observe(collection: string, text: string, fields?: ObserveFields, options?: RequestOptions): Promise<Outcome>;
    /**
     * Runs a query through the ranker (POST /v1/retrieve): a text, embedded
     * with the collection's embedder, or a vector. With explain (the
     * default) each result carries every factor of its score. `at` asks for
     * the answer as of that time.
     */
    retrieve(collection: string, query: string | Vector, opts?: RetrieveOptions, options?: RequestOptions): Promise<Retrieval>;
    /**
     * Confirms a memory (POST /v1/memories/{id}/confirm): its source rises to
     * at least `confirmed`, n by one, and the confidence never falls.
     */
    confirm(collection: string, id: PointId, fields?: EventFields, options?: RequestOptions): Promise<Outcome>;
    /**
     * Stores text as the correction of memory id (POST
     * /v1/memories/{id}/correct): the corrected memory is superseded by it
     * whatever the confidences (`superseded` names it). `source` defaults to
     * `direct`.
     */
    correct(collection: string, id: PointId, text: string, fields?: Omit<ObserveFields, "corrects">, options?: RequestOptions): Promise<Outcome>;
    /**
     * Records that an answer used a memory (POST /v1/memories/{id}/used), or
     * several (POST /v1/memories/used, at most 100 ids: one result per
     * distinct id, an unknown one marked not_found).
     */
    used(collection: string, id: PointId, fields?: EventFields, options?: RequestOptions): Promise<Outcome>;
    used(collection: string, ids: readonly PointId[], fields?: EventFields, options?: RequestOptions): Promise<UsedResult[]>;
    /**
     * Forgets everything one session contributed (DELETE /v1/sessions/{id}):
     * every memory is recomputed as if the session had never been observed,
     * memories only it supported are deleted (docs/forgetting.md).
     */
    forgetSession(collection: string, sessionId: string, options?: RequestOptions): Promise<ForgetReport>;
    /**
     * Deletes one memory and the duplicates merged into it (DELETE
     * /v1/memories/{id}). A memory that is not there is nothing to delete:
     * every count 0, no error.
     */
    forgetMemory(collection: string, id: PointId, options?: RequestOptions): Promise<ForgetReport>;
    /** A memory's stored payload and its audit trail, oldest first (GET /v1/memories/{id}). */
    history(collection: string, id: PointId, options?: RequestOptions): Promise<MemoryHistory>;
    /** Counts of a collection's memories by bucket, tier and type, and the server's write decisions in it (GET /v1/stats). */
    stats(collection: string, opts?: StatsOptions, options?: RequestOptions): Promise<Stats>;
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
    createCollection(name: string, options?: RequestOptions): Promise<CreatedCollection>;
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
    embed(texts: string | readonly string[], opts?: EmbedOptions, options?: RequestOptions): Promise<number[][]>;
}
