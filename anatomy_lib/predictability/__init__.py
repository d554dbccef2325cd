"""Chapter 3, weight predictability: one module per job, read in this order.

- ``compute``: can layer l+1's weights be predicted from earlier layers'?
- ``report``: in sentences and verdicts
- ``figures``: R^2 per component against the baselines and nulls, the ridge sweep, one layer's fit
- ``explorers``: chapter 3's explorers: pick a component and a layer, see its predicted against its real weights

The predictors themselves (ridge in two formulations, the two baselines) are numpy-only, in
``core.weightspace``, shared with the in-browser page "Dissect your own model".

Everything a notebook calls is re-exported here, so a chapter imports one package; ``Params``, ``compute``,
``paper_claims``, ``findings`` and ``CHAPTER`` are the chapter protocol (``core.chapter``).
"""
from ..core.chapter import Chapter
from ..core.lazy import lazy_exports
from ..core.weightspace import BASELINES, FORMULATIONS, baseline_predictions, predict_layers, r2_and_cosine
from .compute import (
    PredictabilityParams,
    compute,
    predictability,
    predictability_table,
    ridge_sweep,
    substitute_predictions,
    substitution,
)
from .report import PAPER, cosine_sentence, findings, paper_claims, show_table, substitution_sentences

Params = PredictabilityParams
CHAPTER = Chapter(3, "03_predictability", "Predictability", Params, compute, paper_claims, findings,
                  stored=(Params,))

# figures and explorers load matplotlib and ipywidgets: imported on first use (core.lazy)
__getattr__, __dir__ = lazy_exports(__name__, {
    "figures": ("prediction_scatter", "r2_by_layer_figure", "r2_figure", "ridge_sweep_figure"),
    "explorers": ("prediction_explorer", "static_prediction_explorer"),
})
