// The errors every method throws. memrank answers errors in Qdrant's shape,
// {"status": {"error": "..."}} with Qdrant's HTTP codes (POST /v1/embeddings
// in OpenAI's, {"error": {"message": "..."}}, whose message is read alike);
// the class says which kind of failure it is, so callers branch with
// instanceof instead of on status numbers. The Go and Python clients use the
// same names.
/**
 * Any failure of a memrank call. `status` is the HTTP status of the answer
 * (0 when there was none: see {@link ConnectionError}); `message` is the
 * server's error text, or a description of what failed on the way.
 * Credentials are never part of it.
 */
export class MemrankError extends Error {
    name = "MemrankError";
    /** The HTTP status, 0 for a transport failure or a timeout. */
    status;
    /**
     * Seconds to wait before retrying, from the answer's Retry-After header
     * (a 429's, or a 503's when memrank sheds load); undefined when absent.
     */
    retryAfter;
    constructor(status, message, options) {
        super(message, options?.cause === undefined ? undefined : { cause: options.cause });
        this.status = status;
        this.retryAfter = options?.retryAfter;
    }
}
/** 400, 405, 413 or 422: the request itself was refused (malformed, out of range, too large); the message names the field. */
export class BadRequestError extends MemrankError {
    name = "BadRequestError";
}
/** 401: no credentials, or credentials memrank does not know (a wrong API key, an invalid token). */
export class UnauthorizedError extends MemrankError {
    name = "UnauthorizedError";
}
/** 403: the credentials are known but may not do this (no tenant, an administrator's key on a tenant's route, the audit companion). */
export class ForbiddenError extends MemrankError {
    name = "ForbiddenError";
}
/** 404: no such memory or collection (or it belongs to another tenant). */
export class NotFoundError extends MemrankError {
    name = "NotFoundError";
}
/** 409: a conflict, such as a collection written with another embedder. */
export class ConflictError extends MemrankError {
    name = "ConflictError";
}
/** 429: too many requests. `retryAfter` is the server's Retry-After in seconds, when it sent one. */
export class RateLimitError extends MemrankError {
    name = "RateLimitError";
}
/**
 * 408, 502, 503 or 504: memrank or the store behind it is unavailable, shedding load or
 * missed its deadline (408); retrying later may work, after `retryAfter` when it is set.
 */
export class UnavailableError extends MemrankError {
    name = "UnavailableError";
}
/** Any other 5xx: memrank failed (its text withholds the details, which are in its log). */
export class ServerError extends MemrankError {
    name = "ServerError";
}
/** No answer: the connection failed (refused, reset, DNS) or the client's timeout passed. Status 0. */
export class ConnectionError extends MemrankError {
    name = "ConnectionError";
    constructor(message, options) {
        super(0, message, options);
    }
}
/**
 * The error of an answer whose status is not 2xx, with its Retry-After. A
 * status without a kind of its own (a 3xx, 410, ...) is a plain
 * MemrankError. The same table as the Go and Python clients'.
 */
export function errorForStatus(status, message, retryAfter) {
    const options = { retryAfter: parseRetryAfter(retryAfter) };
    switch (status) {
        case 400:
        case 405:
        case 413:
        case 422:
            return new BadRequestError(status, message, options);
        case 401:
            return new UnauthorizedError(status, message, options);
        case 403:
            return new ForbiddenError(status, message, options);
        case 404:
            return new NotFoundError(status, message, options);
        case 409:
            return new ConflictError(status, message, options);
        case 429:
            return new RateLimitError(status, message, options);
        case 408: // memrank answers 408 when the store misses its deadline
        case 502:
        case 503:
        case 504:
            return new UnavailableError(status, message, options);
    }
    if (status >= 500 && status <= 599) {
        return new ServerError(status, message, options);
    }
    return new MemrankError(status, message, options);
}
/**
 * Retry-After in seconds: a number of seconds, or an HTTP date (the seconds
 * until it, at least 0). Undefined when absent or unreadable.
 */
export function parseRetryAfter(value, now = Date.now()) {
    const v = value?.trim();
    if (!v) {
        return undefined;
    }
    if (/^\d+$/.test(v)) {
        return Number(v);
    }
    const at = Date.parse(v);
    if (Number.isNaN(at)) {
        return undefined;
    }
    return Math.max(0, Math.ceil((at - now) / 1000));
}
