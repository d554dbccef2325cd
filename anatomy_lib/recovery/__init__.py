"""Chapter 6, recovery speed: one module per job, read in this order.

- ``params``: every choice the paper leaves unsaid, named (``RecoveryParams``), and the one count of runs
- ``training``: the pieces of one recovery run: the training pool, the cached stream, the loss, damage, matched
  noise, and fine-tuning that always restores the model
- ``sweep``: every run of a recovery experiment: the shared context, one run, the sweep (split under torchrun), the
  store
- ``analysis``: what recovery runs say: recovery judged against the sham of the same layer (or the baseline) with
  paired intervals over blocks, per-layer summaries, the verdicts under every criterion, rank correlations with
  importance, the sham's drift
- ``report``: in sentences and verdicts
- ``power``: the powered sweep: every layer with several noise seeds and its sham, more evaluation blocks, a grid
  of learning rates; run job by job by several workers, read part-way
- ``chapter``: the chapter protocol: the claims judged on the powered sweep at the chapter's rate once it is
  complete (read at the paper's budget), on the quick sweep until then
- ``figures``: recovery curves, and recovery against importance
- ``explorers``: damage and fine-tune a layer live, or pick a stored layer in the published page

Everything a notebook calls is re-exported here, so a chapter imports one package; ``Params``,
``chapter_compute``, ``chapter_claims``, ``chapter_findings`` and ``CHAPTER`` are the chapter protocol
(``core.chapter``).
"""
from ..core.chapter import Chapter
from ..core.lazy import lazy_exports
from .analysis import (
    MAIN_CRITERION,
    REFERENCES,
    SENSITIVITY,
    Criterion,
    judged_layers,
    judged_runs,
    per_layer,
    protocol_label,
    rank_correlations,
    sensitivity_table,
    sham_drift,
    steps_label,
)
from .chapter import (
    POWERED,
    QUICK_ALONE,
    chapter_claims,
    chapter_compute,
    chapter_findings,
    evidence_sentence,
    powered_at_budget,
    quick_beside,
    verdict_evidence,
)
from .params import DAMAGE_MODES, NOISE_TENSORS, QUICK_LAYERS, TRAINABLE_SETS, RecoveryParams
from .power import (
    POWER_LRS,
    REDUCED_DESIGNS,
    PowerDesign,
    block_power,
    block_power_sentence,
    critical_place,
    critical_sentence,
    design_sentence,
    drift_sentence,
    power_correlations,
    power_curves,
    power_design,
    power_kept,
    power_progress,
    power_sensitivity,
    power_sensitivity_sentence,
    power_steps,
    power_table,
    power_tables,
    power_view,
    rate_and_budget_label,
    rate_sentence,
    rate_steps,
    run_power,
    steps_cell,
    truncated,
)
from .report import PAPER, criterion_sensitivity, critical_layer, findings, main_protocol, paper_claims, show_table
from .sweep import (
    RecoveryContext,
    compute,
    merged,
    recovery,
    recovery_run,
    recovery_sweep,
    summarize_curve,
)
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
CHAPTER = Chapter(6, "06_recovery", "Recovery", Params, chapter_compute, chapter_claims, chapter_findings,
                  stored=(Params,))

# figures and explorers load matplotlib and ipywidgets: imported on first use (core.lazy)
__getattr__, __dir__ = lazy_exports(__name__, {
    "figures": ("power_curves_figure", "recovery_curves_figure", "recovery_vs_importance_figure"),
    "explorers": ("recovery_explorer", "static_recovery_explorer", "static_explorers_by_specimen"),
})
