// The README's quick start, run as it is written against MEMRANK_URL: only
// the package name (resolved to dist/), the address and the collection (a
// fresh one) are replaced. If the README changes, this runs the new text.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";

import { freshCollection, server } from "./helpers.mjs";

const { url, skip } = server("MEMRANK_URL", "`memrank serve --demo`");

describe("the README's quick start", { skip }, () => {
  it("prints the memory and its one audit record", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    const m = /<!-- quickstart -->\n```js\n([\s\S]*?)```\n<!-- end quickstart -->/.exec(readme);
    assert.ok(m, "the README has no quick start between its markers");
    const code = m[1];
    assert.equal(code.trim().split("\n").length, 5, "the quick start is five lines");
    for (const s of ['"@memrank/client"', '"http://127.0.0.1:6333"', '"notes"']) {
      assert.ok(code.includes(s), `the quick start no longer has ${s}`);
    }
    const script = code
      .replaceAll('"@memrank/client"', JSON.stringify(new URL("../dist/index.js", import.meta.url).href))
      .replaceAll('"http://127.0.0.1:6333"', JSON.stringify(url))
      .replaceAll('"notes"', JSON.stringify(freshCollection("sdk_js_readme")));
    const dir = await mkdtemp(path.join(tmpdir(), "memrank-sdk-js-readme-"));
    try {
      const file = path.join(dir, "quickstart.mjs");
      await writeFile(file, script);
      const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 30_000 });
      assert.equal(stdout, "Dana uses Neovim 1\n");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
