// The explain page (GET /ui) in headless Chromium, against a running
// `memrank serve --demo`: pick dana_memories, ask "where does Dana live",
// check the first result and its bars against the answer the page itself
// received, open its audit trail, check the stats, take a screenshot.
// Then, as an attacker would: reach the page by a name rebound to memrank's
// address (DNS rebinding), and send requests from a page of another origin;
// memrank must refuse both (403), and nothing may change. With OPEN_URL,
// the rebinding attack on a port that needs no credential: a page on the
// rebound name reads the API with same-origin GETs, which a browser sends
// with no Origin and no Fetch Metadata; memrank must refuse them (403).
//
//   MEMRANK_URL   memrank's HTTP base URL (required), e.g. http://127.0.0.1:6333
//   SCREENSHOT    where to write the PNG (required)
//   EXPECT_AUDIT  an audit reason the first result's trail must show (optional)
//   API_KEY       the key memrank asks for (optional): the page must show
//                 the refusal, then work once the key is entered
//   MARKUP        a collection whose one memory's text is markup (optional):
//                 asked "favourite tag", it must show as text, never as HTML
//   OPEN_URL      another memrank serve --demo, on a port that needs no
//                 credential (optional), for the rebinding attack on it
//   CHROMIUM      the browser (default /usr/bin/chromium)
//
// Prints a JSON report on success; throws (exit status 1) on the first
// failed check. cmd/memrank's TestUIBrowser runs it.

import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const base = process.env.MEMRANK_URL;
const screenshot = process.env.SCREENSHOT;
if (!base || !screenshot) {
  throw new Error("set MEMRANK_URL and SCREENSHOT");
}
const expectAudit = process.env.EXPECT_AUDIT || "";
const apiKey = process.env.API_KEY || "";
const keyHeader = apiKey ? { "api-key": apiKey } : {};
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const question = "where does Dana live";

function check(ok, what) {
  if (!ok) throw new Error(`check failed: ${what}`);
}

function near(got, want, tol, what) {
  check(Math.abs(got - want) <= tol, `${what}: got ${got}, want ${want} ± ${tol}`);
}

const profile = await mkdtemp(join(tmpdir(), "memrank-ui-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    // evil.example is an attacker's name that resolves to memrank.
    "--host-resolver-rules=MAP evil.example 127.0.0.1"],
  viewport: { width: 1440, height: 1100 },
  timeout: 30000,
});
const report = { checks: [] };
const done = (name) => report.checks.push(name);

