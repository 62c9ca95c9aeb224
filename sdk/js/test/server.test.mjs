// The client against a real `memrank serve --demo` (MEMRANK_URL): the write
// path from observation to forgetting on a fresh collection, retrieve on the
// demo collection, and the errors the server answers.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  BadRequestError,
  ConnectionError,
  MemrankClient,
  MemrankError,
  NotFoundError,
} from "../dist/index.js";
import { closedPort, freshCollection, server, unknownId } from "./helpers.mjs";

const { url, skip } = server("MEMRANK_URL", "`memrank serve --demo`");

describe("the write path, observe to forget", { skip }, () => {
  const mr = new MemrankClient({ baseUrl: url, timeoutMs: 20_000 });
  const coll = freshCollection("sdk_js");
  const text = "Dana keeps bees on the roof of her building";
  let id; // the observed memory
  let first; // its first outcome
  let fixed; // the correction's outcome

  it("observe inserts a new memory and creates the collection", async () => {
    first = await mr.observe(coll, text, {
      source: "speculation",
      memory_type: "fact",
      session_id: "s1",
      turn_id: "t1",
      entities: ["Dana", "bees"],
      observed_at: new Date(Date.now() - 3 * 3600_000),
      observation_id: "obs-1",
    });
    id = first.memory_id;
    assert.equal(first.decision, "inserted");
    assert.equal(first.created_collection, true);
    assert.equal(first.observations, 0);
    assert.equal(first.dedup_tier, 0);
    assert.equal(first.replayed, false);
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-/, "a UUIDv5 memory id");
    assert.ok(first.confidence > 0 && first.confidence < 1, `confidence ${first.confidence}`);
    // A speculation is stored below the retrieval gate: the outcome says so.
    assert.ok(first.warnings?.some((w) => w.includes("below the retrieval gate")), `warnings ${JSON.stringify(first.warnings)}`);
  });

  it("the same observation_id is replayed, nothing changed", async () => {
    const again = await mr.observe(coll, text, { source: "speculation", session_id: "s1", observation_id: "obs-1" });
    assert.equal(again.replayed, true);
    assert.equal(again.memory_id, id);
    assert.equal(again.decision, "inserted");
    assert.equal(again.confidence, first.confidence);
  });

  it("retrieve finds it, with every factor explained", async () => {
    const r = await mr.retrieve(coll, "who keeps bees on the roof");
    assert.equal(r.reranked, true);
    assert.equal(r.mode, "rerank");
    const hit = r.results.find((m) => m.id === id);
    assert.ok(hit, `the memory is not among ${JSON.stringify(r.results.map((m) => m.id))}`);
    assert.equal(hit.payload.text, text);
    assert.equal(hit.confidence, first.confidence);
    assert.equal(hit.retrievable, true);
    const x = hit.explanation;
    assert.ok(x, "explain is on by default");
    assert.equal(x.unscored, false);
    assert.equal(x.observations, 0);
    assert.equal(x.confidence, first.confidence);
    for (const k of ["freshness", "freshness_weight", "focus", "freshness_factor", "access_weight", "access_boost", "base", "weight", "half_life", "age_days"]) {
      assert.equal(typeof x[k], "number", `explanation.${k} = ${x[k]}`);
    }
    assert.equal(typeof x.within_decay_floor, "boolean");
    assert.ok("days_to_archive" in x, "explanation.days_to_archive");
    assert.equal(hit.freshness_factor, x.freshness_factor);
    assert.equal(typeof r.guard?.applied, "boolean");
    assert.equal(typeof r.guard?.folded, "number");
    assert.equal(r.at, undefined);
  });

  it("retrieve as of a time before the memory was observed leaves it out, and echoes the time", async () => {
    const r = await mr.retrieve(coll, "who keeps bees on the roof", { at: new Date("2020-01-01T00:00:00Z") });
    assert.equal(r.at, "2020-01-01T00:00:00Z");
    assert.ok(!r.results.some((m) => m.id === id), `the memory is in the answer as of 2020: ${JSON.stringify(r.results.map((m) => m.id))}`);
    const now = await mr.retrieve(coll, "who keeps bees on the roof", { at: new Date(Date.now() + 60_000).toISOString() });
    assert.ok(now.results.some((m) => m.id === id), "the memory is not in the answer as of a minute from now");
  });

  it("retrieve without explain or payload leaves them out", async () => {
    const r = await mr.retrieve(coll, text, { explain: false, with_payload: false, limit: 1 });
    assert.equal(r.results.length, 1);
    assert.equal(r.results[0].id, id);
    assert.equal(r.results[0].explanation, undefined);
    assert.equal(r.results[0].payload, undefined);
  });

  it("confirm adds one to n and raises the confidence", async () => {
    const o = await mr.confirm(coll, id, { session_id: "s2", turn_id: "t9", at: new Date() });
    assert.equal(o.decision, "confirmed");
    assert.equal(o.memory_id, id);
    assert.equal(o.observations, 1);
    assert.ok(o.confidence > first.confidence, `confidence ${first.confidence} -> ${o.confidence}`);
    const h = await mr.history(coll, id);
    assert.equal(h.payload.source, "confirmed");
    assert.equal(h.payload.observations, 1);
    assert.equal(h.payload.confidence, o.confidence);
  });

  it("used counts a use, once per observation_id; the batch marks unknown ids", async () => {
    const o = await mr.used(coll, id, { observation_id: "use-1", session_id: "s2" });
    assert.equal(o.decision, "used");
    assert.equal(o.uses, 1);
    const again = await mr.used(coll, id, { observation_id: "use-1", session_id: "s2" });
    assert.equal(again.replayed, true);
    assert.equal(again.uses, 1);
    const batch = await mr.used(coll, [id, unknownId]);
    assert.deepEqual(batch.map((u) => [u.memory_id, u.outcome?.decision, u.outcome?.uses, u.error]), [
      [id, "used", 2, undefined],
      [unknownId, undefined, undefined, "not_found"],
    ]);
  });

  it("correct supersedes the memory with the correction", async () => {
    fixed = await mr.correct(coll, id, "Dana keeps bees in her garden, not on the roof", { session_id: "s3" });
    assert.equal(fixed.decision, "corrected");
    assert.equal(fixed.superseded, id);
    assert.notEqual(fixed.memory_id, id);
    const old = await mr.history(coll, id);
    assert.equal(old.payload.superseded_by, fixed.memory_id);
    assert.equal(old.payload.retrievable, false);
    const r = await mr.retrieve(coll, "where does Dana keep bees", { limit: 5 });
    const ids = r.results.map((m) => m.id);
    assert.ok(ids.includes(fixed.memory_id), `the correction is not retrieved: ${ids}`);
    assert.ok(!ids.includes(id), "the superseded memory is still retrieved");
  });

  it("history is the stored payload and the audit trail, oldest first", async () => {
    const h = await mr.history(coll, id);
    assert.equal(h.id, id);
    assert.equal(h.collection, coll);
    assert.equal(h.payload.text, text);
    assert.deepEqual(h.payload.session_ids, ["s1", "s2"]);
    assert.deepEqual(
      h.audit.map((a) => [a.reason, a.decision, a.session_id]),
      [
        ["insert", "inserted", "s1"],
        ["confirm", "confirmed", "s2"],
        ["used", "used", "s2"],
        ["used", "used", ""],
        ["superseded", "corrected", "s3"],
      ],
    );
    const [insert, confirm] = h.audit;
    assert.equal(insert.observation_id, "obs-1");
    assert.equal(insert.new, first.confidence);
    assert.deepEqual([confirm.old_n, confirm.new_n], [0, 1]);
    assert.equal(h.audit.at(-1).related, fixed.memory_id);
  });

  it("stats counts the memory and the superseded one", async () => {
    const s = await mr.stats(coll);
    assert.equal(s.collection, coll);
    assert.equal(s.method, "counted");
    assert.equal(s.memories, 1);
    assert.equal(s.superseded, 1);
    assert.equal(s.histogram.length, 10);
    assert.equal(s.histogram.reduce((a, b) => a + b, 0), 1);
    assert.equal(s.types.fact, 1);
    const exact = await mr.stats(coll, { exact: true });
    assert.equal(exact.method, "scanned");
    assert.equal(exact.memories, 1);
  });

  it("forgetSession removes the session's evidence: the correction goes, the memory comes back", async () => {
    const rep = await mr.forgetSession(coll, "s3");
    assert.equal(rep.collection, coll);
    assert.equal(rep.memories_deleted, 1);
    assert.equal(rep.memories_updated, 1);
    assert.ok(rep.audit_redacted + rep.audit_deleted + rep.audit_kept > 0, JSON.stringify(rep));
    await assert.rejects(mr.history(coll, fixed.memory_id), NotFoundError);
    const h = await mr.history(coll, id);
    assert.equal(h.payload.retrievable, true);
    const again = await mr.forgetSession(coll, "s3");
    assert.deepEqual([again.memories_updated, again.memories_deleted], [0, 0]);
  });

  it("forgetMemory deletes it; a second call finds nothing", async () => {
    const rep = await mr.forgetMemory(coll, id);
    assert.equal(rep.memories_deleted, 1);
    await assert.rejects(mr.history(coll, id), (err) => {
      assert.ok(err instanceof NotFoundError);
      assert.equal(err.status, 404);
      return true;
    });
    const again = await mr.forgetMemory(coll, id);
    assert.deepEqual([again.memories_updated, again.memories_deleted], [0, 0]);
    const s = await mr.stats(coll);
    assert.equal(s.memories, 0);
  });
});

