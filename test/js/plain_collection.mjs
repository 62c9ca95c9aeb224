// plain_collection.mjs drives memrank with the clients agents really use:
// Qdrant's official JS client and LangChain.js. It is given two REST base
// URLs of one store: DIRECT (the store itself, `memrank qdrant-compat
// --http`) and MEMRANK (`memrank serve --upstream` in front of it), makes
// the same calls through both, and prints one JSON object with everything it
// saw. It judges nothing: cmd/memrank's TestJSClients compares the two sides
// (plain collections must be served exactly as the store serves them; a
// memory collection must be re-ranked). It exits non-zero only when it
// cannot run at all, so that every difference reaches the Go test as data.
//
//   DIRECT=http://127.0.0.1:6335 MEMRANK=http://127.0.0.1:6333 node test/js/plain_collection.mjs
import { QdrantClient } from "@qdrant/js-client-rest";
import { QdrantVectorStore } from "@langchain/qdrant";
import { Embeddings } from "@langchain/core/embeddings";

const DIRECT = process.env.DIRECT;
const MEMRANK = process.env.MEMRANK;
if (!DIRECT || !MEMRANK) {
  console.error("plain_collection.mjs: set DIRECT and MEMRANK to REST base URLs (http://host:port)");
  process.exit(2);
}
// How long to wait after the reads before the last scroll: longer than the
// access flush interval memrank runs with (the Go test sets 200ms), so any
// write memrank would make because of the reads has landed.
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 1000);

// Every HTTP exchange, so the report shows what the clients asked and which
// requests memrank did not answer with 200 (an untranslated route is a 404
// naming it).
const traffic = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  const side = url.origin === new URL(MEMRANK).origin ? "memrank" : url.origin === new URL(DIRECT).origin ? "direct" : url.origin;
  const method = init?.method ?? (typeof input === "object" && "method" in input ? input.method : "GET");
  const entry = { side, method, path: url.pathname + url.search };
  traffic.push(entry);
  try {
    const resp = await realFetch(input, init);
    entry.status = resp.status;
    if (resp.status !== 200) {
      entry.body = await resp.clone().text();
    }
    return resp;
  } catch (e) {
    entry.error = String(e);
    throw e;
  }
};

// The JS client warns on the console when the server's version does not
// suit it, or when GET / fails; keep those instead of losing them in stderr.
const warnings = [];
const realWarn = console.warn;
console.warn = (...args) => {
  warnings.push(args.map(String).join(" "));
  realWarn(...args);
};

/** Runs fn and records its value, or the error it threw, as data. */
async function attempt(fn) {
  try {
    return { result: await fn() };
  } catch (e) {
    // The server's own words (data.status.error) without the envelope's
    // time, which differs on every call.
    return {
      error: {
        name: e?.name ?? "Error",
        message: String(e?.message ?? e),
        status: e?.status ?? null,
        detail: e?.data?.status?.error ?? null,
      },
    };
  }
}

/**
 * A deterministic embedder: a hashed bag of words in 32 dimensions, unit
 * length. Texts that share their words share their vector, so the
 * near-duplicates below are what a memory re-ranker would fold.
 */
class HashEmbeddings extends Embeddings {
  constructor() {
    super({});
    this.dims = 32;
  }
  vector(text) {
    const v = new Array(this.dims).fill(0);
    for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
      let h = 2166136261; // FNV-1a
      for (let i = 0; i < word.length; i++) {
        h = Math.imul(h ^ word.charCodeAt(i), 16777619) >>> 0;
      }
      v[h % this.dims] += (h >>> 16) & 1 ? 1 : -1;
    }
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  }
  async embedDocuments(texts) {
    return texts.map((t) => this.vector(t));
  }
  async embedQuery(text) {
    return this.vector(text);
  }
}

/** A document as LangChain returns it, for comparison. */
const doc = (d) => ({ id: d.id ?? null, pageContent: d.pageContent, metadata: d.metadata });

/**
 * scrollRaw reads a whole collection through base with payloads and vectors
 * and returns the response body as the server wrote it, minus the envelope's
 * "time" (the one thing that varies): byte-for-byte comparable.
 */
async function scrollRaw(base, collection) {
  const resp = await realFetch(`${base}/collections/${collection}/points/scroll`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ limit: 1000, with_payload: true, with_vector: true }),
  });
  const text = await resp.text();
  if (resp.status !== 200) {
    throw new Error(`scroll ${collection} through ${base}: ${resp.status} ${text}`);
  }
  return text.replace(/,"time":[-0-9.eE+]+\}$/, "}");
}

