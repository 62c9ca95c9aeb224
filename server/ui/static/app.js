// The explain page. It reads through memrank's own routes, on this origin,
// with the key the person gives: nothing here is trusted more than any
// client. Every string from the server is put in the page with textContent
// (el() below), never parsed as HTML.

const KEY_STORE = "memrank.apiKey";
const COLLECTION_STORE = "memrank.collection";
const TIMEOUT_MS = 30000;

const $ = (id) => document.getElementById(id);

// el builds an element: attrs may hold class, text, data (dataset), title
// and plain attributes; children are nodes or strings (as text), or arrays
// of them at any depth (a list of [dt, dd] pairs).
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = String(v);
    else if (k === "data") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) throw new Error("el: no handlers as attributes");
    else e.setAttribute(k, String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// Point ids are u64: integers past 2^53 are kept as their digits.
function parseJSON(text) {
  return JSON.parse(text, (key, value, ctx) => {
    if (typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value) && ctx && ctx.source) {
      return ctx.source;
    }
    return value;
  });
}

class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// api calls a route of this origin with the person's key, under a deadline;
// signal (optional) cancels it early.
async function api(path, { method = "GET", body, signal } = {}) {
  const headers = { accept: "application/json" };
  const key = sessionStorage.getItem(KEY_STORE);
  if (key) headers["api-key"] = key;
  if (body !== undefined) headers["content-type"] = "application/json";
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
    cache: "no-store",
    redirect: "error",
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  });
  const text = await res.text();
  let data = null;
  try {
    data = text ? parseJSON(text) : null;
  } catch {
    throw new APIError(res.status, `${method} ${path}: ${res.status}, not JSON`);
  }
  if (!res.ok) {
    const msg = data && data.status && data.status.error ? data.status.error : `HTTP ${res.status}`;
    throw new APIError(res.status, msg);
  }
  return data;
}

function errorText(err) {
  let msg = err.message || String(err);
  if (err.name === "TimeoutError") msg = "memrank did not answer in time";
  if (err.status === 401 || err.status === 403) msg += " (give an API key above)";
  return msg;
}

function showError(err) {
  const box = $("error");
  if (!err) {
    box.hidden = true;
    box.textContent = "";
    return;
  }
  box.textContent = errorText(err);
  box.hidden = false;
}

// --- numbers -------------------------------------------------------------

const isNum = (v) => typeof v === "number" && Number.isFinite(v);
function fmt(v, digits = 3) {
  if (v === null || v === undefined) return "–";
  if (!isNum(v)) return String(v);
  return v.toFixed(digits);
}
const age = (days) => (days < 1 ? "observed today" : `${fmt(days, 0)} d old`);
const pct = (x) => Math.max(0, Math.min(100, x * 100));

// --- collections and stats -------------------------------------------------

// memrank's own collections, as memory.IsCompanion names them: a memory
// collection's audit trail, and the state of a backfill or a re-embedding.
// None holds memories to ask; ui_test.go checks this list against memory's.
const COMPANION_SUFFIXES = ["_memrank_audit", "_memrank_backfill", "_memrank_reembed"];
const isCompanion = (name) => COMPANION_SUFFIXES.some((s) => name.endsWith(s));

