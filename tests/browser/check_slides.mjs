// Open every seminar deck (slides/session-*.html, written by book/_ext/slides.py) in headless Chromium, offline,
// as a teacher would, and check it. Usage: node tests/browser/check_slides.mjs _build/html [screenshots-dir]
//
// For each deck, at 1280 x 720:
// - no console error, no failed request, no request that leaves the built site (a deck opens offline);
// - every image loaded (a natural width), and none drawn wider or taller than the screen;
// - ArrowRight walks every slide in order: the counter reads "n / total", one slide shown at a time, no slide's
//   text cut off at its bottom edge; ArrowLeft goes back one;
// - printed (print to PDF, A4 landscape), one page per slide.
// The index (slides/index.html) links to every deck. With a screenshots directory, each slide is saved there.
// Exit status 1 when any deck fails a check. Needs playwright-core (npm ci) and Chromium (CHROMIUM, default
// /usr/bin/chromium).
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(process.argv[2] || "_build/html");
const shotsDir = process.argv[3];
const folder = path.join(root, "slides");
if (!fs.existsSync(folder)) {
  console.error(`no ${folder}: build the book first (make book)`);
  process.exit(1);
}
const decks = fs.readdirSync(folder).filter((f) => /^session-\d+\.html$/.test(f))
  .sort((a, b) => parseInt(a.match(/\d+/)[0]) - parseInt(b.match(/\d+/)[0]));
if (shotsDir) fs.mkdirSync(shotsDir, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking"],
});

let failures = 0;
const index = fs.readFileSync(path.join(folder, "index.html"), "utf8");
const listed = new Set([...index.matchAll(/href="(session-\d+\.html)"/g)].map((m) => m[1]));
const unlisted = decks.filter((d) => !listed.has(d));
if (!decks.length || unlisted.length) {
  failures++;
  console.log(`FAIL index.html: ${decks.length ? "does not link " + unlisted.join(", ") : "no decks"}`);
}

for (const name of decks) {
  const file = path.join(folder, name);
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const problems = [];
  page.on("requestfailed", (r) => problems.push(`failed request ${r.url()} (${r.failure()?.errorText})`));
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console error: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error: ${e}`));
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith("file://" + root + "/")) return route.continue();
    problems.push(`request outside the built site: ${url}`);
    return route.abort();
  });
  await page.goto("file://" + file, { waitUntil: "load" });

  const images = await page.evaluate(() => [...document.images].map((i) => ({
    src: i.getAttribute("src"), loaded: i.complete && i.naturalWidth > 0 })));
  for (const image of images) if (!image.loaded) problems.push(`broken image ${image.src}`);
  const total = await page.locator(".slide").count();
  if (!total) problems.push("no slides");

  for (let n = 1; n <= total; n++) {
    if (n > 1) await page.keyboard.press("ArrowRight");
    const state = await page.evaluate(() => {
      const shown = [...document.querySelectorAll(".slide")].filter((s) => getComputedStyle(s).display !== "none");
      const slide = shown[0];
      const out = { shown: shown.length, counter: document.getElementById("counter").textContent, problems: [] };
      if (!slide) return out;
      out.id = slide.id;
      out.title = slide.querySelector("h1")?.textContent || "";
      const box = slide.getBoundingClientRect();
      for (const img of slide.querySelectorAll("img")) {
        const r = img.getBoundingClientRect();
        if (r.width < 50 || r.height < 50) out.problems.push(`image drawn ${Math.round(r.width)}x${Math.round(r.height)} px`);
        if (r.right > box.right + 1 || r.bottom > box.bottom + 1) out.problems.push("image past the slide's edge");
      }
      // text cut off: the slide's content taller than the slide (it hides overflow), or a scrolling table
      const bottom = Math.max(...[...slide.children].map((c) => c.getBoundingClientRect().bottom));
      if (bottom > box.bottom + 1) out.problems.push(`content runs ${Math.round(bottom - box.bottom)} px past the bottom`);
      for (const t of slide.querySelectorAll(".table")) {
        if (t.scrollHeight > t.clientHeight + 1 || t.scrollWidth > t.clientWidth + 1) out.problems.push("table cut off");
      }
      return out;
    });
    const where = `slide ${n} (${state.title})`;
    if (state.shown !== 1) problems.push(`${where}: ${state.shown} slides shown at once`);
    if (state.id !== `slide-${n}`) problems.push(`${where}: ArrowRight shows ${state.id}, not slide-${n}`);
    if (state.counter !== `${n} / ${total}`) problems.push(`${where}: the counter reads "${state.counter}"`);
    for (const p of state.problems) problems.push(`${where}: ${p}`);
    if (shotsDir) await page.screenshot({ path: path.join(shotsDir, `${name.replace(".html", "")}-${n}.png`) });
  }
  if (total > 1) {
    await page.keyboard.press("ArrowLeft");
    const back = await page.evaluate(() => document.querySelector(".slide.current")?.id);
    if (back !== `slide-${total - 1}`) problems.push(`ArrowLeft from the last slide shows ${back}`);
  }

  const pdf = await page.pdf({ format: "A4", landscape: true, printBackground: true });
  const pages = (pdf.toString("latin1").match(/\/Type\s*\/Page[^s]/g) || []).length;
  if (pages !== total) problems.push(`prints ${pages} pages for ${total} slides`);

  await page.close();
  if (problems.length) failures++;
  console.log(`${problems.length ? "FAIL" : "ok  "} ${name}: ${total} slides, ${images.length} images, ` +
    `${pages} printed pages${problems.length ? "\n  " + problems.join("\n  ") : ""}`);
}
await browser.close();
console.log(failures ? `${failures} problem(s): see above` : `all ${decks.length} decks pass, and the index lists them all`);
process.exit(failures ? 1 : 0);
