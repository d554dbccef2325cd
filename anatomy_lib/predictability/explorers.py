"""Chapter 3's explorers: pick a component and a layer, see its predicted against its real weights (live), or
read every layer's R² from the stored fits (the published page)."""
from __future__ import annotations

import ipywidgets as widgets

from ..core.weightspace import predict_layers, r2_and_cosine
from ..core.widgets import STATIC_CLASS, answer_html, figure_widget, linked_stacks, needs_kernel, redraw
from .compute import PredictabilityParams
from .figures import prediction_scatter, r2_by_layer_figure


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
    return needs_kernel(widgets.VBox([widgets.HBox([pick, slider]), output]))


def static_prediction_explorer(fits, specimen_name: str, component: str = "gate", layer: int = 15) -> widgets.VBox:
    """The published page's explorer, from the chapter's ``fits`` table: pick a component and a layer; a figure of
    that component's R² across depth (ridge held-out and in-sample, the two baselines, on the specimen) and, for the
    layer, every predictor's R² on the specimen and on its two null models. No kernel needed."""
    components = list(dict.fromkeys(fits["component"]))
    layers = sorted(int(l) for l in fits["layer"].unique())
    labels = {("ridge", "out-of-sample"): "ridge, held-out", ("ridge", "in-sample"): "ridge, in-sample",
              ("previous layer", "out-of-sample"): "previous layer", ("mean layer", "out-of-sample"): "mean layer"}
    pick = widgets.Dropdown(options=components, value=component if component in components else components[0],
                            description="component")
    where = widgets.SelectionSlider(options=[f"L{l}" for l in layers],
                                    value=f"L{layer if layer in layers else layers[0]}", description="layer",
                                    continuous_update=True, layout=widgets.Layout(width="420px", max_width="100%"))
    figures = {c: figure_widget(r2_by_layer_figure(fits, c, specimen_name)) for c in components}
    table = fits.set_index(["component", "layer", "model", "predictor", "fit"])["r2"]
    models = list(dict.fromkeys(fits["model"]))

    def leaf(c: int, l: int):
        name, at = components[c], layers[l]
        head = "".join(f"<th>{m}</th>" for m in models)
        rows = "".join("<tr><td>" + label + "</td>" + "".join(
            f"<td>{table.get((name, at, m, p, f), float('nan')):+.2f}</td>" for m in models) + "</tr>"
            for (p, f), label in labels.items())
        text = (f"<b>{name}, L{at}</b>: R² of the predicted weights<table><thead><tr><th>predictor</th>{head}</tr>"
                f"</thead><tbody>{rows}</tbody></table>")
        return widgets.VBox([answer_html(text), figures[name]])

    return widgets.VBox([widgets.HBox([pick, where]), linked_stacks([pick, where], leaf)]).add_class(STATIC_CLASS)