async function loadCollections() {
  const sel = $("collection");
  let names = [];
  let listed = false;
  try {
    const data = await api("/collections");
    names = (data.result.collections || []).map((c) => String(c.name))
      .filter((n) => !isCompanion(n))
      .sort();
    listed = true;
    showError(null);
  } catch (err) {
    showError(err);
  }
  sel.replaceChildren(...names.map((n) => el("option", { value: n, text: n })));
  const link = linked();
  const kept = sessionStorage.getItem(COLLECTION_STORE);
  if (link.collection && names.includes(link.collection)) sel.value = link.collection;
  else if (kept && names.includes(kept)) sel.value = kept;
  else if (names.includes("dana_memories")) sel.value = "dana_memories";
  if (sel.value) loadStats(sel.value);
  else $("stats-body").replaceChildren(el("p", { class: "hint", text: names.length ? "Pick a collection." : "No collections." }));
  // A link's question runs once, as soon as its collection can be asked:
  // after the key is given, when the first listing was refused.
  if (!listed || linkRan) return;
  linkRan = true;
  if (link.collection && !names.includes(link.collection)) {
    showError(new Error(`The link asks collection ${link.collection}, which is not listed (unknown, or not visible with this key).`));
    return;
  }
  if (link.q && sel.value) {
    $("question").value = link.q;
    if (link.limit) $("limit").value = String(link.limit);
    $("archived").checked = link.archived;
    ask();
  }
}

// --- links -------------------------------------------------------------------

// A question can be linked: /ui?collection=C&q=TEXT (and limit, archived)
// opens the page on C and asks TEXT. The API key is never put in the URL.
let linkRan = false;

function linked() {
  const u = new URLSearchParams(location.search);
  const limit = Number(u.get("limit"));
  return {
    collection: u.get("collection") || "",
    q: (u.get("q") || "").trim(),
    limit: Number.isInteger(limit) && limit >= 1 && limit <= 100 ? limit : 0,
    archived: u.get("archived") === "1",
  };
}

// setLink replaces the page's URL (no new history entry) with one that
// opens it on the same collection and question.
function setLink(collection, q, limit, archived) {
  const u = new URLSearchParams();
  if (collection) u.set("collection", collection);
  if (q) u.set("q", q);
  if (q && limit && limit !== 10) u.set("limit", String(limit));
  if (q && archived) u.set("archived", "1");
  const search = u.toString();
  history.replaceState(null, "", search ? `${location.pathname}?${search}` : location.pathname);
}

// The stats panel has three states, in data-state: loading (what is being
// counted, at once: counting a large collection takes a while), ready,
// and error (why, and a way to try again).
let statsSeq = 0;
async function loadStats(collection) {
  const seq = ++statsSeq;
  const body = $("stats-body");
  body.dataset.state = "loading";
  body.setAttribute("aria-busy", "true");
  body.replaceChildren(el("p", { class: "hint stats-status", id: "stats-status" },
    "Counting the memories of ", el("strong", { text: collection }), "…"));
  try {
    const data = await api(`/v1/stats?collection=${encodeURIComponent(collection)}`);
    if (seq !== statsSeq) return;
    renderStats(data.result);
    body.dataset.state = "ready";
  } catch (err) {
    if (seq !== statsSeq) return;
    body.dataset.state = "error";
    const retry = el("button", { type: "button", id: "stats-retry", text: "Try again" });
    retry.addEventListener("click", () => loadStats(collection));
    body.replaceChildren(el("div", { class: "stats-error", id: "stats-error", role: "alert" },
      el("p", { class: "error-inline", text: `The stats of ${collection} could not be read: ${errorText(err)}` }),
      retry));
  } finally {
    if (seq === statsSeq) body.removeAttribute("aria-busy");
  }
}

// counts draws a map of counts as bars against their total.
function counts(title, m, order) {
  const keys = order ? order.filter((k) => k in m).concat(Object.keys(m).filter((k) => !order.includes(k))) : Object.keys(m);
  const total = keys.reduce((s, k) => s + (m[k] || 0), 0);
  return el("div", { class: "counts", data: { counts: title } },
    el("h3", { text: title }),
    keys.map((k) => el("div", { class: "count-row", data: { key: k } },
      el("span", { class: "count-key", text: k }),
      bar(total ? m[k] / total : 0, `count-${k}`),
      el("span", { class: "count-val", text: m[k] }))));
}

