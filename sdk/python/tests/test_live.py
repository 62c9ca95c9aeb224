"""The client against a real memrank serve.

MEMRANK_URL: a `memrank serve --demo` (tenancy off), e.g.
http://127.0.0.1:6333. Each run writes to a new collection of its own and
reads the demo collection dana_memories.

MEMRANK_TENANCY_URL (optional): a serve with tenants by API key,
    MEMRANK_TENANCY__KEY=user_id
    MEMRANK_TENANCY__API_KEYS=sdkpy-key-alice=alice,sdkpy-key-bob=bob

MEMRANK_TENANT_HEADER_URL (optional): a serve taking the tenant from a
trusted header,
    MEMRANK_TENANCY__KEY=user_id MEMRANK_TENANCY__HEADER=x-tenant

Without them these tests are skipped (cmd/memrank's TestSDKPython starts all
three and runs them).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import struct
import unittest
import urllib.parse
import urllib.request
import uuid

import _stub  # noqa: F401 - puts this checkout's package on sys.path

import memrank
from memrank import (
    BadRequestError,
    Client,
    ForbiddenError,
    MemrankError,
    NotFoundError,
    UnauthorizedError,
)

URL = os.environ.get("MEMRANK_URL", "")
TENANCY_URL = os.environ.get("MEMRANK_TENANCY_URL", "")
TENANT_HEADER_URL = os.environ.get("MEMRANK_TENANT_HEADER_URL", "")
ALICE_KEY, BOB_KEY = "sdkpy-key-alice", "sdkpy-key-bob"

HOW = "start `memrank serve --demo` and set MEMRANK_URL (e.g. http://127.0.0.1:6333) to run the live tests"


def fresh_collection() -> str:
    return "sdkpy_" + uuid.uuid4().hex[:12]


def stored_vector(url: str, collection: str, id: str) -> list:
    """A stored point's vector, through Qdrant's REST API (memrank serves
    it on the same port)."""
    req = urllib.request.Request(
        f"{url}/collections/{urllib.parse.quote(collection, safe='')}/points",
        data=json.dumps({"ids": [id], "with_vector": True}).encode(),
        headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as resp:
        points = json.load(resp)["result"]
    assert len(points) == 1, points
    return points[0]["vector"]


def float32_bits(v) -> bytes:
    """v's values as float32s, for comparing bit for bit."""
    return struct.pack(f"<{len(v)}f", *v)


