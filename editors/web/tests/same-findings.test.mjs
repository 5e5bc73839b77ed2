// The playground reports what `oomlint check` reports: every fixture, analysed by the
// WebAssembly engine with all the fixtures as its project (the files the CLI finds around
// each one on disk), against the CLI's JSON for the same files. The tabs not in view are
// read as `check` reads a directory (`oomlint check fixtures`); the file in view as a file
// named on the command line. The CLI is target/debug/oomlint unless OOMLINT_BIN names
// another build.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { Engine } from "../src/engine.js";
import { dist, repo } from "./harness.mjs";

const cli = process.env.OOMLINT_BIN ?? path.join(repo, "target", "debug", "oomlint");

/** Every fixture a user could open: not the snapshots of expected output. */
function fixtures(dir = "fixtures") {
  const out = [];
  for (const entry of fs.readdirSync(path.join(repo, dir), { withFileTypes: true })) {
    const name = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== "snapshots") out.push(...fixtures(name));
    } else if (!/\.(snap|md)$/.test(entry.name)) {
      out.push(name);
    }
  }
  return out.sort();
}

const key = (d) => `${d.code} ${d.range.start?.line ?? d.range.line}:${d.range.start?.column ?? d.range.column} ${d.message}`;

test("the engine in WebAssembly finds what the CLI finds, on every fixture", { timeout: 300000 }, async (t) => {
  if (!fs.existsSync(cli)) {
    t.skip(`no CLI at ${cli}: build it (cargo build) or set OOMLINT_BIN`);
    return;
  }
  const names = fixtures();
  const check = (...args) => {
    let stdout;
    try {
      stdout = execFileSync(cli, ["check", "--output-format", "json", ...args], { cwd: repo, maxBuffer: 1 << 28 });
    } catch (error) {
      stdout = error.stdout; // exit 1: errors were found
    }
    return new Map(JSON.parse(stdout).files.map((f) => [f.path, f.diagnostics.map(key).sort()]));
  };
  const byCli = check("fixtures");

  const engine = await Engine.load(fs.readFileSync(path.join(dist, "oomlint_web.wasm")));
  const files = names.map((name) => ({ name, text: fs.readFileSync(path.join(repo, name), "latin1") }));
  // Text as the CLI reads it: UTF-8 where it is UTF-8 (fixtures of unreadable input are not).
  for (const file of files) {
    const bytes = fs.readFileSync(path.join(repo, file.name));
    const utf8 = new TextDecoder("utf-8", { fatal: true });
    try {
      file.text = utf8.decode(bytes);
    } catch {
      file.unreadable = true;
    }
  }
  const readable = files.filter((f) => !f.unreadable);
  const answer = engine.call("analyze", { files: readable, active: "", gpu: null });
  assert.equal(answer.error, undefined, answer.error);
  const byEngine = new Map(answer.files.map((f) => [f.name, f.diagnostics.map(key).sort()]));

  let compared = 0;
  const differences = [];
  for (const file of readable) {
    const expected = byCli.get(file.name) ?? [];
    const actual = byEngine.get(file.name) ?? [];
    compared += 1;
    if (JSON.stringify(expected) !== JSON.stringify(actual)) {
      differences.push(`${file.name}\n  CLI:    ${expected.join("\n          ")}\n  engine: ${actual.join("\n          ")}`);
    }
  }
  assert.ok(compared > 250, `${compared} fixtures compared`);
  const findings = [...byCli.values()].reduce((n, list) => n + list.length, 0);
  assert.ok(findings > 150, `the fixtures hold ${findings} findings`);
  t.diagnostic(`${compared} fixtures, ${findings} findings by the CLI`);
  // Findings that need the project: the script reads the configs it names.
  assert.ok(byEngine.get("fixtures/launch/accelerate_config_files.sh").some((k) => k.startsWith("OOM416")));
  assert.deepEqual(differences, [], `${differences.length} of ${compared} fixtures differ`);

  // The file in view is named: one oomlint does not read says so, as `check FILE` does.
  const named = ["fixtures/launch/configs/ds_zero3_offload.conf", "fixtures/logs/no-oom.log", "fixtures/python/trl-sft.py"];
  const byCliNamed = check(...named);
  for (const name of named) {
    const answer = engine.call("analyze", { files: readable, active: name, gpu: null });
    const actual = answer.files.find((f) => f.name === name).diagnostics.map(key).sort();
    assert.deepEqual(actual, byCliNamed.get(name) ?? [], name);
  }
  assert.ok(byCliNamed.get(named[0]).some((k) => k.startsWith("OOM008")), "a .conf named alone is not read");
});
