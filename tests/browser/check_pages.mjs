// Load every built page in headless Chromium, as a reader without a kernel would: list failed requests and
// console errors, measure the page's weight, and move each kernel-free explorer's controls, checking that the
// answer shown changes. Usage: node tests/browser/check_pages.mjs _build/html [report.json]
// Exit status 1 when a page fails a request, logs an error, weighs over 3 MB (its HTML, which carries the
// widget state and figures; the scripts every page shares are reported, not counted) or has an explorer that
// does not respond. Needs playwright-core (npm ci) and Chromium (CHROMIUM, default /usr/bin/chromium).
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(process.argv[2] || "_build/html");
const reportPath = process.argv[3];
const MAX_BYTES = 3 * 1024 * 1024;
const pages = fs.readdirSync(path.join(root, "book")).filter((f) => f.endsWith(".html")).sort();

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking"],
});

// the answer an explorer shows now: the text or image of its visible leaf
const visibleAnswer = (explorer) => {
  const leaves = [...explorer.querySelectorAll(".anatomy-answer, img")].filter((e) => e.offsetParent !== null);
  return leaves.map((e) => (e.tagName === "IMG" ? e.src.slice(-120) : e.innerText)).join(" | ");
};

const report = [];
let failures = 0;
for (const name of pages) {
  const file = path.join(root, "book", name);
  const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
  const failed = [], errors = [], sizes = new Map();
  page.on("requestfailed", (r) => failed.push(`${r.url()} (${r.failure()?.errorText})`));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("response", async (r) => {
    try { sizes.set(r.url(), (await r.body()).length); } catch { /* a redirect has no body */ }
  });
  await page.goto("file://" + file, { waitUntil: "load" });
  await page.waitForTimeout(3000); // the widget manager renders after load
  const explorers = await page.locator(".anatomy-static").all();
  const moves = [];
  for (const [i, explorer] of explorers.entries()) {
    const before = await explorer.evaluate(visibleAnswer);
    const slider = explorer.locator("[role=slider]").first();
    const select = explorer.locator("select").first();
    let how;
    if (await slider.count()) {
      await slider.focus();
      await page.keyboard.press("ArrowRight");
      how = "slider ArrowRight";
    } else if (await select.count()) {
      const options = await select.locator("option").allTextContents();
      const current = await select.inputValue();
      const next = options.find((o) => o !== current);
      await select.selectOption({ label: next });
      how = `select ${next}`;
    }
    await page.waitForTimeout(500);
    const after = await explorer.evaluate(visibleAnswer);
    const ok = Boolean(before) && Boolean(after) && before !== after;
    moves.push({ explorer: i, how, ok, before: before.slice(0, 100), after: after.slice(0, 100) });
    if (!ok) failures++;
  }
  const bytes = [...sizes.values()].reduce((a, b) => a + b, 0);
  const entry = { page: name, bytes, html_bytes: fs.statSync(file).size, failed, errors, explorers: moves };
  if (failed.length || errors.length || entry.html_bytes > MAX_BYTES) failures++;
  report.push(entry);
  console.log(`${name}: page ${(entry.html_bytes / 1e6).toFixed(2)} MB, ${(bytes / 1e6).toFixed(2)} MB loaded with ` +
    `shared scripts, ${failed.length} failed requests, ` +
    `${errors.length} console errors, explorers ${moves.map((m) => (m.ok ? "moved" : "STUCK")).join(", ") || "none"}`);
  for (const f of failed) console.log(`  failed: ${f}`);
  for (const e of errors) console.log(`  error: ${e.slice(0, 300)}`);
  await page.close();
}
await browser.close();
if (reportPath) fs.writeFileSync(reportPath, JSON.stringify(report, null, 2));
process.exit(failures ? 1 : 0);