function renderStats(s) {
  const body = $("stats-body");
  const hist = s.histogram || [];
  const top = Math.max(1, ...hist);
  body.replaceChildren(
    el("dl", { class: "kv" },
      el("dt", { text: "memories" }), el("dd", { id: "stats-memories", text: s.memories }),
      el("dt", { text: "archived" }), el("dd", { text: s.archived }),
      el("dt", { text: "superseded" }), el("dd", { text: s.superseded }),
      el("dt", { text: "average confidence" }), el("dd", { text: fmt(s.average_confidence) }),
      el("dt", { text: "tiers as of" }), el("dd", { text: s.tiers_as_of ? s.tiers_as_of.slice(0, 16).replace("T", " ") : "as written" })),
    el("div", { class: "hist", title: "confidence histogram, bins of 0.1" },
      el("h3", { text: "confidence" }),
      el("div", { class: "hist-bars" }, hist.map((n, i) => {
        const col = el("div", { class: "hist-col", title: `${(i / 10).toFixed(1)}–${((i + 1) / 10).toFixed(1)}: ${n}` });
        col.style.height = `${pct(n / top)}%`;
        return col;
      })),
      el("div", { class: "hist-axis" }, el("span", { text: "0" }), el("span", { text: "0.5" }), el("span", { text: "1" }))),
    counts("buckets", s.buckets || {}, ["high", "medium", "low", "unscored"]),
    counts("tiers", s.tiers || {}, ["active", "dormant", "stale", "archived"]),
    counts("types", s.types || {}),
    el("p", { class: "hint", text: `method: ${s.method}; judge calls: ${s.judge ? s.judge.calls : 0}` }));
}

// --- bars ------------------------------------------------------------------

// bar is a track with a fill of fraction (0..1); mark, if given, is a line
// at that fraction (the guard's cutoff on the base score).
function bar(fraction, name, mark) {
  const fill = el("div", { class: "fill" });
  fill.style.width = `${pct(fraction)}%`;
  const track = el("div", { class: "track", data: { bar: name, fraction: String(fraction) } }, fill);
  if (isNum(mark) && mark >= 0 && mark <= 1) {
    const m = el("div", { class: "mark", title: `guard cutoff ${fmt(mark)}` });
    m.style.left = `${pct(mark)}%`;
    track.append(m);
  }
  return track;
}

// factor is one labelled bar: value shown, fraction of scale drawn.
function factor(name, label, value, scale, note, mark) {
  const known = isNum(value);
  return el("div", { class: `factor factor-${name}${known ? "" : " unknown"}`, data: { factor: name, value: known ? String(value) : "", scale: String(scale) } },
    el("span", { class: "factor-label", text: label }),
    bar(known ? value / scale : 0, name, mark),
    el("span", { class: "factor-value", text: known ? fmt(value) : "–" }),
    el("span", { class: "factor-note", text: note || "" }));
}

// --- results ---------------------------------------------------------------

// Every result is ordered by its weight; the guard says which returned
// results count as read.
const GUARD_TEXT = {
  relevant: "inside the relevance band: counted as read",
  below_band: "beyond the relevance band: not counted as read",
  below_floor: "below the guard's floor: not counted as read",
  off: "the relevance guard is off: counted as read",
};

function badge(text, kind, title) {
  return el("span", { class: `badge ${kind || ""}`, title, text });
}

function memoryText(r) {
  const p = r.payload || {};
  if (typeof p.text === "string" && p.text !== "") return p.text;
  if (typeof p.page_content === "string") return p.page_content;
  return r.payload ? JSON.stringify(r.payload) : "(no payload)";
}