describe("speakers: who said it", { skip }, () => {
  const mr = new MemrankClient({ baseUrl: url, timeoutMs: 20_000 });
  const coll = freshCollection("sdk_js_speaker");

  it("the same words from two speakers are two memories, each with its speaker", async () => {
    const caroline = await mr.observe(coll, "That's awesome!", { source: "direct", session_id: "s1", speaker: "Caroline" });
    const melanie = await mr.observe(coll, "That's awesome!", { source: "direct", session_id: "s2", speaker: "Melanie" });
    assert.deepEqual([caroline.decision, melanie.decision], ["inserted", "inserted"]);
    assert.notEqual(caroline.memory_id, melanie.memory_id);
    assert.equal((await mr.history(coll, caroline.memory_id)).payload.speaker, "Caroline");
    assert.equal((await mr.history(coll, melanie.memory_id)).payload.speaker, "Melanie");

    const again = await mr.observe(coll, "That's awesome!", { source: "direct", session_id: "s3", speaker: "Caroline" });
    assert.deepEqual([again.decision, again.memory_id], ["restatement", caroline.memory_id]);

    const fixed = await mr.correct(coll, caroline.memory_id, "That's amazing!", { speaker: "Caroline" });
    assert.deepEqual([fixed.decision, fixed.superseded], ["corrected", caroline.memory_id]);
    assert.equal((await mr.history(coll, fixed.memory_id)).payload.speaker, "Caroline");
  });

  it("a blank speaker is BadRequestError naming the field", async () => {
    await assert.rejects(mr.observe(coll, "Dana likes figs", { speaker: "  " }), (err) => {
      assert.ok(err instanceof BadRequestError, `${err}`);
      assert.equal(err.status, 400);
      assert.match(err.message, /speaker/);
      return true;
    });
  });
});

