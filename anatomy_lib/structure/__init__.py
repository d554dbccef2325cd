"""Chapter 4, weight structure: one module per job, read in this order.

- ``compute``: do consecutive layers' weight changes anti-correlate?
- ``report``: in sentences and verdicts
- ``figures``: delta correlations against their nulls, the correlation map, the functional view
- ``explorers``: chapter 4's explorers: the map of delta correlations for a component, specimen or null

Everything a notebook calls is re-exported here, so a chapter imports one package; ``Params``, ``compute``,
``paper_claims``, ``findings`` and ``CHAPTER`` are the chapter protocol (``core.chapter``).
"""
from ..core.chapter import Chapter
from ..core.lazy import lazy_exports
from ..core.weightspace import ANALYTIC_NULL, LAGS
from .compute import (
    StructureParams,
    compute,
    delta_correlation_matrix,
    delta_correlations,
    delta_correlations_of,
    q4_1_noise,
    quantisation_share,
    residual_update_correlations,
    shuffled_null,
    structure,
    summarize,
)
from .report import findings, paper_claims

Params = StructureParams
CHAPTER = Chapter(4, "04_structure", "Structure", Params, compute, paper_claims, findings,
                  stored=(Params,))

# figures and explorers load matplotlib and ipywidgets: imported on first use (core.lazy)
__getattr__, __dir__ = lazy_exports(__name__, {
    "figures": ("correlation_map_figure", "delta_correlation_figure", "functional_figure"),
    "explorers": ("delta_map_explorer", "static_delta_map_explorer"),
})