try {
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(15000);
  const problems = [];
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  // Every request the page makes stays on memrank's origin.
  const origin = new URL(base).origin;
  const foreign = [];
  page.on("request", (r) => { if (new URL(r.url()).origin !== origin) foreign.push(r.url()); });

  // The page, with its security headers; the stats of the collection it
  // picks first (dana_memories).
  const statsAnswer = page.waitForResponse((r) => r.url().includes("/v1/stats?collection=dana_memories"));
  const res = await page.goto(`${base}/ui`, { waitUntil: "load" });
  check(res.status() === 200, `GET /ui: ${res.status()}`);
  const h = res.headers();
  check((h["content-security-policy"] || "").includes("default-src 'self'"), `CSP: ${h["content-security-policy"]}`);
  check((h["content-security-policy"] || "").includes("frame-ancestors 'none'"), "CSP forbids framing");
  check(h["x-content-type-options"] === "nosniff", "nosniff");
  check(h["x-frame-options"] === "DENY", "X-Frame-Options");
  done("page served with its security headers");

  if (apiKey) {
    // Without the key memrank refuses the page's calls, and the page says
    // where the key goes; with it, everything below works.
    await page.locator("#error").waitFor();
    const refusal = await page.locator("#error").textContent();
    check(refusal.includes("API key"), `the refusal without a key: ${refusal}`);
    check(await page.locator("#collection option").count() === 0, "collections listed without the key");
    await page.click("#key-box summary");
    await page.fill("#api-key", apiKey);
    await page.click("#key-save");
    await page.locator("#error").waitFor({ state: "hidden" });
    // The browser logs the refused calls; those were expected.
    problems.splice(0, problems.length, ...problems.filter((p) => !p.includes("401 (Unauthorized)")));
    done("the API key is asked for and used");
  }
  await page.locator("#collection option[value=dana_memories]").waitFor({ state: "attached" });
  const options = await page.locator("#collection option").allTextContents();
  check(!options.some((o) => o.endsWith("_memrank_audit")), `audit companions offered: ${options}`);
  await page.selectOption("#collection", "dana_memories");
  const stats = (await (await statsAnswer).json()).result;
  await page.locator("#stats-memories").waitFor();
  check(await page.locator("#stats-memories").textContent() === String(stats.memories),
    `stats memories shown ${await page.locator("#stats-memories").textContent()}, answered ${stats.memories}`);
  const tierRows = await page.locator("[data-counts=tiers] .count-row").count();
  check(tierRows === Object.keys(stats.tiers).length, `tier rows ${tierRows}, tiers ${Object.keys(stats.tiers)}`);
  check(await page.locator("#stats-body").getAttribute("data-state") === "ready", "stats state ready");
  done("stats rendered");

  // The question.
  await page.fill("#question", question);
  const [answer, texts] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/v1/retrieve") && r.request().method() === "POST"),
    page.waitForResponse((r) => r.url().endsWith("/collections/dana_memories/points") && r.request().method() === "POST"),
    page.click("#go"),
  ]);
  check(answer.status() === 200, `retrieve: ${answer.status()}`);
  // The question is in the page's URL, so that it can be linked.
  const link = new URL(page.url());
  check(link.pathname === "/ui" && link.searchParams.get("collection") === "dana_memories" && link.searchParams.get("q") === question,
    `the page's URL after asking: ${page.url()}`);
  if (apiKey) check(!page.url().includes(apiKey), "the API key is in the URL");
  const sent = answer.request().postDataJSON();
  check(sent.explain === true && sent.count_access === false && sent.collection === "dana_memories" && sent.text === question,
    `retrieve body ${JSON.stringify(sent)}`);
  const data = await answer.json();
  check(data.reranked === true && data.result.length > 0, "a re-ranked answer");
  await page.locator("#results .result").first().waitFor();
  check(await page.locator("#results .result").count() === data.result.length, "one card per result");
  done("question asked, read-only (count_access false)");

  const first = page.locator("#results .result").first();
  const r0 = data.result[0];
  const text = await first.locator(".open .text").textContent();
  check(text.includes(process.env.EXPECT_FIRST ?? ""), `first result: ${text}, want ${process.env.EXPECT_FIRST}`);
  check(await first.getAttribute("data-id") === String(r0.id), "first card is the answer's first result");
  report.first = { id: String(r0.id), text };

  // Each bar is as wide as its factor, on its scale: base, freshness, the
  // freshness factor and confidence on [0, 1]; the boost and the score
  // against the largest in the answer.
  const maxBoost = Math.max(1, ...data.result.map((r) => r.access_boost ?? 0));
  const maxScore = Math.max(...data.result.map((r) => r.score));
  const want = { base: r0.base_score, freshness: r0.freshness, freshness_factor: r0.freshness_factor, boost: r0.access_boost / maxBoost, confidence: r0.confidence, score: r0.score / maxScore };
  const values = { base: r0.base_score, freshness: r0.freshness, freshness_factor: r0.freshness_factor, boost: r0.access_boost, confidence: r0.confidence, score: r0.score };
  report.bars = {};
  for (const [name, fraction] of Object.entries(want)) {
    const f = first.locator(`.factor[data-factor=${name}]`);
    const track = await f.locator(".track").boundingBox();
    const fill = await f.locator(".fill").boundingBox();
    check(track && fill && track.width > 50, `${name}: bar drawn`);
    near(fill.width / track.width, Math.min(1, fraction), 0.01, `${name} bar width`);
    check(await f.locator(".factor-value").textContent() === values[name].toFixed(3), `${name} value shown`);
    report.bars[name] = Number((fill.width / track.width).toFixed(4));
  }
  check(fill0(report.bars.score) === 1, "the first result's score bar is full");
  // The weight's formula, with the freshness factor; every factor in the
  // details, days_to_archive null as "never archived".
  const formula = await first.locator(".formula").textContent();
  const x0 = r0.explanation;
  check(formula === `weight ${r0.base_score.toFixed(3)} × ${r0.freshness_factor.toFixed(3)} × ${r0.access_boost.toFixed(3)} × ${x0.confidence_factor.toFixed(2)} = ${r0.weight.toFixed(3)}`,
    `formula: ${formula}`);
  const detail = (card, name) => card.locator(".explanation dl").evaluate((dl, name) => {
    const dt = [...dl.querySelectorAll("dt")].find((d) => d.textContent === name);
    return dt ? dt.nextElementSibling.textContent : null;
  }, name);
  check(await detail(first, "days to archive") === (x0.days_to_archive === null ? "never archived" : x0.days_to_archive.toFixed(3)),
    `days to archive shown ${await detail(first, "days to archive")}, answered ${x0.days_to_archive}`);
  check(await detail(first, "within decay floor") === String(x0.within_decay_floor), "within decay floor shown");
  check(await detail(first, "focus") === x0.focus.toFixed(3), "focus shown in the details");
  // The guard: the result's decision as a badge, the band's cutoff as a
  // mark on the base bar, the report in the summary.
  check(await first.locator(`.badge.guard-${r0.guard}`).count() === 1, `guard badge ${r0.guard}`);
  const cutoff = Number(await page.locator("#guard-report").getAttribute("data-cutoff"));
  near(cutoff, data.guard.cutoff, 1e-9, "guard report cutoff");
  const guardText = await page.locator("#guard-report").textContent();
  check(guardText.endsWith(`→ ${data.guard.relevant} relevant, ${data.guard.beyond} beyond, ${data.guard.folded} folded`), `guard report: ${guardText}`);
  near(Number(await page.locator("#focus").getAttribute("data-focus")), data.guard.focus, 1e-9, "the query's focus");
  // The guard's report is information, not an error: not in the error
  // box's colours, and bluer than it is red.
  const colours = await page.evaluate(() => {
    const bg = (el) => getComputedStyle(el).backgroundColor;
    return { guard: bg(document.getElementById("guard-report")), error: bg(document.getElementById("error")) };
  });
  const [gr, , gb] = colours.guard.match(/\d+/g).map(Number);
  check((await page.locator("#guard-report").getAttribute("class")).split(" ").includes("info") && colours.guard !== colours.error && gb > gr,
    `the guard report's colours: ${JSON.stringify(colours)}`);
  check(await page.locator("#as-of").count() === 0, "an as-of chip for an answer asked as of now");
  // The tier as of the answer, and the stored one where they differ.
  for (const r of data.result) {
    const card = page.locator(`#results .result[data-id="${r.id}"]`);
    check(await card.locator(".badge", { hasText: `tier: ${r.tier}` }).count() === 1, `${r.id}: tier badge ${r.tier}`);
    const stored = r.stored_tier && r.stored_tier !== r.tier ? 1 : 0;
    check(await card.locator(".badge", { hasText: "stored tier:" }).count() === stored, `${r.id}: stored tier ${r.stored_tier}, tier ${r.tier}`);
  }
  const mark = await first.locator(".factor[data-factor=base] .mark").boundingBox();
  const baseTrack = await first.locator(".factor[data-factor=base] .track").boundingBox();
  near((mark.x + mark.width / 2 - baseTrack.x) / baseTrack.width, data.guard.cutoff, 0.01, "cutoff mark position");
  // The gates.
  check(await first.locator(".badge", { hasText: r0.render ? "render: shown" : "render: hidden" }).count() === 1, "render gate badge");
  check(await first.locator(".badge", { hasText: "below retrieval gate" }).count() === (r0.below_gate ? 1 : 0), "retrieval gate badge");
  done("first result's bars, guard and gates");

  // Folded duplicates, on their result and in the left-out list.
  const folding = data.result.filter((r) => r.folded_ids.length > 0);
  for (const r of folding) {
    const line = await page.locator(`#results .result[data-id="${r.id}"] .folded`).getAttribute("data-folded");
    check(line === r.folded_ids.map(String).join(","), `folded into ${r.id}: ${line}`);
  }
  const dropped = data.dropped || [];
  check(await page.locator("#dropped tbody tr").count() === dropped.length, "one row per dropped candidate");
  check(await page.locator("#dropped tbody tr[data-reason=folded]").count() === dropped.filter((d) => d.reason === "folded").length, "folded rows");
  // Each left-out memory's text beside its id: read by id in one request,
  // cut to DROPPED_TEXT_CHARS characters, whole in the title.
  check(texts.status() === 200, `the left-out texts: ${texts.status()}`);
  const asked = texts.request().postDataJSON();
  check(JSON.stringify(asked.ids.map(String)) === JSON.stringify(dropped.map((d) => String(d.id))), `texts asked for ${JSON.stringify(asked.ids)}`);
  const byID = new Map((await texts.json()).result.map((p) => [String(p.id), p.payload.text]));
  await page.locator("#dropped .dropped-text.pending").first().waitFor({ state: "detached" });
  for (const d of dropped) {
    const cell = page.locator(`#dropped tbody tr[data-id="${d.id}"] .dropped-text`);
    const full = byID.get(String(d.id));
    check(typeof full === "string" && full !== "", `left-out ${d.id}: no text read`);
    const shown = await cell.textContent();
    check(await cell.getAttribute("title") === full, `left-out ${d.id}: title ${await cell.getAttribute("title")}, text ${full}`);
    const chars = Array.from(full);
    check(chars.length <= 90 ? shown === full : shown.endsWith("…") && Array.from(shown).length <= 90 && full.startsWith(shown.slice(0, -1)),
      `left-out ${d.id}: shown ${shown}, text ${full}`);
  }
  report.folded = folding.length;
  report.dropped = dropped.length;
  done("folded duplicates and left-out candidates");

  // The first result's history.
  const [mem] = await Promise.all([
    page.waitForResponse((r) => r.url().includes(`/v1/memories/${encodeURIComponent(String(r0.id))}?`)),
    first.locator(".open").click(),
  ]);
  check(mem.status() === 200, `memory: ${mem.status()}`);
  const view = (await mem.json()).result;
  await page.locator("#memory-id").waitFor();
  check(await page.locator("#memory-id").textContent() === String(r0.id), "history of the clicked memory");
  const rows = await page.locator("#audit tbody tr").count();
  check(rows === view.audit.length, `audit rows ${rows}, records ${view.audit.length}`);
  if (expectAudit) {
    check(await page.locator(`#audit tbody tr[data-reason=${expectAudit}]`).count() > 0, `an audit record ${expectAudit} among ${JSON.stringify(view.audit)}`);
  }
  report.audit = view.audit.map((a) => a.reason);
  done("audit history on click");

  check(problems.length === 0, `the page logged errors: ${problems.join("; ")}`);
  check(foreign.length === 0, `requests off the origin: ${foreign.join(", ")}`);
  await page.screenshot({ path: screenshot });
  report.screenshot = screenshot;
  done("screenshot");

  await linked(page, data, problems);
  if (process.env.MARKUP) await markup(page, process.env.MARKUP);
  check(problems.length === 0, `the page logged errors: ${problems.join("; ")}`);
  await attacks(String(r0.id), view.audit.length);
  if (process.env.OPEN_URL) await rebinding(process.env.OPEN_URL);
  process.stdout.write(JSON.stringify(report) + "\n");
} finally {
  await context.close();
  await rm(profile, { recursive: true, force: true });
}

