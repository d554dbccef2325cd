"""Chapter 3's explorer: pick a component and a layer, see its predicted against its real weights."""
from __future__ import annotations

import ipywidgets as widgets

from ..core.widgets import live, redraw
from .compute import PredictabilityParams
from .figures import prediction_scatter
from .predictors import predict_layers, r2_and_cosine


def prediction_explorer(specimen, params=None, component: str = "gate", layer: int = 15):
    """Pick a component and a target layer: predicted vs real weights, held-out and in-sample fits, with the
    chapter's ridge parameters (a ``PredictabilityParams``)."""
    params = params or PredictabilityParams()
    adapter = specimen.adapter
    adapter.check_layer(layer)
    pick = widgets.Dropdown(options=list(adapter.matrix_names), value=component, description="component")
    slider = widgets.IntSlider(value=layer, min=params.context, max=adapter.n_layers - 1, description="layer",
                               continuous_update=False)
    output = widgets.Output()

    def figure():
        weights = adapter.stacked(pick.value).numpy()
        kw = dict(formulation=params.formulation, context=params.context, ridge_alpha=params.ridge_alpha,
                  proj_dim=params.proj_dim, seed=params.seed, targets=[slider.value])
        held_out = predict_layers(weights, **kw)[slider.value]
        in_sample = predict_layers(weights, in_sample=True, **kw)[slider.value]
        actual = weights[slider.value]
        r2 = (r2_and_cosine(held_out, actual)[0], r2_and_cosine(in_sample, actual)[0])
        return prediction_scatter(actual, held_out, in_sample, r2, f"{pick.value}, layer {slider.value} "
                                  f"({params.formulation} ridge), {specimen.name}", seed=params.seed)

    for control in (pick, slider):
        control.observe(lambda _: redraw(output, figure), names="value")
    redraw(output, figure)
    return live(widgets.VBox([widgets.HBox([pick, slider]), output]))
