// What the client sends and how it reads answers, against a loopback HTTP
// server that plays memrank: the requests (paths, bodies, credentials), the
// error class of every status, Retry-After, timeouts, aborts, and that
// credentials never show. Needs no memrank; the real server's answers are
// server.test.mjs's and tenancy.test.mjs's.

import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { inspect } from "node:util";

import {
  BadRequestError,
  ConflictError,
  ConnectionError,
  ForbiddenError,
  MAX_ANSWER_BYTES,
  MemrankClient,
  MemrankError,
  NotFoundError,
  RateLimitError,
  ServerError,
  UnauthorizedError,
  UnavailableError,
} from "../dist/index.js";

/** A loopback server whose answer each test sets; it records what it got. */
function fakeMemrank() {
  const fake = {
    requests: [],
    answer: (req, res) => reply(res, 200, { result: {}, status: "ok", time: 0 }),
    url: "",
  };
  const srv = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      fake.requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      fake.answer(req, res);
    });
  });
  fake.start = () =>
    new Promise((resolve) =>
      srv.listen(0, "127.0.0.1", () => {
        fake.url = `http://127.0.0.1:${srv.address().port}`;
        resolve();
      }),
    );
  fake.stop = () => {
    srv.closeAllConnections();
    return new Promise((resolve) => srv.close(resolve));
  };
  fake.last = () => fake.requests.at(-1);
  return fake;
}

function reply(res, status, body, headers = {}) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(text);
}

const outcome = { decision: "inserted", memory_id: "m-1", confidence: 0.5, observations: 0, dedup_tier: 0, judge: null, replayed: false };
const ok = (result) => (req, res) => reply(res, 200, { result, status: "ok", time: 0.001 });