// linked reloads the page on its own URL, as a person following a link
// would: the question in the URL is asked without a click. The stats fail
// on this load: the panel says so and offers to try again, which works.
async function linked(page, first, problems) {
  await page.route("**/v1/stats?*", (route) => route.fulfill({ status: 500, contentType: "application/json",
    body: JSON.stringify({ status: { error: "stats are down for this test" }, time: 0 }) }));
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/v1/retrieve") && r.request().method() === "POST"),
    page.reload({ waitUntil: "load" }),
  ]);
  const sent = answer.request().postDataJSON();
  check(sent.collection === "dana_memories" && sent.text === question && sent.count_access === false, `the linked question sent ${JSON.stringify(sent)}`);
  check(await page.locator("#question").inputValue() === question, "the linked question is in the box");
  check(await page.locator("#collection").inputValue() === "dana_memories", "the linked collection is picked");
  await page.locator("#results .result").first().waitFor();
  check(await page.locator("#results .result").first().getAttribute("data-id") === String(first.result[0].id), "the linked question's first result");
  await page.locator("#stats-error").waitFor();
  check(await page.locator("#stats-body").getAttribute("data-state") === "error", "stats state error");
  const why = await page.locator("#stats-error").textContent();
  check(why.includes("dana_memories") && why.includes("stats are down for this test"), `the stats error: ${why}`);
  await page.unroute("**/v1/stats?*");
  await page.click("#stats-retry");
  await page.locator("#stats-memories").waitFor();
  check(await page.locator("#stats-body").getAttribute("data-state") === "ready", "stats state ready after a retry");
  // The browser logs the refused stats; that one was made to fail.
  const kept = [];
  for (const p of problems) if (!p.includes("500 (Internal Server Error)")) kept.push(p);
  problems.splice(0, problems.length, ...kept);
  done("a linked question runs on load; a stats failure says so and retries");
}