function resultCard(r, i, ctx) {
  const x = r.explanation || {};
  const badges = [];
  if (r.guard) badges.push(badge(`guard: ${r.guard}`, `guard-${r.guard}`, GUARD_TEXT[r.guard] || ""));
  if (ctx.reranked) {
    badges.push(r.render
      ? badge("render: shown", "ok", "passes the render gate: shown to the model")
      : badge("render: hidden", "warn", "below the render gate: returned, but not to be shown to the model"));
    if (r.below_gate) badges.push(badge("below retrieval gate", "warn", "below the confidence gate: returned as the best match of the question, nothing passing the gate being as close"));
  }
  if (r.tier) badges.push(badge(`tier: ${r.tier}`, `tier-${r.tier}`, ctx.at ? `as of ${ctx.at}` : "as of now"));
  if (r.stored_tier && r.stored_tier !== r.tier) {
    badges.push(badge(`stored tier: ${r.stored_tier}`, "plain", "as the last consolidation wrote it"));
  }
  if (r.bucket) badges.push(badge(`bucket: ${r.bucket}`, "plain"));
  if (r.protected) badges.push(badge("protected", "ok", "decay never turns its tier archived"));
  if (r.archived) badges.push(badge(`archived: ${r.archived}`, "warn", "out of answers: returned because include archived is on"));
  if (r.judge_consulted) badges.push(badge("judge consulted", "plain"));
  for (const p of r.problems || []) badges.push(badge(`problem: ${p}`, "warn"));

  const folded = (r.folded_ids || []).map(String);
  const foldLine = folded.length
    ? el("p", { class: "folded", data: { folded: folded.join(",") } },
      `folds ${folded.length} duplicate${folded.length > 1 ? "s" : ""}${r.dedup ? ` (${r.dedup})` : ""}: `,
      folded.map((id, k) => [k ? ", " : "", el("code", { text: id })]))
    : null;

  const factors = el("div", { class: "factors" });
  if (ctx.reranked) {
    const boostNote = isNum(r.access_count) ? `${r.access_count} read${r.access_count === 1 ? "" : "s"}` : "";
    const confNote = isNum(x.confidence_factor) ? `factor ×${fmt(x.confidence_factor, 2)}` : (r.confidence === null ? "unscored" : "");
    const freshNote = isNum(x.freshness_weight) && isNum(x.focus)
      ? `focus ${fmt(x.focus, 2)}, age weight ${fmt(x.freshness_weight, 2)}` : "what age took off";
    factors.append(
      factor("base", "base", r.base_score, 1, "similarity", ctx.cutoff),
      factor("freshness", "freshness", r.freshness, 1, isNum(x.age_days) ? `${age(x.age_days)}, half-life ${fmt(x.half_life, 0)} d` : ""),
      factor("freshness_factor", "freshness factor", r.freshness_factor, 1, freshNote),
      factor("boost", "access boost", r.access_boost, ctx.maxBoost, boostNote),
      factor("confidence", "confidence", r.confidence, 1, confNote),
      factor("score", "score", r.score, ctx.maxScore, "= weight"));
  } else {
    factors.append(factor("score", "score", r.score, ctx.maxScore, "the store's own score"));
  }

  const open = el("button", { type: "button", class: "open", data: { id: String(r.id) }, title: "show the stored payload and audit trail" },
    el("span", { class: "rank", text: `${i + 1}` }),
    el("span", { class: "text", text: memoryText(r) }));
  open.addEventListener("click", () => openMemory(ctx.collection, String(r.id)));

  const card = el("li", { class: `result${r.render === false ? " hidden-by-gate" : ""}`, data: { id: String(r.id), guard: r.guard || "" } },
    el("div", { class: "head" }, open, el("code", { class: "id", text: String(r.id) })),
    el("div", { class: "badges" }, badges),
    factors,
    ctx.reranked && isNum(r.weight) ? el("p", { class: "formula" },
      `weight ${fmt(r.base_score)} × ${fmt(r.freshness_factor)} × ${fmt(r.access_boost)} × ${fmt(x.confidence_factor ?? 1, 2)} = ${fmt(r.weight)}`) : null,
    foldLine,
    x && r.explanation ? details(x) : null);
  return card;
}

