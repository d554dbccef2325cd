"""A build that says when a chapter failed to execute, and exits non-zero.

myst-nb records each notebook's execution in the Sphinx environment (``env.nb_metadata[docname]["exec_data"]``)
and saves a failing one's traceback under ``<outdir>/reports/``, but a plain build still exits 0 and the page
shows the traceback instead of its figures. This extension, at the end of every build:

- prints one line per page whose notebook failed: the page, the cell (its number among the notebook's cells
  and its first line), the error's last line and where the whole traceback was saved; writes the same lines to
  ``<outdir>/reports/failed-pages.txt`` (removed when no page failed), and removes the saved traceback of a page
  that no longer fails (myst-nb never does: a fixed page's old ``.err.log`` would read as a current failure);
- sets the build's status code to 1, so ``jupyter-book build`` exits non-zero (the HTML is still written);
- marks a failed page as outdated in the next build, so an incremental build runs it again instead of keeping
  the broken page (Sphinx would otherwise skip an unchanged source).

Pages are checked from the environment, so a page that failed in an earlier build and was not rebuilt since
still counts.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;]*m")
REPORT = "failed-pages.txt"


def failures(env) -> dict[str, str]:
    """docname -> saved traceback, for every page whose notebook failed to execute."""
    found = {}
    for docname, data in getattr(env, "nb_metadata", {}).items():
        execution = data.get("exec_data") or {}
        if execution.get("succeeded") is False or execution.get("traceback"):
            found[docname] = execution.get("traceback") or "(no traceback recorded)"
    return {name: tb for name, tb in found.items() if name in env.all_docs}


def failed_cell(source_path: Path, traceback: str) -> str:
    """'cell N (`first line`)' for the cell the traceback names (nbclient quotes its source), else ''."""
    text = ANSI.sub("", traceback)
    quoted = re.search(r"executing the following cell:\n-+\n(.*?)\n-+\n", text, re.S)
    if not quoted:
        return ""
    source = quoted.group(1).strip()
    first = next((line for line in source.splitlines() if line.strip()), "")
    try:
        cells = json.loads(source_path.read_text())["cells"]
    except (OSError, ValueError, KeyError):
        cells = []
    for index, cell in enumerate(cells):
        if "".join(cell.get("source", "")).strip() == source:
            return f"cell {index} (`{first[:60]}`)"
    return f"a cell beginning `{first[:60]}`"


def error_line(traceback: str) -> str:
    """The error's own last line (``OSError: ...``), without colour codes."""
    lines = [line.strip() for line in ANSI.sub("", traceback).splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b", line)]
    return (errors or lines or ["unknown error"])[-1][:200]


def report_lines(app) -> list[str]:
    env = app.env
    lines = []
    for docname, traceback in sorted(failures(env).items()):
        source = Path(env.doc2path(docname))
        saved = Path(app.outdir, "reports", *(docname + ".err.log").split("/"))
        where = failed_cell(source, traceback)
        lines.append(f"FAILED {docname}: {where + ': ' if where else ''}{error_line(traceback)} "
                     f"(traceback: {saved if saved.is_file() else 'not saved'})")
    return lines


def rerun_failed(app, env, added, changed, removed):
    """Pages that failed last time are read (and executed) again."""
    return [name for name in failures(env) if name not in added | changed | removed]


def report(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    lines = report_lines(app)
    reports = Path(app.outdir, "reports")
    failing = failures(app.env)
    for saved in reports.rglob("*.err.log") if reports.is_dir() else ():
        if saved.relative_to(reports).as_posix().removesuffix(".err.log") not in failing:
            saved.unlink()
    summary = reports / REPORT
    if not lines:
        summary.unlink(missing_ok=True)
        return
    summary.parent.mkdir(parents=True, exist_ok=True)
    summary.write_text("\n".join(lines) + "\n")
    print(f"\n{len(lines)} page(s) failed to execute (listed in {summary}):", flush=True)
    for line in lines:
        print(line, flush=True)
    app.statuscode = 1


def setup(app):
    app.connect("env-get-outdated", rerun_failed)
    app.connect("build-finished", report)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
