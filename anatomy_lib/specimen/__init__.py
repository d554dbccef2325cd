"""Chapter 1, the specimen: one module per job, read in this order.

- ``compute``: the computation, through the results store
- ``report``: the paper's claims beside ours, and the findings in sentences
- ``figures``: figures (matplotlib)
- ``explorers``: explorers (ipywidgets)

Everything a notebook calls is re-exported here, so a chapter imports one package; ``Params``, ``compute``,
``paper_claims``, ``findings`` and ``CHAPTER`` are the chapter protocol (``core.chapter``).
"""
from ..core.chapter import Chapter
from ..core.lab import Baseline
from ..core.lazy import lazy_exports
from .compute import (
    MLP_MATRICES,
    SpecimenParams,
    architecture,
    compute,
    effective_rank,
    parameter_budget,
    singular_values,
    weight_norms,
)
from .report import PAPER, findings, paper_claims

Params = SpecimenParams
CHAPTER = Chapter(1, "01_specimen", "The specimen", Params, compute, paper_claims, findings,
                  stored=(Baseline,))

# figures and explorers load matplotlib and ipywidgets: imported on first use (core.lazy)
__getattr__, __dir__ = lazy_exports(__name__, {
    "figures": ("spectra_figure", "weight_norms_figure"),
    "explorers": ("layer_explorer",),
})
