"""Interactive explorers for the chapters. They call the same functions as the static figures; in the built
HTML a widget shows the state it was executed with, in a live kernel (Colab, Binder, Jupyter) it recomputes."""
from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import display

from .plots import spectra_figure
from .weights import singular_values, weight_norms


def _redraw(output: widgets.Output, make_figure) -> None:
    with output:
        output.clear_output(wait=True)
        fig = make_figure()
        display(fig)
        plt.close(fig)


def layer_explorer(specimen, layer: int = 0) -> widgets.VBox:
    """Pick a layer: its matrices' norms and singular-value spectra."""
    adapter = specimen.adapter
    adapter.check_layer(layer)
    norms = weight_norms(adapter)
    slider = widgets.IntSlider(value=layer, min=0, max=adapter.n_layers - 1, description="layer",
                               continuous_update=False, layout=widgets.Layout(width="60%"))
    output = widgets.Output()

    def draw(_=None):
        _redraw(output, lambda: spectra_figure(singular_values(adapter, slider.value), norms, specimen.name))

    slider.observe(draw, names="value")
    draw()
    return widgets.VBox([slider, output])


def ablation_explorer(lab, layers=(11,), mode: str = "neighbor_mean", prompt: str | None = None):
    """Pick layers and a mode, press the button: the joint ablation's perplexity change with its interval and
    a continuation of a fixed prompt, intact and ablated side by side."""
    import pandas as pd

    from .generation import DEFAULT_PROMPTS, generate
    from .importance import MODES, joint_ablation

    adapter = lab.adapter
    prompt = prompt or DEFAULT_PROMPTS[0]
    for layer in layers:
        adapter.check_layer(layer)
    pick = widgets.SelectMultiple(options=list(range(adapter.n_layers)), value=tuple(layers), rows=6,
                                  description="layers", layout=widgets.Layout(width="220px"))
    how = widgets.Dropdown(options=list(MODES), value=mode, description="mode")
    button = widgets.Button(description="ablate", button_style="primary", icon="scissors")
    output = widgets.Output()
    intact = generate(lab.specimen, prompt, lab.profile.gen_tokens)

    def run(_=None):
        with output:
            output.clear_output(wait=True)
            if not pick.value:
                print("choose at least one layer")
                return
            r = joint_ablation(lab, pick.value, how.value, prompt=prompt)
            summary = pd.DataFrame([{
                "layers ablated": ", ".join(map(str, r["layers"])), "mode": r["mode"],
                "perplexity": f"{r['base_ppl']:.2f} -> {r['ppl']:.2f}",
                "change": f"{r['change_pct']:+,.1f}%",
                "95% interval": f"{r['ci_low']:+,.1f}% .. {r['ci_high']:+,.1f}%"}])
            display(summary.style.hide(axis="index"))
            side = pd.DataFrame({"prompt": [prompt], "intact model": [intact],
                                 "ablated model": [r["continuation"]]})
            display(side.style.hide(axis="index").set_properties(**{"text-align": "left"}))

    button.on_click(run)
    run()
    return widgets.VBox([widgets.HBox([pick, widgets.VBox([how, button])]), output])


def prediction_explorer(specimen, component: str = "gate", layer: int = 15, formulation: str = "layerwise",
                        context: int = 1, alpha: float = 1.0):
    """Pick a component and a target layer: predicted vs real weights, held-out and in-sample fits."""
    from .plots import prediction_scatter
    from .predictability import predict_layers
    from .structure import stacked

    adapter = specimen.adapter
    adapter.check_layer(layer)
    pick = widgets.Dropdown(options=list(adapter.matrix_names), value=component, description="component")
    slider = widgets.IntSlider(value=layer, min=context, max=adapter.n_layers - 1, description="layer",
                               continuous_update=False)
    output = widgets.Output()

    def figure():
        weights = stacked(adapter, pick.value).numpy()
        kw = dict(formulation=formulation, context=context, alpha=alpha, targets=[slider.value])
        held_out = predict_layers(weights, **kw)[slider.value]
        in_sample = predict_layers(weights, in_sample=True, **kw)[slider.value]
        return prediction_scatter(weights[slider.value], held_out, in_sample,
                                  f"{pick.value}, layer {slider.value} ({formulation} ridge), {specimen.name}")

    for control in (pick, slider):
        control.observe(lambda _: _redraw(output, figure), names="value")
    _redraw(output, figure)
    return widgets.VBox([widgets.HBox([pick, slider]), output])


def delta_map_explorer(specimens: dict, component: str = "gate"):
    """Pick a component and a model (specimen, shuffled, random init): the map of corr(D_i, D_j)."""
    from .plots import correlation_map_figure
    from .structure import delta_correlation_matrix, stacked

    first = next(iter(specimens.values()))[0]
    names = list(first.adapter.matrix_names)
    pick = widgets.Dropdown(options=names, value=component, description="component")
    which = widgets.Dropdown(options=list(specimens), value=next(iter(specimens)), description="model")
    output = widgets.Output()

    def figure():
        spec, order = specimens[which.value]
        matrix = delta_correlation_matrix(stacked(spec.adapter, pick.value, order))
        return correlation_map_figure(matrix, f"{pick.value}: {which.value}", spec.name)

    for control in (pick, which):
        control.observe(lambda _: _redraw(output, figure), names="value")
    _redraw(output, figure)
    return widgets.VBox([widgets.HBox([pick, which]), output])
