export { MemrankClient, DEFAULT_BASE_URL, DEFAULT_TIMEOUT_MS } from "./client.js";
export type { ClientOptions, RequestOptions } from "./client.js";
export { MemrankError, BadRequestError, UnauthorizedError, ForbiddenError, NotFoundError, ConflictError, RateLimitError, UnavailableError, ServerError, ConnectionError, } from "./errors.js";
export type * from "./types.js";
