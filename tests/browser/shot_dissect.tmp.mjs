import { chromium } from "playwright-core";
import fs from "node:fs"; import http from "node:http"; import path from "node:path";
const [root, file, out] = process.argv.slice(2);
const server = http.createServer((req, res) => { const f = path.join(root, decodeURIComponent(new URL(req.url, "http://x").pathname));
  if (!fs.existsSync(f) || fs.statSync(f).isDirectory()) { res.writeHead(404).end(); return; }
  res.writeHead(200, {"content-type": f.endsWith(".js") ? "text/javascript" : f.endsWith(".wasm") ? "application/wasm" : f.endsWith(".html") ? "text/html" : "application/octet-stream"}); fs.createReadStream(f).pipe(res); });
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const b = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
for (const w of [1280, 420]) {
  const page = await b.newPage({ viewport: { width: w, height: 900 } });
  page.on("console", (m) => m.type() === "error" && console.log("console:", m.text()));
  await page.goto(`http://127.0.0.1:${server.address().port}/book/dissect.html`);
  if (file === "pick") { const v = await page.$$eval("select.anatomy-dissect-specimen option", (o) => o.map((x) => x.value).filter(Boolean)); await page.selectOption("select.anatomy-dissect-specimen", v[0]); }
  else { await page.setInputFiles("input[type=file]", file);
    await page.waitForFunction(() => ["done","error"].includes(window.anatomyDissection.state), null, { timeout: 600000 }); }
  await page.selectOption("select.anatomy-dissect-component", "gate");
  await page.screenshot({ path: `${out}-${w}.png`, fullPage: true });
  console.log(w, await page.evaluate(() => [document.documentElement.scrollWidth, [...document.querySelectorAll(".anatomy-dissect-figure svg")].map((s) => s.getBoundingClientRect().width)]));
}
await b.close(); server.close();