describe("requests", () => {
  const fake = fakeMemrank();
  before(fake.start);
  after(fake.stop);

  it("each method calls its route with its body", async () => {
    const mr = new MemrankClient({ baseUrl: fake.url });
    fake.answer = ok(outcome);
    const at = new Date("2026-05-01T12:00:00.000Z");
    const cases = [
      {
        call: () => mr.observe("notes", "Dana uses Neovim", { source: "direct", observed_at: at, vector: new Float32Array([0.5, -1]), session_id: undefined, speaker: undefined }),
        want: ["POST", "/v1/observe", { collection: "notes", text: "Dana uses Neovim", source: "direct", observed_at: "2026-05-01T12:00:00.000Z", vector: [0.5, -1] }],
      },
      {
        call: () => mr.observe("notes", "I use Neovim", { speaker: "Dana" }),
        want: ["POST", "/v1/observe", { collection: "notes", text: "I use Neovim", speaker: "Dana" }],
      },
      {
        call: () => mr.confirm("notes", "m/1", { at, session_id: "s1" }),
        want: ["POST", "/v1/memories/m%2F1/confirm", { collection: "notes", at: "2026-05-01T12:00:00.000Z", session_id: "s1" }],
      },
      {
        call: () => mr.correct("notes", 42, "Dana uses Emacs", { turn_id: "t2", speaker: "Ann" }),
        want: ["POST", "/v1/memories/42/correct", { collection: "notes", text: "Dana uses Emacs", turn_id: "t2", speaker: "Ann" }],
      },
      {
        call: () => mr.used("notes", "m-1", { observation_id: "o1" }),
        want: ["POST", "/v1/memories/m-1/used", { collection: "notes", observation_id: "o1" }],
      },
      {
        call: () => mr.used("notes", ["m-1", 7]),
        want: ["POST", "/v1/memories/used", { collection: "notes", ids: ["m-1", 7] }],
      },
      {
        call: () => mr.retrieve("my notes", [1, 2], { limit: 3, filter: { must: [{ key: "k", match: { value: "v" } }] } }),
        want: ["POST", "/v1/retrieve", { collection: "my notes", limit: 3, filter: { must: [{ key: "k", match: { value: "v" } }] }, vector: [1, 2] }],
      },
      { call: () => mr.retrieve("notes", "text?"), want: ["POST", "/v1/retrieve", { collection: "notes", text: "text?" }] },
      {
        call: () => mr.retrieve("notes", "text?", { count_access: false, with_payload: ["text"], explain: false }),
        want: ["POST", "/v1/retrieve", { collection: "notes", text: "text?", count_access: false, with_payload: ["text"], explain: false }],
      },
      {
        // A Date is sent as its ISO string, in UTC.
        call: () => mr.retrieve("notes", "text?", { at: new Date("2026-06-01T12:00:00+02:00"), include_archived: true }),
        want: ["POST", "/v1/retrieve", { collection: "notes", text: "text?", at: "2026-06-01T10:00:00.000Z", include_archived: true }],
      },
      {
        // A string is sent as it is: the server reads it.
        call: () => mr.retrieve("notes", "text?", { at: "2026-06-01T12:00:00+02:00" }),
        want: ["POST", "/v1/retrieve", { collection: "notes", text: "text?", at: "2026-06-01T12:00:00+02:00" }],
      },
      { call: () => mr.history("my notes", "m 1"), want: ["GET", "/v1/memories/m%201?collection=my+notes", null] },
      { call: () => mr.stats("notes&x=1"), want: ["GET", "/v1/stats?collection=notes%26x%3D1", null] },
      { call: () => mr.stats("notes", { exact: true }), want: ["GET", "/v1/stats?collection=notes&exact=true", null] },
      { call: () => mr.forgetSession("notes", "s/1 ?"), want: ["DELETE", "/v1/sessions/s%2F1%20%3F?collection=notes", null] },
      { call: () => mr.forgetMemory("notes", 12), want: ["DELETE", "/v1/memories/12?collection=notes", null] },
    ];
    for (const { call, want } of cases) {
      await call();
      const got = fake.last();
      assert.deepEqual([got.method, got.url, got.body === "" ? null : JSON.parse(got.body)], want);
      assert.equal(got.headers["content-type"], got.body === "" ? undefined : "application/json", got.url);
      assert.equal(got.headers["accept"], "application/json");
    }
  });

  it("answers the envelope's result; retrieve's report beside it", async () => {
    const mr = new MemrankClient({ baseUrl: fake.url });
    fake.answer = ok(outcome);
    assert.deepEqual(await mr.observe("notes", "x"), outcome);
    const results = [{ id: 1, score: 0.9 }];
    fake.answer = (req, res) =>
      reply(res, 200, { result: results, status: "ok", time: 0.01, reranked: true, mode: "rerank", detection: "d", guard: null, dropped: [] });
    assert.deepEqual(await mr.retrieve("notes", "x"), { results, reranked: true, mode: "rerank", detection: "d", guard: null, dropped: [] });
    // As of a time: the echo; an empty answer's reason.
    fake.answer = (req, res) =>
      reply(res, 200, {
        result: [], status: "ok", time: 0.01, reranked: true, mode: "rerank", detection: "d", guard: null,
        dropped: [{ id: 3, reason: "superseded", base_score: 0.3 }], at: "2026-06-01T10:00:00Z",
        empty: "all 1 candidates were left out: 1 superseded",
      });
    const then = await mr.retrieve("notes", "x", { at: "2026-06-01T10:00:00Z" });
    assert.equal(then.at, "2026-06-01T10:00:00Z");
    assert.equal(then.empty, "all 1 candidates were left out: 1 superseded");
    assert.deepEqual(then.results, []);
  });

  it("createCollection puts the name as one path segment, with no body", async () => {
    const created = { collection: "my notes/1", created: true, existed: false, model: "m:4", dimensions: 4, distance: "Cosine", audit_collection: "my notes/1_memrank_audit" };
    fake.answer = ok(created);
    const got = await new MemrankClient({ baseUrl: fake.url }).createCollection("my notes/1");
    assert.deepEqual(got, created);
    const { method, url, body, headers } = fake.last();
    assert.deepEqual([method, url, body, headers["content-type"]], ["PUT", "/v1/collections/my%20notes%2F1", "", undefined]);
  });

  it("embed asks for base64 and decodes little-endian float32s exactly, by index", async () => {
    const vecs = [new Float32Array([0.1, -2.5, 1e-30]), new Float32Array([Math.PI, 0, -0])];
    const b64 = (v) => Buffer.from(v.buffer).toString("base64"); // little-endian, as the server writes them
    fake.answer = (req, res) =>
      reply(res, 200, {
        object: "list",
        // Out of order: the index places each one.
        data: [
          { object: "embedding", index: 1, embedding: b64(vecs[1]) },
          { object: "embedding", index: 0, embedding: b64(vecs[0]) },
        ],
        model: "m:3",
        usage: { prompt_tokens: 2, total_tokens: 2 },
      });
    const mr = new MemrankClient({ baseUrl: fake.url });
    const got = await mr.embed(["a", "b"], { model: "m", dimensions: 3 });
    assert.deepEqual(got, vecs.map((v) => Array.from(v)));
    assert.ok(Object.is(got[1][2], -0), "-0 keeps its sign");
    const { method, url, body } = fake.last();
    assert.deepEqual([method, url, JSON.parse(body)], ["POST", "/v1/embeddings", { input: ["a", "b"], encoding_format: "base64", model: "m", dimensions: 3 }]);
    // One text; no options: only the input and the format are sent.
    fake.answer = (req, res) => reply(res, 200, { object: "list", data: [{ object: "embedding", index: 0, embedding: b64(vecs[0]) }], model: "m:3" });
    assert.deepEqual(await mr.embed("a"), [Array.from(vecs[0])]);
    assert.deepEqual(JSON.parse(fake.last().body), { input: ["a"], encoding_format: "base64" });
  });

  it("sends the credentials and headers it was given, with its own winning a clash", async () => {
    fake.answer = ok(outcome);
    const mr = new MemrankClient({
      baseUrl: fake.url + "/gateway/memrank/",
      apiKey: "k-1",
      bearerToken: "tok-2",
      tenantHeader: { name: "X-Tenant", value: "alice" },
      headers: { "API-Key": "from-extras", "X-Trace": "t-9" },
    });
    await mr.stats("notes");
    const { url, headers } = fake.last();
    assert.equal(url, "/gateway/memrank/v1/stats?collection=notes");
    assert.equal(headers["api-key"], "k-1");
    assert.equal(headers["authorization"], "Bearer tok-2");
    assert.equal(headers["x-tenant"], "alice");
    assert.equal(headers["x-trace"], "t-9");
  });

  it("sends no credentials it was not given", async () => {
    fake.answer = ok(outcome);
    await new MemrankClient({ baseUrl: fake.url }).stats("notes");
    const { headers } = fake.last();
    assert.equal(headers["api-key"], undefined);
    assert.equal(headers["authorization"], undefined);
  });
});

