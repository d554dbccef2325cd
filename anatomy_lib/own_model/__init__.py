"""The page "Dissect your own model": chapters 3 and 4 on a GGUF file the reader drops, computed in their browser.

- ``reference``: the two specimens' stored answers (chapters 3 and 4, read through their own ``compute``), in the
  shape the page draws beside the reader's model
- ``page``: the page's HTML: the drop zone, the worker's progress bar and cancel button, the charts' place, the
  reference as embedded JSON, and the scripts (``book/_dissect/``, vendored by ``book/_ext/vendor_pyodide.py``)

What the browser computes is ``core.dissection`` (numpy only), the same code as ``python -m anatomy_lib dissect``.
"""
from .page import page_html, show_page
from .reference import reference, specimen_reference

__all__ = ["page_html", "reference", "show_page", "specimen_reference"]