@unittest.skipUnless(URL, "MEMRANK_URL is not set: " + HOW)
class LiveTest(unittest.TestCase):
    def setUp(self) -> None:
        self.mr = Client(URL, timeout=30)
        self.coll = fresh_collection()

    def test_demo_retrieve(self) -> None:
        # The demo's first question and the memory memrank puts first
        # (internal/demo's Queries; the Go test passes them in).
        question = os.environ.get("DEMO_QUESTION", "what editor does Dana use")
        want = os.environ.get("DEMO_TOP", "Uses Neovim as her main editor")
        r = self.mr.retrieve("dana_memories", question)
        self.assertTrue(r.reranked)
        self.assertEqual(r.mode, "rerank")
        self.assertGreater(len(r), 1)
        top = r[0]
        self.assertIn(want, top.text)
        self.assertEqual(top.guard, "relevant")
        # The factors: the weight is their product (docs/scoring.md), and
        # the score is the weight.
        x = top.explanation
        self.assertIsNotNone(x)
        self.assertAlmostEqual(x["confidence"], top.confidence)
        self.assertAlmostEqual(x["freshness"], top.freshness)
        self.assertAlmostEqual(x["freshness_factor"], top.freshness_factor)
        self.assertAlmostEqual(x["focus"], r.guard["focus"])
        self.assertAlmostEqual(x["freshness_factor"], 1 - x["freshness_weight"] * x["focus"] * (1 - x["freshness"]), places=9)
        self.assertAlmostEqual(x["base"] * x["freshness_factor"] * x["access_boost"] * x["confidence_factor"], top.weight, places=6)
        self.assertIn("days_to_archive", x)
        self.assertIn("within_decay_floor", x)
        self.assertIsNone(r.at)
        for m in r:
            self.assertEqual(m.score, m.weight)
        scores = [m.score for m in r]
        self.assertEqual(scores, sorted(scores, reverse=True))
        self.assertEqual(r.guard["relevant"] + r.guard["beyond"], len(r))

    def test_demo_retrieve_with_a_filter_and_no_explanation(self) -> None:
        f = {"must": [{"key": "memory_type", "match": {"value": "relation"}}]}
        r = self.mr.retrieve("dana_memories", "who is in Dana's family", filter=f, limit=5, explain=False)
        self.assertGreater(len(r), 0)
        for m in r:
            self.assertEqual(m.payload["memory_type"], "relation", m.text)
            self.assertIsNone(m.explanation)
            self.assertIsNotNone(m.confidence)

    def test_memory_lifecycle(self) -> None:
        mr, coll = self.mr, self.coll
        text = "Priya drinks genmaicha every morning"
        first = mr.observe(coll, text, memory_type="preference", source="direct", session_id="s-obs", turn_id="1",
                           entities=["Priya", "genmaicha"], observation_id=coll + "-1")
        self.assertEqual(first.decision, "inserted")
        self.assertTrue(first.created_collection)
        self.assertFalse(first.replayed)
        self.assertTrue(0 < first.confidence < 1)
        mid = first.memory_id

        with self.subTest("an observation_id makes a retry safe"):
            again = mr.observe(coll, text, memory_type="preference", source="direct", session_id="s-obs",
                               turn_id="1", entities=["Priya", "genmaicha"], observation_id=coll + "-1")
            self.assertTrue(again.replayed)
            self.assertEqual((again.decision, again.memory_id), ("inserted", mid))

        with self.subTest("the same text again is a restatement of the same memory"):
            same = mr.observe(coll, "Priya drinks genmaicha every morning.", memory_type="preference",
                              source="direct", session_id="s-obs", turn_id="2")
            self.assertEqual((same.decision, same.memory_id, same.dedup_tier), ("restatement", mid, 1))

        with self.subTest("retrieve finds it, with its factors"):
            r = mr.retrieve(coll, "what tea does Priya drink", limit=5)
            self.assertTrue(r.reranked)
            self.assertEqual([m.id for m in r], [mid])
            self.assertEqual(r[0].text, text)
            x = r[0].explanation
            self.assertEqual(x["observations"], first.observations)
            self.assertAlmostEqual(x["confidence"], first.confidence)
            self.assertEqual(x["grounding"], "supported")
            self.assertEqual(x["tier"], "active")

        confirmed = mr.confirm(coll, mid, session_id="s-obs", turn_id="3")
        with self.subTest("confirm raises the confidence"):
            self.assertEqual((confirmed.decision, confirmed.memory_id), ("confirmed", mid))
            self.assertGreater(confirmed.confidence, first.confidence)
            self.assertEqual(confirmed.observations, first.observations + 1)

        with self.subTest("used counts uses, one id or a batch"):
            one = mr.used(coll, mid, session_id="s-obs")
            self.assertEqual((one.decision, one.uses), ("used", 1))
            unknown = str(uuid.uuid4())
            batch = mr.used(coll, [mid, unknown])
            self.assertEqual([(u.memory_id, u.error) for u in batch], [(mid, None), (unknown, "not_found")])
            self.assertEqual(batch[0].outcome.uses, 2)

        fixed = mr.correct(coll, mid, "Priya drinks sencha every morning", source="direct", session_id="s-fix")
        new = fixed.memory_id
        with self.subTest("correct supersedes the old memory"):
            self.assertEqual((fixed.decision, fixed.superseded), ("corrected", mid))
            self.assertNotEqual(new, mid)
            r = mr.retrieve(coll, "what tea does Priya drink", limit=5)
            self.assertEqual([m.id for m in r], [new])
            self.assertIn(mid, [d["id"] for d in r.dropped if d["reason"] == "superseded"])

        with self.subTest("history: the payload and the audit trail"):
            h = mr.history(coll, mid)
            self.assertEqual((h.id, h.collection, h.text), (mid, coll, text))
            self.assertEqual(h.superseded_by, new)
            self.assertFalse(h.retrievable)
            reasons = [a.reason for a in h.audit]
            self.assertEqual(reasons[0], "insert")
            for want in ("restatement", "confirm", "used", "superseded"):
                self.assertIn(want, reasons)
            self.assertEqual(h.audit[0].observation_id, coll + "-1")
            sup = next(a for a in h.audit if a.reason == "superseded")
            self.assertEqual((sup.related, sup.session_id, sup.decision), (new, "s-fix", "corrected"))
            self.assertEqual(mr.history(coll, new).text, "Priya drinks sencha every morning")

        with self.subTest("stats count the live and the superseded memory"):
            s = mr.stats(coll)
            self.assertEqual((s.collection, s.method, s.memories, s.superseded, s.archived), (coll, "counted", 1, 1, 0))
            self.assertEqual(sum(s.histogram), 1)
            self.assertEqual(sum(s.buckets.values()), 1)
            self.assertEqual(mr.stats(coll, exact=True).method, "scanned")

        with self.subTest("forgetting the correction's session deletes it and frees the old memory"):
            rep = mr.forget_session(coll, "s-fix")
            self.assertEqual((rep.collection, rep.memories_deleted, rep.memories_updated), (coll, 1, 1))
            with self.assertRaises(NotFoundError):
                mr.history(coll, new)
            self.assertTrue(mr.history(coll, mid).retrievable)
            self.assertEqual([m.id for m in mr.retrieve(coll, "what tea does Priya drink")], [mid])

        with self.subTest("forgetting the memory deletes it"):
            rep = mr.forget_memory(coll, mid)
            self.assertEqual(rep.memories_deleted, 1)
            self.assertGreater(rep.audit_redacted + rep.audit_deleted + rep.audit_kept, 0)
            with self.assertRaises(NotFoundError) as cm:
                mr.history(coll, mid)
            self.assertEqual(cm.exception.status, 404)
            self.assertEqual(mr.stats(coll).memories, 0)

    def test_retrieve_as_of_a_time(self) -> None:
        mr, coll = self.mr, self.coll
        then = dt.datetime(2025, 6, 1, tzinfo=dt.timezone.utc)
        oboe = mr.observe(coll, "Priya plays the oboe in an orchestra", source="direct", session_id="s-2025",
                          observed_at=dt.datetime(2025, 1, 10, 9, 0, tzinfo=dt.timezone.utc)).memory_id
        porto = mr.observe(coll, "Priya moved to Porto last month", source="direct", session_id="s-now").memory_id
        fixed = mr.correct(coll, oboe, "Priya plays the bassoon in an orchestra", session_id="s-now")
        q = "which instrument does Priya play"

        now = mr.retrieve(coll, q, limit=5)
        ids = [m.id for m in now]
        self.assertIn(fixed.memory_id, ids)
        self.assertNotIn(oboe, ids)

        with self.subTest("as of a time: later memories out, the later correction not yet applied"):
            r = mr.retrieve(coll, q, limit=5, at=then)
            self.assertEqual(r.at, "2025-06-01T00:00:00Z")
            self.assertEqual([m.id for m in r], [oboe])
            self.assertNotIn(porto, [m.id for m in r])
            self.assertLess(r[0].explanation["age_days"], 200)
            self.assertEqual(r[0].retrievable, True)

        with self.subTest("an RFC 3339 string, a naive datetime (UTC): the same time"):
            self.assertEqual(mr.retrieve(coll, q, at="2025-06-01T02:00:00+02:00").at, "2025-06-01T00:00:00Z")
            self.assertEqual(mr.retrieve(coll, q, at=dt.datetime(2025, 6, 1)).at, "2025-06-01T00:00:00Z")

        with self.subTest("a bad time is the server's 400"):
            with self.assertRaises(BadRequestError) as cm:
                mr.retrieve(coll, q, at="last spring")
            self.assertIn("at", cm.exception.message)

        with self.subTest("before anything was observed: empty"):
            r = mr.retrieve(coll, q, at="2020-01-01T00:00:00Z")
            self.assertEqual(len(r), 0)

    def test_speakers_keep_the_same_words_apart(self) -> None:
        # The same words from two people are two memories, each with its
        # speaker in the payload; from one person again, a restatement.
        mr, coll = self.mr, self.coll
        caroline = mr.observe(coll, "That's awesome!", source="direct", session_id="s1", speaker="Caroline")
        melanie = mr.observe(coll, "That's awesome!", source="direct", session_id="s2", speaker="Melanie")
        self.assertEqual((caroline.decision, melanie.decision), ("inserted", "inserted"))
        self.assertNotEqual(caroline.memory_id, melanie.memory_id)
        self.assertEqual(mr.history(coll, caroline.memory_id).payload.get("speaker"), "Caroline")
        self.assertEqual(mr.history(coll, melanie.memory_id).payload.get("speaker"), "Melanie")
        again = mr.observe(coll, "That's awesome!", source="direct", session_id="s3", speaker="Caroline")
        self.assertEqual((again.decision, again.memory_id), ("restatement", caroline.memory_id))
        fixed = mr.correct(coll, caroline.memory_id, "That's amazing!", source="direct", speaker="Caroline")
        self.assertEqual((fixed.decision, fixed.superseded), ("corrected", caroline.memory_id))
        self.assertEqual(mr.history(coll, fixed.memory_id).payload.get("speaker"), "Caroline")

    def test_an_observation_below_the_gate_warns(self) -> None:
        # Only its text: source weak_inference, stored below the retrieval
        # gate; the outcome says so, and a question it answers best still
        # finds it, flagged below_gate.
        o = self.mr.observe(self.coll, "Priya keeps two cats called Miso and Tofu")
        self.assertEqual(o.decision, "inserted")
        self.assertEqual(len(o.warnings), 1, o.warnings)
        self.assertIn("below the retrieval gate", o.warnings[0])
        r = self.mr.retrieve(self.coll, "what are the names of Priya's cats")
        self.assertEqual([m.id for m in r], [o.memory_id])
        self.assertTrue(r[0].below_gate)
        self.assertEqual(self.mr.observe(self.coll, "Priya's sister lives in Leeds", source="direct").warnings, [])

    def test_a_rejected_observation_is_a_decision(self) -> None:
        o = self.mr.observe(self.coll, "Priya owns a yacht", grounding="not_supported")
        self.assertEqual(o.decision, "rejected")
        self.assertTrue(o.reason)

    def test_errors(self) -> None:
        mr = self.mr
        mr.observe(self.coll, "Priya plays the cello")
        cases = [
            ("an unknown memory", lambda: mr.history(self.coll, str(uuid.uuid4())), NotFoundError, 404,
             "no such memory"),
            ("stats of an unknown collection", lambda: mr.stats(fresh_collection()), NotFoundError, 404, ""),
            ("confirming an unknown memory", lambda: mr.confirm(self.coll, 123456789), NotFoundError, 404, ""),
            ("forgetting in an unknown collection", lambda: mr.forget_memory(fresh_collection(), 1),
             NotFoundError, 404, ""),
            ("an unknown memory type", lambda: mr.observe(self.coll, "x y z", memory_type="bogus"),
             BadRequestError, 400, "memory_type"),
            ("a blank speaker", lambda: mr.observe(self.coll, "x y z", speaker="  "), BadRequestError, 400,
             "speaker"),
            ("a malformed id", lambda: mr.history(self.coll, "not-an-id"), BadRequestError, 400, "id"),
            ("a limit out of range", lambda: mr.retrieve(self.coll, "cello", limit=0), BadRequestError, 422,
             "limit"),
            ("neither text nor vector", lambda: mr.retrieve(self.coll), BadRequestError, 422, "vector or text"),
            ("a vector of another size", lambda: mr.retrieve("dana_memories", vector=[0.1, 0.2]),
             BadRequestError, 400, "dimension"),
        ]
        for name, call, cls, status, words in cases:
            with self.subTest(name):
                with self.assertRaises(cls) as cm:
                    call()
                self.assertEqual(cm.exception.status, status)
                self.assertIn(words, cm.exception.message)

    def test_forgetting_is_idempotent(self) -> None:
        # An unknown memory is nothing to delete (docs/forgetting.md): 200,
        # every count 0, so that one tenant learns nothing of another's.
        o = self.mr.observe(self.coll, "Priya collects stamps", session_id="s1")
        for name, call in [("an unknown memory", lambda: self.mr.forget_memory(self.coll, str(uuid.uuid4()))),
                           ("an unknown session", lambda: self.mr.forget_session(self.coll, "no-such-session"))]:
            with self.subTest(name):
                rep = call()
                self.assertEqual((rep.memories_deleted, rep.memories_updated, rep.audit_redacted), (0, 0, 0))
                self.assertEqual(rep.audit_policy, "redact")
        self.assertEqual(self.mr.history(self.coll, o.memory_id).text, "Priya collects stamps")

    def test_create_collection_and_embed(self) -> None:
        mr, coll = self.mr, self.coll
        made = mr.create_collection(coll)
        self.assertEqual((made.collection, made.created, made.existed, made.distance, made.audit_collection),
                         (coll, True, False, "Cosine", coll + "_memrank_audit"))
        self.assertRegex(made.model, r"^memrank-local-(sem|hash)-v1:\d+$")
        self.assertEqual(made.model.split(":")[1], str(made.dimensions))

        with self.subTest("again: the collection is found and kept"):
            again = mr.create_collection(coll)
            self.assertEqual((again.created, again.existed), (False, True))
            self.assertEqual((again.model, again.dimensions), (made.model, made.dimensions))
            self.assertEqual(mr.stats(coll).memories, 0)

        texts = ["Priya drinks genmaicha every morning", "Ωmega café ☕ costs €3"]
        stored = []
        for text in texts:
            o = mr.observe(coll, text, source="direct")
            self.assertEqual(o.decision, "inserted")
            self.assertFalse(o.created_collection)  # it was made already
            stored.append(stored_vector(URL, coll, o.memory_id))
        self.assertNotEqual(float32_bits(stored[0]), float32_bits(stored[1]))

        for kw in ({}, {"model": made.model}, {"model": made.model.split(":")[0], "dimensions": made.dimensions}):
            with self.subTest("embed equals what observe stored, bit for bit", **kw):
                got = mr.embed(texts, **kw)
                self.assertEqual(len(got), 2)
                for i, v in enumerate(got):
                    self.assertIsInstance(v, list)
                    self.assertEqual(len(v), made.dimensions)
                    # Every value is a float32's, exactly: no decimal rounding.
                    self.assertEqual(list(struct.unpack(f"<{len(v)}f", float32_bits(v))), v)
                    self.assertEqual(float32_bits(v), float32_bits(stored[i]), f"text {i}")
        self.assertEqual(mr.embed(texts[0]), mr.embed(texts)[:1])

        with self.subTest("an unknown model is a NotFoundError with the server's message"):
            with self.assertRaises(NotFoundError) as cm:
                mr.embed(texts, model="text-embedding-3-small")
            self.assertEqual(cm.exception.status, 404)
            self.assertTrue(cm.exception.message.startswith('The model "text-embedding-3-small" does not exist'),
                            cm.exception.message)

        with self.subTest("a size the model does not make, an empty text: BadRequestError"):
            with self.assertRaises(BadRequestError) as cm:
                mr.embed(texts, model=made.model, dimensions=7)
            self.assertIn("dimensions", cm.exception.message)
            with self.assertRaises(BadRequestError) as cm:
                mr.embed(["Priya", " "])
            self.assertIn("input[1]", cm.exception.message)

    def test_refused_connection(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with self.assertRaises(memrank.ConnectionError) as cm:
            Client(f"http://127.0.0.1:{port}", timeout=5).stats(self.coll)
        self.assertEqual(cm.exception.status, 0)


@unittest.skipUnless(TENANCY_URL, "MEMRANK_TENANCY_URL is not set: a serve with tenants by API key (see the module)")
class TenancyTest(unittest.TestCase):
    def test_tenants_by_api_key(self) -> None:
        coll = fresh_collection()
        alice = Client(TENANCY_URL, api_key=ALICE_KEY, timeout=30)
        bob = Client(TENANCY_URL, bearer_token=BOB_KEY, timeout=30)
        o = alice.observe(coll, "Alice keeps bees on her roof", session_id="a1")
        self.assertEqual(o.decision, "inserted")
        self.assertEqual(alice.history(coll, o.memory_id).payload.get("user_id"), "alice")
        self.assertEqual([m.id for m in alice.retrieve(coll, "does Alice keep bees")], [o.memory_id])

        with self.subTest("another tenant neither sees nor changes it"):
            with self.assertRaises(NotFoundError):
                bob.history(coll, o.memory_id)
            with self.assertRaises(NotFoundError):
                bob.confirm(coll, o.memory_id)
            self.assertEqual(len(bob.retrieve(coll, "does Alice keep bees")), 0)

        cases = [
            ("a wrong key", Client(TENANCY_URL, api_key="sdkpy-not-a-key"), UnauthorizedError, 401),
            ("a wrong bearer token", Client(TENANCY_URL, bearer_token="sdkpy-not-a-key"), UnauthorizedError, 401),
            ("no key", Client(TENANCY_URL), UnauthorizedError, 401),
            ("keys of two tenants", Client(TENANCY_URL, api_key=ALICE_KEY, bearer_token=BOB_KEY), ForbiddenError, 403),
        ]
        for name, c, cls, status in cases:
            with self.subTest(name):
                with self.assertRaises(cls) as cm:
                    c.history(coll, o.memory_id)
                self.assertEqual(cm.exception.status, status)
                self.assertNotIn(ALICE_KEY, str(cm.exception))
                self.assertNotIn("sdkpy-not-a-key", str(cm.exception))
                with self.assertRaises(cls):
                    c.observe(coll, "Mallory keeps wasps")
        self.assertEqual(alice.stats(coll).memories, 1)

        with self.subTest("a tenant's key embeds, but may not make a collection"):
            self.assertEqual(len(bob.embed(["Alice keeps bees on her roof"])), 1)
            with self.assertRaises(ForbiddenError) as cm:
                alice.create_collection(fresh_collection())
            self.assertEqual(cm.exception.status, 403)
            with self.assertRaises(UnauthorizedError) as cm:
                Client(TENANCY_URL).embed(["x"])
            self.assertIn("must provide an API key", cm.exception.message)


@unittest.skipUnless(TENANT_HEADER_URL, "MEMRANK_TENANT_HEADER_URL is not set: a serve with tenancy.header (see the module)")
class TenantHeaderTest(unittest.TestCase):
    def test_tenant_from_a_header(self) -> None:
        coll = fresh_collection()
        alice = Client(TENANT_HEADER_URL, tenant_header="x-tenant", tenant="alice")
        bob = Client(TENANT_HEADER_URL, tenant_header="X-Tenant", tenant="bob")
        o = alice.observe(coll, "Alice rides a green bicycle")
        self.assertEqual(alice.history(coll, o.memory_id).payload.get("user_id"), "alice")
        with self.assertRaises(NotFoundError):
            bob.history(coll, o.memory_id)
        with self.assertRaises(ForbiddenError) as cm:
            Client(TENANT_HEADER_URL).history(coll, o.memory_id)
        self.assertEqual(cm.exception.status, 403)
        self.assertIsInstance(cm.exception, MemrankError)


if __name__ == "__main__":
    unittest.main()
