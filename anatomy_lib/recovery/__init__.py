"""Chapter 6, recovery speed: one module per job, read in this order.

- ``params``: every parameter, named
- ``training``: the pieces of one run
- ``sweep``: every run
- ``analysis``: what the tables say
- ``report``: the paper's claims beside ours, and the findings in sentences
- ``figures``: figures (matplotlib)
- ``explorers``: explorers (ipywidgets)

Everything a notebook calls is re-exported here, so a chapter imports one package; ``Params``, ``compute``,
``paper_claims``, ``findings`` and ``CHAPTER`` are the chapter protocol (``core.chapter``).
"""
from ..core.chapter import Chapter
from ..core.lazy import lazy_exports
from .analysis import per_layer, rank_correlations, sham_drift, steps_label
from .params import DAMAGE_MODES, NOISE_TENSORS, QUICK_LAYERS, TRAINABLE_SETS, RecoveryParams
from .report import PAPER, findings, paper_claims
from .sweep import RecoveryContext, compute, recovery, recovery_run, recovery_sweep, summarize_curve
from .training import (
    add_damage,
    cached_step_loss,
    fine_tune,
    initial_excess,
    lm_loss,
    matched_sigma,
    naive_step_loss,
    streams_entering,
    trainable_parameters,
    training_pool,
    training_snapshot,
)

Params = RecoveryParams
CHAPTER = Chapter(6, "06_recovery", "Recovery", Params, compute, paper_claims, findings,
                  stored=(Params,))

# figures and explorers load matplotlib and ipywidgets: imported on first use (core.lazy)
__getattr__, __dir__ = lazy_exports(__name__, {
    "figures": ("recovery_curves_figure", "recovery_vs_importance_figure"),
    "explorers": ("recovery_explorer", "static_recovery_explorer"),
})