describe("errors", () => {
  const fake = fakeMemrank();
  before(fake.start);
  after(fake.stop);
  const mr = () => new MemrankClient({ baseUrl: fake.url, apiKey: "secret-key-123", bearerToken: "secret-token-456" });
  const qdrantError = (status, text, headers) => (req, res) => reply(res, status, { status: { error: text }, time: 0 }, headers);

  for (const [status, cls] of [
    [400, BadRequestError],
    [422, BadRequestError],
    [401, UnauthorizedError],
    [403, ForbiddenError],
    [404, NotFoundError],
    [409, ConflictError],
    [429, RateLimitError],
    [502, UnavailableError],
    [503, UnavailableError],
    [504, UnavailableError],
    [500, ServerError],
    [501, ServerError],
    [507, ServerError],
    [405, BadRequestError],
    [413, BadRequestError],
    [408, UnavailableError], // the store missed its deadline: worth retrying
    [410, MemrankError],
  ]) {
    it(`${status} is ${cls.name}, with the server's text`, async () => {
      fake.answer = qdrantError(status, `the text of ${status}`);
      await assert.rejects(mr().observe("notes", "x"), (err) => {
        assert.equal(err.constructor, cls);
        assert.ok(err instanceof MemrankError);
        assert.equal(err.name, cls.name);
        assert.equal(err.status, status);
        assert.equal(err.message, `the text of ${status}`);
        return true;
      });
    });
  }

  for (const tt of [
    { name: "seconds", header: "7", want: 7 },
    { name: "an HTTP date", header: new Date(Date.now() + 60_000).toUTCString(), want: [58, 61] },
    { name: "a date past", header: new Date(Date.now() - 60_000).toUTCString(), want: 0 },
    { name: "absent", header: undefined, want: undefined },
    { name: "unreadable", header: "soon", want: undefined },
  ]) {
    it(`429's Retry-After: ${tt.name}`, async () => {
      fake.answer = qdrantError(429, "slow down", tt.header === undefined ? {} : { "retry-after": tt.header });
      await assert.rejects(mr().retrieve("notes", "x"), (err) => {
        assert.ok(err instanceof RateLimitError);
        if (Array.isArray(tt.want)) {
          assert.ok(err.retryAfter >= tt.want[0] && err.retryAfter <= tt.want[1], `retryAfter ${err.retryAfter}`);
        } else {
          assert.equal(err.retryAfter, tt.want);
        }
        return true;
      });
    });
  }

  it("a 503 of load shedding carries its Retry-After, as every error may", async () => {
    fake.answer = qdrantError(503, "overloaded", { "retry-after": "2" });
    await assert.rejects(mr().retrieve("notes", "x"), (err) => {
      assert.ok(err instanceof UnavailableError);
      assert.equal(err.retryAfter, 2);
      return true;
    });
    fake.answer = qdrantError(404, "gone");
    await assert.rejects(mr().retrieve("notes", "x"), (err) => err instanceof NotFoundError && err.retryAfter === undefined);
  });

  it("an answer past MAX_ANSWER_BYTES is refused, not read whole", async () => {
    let sent = 0;
    fake.answer = (req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(1 << 20, 0x20);
      const more = () => {
        while (sent <= MAX_ANSWER_BYTES + chunk.length && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once("drain", more);
            return;
          }
        }
        res.end();
      };
      res.on("error", () => {});
      more();
    };
    await assert.rejects(mr().stats("notes", {}, { timeoutMs: 20_000 }), (err) => {
      assert.equal(err.constructor, MemrankError);
      assert.equal(err.status, 200);
      assert.match(err.message, new RegExp(`^GET http://127\\.0\\.0\\.1:\\d+/v1/stats: the answer is larger than ${MAX_ANSWER_BYTES} bytes$`));
      return true;
    });
    assert.equal(MAX_ANSWER_BYTES, 64 * 1024 * 1024);
  });

  it("an error that is not memrank's JSON (a proxy's page) keeps its class", async () => {
    fake.answer = (req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<html>bad gateway</html>");
    };
    await assert.rejects(mr().stats("notes"), (err) => {
      assert.ok(err instanceof UnavailableError);
      assert.equal(err.status, 502);
      assert.match(err.message, /^HTTP 502 Bad Gateway/);
      return true;
    });
  });

  it("an error in OpenAI's shape (/v1/embeddings) is read as memrank's", async () => {
    fake.answer = (req, res) =>
      reply(res, 404, { error: { message: 'The model "gpt" does not exist', type: "invalid_request_error", param: "model", code: "model_not_found" } });
    await assert.rejects(mr().embed(["x"], { model: "gpt" }), (err) => {
      assert.equal(err.constructor, NotFoundError);
      assert.equal(err.status, 404);
      assert.equal(err.message, 'The model "gpt" does not exist');
      return true;
    });
    fake.answer = (req, res) => reply(res, 401, { error: { message: "Unauthorized: wrong key", type: "authentication_error", param: null, code: null } });
    await assert.rejects(mr().embed(["x"]), (err) => err instanceof UnauthorizedError && err.message === "Unauthorized: wrong key");
  });

  for (const tt of [
    { name: "an envelope", body: { result: [], status: "ok" }, text: /not OpenAI's embeddings list/ },
    { name: "fewer embeddings than texts", body: { data: [] }, text: /answered 0 embeddings for 1 texts/ },
    { name: "an embedding that is not base64 of float32s", body: { data: [{ index: 0, embedding: "AAA=" }] }, text: /malformed embedding \(index 0\)/ },
    { name: "numbers instead of base64", body: { data: [{ index: 0, embedding: [0.5] }] }, text: /malformed embedding/ },
    { name: "an index out of range", body: { data: [{ index: 1, embedding: "AAAAAA==" }] }, text: /malformed embedding \(index 1\)/ },
  ]) {
    it(`an embeddings answer with ${tt.name} is MemrankError`, async () => {
      fake.answer = (req, res) => reply(res, 200, tt.body);
      await assert.rejects(mr().embed(["x"]), (err) => {
        assert.equal(err.constructor, MemrankError);
        assert.equal(err.status, 200);
        assert.match(err.message, tt.text);
        return true;
      });
    });
  }

  it("a 200 that is not the envelope is MemrankError", async () => {
    fake.answer = (req, res) => reply(res, 200, "[1,2]");
    await assert.rejects(mr().stats("notes"), (err) => {
      assert.equal(err.constructor, MemrankError);
      assert.equal(err.status, 200);
      assert.match(err.message, /not memrank's JSON envelope/);
      return true;
    });
  });

  it("no answer in time is ConnectionError; so is a body that stalls", async () => {
    for (const answer of [
      () => {}, // never answers
      (req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"result":'); // headers, then nothing
      },
    ]) {
      fake.answer = answer;
      const start = Date.now();
      await assert.rejects(mr().stats("notes", {}, { timeoutMs: 150 }), (err) => {
        assert.ok(err instanceof ConnectionError, `${err.name}: ${err.message}`);
        assert.equal(err.status, 0);
        assert.match(err.message, /^GET http:\/\/127\.0\.0\.1:\d+\/v1\/stats: no answer within 150 ms$/);
        return true;
      });
      assert.ok(Date.now() - start < 5000, "the timeout did not bound the call");
    }
  });

  for (const tt of [
    { name: "a cause with a code", cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }), want: "ECONNRESET: socket hang up" },
    { name: "an AggregateError without a message", cause: Object.assign(new AggregateError([], ""), { code: "ECONNREFUSED" }), want: "ECONNREFUSED" },
    { name: "a cause whose message has the code", cause: Object.assign(new Error("connect ECONNREFUSED ::1:6333"), { code: "ECONNREFUSED" }), want: "connect ECONNREFUSED ::1:6333" },
    { name: "no cause", cause: undefined, want: "fetch failed" },
  ]) {
    it(`a transport failure is ConnectionError saying why: ${tt.name}`, async () => {
      const mr = new MemrankClient({
        baseUrl: "http://memrank.invalid:6333",
        fetch: async () => {
          throw new TypeError("fetch failed", { cause: tt.cause });
        },
      });
      await assert.rejects(mr.forgetSession("notes", "s1"), (err) => {
        assert.ok(err instanceof ConnectionError);
        assert.equal(err.status, 0);
        assert.equal(err.message, `DELETE http://memrank.invalid:6333/v1/sessions/s1: ${tt.want}`);
        assert.ok(err.cause instanceof TypeError);
        return true;
      });
    });
  }

  it("the caller's abort is thrown as it is", async () => {
    fake.answer = () => {};
    const ctl = new AbortController();
    const reason = new Error("the user went away");
    setTimeout(() => ctl.abort(reason), 50);
    await assert.rejects(mr().history("notes", "m-1", { signal: ctl.signal }), (err) => err === reason);
    const done = AbortSignal.abort(reason);
    await assert.rejects(mr().history("notes", "m-1", { signal: done }), (err) => err === reason);
  });

  it("credentials show nowhere: not in errors, inspect or JSON", async () => {
    fake.answer = qdrantError(401, "invalid API key");
    const client = mr();
    const err = await mr()
      .observe("notes", "x")
      .catch((e) => e);
    for (const shown of [err.message, String(err), inspect(err), inspect(client), JSON.stringify(client)]) {
      assert.ok(!shown.includes("secret-key-123") && !shown.includes("secret-token-456"), shown);
    }
  });
});

