"""Chapter 5, manipulation strategies: one module per job, read in this order.

- ``strategies``: what can replace a redundant layer?
- ``compute``: chapter 5's sweeps: the strategy-by-layer map, the knob sweeps and the compression experiment
  (also at other cuts of chapter 2's connective threshold), through the results store
- ``report``: in sentences and verdicts
- ``figures``: the strategy map, the knob curves, the compression experiment
- ``explorers``: manipulate layers live, or pick a stored scaling in the published page

Everything a notebook calls is re-exported here, so a chapter imports one package; ``Params``, ``compute``,
``paper_claims``, ``findings`` and ``CHAPTER`` are the chapter protocol (``core.chapter``).
"""
from ..core.chapter import Chapter
from ..core.lazy import lazy_exports
from .compute import (
    COMPARED_STRATEGIES,
    HEATMAP_STRATEGIES,
    CompressionParams,
    ManipulationParams,
    compression,
    compression_at_cuts,
    compression_stored,
    compute,
    connective_cuts,
    knob_sweep,
    manipulation,
    strategy_heatmap,
)
from .report import (
    CONNECTIVE_CUTS,
    PAPER,
    THRESHOLD_GRID,
    THRESHOLD_WORDS,
    Thresholds,
    cut_sentence,
    findings,
    paper_claims,
    show_table,
    threshold_label,
    threshold_sensitivity,
)
from .strategies import DEFAULT_ALPHAS, SCOPES, SIDES, STRATEGIES, Manipulation, apply, low_rank, measure, neighbour_of

Params = ManipulationParams
CHAPTER = Chapter(5, "05_manipulation", "Manipulation", Params, compute, paper_claims, findings,
                  stored=(Params, CompressionParams))

# figures and explorers load matplotlib and ipywidgets: imported on first use (core.lazy)
__getattr__, __dir__ = lazy_exports(__name__, {
    "figures": ("compression_figure", "knob_figure", "strategy_heatmap_figure"),
    "explorers": ("manipulation_explorer", "static_manipulation_explorer", "static_explorers_by_specimen"),
})
