"""The client against a scripted loopback server: the requests each method
sends, the headers, the answers' parsing and the error mapping. These run
without memrank; test_live.py runs against a real one."""

from __future__ import annotations

import base64
import datetime as dt
import email.utils
import json
import os
import pickle
import re
import socket
import struct
import time
import unittest
from unittest import mock

from concurrent.futures import ThreadPoolExecutor

from _stub import Stub, client_tls

import memrank
from memrank import (
    BadRequestError,
    Client,
    ConflictError,
    ForbiddenError,
    MemrankError,
    NotFoundError,
    RateLimitError,
    ServerError,
    UnauthorizedError,
    UnavailableError,
)

OUTCOME = {
    "decision": "inserted", "memory_id": "3bef7154-99a9-5f0c-9c8c-d14bbfd4ad34", "confidence": 0.715,
    "observations": 0, "dedup_tier": 0, "judge": None, "replayed": False, "created_collection": True,
}
FORGET = {"collection": "notes", "memories_updated": 1, "memories_deleted": 2, "audit_redacted": 3,
          "audit_deleted": 0, "audit_kept": 0, "audit_policy": "redact"}
MID = "3bef7154-99a9-5f0c-9c8c-d14bbfd4ad34"
CREATED = {"collection": "notes", "created": True, "existed": False, "model": "memrank-local-sem-v1:384",
           "dimensions": 384, "distance": "Cosine", "audit_collection": "notes_memrank_audit"}


def b64(v) -> str:
    """v as the server sends an embedding in base64: little-endian float32s."""
    return base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode()


def embeddings(*vecs, order=None) -> dict:
    """An answer of /v1/embeddings (OpenAI's shape, no envelope)."""
    idx = order or range(len(vecs))
    return {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": b64(vecs[i])} for i in idx],
            "model": "m:3", "usage": {"prompt_tokens": 2, "total_tokens": 2}}


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StubTest(unittest.TestCase):
    stub: Stub

    @classmethod
    def setUpClass(cls) -> None:
        cls.stub = Stub().start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.stub.close()

    def client(self, **kw) -> Client:
        kw.setdefault("timeout", 5)
        return Client(self.stub.url, **kw)


