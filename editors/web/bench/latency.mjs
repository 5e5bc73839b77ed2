// The playground's latency in headless Chromium: `node bench/latency.mjs` after build.sh
// (results in BENCH.md). Two figures, as issue #21 sets them:
// - keystroke → updated diagnostics and chart, on a 200-line config: each of RUNS keys is
//   timed from its keydown (in the page) to the next animation frame after the analysis
//   rendered, i.e. when the browser can paint the new state;
// - first analysis after the page loads: the first render, from navigation start and from
//   the load event.
// The config: a TRL SFT config of 200 lines, every TrainingArguments/SFTConfig key that has
// a scalar default written out with its default (from schema/trl-sft.json), a comment above each.
import fs from "node:fs";
import path from "node:path";
import { serve, launch, open, repo } from "../tests/harness.mjs";
import { toFragment } from "../src/state.js";

const RUNS = Number(process.env.RUNS ?? 60);

function config() {
  const schema = JSON.parse(fs.readFileSync(path.join(repo, "schema", "trl-sft.json"), "utf8"));
  const lines = ["# SFT of Qwen2.5 7B with every default written out", "model_name_or_path: Qwen/Qwen2.5-7B"];
  for (const [key, property] of Object.entries(schema.properties)) {
    const value = property.default;
    if (value === undefined || value === null || typeof value === "object") continue;
    const about = (property.description ?? key).split(/[.\n]/)[0].slice(0, 100);
    lines.push(`# ${about}`, `${key}: ${typeof value === "string" ? JSON.stringify(value) : value}`);
  }
  return `${lines.slice(0, 200).join("\n")}\n`;
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

const text = config();
const server = await serve();
const browser = await launch();
try {
  const { page } = await open(browser, server.url, toFragment({ files: [{ name: "sft.yaml", text }], active: "sft.yaml", gpu: "A10G" }));
  const load = await page.evaluate(() => {
    const [rendered] = performance.getEntriesByName("oomlint-rendered");
    const [navigation] = performance.getEntriesByType("navigation");
    const at = (name) => performance.getEntriesByName(name)[0].startTime;
    return {
      fromStart: rendered.startTime,
      fromLoad: rendered.startTime - navigation.loadEventEnd,
      loadEnd: navigation.loadEventEnd,
      info: at("oomlint-info"),
    };
  });
  const findings = await page.$$eval("#problems [data-rule]", (items) => items.length);
  // Type at the end of the first comment line: each key changes the text and reruns everything.
  await page.evaluate(() => {
    const view = window.oomlint.view;
    view.focus();
    const end = view.state.doc.line(1).to;
    view.dispatch({ selection: { anchor: end } });
    window.__latencies = [];
    window.addEventListener("keydown", () => {
      const start = performance.now();
      const seen = Number(document.body.dataset.analyses);
      const wait = () => {
        if (Number(document.body.dataset.analyses) > seen) {
          requestAnimationFrame(() => window.__latencies.push(performance.now() - start));
        } else {
          requestAnimationFrame(wait);
        }
      };
      queueMicrotask(wait);
    }, { capture: true });
  });
  for (let i = 0; i < RUNS; i++) {
    await page.keyboard.press(i % 2 === 0 ? "x" : "Backspace");
    await page.waitForFunction((n) => window.__latencies.length > n, i);
  }
  const latencies = await page.evaluate(() => window.__latencies);
  const lines = text.split("\n").length - 1;
  console.log(`| measure | value |
|---|---|
| config | TRL SFT YAML, ${lines} lines, ${findings} findings, GPU A10G |
| keystroke → diagnostics and chart painted, median (${RUNS} keys) | ${quantile(latencies, 0.5).toFixed(1)} ms |
| keystroke → painted, p90 | ${quantile(latencies, 0.9).toFixed(1)} ms |
| keystroke → painted, max | ${Math.max(...latencies).toFixed(1)} ms |
| first analysis rendered, from navigation start | ${load.fromStart.toFixed(0)} ms |
| first analysis rendered, after the load event | ${load.fromLoad.toFixed(0)} ms |
| of which: load event / engine compiled and started / first analysis rendered | ${load.loadEnd.toFixed(0)} / ${load.info.toFixed(0)} / ${load.fromStart.toFixed(0)} ms |`);
} finally {
  await browser.close();
  server.close();
}
