"""The client of memrank's native API (docs/read-path.md, docs/write-path.md,
docs/forgetting.md), over the standard library's urllib."""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import functools
import http.client
import io
import json
import socket
import ssl
import struct
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union, overload

from ._version import __version__
from .errors import BadRequestError, ConnectionError, MemrankError, error_for_status
from .types import (
    JSON,
    CreatedCollection,
    ForgetReport,
    MemoryHistory,
    Outcome,
    PointId,
    Retrieval,
    Stats,
    UseResult,
)

__all__ = ["Client", "DEFAULT_URL", "DEFAULT_TIMEOUT"]

DEFAULT_URL = "http://127.0.0.1:6333"
DEFAULT_TIMEOUT = 30.0

# How much of an answer is read: a retrieve of 1,000 memories with large
# payloads fits; a server that never stops sending does not exhaust memory.
_MAX_ANSWER = 64 << 20
# How much of an error's answer is read: its message is all that is kept.
_MAX_ERROR = 64 << 10

# A time field: an RFC 3339 string, or a timezone-aware datetime.
Time = Union[str, _dt.datetime]


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """memrank never redirects. Following one would send the credentials
    to wherever it points, so a redirect is an error instead."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102
        return None


# The call's deadline. A socket timeout bounds each operation, not the
# call: a server that sends a byte just before every timeout would keep a
# call open for as long as it likes. So each connect and each read of the
# answer, its headers included, waits only for what is left of the call's
# time.


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise socket.timeout("the call's deadline passed")
    return left


class _TimedReader(io.RawIOBase):
    """The answer's socket reader, each read bounded by the deadline."""

    def __init__(self, raw: Any, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._raw, self._sock, self._deadline = raw, sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> Optional[int]:
        self._sock.settimeout(_left(self._deadline))
        return self._raw.readinto(b)

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _TimedResponse(http.client.HTTPResponse):
    def __init__(self, sock: socket.socket, *args: Any, deadline: float, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        # detach, not close: the socket's reader is kept, under the deadline.
        self.fp = io.BufferedReader(_TimedReader(self.fp.detach(), sock, deadline))


class _Timed:
    """A connection under a deadline: its connect and its answer's reads."""

    def __init__(self, *args: Any, deadline: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._deadline = deadline
        self.response_class = functools.partial(_TimedResponse, deadline=deadline)

    def connect(self) -> None:
        self.timeout = _left(self._deadline)
        super().connect()  # type: ignore[misc]


class _TimedHTTPConnection(_Timed, http.client.HTTPConnection):
    pass


class _TimedHTTPSConnection(_Timed, http.client.HTTPSConnection):
    pass


class _TimedRequest(urllib.request.Request):
    def __init__(self, *args: Any, deadline: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deadline = deadline


class _TimedHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: _TimedRequest) -> http.client.HTTPResponse:  # type: ignore[override]
        return self.do_open(_TimedHTTPConnection, req, deadline=req.deadline)


class _TimedHTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: _TimedRequest) -> http.client.HTTPResponse:  # type: ignore[override]
        return self.do_open(_TimedHTTPSConnection, req, context=self._context, deadline=req.deadline)  # type: ignore[attr-defined]


class Client:
    """A client of one memrank server.

    Every method sends one request and returns the answer's result as a
    dataclass (its JSON in ``raw``), or raises a MemrankError subclass:
    BadRequestError, UnauthorizedError, ForbiddenError, NotFoundError,
    ConflictError, RateLimitError, UnavailableError, ServerError, or
    ConnectionError when no answer came. A client holds no connection and
    may be shared between threads.

    url: memrank's HTTP address (the port Qdrant's REST API is served on).
    api_key: sent as the ``api-key`` header.
    bearer_token: sent as ``Authorization: Bearer <token>`` (an API key or a
        JWT, as the server's tenancy takes them).
    tenant_header, tenant: a header naming the tenant, for deployments
        behind a gateway that sets it (tenancy.header); both or neither.
    timeout: seconds one call may take in all: connecting, sending, and
        reading the whole answer.
    headers: more headers to send with every request.
    ssl_context: for https URLs, e.g. one trusting a private CA.
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        api_key: Optional[str] = None,
        bearer_token: Optional[str] = None,
        tenant_header: Optional[str] = None,
        tenant: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        headers: Optional[Mapping[str, str]] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
    ) -> None:
        self._url = _base_url(url)
        if not timeout > 0:
            raise ValueError("timeout: want a number of seconds above 0")
        self._timeout = float(timeout)
        if (tenant_header is None) != (tenant is None):
            raise ValueError("tenant_header and tenant: give both or neither")
        own: Dict[str, str] = {}
        if api_key is not None:
            own["api-key"] = api_key
        if bearer_token is not None:
            own["Authorization"] = "Bearer " + bearer_token
        if tenant_header is not None and tenant is not None:
            own[tenant_header] = tenant
        extra = dict(headers or {})
        clash = {k.lower() for k in own} & {k.lower() for k in extra}
        if clash:
            # Named, never shown: the values may be credentials.
            raise ValueError(f"headers: {sorted(clash)} are set by the client's own arguments")
        self._headers = {"Accept": "application/json", "User-Agent": "memrank-python/" + __version__}
        self._headers.update(extra)
        self._headers.update(own)
        for k, v in self._headers.items():
            _check_header(k, v)
        self._tenant_header = tenant_header
        self._has_credentials = api_key is not None or bearer_token is not None
        handlers: List[urllib.request.BaseHandler] = [
            _NoRedirects(), _TimedHTTPHandler(), _TimedHTTPSHandler(context=ssl_context)]
        self._opener = urllib.request.build_opener(*handlers)

    @property
    def url(self) -> str:
        return self._url

    def __repr__(self) -> str:
        # Credentials are never shown, only whether there are any.
        parts = [f"url={self._url!r}"]
        if self._has_credentials:
            parts.append("credentials=***")
        if self._tenant_header:
            parts.append(f"tenant_header={self._tenant_header!r}")
        return f"Client({', '.join(parts)})"

    # The write path.

    def observe(
        self,
        collection: str,
        text: str,
        *,
        memory_type: Optional[str] = None,
        source: Optional[str] = None,
        extractor_model: Optional[str] = None,
        extractor_logprob: Optional[float] = None,
        grounding: Optional[str] = None,
        session_id: Optional[str] = None,
        turn_id: Optional[str] = None,
        observed_at: Optional[Time] = None,
        modality: Optional[str] = None,
        entities: Optional[Sequence[str]] = None,
        decay_category: Optional[str] = None,
        vector: Optional[Sequence[float]] = None,
        observation_id: Optional[str] = None,
        corrects: Optional[PointId] = None,
        attribution: Optional[str] = None,
        speaker: Optional[str] = None,
    ) -> Outcome:
        """Hands one observation to the write path (POST /v1/observe) and
        returns its decision: inserted, restatement, independent,
        contradiction or rejected. The collection is created by its first
        observation. An observation_id makes a retry safe: it is answered
        with the first outcome, ``replayed`` True. ``speaker`` is who said
        the text (a name): the subject of a first-person statement, so two
        people's statements never fold together; without it a leading
        "Name:" of the text names the speaker."""
        body = _drop_none(
            collection=collection, text=text, memory_type=memory_type, source=source,
            extractor_model=extractor_model, extractor_logprob=extractor_logprob,
            grounding=grounding, session_id=session_id, turn_id=turn_id,
            observed_at=_time("observed_at", observed_at), modality=modality,
            entities=_seq(entities), decay_category=decay_category, vector=_seq(vector),
            observation_id=observation_id, corrects=corrects, attribution=attribution,
            speaker=speaker,
        )
        return Outcome.from_json(self._result("POST", "/v1/observe", body=body))

    def confirm(
        self,
        collection: str,
        id: PointId,
        *,
        observation_id: Optional[str] = None,
        session_id: Optional[str] = None,
        turn_id: Optional[str] = None,
        at: Optional[Time] = None,
    ) -> Outcome:
        """Confirms a stored memory (POST /v1/memories/{id}/confirm): its
        confidence rises; decision ``confirmed``."""
        body = _drop_none(collection=collection, observation_id=observation_id,
                          session_id=session_id, turn_id=turn_id, at=_time("at", at))
        return Outcome.from_json(self._result("POST", f"/v1/memories/{_seg(id)}/confirm", body=body))

    def correct(
        self,
        collection: str,
        id: PointId,
        text: str,
        *,
        memory_type: Optional[str] = None,
        source: Optional[str] = None,
        extractor_model: Optional[str] = None,
        extractor_logprob: Optional[float] = None,
        grounding: Optional[str] = None,
        session_id: Optional[str] = None,
        turn_id: Optional[str] = None,
        observed_at: Optional[Time] = None,
        modality: Optional[str] = None,
        entities: Optional[Sequence[str]] = None,
        decay_category: Optional[str] = None,
        vector: Optional[Sequence[float]] = None,
        observation_id: Optional[str] = None,
        attribution: Optional[str] = None,
        speaker: Optional[str] = None,
    ) -> Outcome:
        """Corrects a stored memory (POST /v1/memories/{id}/correct): text
        is the correct claim, stored as a memory that supersedes ``id``
        (the outcome's ``superseded``); decision ``corrected``. ``speaker``
        is who said it, as for observe."""
        body = _drop_none(
            collection=collection, text=text, memory_type=memory_type, source=source,
            extractor_model=extractor_model, extractor_logprob=extractor_logprob,
            grounding=grounding, session_id=session_id, turn_id=turn_id,
            observed_at=_time("observed_at", observed_at), modality=modality,
            entities=_seq(entities), decay_category=decay_category, vector=_seq(vector),
            observation_id=observation_id, attribution=attribution, speaker=speaker,
        )
        return Outcome.from_json(self._result("POST", f"/v1/memories/{_seg(id)}/correct", body=body))

    @overload
    def used(self, collection: str, ids: PointId, *, observation_id: Optional[str] = None,
             session_id: Optional[str] = None, turn_id: Optional[str] = None,
             at: Optional[Time] = None) -> Outcome: ...

    @overload
    def used(self, collection: str, ids: Sequence[PointId], *, observation_id: Optional[str] = None,
             session_id: Optional[str] = None, turn_id: Optional[str] = None,
             at: Optional[Time] = None) -> List[UseResult]: ...

    def used(self, collection, ids, *, observation_id=None, session_id=None, turn_id=None, at=None):
        """Says the agent used memories in an answer the user did not
        correct (outcome feedback). One id (POST /v1/memories/{id}/used)
        returns its Outcome, decision ``used`` with ``uses``; a list (POST
        /v1/memories/used, at most 100) returns a UseResult per distinct
        id, ``error`` "not_found" for an unknown one."""
        body = _drop_none(collection=collection, observation_id=observation_id,
                          session_id=session_id, turn_id=turn_id, at=_time("at", at))
        if isinstance(ids, (str, int)):
            return Outcome.from_json(self._result("POST", f"/v1/memories/{_seg(ids)}/used", body=body))
        body["ids"] = list(ids)
        res = self._result("POST", "/v1/memories/used", body=body)
        return [UseResult.from_json(r) for r in res if isinstance(r, dict)]

    # Reading.

    def retrieve(
        self,
        collection: str,
        text: Optional[str] = None,
        *,
        vector: Optional[Sequence[float]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        filter: Optional[JSON] = None,
        score_threshold: Optional[float] = None,
        explain: Optional[bool] = None,
        with_payload: Union[None, bool, Sequence[str], JSON] = None,
        using: Optional[str] = None,
        mode: Optional[str] = None,
        include_archived: Optional[bool] = None,
        count_access: Optional[bool] = None,
        at: Optional[Time] = None,
    ) -> Retrieval:
        """Retrieves memories for a text or a vector (POST /v1/retrieve),
        re-ranked, each with the factors of its score (``explanation``
        unless explain=False). filter is a Qdrant REST filter; limit 1 to
        1000 (default 10); with_payload True (the default), False, or the
        keys to return. count_access=False reads without counting the
        results as accessed: for inspecting a ranking without raising the
        access boost of what is looked at. include_archived=True returns
        the memories a person or a review archived too (``retrievable``
        False); age alone never takes a memory out of an answer.

        at asks for the answer as of a time: a datetime (a naive one is
        taken as UTC; sent in UTC) or an RFC 3339 string. Freshness and
        tiers are computed then, memories first observed later are left
        out, supersessions recorded later are not yet applied, and nothing
        is counted as an access; access counts and confidence stay today's.
        The answer's ``at`` echoes it."""
        if isinstance(with_payload, (list, tuple)):
            with_payload = list(with_payload)
        body = _drop_none(
            collection=collection, text=text, vector=_seq(vector), using=using, filter=filter,
            limit=limit, offset=offset, score_threshold=score_threshold, explain=explain,
            with_payload=with_payload, mode=mode, include_archived=include_archived,
            count_access=count_access, at=_utc_time("at", at),
        )
        return Retrieval.from_json(self._request("POST", "/v1/retrieve", body=body))

    def history(self, collection: str, id: PointId) -> MemoryHistory:
        """A memory as stored and its audit trail, oldest first (GET
        /v1/memories/{id}). A superseded memory is still there, with
        ``superseded_by``; a deleted one is a NotFoundError."""
        res = self._result("GET", f"/v1/memories/{_seg(id)}", query={"collection": collection})
        return MemoryHistory.from_json(res)

    def stats(self, collection: str, *, exact: bool = False) -> Stats:
        """The collection's memories counted by bucket, tier and type (GET
        /v1/stats). exact=True scores every memory instead of counting
        from indexes: slower, for checking."""
        query = {"collection": collection}
        if exact:
            query["exact"] = "true"
        return Stats.from_json(self._result("GET", "/v1/stats", query=query))

    # Forgetting (docs/forgetting.md).

    def forget_session(self, collection: str, session_id: str) -> ForgetReport:
        """Removes one session's evidence from every memory of the caller
        (DELETE /v1/sessions/{id}): memories only it supported are
        deleted, the others recomputed."""
        res = self._result("DELETE", f"/v1/sessions/{_seg(session_id)}", query={"collection": collection})
        return ForgetReport.from_json(res)

    def forget_memory(self, collection: str, id: PointId) -> ForgetReport:
        """Deletes one memory and the duplicates merged into it (DELETE
        /v1/memories/{id})."""
        res = self._result("DELETE", f"/v1/memories/{_seg(id)}", query={"collection": collection})
        return ForgetReport.from_json(res)

    # Collections and embeddings.

    def create_collection(self, name: str) -> CreatedCollection:
        """Makes name a memory collection before anything is observed into
        it (PUT /v1/collections/{name}), as its first observation would:
        the collection at the server's embedder's size with cosine
        distance, its payload indexes and its audit companion. An existing
        memory collection is kept (``existed`` True, ``created`` False);
        one of another vector size is a ConflictError. With tenancy on it
        needs an administrator's key (a tenant's is a ForbiddenError). A
        name that is empty, "." or ".." is refused with a BadRequestError
        before any request: as a path segment it would name another
        route."""
        if name in ("", ".", ".."):
            raise BadRequestError(400, f"{name!r} is not a collection name")
        seg = urllib.parse.quote(name, safe="")
        return CreatedCollection.from_json(self._result("PUT", f"/v1/collections/{seg}"))

    def embed(self, texts: Union[str, Sequence[str]], *, model: Optional[str] = None,
              dimensions: Optional[int] = None) -> List[List[float]]:
        """The server's embeddings of texts (POST /v1/embeddings, OpenAI's
        embeddings API), one vector per text in order: exactly the float32
        vectors /v1/observe stores for those texts. They travel in base64
        (little-endian float32 bytes), so every value arrives exact. A
        single string is one text.

        model is the configured embedder's name (the default: None) or a
        built-in model ("memrank-local-sem-v1:384", "memrank-local-hash-v1"
        at dimensions); an unknown one is a NotFoundError with the server's
        message. dimensions must be the model's size (the server never
        shortens a vector; another is a BadRequestError). At most 2048
        texts a call, none empty."""
        inputs = [texts] if isinstance(texts, str) else list(texts)
        body = _drop_none(model=model, input=inputs, encoding_format="base64", dimensions=dimensions)
        doc = self._request("POST", "/v1/embeddings", body=body)
        where = f"POST {self._url}/v1/embeddings"
        data = doc.get("data")
        if not isinstance(data, list):
            raise MemrankError(200, f"{where}: the answer is not OpenAI's embeddings list")
        if len(data) != len(inputs):
            raise MemrankError(200, f"{where}: the server answered {len(data)} embeddings for {len(inputs)} texts")
        out: List[Optional[List[float]]] = [None] * len(inputs)
        for d in data:
            index = d.get("index") if isinstance(d, dict) else None
            vec = _float32s(d.get("embedding")) if isinstance(d, dict) else None
            if (not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(out)
                    or out[index] is not None or vec is None):
                raise MemrankError(200, f"{where}: the server answered a malformed embedding (index {index!r})")
            out[index] = vec
        return out  # type: ignore[return-value] - every index is filled

    # Transport.

    def _result(self, method: str, path: str, *, query: Optional[Mapping[str, str]] = None,
                body: Optional[JSON] = None) -> Any:
        doc = self._request(method, path, query=query, body=body)
        if "result" not in doc:
            raise MemrankError(200, "the answer has no result")
        return doc["result"]

    def _request(self, method: str, path: str, *, query: Optional[Mapping[str, str]] = None,
                 body: Optional[JSON] = None) -> JSON:
        """Sends one request; returns the answer's JSON object or raises
        the MemrankError for what happened."""
        url = self._url + path
        where = f"{method} {url}"  # for messages: never the headers
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = dict(self._headers)
        data = None
        if body is not None:
            try:
                data = json.dumps(body, allow_nan=False, ensure_ascii=False).encode("utf-8")
            except ValueError as e:
                raise ValueError(f"{where}: the request has a number JSON cannot carry (NaN or infinity): {e}") from None
            headers["Content-Type"] = "application/json"
        req = _TimedRequest(url, data=data, headers=headers, method=method,
                            deadline=time.monotonic() + self._timeout)
        try:
            with self._opener.open(req, timeout=self._timeout) as resp:
                status, raw = resp.status, resp.read(_MAX_ANSWER + 1)
        except urllib.error.HTTPError as e:
            raise _http_error(e) from None
        except urllib.error.URLError as e:
            raise ConnectionError(f"{where}: {_reason(e.reason, self._timeout)}") from e
        except (OSError, http.client.HTTPException) as e:
            raise ConnectionError(f"{where}: {_reason(e, self._timeout)}") from e
        if len(raw) > _MAX_ANSWER:
            raise MemrankError(status, f"{where}: the answer is larger than {_MAX_ANSWER} bytes")
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise MemrankError(status, f"{where}: the answer is not JSON") from None
        if not isinstance(doc, dict):
            raise MemrankError(status, f"{where}: the answer is not a JSON object")
        return doc


def _http_error(e: urllib.error.HTTPError) -> MemrankError:
    try:
        body = e.read(_MAX_ERROR)
    except (OSError, http.client.HTTPException):
        body = b""
    if 300 <= e.code < 400:
        return MemrankError(e.code, "the server redirected the request; memrank's API never does, so check the client's URL")
    retry_after = e.headers.get("Retry-After") if e.headers is not None else None
    return error_for_status(e.code, body, retry_after, str(e.reason or ""))


def _reason(err: Any, timeout: float) -> str:
    if isinstance(err, (socket.timeout, TimeoutError)):
        return f"no answer within {timeout:g}s"
    if isinstance(err, OSError) and err.strerror:
        return err.strerror.lower() if err.strerror[:1].isupper() else err.strerror
    return str(err) or type(err).__name__


def _base_url(url: str) -> str:
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("http", "https") or not u.netloc:
        raise ValueError(f"url: want http://HOST:PORT or https://HOST:PORT, got {url!r}")
    if u.query or u.fragment:
        raise ValueError("url: want no query or fragment")
    if "@" in u.netloc:
        raise ValueError("url: give credentials as api_key or bearer_token, not in the URL")
    return urllib.parse.urlunsplit((u.scheme, u.netloc, u.path.rstrip("/"), "", ""))


def _check_header(name: str, value: str) -> None:
    if not name or any(c in name for c in " :\r\n\t") or not name.isascii():
        raise ValueError(f"headers: {name!r} is not a valid header name")
    # The value is never shown: it may be a credential.
    if any(c in value for c in "\r\n\0"):
        raise ValueError(f"headers: the value of {name!r} contains a line break or NUL")
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError(f"headers: the value of {name!r} is not Latin-1 text, which HTTP headers carry") from None


def _seg(v: PointId) -> str:
    """v as one path segment. "", "." and ".." are refused before any
    request: quote leaves the dots as they are, and the server's router
    would take /v1/memories/../confirm for another route."""
    s = str(v)
    if s in ("", ".", ".."):
        raise BadRequestError(400, "a memory or session id is required" if s == "" else f"{s!r} is not a memory or session id")
    return urllib.parse.quote(s, safe="")


def _float32s(v: Any) -> Optional[List[float]]:
    """base64 of little-endian float32s, decoded exactly; None when v is
    not that."""
    if not isinstance(v, str):
        return None
    try:
        raw = base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) % 4:
        return None
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def _seq(v: Optional[Sequence[Any]]) -> Optional[List[Any]]:
    return None if v is None else list(v)


def _time(name: str, v: Optional[Time]) -> Optional[str]:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None or v.utcoffset() is None:
            raise ValueError(f"{name}: want a timezone-aware datetime (RFC 3339 needs an offset)")
        return v.isoformat()
    raise TypeError(f"{name}: want an RFC 3339 string or a datetime, got {type(v).__name__}")


def _utc_time(name: str, v: Optional[Time]) -> Optional[str]:
    """An RFC 3339 time in UTC ("...Z") for a datetime, a naive one taken
    as UTC; a string is sent as it is (the server checks it)."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None or v.utcoffset() is None:
            v = v.replace(tzinfo=_dt.timezone.utc)
        try:
            u = v.astimezone(_dt.timezone.utc)
        except OverflowError:
            raise ValueError(f"{name}: {v.isoformat()} is outside years 1 to 9999 in UTC") from None
        return u.replace(tzinfo=None).isoformat() + "Z"
    raise TypeError(f"{name}: want an RFC 3339 string or a datetime, got {type(v).__name__}")


def _drop_none(**fields: Any) -> JSON:
    return {k: v for k, v in fields.items() if v is not None}
