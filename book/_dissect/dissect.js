// "Dissect your own model": the page's side. The reader drops a GGUF file (or picks one of the book's specimens,
// whose stored answers are embedded in the page); the file goes to a Web Worker (dissect-worker.js) that runs the
// library's own numpy code in Pyodide, and this script draws what comes back, component by component, beside the
// two specimens' stored values on the relative-depth axis. Nothing is uploaded: the page has no server to send to.
(function () {
  "use strict";
  const root = document.querySelector(".anatomy-dissect");
  if (!root) return;
  const reference = JSON.parse(document.getElementById("anatomy-dissect-reference").textContent);
  const base = new URL(root.dataset.assets, document.baseURI).href;
  const $ = (selector) => root.querySelector(selector);
  const ui = {
    file: $("input[type=file]"), drop: $(".anatomy-dissect-drop"), pick: $("select.anatomy-dissect-specimen"),
    bar: $("progress"), label: $(".anatomy-dissect-progress-label"), cancel: $("button.anatomy-dissect-cancel"),
    status: $(".anatomy-dissect-status"), results: $(".anatomy-dissect-results"),
    component: $("select.anatomy-dissect-component"), charts: $(".anatomy-dissect-charts"),
    table: $(".anatomy-dissect-table"), download: $("button.anatomy-dissect-download"),
  };
  // Okabe-Ito (colour-blind safe): the reader's model, then each specimen
  const COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7"];
  const NULL_FILL = "rgba(120,120,120,0.22)";
  const state = (window.anatomyDissection = { state: "idle", progress: [], result: null, error: null });
  let worker = null;
  let started = 0;
  let current = null; // {label, n_layers, layers, ridge, deltas, model}

  const fmt = (x, digits = 3) => (x === null || x === undefined || Number.isNaN(x) ? "–" : Number(x).toFixed(digits));
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  const depth = (layer, n) => layer / Math.max(n - 1, 1);

  function say(text, isError = false) {
    ui.status.textContent = text;
    ui.status.classList.toggle("anatomy-dissect-error", isError);
  }

  // ---- the reader's rows, shaped like a stored specimen ------------------------------------------------------
  function fromRows(label, result) {
    const out = { label, n_layers: result.model.n_layers, model: result.model, ridge: {}, deltas: {}, null: {},
                  layers: {} };
    for (const row of result.ridge) {
      const byPredictor = (out.ridge[row.component] ||= {});
      (byPredictor[row.predictor] ||= []).push([row.layer, row.r2]);
    }
    const nulls = {};
    for (const row of result.deltas) {
      if (row.model === "specimen") (out.deltas[row.component] ||= []).push([row.layer, row.corr]);
      else ((nulls[row.component] ||= {})[row.layer] ||= []).push(row.corr);
    }
    for (const [component, byLayer] of Object.entries(nulls)) {
      out.null[component] = Object.entries(byLayer).map(([l, v]) => [Number(l), Math.min(...v), Math.max(...v)]);
    }
    for (const row of result.layers) (out.layers[row.component] ||= []).push(row);
    out.csv = () => csv(result);
    return out;
  }

  // every row the worker returned, one table: statistic, component, layer, then the row's own columns
  function csv(result) {
    const lines = ["table,component,layer,name,value"];
    for (const r of result.layers) for (const k of ["frobenius", "rms", "top_singular", "stable_rank"]) {
      lines.push(`layers,${r.component},${r.layer},${k},${r[k]}`);
    }
    for (const r of result.ridge) lines.push(`ridge,${r.component},${r.layer},${r.predictor} R2 (held out),${r.r2}`);
    for (const r of result.deltas) {
      lines.push(`deltas,${r.component},${r.layer},${r.model === "specimen" ? "lag-1 corr" :
        `lag-1 corr, shuffle ${r.shuffle}`},${r.corr}`);
    }
    return lines.join("\n") + "\n";
  }

  // ---- an SVG line chart drawn for the content column ----------------------------------------------------------
  function chart({ title, ylabel, series, bands = [], lines = [] }) {
    const width = Math.max(300, Math.min(ui.charts.clientWidth || 680, 760));
    const height = Math.round(Math.min(300, width * 0.55));
    const m = { left: 52, right: 12, top: 12, bottom: 40 };
    const ys = [...series.flatMap((s) => s.points.map((p) => p[1])), ...bands.flatMap((b) => b.points.flatMap(
      (p) => [p[1], p[2]])), ...lines.map((l) => l.y)].filter((y) => Number.isFinite(y));
    let lo = Math.min(...ys), hi = Math.max(...ys);
    if (!(hi > lo)) { lo -= 0.5; hi += 0.5; }
    const pad = (hi - lo) * 0.06;
    lo -= pad; hi += pad;
    const x = (d) => m.left + d * (width - m.left - m.right);
    const y = (v) => m.top + (1 - (v - lo) / (hi - lo)) * (height - m.top - m.bottom);
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", title);
    const add = (tag, attrs, text) => {
      const el = document.createElementNS(ns, tag);
      for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
      if (text !== undefined) el.textContent = text;
      svg.appendChild(el);
      return el;
    };
    const step = niceStep((hi - lo) / 5);
    for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) {
      add("line", { x1: m.left, x2: width - m.right, y1: y(t), y2: y(t), stroke: "#e3e3e3" });
      add("text", { x: m.left - 6, y: y(t) + 4, "text-anchor": "end", "font-size": 12 },
          fmt(t, step >= 1 ? 0 : step < 0.1 ? 2 : 1));
    }
    for (const t of [0, 0.25, 0.5, 0.75, 1]) {
      add("text", { x: x(t), y: height - m.bottom + 16, "text-anchor": "middle", "font-size": 12 }, String(t));
    }
    add("text", { x: (m.left + width - m.right) / 2, y: height - 6, "text-anchor": "middle", "font-size": 12 },
        "relative depth (0: first layer, 1: last)");
    add("text", { x: 12, y: (m.top + height - m.bottom) / 2, "text-anchor": "middle", "font-size": 12,
                  transform: `rotate(-90 12 ${(m.top + height - m.bottom) / 2})` }, ylabel);
    for (const band of bands) {
      const pts = band.points.slice().sort((a, b) => a[0] - b[0]);
      const upper = pts.map((p) => `${x(p[0])},${y(p[2])}`);
      const lower = pts.reverse().map((p) => `${x(p[0])},${y(p[1])}`);
      add("polygon", { points: [...upper, ...lower].join(" "), fill: NULL_FILL, stroke: "none" });
    }
    for (const line of lines) {
      add("line", { x1: m.left, x2: width - m.right, y1: y(line.y), y2: y(line.y), stroke: "#333",
                    "stroke-dasharray": "2 3", "stroke-width": 1.2 });
    }
    for (const s of [...series].reverse()) {  // the model under study, first in the legend, is drawn on top
      const pts = s.points.slice().sort((a, b) => a[0] - b[0]).filter((p) => Number.isFinite(p[1]));
      add("polyline", { points: pts.map((p) => `${x(p[0])},${y(p[1])}`).join(" "), fill: "none", stroke: s.colour,
                        "stroke-width": s.bold ? 2.4 : 1.6, "stroke-dasharray": s.dash ? "6 4" : "none" });
      if (s.bold) for (const p of pts) add("circle", { cx: x(p[0]), cy: y(p[1]), r: 2.4, fill: s.colour });
    }
    const figure = document.createElement("figure");
    figure.className = "anatomy-dissect-figure";
    const caption = document.createElement("figcaption");
    caption.textContent = title;
    figure.append(caption, svg, legend(series, bands, lines));
    return figure;
  }

  function niceStep(raw) {
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    return [1, 2, 2.5, 5, 10].map((k) => k * power).find((s) => s >= raw) || raw;
  }

  function legend(series, bands, lines) {
    const list = document.createElement("ul");
    list.className = "anatomy-dissect-legend";
    const item = (swatch, text) => {
      const li = document.createElement("li");
      li.innerHTML = swatch;
      li.append(text);
      list.appendChild(li);
    };
    for (const s of series) {
      item(`<svg width="26" height="10"><line x1="0" x2="26" y1="5" y2="5" stroke="${s.colour}" stroke-width="2.4"
            stroke-dasharray="${s.dash ? "6 4" : "none"}"/></svg>`, s.label);
    }
    for (const b of bands) item(`<svg width="26" height="10"><rect width="26" height="10" fill="${NULL_FILL}"/></svg>`,
                                b.label);
    for (const l of lines) item(`<svg width="26" height="10"><line x1="0" x2="26" y1="5" y2="5" stroke="#333"
            stroke-dasharray="2 3"/></svg>`, l.label);
    return list;
  }

  // ---- what is drawn -----------------------------------------------------------------------------------------
  function models() {
    // the model under study first (bold), then each stored specimen that is not it
    return [current, ...reference.specimens.filter((s) => s.label !== current.label)];
  }

  function draw() {
    if (!current) return;
    const component = ui.component.value;
    ui.charts.replaceChildren();
    const all = models();
    const ridge = [], nullBands = [], deltas = [];
    all.forEach((model, i) => {
      const colour = COLOURS[i % COLOURS.length];
      const rows = (model.ridge[component] || {});
      const pts = (name) => (rows[name] || []).map(([l, v]) => [depth(l, model.n_layers), v]);
      if (rows.ridge) ridge.push({ label: `${model.label}: ridge, held out`, colour, bold: i === 0, points: pts("ridge") });
      if (rows["mean layer"]) ridge.push({ label: `${model.label}: mean of the other layers`, colour, dash: true,
                                          points: pts("mean layer") });
      if (model.deltas[component]) deltas.push({ label: `${model.label}`, colour, bold: i === 0,
        points: model.deltas[component].map(([l, v]) => [depth(l, model.n_layers), v]) });
      if (i === 0 && model.null[component]) nullBands.push({ label: `${model.label}: its layers shuffled (range over ` +
        `${reference.params.n_shuffles} orders)`, points: model.null[component].map(([l, a, b]) =>
        [depth(l, model.n_layers), a, b]) });
    });
    const paper = reference.paper;
    ui.charts.append(
      chart({ title: `Held-out R² of predicting layer l's ${component} from layer l−1's (chapter 3)`, ylabel: "R²",
              series: ridge, lines: component === paper.r2_component ? [{ y: paper.r2, label: paper.r2_label }] : [] }),
      chart({ title: `Correlation of consecutive weight changes, corr(D_l, D_l+1), ${component} (chapter 4)`,
              ylabel: "lag-1 correlation", series: deltas, bands: nullBands,
              lines: [{ y: -0.5, label: paper.delta_label }] }));
    if (current.layers[component]) {
      const rows = current.layers[component];
      ui.charts.append(chart({ title: `Stable rank ‖W‖²_F / σ₁² of each layer's ${component} (${current.label})`,
        ylabel: "stable rank", series: [{ label: `${current.label}`, colour: COLOURS[0], bold: true,
        points: rows.map((r) => [depth(r.layer, current.n_layers), r.stable_rank]) }] }));
    }
    ui.charts.dataset.component = component;
  }

  function summary() {
    const head = ["component", "shape", "format", "ridge R²", "previous layer R²", "mean layer R²", "lag-1 corr",
                  "shuffled null", "stable rank"];
    const rows = Object.keys(current.ridge).map((c) => {
      const r = current.ridge[c] || {};
      const avg = (name) => mean((r[name] || []).map((p) => p[1]));
      const nul = current.null[c] || [];
      const layers = current.layers[c] || [];
      return [c, (current.model && current.model.shapes[c] || []).join(" × ") || "–",
              (current.model && current.model.formats[c]) || "–", fmt(avg("ridge")), fmt(avg("previous layer")),
              fmt(avg("mean layer")), fmt(mean((current.deltas[c] || []).map((p) => p[1]))),
              nul.length ? `${fmt(Math.min(...nul.map((p) => p[1])), 2)} to ${fmt(Math.max(...nul.map((p) => p[2])), 2)}`
                : "–", layers.length ? fmt(mean(layers.map((l) => l.stable_rank)), 1) : "not stored"];
    });
    const table = document.createElement("table");
    table.innerHTML = `<caption>${current.label}: means over layers, per component (R² held out; the null: the range over ${
      reference.params.n_shuffles} shuffled orders)</caption><thead><tr>${
      head.map((h) => `<th>${h}</th>`).join("")}</tr></thead><tbody>${rows.map((r) => `<tr>${
      r.map((v) => `<td>${v}</td>`).join("")}</tr>`).join("")}</tbody>`;
    ui.table.replaceChildren(table);
  }

  function show(model) {
    current = model;
    const components = Object.keys(model.ridge);
    const chosen = components.includes(ui.component.value) ? ui.component.value : components[0];
    ui.component.replaceChildren(...components.map((c) => new Option(c, c, false, c === chosen)));
    ui.results.hidden = false;
    ui.download.hidden = !model.csv;
    summary();
    draw();
  }

  // ---- running the worker ------------------------------------------------------------------------------------
  function stop(text) {
    if (worker) worker.terminate();
    worker = null;
    ui.cancel.hidden = true;
    if (text) say(text);
  }

  function dissect(file) {
    stop();
    if (!file) return;
    if (location.protocol === "file:") {
      say("This page must be served over HTTP to run Python (e.g. python3 -m http.server in _build/html).", true);
      return;
    }
    Object.assign(state, { state: "running", progress: [], result: null, error: null, name: file.name });
    started = performance.now();
    ui.bar.value = 0;
    ui.bar.hidden = false;
    ui.cancel.hidden = false;
    ui.label.textContent = "";
    say(`Dissecting ${file.name} (${(file.size / 1e6).toFixed(0)} MB) in this tab…`);
    worker = new Worker(base + "dissect-worker.js");
    const partial = { model: { n_layers: 0, shapes: {}, formats: {} }, layers: [], ridge: [], deltas: [] };
    worker.onmessage = ({ data }) => {
      if (data.kind === "status") say(data.text);
      else if (data.kind === "progress") {
        ui.bar.max = data.total;
        ui.bar.value = data.done;
        ui.label.textContent = `${data.done} of ${data.total} steps: ${data.label}`;
        state.progress.push([data.done, data.total, performance.now() - started]);
      } else if (data.kind === "component") {
        const tables = JSON.parse(data.tables);
        for (const key of ["layers", "ridge", "deltas"]) partial[key].push(...tables[key]);
        partial.model.n_layers = Math.max(...tables.layers.map((r) => r.layer)) + 1;
        if (state.firstComponentMs === undefined) state.firstComponentMs = performance.now() - started;
        show(fromRows(`${file.name} (your file)`, partial));
      } else if (data.kind === "done") {
        state.result = JSON.parse(data.result);
        state.totalMs = performance.now() - started;
        state.heapBytes = data.heapBytes;
        state.state = "done";
        show(fromRows(`${file.name} (your file)`, state.result));
        stop(`Done: ${state.result.model.name}, ${state.result.model.architecture}, ${state.result.model.n_layers} layers, ` +
             `${state.result.model.components.length} components, in ${(state.totalMs / 1000).toFixed(1)} s.`);
      } else if (data.kind === "error") {
        Object.assign(state, { state: "error", error: data.text });
        stop();
        say(`Could not dissect ${file.name}: ${data.text}`, true);
        ui.bar.hidden = true;
      }
    };
    worker.onerror = (event) => {
      Object.assign(state, { state: "error", error: event.message || "the worker failed" });
      stop();
      say(`Could not dissect ${file.name}: ${state.error}`, true);
    };
    file.arrayBuffer().then((buffer) => worker && worker.postMessage({ kind: "dissect", buffer, name: file.name },
                                                                      [buffer]));
  }

  ui.file.addEventListener("change", () => dissect(ui.file.files[0]));
  ui.drop.addEventListener("dragover", (e) => { e.preventDefault(); ui.drop.classList.add("anatomy-dissect-over"); });
  ui.drop.addEventListener("dragleave", () => ui.drop.classList.remove("anatomy-dissect-over"));
  ui.drop.addEventListener("drop", (e) => {
    e.preventDefault();
    ui.drop.classList.remove("anatomy-dissect-over");
    dissect(e.dataTransfer.files[0]);
  });
  ui.cancel.addEventListener("click", () => {
    Object.assign(state, { state: "cancelled" });
    stop("Cancelled: nothing is running now.");
    ui.bar.hidden = true;
  });
  ui.component.addEventListener("change", draw);
  ui.pick.addEventListener("change", () => {
    const chosen = reference.specimens.find((s) => s.label === ui.pick.value);
    if (!chosen) return;
    stop();
    ui.bar.hidden = true;
    show(chosen);
    say(`${chosen.label}: the book's stored answers (chapters 3 and 4), nothing computed.`);
  });
  ui.download.addEventListener("click", () => {
    if (!current || !current.csv) return;
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([current.csv()], { type: "text/csv" }));
    link.download = "dissection.csv";
    link.click();
  });
  window.addEventListener("resize", () => draw());
})();
