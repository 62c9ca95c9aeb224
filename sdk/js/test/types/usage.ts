// Type-checked, never run (dist.test.mjs runs tsc on it): the published
// declarations in dist/ describe the API as a caller writes it, and refuse
// what the server would refuse.

import {
  MemrankClient,
  MemrankError,
  NotFoundError,
  RateLimitError,
  type AuditRecord,
  type CreatedCollection,
  type Outcome,
  type RetrievedMemory,
  type Stats,
  type UsedResult,
} from "../../dist/index.js";

export async function usage(): Promise<void> {
  const mr = new MemrankClient({ baseUrl: "http://127.0.0.1:6333", apiKey: "k", timeoutMs: 5000, tenantHeader: { name: "x-tenant", value: "t" } });

  const o: Outcome = await mr.observe("notes", "Dana uses Neovim", {
    memory_type: "preference",
    source: "direct",
    grounding: "supported",
    entities: ["Dana", "Neovim"],
    observed_at: new Date(),
    vector: new Float32Array(4),
    attribution: "self",
    speaker: "Dana",
  });
  // Levels added in the server's configuration are strings too.
  const custom: Outcome = await mr.observe("notes", "x", { source: "my_custom_level", memory_type: "habit" });
  const decision: "inserted" | "restatement" | "independent" | "contradiction" | "rejected" | "confirmed" | "corrected" | "used" = o.decision;
  const warnings: string[] | undefined = o.warnings;

  const r = await mr.retrieve("notes", "what editor", { limit: 3, filter: { must: [{ key: "memory_type", match: { value: "preference" } }] }, mode: "off" });
  await mr.retrieve("notes", "what editor", { count_access: false, with_payload: ["text"] });
  const first: RetrievedMemory | undefined = r.results[0];
  const freshness: number | null | undefined = first?.explanation?.freshness;
  const text: string | undefined = first?.payload?.text;
  const daysLeft: number | null | undefined = first?.explanation?.days_to_archive;
  const withinFloor: boolean | undefined = first?.explanation?.within_decay_floor;
  const factor: number | null | undefined = first?.freshness_factor;
  const focus: number | null | undefined = r.guard?.focus ?? first?.explanation?.focus;
  const folded: number | undefined = r.guard?.folded;
  const stored: string | null | undefined = first?.stored_tier;
  await mr.retrieve("notes", [0.1, 0.2]);
  // As of a time: a Date or an RFC 3339 string; the answer echoes it.
  const then = await mr.retrieve("notes", "what editor", { at: new Date("2026-06-01T00:00:00Z"), include_archived: true });
  const asOf: string | undefined = then.at;
  const empty: string | undefined = (await mr.retrieve("notes", "what editor", { at: "2026-06-01T00:00:00Z" })).empty;

  const one: Outcome = await mr.used("notes", o.memory_id, { observation_id: "u1" });
  const many: UsedResult[] = await mr.used("notes", [o.memory_id, 7]);
  const audit: AuditRecord[] = (await mr.history("notes", o.memory_id)).audit;
  const stats: Stats = await mr.stats("notes", { exact: true });
  const avg: number | null = stats.average_confidence;
  const deleted: number = (await mr.forgetSession("notes", "s1")).memories_deleted + (await mr.forgetMemory("notes", 3)).memories_deleted;
  await mr.correct("notes", o.memory_id, "Dana uses Emacs", { source: "direct", speaker: "Dana" });
  const saidBy: string | undefined = (await mr.history("notes", o.memory_id)).payload.speaker;
  await mr.confirm("notes", o.memory_id, { at: "2026-05-01T12:00:00Z" }, { signal: AbortSignal.timeout(1000) });

  const made: CreatedCollection = await mr.createCollection("notes");
  const existed: boolean = made.existed && !made.created;
  const dims: number = made.dimensions;
  const vectors: number[][] = await mr.embed(["Dana uses Neovim", "Dana likes tea"], { model: made.model });
  const one1: number[][] = await mr.embed("Dana uses Neovim", { model: "memrank-local-hash-v1", dimensions: 64 }, { timeoutMs: 1000 });

  try {
    await mr.history("notes", "id");
  } catch (err) {
    if (err instanceof RateLimitError) {
      const wait: number | undefined = err.retryAfter;
      void wait;
    } else if (err instanceof NotFoundError || err instanceof MemrankError) {
      const status: number = err.status;
      // Every error carries Retry-After: a 503 of load shedding sends it too.
      const wait: number | undefined = err.retryAfter;
      void [status, wait];
    }
  }

  // @ts-expect-error grounding is one of four levels
  await mr.observe("notes", "x", { grounding: "maybe" });
  // @ts-expect-error an unknown field (the server refuses it too)
  await mr.observe("notes", "x", { sesion_id: "s1" });
  // @ts-expect-error a speaker is one name, not a list
  await mr.observe("notes", "x", { speaker: ["Dana", "Ann"] });
  // @ts-expect-error mode per request is auto or off
  await mr.retrieve("notes", "x", { mode: "shadow" });
  // @ts-expect-error a correction names its memory in the path, not in the body
  await mr.correct("notes", "id", "x", { corrects: "other" });
  // @ts-expect-error stats' result has no such field
  void stats.average;
  // @ts-expect-error count_access is a boolean
  await mr.retrieve("notes", "x", { count_access: "no" });
  // @ts-expect-error at is an RFC 3339 string or a Date, not a number
  await mr.retrieve("notes", "x", { at: 1780272000000 });
  // @ts-expect-error days_retrievable was renamed days_to_archive
  void first?.explanation?.days_retrievable;
  // @ts-expect-error retrievable in the explanation was renamed within_decay_floor
  void first?.explanation?.retrievable;
  // @ts-expect-error embed's texts are strings
  await mr.embed([1, 2]);
  // @ts-expect-error dimensions is a number
  await mr.embed(["x"], { dimensions: "384" });
  // @ts-expect-error the client always asks for base64: there is no encoding option
  await mr.embed(["x"], { encoding_format: "float" });
  // @ts-expect-error the client's timeout is timeoutMs
  new MemrankClient({ timeout: 5 });

  void [custom, decision, warnings, freshness, text, daysLeft, withinFloor, factor, focus, folded, stored, asOf, empty, one, many, audit, avg, deleted, saidBy, existed, dims, vectors, one1];
}
