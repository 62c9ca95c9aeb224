// The official MCP TypeScript SDK's client against memrank's /mcp: it lists
// the tools, recalls the demo question, remembers, recalls, confirms and
// forgets, and after each step asks the native API itself (plain fetch)
// for the same thing. It prints one JSON report on stdout; the Go test
// (cmd/memrank TestMCPTypeScriptClient) checks it. The SDK's client
// validates every structured answer against the tool's output schema.
//
// MEMRANK_URL is memrank's HTTP address (e.g. http://127.0.0.1:6333);
// MEMRANK_API_KEY, when set, is sent as api-key; COLLECTION is the
// collection to write; DEMO_COLLECTION and DEMO_QUESTION the demo's.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const base = process.env.MEMRANK_URL;
if (!base) {
  console.error("MEMRANK_URL is not set");
  process.exit(2);
}
const headers = process.env.MEMRANK_API_KEY ? { "api-key": process.env.MEMRANK_API_KEY } : {};
const collection = process.env.COLLECTION ?? "mcp_ts";
const timeout = 20_000;

// native calls the native API with the same credentials; it returns the
// status and the parsed body.
async function native(method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(timeout),
  });
  return { status: res.status, body: await res.json() };
}

// hits is what the comparison reads of retrieve answers.
const nativeHits = (ans) =>
  ans.body.result.map((r) => ({ id: String(r.id), score: r.score, confidence: r.confidence, tier: r.tier, text: r.payload?.text ?? "" }));
const mcpHits = (out) =>
  out.memories.map((m) => ({ id: m.id, score: m.score, confidence: m.confidence ?? null, tier: m.tier ?? null, text: m.text }));

const client = new Client({ name: "memrank-ts-test", version: "0.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(base + "/mcp"), { requestInit: { headers } });
await client.connect(transport, { timeout });

// call calls a tool; a protocol error throws, a tool error is returned.
async function call(name, args) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout });
  const text = res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
  return { isError: res.isError === true, text, structured: res.structuredContent ?? null };
}

const report = {};
const tools = (await client.listTools(undefined, { timeout })).tools;
report.tools = tools.map((t) => t.name).sort();
report.recall_at = tools.find((t) => t.name === "recall")?.inputSchema?.properties?.at ?? null;
report.remember_speaker = tools.find((t) => t.name === "remember")?.inputSchema?.properties?.speaker ?? null;

if (process.env.DEMO_QUESTION) {
  const args = { collection: process.env.DEMO_COLLECTION, query: process.env.DEMO_QUESTION, limit: 3 };
  const rec = await call("recall", args);
  const nat = await native("POST", "/v1/retrieve", { collection: args.collection, text: args.query, limit: 3 });
  report.demo = { mcp: mcpHits(rec.structured), native: nativeHits(nat), summary: rec.text };
}

const remember = await call("remember", {
  collection, text: "Dana's sister lives in Osaka", source: "direct", session_id: "ts-1", entities: ["Dana"], speaker: "Dana",
});
report.remember = remember;
const id = remember.structured?.memory_id;
report.stored = await native("GET", `/v1/memories/${encodeURIComponent(id)}?collection=${collection}`);

const query = "where does Dana's sister live";
const rec = await call("recall", { collection, query, limit: 5 });
const nat = await native("POST", "/v1/retrieve", { collection, text: query, limit: 5 });
report.recall = { mcp: mcpHits(rec.structured), native: nativeHits(nat), summary: rec.text };

// As of a time before anything was written to the collection: nothing; and
// an at that is no time is a tool error naming it.
const before = await call("recall", { collection, query, at: "2020-01-01T00:00:00Z" });
report.as_of = { isError: before.isError, at: before.structured?.at ?? null, memories: before.structured?.memories?.length ?? null, text: before.text };
report.bad_at = await call("recall", { collection, query, at: "last spring" });

report.confirm = await call("confirm", { collection, memory_id: id, session_id: "ts-2" });
report.confirmed = await native("GET", `/v1/memories/${encodeURIComponent(id)}?collection=${collection}`);

report.forget = await call("forget", { collection, memory_id: id });
report.forgotten = await native("GET", `/v1/memories/${encodeURIComponent(id)}?collection=${collection}`);

report.bad_input = await call("forget", { collection, memory_id: id, session_id: "ts-1" });
report.not_found = await call("confirm", { collection, memory_id: id });

await client.close();
console.log(JSON.stringify(report));
