"""Chapter 2, importance by ablation: one module per job, read in this order.

- ``compute``: ablate one layer at a time and measure the perplexity change
- ``analysis``: what an importance table says: anatomy classes by interval, the rank agreement with Block Influence,
  and the range of importance in orders of magnitude
- ``precision``: the map in float16 and bfloat16 beside float32
- ``activations`` and ``massive``: massive activations along the depth, and whether they explain a critical
  layer (the birth layer by growth; its ablation with the massive entries restored, its massive write removed)
- ``report``: in sentences and verdicts: the paper's importance claims beside ours, and the computed findings
- ``figures``: the importance strip by anatomy class, the modes compared, Block Influence
- ``explorers``: ablate layers live, or pick a stored layer and mode in the published page

Everything a notebook calls is re-exported here, so a chapter imports one package; ``Params``, ``compute``,
``paper_claims``, ``findings`` and ``CHAPTER`` are the chapter protocol (``core.chapter``).
"""
from ..core.chapter import Chapter
from ..core.lazy import lazy_exports
from .activations import (
    ActivationParams,
    activation_panel,
    activation_profile,
    activations,
    appearance_layer,
    correlation_table,
    importance_correlation,
    stacked_layers,
)
from .analysis import (
    LAYER_TYPE_NAMES,
    UNDETERMINED,
    Thresholds,
    classify,
    connective_layers,
    importance_range_orders,
    layer_type_summary,
    operator_summary,
    panel_summary,
    paper_pattern,
    rank_agreement,
    undetermined_reasons,
)
from .compute import (
    MODES,
    OPERATORS,
    SECOND_SELECTION,
    SKIP_PART,
    STREAM_OPERATORS,
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
    operator_panel,
    stream_means,
)
from .massive import (
    CAUSAL_OPERATORS,
    EXPLAINS,
    MassiveParams,
    causal_verdict,
    massive_causal,
    massive_panel,
    massive_sites,
    onset_by_growth,
    remove_massive_write,
    restore_massive,
)
from .precision import (
    PRECISION_PROFILE,
    PRECISIONS,
    PrecisionParams,
    precision_findings,
    precision_lab,
    precision_panel,
    precision_panels,
    precision_summary,
)
from .report import (
    PAPER,
    THRESHOLD_GRID,
    THRESHOLD_WORDS,
    activation_findings,
    class_stability,
    findings,
    index_sensitivity,
    layer_type_findings,
    massive_findings,
    mode_summary,
    operator_findings,
    operator_table,
    paper_claims,
    show_table,
    stability_sentence,
    threshold_label,
    threshold_sensitivity,
)

Params = ImportanceParams
CHAPTER = Chapter(2, "02_importance", "Importance", Params, compute, paper_claims, findings,
                  stored=(ImportanceParams, ContinuationParams, ActivationParams, MassiveParams))

# figures and explorers load matplotlib and ipywidgets: imported on first use (core.lazy)
__getattr__, __dir__ = lazy_exports(__name__, {
    "figures": ("CLASS_ORDER", "activations_figure", "anatomy_strip", "class_colours", "influence_figure",
                "massive_causal_figure", "modes_figure", "operators_figure"),
    "explorers": ("ablation_explorer", "static_explorers_by_specimen", "static_importance_explorer"),
})