describe("collections and embeddings", { skip }, () => {
  const mr = new MemrankClient({ baseUrl: url, timeoutMs: 20_000 });
  const coll = freshCollection("sdk_js_made");

  /** A stored point's vector, through Qdrant's REST API (memrank serves it on the same port). */
  async function storedVector(collection, id) {
    const res = await fetch(`${url}/collections/${encodeURIComponent(collection)}/points`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ids: [id], with_vector: true }),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.result.length, 1);
    return body.result[0].vector;
  }

  /** A vector's float32 bits, for comparing bit for bit. */
  const bits = (v) => Array.from(new Uint32Array(Float32Array.from(v).buffer));

  it("createCollection makes the collection, then finds it", async () => {
    const made = await mr.createCollection(coll);
    assert.deepEqual(made, {
      collection: coll,
      created: true,
      existed: false,
      model: made.model,
      dimensions: made.dimensions,
      distance: "Cosine",
      audit_collection: `${coll}_memrank_audit`,
    });
    assert.match(made.model, /^memrank-local-(sem|hash)-v1:\d+$/);
    assert.equal(made.model, `${made.model.split(":")[0]}:${made.dimensions}`);
    const again = await mr.createCollection(coll);
    assert.deepEqual(again, { ...made, created: false, existed: true });
    // Empty, but there: stats knows it; the first observation does not create it.
    assert.equal((await mr.stats(coll)).memories, 0);
    const o = await mr.observe(coll, "Dana grows tomatoes on her balcony", { source: "direct" });
    assert.equal(o.decision, "inserted");
    assert.equal(o.created_collection, undefined);
  });

  it("embed answers, bit for bit, the vectors observe stores", async () => {
    const texts = ["Dana uses Neovim", "Ωmega café ☕ costs €3"];
    const stored = [];
    for (const text of texts) {
      const { memory_id } = await mr.observe(coll, text, { source: "direct" });
      stored.push(await storedVector(coll, memory_id));
    }
    const { dimensions, model } = await mr.createCollection(coll);
    for (const opts of [{}, { model }, { model: model.split(":")[0], dimensions }]) {
      const got = await mr.embed(texts, opts);
      assert.equal(got.length, 2, JSON.stringify(opts));
      for (const [i, v] of got.entries()) {
        assert.ok(Array.isArray(v), "a vector is a number[]");
        assert.equal(v.length, dimensions);
        assert.ok(v.every((x) => Math.fround(x) === x), "every value is a float32, exact");
        assert.deepEqual(bits(v), bits(stored[i]), `text ${i} with ${JSON.stringify(opts)}`);
      }
    }
    assert.notDeepEqual(bits(stored[0]), bits(stored[1]));
    assert.deepEqual(await mr.embed(texts[0]), [(await mr.embed(texts))[0]]);
  });

  it("an unknown model is NotFoundError with the server's message", async () => {
    await assert.rejects(mr.embed(["Dana uses Neovim"], { model: "text-embedding-3-small" }), (err) => {
      assert.ok(err instanceof NotFoundError, `${err.name}: ${err.message}`);
      assert.equal(err.status, 404);
      assert.match(err.message, /^The model "text-embedding-3-small" does not exist on this server/);
      return true;
    });
  });

  it("a size the model does not make, and an empty text, are BadRequestError", async () => {
    const { model } = await mr.createCollection(coll);
    await assert.rejects(mr.embed(["x"], { model, dimensions: 7 }), (err) => {
      assert.ok(err instanceof BadRequestError, `${err.name}: ${err.message}`);
      assert.equal(err.status, 400);
      assert.match(err.message, /dimensions/);
      return true;
    });
    await assert.rejects(mr.embed(["Dana", " "]), (err) => err instanceof BadRequestError && /input\[1\]/.test(err.message));
  });
});

