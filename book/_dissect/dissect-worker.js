// The Web Worker of "Dissect your own model": boots Pyodide from the book's own copy (no network beyond the
// page's own server), installs numpy, gguf, PyYAML and the library's numpy-only modules, writes the dropped file
// into Pyodide's in-memory file system and runs anatomy_lib.core.dissection.dissect on it. The file never leaves
// the reader's computer: it goes from the page to this worker, nowhere else.
//
// Messages in:  {kind: "dissect", buffer: ArrayBuffer, name}
// Messages out: {kind: "status", text} | {kind: "progress", done, total, label}
//               | {kind: "component", component, tables (JSON)} | {kind: "done", result (JSON), heapBytes}
//               | {kind: "error", text (one line)}
importScripts("pyodide/pyodide.js");

const here = new URL(".", self.location.href).href;
let ready = null;

async function boot() {
  postMessage({ kind: "status", text: "Starting Python in this tab (Pyodide 0.27.7)…" });
  const pyodide = await loadPyodide({ indexURL: here + "pyodide/", stdout: () => {}, stderr: () => {} });
  postMessage({ kind: "status", text: "Loading numpy and gguf…" });
  await pyodide.loadPackage("numpy", { messageCallback: () => {}, errorCallback: () => {} });
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  const manifest = await (await fetch(here + "manifest.json")).json();
  for (const wheel of manifest.wheels) {
    const bytes = await (await fetch(here + wheel)).arrayBuffer();
    pyodide.unpackArchive(bytes, "wheel", { extractDir: sitePackages });
  }
  const library = await (await fetch(here + "anatomy_lib.zip")).arrayBuffer();
  pyodide.unpackArchive(library, "zip", { extractDir: sitePackages });
  pyodide.runPython("import anatomy_lib.core.dissection");
  return pyodide;
}

// the last line of a Python traceback, the error's own message: one line a reader can act on
function oneLine(error) {
  const lines = String(error && error.message ? error.message : error).trim().split("\n").filter((l) => l.trim());
  const last = lines[lines.length - 1] || "unknown error";
  return last.replace(/^[\w.]*(GGUFError|ValueError): /, "");
}

self.onmessage = async (event) => {
  if (event.data.kind !== "dissect") return;
  const path = "/tmp/model.gguf";
  let pyodide;
  try {
    ready = ready || boot();
    pyodide = await ready;
    postMessage({ kind: "status", text: `Reading ${event.data.name}…` });
    pyodide.FS.writeFile(path, new Uint8Array(event.data.buffer));
    event.data.buffer = null;
    const progress = (done, total, label) => postMessage({ kind: "progress", done, total, label });
    const component = (name, tables) => postMessage({ kind: "component", component: name, tables });
    const run = pyodide.runPython(`
import json
from anatomy_lib.core.dissection import dissect

def run(path, progress, component):
    result = dissect(path, on_progress=progress,
                     on_component=lambda name, tables: component(name, json.dumps(tables)))
    return json.dumps(result)
run`);
    const result = run(path, progress, component);
    run.destroy();
    postMessage({ kind: "done", result, heapBytes: pyodide._module.HEAP8.length });
  } catch (error) {
    postMessage({ kind: "error", text: oneLine(error) });
  } finally {
    try { pyodide && pyodide.FS.unlink(path); } catch (_) { /* nothing was written */ }
  }
};
