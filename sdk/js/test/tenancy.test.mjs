// The client's credentials against real servers with tenancy on: by API key
// (MEMRANK_TENANCY_URL; the api-key header and the bearer token) and by a
// trusted header (MEMRANK_TENANT_HEADER_URL). Each tenant sees only its own
// memories; wrong or missing credentials are the typed errors.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { ForbiddenError, MemrankClient, NotFoundError, UnauthorizedError } from "../dist/index.js";
import { freshCollection, keys, server } from "./helpers.mjs";

const byKey = server("MEMRANK_TENANCY_URL", "`memrank serve` with tenancy by API key (see helpers.mjs)");
const byHeader = server("MEMRANK_TENANT_HEADER_URL", "`memrank serve` with tenancy.header x-tenant (see helpers.mjs)");

/** Asserts that p rejects with an instance of cls of that status, whose message says nothing of secret. */
async function rejectsWith(p, cls, status, secret) {
  await assert.rejects(p, (err) => {
    assert.ok(err instanceof cls, `${err.name} (${err.status}): ${err.message}`);
    assert.equal(err.status, status);
    if (secret) {
      assert.ok(!err.message.includes(secret), `the error echoes the credential: ${err.message}`);
    }
    return true;
  });
}

describe("tenancy by API key", { skip: byKey.skip }, () => {
  const url = byKey.url;
  const alice = new MemrankClient({ baseUrl: url, apiKey: keys.alice });
  const bob = new MemrankClient({ baseUrl: url, bearerToken: keys.bob });
  const coll = freshCollection("sdk_js_tenancy");
  let id;

  it("a tenant's key writes and reads its own memories (api-key header)", async () => {
    const o = await alice.observe(coll, "Alice takes the night train to Vienna", { source: "direct", session_id: "a1" });
    assert.equal(o.decision, "inserted");
    id = o.memory_id;
    const h = await alice.history(coll, id);
    assert.equal(h.payload.text, "Alice takes the night train to Vienna");
    assert.equal(h.audit.length, 1);
    const r = await alice.retrieve(coll, "night train to Vienna");
    assert.deepEqual(r.results.map((m) => m.id), [id]);
    assert.equal(r.detection, "", "with tenancy on the detection rule is left out");
    const s = await alice.stats(coll);
    assert.equal(s.memories, 1);
  });

  it("another tenant (bearer token) sees none of it", async () => {
    await rejectsWith(bob.history(coll, id), NotFoundError, 404);
    const r = await bob.retrieve(coll, "night train to Vienna");
    assert.deepEqual(r.results, []);
    assert.equal((await bob.stats(coll)).memories, 0);
    const rep = await bob.forgetMemory(coll, id);
    assert.equal(rep.memories_deleted, 0, "bob deleted alice's memory");
    assert.equal((await alice.history(coll, id)).id, id);
  });

  it("a wrong key is UnauthorizedError and is never echoed", async () => {
    const secret = "sdk-key-mallory-0123456789";
    for (const client of [
      new MemrankClient({ baseUrl: url, apiKey: secret }),
      new MemrankClient({ baseUrl: url, bearerToken: secret }),
    ]) {
      await rejectsWith(client.observe(coll, "Mallory was here"), UnauthorizedError, 401, secret);
      await rejectsWith(client.stats(coll), UnauthorizedError, 401, secret);
    }
  });

  it("no credentials is UnauthorizedError", async () => {
    await rejectsWith(new MemrankClient({ baseUrl: url }).history(coll, id), UnauthorizedError, 401);
  });

  it("an administrator's key has no tenant: ForbiddenError", async () => {
    const admin = new MemrankClient({ baseUrl: url, apiKey: keys.admin });
    await rejectsWith(admin.observe(coll, "Root was here"), ForbiddenError, 403, keys.admin);
  });

  it("only an administrator's key makes a collection; a tenant's is ForbiddenError", async () => {
    const made = freshCollection("sdk_js_tenancy_made");
    await rejectsWith(alice.createCollection(made), ForbiddenError, 403, keys.alice);
    const admin = new MemrankClient({ baseUrl: url, apiKey: keys.admin });
    const c = await admin.createCollection(made);
    assert.deepEqual([c.collection, c.created, c.existed], [made, true, false]);
    const o = await alice.observe(made, "Alice reads Lem in Polish", { source: "direct" });
    assert.equal(o.decision, "inserted");
    assert.equal(o.created_collection, undefined);
  });

  it("a tenant's key embeds; a wrong key or none is UnauthorizedError, read from OpenAI's error shape", async () => {
    const [v] = await bob.embed(["Alice takes the night train to Vienna"]);
    assert.ok(v.length > 0);
    const secret = "sdk-key-mallory-0123456789";
    await rejectsWith(new MemrankClient({ baseUrl: url, apiKey: secret }).embed(["x"]), UnauthorizedError, 401, secret);
    await assert.rejects(new MemrankClient({ baseUrl: url }).embed(["x"]), (err) => {
      assert.ok(err instanceof UnauthorizedError, `${err.name}: ${err.message}`);
      assert.match(err.message, /must provide an API key/);
      return true;
    });
  });

  it("keys of two tenants in one request: ForbiddenError", async () => {
    const both = new MemrankClient({ baseUrl: url, apiKey: keys.alice, bearerToken: keys.bob });
    await rejectsWith(both.history(coll, id), ForbiddenError, 403);
  });
});

describe("tenancy by a trusted header", { skip: byHeader.skip }, () => {
  const url = byHeader.url;
  const as = (tenant) => new MemrankClient({ baseUrl: url, tenantHeader: { name: "X-Tenant", value: tenant } });
  const coll = freshCollection("sdk_js_header");

  it("the header's tenant owns what it writes", async () => {
    const carol = as("carol");
    const o = await carol.observe(coll, "Carol repairs vintage radios", { session_id: "c1" });
    assert.equal(o.decision, "inserted");
    assert.equal((await carol.history(coll, o.memory_id)).payload.text, "Carol repairs vintage radios");
    await rejectsWith(as("dave").history(coll, o.memory_id), NotFoundError, 404);
    await rejectsWith(as("dave").used(coll, o.memory_id), NotFoundError, 404);
  });

  it("no tenant header is ForbiddenError", async () => {
    await rejectsWith(new MemrankClient({ baseUrl: url }).observe(coll, "Nobody was here"), ForbiddenError, 403);
  });
});
