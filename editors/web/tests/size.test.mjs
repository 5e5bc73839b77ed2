// What a browser downloads for the playground, compressed as a server would send it
// (gzip -9): at most 3 MB, the engine's WebAssembly included.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { dist } from "./harness.mjs";

const LIMIT = 3_000_000;

test("the page with its WebAssembly is at most 3 MB gzip", (t) => {
  const files = fs.readdirSync(dist);
  assert.ok(files.includes("index.html") && files.includes("oomlint_web.wasm"), files.join(", "));
  const sizes = files.map((name) => {
    const bytes = fs.readFileSync(path.join(dist, name));
    return { name, raw: bytes.length, gzip: zlib.gzipSync(bytes, { level: 9 }).length };
  });
  for (const s of sizes) t.diagnostic(`${s.name}: ${s.raw} bytes, ${s.gzip} gzip`);
  const total = sizes.reduce((sum, s) => sum + s.gzip, 0);
  t.diagnostic(`total: ${total} bytes gzip`);
  assert.ok(total <= LIMIT, `${total} bytes gzip > ${LIMIT}`);
});
