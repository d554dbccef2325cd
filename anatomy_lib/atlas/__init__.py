"""The atlas: every chapter's headline measure for several specimens side by side, on a relative-depth axis, and
which of the paper's claims hold on which model. One module per job, read in this order.

- ``compute``: the measures of each specimen, read through the chapters' own ``compute``
- ``report``: the paper's claims judged on each specimen, and the atlas's findings in sentences
- ``figures``: the measures on one relative-depth axis, and the claims-by-specimen table

The atlas reads the chapters and chapter 9 (``verdicts.claims_by_specimen``: every claim's verdict per specimen);
nothing in the library reads the atlas.
"""
from ..core.lazy import lazy_exports
from .compute import MEASURES, atlas, relative_depth
from .report import claims_by_specimen, findings

__getattr__, __dir__ = lazy_exports(__name__, {
    "figures": ("atlas_figure", "claims_table_html"),
})
