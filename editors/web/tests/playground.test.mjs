// The playground in a real browser: Debian's Chromium driven by playwright-core, against
// dist/ as build.sh builds it. Screenshots land in test-results/ (look at them).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { serve, launch, open, nextAnalysis, analyses, repo, web } from "./harness.mjs";
import { toFragment } from "../src/state.js";

const shots = path.join(web, "test-results");
fs.mkdirSync(shots, { recursive: true });
const fixture = (name) => fs.readFileSync(path.join(repo, "fixtures", name), "utf8");

let server;
let browser;
before(async () => {
  server = await serve();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.close();
});

const rulesShown = (page) =>
  page.$$eval("#problems [data-rule]", (items) => items.map((i) => `${i.dataset.file}:${i.dataset.rule}`));
const peak = async (page) => Number(await page.textContent('[data-testid="peak-device-gib"]'));
const editorText = (page) => page.evaluate(() => window.oomlint.view.state.doc.toString());

/** Replaces the editor's text by typing it, as a user would. */
async function typeInto(page, text) {
  await page.click(".cm-content");
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  // insertText types the whole text as one input (auto-indent would re-indent typed lines).
  await page.keyboard.insertText(text);
}

test("the page loads its first example with an estimate, charts and no errors", async () => {
  const { page, errors } = await open(browser, server.url);
  assert.ok((await peak(page)) > 1, "a device peak in GiB");
  assert.ok((await page.$$(".charts svg")).length >= 2, "the views chart and one chart per phase");
  assert.match(await page.textContent(".verdict"), /on the A10G/);
  await page.screenshot({ path: path.join(shots, "loaded.png") });
  assert.deepEqual(errors, []);
});

test("typing a config shows its diagnostics and chart; a quick fix makes the finding go", async () => {
  const { page, errors } = await open(browser, server.url);
  const before = await analyses(page);
  const chartsBefore = await page.innerHTML(".charts");
  await typeInto(page, fixture("rules/removed-key/fail.yaml"));
  await nextAnalysis(page, before);
  await page.waitForSelector('#problems [data-rule="removed-key"]');
  const shown = await rulesShown(page);
  assert.ok(shown.filter((r) => r.endsWith(":removed-key")).length >= 1, shown.join(", "));
  assert.ok((await peak(page)) > 0);
  const charts = await page.innerHTML(".charts");
  assert.notEqual(charts, chartsBefore, "the charts follow the text");
  assert.match(charts, /Qwen|peak/);
  // The editor underlines it too.
  assert.ok((await page.$$(".cm-lintRange-error, .cm-lintRange-warning")).length >= 1);
  await page.screenshot({ path: path.join(shots, "typed.png") });

  const count = (await rulesShown(page)).filter((r) => r.endsWith(":removed-key")).length;
  const typed = await editorText(page);
  const fix = page.locator('#problems [data-rule="removed-key"] button.fix').first();
  const title = await fix.textContent();
  const n = await analyses(page);
  await fix.click();
  await nextAnalysis(page, n);
  const after = (await rulesShown(page)).filter((r) => r.endsWith(":removed-key")).length;
  assert.equal(after, count - 1, `"${title}" removed one finding`);
  assert.notEqual(await editorText(page), typed, "the fix edited the text");
  await page.screenshot({ path: path.join(shots, "fixed.png") });
  assert.deepEqual(errors, []);
});

test("a shared URL loads the same state back, and Share writes it", async () => {
  const text = fixture("rules/removed-key/fail.yaml");
  const fragment = `#gpu=T4&file=sft.yaml&text=${encodeURIComponent(text)}`;
  const { page, errors } = await open(browser, server.url, fragment);
  assert.equal(await editorText(page), text);
  assert.equal(await page.inputValue("#gpu"), "T4");
  assert.match(await page.textContent(".verdict"), /on the T4/);
  const rules = await rulesShown(page);
  assert.ok(rules.includes("sft.yaml:removed-key"), rules.join(", "));

  await page.selectOption("#gpu", "L4");
  await page.click("#share");
  const shared = await page.evaluate(() => location.hash);
  assert.equal(shared, toFragment({ files: [{ name: "sft.yaml", text }], active: "sft.yaml", gpu: "L4" }));
  const again = await open(browser, server.url, shared);
  assert.equal(await editorText(again.page), text);
  assert.equal(await again.page.inputValue("#gpu"), "L4");
  assert.deepEqual(await rulesShown(again.page), await rulesShown(page));
  assert.equal(await peak(again.page), await peak(page));
  assert.deepEqual([...errors, ...again.errors], []);
});