describe("redirects", () => {
  // A redirect would carry the api-key, the tenant header and (307, 308)
  // the body to the host it names: it is an error, and that host is sent
  // nothing.
  const fake = fakeMemrank();
  const elsewhere = fakeMemrank();
  before(() => Promise.all([fake.start(), elsewhere.start()]));
  after(() => Promise.all([fake.stop(), elsewhere.stop()]));

  for (const tt of [
    { name: "307 to another host", status: 307, to: () => `${elsewhere.url}/v1/observe`, shows: () => `${elsewhere.url}/v1/observe` },
    { name: "308 to another host", status: 308, to: () => `${elsewhere.url}/v1/observe`, shows: () => `${elsewhere.url}/v1/observe` },
    { name: "302 to a path", status: 302, to: () => "/v1/other", shows: () => `${fake.url}/v1/other` },
    { name: "301 with user information", status: 301, to: () => elsewhere.url.replace("http://", "http://someone:hunter2@") + "/x", shows: () => `${elsewhere.url}/x` },
  ]) {
    it(`${tt.name} is a MemrankError, not followed`, async () => {
      elsewhere.requests.length = 0;
      fake.answer = (req, res) => {
        res.writeHead(tt.status, { location: tt.to() });
        res.end();
      };
      const mr = new MemrankClient({ baseUrl: fake.url, apiKey: "secret-key-123", tenantHeader: { name: "x-tenant", value: "alice" } });
      await assert.rejects(mr.observe("notes", "Dana lives in Lisbon"), (err) => {
        assert.equal(err.constructor, MemrankError);
        assert.equal(err.status, tt.status);
        assert.ok(err.message.includes(`the server redirected to ${tt.shows()};`), err.message);
        assert.match(err.message, /memrank does not redirect/);
        assert.ok(!err.message.includes("secret-key-123") && !err.message.includes("hunter2"), err.message);
        return true;
      });
      assert.deepEqual(elsewhere.requests, []);
    });
  }
});

