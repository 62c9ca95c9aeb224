// embeddings.mjs embeds texts with LangChain.js's OpenAIEmbeddings pointed
// at memrank's POST /v1/embeddings (configuration.baseURL), as an agent
// would to search memories it stored through /v1/observe, and prints one
// JSON object: each vector as base64 of its float32 bytes (so that the Go
// test compares bits), per encoding the client asked the server for, and
// the requests it sent. It judges nothing: cmd/memrank's
// TestLangChainEmbeddings compares the vectors with those memrank stored.
//
//   MEMRANK=http://127.0.0.1:6333 TEXTS='["Dana uses Neovim"]' node test/js/embeddings.mjs
import { OpenAIEmbeddings } from "@langchain/openai";

const MEMRANK = process.env.MEMRANK;
const TEXTS = JSON.parse(process.env.TEXTS ?? "[]");
if (!MEMRANK || TEXTS.length === 0) {
  console.error("embeddings.mjs: set MEMRANK to memrank's HTTP base URL and TEXTS to a JSON array of texts");
  process.exit(2);
}
const MODEL = process.env.MODEL ?? "memrank-local-sem-v1:384";

// The bodies the client sent, to show which encoding it asked for.
const requests = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  let body = {};
  try {
    body = JSON.parse(init?.body ?? "{}");
  } catch {}
  requests.push({ path: url.pathname, model: body.model, encoding_format: body.encoding_format ?? null });
  return realFetch(input, init);
};

const bits = (v) => Buffer.from(new Float32Array(v).buffer).toString("base64");

const report = { requests };
// The openai package asks for base64 unless told otherwise; float is the
// other encoding a LangChain user may choose.
for (const [name, encodingFormat] of [["default", undefined], ["float", "float"]]) {
  const emb = new OpenAIEmbeddings({
    model: MODEL,
    apiKey: process.env.API_KEY ?? "memrank",
    encodingFormat,
    configuration: { baseURL: MEMRANK + "/v1" },
  });
  const documents = await emb.embedDocuments(TEXTS);
  const query = await emb.embedQuery(TEXTS[0]);
  report[name] = { documents: documents.map(bits), query: bits(query) };
}
console.log(JSON.stringify(report));