const LC_TEXTS = [
  "The quarterly report is due on Friday.",
  "The quarterly report is due on Friday!",
  "the quarterly report is due on friday",
  "The quarterly report is due this Friday.",
  "Our quarterly report is due on Friday.",
  "The office coffee machine is broken again.",
  "The office coffee machine is broken.",
  "The office coffee machine is broken again!",
  "Alice prefers green tea in the morning.",
  "Alice prefers green tea in the mornings.",
  "Bob deploys the billing service every Thursday.",
  "Bob deploys the billing service every Thursday afternoon.",
  "The staging database was migrated to Postgres 16.",
  "Lunch is served in the cafeteria at noon.",
  "The parking garage closes at 9 pm.",
  "Security badges must be worn at all times.",
  "The Wi-Fi password changes every month.",
  "Carol is on vacation until the 14th.",
  "The printer on the third floor is out of toner.",
  "Team offsite is planned for early June.",
];
// Metadata with the fields plain collections share with memories: they must
// not make memrank take the collection for one.
const LC_METADATAS = LC_TEXTS.map((_, i) => ({
  source: `notes-${i % 4}.txt`,
  line: i + 1,
  user_id: `u${i % 3}`,
  created_at: `2024-0${(i % 9) + 1}-15T10:00:00Z`,
}));
const LC_QUERIES = [
  "when is the quarterly report due",
  "is the coffee machine broken",
  "what does Alice drink in the morning",
  "who deploys the billing service",
];

// The plain collection: 8 dimensions, the query is e0. Near-duplicates
// (1, 2, the UUID one), a related point, unrelated ones and one pointing
// away from the query (negative cosine).
const PLAIN_QUERY = [1, 0, 0, 0, 0, 0, 0, 0];
const PLAIN_UUID = "5c56c793-69f3-4fbf-87e6-c4bf54c28c26";
const plainPoint = (id, vector, text, created, user, hash) => ({
  id,
  vector,
  payload: { text, created_at: created, user_id: user, hash },
});
const PLAIN_POINTS = [
  plainPoint(1, [0.95, 0.3, 0, 0, 0, 0, 0.05, 0], "Deploys happen on Thursdays.", "2023-01-10T09:00:00Z", "u1", "a1f0"),
  plainPoint(2, [0.95, 0.3, 0.01, 0, 0, 0, 0.05, 0], "Deploys happen on Thursdays", "2025-06-01T09:00:00Z", "u1", "a1f1"),
  plainPoint(PLAIN_UUID, [0.94, 0.31, 0, 0.01, 0, 0, 0.05, 0], "deploys happen on thursdays!", "2025-06-02T09:00:00Z", "u2", "a1f2"),
  plainPoint(3, [0.7, 0, 0.7, 0, 0, 0, 0, 0.1], "The release train leaves every other week.", "2024-03-03T12:00:00Z", "u2", "b2c3"),
  plainPoint(4, [0.4, 0, 0, 0.9, 0, 0.1, 0, 0], "Rollbacks need two approvals.", "2022-11-11T11:11:11Z", "u3", "c3d4"),
  plainPoint(5, [0, 0, 0, 0, 1, 0, 0, 0], "The cafeteria serves soup on Mondays.", "2025-01-01T00:00:00Z", "u1", "d4e5"),
  plainPoint(6, [0.1, 0, 0, 0, 0.2, 0.97, 0, 0], "Parking is free after six.", "2021-07-07T07:07:07Z", "u3", "e5f6"),
  plainPoint(7, [-0.9, 0.1, 0, 0, 0, 0, 0.4, 0], "Nobody deploys on Fridays.", "2025-09-09T09:09:09Z", "u2", "f6a7"),
];

// The memory collection: memrank's memory record. Raw similarity puts the
// older, never-read, less sure memory (101, 0.90) first and the fresh,
// confident, much-read one (102, 0.89) second, close enough to be equally
// relevant (inside the relevance guard's band); memrank must swap them. 101
// is old enough to lose on freshness but young enough to stay above its
// decay floor (so it is re-ranked, not dropped), and the two are far enough
// apart (cosine 0.60) that no re-ranker folds them. 103 (0.50) is beyond
// the band: it keeps its place and its similarity.
const MEM_QUERY = [1, 0, 0, 0, 0, 0, 0, 0];
const DAY = 24 * 3600 * 1000;
const ago = (days) => new Date(Date.now() - days * DAY).toISOString().replace(/\.\d+Z$/, "Z");
const memPoint = (id, vector, rec) => ({
  id,
  vector,
  payload: { ...rec, memrank_schema: 1 },
});
const MEM_POINTS = [
  memPoint(101, [0.9, 0.4359, 0, 0, 0, 0, 0, 0], {
    text: "The user lives in Berlin.",
    memory_type: "fact",
    source: "strong_inference",
    extractor_model: "gpt-4o-mini",
    confidence: 0.75,
    created_at: ago(60),
    last_observed_at: ago(60),
    access_counts: { r1: 0 },
  }),
  memPoint(102, [0.89, -0.456, 0, 0, 0, 0, 0, 0], {
    text: "The user moved to Lisbon last month.",
    memory_type: "fact",
    source: "direct",
    extractor_model: "gpt-4o",
    confidence: 0.95,
    created_at: ago(10),
    last_observed_at: ago(1),
    access_counts: { r1: 40 },
  }),
  memPoint(103, [0.5, 0, 0.866, 0, 0, 0, 0, 0], {
    text: "The user works remotely on Fridays.",
    memory_type: "fact",
    source: "direct",
    extractor_model: "gpt-4o",
    confidence: 0.9,
    created_at: ago(30),
    last_observed_at: ago(30),
    access_counts: { r1: 3 },
  }),
];

