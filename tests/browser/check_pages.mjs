// Load every built page in headless Chromium, as a reader without a kernel would, and check what that reader
// sees. Usage: node tests/browser/check_pages.mjs _build/html [report.json] [screenshots-dir]
//
// On every page (book/*.html), at 1280 px unless said otherwise:
// - no failed request, no console error, the page's HTML under 3 MB (it carries the widget state and figures;
//   the scripts every page shares are reported, not counted);
// - every figure shown at 90% or more of its natural width (figures are drawn for the content column);
// - no table text under 11 px;
// - no table wider than its container unless it sits in a scroll wrapper (overflow-x auto) no wider than the
//   column;
// - at 1280 and at 420 px, no element of any kind (an equation, a code line, a figure, a widget) reaching past
//   the content column unless a scroll wrapper no wider than the column holds it and draws its scroll bar (the
//   cue that it scrolls: a bar that takes space, not an overlay); nothing cut off by a wrapper that clips; and
//   the page itself never scrolls sideways;
// - every internal link resolves, to a page that exists and, with a #fragment, to an element with that id;
// - every kernel-free explorer (.anatomy-static) answers every one of its controls: moving each changes the
//   answer shown, and a text answer names the choice made (the layer, mode, component or model picked), so the
//   stack shown is the one computed for that choice;
// - every live control (a widget that needs a kernel, .anatomy-live) looks inert (no pointer events, faded), and
//   no widget control is left unmarked, looking active while it can do nothing;
// - at 420 px, every control of a kernel-free explorer keeps a usable width, and every claims table is a list of
//   cards (each cell labelled with its column, none past the screen's edge: the verdicts stay in view).
// - a page of printable sheets (.anatomy-handout) prints one page per sheet on A4 and on Letter;
// - every Font Awesome icon drawn (replaced by its SVG: the build serves a subset of the icons);
// - no traceback or error output anywhere in a page, and at least as many figures and tables shown as the page's
//   executed notebook (_build/jupyter_execute) displays outside folded or removed cells: a chapter whose setup
//   cell failed shows a traceback and nothing after it, and fails here even where the build said nothing.
// With a screenshots directory, each page is also saved there at 1280 and 420 px (make screenshots).
// Exit status 1 when any page fails any check. Needs playwright-core (npm ci) and Chromium (CHROMIUM, default
// /usr/bin/chromium).
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(process.argv[2] || "_build/html");
const reportPath = process.argv[3];
const shotsDir = process.argv[4];
const MAX_BYTES = 3 * 1024 * 1024;
const MIN_FIGURE_SHARE = 0.9;
const MIN_TEXT_PX = 11; // the smallest table text a reader is asked to read
const MIN_CONTROL_PX = { slider: 120, select: 60, button: 24 };
// every page under book/, the API's per-package pages (book/api/) included
// (PAGES, a regular expression, keeps only the pages it matches: for looking at one page while fixing it)
const only = process.env.PAGES ? new RegExp(process.env.PAGES) : null;
const pages = fs.readdirSync(path.join(root, "book"), { recursive: true }).filter((f) => f.endsWith(".html"))
  .filter((f) => !only || only.test(f)).sort();
if (shotsDir) fs.mkdirSync(shotsDir, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking"],
  // scroll bars drawn as a desktop reader sees them (headless hides them by default), so a wrapper's bar, the
  // cue that it scrolls, can be measured
  ignoreDefaultArgs: ["--hide-scrollbars"],
});

// the answer an explorer shows now: the text or image of its visible leaf
const visibleAnswer = (explorer) => {
  const leaves = [...explorer.querySelectorAll(".anatomy-answer, img")].filter((e) => e.offsetParent !== null);
  return leaves.map((e) => (e.tagName === "IMG" ? e.src.slice(-120) : e.innerText)).join(" | ");
};

