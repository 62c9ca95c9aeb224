"""memrank: a client of memrank's native API, standard library only.

memrank re-ranks an agent's memories in front of Qdrant, and its write path
decides what each observation is (a new memory, the same fact again, a
contradiction) and keeps an audit trail of every change. This package is
that API in Python::

    from memrank import Client

    mr = Client("http://127.0.0.1:6333", api_key="...")
    out = mr.observe("notes", "Dana uses Neovim", source="direct", session_id="s1")
    top = mr.retrieve("notes", "what editor does Dana use", limit=3)[0]
    print(top.text, top.explanation["confidence"])

Failures are MemrankError subclasses (errors.py), the same vocabulary as
memrank's Go and TypeScript clients.
"""

from ._version import __version__
from .client import DEFAULT_TIMEOUT, DEFAULT_URL, Client
from .errors import (
    BadRequestError,
    ConflictError,
    ConnectionError,
    ForbiddenError,
    MemrankError,
    NotFoundError,
    RateLimitError,
    ServerError,
    UnauthorizedError,
    UnavailableError,
)
from .types import (
    AuditRecord,
    CreatedCollection,
    Explanation,
    ForgetReport,
    MemoryHistory,
    Outcome,
    PointId,
    RetrievedMemory,
    Retrieval,
    Stats,
    UseResult,
)

__all__ = [
    "__version__",
    "Client",
    "DEFAULT_URL",
    "DEFAULT_TIMEOUT",
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
    "Outcome",
    "UseResult",
    "Retrieval",
    "RetrievedMemory",
    "Explanation",
    "MemoryHistory",
    "AuditRecord",
    "Stats",
    "ForgetReport",
    "CreatedCollection",
    "PointId",
]
