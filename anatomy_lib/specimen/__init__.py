"""Chapter 1, the specimen: one module per job, read in this order.

- ``compute``: what the loaded model is (architecture, parameter budget) and descriptive statistics of its weights
  (norms per layer, singular-value spectra, effective rank)
- ``report``: in sentences and verdicts: what the specimen is, beside the paper's description of it
- ``figures``: weight norms across layers and one layer's singular-value spectra
- ``explorers``: chapter 1's explorers: pick a layer, see its spectra and norms (live, or precomputed)

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
    "explorers": ("explorer_layers", "layer_explorer", "static_layer_explorer"),
})