describe("retrieve on the demo collection", { skip }, () => {
  const mr = new MemrankClient({ baseUrl: url });

  // The demo's first question and the memory memrank puts first
  // (internal/demo's Queries; the Go test passes them in).
  const question = process.env.DEMO_QUESTION ?? "what editor does Dana use";
  const want = process.env.DEMO_TOP ?? "Uses Neovim as her main editor";

  it("answers the demo's first question with the memory the demo promises", async () => {
    const r = await mr.retrieve("dana_memories", question, { limit: 3 });
    assert.ok(String(r.results[0]?.payload?.text).includes(want), `first result: ${r.results[0]?.payload?.text}`);
    assert.equal(r.reranked, true);
    assert.equal(r.guard.applied, true);
    assert.equal(typeof r.embedder.model, "string");
    assert.ok(Array.isArray(r.dropped));
    const top = r.results[0];
    assert.equal(top.guard, "relevant");
    assert.equal(top.weight, top.explanation.weight);
    assert.equal(top.score, top.weight);
    const x = top.explanation;
    assert.ok(Math.abs(x.base * x.freshness_factor * x.access_boost * x.confidence_factor - top.weight) < 1e-9, JSON.stringify(x));
    assert.equal(x.focus, r.guard.focus);
    assert.ok(top.explanation.access_count > 0, "the demo memory has reads");
  });

  it("applies a filter and a payload selection", async () => {
    const r = await mr.retrieve("dana_memories", "what does Dana like", {
      limit: 5,
      filter: { must: [{ key: "memory_type", match: { value: "preference" } }] },
      with_payload: ["memory_type", "text"],
    });
    assert.ok(r.results.length > 0);
    for (const m of r.results) {
      assert.deepEqual(Object.keys(m.payload).sort(), ["memory_type", "text"]);
      assert.equal(m.payload.memory_type, "preference");
    }
  });

  it("takes a vector query (a Float32Array)", async () => {
    // The embedder is recorded as <model>:<dimensions>.
    const { embedder } = await mr.retrieve("dana_memories", "Dana", { limit: 1, explain: false });
    const dims = Number(embedder.model.split(":").at(-1));
    assert.ok(dims > 0, embedder.model);
    const r = await mr.retrieve("dana_memories", new Float32Array(dims).fill(0.05), { limit: 2, explain: false });
    assert.equal(r.reranked, true);
    assert.equal(r.results.length, 2);
  });
});