test("a launch script is read with the configs it names, in tabs", async () => {
  const names = ["accelerate_config_files.sh", "configs/accelerate_ds.yaml", "configs/ds_zero3_offload.conf", "configs/sft.yaml"];
  const files = names.map((name) => ({ name: `launch/${name}`, text: fixture(`launch/${name}`) }));
  const { page, errors } = await open(browser, server.url, toFragment({ files, active: files[0].name, gpu: "A100-40GB" }));
  assert.deepEqual(await page.$$eval("#tabs .tab", (tabs) => tabs.map((t) => t.dataset.file)), files.map((f) => f.name));
  assert.ok((await rulesShown(page)).includes("launch/accelerate_config_files.sh:accelerate-mixed-precision-mismatch"));
  assert.ok((await peak(page)) > 0);
  await page.screenshot({ path: path.join(shots, "launch.png") });

  // Changing the TRL config in its tab changes the script's findings: it reads the tab.
  await page.click('#tabs [data-file="launch/configs/sft.yaml"] .tab-name');
  const n = await analyses(page);
  const sft = await editorText(page);
  await typeInto(page, sft.replace(/^bf16: true$/m, "bf16: false\nfp16: true"));
  await nextAnalysis(page, n);
  assert.ok(!(await rulesShown(page)).includes("launch/accelerate_config_files.sh:accelerate-mixed-precision-mismatch"));
  assert.deepEqual(errors, []);
});

test("a fix of a launch edits the tab of the file where the value is set", async () => {
  const files = [
    { name: "ds/fail-launch-world.sh", text: fixture("rules/deepspeed-batch-arithmetic/fail-launch-world.sh") },
    { name: "ds/launch/ds_zero2.conf", text: fixture("rules/deepspeed-batch-arithmetic/launch/ds_zero2.conf") },
  ];
  const { page, errors } = await open(browser, server.url, toFragment({ files, active: files[0].name, gpu: "A100-40GB" }));
  assert.ok((await rulesShown(page)).includes("ds/fail-launch-world.sh:deepspeed-batch-arithmetic"));
  const n = await analyses(page);
  await page.locator('#problems [data-rule="deepspeed-batch-arithmetic"] button.fix').first().click();
  await nextAnalysis(page, n);
  const conf = await page.evaluate(() => window.oomlint.states.get("ds/launch/ds_zero2.conf").doc.toString());
  assert.equal(conf, files[1].text.replace('"train_batch_size": 64', '"train_batch_size": 32'));
  assert.equal(await editorText(page), files[0].text, "the script is not edited");
  assert.ok(!(await rulesShown(page)).includes("ds/fail-launch-world.sh:deepspeed-batch-arithmetic"));
  assert.deepEqual(errors, []);
});

test("a Python notebook gets its findings and an estimate; hover shows the breakdown", async () => {
  const text = fixture("python/unsloth-grpo.ipynb");
  const { page, errors } = await open(browser, server.url, toFragment({ files: [{ name: "grpo.ipynb", text }], active: "grpo.ipynb", gpu: "T4" }));
  assert.ok((await rulesShown(page)).length >= 1);
  assert.ok((await peak(page)) > 1);
  // Hover on a key that moves memory: its breakdown table.
  const at = await page.evaluate(() => window.oomlint.view.state.doc.toString().indexOf("per_device_train_batch_size"));
  assert.ok(at > 0);
  const box = await page.evaluate((pos) => {
    const view = window.oomlint.view;
    view.dispatch({ effects: [], selection: { anchor: pos }, scrollIntoView: true });
    const rect = view.coordsAtPos(pos + 3);
    return rect && { x: rect.left + 1, y: (rect.top + rect.bottom) / 2 };
  }, at);
  await page.waitForTimeout(100);
  const coords = await page.evaluate((pos) => {
    const rect = window.oomlint.view.coordsAtPos(pos + 3);
    return { x: rect.left + 1, y: (rect.top + rect.bottom) / 2 };
  }, at);
  assert.ok(box);
  await page.mouse.move(coords.x, coords.y);
  const tooltip = await page.waitForSelector(".oomlint-hover table", { timeout: 5000 });
  assert.match(await tooltip.textContent(), /component/);
  await page.screenshot({ path: path.join(shots, "notebook-hover.png") });
  assert.deepEqual(errors, []);
});

test("applying a lever lowers the peak", async () => {
  const text = fixture("litgpt/llama-2-7b-lora.yaml");
  const { page, errors } = await open(browser, server.url, toFragment({ files: [{ name: "lora.yaml", text }], active: "lora.yaml", gpu: "A10G" }));
  const first = await peak(page);
  const lever = page.locator('.levers button[data-action="lever"]').first();
  const n = await analyses(page);
  await lever.click();
  await nextAnalysis(page, n);
  assert.notEqual(await editorText(page), text);
  assert.ok((await peak(page)) < first, `${await peak(page)} < ${first}`);
  assert.deepEqual(errors, []);
});

test("the examples menu loads a whole project with its GPU", async () => {
  const { page, errors } = await open(browser, server.url);
  const options = await page.$$eval("#examples option", (o) => o.map((x) => x.textContent));
  const index = options.findIndex((o) => o.startsWith("verl GRPO")) - 1;
  assert.ok(index >= 0, options.join(" | "));
  const n = await analyses(page);
  await page.selectOption("#examples", String(index));
  await nextAnalysis(page, n);
  assert.equal(await page.inputValue("#gpu"), "H100-80GB", "the catalog name of `H100`");
  assert.match(await editorText(page), /verl\.trainer\.main_ppo/);
  assert.ok((await peak(page)) > 1);
  await page.screenshot({ path: path.join(shots, "verl-example.png") });
  assert.deepEqual(errors, []);
});