// markup asks a collection whose memory's text is HTML: the page must show
// the characters, create no element from them and run none of them.
async function markup(page, collection) {
  await page.selectOption("#collection", collection);
  await page.fill("#question", "favourite tag");
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/v1/retrieve")),
    page.click("#go"),
  ]);
  const data = await answer.json();
  check(data.result.length > 0, `no result in ${collection}`);
  await page.locator("#results .result").first().waitFor();
  const shown = await page.locator("#results .result .open .text").first().textContent();
  check(shown === data.result[0].payload.text && shown.includes("<img"), `markup shown as ${shown}`);
  const made = await page.locator("#results img, #results script, #results b").count();
  check(made === 0, `${made} elements made from a memory's text`);
  check(await page.evaluate(() => window.__pwned === undefined), "a memory's text ran as script");
  done("a memory's markup is shown as text");
  await page.selectOption("#collection", "dana_memories");
}

// attacks plays the two attacks the host guard is for, in a fresh tab.
async function attacks(id, auditBefore) {
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const port = new URL(base).port;

  // DNS rebinding: the attacker's name, resolved to memrank's address.
  const rebound = await page.goto(`http://evil.example:${port}/ui`);
  check(rebound.status() === 403, `the page by a rebound name: ${rebound.status()}`);
  check((await rebound.text()).includes("DNS rebinding"), "the refusal says why");
  done("a rebound name is refused");

  // Another origin: a page of its own server asks memrank to read and to
  // confirm a memory with requests a browser sends without a preflight.
  const site = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>another site</title><p>another site</p>");
  });
  await new Promise((ok) => site.listen(0, "127.0.0.1", ok));
  try {
    const other = `http://127.0.0.1:${site.address().port}`;
    const seen = new Map();
    page.on("response", (r) => { if (r.url().startsWith(base)) seen.set(new URL(r.url()).pathname, r.status()); });
    await page.goto(`${other}/`);
    const confirm = `/v1/memories/${encodeURIComponent(id)}/confirm`;
    await page.evaluate(async ({ base, confirm }) => {
      const opts = { mode: "no-cors", credentials: "include" };
      await fetch(`${base}/collections`, opts).catch(() => {});
      await fetch(`${base}${confirm}`, { ...opts, method: "POST", headers: { "content-type": "text/plain" },
        body: JSON.stringify({ collection: "dana_memories", session_id: "attacker" }) }).catch(() => {});
    }, { base, confirm });
    for (const path of ["/collections", confirm]) {
      check(seen.get(path) === 403, `another origin's request for ${path}: ${seen.get(path)}`);
    }
  } finally {
    site.close();
  }
  const after = await (await fetch(`${base}/v1/memories/${encodeURIComponent(id)}?collection=dana_memories`, { headers: keyHeader })).json();
  check(after.result.audit.length === auditBefore, `the memory's audit trail changed: ${JSON.stringify(after.result.audit)}`);
  done("another origin's requests are refused");
  await page.close();
}