describe("ids", () => {
  // "." and ".." would be path steps: /v1/memories/../confirm is another
  // route once the URL is parsed. They and "" are refused before any request.
  const fake = fakeMemrank();
  before(fake.start);
  after(fake.stop);

  for (const id of ["", ".", ".."]) {
    it(`${JSON.stringify(id)} is a BadRequestError before any request`, async () => {
      fake.requests.length = 0;
      fake.answer = ok(outcome);
      const mr = new MemrankClient({ baseUrl: fake.url });
      for (const call of [
        () => mr.confirm("notes", id),
        () => mr.correct("notes", id, "x"),
        () => mr.used("notes", id),
        () => mr.history("notes", id),
        () => mr.forgetMemory("notes", id),
        () => mr.forgetSession("notes", id),
        () => mr.createCollection(id),
      ]) {
        await assert.rejects(call(), (err) => {
          assert.ok(err instanceof BadRequestError, `${err.name}: ${err.message}`);
          assert.equal(err.status, 400);
          return true;
        });
      }
      assert.deepEqual(fake.requests, []);
    });
  }

  it("an id with dots in it is one segment", async () => {
    fake.answer = ok(outcome);
    await new MemrankClient({ baseUrl: fake.url }).confirm("notes", "..a");
    assert.equal(fake.last().url, "/v1/memories/..a/confirm");
  });
});