describe("errors the server answers", { skip }, () => {
  const mr = new MemrankClient({ baseUrl: url });

  for (const tt of [
    {
      name: "an unknown memory is NotFoundError",
      call: () => mr.history("dana_memories", unknownId),
      class: NotFoundError,
      status: 404,
      text: /no such memory/,
    },
    {
      name: "an unknown collection is NotFoundError",
      call: () => mr.forgetMemory(freshCollection("sdk_js_none"), unknownId),
      class: NotFoundError,
      status: 404,
      text: /no such memory or collection/,
    },
    {
      name: "an unknown grounding is BadRequestError naming the field",
      call: () => mr.observe("dana_memories", "Dana likes figs", { grounding: "maybe" }),
      class: BadRequestError,
      status: 400,
      text: /grounding/,
    },
    {
      name: "a malformed memory id is BadRequestError",
      call: () => mr.confirm("dana_memories", "not-an-id"),
      class: BadRequestError,
      status: 400,
      text: /id: want a memory id/,
    },
    {
      name: "a limit out of range is BadRequestError (422)",
      call: () => mr.retrieve("dana_memories", "Dana", { limit: 0 }),
      class: BadRequestError,
      status: 422,
      text: /limit: must be between 1 and 1000/,
    },
    {
      name: "a blank text is BadRequestError",
      call: () => mr.retrieve("dana_memories", "   "),
      class: BadRequestError,
      status: 422,
      text: /text/,
    },
  ]) {
    it(tt.name, async () => {
      await assert.rejects(tt.call(), (err) => {
        assert.ok(err instanceof tt.class, `${err.name}: ${err.message}`);
        assert.ok(err instanceof MemrankError);
        assert.equal(err.status, tt.status);
        assert.match(err.message, tt.text);
        return true;
      });
    });
  }

  it("a connection refused is ConnectionError (status 0)", async () => {
    const port = await closedPort();
    const down = new MemrankClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 5000 });
    await assert.rejects(down.stats("dana_memories"), (err) => {
      assert.ok(err instanceof ConnectionError, `${err.name}: ${err.message}`);
      assert.equal(err.status, 0);
      assert.match(err.message, /ECONNREFUSED/);
      assert.match(err.message, /GET http:\/\/127\.0\.0\.1:\d+\/v1\/stats/);
      return true;
    });
  });
});