// details lists every factor of the explanation.
function details(x) {
  const rows = [
    ["source", x.source], ["observations", x.observations], ["repetition", x.repetition], ["extractor", x.extractor],
    ["type", x.type], ["grounding", x.grounding], ["formula", x.formula], ["grounding penalty", x.grounding_penalty],
    ["computed", x.computed], ["confidence", `${fmt(x.confidence)} (${x.stored_confidence ? "stored" : "computed"})`],
    ["age (days)", x.age_days], ["half-life (days)", x.half_life], ["freshness", x.freshness],
    ["freshness weight", x.freshness_weight], ["focus", x.focus], ["freshness factor", x.freshness_factor],
    ["access weight", x.access_weight], ["access boost", x.access_boost], ["idle (days)", x.idle_days],
    ["decay floor", x.decay_floor], ["days to archive", x.days_to_archive === null ? "never archived" : x.days_to_archive],
    ["within decay floor", String(x.within_decay_floor)],
    ["confidence weight", x.confidence_weight], ["confidence factor", x.confidence_factor],
  ];
  return el("details", { class: "explanation" }, el("summary", { text: "every factor" }),
    el("dl", { class: "kv" }, rows.map(([k, v]) => [el("dt", { text: k }), el("dd", { text: isNum(v) ? fmt(v) : (v ?? "–") })])));
}

function renderSummary(data, collection) {
  const box = $("summary");
  const g = data.guard;
  const parts = [
    el("span", { class: "chip", text: `mode: ${data.mode}` }),
    data.reranked ? el("span", { class: "chip ok", text: "re-ranked" }) : el("span", { class: "chip warn", text: `passed through: ${data.pass_through || "not re-ranked"}` }),
  ];
  if (data.detection) parts.push(el("span", { class: "chip plain", text: data.detection }));
  if (data.embedder) parts.push(el("span", { class: "chip plain", text: `embedder: ${data.embedder.model}` }));
  if (data.at) {
    parts.push(el("span", { class: "chip warn", id: "as-of", data: { at: data.at },
      title: "freshness and tiers as of then; memories first observed later left out; later supersessions not applied; access counts and confidence are today's",
      text: `as of ${data.at}` }));
  }
  if (g) {
    // Informational: the guard applied (or not); it is never a failure.
    parts.push(el("span", { class: "chip info", id: "guard-report", data: { cutoff: String(g.cutoff), relevant: String(g.relevant), folded: String(g.folded) },
      title: `band ${fmt(g.band)}, floor ${fmt(g.floor)}${g.relative ? `, relative band ${fmt(g.relative_band)}` : ""}; from ${g.from}; the counts are the returned results'; every result is ordered by weight` },
    g.applied
      ? `guard: best ${fmt(g.best)}, cutoff ${fmt(g.cutoff)} → ${g.relevant} relevant, ${g.beyond} beyond, ${g.folded} folded`
      : "guard: not applied"));
    parts.push(el("span", { class: "chip plain", id: "focus", data: { focus: String(g.focus) },
      title: "how much the question is about recent memories (0 to 1): the share of the freshness weight age may take",
      text: `focus on recent: ${fmt(g.focus, 2)}` }));
  }
  parts.push(el("span", { class: "chip plain", text: `${collection} · ${fmt(data.time * 1000, 1)} ms` }));
  box.replaceChildren(...parts);
  box.hidden = false;
}

// The texts of left-out memories are cut to this many characters; the
// whole text is the cell's title.
const DROPPED_TEXT_CHARS = 90;

function truncate(text, n) {
  const chars = Array.from(text);
  return chars.length > n ? `${chars.slice(0, n - 1).join("").trimEnd()}…` : text;
}

