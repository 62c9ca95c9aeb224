// dist/ is committed, so that the package works without a build step; this
// fails when it is not what src/ compiles to (run `npm run build`), and
// when the published declarations stop describing the API as
// test/types/usage.ts uses it. It needs the pinned TypeScript (npm ci):
// without it the test is skipped, or fails with MEMRANK_JS_TESTS=require.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = fileURLToPath(new URL("..", import.meta.url));
const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
const missing = existsSync(tsc) ? false : "node_modules/typescript is missing: run `npm ci` in sdk/js";
if (missing && process.env.MEMRANK_JS_TESTS === "require") {
  throw new Error(`${missing} (MEMRANK_JS_TESTS=require: the SDK's tests must run)`);
}

/** Runs the pinned tsc; its diagnostics are the failure's message. */
async function compile(...args) {
  try {
    await run(process.execPath, [tsc, ...args], { cwd: root, timeout: 60_000 });
  } catch (err) {
    assert.fail(`tsc ${args.join(" ")} failed:\n${err.stdout}${err.stderr}`);
  }
}

async function tree(dir) {
  const out = {};
  for (const name of (await readdir(dir)).sort()) {
    out[name] = await readFile(path.join(dir, name), "utf8");
  }
  return out;
}

// Concurrently: each tsc spends seconds loading itself.
describe("dist", { skip: missing, concurrency: true }, () => {
  it("is what src/ compiles to", async () => {
    const out = await mkdtemp(path.join(tmpdir(), "memrank-sdk-js-"));
    try {
      await compile("-p", "tsconfig.json", "--outDir", out);
      const want = await tree(out);
      const got = await tree(path.join(root, "dist"));
      assert.deepEqual(Object.keys(got), Object.keys(want), "dist/ has other files than the build: run `npm run build` in sdk/js");
      for (const [name, text] of Object.entries(want)) {
        assert.ok(got[name] === text, `dist/${name} is stale: run \`npm run build\` in sdk/js and commit dist/`);
      }
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it("declares the API as a caller uses it", async () => {
    await compile("-p", path.join("test", "types", "tsconfig.json"));
  });
});