describe("construction", () => {
  for (const tt of [
    { name: "credentials in the URL", opts: { baseUrl: "http://user:pw@127.0.0.1:6333" }, err: /must not carry credentials/, hides: "pw" },
    { name: "not a URL", opts: { baseUrl: "127.0.0.1:6333 x" }, err: /not a URL/ },
    { name: "another scheme", opts: { baseUrl: "ftp://127.0.0.1" }, err: /http or https/ },
    { name: "a query", opts: { baseUrl: "http://127.0.0.1:6333/?k=v" }, err: /query/ },
    { name: "a zero timeout", opts: { timeoutMs: 0 }, err: /timeoutMs/ },
    { name: "a timeout that is not a number", opts: { timeoutMs: NaN }, err: /timeoutMs/ },
  ]) {
    it(`refuses ${tt.name}`, () => {
      assert.throws(
        () => new MemrankClient(tt.opts),
        (err) => {
          assert.match(err.message, tt.err);
          assert.ok(!tt.hides || !err.message.includes(tt.hides));
          return true;
        },
      );
    });
  }

  it("defaults to memrank serve's address and 30 s", () => {
    const mr = new MemrankClient();
    assert.equal(mr.baseUrl, "http://127.0.0.1:6333");
    assert.equal(mr.timeoutMs, 30_000);
    assert.equal(new MemrankClient({ baseUrl: "https://memrank.example/api/" }).baseUrl, "https://memrank.example/api");
  });

  it("uses the fetch it is given", async () => {
    const seen = [];
    const mr = new MemrankClient({
      baseUrl: "http://memrank.invalid",
      fetch: async (url, init) => {
        seen.push([url, init.method]);
        return new Response(JSON.stringify({ result: outcome, status: "ok", time: 0 }), { status: 200 });
      },
    });
    assert.deepEqual(await mr.confirm("notes", "m-1"), outcome);
    assert.deepEqual(seen, [["http://memrank.invalid/v1/memories/m-1/confirm", "POST"]]);
  });
});
