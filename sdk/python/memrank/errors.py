"""The exceptions memrank's client raises: one class per kind of refusal.

Every failure of a call is a MemrankError carrying ``status`` (the HTTP
status, 0 when no answer arrived) and ``message`` (the server's
``{"status": {"error": ...}}`` text, or OpenAI's ``{"error": {"message":
...}}`` for /v1/embeddings, or what went wrong on the way). The subclasses
let callers catch the kinds they can act on; the vocabulary is the same in
memrank's Go and TypeScript clients.
"""

from __future__ import annotations

import builtins
import email.utils
import json
import time
from typing import Dict, Optional, Type

__all__ = [
    "MemrankError",
    "BadRequestError",
    "UnauthorizedError",
    "ForbiddenError",
    "NotFoundError",
    "ConflictError",
    "RateLimitError",
    "UnavailableError",
    "ServerError",
    "ConnectionError",
    "error_for_status",
]


class MemrankError(Exception):
    """A call to memrank failed.

    ``status`` is the HTTP status of the answer (0 when there was none: a
    refused connection, a timeout); ``message`` the server's error text, or
    a description of the transport failure; ``retry_after`` the answer's
    Retry-After in seconds (a 429's or a 503's), None when it gave none.
    """

    def __init__(self, status: int, message: str, retry_after: Optional[float] = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after

    def __str__(self) -> str:
        if self.status:
            return f"memrank: HTTP {self.status}: {self.message}"
        return f"memrank: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, message={self.message!r})"

    def __reduce__(self):
        # Exception pickles its args, which are not __init__'s here; a
        # worker process's error must reach its parent whole.
        return (_rebuild, (type(self), dict(self.__dict__)))


class BadRequestError(MemrankError):
    """400, 405, 413 or 422: the request itself was refused (malformed, failed
    validation, too large)."""


class UnauthorizedError(MemrankError):
    """401: no credential, or one memrank does not know."""


class ForbiddenError(MemrankError):
    """403: the credential or tenant may not do this (or none was given)."""


class NotFoundError(MemrankError):
    """404: no such memory, collection or route."""


class ConflictError(MemrankError):
    """409: the collection was written another way (another embedder, ...)."""


class RateLimitError(MemrankError):
    """429: too many requests; wait ``retry_after`` seconds (the server's
    Retry-After) when it is not None."""


class UnavailableError(MemrankError):
    """408, 502, 503 or 504: memrank or the store behind it cannot answer now
    (408: the store missed its deadline; 503: memrank sheds load, with
    ``retry_after``); retrying later may work."""


class ServerError(MemrankError):
    """Any other 5xx: memrank or the store failed."""


class ConnectionError(MemrankError, builtins.ConnectionError):  # noqa: A001 - the shared vocabulary's name
    """No answer: the connection was refused or dropped, or timed out.

    ``status`` is 0. It is also the built-in ConnectionError (an OSError), so
    code that already handles network failures catches it too.
    """

    def __init__(self, message: str) -> None:
        MemrankError.__init__(self, 0, message)

    # OSError brings its own __str__; keep MemrankError's.
    __str__ = MemrankError.__str__


def _rebuild(cls: Type[MemrankError], state: Dict[str, object]) -> MemrankError:
    e = cls.__new__(cls)
    Exception.__init__(e, state.get("message", ""))
    e.__dict__.update(state)
    return e


# The same table as the Go and TypeScript clients'.
_BY_STATUS: Dict[int, Type[MemrankError]] = {
    400: BadRequestError,
    405: BadRequestError,
    413: BadRequestError,
    422: BadRequestError,
    408: UnavailableError,  # memrank answers 408 when the store misses its deadline
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    429: RateLimitError,
    502: UnavailableError,
    503: UnavailableError,
    504: UnavailableError,
}


def error_for_status(
    status: int, body: bytes, retry_after: Optional[str] = None, reason: str = ""
) -> MemrankError:
    """The exception for an HTTP answer with a status that is not 2xx.

    body is the answer's body: its ``{"status": {"error": ...}}`` text
    (or OpenAI's ``{"error": {"message": ...}}``) becomes the message; a body in another shape (a proxy's page) is
    quoted, shortened, and an empty one named by reason (the status's
    phrase). retry_after is the answer's Retry-After header.
    """
    message = _server_message(body) or _quote(body) or reason or f"HTTP {status}"
    cls = _BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if 500 <= status <= 599 else MemrankError
    return cls(status, message, _retry_after_seconds(retry_after))


def _quote(body: bytes) -> str:
    return " ".join(body.decode("utf-8", "replace").split())[:200]


def _server_message(body: bytes) -> str:
    """The error text of Qdrant's envelope, {"status": {"error": ...}}, or
    of OpenAI's, {"error": {"message": ...}} (POST /v1/embeddings); "" when
    body is neither."""
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return ""
    if not isinstance(doc, dict):
        return ""
    status = doc.get("status")
    if isinstance(status, dict) and isinstance(status.get("error"), str):
        return status["error"]
    error = doc.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    return ""


def _retry_after_seconds(value: Optional[str]) -> Optional[float]:
    """Retry-After in seconds: delta-seconds or an HTTP date; None when
    absent or unreadable."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - time.time()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)