// rebinding plays DNS rebinding against a port that needs no credential
// (openBase): the attacker's page at http://evil.example:PORT, its name
// resolved to memrank's address, reads the API with same-origin GETs. The
// same reads from memrank's own origin succeed first, so that the refusal
// is the guard's, not a failed fetch.
async function rebinding(openBase) {
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const port = new URL(openBase).port;
  const paths = ["/v1/stats?collection=dana_memories", "/collections"];
  const readAll = () => page.evaluate(async (paths) => Promise.all(paths.map(async (p) => {
    const r = await fetch(p);
    return { path: p, status: r.status, body: await r.text() };
  })), paths);

  await page.goto(`http://127.0.0.1:${port}/healthz`);
  for (const r of await readAll()) {
    check(r.status === 200 && r.body.includes('"result"'), `${r.path} from memrank's own origin: ${r.status} ${r.body.slice(0, 200)}`);
  }

  const sent = [];
  page.on("request", (r) => { if (new URL(r.url()).hostname === "evil.example") sent.push(r); });
  const landing = await page.goto(`http://evil.example:${port}/healthz`);
  check(landing.status() === 403, `the attacker's page by the rebound name: ${landing.status()}`);
  check(new URL(page.url()).origin === `http://evil.example:${port}`, `the page's origin: ${page.url()}`);
  for (const r of await readAll()) {
    check(r.status === 403 && r.body.includes("DNS rebinding") && r.body.includes("listen.allowed_hosts"),
      `the rebinding page's GET ${r.path}: ${r.status} ${r.body.slice(0, 200)}`);
  }
  // What made the old guard let these through: the browser marked them as
  // nothing a browser sends.
  const reads = sent.filter((r) => r.resourceType() === "fetch");
  check(reads.length === paths.length, `the page's reads seen: ${reads.length}`);
  for (const r of reads) {
    const h = await r.allHeaders();
    const marks = Object.keys(h).filter((k) => k === "origin" || k.startsWith("sec-fetch-"));
    check(marks.length === 0, `the rebinding page's GET ${r.url()} carried ${marks.join(", ")}`);
  }
  done("a rebinding page's reads of an open port are refused");
  await page.close();
}

function fill0(x) {
  return Math.round(x * 100) / 100;
}