// the controls of an explorer that a reader can see now: [kind, index among that kind]
const visibleControls = (explorer) => {
  const seen = (e) => e.offsetParent !== null;
  const out = [];
  explorer.querySelectorAll("[role=slider]").forEach((e, i) => seen(e) && out.push(["slider", i]));
  explorer.querySelectorAll("select").forEach((e, i) => seen(e) && out.push(["select", i]));
  explorer.querySelectorAll(".widget-toggle-buttons").forEach((e, i) => seen(e) && out.push(["toggle", i]));
  return out;
};

async function move(page, explorer, kind, index) {
  if (kind === "slider") {
    const slider = explorer.locator("[role=slider]").nth(index);
    await slider.focus();
    const before = await slider.getAttribute("aria-valuenow");
    await page.keyboard.press("ArrowRight");
    if ((await slider.getAttribute("aria-valuenow")) === before) await page.keyboard.press("ArrowLeft");
    return "slider";
  }
  if (kind === "select") {
    const select = explorer.locator("select").nth(index);
    const options = await select.locator("option").allTextContents();
    const current = await select.evaluate((s) => s.options[s.selectedIndex]?.text);
    const next = options.find((o) => o !== current);
    await select.selectOption({ label: next });
    return `select ${next}`;
  }
  const buttons = explorer.locator(".widget-toggle-buttons").nth(index).locator("button");
  const count = await buttons.count();
  for (let b = 0; b < count; b++) {
    const pressed = await buttons.nth(b).evaluate((e) => e.classList.contains("mod-active"));
    if (!pressed) {
      await buttons.nth(b).click();
      return `toggle ${await buttons.nth(b).innerText()}`;
    }
  }
  return "toggle (no other choice)";
}

