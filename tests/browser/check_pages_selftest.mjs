// The browser test, tested: a tiny site of planted pages, each with one defect a reader would trip on, run through
// tests/browser/check_pages.mjs. Every planted defect must be reported on its page, and the clean page must pass
// (a check that cannot fail, or one that fails on a good page, is caught here). make test-browser runs it first.
// Usage: node tests/browser/check_pages_selftest.mjs
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const site = fs.mkdtempSync(path.join(os.tmpdir(), "anatomy-check-pages-"));
fs.mkdirSync(path.join(site, "html", "book"), { recursive: true });
const css = `body { margin: 0; } article { max-width: 740px; padding: 0 20px; box-sizing: border-box; } div.wrap { overflow-x: auto; }
  div.clip { overflow-x: hidden; } div.overlay { overflow-x: auto; scrollbar-width: none; }
  div.overlay::-webkit-scrollbar { display: none; }`;
const page = (body) => `<!doctype html><html><head><meta charset="utf-8"><style>${css}</style></head><body>` +
  `<main><article class="bd-article">${body}</article></main></body></html>`;
const wide = '<div style="width: 1100px; height: 20px; background: #ccc">a wide strip</div>';

// page name -> [its body, the text its report must contain (none: the page must pass)]
const planted = {
  "clean.html": [`<p>Text.</p><div class="wrap">${wide}</div><table><tr><td>1</td></tr></table>`, null],
  "wide.html": [`<p>Text.</p>${wide}`, "px past the"],
  "wide-at-420.html": ['<div style="width: 600px; height: 20px">fits at 1280 only</div>', "at 420 px div reaches"],
  "no-cue.html": [`<div class="overlay">${wide}</div>`, "scrolls sideways with no visible scroll bar"],
  "clipped.html": [`<div class="clip">${wide}</div>`, "cuts off"],
  "traceback.html": ['<div class="cell_output"><pre>Traceback (most recent call last):\n  ValueError: x</pre></div>',
    "a traceback in the page's text"],
  "small-text.html": ['<table><tr><td style="font-size: 9px">0.12</td></tr></table>', "table text at 9.0 px"],
  "sheets.html": ['<div class="anatomy-handouts"><section class="anatomy-handout">one</section>' +
    '<section class="anatomy-handout" style="break-before: page">two</section></div>', null],
  "sheet-too-long.html": ['<div class="anatomy-handouts"><section class="anatomy-handout">one' +
    '<div style="height: 1600px"></div></section><section class="anatomy-handout" style="break-before: page">' +
    "two</section></div>", "2 sheets take 3 pages"],
  "dead-link.html": ['<a href="missing.html">a page that is not there</a>', "link to a missing page"],
};
for (const [name, [body]] of Object.entries(planted)) fs.writeFileSync(path.join(site, "html", "book", name), page(body));

const reportPath = path.join(site, "report.json");
try {
  execFileSync("node", [path.join(here, "check_pages.mjs"), path.join(site, "html"), reportPath], { stdio: "pipe" });
} catch (e) {
  if (!fs.existsSync(reportPath)) throw e;  // the check itself broke: not a planted failure
}
const report = Object.fromEntries(JSON.parse(fs.readFileSync(reportPath, "utf8")).map((e) => [e.page, e]));
let wrong = 0;
for (const [name, [, expected]] of Object.entries(planted)) {
  const entry = report[name];
  const said = entry ? [...entry.problems, ...entry.errors] : ["(page not checked)"];
  const ok = expected === null ? said.length === 0 : said.some((p) => p.includes(expected));
  if (!ok) wrong++;
  console.log(`${ok ? "ok  " : "FAIL"} ${name}: expected ${expected === null ? "no problem" : `"${expected}"`}; ` +
    `reported ${said.length ? said.map((p) => `"${p.slice(0, 90)}"`).join("; ") : "nothing"}`);
}
fs.rmSync(site, { recursive: true, force: true });
console.log(`${Object.keys(planted).length - wrong} of ${Object.keys(planted).length} planted pages judged as planted`);
process.exit(wrong ? 1 : 0);
