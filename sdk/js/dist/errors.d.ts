/**
 * Any failure of a memrank call. `status` is the HTTP status of the answer
 * (0 when there was none: see {@link ConnectionError}); `message` is the
 * server's error text, or a description of what failed on the way.
 * Credentials are never part of it.
 */
export declare class MemrankError extends Error {
    name: string;
    /** The HTTP status, 0 for a transport failure or a timeout. */
    readonly status: number;
    /**
     * Seconds to wait before retrying, from the answer's Retry-After header
     * (a 429's, or a 503's when memrank sheds load); undefined when absent.
     */
    readonly retryAfter: number | undefined;
    constructor(status: number, message: string, options?: {
        cause?: unknown;
        retryAfter?: number | undefined;
    });
}
/** 400, 405, 413 or 422: the request itself was refused (malformed, out of range, too large); the message names the field. */
export declare class BadRequestError extends MemrankError {
    name: string;
}
/** 401: no credentials, or credentials memrank does not know (a wrong API key, an invalid token). */
export declare class UnauthorizedError extends MemrankError {
    name: string;
}
/** 403: the credentials are known but may not do this (no tenant, an administrator's key on a tenant's route, the audit companion). */
export declare class ForbiddenError extends MemrankError {
    name: string;
}
/** 404: no such memory or collection (or it belongs to another tenant). */
export declare class NotFoundError extends MemrankError {
    name: string;
}
/** 409: a conflict, such as a collection written with another embedder. */
export declare class ConflictError extends MemrankError {
    name: string;
}
/** 429: too many requests. `retryAfter` is the server's Retry-After in seconds, when it sent one. */
export declare class RateLimitError extends MemrankError {
    name: string;
}
/**
 * 408, 502, 503 or 504: memrank or the store behind it is unavailable, shedding load or
 * missed its deadline (408); retrying later may work, after `retryAfter` when it is set.
 */
export declare class UnavailableError extends MemrankError {
    name: string;
}
/** Any other 5xx: memrank failed (its text withholds the details, which are in its log). */
export declare class ServerError extends MemrankError {
    name: string;
}
/** No answer: the connection failed (refused, reset, DNS) or the client's timeout passed. Status 0. */
export declare class ConnectionError extends MemrankError {
    name: string;
    constructor(message: string, options?: {
        cause?: unknown;
    });
}
/**
 * The error of an answer whose status is not 2xx, with its Retry-After. A
 * status without a kind of its own (a 3xx, 410, ...) is a plain
 * MemrankError. The same table as the Go and Python clients'.
 */
export declare function errorForStatus(status: number, message: string, retryAfter?: string | null): MemrankError;
/**
 * Retry-After in seconds: a number of seconds, or an HTTP date (the seconds
 * until it, at least 0). Undefined when absent or unreadable.
 */
export declare function parseRetryAfter(value: string | null | undefined, now?: number): number | undefined;