// every internal link: the file exists and the fragment names an element of it
const idsOf = new Map();
function ids(file) {
  if (!idsOf.has(file)) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
    idsOf.set(file, text === null ? null : new Set([...text.matchAll(/\bid="([^"]+)"/g)].map((m) => m[1])));
  }
  return idsOf.get(file);
}

const report = [];
// What a page's executed notebook displays outside folded or removed cells (figures, tables): the least the page
// must show. A widget view is an explorer, checked apart; null where the page has no executed notebook.
const HIDDEN_TAGS = new Set(["remove-output", "remove-cell", "hide-output", "hide-cell"]);
function displayed(name) {
  const executed = path.join(root, "..", "jupyter_execute", "book", name.replace(/\.html$/, ".ipynb"));
  if (!fs.existsSync(executed)) return null;
  const counts = { figures: 0, tables: 0 };
  for (const cell of JSON.parse(fs.readFileSync(executed, "utf8")).cells) {
    if (cell.cell_type !== "code" || (cell.metadata?.tags || []).some((t) => HIDDEN_TAGS.has(t))) continue;
    for (const output of cell.outputs || []) {
      const data = output.data || {};
      if ("application/vnd.jupyter.widget-view+json" in data) continue;
      if ("image/png" in data || "image/svg+xml" in data) counts.figures++;
      else if ("text/html" in data && [].concat(data["text/html"]).join("").includes("<table")) counts.tables++;
    }
  }
  return counts;
}

// what reaches past the content column and is not held by a scroll wrapper that shows it scrolls (run in the
// page): the outermost such element only, so one wide equation is one problem, not one per glyph
const overflowing = (width) => {
  const article = document.querySelector("article.bd-article") || document.querySelector("main");
  const style = getComputedStyle(article);
  const box = article.getBoundingClientRect();
  const left = box.left + parseFloat(style.paddingLeft), right = box.right - parseFloat(style.paddingRight);
  const out = [];
  const reported = new Set();
  const name = (e) => `${e.tagName.toLowerCase()}${e.className && typeof e.className === "string" ?
    "." + e.className.trim().split(/\s+/).slice(0, 2).join(".") : ""}`;
  for (const e of article.querySelectorAll("*")) {
    if (e.offsetParent === null && getComputedStyle(e).position !== "fixed") continue;
    if (e.closest("mjx-assistive-mml, .sr-only, .visually-hidden")) continue;  // for screen readers, never drawn
    if (e.tagName === "OPTION") continue;  // drawn in the select's pop-up, not in the column (the select is checked)
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height || (r.right <= right + 1 && r.left >= left - 1)) continue;
    // the nearest ancestor that scrolls or clips sideways
    let holder = e.parentElement;
    while (holder && holder !== article && getComputedStyle(holder).overflowX === "visible") holder = holder.parentElement;
    if (holder && holder !== article) {
      const h = holder.getBoundingClientRect();
      const o = getComputedStyle(holder).overflowX;
      const visibleInHolder = r.right <= h.right + 1 && r.left >= h.left - 1;
      if (visibleInHolder && h.right <= right + 1 && h.left >= left - 1) continue;  // wide, but not past the column
      if (h.right <= right + 1 && h.left >= left - 1) {
        if (o === "auto" || o === "scroll") {
          // a drawn bar takes space under the content; an overlay bar (or none) leaves no cue; a wrapper whose
          // content fits after all (a border a pixel past its edge) hides nothing
          if (holder.scrollWidth <= holder.clientWidth + 1) continue;
          if (holder.offsetHeight - holder.clientHeight > 0 || reported.has(holder)) continue;
          reported.add(holder);
          out.push(`at ${width} px ${name(holder)} scrolls sideways with no visible scroll bar ` +
            `(${(holder.innerText || "").slice(0, 40).replace(/\s+/g, " ")})`);
        } else if (!reported.has(holder)) {
          reported.add(holder);
          out.push(`at ${width} px ${name(holder)} cuts off ${name(e)} (${Math.round(r.width)} px in ` +
            `${Math.round(h.width)}: ${(e.innerText || e.getAttribute("alt") || "").slice(0, 40).replace(/\s+/g, " ")})`);
        }
        continue;
      }
    }
    // past the column with nothing holding it (or a holder past the column too): report the outermost
    if ([...reported].some((x) => x.contains(e))) continue;
    reported.add(e);
    out.push(`at ${width} px ${name(e)} reaches ${Math.round(Math.max(r.right - right, left - r.left))} px past ` +
      `the ${Math.round(right - left)} px column (${(e.innerText || e.getAttribute("alt") || "").slice(0, 40).replace(/\s+/g, " ")})`);
  }
  if (document.documentElement.scrollWidth > window.innerWidth + 1) {
    out.push(`at ${width} px the page scrolls sideways (${document.documentElement.scrollWidth} px wide)`);
  }
  return out;
};

