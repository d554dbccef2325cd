"""The HTML of the page "Dissect your own model": controls, the place the charts go, the reference as embedded
JSON, and the scripts. The scripts and Pyodide are served from the book itself (``assets``, made by
``make dissect-assets``), so the page works offline and the dropped file goes nowhere but the reader's tab."""
from __future__ import annotations

import html
import json

ASSETS = "../dissect/"  # relative to the built page (book/dissect.html): html_extra_path puts them at the root


def page_html(reference: dict, assets: str = ASSETS) -> str:
    """The page's interactive part; ``reference`` from ``own_model.reference``."""
    options = "".join(f'<option value="{html.escape(s["label"])}">{html.escape(s["label"])}</option>'
                      for s in reference["specimens"])
    data = json.dumps(reference, separators=(",", ":")).replace("</", "<\\/")
    return f"""
<div class="anatomy-dissect" data-assets="{html.escape(assets)}">
  <div class="anatomy-dissect-drop">
    <label><strong>Drop a .gguf file here</strong>, or choose one:
      <input type="file" accept=".gguf" aria-label="a GGUF file to dissect"></label>
    <label>or show a specimen's stored answers:
      <select class="anatomy-dissect-specimen" aria-label="a specimen of the book">
        <option value="">(pick a specimen)</option>{options}</select></label>
    <p class="anatomy-dissect-privacy">The file is read by this tab only: it is never uploaded (the page has no
    server to send it to).</p>
  </div>
  <div class="anatomy-dissect-run">
    <progress max="1" value="0" hidden></progress>
    <span class="anatomy-dissect-progress-label"></span>
    <button type="button" class="anatomy-dissect-cancel" hidden>Cancel</button>
  </div>
  <p class="anatomy-dissect-status" role="status" aria-live="polite">Nothing is running.</p>
  <div class="anatomy-dissect-results" hidden>
    <label>Component: <select class="anatomy-dissect-component" aria-label="component"></select></label>
    <button type="button" class="anatomy-dissect-download" hidden>Download every number (CSV)</button>
    <div class="anatomy-dissect-charts"></div>
    <div class="anatomy-dissect-table anatomy-table"></div>
  </div>
  <script type="application/json" id="anatomy-dissect-reference">{data}</script>
  <script src="{html.escape(assets)}dissect.js" defer></script>
</div>
"""


def show_page(reference: dict, assets: str = ASSETS):
    """Display the page's interactive part in a notebook (the book's page is one such cell)."""
    from IPython.display import HTML, display  # a notebook's only: page_html itself needs no IPython

    display(HTML(page_html(reference, assets)))
