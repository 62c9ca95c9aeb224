export { MemrankClient, DEFAULT_BASE_URL, DEFAULT_TIMEOUT_MS, MAX_ANSWER_BYTES } from "./client.js";
export type { ClientOptions, RequestOptions } from "./client.js";
export { MemrankError, BadRequestError, UnauthorizedError, ForbiddenError, NotFoundError, ConflictError, RateLimitError, UnavailableError, ServerError, ConnectionError, } from "./errors.js";
export type * from "./types.js";
