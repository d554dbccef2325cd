"""Chapter 2, importance by ablation: one module per job, read in this order.

- ``compute``: the computation, through the results store
- ``analysis``: what the tables say
- ``report``: the paper's claims beside ours, and the findings in sentences
- ``figures``: figures (matplotlib)
- ``explorers``: explorers (ipywidgets)

Everything a notebook calls is re-exported here, so a chapter imports one package; ``Params``, ``compute``,
``paper_claims``, ``findings`` and ``CHAPTER`` are the chapter protocol (``core.chapter``).
"""
from ..core.chapter import Chapter
from ..core.lazy import lazy_exports
from .analysis import Thresholds, classify, connective_layers, importance_range_orders, rank_agreement
from .compute import (
    MODES,
    SKIP_PART,
    TENSOR_SETS,
    ContinuationParams,
    ImportanceParams,
    ablate,
    ablation,
    ablation_continuations,
    compute,
    importance,
    importance_sweep,
    joint_ablation,
    neighbors,
)
from .report import PAPER, findings, paper_claims

Params = ImportanceParams
CHAPTER = Chapter(2, "02_importance", "Importance", Params, compute, paper_claims, findings,
                  stored=(ImportanceParams, ContinuationParams))

# figures and explorers load matplotlib and ipywidgets: imported on first use (core.lazy)
__getattr__, __dir__ = lazy_exports(__name__, {
    "figures": ("CLASS_ORDER", "anatomy_strip", "class_colours", "influence_figure", "modes_figure"),
    "explorers": ("ablation_explorer", "static_importance_explorer"),
})
