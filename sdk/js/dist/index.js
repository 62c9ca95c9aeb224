// @memrank/client: a typed client of memrank's native API (observe,
// retrieve, confirm, correct, used, forget, history, stats, collection
// creation, embeddings) with typed errors. No runtime dependencies: it uses the platform's fetch.
export { MemrankClient, DEFAULT_BASE_URL, DEFAULT_TIMEOUT_MS, MAX_ANSWER_BYTES } from "./client.js";
export { MemrankError, BadRequestError, UnauthorizedError, ForbiddenError, NotFoundError, ConflictError, RateLimitError, UnavailableError, ServerError, ConnectionError, } from "./errors.js";