async function main() {
  const out = { direct: DIRECT, memrank: MEMRANK, settle_ms: SETTLE_MS };
  const embeddings = new HashEmbeddings();
  const viaMemrank = new QdrantClient({ url: MEMRANK });
  const viaDirect = new QdrantClient({ url: DIRECT });

  // Everything is written through memrank, as an agent would.
  const lcMemrank = await QdrantVectorStore.fromTexts(LC_TEXTS, LC_METADATAS, embeddings, {
    url: MEMRANK,
    collectionName: "lc_docs",
  });
  const lcDirect = new QdrantVectorStore(embeddings, { url: DIRECT, collectionName: "lc_docs" });

  await viaMemrank.createCollection("plain", { vectors: { size: 8, distance: "Cosine" } });
  await viaMemrank.upsert("plain", { wait: true, points: PLAIN_POINTS });
  await viaMemrank.createCollection("mem", { vectors: { size: 8, distance: "Cosine" } });
  await viaMemrank.upsert("mem", { wait: true, points: MEM_POINTS });

  out.scroll_before = {
    lc_docs: await scrollRaw(DIRECT, "lc_docs"),
    plain: await scrollRaw(DIRECT, "plain"),
  };

  // The reads: all through the store first, then all through memrank, so
  // the direct answers are the store's before memrank could have written
  // anything.
  const lcChecks = (store) => {
    const checks = [];
    for (const q of LC_QUERIES) {
      checks.push([`similaritySearch(${JSON.stringify(q)}, 3)`, async () => (await store.similaritySearch(q, 3)).map(doc)]);
      checks.push([
        `similaritySearchWithScore(${JSON.stringify(q)}, 5)`,
        async () => (await store.similaritySearchWithScore(q, 5)).map(([d, score]) => ({ ...doc(d), score })),
      ]);
      checks.push([
        `maxMarginalRelevanceSearch(${JSON.stringify(q)}, {k: 3, fetchK: 10})`,
        async () => (await store.maxMarginalRelevanceSearch(q, { k: 3, fetchK: 10 })).map(doc),
      ]);
    }
    return checks;
  };
  const plainChecks = (client) => [
    ["query(vector, limit 5, with_payload)", () => client.query("plain", { query: PLAIN_QUERY, limit: 5, with_payload: true })],
    [
      "query(vector, limit 10, with_payload), reaching the negative point",
      () => client.query("plain", { query: PLAIN_QUERY, limit: 10, with_payload: true }),
    ],
    ["search(limit 5, score_threshold 0.1)", () => client.search("plain", { vector: PLAIN_QUERY, limit: 5, score_threshold: 0.1 })],
    [
      "search(limit 10, score_threshold -0.95)",
      () => client.search("plain", { vector: PLAIN_QUERY, limit: 10, score_threshold: -0.95 }),
    ],
    ["query(point id 1, limit 5, with_payload)", () => client.query("plain", { query: 1, limit: 5, with_payload: true })],
    ["scroll(limit 20, with_payload)", () => client.scroll("plain", { limit: 20, with_payload: true })],
  ];
  const memCheck = (client) => client.query("mem", { query: MEM_QUERY, limit: 3, with_payload: ["text"] });

  const runAll = async (checks) => {
    const got = [];
    for (const [name, fn] of checks) {
      got.push({ name, ...(await attempt(fn)) });
    }
    return got;
  };
  const direct = {
    lc_docs: await runAll(lcChecks(lcDirect)),
    plain: await runAll(plainChecks(viaDirect)),
    mem: await attempt(() => memCheck(viaDirect)),
  };
  const memrank = {
    lc_docs: await runAll(lcChecks(lcMemrank)),
    plain: await runAll(plainChecks(viaMemrank)),
    mem: await attempt(() => memCheck(viaMemrank)),
  };
  const pair = (name) =>
    direct[name].map((d, i) => ({ name: d.name, direct: { ...d, name: undefined }, memrank: { ...memrank[name][i], name: undefined } }));
  out.lc_docs = pair("lc_docs");
  out.plain = pair("plain");
  out.mem = { direct: direct.mem, memrank: memrank.mem };

  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  out.scroll_after = {
    lc_docs: await scrollRaw(DIRECT, "lc_docs"),
    plain: await scrollRaw(DIRECT, "plain"),
  };
  out.warnings = warnings;
  out.traffic = traffic;
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  console.error("plain_collection.mjs:", e?.stack ?? e);
  process.exit(1);
});