class RequestsTest(StubTest):
    def test_each_method_sends_the_documented_request(self) -> None:
        at = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.timezone.utc)
        cases = [
            ("observe, only what was given", OUTCOME,
             lambda c: c.observe("notes", "Dana uses Neovim", source="direct", session_id="s1", entities=("Dana",)),
             "POST", "/v1/observe",
             {"collection": "notes", "text": "Dana uses Neovim", "source": "direct", "session_id": "s1", "entities": ["Dana"]}),
            ("observe, every field", OUTCOME,
             lambda c: c.observe("notes", "t", memory_type="preference", source="direct", extractor_model="m",
                                 extractor_logprob=-0.1, grounding="partial", session_id="s", turn_id="4",
                                 observed_at=at, modality="chat", entities=["a"], decay_category="preference",
                                 vector=[0.5, 1], observation_id="o", corrects=7, attribution="reported",
                                 speaker="Caroline"),
             "POST", "/v1/observe",
             {"collection": "notes", "text": "t", "memory_type": "preference", "source": "direct",
              "extractor_model": "m", "extractor_logprob": -0.1, "grounding": "partial", "session_id": "s",
              "turn_id": "4", "observed_at": "2026-05-01T12:00:00+00:00", "modality": "chat", "entities": ["a"],
              "decay_category": "preference", "vector": [0.5, 1], "observation_id": "o", "corrects": 7,
              "attribution": "reported", "speaker": "Caroline"}),
            ("confirm", OUTCOME,
             lambda c: c.confirm("notes", MID, observation_id="o2", at="2026-05-01T12:00:00Z"),
             "POST", f"/v1/memories/{MID}/confirm",
             {"collection": "notes", "observation_id": "o2", "at": "2026-05-01T12:00:00Z"}),
            ("correct", OUTCOME,
             lambda c: c.correct("notes", 42, "Dana uses Helix", source="direct"),
             "POST", "/v1/memories/42/correct",
             {"collection": "notes", "text": "Dana uses Helix", "source": "direct"}),
            ("correct, with a speaker", OUTCOME,
             lambda c: c.correct("notes", 42, "I use Helix now", speaker="Dana"),
             "POST", "/v1/memories/42/correct",
             {"collection": "notes", "text": "I use Helix now", "speaker": "Dana"}),
            ("used, one id", dict(OUTCOME, decision="used", uses=1),
             lambda c: c.used("notes", MID, session_id="s3"),
             "POST", f"/v1/memories/{MID}/used", {"collection": "notes", "session_id": "s3"}),
            ("used, a batch", [],
             lambda c: c.used("notes", [MID, 9]),
             "POST", "/v1/memories/used", {"collection": "notes", "ids": [MID, 9]}),
            ("retrieve a text", [],
             lambda c: c.retrieve("notes", "what editor", limit=3, explain=False, filter={"must": []},
                                  with_payload=("text",)),
             "POST", "/v1/retrieve",
             {"collection": "notes", "text": "what editor", "limit": 3, "explain": False, "filter": {"must": []},
              "with_payload": ["text"]}),
            ("retrieve a vector", [],
             lambda c: c.retrieve("notes", vector=(0.25, 0.5), offset=2, score_threshold=0.1, using="dense",
                                  mode="off", include_archived=True),
             "POST", "/v1/retrieve",
             {"collection": "notes", "vector": [0.25, 0.5], "offset": 2, "score_threshold": 0.1, "using": "dense",
              "mode": "off", "include_archived": True}),
            ("retrieve as of an aware datetime: sent in UTC", [],
             lambda c: c.retrieve("notes", "where", at=dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))),
             "POST", "/v1/retrieve", {"collection": "notes", "text": "where", "at": "2026-06-01T10:00:00Z"}),
            ("retrieve as of a naive datetime: taken as UTC", [],
             lambda c: c.retrieve("notes", "where", at=dt.datetime(2026, 6, 1, 12, 0, 0, 500)),
             "POST", "/v1/retrieve", {"collection": "notes", "text": "where", "at": "2026-06-01T12:00:00.000500Z"}),
            ("retrieve as of an RFC 3339 string: sent as it is", [],
             lambda c: c.retrieve("notes", "where", at="2026-06-01T12:00:00+02:00", include_archived=True),
             "POST", "/v1/retrieve",
             {"collection": "notes", "text": "where", "at": "2026-06-01T12:00:00+02:00", "include_archived": True}),
            ("retrieve without counting accesses, no payload", [],
             lambda c: c.retrieve("notes", "what editor", count_access=False, with_payload=False),
             "POST", "/v1/retrieve",
             {"collection": "notes", "text": "what editor", "count_access": False, "with_payload": False}),
            ("history, the collection in the query", {"id": MID, "collection": "my notes", "payload": {}, "audit": []},
             lambda c: c.history("my notes", MID),
             "GET", f"/v1/memories/{MID}?collection=my+notes", None),
            ("stats", {"collection": "notes"},
             lambda c: c.stats("notes"), "GET", "/v1/stats?collection=notes", None),
            ("stats, exact", {"collection": "notes"},
             lambda c: c.stats("notes", exact=True), "GET", "/v1/stats?collection=notes&exact=true", None),
            ("forget a session, its id one path segment", FORGET,
             lambda c: c.forget_session("notes", "chat/7 a?b"),
             "DELETE", "/v1/sessions/chat%2F7%20a%3Fb?collection=notes", None),
            ("forget a memory", FORGET,
             lambda c: c.forget_memory("notes", MID),
             "DELETE", f"/v1/memories/{MID}?collection=notes", None),
            ("create a collection, its name one path segment, no body", CREATED,
             lambda c: c.create_collection("my notes/1"),
             "PUT", "/v1/collections/my%20notes%2F1", None),
        ]
        for name, result, call, method, path, body in cases:
            with self.subTest(name):
                self.stub.reply(result=result)
                call(self.client())
                got = self.stub.last()
                self.assertEqual((got.method, got.path, got.body), (method, path, body))
                if body is None:
                    self.assertNotIn("content-type", got.headers)
                else:
                    self.assertEqual(got.headers.get("content-type"), "application/json")

    def test_headers(self) -> None:
        cases = [
            ("none", {}, {}, ["api-key", "authorization", "x-tenant"]),
            ("api key", {"api_key": "k1"}, {"api-key": "k1"}, ["authorization"]),
            ("bearer", {"bearer_token": "t1"}, {"authorization": "Bearer t1"}, ["api-key"]),
            ("tenant header", {"tenant_header": "X-Tenant", "tenant": "alice"}, {"x-tenant": "alice"}, ["api-key"]),
            ("extra headers", {"headers": {"X-Trace": "abc"}, "api_key": "k"}, {"x-trace": "abc", "api-key": "k"}, []),
        ]
        for name, kw, want, absent in cases:
            with self.subTest(name):
                self.stub.reply(result={"collection": "c"})
                self.client(**kw).stats("c")
                h = self.stub.last().headers
                for k, v in want.items():
                    self.assertEqual(h.get(k), v, k)
                for k in absent:
                    self.assertNotIn(k, h)
                self.assertEqual(h.get("user-agent"), "memrank-python/" + memrank.__version__)
                self.assertEqual(h.get("accept"), "application/json")