// renderDropped lists the left-out candidates at once, then fills in their
// texts: the answer names them by id only, so the texts are read in one
// request by id (Qdrant's retrieve, the text keys only), with the
// caller's credentials like every other read.
function renderDropped(dropped, collection, signal) {
  const sec = $("dropped");
  const tbody = sec.querySelector("tbody");
  if (!dropped || dropped.length === 0) {
    sec.hidden = true;
    tbody.replaceChildren();
    return;
  }
  const cells = new Map();
  tbody.replaceChildren(...dropped.map((d) => {
    const id = String(d.id);
    const text = el("span", { class: "dropped-text pending", text: "…" });
    cells.set(id, text);
    return el("tr", { data: { reason: d.reason, id } },
      el("td", { class: "dropped-memory" }, el("code", { text: id }), " ", text),
      el("td", { text: d.reason === "folded" && d.into !== undefined ? `folded into ${d.into}` : d.reason.replaceAll("_", " ") }),
      el("td", { text: fmt(d.base_score) }));
  }));
  sec.hidden = false;
  fillDroppedTexts(collection, dropped.map((d) => d.id), cells, signal);
}

async function fillDroppedTexts(collection, ids, cells, signal) {
  let found = new Map();
  let failed = false;
  try {
    const data = await api(`/collections/${encodeURIComponent(collection)}/points`,
      { method: "POST", body: { ids, with_payload: ["text", "page_content"], with_vector: false }, signal });
    found = new Map((data.result || []).map((p) => [String(p.id), p]));
  } catch (err) {
    if (err.name === "AbortError") return;
    failed = true;
  }
  for (const [id, cell] of cells) {
    const pl = (found.get(id) || {}).payload || {};
    const text = typeof pl.text === "string" ? pl.text : (typeof pl.page_content === "string" ? pl.page_content : "");
    cell.classList.remove("pending");
    if (text) {
      cell.textContent = truncate(text, DROPPED_TEXT_CHARS);
      cell.title = text;
    } else {
      cell.classList.add("missing");
      cell.textContent = failed ? "(text not readable)" : "(no text)";
    }
  }
}

let askCtrl = null;
async function ask(ev) {
  if (ev) ev.preventDefault();
  const collection = $("collection").value;
  const text = $("question").value.trim();
  if (!collection || !text) return;
  const limit = Math.max(1, Math.min(100, Number($("limit").value) || 10));
  setLink(collection, text, limit, $("archived").checked);
  if (askCtrl) askCtrl.abort();
  const ctrl = (askCtrl = new AbortController());
  $("go").disabled = true;
  try {
    const body = { collection, text, limit, explain: true, count_access: false };
    if ($("archived").checked) body.include_archived = true;
    const data = await api("/v1/retrieve", { method: "POST", body, signal: ctrl.signal });
    showError(null);
    const results = data.result || [];
    const ctx = {
      collection,
      at: data.at,
      reranked: data.reranked,
      cutoff: data.guard && data.guard.applied && !data.guard.relative ? data.guard.cutoff : undefined,
      maxBoost: Math.max(1, ...results.map((r) => (isNum(r.access_boost) ? r.access_boost : 0))),
      maxScore: Math.max(Number.MIN_VALUE, ...results.map((r) => (isNum(r.score) ? r.score : 0))),
    };
    renderSummary(data, collection);
    $("results").replaceChildren(...(results.length
      ? results.map((r, i) => resultCard(r, i, ctx))
      : [el("li", { class: "empty", text: data.empty ? `Nothing found: ${data.empty}.` : "Nothing found." })]));
    renderDropped(data.dropped, collection, ctrl.signal);
  } catch (err) {
    if (err.name !== "AbortError") showError(err);
  } finally {
    if (askCtrl === ctrl) {
      askCtrl = null;
      $("go").disabled = false;
    }
  }
}

// --- one memory --------------------------------------------------------------

let memSeq = 0;
async function openMemory(collection, id) {
  const seq = ++memSeq;
  for (const li of document.querySelectorAll("#results .result")) li.classList.toggle("selected", li.dataset.id === id);
  const body = $("memory-body");
  $("memory-hint").hidden = true;
  body.replaceChildren(el("p", { class: "hint", text: "Loading…" }));
  try {
    const data = await api(`/v1/memories/${encodeURIComponent(id)}?collection=${encodeURIComponent(collection)}`);
    if (seq === memSeq) renderMemory(data.result);
  } catch (err) {
    if (seq === memSeq) body.replaceChildren(el("p", { class: "error-inline", text: err.message }));
  }
}

