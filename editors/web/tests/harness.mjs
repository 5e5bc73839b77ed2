// Shared by the browser tests and the benchmark: serves dist/ on a loopback port and
// starts Debian's Chromium through playwright-core (which downloads no browser).
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";

export const web = path.dirname(path.dirname(new URL(import.meta.url).pathname));
export const dist = path.join(web, "dist");
export const repo = path.join(web, "..", "..");

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".wasm": "application/wasm",
};

/** Serves dist/ on 127.0.0.1; resolves to { url, close }. */
export function serve() {
  const server = http.createServer((request, response) => {
    const name = decodeURIComponent(new URL(request.url, "http://x").pathname).replace(/^\/+/, "") || "index.html";
    const file = path.join(dist, path.normalize(name));
    if (!file.startsWith(dist) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
    fs.createReadStream(file).pipe(response);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${server.address().port}/`, close: () => server.close() }),
    ),
  );
}

export function chromiumPath() {
  return process.env.CHROMIUM ?? "/usr/bin/chromium";
}

/** A headless Chromium with no network of its own (this machine's network is closed). */
export function launch() {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Opens the page (with `fragment`) and waits for the first analysis. */
export async function open(browser, url, fragment = "") {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  await page.goto(url + fragment);
  await page.waitForSelector("body[data-ready=true]", { timeout: 20000 });
  return { page, errors };
}

/** Waits until the page has run one more analysis than `before`. */
export async function nextAnalysis(page, before) {
  await page.waitForFunction((n) => Number(document.body.dataset.analyses) > n, before, { timeout: 10000 });
}

export async function analyses(page) {
  return Number(await page.evaluate(() => document.body.dataset.analyses ?? 0));
}
