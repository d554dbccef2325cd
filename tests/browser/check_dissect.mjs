// The page "Dissect your own model", driven as a reader would, offline: the built book served over HTTP from
// localhost (a worker cannot start from file://), every request elsewhere refused, a GGUF file set on the page's
// file input, and what the page computes in its Web Worker held to what the library computes in CPython.
//
// Usage: node tests/browser/check_dissect.mjs _build/html report.json FILE.gguf:EXPECTED.json [FILE:EXPECTED ...]
// EXPECTED.json is `python -m anatomy_lib dissect FILE --json EXPECTED.json` (make test-dissect writes them).
// Checks, for each file: the run finishes; every number (norms, stable ranks, held-out R^2, delta correlations)
// equals CPython's within 1e-6 relative; the progress bar went through every step and a cancel button showed;
// no request left localhost; no console error. Then a non-GGUF file and a truncated GGUF each give one line of
// error and leave the page usable, and Cancel stops a run. Reports time to the first component's result, total
// time and the worker's peak WebAssembly memory. Exit status 1 on any failure.
import { chromium } from "playwright-core";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";

const [rootArg, reportPath, ...pairs] = process.argv.slice(2);
const root = path.resolve(rootArg);
const TOLERANCE = 1e-6;
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json",
                ".wasm": "application/wasm", ".css": "text/css", ".zip": "application/zip", ".whl": "application/zip" };
const server = http.createServer((req, res) => {
  const file = path.join(root, decodeURIComponent(new URL(req.url, "http://x").pathname));
  if (!file.startsWith(root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { "content-type": TYPES[path.extname(file)] || "application/octet-stream" });
  fs.createReadStream(file).pipe(res);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
         "--enable-precise-memory-info"],
});
const failures = [];
const report = { origin, files: [], errors: [] };

async function openPage() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const outside = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith("blob:") || url.startsWith("data:")) return route.continue();
    outside.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  const consoleErrors = [];
  page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  await page.goto(`${origin}/book/dissect.html`, { waitUntil: "load" });
  return { context, page, outside, consoleErrors };
}

const finished = (page, timeout = 600_000) => page.waitForFunction(
  () => ["done", "error", "cancelled"].includes(window.anatomyDissection.state), null, { timeout, polling: 200 });

function relative(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b || (Number.isNaN(a) && Number.isNaN(b)) ? 0 : Infinity;
  return Math.abs(a - b) / Math.max(Math.abs(b), 1e-12);
}

function compare(got, expected) {
  let worst = { diff: 0 };
  const keyOf = (table, row) => [table, row.model, row.component, row.layer, row.predictor, row.shuffle].join("|");
  for (const [table, fields] of [["layers", ["frobenius", "rms", "top_singular", "stable_rank"]], ["ridge", ["r2",
      "cosine"]], ["deltas", ["corr"]]]) {
    const mine = new Map(got[table].map((r) => [keyOf(table, r), r]));
    if (mine.size !== expected[table].length) failures.push(`${table}: ${mine.size} rows, CPython ${expected[table].length}`);
    for (const row of expected[table]) {
      const other = mine.get(keyOf(table, row));
      if (!other) { failures.push(`${table}: no row ${keyOf(table, row)}`); continue; }
      for (const f of fields) {
        const diff = relative(other[f], row[f]);
        if (diff > worst.diff) worst = { diff, table, field: f, key: keyOf(table, row), browser: other[f], cpython: row[f] };
      }
    }
  }
  return worst;
}