class ConcurrencyTest(StubTest):
    def test_one_client_many_threads(self) -> None:
        self.stub.reply(result={"collection": "c", "memories": 3})
        c = self.client(api_key="k")
        with ThreadPoolExecutor(max_workers=8) as pool:
            got = list(pool.map(lambda _: c.stats("c").memories, range(64)))
        self.assertEqual(got, [3] * 64)
        self.assertEqual(len(self.stub.seen), 64)


class AnswersTest(StubTest):
    def test_outcome(self) -> None:
        raw = dict(OUTCOME, decision="corrected", superseded="a", merged=["b"], flags=["recurring_event"],
                   attribution={"attribution": "reported", "from": "heuristic", "capped": True}, confidence=None,
                   judge={"verdict": "same", "cached": False}, warnings=["below the retrieval gate"], future_field=1)
        self.stub.reply(result=raw)
        o = self.client().observe("notes", "t")
        self.assertEqual(
            (o.decision, o.memory_id, o.confidence, o.superseded, o.merged, o.flags, o.created_collection, o.uses),
            ("corrected", MID, None, "a", ["b"], ["recurring_event"], True, None))
        self.assertEqual(o.warnings, ["below the retrieval gate"])
        self.stub.reply(result=OUTCOME)
        self.assertEqual(self.client().observe("notes", "t").warnings, [])
        self.assertEqual(o.judge, {"verdict": "same", "cached": False})
        self.assertEqual(o.attribution["from"], "heuristic")
        self.assertEqual(o.raw["future_field"], 1)

    def test_used_batch(self) -> None:
        self.stub.reply(result=[{"memory_id": MID, "outcome": dict(OUTCOME, decision="used", uses=2)},
                                {"memory_id": "9", "error": "not_found"}])
        a, b = self.client().used("notes", [MID, 9])
        self.assertEqual((a.memory_id, a.error, a.outcome.decision, a.outcome.uses), (MID, None, "used", 2))
        self.assertEqual((b.memory_id, b.error, b.outcome), ("9", "not_found", None))

    def test_retrieval(self) -> None:
        x = {"confidence": 0.9, "freshness": 0.8, "freshness_weight": 0.7, "focus": 0.5, "freshness_factor": 0.93,
             "days_to_archive": None, "within_decay_floor": True, "access_weight": 0.02, "access_boost": 1.01}
        doc = {
            "result": [{"id": 1015, "score": 0.3768, "base_score": 0.4, "weight": 0.3768, "guard": "relevant",
                        "confidence": 0.9, "freshness": 0.8, "freshness_factor": 0.93, "access_count": 2,
                        "access_boost": 1.01, "tier": "dormant", "stored_tier": "active", "bucket": "high",
                        "retrievable": True, "protected": False, "render": True, "below_gate": True,
                        "folded_ids": [7], "dedup": "vector", "judge_consulted": False, "problems": [],
                        "payload": {"text": "Lives in Lisbon"}, "explanation": x}],
            "status": "ok", "time": 0.01, "reranked": True, "mode": "rerank", "detection": "has an audit companion",
            "guard": {"applied": True, "relevant": 1, "beyond": 0, "folded": 1, "focus": 0.5},
            "dropped": [{"id": 3, "reason": "superseded", "base_score": 0.3}], "at": "2026-06-01T10:00:00Z",
        }
        self.stub.reply(result=doc, envelope=False)
        r = self.client().retrieve("notes", "where")
        self.assertEqual((r.reranked, r.mode, len(r), r.dropped[0]["reason"]), (True, "rerank", 1, "superseded"))
        self.assertEqual((r.at, r.empty, r.guard["folded"], r.guard["focus"]), ("2026-06-01T10:00:00Z", None, 1, 0.5))
        m = r[0]
        self.assertEqual((m.id, m.text, m.folded_ids, m.dedup, m.tier, m.stored_tier), (1015, "Lives in Lisbon", [7], "vector", "dormant", "active"))
        self.assertEqual((m.freshness_factor, m.below_gate, m.retrievable), (0.93, True, True))
        self.assertEqual(m.explanation, x)
        self.assertEqual([x.id for x in r], [1015])

    def test_an_empty_retrieval(self) -> None:
        doc = {"result": [], "status": "ok", "time": 0.01, "reranked": True, "mode": "rerank", "detection": "d",
               "guard": None, "dropped": [{"id": 3, "reason": "superseded", "base_score": 0.3}],
               "empty": "all 1 candidates were left out: 1 superseded"}
        self.stub.reply(result=doc, envelope=False)
        r = self.client().retrieve("notes", "where")
        self.assertEqual((len(r), r.at, r.empty), (0, None, "all 1 candidates were left out: 1 superseded"))

    def test_history_and_stats(self) -> None:
        self.stub.reply(result={"id": MID, "collection": "c",
                                "payload": {"text": "t", "retrievable": False, "superseded_by": "n"},
                                "audit": [{"reason": "insert", "old": 0, "new": 0.7, "decision": "inserted"},
                                          {"reason": "superseded", "related": "n", "forgotten": True}]})
        h = self.client().history("c", MID)
        self.assertEqual((h.text, h.retrievable, h.superseded_by), ("t", False, "n"))
        self.assertEqual([(a.reason, a.related, a.forgotten) for a in h.audit],
                         [("insert", None, False), ("superseded", "n", True)])
        self.stub.reply(result={"collection": "c", "method": "counted", "memories": 3, "average_confidence": None,
                                "histogram": [0] * 10, "judge": {"cache_hit_rate": None}})
        s = self.client().stats("c")
        self.assertEqual((s.memories, s.average_confidence, len(s.histogram), s.buckets), (3, None, 10, {}))

    def test_created_collection(self) -> None:
        self.stub.reply(result=dict(CREATED, created=False, existed=True, future_field=1))
        c = self.client().create_collection("notes")
        self.assertEqual((c.collection, c.created, c.existed, c.model, c.dimensions, c.distance, c.audit_collection),
                         ("notes", False, True, "memrank-local-sem-v1:384", 384, "Cosine", "notes_memrank_audit"))
        self.assertEqual(c.raw["future_field"], 1)

    def test_embed(self) -> None:
        # Values a float32 holds exactly, and ones it rounds: each comes
        # back as the float32 the server sent, not a decimal's double.
        f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]  # noqa: E731
        vecs = [[0.1, -2.5, 1e-30], [3.141592653589793, 0.0, -0.0]]
        want = [[f32(x) for x in v] for v in vecs]
        self.stub.reply(result=embeddings(*vecs, order=[1, 0]), envelope=False)
        got = self.client().embed(["a", "b"], model="m", dimensions=3)
        self.assertEqual(got, want)
        self.assertTrue(all(type(x) is float for v in got for x in v))
        self.assertEqual(struct.pack("<d", got[1][2]), struct.pack("<d", -0.0))
        seen = self.stub.last()
        self.assertEqual((seen.method, seen.path, seen.body),
                         ("POST", "/v1/embeddings", {"model": "m", "input": ["a", "b"], "encoding_format": "base64", "dimensions": 3}))
        self.stub.reply(result=embeddings(vecs[0]), envelope=False)
        self.assertEqual(self.client().embed("a"), [want[0]])
        self.assertEqual(self.stub.last().body, {"input": ["a"], "encoding_format": "base64"})

    def test_embed_malformed_answers(self) -> None:
        cases = [
            ("an envelope", {"result": [], "status": "ok"}, "not OpenAI's embeddings list"),
            ("fewer embeddings than texts", {"data": []}, "answered 0 embeddings for 1 texts"),
            ("not float32s", {"data": [{"index": 0, "embedding": "AAA="}]}, "malformed embedding (index 0)"),
            ("not base64", {"data": [{"index": 0, "embedding": "@@@@"}]}, "malformed embedding (index 0)"),
            ("numbers instead of base64", {"data": [{"index": 0, "embedding": [0.5]}]}, "malformed embedding"),
            ("an index out of range", {"data": [{"index": 1, "embedding": "AAAAAA=="}]}, "malformed embedding (index 1)"),
        ]
        for name, doc, words in cases:
            with self.subTest(name):
                self.stub.reply(body=json.dumps(doc).encode())
                with self.assertRaises(MemrankError) as cm:
                    self.client().embed(["x"])
                self.assertIs(type(cm.exception), MemrankError)
                self.assertEqual(cm.exception.status, 200)
                self.assertIn(words, cm.exception.message)

    def test_answers_that_are_not_json(self) -> None:
        cases = [
            ("not JSON", b"<html>ok</html>"),
            ("not an object", b"[1]"),
            ("no result", b'{"status":"ok"}'),
        ]
        for name, body in cases:
            with self.subTest(name):
                self.stub.reply(body=body)
                with self.assertRaises(MemrankError) as cm:
                    self.client().stats("c")
                self.assertEqual(cm.exception.status, 200)