function payloadValue(v) {
  if (v === null || typeof v !== "object") return String(v);
  if (Array.isArray(v) && v.every((e) => typeof e !== "object")) return v.join(", ");
  return JSON.stringify(v);
}

function renderMemory(m) {
  const p = m.payload || {};
  const audit = m.audit || [];
  const keys = Object.keys(p).filter((k) => k !== "text").sort();
  const note = (a) => [a.note, a.related ? `related ${a.related}` : "", a.new_tier ? `tier ${a.old_tier} → ${a.new_tier}` : ""].filter(Boolean).join("; ");
  const notes = audit.some((a) => note(a) !== "");
  const rows = audit.map((a) => el("tr", { class: a.forgotten ? "forgotten" : "", data: { reason: a.reason } },
    el("td", { class: "at", text: a.at ? a.at.slice(0, 16).replace("T", " ") : "–", title: a.at || "" }),
    el("td", {}, el("strong", { text: a.reason }), a.decision ? ` (${a.decision})` : "", a.forgotten ? " · forgotten" : ""),
    el("td", { class: "num", text: `${fmt(a.old)} → ${fmt(a.new)}` }),
    el("td", { class: "num", text: `${a.old_n} → ${a.new_n}` }),
    el("td", { text: [a.session_id, a.turn_id].filter(Boolean).join(" / ") || "–" }),
    notes ? el("td", { text: note(a) }) : null));
  $("memory-body").replaceChildren(
    el("p", { class: "memory-text", text: typeof p.text === "string" ? p.text : "(no text)" }),
    el("p", { class: "hint" }, "id ", el("code", { id: "memory-id", text: String(m.id) }), ` in ${m.collection}`),
    el("h3", { text: `audit trail (${audit.length})` }),
    audit.length
      ? el("table", { id: "audit", class: "audit" },
        el("thead", {}, el("tr", {}, ["at", "reason", "confidence", "n", "session / turn", notes ? "note" : null].filter(Boolean).map((h) => el("th", { text: h })))),
        el("tbody", {}, rows))
      : el("p", { id: "audit", class: "hint", text: "No audit records: not written through memrank's write path, or erased." }),
    el("details", { class: "payload" }, el("summary", { text: `stored payload (${keys.length + (p.text !== undefined ? 1 : 0)} keys)` }),
      el("dl", { class: "kv" }, keys.map((k) => [el("dt", { text: k }), el("dd", { text: payloadValue(p[k]) })]))));
}

// --- wiring ------------------------------------------------------------------

function initKey() {
  const input = $("api-key");
  const box = $("key-box");
  const mark = () => box.classList.toggle("set", !!sessionStorage.getItem(KEY_STORE));
  $("key-save").addEventListener("click", () => {
    const v = input.value.trim();
    if (v) sessionStorage.setItem(KEY_STORE, v);
    else sessionStorage.removeItem(KEY_STORE);
    input.value = "";
    mark();
    box.open = false;
    loadCollections();
  });
  $("key-clear").addEventListener("click", () => {
    sessionStorage.removeItem(KEY_STORE);
    input.value = "";
    mark();
    loadCollections();
  });
  mark();
}

function init() {
  initKey();
  $("ask").addEventListener("submit", ask);
  $("collection").addEventListener("change", () => {
    const c = $("collection").value;
    sessionStorage.setItem(COLLECTION_STORE, c);
    setLink(c, "", 0, false);
    $("results").replaceChildren();
    $("summary").hidden = true;
    $("dropped").hidden = true;
    if (c) loadStats(c);
  });
  loadCollections();
}

init();
