"""Chapter 6's explorers: damage and fine-tune a layer live, or pick a stored layer in the published page."""
from __future__ import annotations

from dataclasses import replace

import ipywidgets as widgets
import pandas as pd

from ..core.widgets import STATIC_CLASS, by_specimen, figure_widget, linked_stacks, needs_kernel, redraw, run_busy
from .analysis import MAIN_CRITERION, at_sigma, judged_runs, protocol_label
from .figures import recovery_curves_figure
from .sweep import RecoveryContext, compute, recovery_run


def recovery_explorer(lab, params, tables, classes: dict | None = None, layer: int = 11):
    """Pick a layer: its stored recovery curves (every noise seed and sham) at once. Set the damage (a target in
    nats, or a sigma), the learning rate and the steps, press *train*: the layer is damaged and fine-tuned live,
    with a progress bar, and the new curve is drawn beside the stored ones. The model is restored afterwards.
    ``classes`` maps layers to their chapter-2 class (the curves' colours)."""
    adapter = lab.adapter
    adapter.check_layer(layer)
    width = widgets.Layout(width="360px")
    pick = widgets.Dropdown(options=list(range(adapter.n_layers)), value=layer, description="layer", layout=width)
    mode = widgets.ToggleButtons(options=["target nats", "sigma"], value="target nats", description="damage")
    amount = widgets.FloatLogSlider(value=params.target_nats, base=10, min=-2, max=1, step=0.05,
                                    description="amount", layout=width)
    lr = widgets.FloatLogSlider(value=params.lr, base=10, min=-6, max=-2, step=0.25, description="lr",
                                readout_format=".1e", layout=width)
    steps = widgets.IntSlider(value=params.steps, min=1, max=max(params.steps, 400), description="steps",
                              layout=width)
    button = widgets.Button(description="train", button_style="primary", icon="play")
    bar = widgets.IntProgress(value=0, min=0, max=params.steps, description="idle", layout=width)
    output = widgets.Output()
    stored = tables["curves"]
    classes = classes or {}
    live: list = []

    def draw(_=None):
        curves = stored[stored["layer"] == pick.value]
        if live and live[0]["layer"].iloc[0] == pick.value:
            curves = pd.concat([curves, live[0]], ignore_index=True)
        if curves.empty:
            output.outputs = ()
            output.append_stdout(f"no stored run for layer {pick.value}: press train to run one\n")
            return
        redraw(output, lambda: recovery_curves_figure(curves, classes, None, lab.specimen.name))

    def work():
        bar.description, bar.value = "training", 0
        run = replace(params, layers=(pick.value,), sham_layers=(), lr=lr.value, steps=steps.value,
                      target_nats=amount.value if mode.value == "target nats" else params.target_nats,
                      eval_every=max(1, steps.value // 8))
        bar.max = run.steps
        context = RecoveryContext.build(lab, run, layers=[pick.value])
        sigma = amount.value if mode.value == "sigma" else None
        row, curve, _ = recovery_run(context, pick.value, "damaged", run.noise_seed, run, sigma,
                                  on_step=lambda step: setattr(bar, "value", step))
        curve["noise_seed"] = -1  # drawn apart from the stored seeds
        live[:] = [curve.assign(kind="damaged")]
        bar.description = f"done: {row['initial_excess_nll']:+.2f} -> {row['final_excess_nll']:+.2f} nats"
        draw()

    pick.observe(draw, names="value")
    button.on_click(lambda _: run_busy(button, bar, output, work))
    draw()
    return needs_kernel(widgets.VBox([widgets.HBox([widgets.VBox([pick, mode, amount]),
                                            widgets.VBox([lr, steps, button, bar])]), output]))


def static_recovery_explorer(tables: dict, classes: dict, specimen_name: str, layer: int = 11,
                             judged=None) -> widgets.VBox:
    """Pick a layer and a protocol: its stored recovery curves (every noise seed) beside the sham of the same
    layer, with the step each run counts as recovered (``judged``: ``analysis.judged_runs``)."""
    curves = tables["curves"]
    damaged = curves[curves["kind"] == "damaged"]
    layers = sorted(int(l) for l in curves["layer"].unique())
    protocols = [("matched", None)] if (damaged["protocol"] == "matched").any() else []
    protocols += [("fixed", float(s)) for s in sorted(damaged.loc[damaged["protocol"] == "fixed", "sigma"].unique())]
    names = [protocol_label(p, s or 0) for p, s in protocols]
    pick = widgets.Dropdown(options=[f"L{l}" for l in layers], value=f"L{layer if layer in layers else layers[0]}",
                            description="layer")
    how = widgets.Dropdown(options=names, value=names[0], description="protocol")

    def leaf(l: int, p: int):
        protocol, sigma = protocols[p]
        mine = curves[curves["layer"] == layers[l]]
        keep = (mine["kind"] == "sham") | ((mine["protocol"] == protocol) & at_sigma(mine, sigma))
        return figure_widget(recovery_curves_figure(mine[keep], classes, None, specimen_name, judged))

    return widgets.VBox([widgets.HBox([pick, how]), linked_stacks([pick, how], leaf)]).add_class(STATIC_CLASS)


def static_explorers_by_specimen(lab, tables: dict, classes: dict, judged, others, layer: int = 11) -> widgets.Widget:
    """Chapter 6's published explorer for its own ``lab`` and for each read-only lab of ``others`` whose recovery
    sweep is stored at its defaults (``Lab.defaults``: a specimen may be sized apart), behind a specimen picker;
    ``layer`` is named on the paper's 30 layers and opens at the same depth of each specimen."""
    def build(other):
        theirs = compute(other, progress=False)
        their_classes = dict(zip(theirs["importance"]["layer"], theirs["importance"]["class"]))
        return static_recovery_explorer(theirs, their_classes, other.specimen.name, other.at_depth((layer,))[0],
                                        judged_runs(theirs, MAIN_CRITERION, other.profile.n_boot))

    own = static_recovery_explorer(tables, classes, lab.specimen.name, lab.at_depth((layer,))[0], judged)
    return by_specimen(lab.specimen.name, own, others, build)
