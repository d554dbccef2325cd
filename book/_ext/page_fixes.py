"""Fixes to the pages Jupyter Book 1 writes: a clean browser console, and launch buttons only where they launch.

- the launch buttons (Colab, Binder) appear on MyST Markdown pages too (the seminar guide, the scale page), where
  Colab cannot open the file; they are kept on the chapters (notebooks) alone.

- sphinx-thebe registers its inline configuration script twice, and the second copy throws
  "Identifier 'THEBE_JS_URL' has already been declared"; each page keeps one copy of every script.
- pydata-sphinx-theme reports "invalid theme mode" when no default mode is in the page context; it is ``auto``
  (follow the reader's system), set without replacing the theme options Jupyter Book generates.
- the ipywidgets manager typesets with MathJax 2's ``MathJax.Hub.Queue``; the book serves MathJax 3, so a
  ``Hub.Queue`` that calls MathJax 3's ``typesetPromise`` is provided (else every page with math and widgets
  throws "Cannot read properties of undefined (reading 'Queue')").
"""

MATHJAX2_QUEUE = """(function () {
  function provide() {
    var mathjax = window.MathJax;
    if (mathjax && !mathjax.Hub) {
      mathjax.Hub = {Queue: function (job) {
        var element = job && job[2];
        if (window.MathJax.typesetPromise) { window.MathJax.typesetPromise(element ? [element] : undefined); }
      }};
    }
  }
  provide();
  document.addEventListener("DOMContentLoaded", provide);
  window.addEventListener("load", provide);
})();"""


def _page_fixes(app, pagename, templatename, context, doctree):
    if pagename in app.env.all_docs and not str(app.env.doc2path(pagename)).endswith(".ipynb") \
            and "header_buttons" in context:
        context["header_buttons"] = [b for b in context["header_buttons"] if b.get("label") != "launch-buttons"]
    if not context.get("default_mode"):
        context["default_mode"] = "auto"
    seen, unique = set(), []
    for script in context.get("script_files", []):
        key = (str(getattr(script, "filename", script) or ""),  # an inline script's filename is None or ""
               tuple(sorted((k, str(v)) for k, v in getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):
    app.connect("html-page-context", _page_fixes, priority=900)
    app.add_js_file(None, body=MATHJAX2_QUEUE, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