class ErrorsTest(StubTest):
    def test_by_status(self) -> None:
        cases = [
            ("bad request", 400, BadRequestError),
            ("validation", 422, BadRequestError),
            ("unauthorized", 401, UnauthorizedError),
            ("forbidden", 403, ForbiddenError),
            ("not found", 404, NotFoundError),
            ("conflict", 409, ConflictError),
            ("rate limited", 429, RateLimitError),
            ("bad gateway", 502, UnavailableError),
            ("unavailable", 503, UnavailableError),
            ("gateway timeout", 504, UnavailableError),
            ("internal", 500, ServerError),
            ("not implemented", 501, ServerError),
            ("method not allowed: the request's fault", 405, BadRequestError),
            ("body too large", 413, BadRequestError),
            ("the store missed its deadline: retry", 408, UnavailableError),
            ("gone: no kind of its own", 410, MemrankError),
        ]
        for name, status, cls in cases:
            with self.subTest(name):
                self.stub.reply(status, body=b'{"status":{"error":"Not found: no such memory"},"time":0}')
                with self.assertRaises(MemrankError) as cm:
                    self.client().history("c", MID)
                e = cm.exception
                self.assertIs(type(e), cls)
                self.assertEqual((e.status, e.message), (status, "Not found: no such memory"))
                self.assertIn(str(status), str(e))

    def test_openai_error_shape(self) -> None:
        # /v1/embeddings answers its errors in OpenAI's shape; the message
        # is read as memrank's, the class from the status.
        cases = [
            ("an unknown model", 404, NotFoundError, "model_not_found", 'The model "gpt" does not exist'),
            ("a wrong size", 400, BadRequestError, "invalid_value", "m makes 384-dimensional vectors"),
            ("no key", 401, UnauthorizedError, None, "unauthenticated: must provide an API key"),
        ]
        for name, status, cls, code, message in cases:
            with self.subTest(name):
                doc = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}
                self.stub.reply(status, body=json.dumps(doc).encode())
                with self.assertRaises(MemrankError) as cm:
                    self.client().embed(["x"], model="gpt")
                self.assertIs(type(cm.exception), cls)
                self.assertEqual((cm.exception.status, cm.exception.message), (status, message))

    def test_exceptions_pickle(self) -> None:
        cases = [
            ("base", MemrankError(405, "m")),
            ("by status", NotFoundError(404, "gone")),
            ("rate limit", RateLimitError(429, "slow", 2.5)),
            ("no answer", memrank.ConnectionError("refused")),
        ]
        for name, e in cases:
            with self.subTest(name):
                got = pickle.loads(pickle.dumps(e))
                self.assertIs(type(got), type(e))
                self.assertEqual((got.status, got.message, str(got)), (e.status, e.message, str(e)))
                self.assertEqual(getattr(got, "retry_after", None), getattr(e, "retry_after", None))

    def test_retry_after(self) -> None:
        soon = email.utils.formatdate(time.time() + 120, usegmt=True)
        cases = [
            ("seconds", {"Retry-After": "7"}, 7.0, 7.0),
            ("an HTTP date", {"Retry-After": soon}, 100.0, 121.0),
            ("a date past", {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0, 0.0),
            ("absent", {}, None, None),
            ("unreadable", {"Retry-After": "soon"}, None, None),
        ]
        for name, headers, lo, hi in cases:
            with self.subTest(name):
                self.stub.reply(429, body=b'{"status":{"error":"rate limited"}}', headers=headers)
                with self.assertRaises(RateLimitError) as cm:
                    self.client().observe("c", "t")
                got = cm.exception.retry_after
                if lo is None:
                    self.assertIsNone(got)
                else:
                    self.assertTrue(lo <= got <= hi, got)

    def test_a_body_that_is_not_memranks(self) -> None:
        cases = [
            ("a proxy's page, quoted", b"<html><body>\n  <h1>502 Bad Gateway</h1>\n</body></html>",
             "<html><body> <h1>502 Bad Gateway</h1> </body></html>"),
            ("a long page, shortened", b"x" * 1000, "x" * 200),
            ("nothing: the reason phrase", b"", "Bad Gateway"),
            ("another JSON", b'{"error":"no"}', '{"error":"no"}'),
        ]
        for name, body, want in cases:
            with self.subTest(name):
                self.stub.reply(502, body=body, headers={"Content-Type": "text/html"})
                with self.assertRaises(UnavailableError) as cm:
                    self.client().stats("c")
                self.assertEqual(cm.exception.message, want)

    def test_retry_after_on_unavailable(self) -> None:
        self.stub.reply(503, body=b'{"status":{"error":"Service unavailable: not ready"}}', headers={"Retry-After": "2"})
        with self.assertRaises(UnavailableError) as cm:
            self.client().stats("c")
        self.assertEqual(cm.exception.retry_after, 2.0)

    def test_answer_size_is_bounded(self) -> None:
        self.stub.reply(result={"collection": "c" * 2000})
        with mock.patch.object(memrank.client, "_MAX_ANSWER", 1000):
            with self.assertRaises(MemrankError) as cm:
                self.client().stats("c")
        self.assertEqual(cm.exception.status, 200)
        self.assertIn("larger than 1000 bytes", cm.exception.message)
        self.assertEqual(self.client().stats("c").collection, "c" * 2000)

    def test_redirects_are_not_followed(self) -> None:
        elsewhere = Stub().start()
        self.addCleanup(elsewhere.close)
        for status in (301, 302, 303, 307, 308):
            with self.subTest(status):
                self.stub.reply(status, body=b"", headers={"Location": elsewhere.url + "/v1/observe"})
                with self.assertRaises(MemrankError) as cm:
                    self.client(api_key="secret-key", tenant_header="x-tenant", tenant="alice").observe("c", "t")
                self.assertIs(type(cm.exception), MemrankError)
                self.assertEqual(cm.exception.status, status)
                self.assertNotIn("secret-key", str(cm.exception))
                self.assertEqual([s.path for s in self.stub.seen], ["/v1/observe"])
                self.assertEqual(elsewhere.seen, [])

    def test_ids_that_would_change_the_route(self) -> None:
        # "." and ".." are path steps the server's router cleans away:
        # /v1/memories/../confirm would be another route.
        for id in ("", ".", ".."):
            with self.subTest(repr(id)):
                self.stub.reply(result=OUTCOME)
                c = self.client()
                for call in (lambda: c.confirm("c", id), lambda: c.correct("c", id, "t"), lambda: c.used("c", id),
                             lambda: c.history("c", id), lambda: c.forget_memory("c", id),
                             lambda: c.forget_session("c", id), lambda: c.create_collection(id)):
                    with self.assertRaises(BadRequestError) as cm:
                        call()
                    self.assertEqual(cm.exception.status, 400)
                self.assertEqual(self.stub.seen, [])
        c.confirm("c", "..a")
        self.assertEqual(self.stub.last().path, "/v1/memories/..a/confirm")

    def test_timeout_bounds_the_whole_call(self) -> None:
        # A byte every 0.1 s never trips a 0.5 s socket timeout; the call's
        # deadline stops it all the same, in the headers or in the body.
        cases = [
            ("the body trickles", False),
            ("the headers trickle", True),
        ]
        for name, headers in cases:
            with self.subTest(name):
                self.stub.reply(result={"collection": "c" * 40}, trickle=0.1, trickle_headers=headers)
                start = time.monotonic()
                with self.assertRaises(memrank.ConnectionError) as cm:
                    self.client(timeout=0.5).stats("c")
                self.assertLess(time.monotonic() - start, 2.0)
                self.assertIn("no answer within 0.5s", cm.exception.message)

    def test_timeout(self) -> None:
        self.stub.reply(result={}, delay=1.0)
        start = time.monotonic()
        with self.assertRaises(memrank.ConnectionError) as cm:
            self.client(timeout=0.2).stats("c")
        self.assertLess(time.monotonic() - start, 0.9)
        self.assertEqual(cm.exception.status, 0)
        self.assertIn("no answer within 0.2s", cm.exception.message)

    def test_refused_connection(self) -> None:
        c = Client(f"http://127.0.0.1:{closed_port()}", api_key="sk-secret", timeout=5)
        with self.assertRaises(memrank.ConnectionError) as cm:
            c.observe("c", "t")
        e = cm.exception
        self.assertEqual(e.status, 0)
        self.assertIsInstance(e, ConnectionError)  # the built-in, too
        self.assertIsInstance(e, MemrankError)
        self.assertIn("refused", e.message)
        self.assertNotIn("sk-secret", str(e) + repr(e))


class TLSTest(unittest.TestCase):
    """https goes through the same deadline as http."""

    stub: Stub

    @classmethod
    def setUpClass(cls) -> None:
        cls.stub = Stub(tls=True).start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.stub.close()

    def test_https(self) -> None:
        self.stub.reply(result={"collection": "c", "memories": 3})
        c = Client(self.stub.url, api_key="k", timeout=5, ssl_context=client_tls())
        self.assertEqual(c.stats("c").memories, 3)
        self.assertEqual(self.stub.last().headers.get("api-key"), "k")

    def test_an_untrusted_certificate(self) -> None:
        self.stub.reply(result={"collection": "c"})
        with self.assertRaises(memrank.ConnectionError) as cm:
            Client(self.stub.url, timeout=5).stats("c")
        self.assertIn("CERTIFICATE_VERIFY_FAILED", cm.exception.message)

    def test_timeout_bounds_the_whole_call(self) -> None:
        self.stub.reply(result={"collection": "c" * 40}, trickle=0.1)
        start = time.monotonic()
        with self.assertRaises(memrank.ConnectionError) as cm:
            Client(self.stub.url, timeout=0.5, ssl_context=client_tls()).stats("c")
        self.assertLess(time.monotonic() - start, 2.0)
        self.assertIn("no answer within 0.5s", cm.exception.message)


class ConstructionTest(unittest.TestCase):
    def test_refused_arguments(self) -> None:
        cases = [
            ("not http", lambda: Client("ftp://h")),
            ("no host", lambda: Client("http://")),
            ("credentials in the URL", lambda: Client("http://u:p@h:6333")),
            ("a query", lambda: Client("http://h?x=1")),
            ("timeout 0", lambda: Client(timeout=0)),
            ("tenant without header", lambda: Client(tenant="alice")),
            ("header without tenant", lambda: Client(tenant_header="x-tenant")),
            ("a header the client sets", lambda: Client(api_key="a", headers={"API-Key": "b"})),
            ("a line break in a value", lambda: Client(api_key="a\r\nX: y")),
            ("a header value not Latin-1", lambda: Client(headers={"X-Name": "日本"})),
            ("a bad header name", lambda: Client(headers={"X Name": "v"})),
        ]
        for name, make in cases:
            with self.subTest(name):
                with self.assertRaises(ValueError) as cm:
                    make()
                self.assertNotIn("a\r\nX", str(cm.exception))

    def test_refused_values(self) -> None:
        c = Client(f"http://127.0.0.1:{closed_port()}")
        with self.assertRaisesRegex(ValueError, "timezone-aware"):
            c.observe("c", "t", observed_at=dt.datetime(2026, 1, 1))
        with self.assertRaisesRegex(ValueError, "NaN or infinity"):
            c.retrieve("c", vector=[float("nan")])
        with self.assertRaisesRegex(TypeError, "at: want an RFC 3339 string or a datetime, got int"):
            c.retrieve("c", "t", at=20260601)
        with self.assertRaisesRegex(ValueError, "at: .* outside years 1 to 9999"):
            c.retrieve("c", "t", at=dt.datetime(1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))))

    def test_repr_hides_credentials(self) -> None:
        c = Client("http://127.0.0.1:6333/", api_key="sk-1", bearer_token="tok-2", tenant_header="x-t", tenant="al")
        self.assertEqual(repr(c), "Client(url='http://127.0.0.1:6333', credentials=***, tenant_header='x-t')")
        self.assertEqual(c.url, "http://127.0.0.1:6333")

    def test_version_matches_pyproject(self) -> None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "pyproject.toml")
        with open(path, encoding="utf-8") as f:
            m = re.search(r'^version = "([^"]+)"', f.read(), re.M)
        self.assertIsNotNone(m)
        self.assertEqual(m.group(1), memrank.__version__)


if __name__ == "__main__":
    unittest.main()