let failures = 0;
for (const name of pages) {
  const file = path.join(root, "book", name);
  const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
  const failed = [], errors = [], problems = [], sizes = new Map();
  page.on("requestfailed", (r) => failed.push(`${r.url()} (${r.failure()?.errorText})`));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("response", async (r) => {
    try { sizes.set(r.url(), (await r.body()).length); } catch { /* a redirect has no body */ }
  });
  await page.goto("file://" + file, { waitUntil: "load" });
  await page.waitForTimeout(3000); // the widget manager renders after load
  // on a busy machine it can take longer: wait (up to 30 s) until every explorer shows a control and an answer
  await page.waitForFunction(({ controls, answer }) => {
    const seen = new Function(`return (${controls})`)();
    const shown = new Function(`return (${answer})`)();
    return [...document.querySelectorAll(".anatomy-static")].every((e) => seen(e).length && shown(e));
  }, { controls: visibleControls.toString(), answer: visibleAnswer.toString() }, { timeout: 30000 })
    .catch(() => { /* judged below: an explorer without a control or an answer is reported there */ });

  // figures at (nearly) natural size; tables fit or scroll
  const layout = await page.evaluate(({ share, minText }) => {
    const article = document.querySelector("article.bd-article") || document.querySelector("main");
    const column = article.clientWidth - parseFloat(getComputedStyle(article).paddingLeft) -
      parseFloat(getComputedStyle(article).paddingRight);
    const out = [];
    const counts = { figures: 0, tables: 0, live_controls: 0 };
    for (const img of article.querySelectorAll("img")) {
      if (!img.naturalWidth || img.offsetParent === null) continue;
      counts.figures++;
      const shown = img.getBoundingClientRect().width;
      if (shown < share * Math.min(img.naturalWidth, column) - 1) {
        out.push(`figure shown at ${Math.round(100 * shown / img.naturalWidth)}% of its natural ` +
          `${img.naturalWidth} px (${img.src.slice(-40)})`);
      } else if (img.naturalWidth > column / share + 1 && !img.closest(".anatomy-static, .anatomy-live")) {
        out.push(`figure ${img.naturalWidth} px wide in a ${Math.round(column)} px column`);
      }
    }
    for (const table of article.querySelectorAll("table")) {
      if (table.offsetParent === null) continue;
      counts.tables++;
      // text a reader can read: nothing in a table under MIN_TEXT_PX
      let smallest = Infinity, where = "";
      for (const e of table.querySelectorAll("td, th, td *, th *")) {
        if (!e.textContent.trim() || e.offsetParent === null) continue;
        const px = parseFloat(getComputedStyle(e).fontSize);
        if (px < smallest) { smallest = px; where = e.textContent.trim().slice(0, 30); }
      }
      if (smallest < minText - 0.05) {
        out.push(`table text at ${smallest.toFixed(1)} px, under ${minText} px ("${where}")`);
      }
      const width = table.getBoundingClientRect().width;
      const parent = table.parentElement.getBoundingClientRect().width;
      if (width <= column + 1 && width <= parent + 1) continue;
      let scroller = table.parentElement;
      while (scroller && scroller !== article && !["auto", "scroll"].includes(getComputedStyle(scroller).overflowX)) {
        scroller = scroller.parentElement;
      }
      if (!scroller || scroller === article || scroller.getBoundingClientRect().width > column + 1) {
        out.push(`table ${Math.round(width)} px wide in a ${Math.round(column)} px column, not in a scroll wrapper ` +
          `(${(table.innerText || "").slice(0, 40).replace(/\s+/g, " ")})`);
      }
    }
    // live controls look inert; no control outside an explorer class
    const controls = "input, select, button.jupyter-button, .widget-slider, .widget-hslider";
    for (const control of article.querySelectorAll(controls)) {
      if (!control.closest(".jupyter-widgets, .widget-area, .jp-OutputArea-output, .cell_output")) continue;
      if (!control.closest(".widget-inline-hbox, .widget-box, .jupyter-widgets")) continue;
      if (control.closest(".anatomy-static")) continue;
      const live = control.closest(".anatomy-live");
      if (!live) {
        out.push(`a widget control outside any explorer class looks active without a kernel (${control.tagName})`);
        continue;
      }
      counts.live_controls++;
      let inert = false;
      for (let e = control; e && e !== live.parentElement; e = e.parentElement) {
        const s = getComputedStyle(e);
        if (s.pointerEvents === "none" && parseFloat(s.opacity) < 1) { inert = true; break; }
      }
      if (!inert) out.push(`a live control looks active without a kernel (${control.tagName})`);
    }
    return { out, counts };
  }, { share: MIN_FIGURE_SHARE, minText: MIN_TEXT_PX });
  problems.push(...layout.out);
  problems.push(...await page.evaluate(overflowing, 1280));
  const checked = { ...layout.counts, links: 0 };

  // every Font Awesome icon drawn (the build serves only the icons it found the pages using: one it missed stays
  // an empty <i>)
  const undrawn = await page.evaluate(() => [...document.querySelectorAll("i")]
    .filter((i) => /(^|\s)(fa[sbr]?|fa-solid|fa-regular|fa-brands)(\s|$)/.test(i.className)).map((i) => i.className));
  for (const icon of new Set(undrawn)) problems.push(`a Font Awesome icon not drawn: <i class="${icon}">`);

  // a page that failed to execute: its traceback, and what its notebook displays but the page does not show
  const tracebacks = await page.evaluate(() => {
    const article = document.querySelector("article.bd-article") || document.querySelector("main");
    const outputs = [...article.querySelectorAll(".output.traceback, .output.error, .cell_output .traceback")];
    const text = article.innerText.includes("Traceback (most recent call last)");
    return outputs.map((e) => e.innerText.trim().split("\n").slice(-1)[0].slice(0, 100))
      .concat(text && !outputs.length ? ["a traceback in the page's text"] : []);
  });
  for (const t of tracebacks) problems.push(`an error output in the page: ${t}`);
  const expected = displayed(name);
  if (expected) {
    for (const what of ["figures", "tables"]) {
      if (checked[what] < expected[what]) {
        problems.push(`${checked[what]} ${what} shown, its executed notebook displays ${expected[what]}`);
      }
    }
  }

  // internal links and anchors
  const links = await page.evaluate(() => [...document.querySelectorAll("article a[href]")].map((a) => a.getAttribute("href")));
  for (const href of new Set(links)) {
    if (/^[a-z]+:/i.test(href) || href.startsWith("//")) continue;
    checked.links++;
    const [target, fragment] = href.split("#");
    const targetFile = target ? path.resolve(path.dirname(file), decodeURI(target)) : file;
    const known = ids(targetFile);
    if (known === null) problems.push(`link to a missing page: ${href}`);
    else if (fragment && !known.has(decodeURIComponent(fragment))) problems.push(`link to a missing anchor: ${href}`);
  }

  // every control of every kernel-free explorer answers
  const explorers = await page.locator(".anatomy-static").all();
  const moves = [];
  for (const [i, explorer] of explorers.entries()) {
    for (const [kind, index] of await explorer.evaluate(visibleControls)) {
      const before = await explorer.evaluate(visibleAnswer);
      const how = await move(page, explorer, kind, index);
      await page.waitForTimeout(400);
      let after = await explorer.evaluate(visibleAnswer);
      for (let waited = 400; after === before && waited < 5000; waited += 200) {  // a busy machine answers late
        await page.waitForTimeout(200);
        after = await explorer.evaluate(visibleAnswer);
      }
      // the answer shown is the one for the choice made: a text answer names the chosen layer, mode or model
      const chosen = await explorer.evaluate((e, [kind, index]) => {
        if (kind === "slider") return e.querySelectorAll(".widget-readout")[index]?.innerText?.trim();
        if (kind === "select") { const s = e.querySelectorAll("select")[index]; return s.options[s.selectedIndex]?.text; }
        return e.querySelectorAll(".widget-toggle-buttons")[index]?.querySelector(".mod-active")?.innerText?.trim();
      }, [kind, index]);
      const texts = await explorer.evaluate((e) => [...e.querySelectorAll(".anatomy-answer")]
        .filter((a) => a.offsetParent !== null).map((a) => a.innerText).join(" "));
      const plain = (t) => (t || "").replace(/\s+/g, " ").trim();  // a widget's labels use no-break spaces
      const matches = !texts || kind === "toggle" || !chosen || plain(texts).includes(plain(chosen));
      if (!matches) problems.push(`explorer ${i}: after choosing ${chosen} the answer does not name it`);
      const ok = Boolean(before) && Boolean(after) && before !== after && matches;
      moves.push({ explorer: i, control: `${kind} ${index}`, how, ok, before: before.slice(0, 100),
                   after: after.slice(0, 100) });
      if (!ok) problems.push(`explorer ${i}: ${kind} ${index} (${how}) does not change the answer`);
    }
    if (!moves.some((m) => m.explorer === i)) problems.push(`explorer ${i} has no visible control`);
  }

  // a page of printable sheets (the handout) prints one page per sheet, on A4 and on Letter
  const sheets = await page.locator(".anatomy-handout").count();
  if (sheets) {
    for (const format of ["A4", "Letter"]) {
      const pdf = await page.pdf({ format, printBackground: false, margin: { top: "12mm", bottom: "12mm",
                                                                          left: "12mm", right: "12mm" } });
      const printed = (pdf.toString("latin1").match(/\/Type\s*\/Page[^s]/g) || []).length;
      checked[`printed_pages_${format}`] = printed;
      if (printed !== sheets) problems.push(`printed on ${format}, ${sheets} sheets take ${printed} pages`);
      if (shotsDir) fs.writeFileSync(path.join(shotsDir, `${name.replace(".html", "")}-${format}.pdf`), pdf);
    }
  }

  // at a phone's width, the explorers' controls keep a usable width
  await page.setViewportSize({ width: 420, height: 900 });
  await page.waitForTimeout(800);
  const narrow = await page.evaluate((least) => {
    const out = [];
    for (const explorer of document.querySelectorAll(".anatomy-static")) {
      const check = (selector, kind) => explorer.querySelectorAll(selector).forEach((e) => {
        if (e.offsetParent === null) return;
        const width = e.getBoundingClientRect().width;
        if (width < least[kind]) out.push(`at 420 px a ${kind} is ${Math.round(width)} px wide`);
        if (e.getBoundingClientRect().right > window.innerWidth + 1) out.push(`at 420 px a ${kind} leaves the screen`);
      });
      check(".slider-container", "slider");  // the track (the handle, [role=slider], is 16 px by design)
      check("select", "select");
      check(".widget-toggle-buttons button", "button");
    }
    // a claims table reads as cards: every verdict on screen, led by its column's name
    document.querySelectorAll("table.anatomy-claims").forEach((table, t) => {
      const cells = [...table.querySelectorAll("tbody td")];
      if (cells.some((c) => !c.dataset.label)) out.push(`claims table ${t}: a cell without its column's label`);
      if (cells.some((c) => c.getBoundingClientRect().right > window.innerWidth + 1))
        out.push(`at 420 px claims table ${t} runs off the screen`);
    });
    return out;
  }, MIN_CONTROL_PX);
  problems.push(...new Set(narrow));
  problems.push(...await page.evaluate(overflowing, 420));
  if (shotsDir) await page.screenshot({ path: path.join(shotsDir, `${name.replace(".html", "").replaceAll("/", "-")}-420.png`), fullPage: true });
  // the desktop screenshot last: a full-page screenshot resizes the page, and Chromium can leave its scroll bars
  // undrawn afterwards, which the checks at 420 px would read as a wrapper without its cue
  if (shotsDir) {
    await page.setViewportSize({ width: 1280, height: 1600 });
    await page.waitForTimeout(800);
    await page.screenshot({ path: path.join(shotsDir, `${name.replace(".html", "").replaceAll("/", "-")}-1280.png`), fullPage: true });
  }

  const bytes = [...sizes.values()].reduce((a, b) => a + b, 0);
  const entry = { page: name, bytes, html_bytes: fs.statSync(file).size, failed, errors, problems, checked,
                  explorers: moves };
  if (failed.length || errors.length || problems.length || entry.html_bytes > MAX_BYTES) failures++;
  report.push(entry);
  console.log(`${name}: page ${(entry.html_bytes / 1e6).toFixed(2)} MB, ${(bytes / 1e6).toFixed(2)} MB loaded with ` +
    `shared scripts, ${failed.length} failed requests, ${errors.length} console errors, ` +
    `${moves.length} controls moved (${moves.filter((m) => !m.ok).length} stuck), checked ${checked.figures} ` +
    `figures, ${checked.tables} tables, ${checked.links} links, ${checked.live_controls} live controls: ` +
    `${problems.length} problems`);
  for (const f of failed) console.log(`  failed: ${f}`);
  for (const e of errors) console.log(`  error: ${e.slice(0, 300)}`);
  for (const p of problems) console.log(`  problem: ${p}`);
  await page.close();
}
await browser.close();
if (reportPath) fs.writeFileSync(reportPath, JSON.stringify(report, null, 2));
process.exit(failures ? 1 : 0);