for (const pair of pairs) {
  const [file, expectedPath] = pair.split(":");
  const expected = JSON.parse(fs.readFileSync(expectedPath, "utf8"));
  const { context, page, outside, consoleErrors } = await openPage();
  await page.setInputFiles("input[type=file]", file);
  await page.waitForFunction(() => !document.querySelector(".anatomy-dissect-cancel").hidden, null, { timeout: 30_000 });
  await finished(page);
  const state = await page.evaluate(() => ({ ...window.anatomyDissection,
    jsHeap: performance.memory ? performance.memory.usedJSHeapSize : null,
    figures: document.querySelectorAll(".anatomy-dissect-figure").length,
    barMax: document.querySelector("progress").max, barValue: document.querySelector("progress").value }));
  const entry = { file: path.basename(file), bytes: fs.statSync(file).size, state: state.state,
                  firstComponentS: state.firstComponentMs / 1000, totalS: state.totalMs / 1000,
                  wasmHeapMB: state.heapBytes / 1e6, mainJsHeapMB: state.jsHeap / 1e6, figures: state.figures,
                  steps: state.progress.length, outside, consoleErrors };
  if (state.state !== "done") failures.push(`${entry.file}: ended ${state.state}: ${state.error}`);
  else {
    entry.worst = compare(state.result, expected);
    if (entry.worst.diff > TOLERANCE) failures.push(`${entry.file}: browser and CPython differ by ${entry.worst.diff} ` +
      `relative at ${entry.worst.key} ${entry.worst.field}`);
    const total = expected.model.components.length * 4;
    if (entry.steps !== total || state.barValue !== total) failures.push(`${entry.file}: progress reached ` +
      `${state.barValue} of ${total} after ${entry.steps} messages`);
    if (state.figures < 3) failures.push(`${entry.file}: ${state.figures} figures drawn, expected 3`);
    // every component the file has can be picked, and picking one redraws the charts for it
    for (const component of expected.model.components) {
      await page.selectOption("select.anatomy-dissect-component", component);
      const drawn = await page.evaluate(() => document.querySelector(".anatomy-dissect-charts").dataset.component);
      if (drawn !== component) failures.push(`${entry.file}: picked ${component}, charts show ${drawn}`);
    }
  }
  if (outside.length) failures.push(`${entry.file}: requests left localhost: ${outside.slice(0, 3)}`);
  if (consoleErrors.length) failures.push(`${entry.file}: console errors: ${consoleErrors.slice(0, 3)}`);
  report.files.push(entry);
  console.log(`${entry.file}: ${entry.state}, first component ${entry.firstComponentS?.toFixed(1)} s, all ` +
              `${entry.totalS?.toFixed(1)} s, worker memory ${entry.wasmHeapMB?.toFixed(0)} MB, largest difference ` +
              `${entry.worst?.diff?.toExponential(2)} (${entry.worst?.table} ${entry.worst?.field})`);
  await context.close();
}

// bad files: one line of error each, and the page still answers (a specimen can be shown after)
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "dissect-"));
const notGguf = path.join(scratch, "notes.gguf");
fs.writeFileSync(notGguf, "these are not weights\n".repeat(100));
const bad = [[notGguf, /not a readable GGUF file/]];
if (pairs.length) {
  const truncated = path.join(scratch, "truncated.gguf");
  const fd = fs.openSync(pairs[0].split(":")[0], "r");
  const head = Buffer.alloc(5_000_000);
  fs.readSync(fd, head, 0, head.length, 0);
  fs.writeFileSync(truncated, head);
  bad.push([truncated, /not a readable GGUF file/]);
}
for (const [file, pattern] of bad) {
  const { context, page, consoleErrors } = await openPage();
  await page.setInputFiles("input[type=file]", file);
  await finished(page, 120_000);
  const seen = await page.evaluate(() => ({ state: window.anatomyDissection.state, error: window.anatomyDissection.error,
    status: document.querySelector(".anatomy-dissect-status").textContent }));
  report.errors.push({ file: path.basename(file), ...seen });
  if (seen.state !== "error" || !pattern.test(seen.error) || seen.status.includes("\n") || seen.status.length > 300) {
    failures.push(`${path.basename(file)}: expected one line matching ${pattern}, got ${seen.state}: ${seen.status}`);
  }
  const options = await page.$$eval("select.anatomy-dissect-specimen option", (os) => os.map((o) => o.value).filter(Boolean));
  if (options.length) {
    await page.selectOption("select.anatomy-dissect-specimen", options[0]);
    const figures = await page.$$eval(".anatomy-dissect-figure", (fs) => fs.length);
    if (figures < 2) failures.push(`after an error, the specimen ${options[0]} drew ${figures} figures`);
  }
  if (consoleErrors.length) failures.push(`${path.basename(file)}: console errors: ${consoleErrors.slice(0, 3)}`);
  console.log(`${path.basename(file)}: ${seen.status}`);
  await context.close();
}

// Cancel: a run stops, the page says so, and nothing keeps running
if (pairs.length) {
  const { context, page } = await openPage();
  await page.setInputFiles("input[type=file]", pairs[0].split(":")[0]);
  await page.waitForFunction(() => !document.querySelector(".anatomy-dissect-cancel").hidden, null, { timeout: 30_000 });
  await page.click("button.anatomy-dissect-cancel");
  const seen = await page.evaluate(() => ({ state: window.anatomyDissection.state,
    status: document.querySelector(".anatomy-dissect-status").textContent }));
  report.cancel = seen;
  if (seen.state !== "cancelled" || !/Cancelled/.test(seen.status)) failures.push(`cancel: ${JSON.stringify(seen)}`);
  await context.close();
}

await browser.close();
server.close();
report.failures = failures;
if (reportPath) fs.writeFileSync(reportPath, JSON.stringify(report, null, 1));
for (const f of failures) console.log(`FAIL ${f}`);
console.log(failures.length ? `${failures.length} problem(s)` : "the dissection page: 0 problems");
process.exit(failures.length ? 1 : 0);
