"""Interactive explorers for the chapters. They call the same functions as the static figures; in the built
HTML a widget shows the state it was executed with, in a live kernel (Colab, Binder, Jupyter) it recomputes."""
from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt

from .plots import spectra_figure
from .weight_stats import singular_values, weight_norms


def _show_in(output: widgets.Output, *objects) -> None:
    """Replace an Output widget's content through its state, never through an output-capture context: a
    notebook executed headless (papermill, Jupyter Book) then sees ordinary widget updates only, which avoids
    the client stalls that captured output can cause (jupyter/nbclient#312)."""
    output.outputs = ()
    for obj in objects:
        output.append_display_data(obj)


def _show_error(output: widgets.Output, exc: Exception) -> None:
    output.outputs = ()
    output.append_stdout(f"error: {exc}\n")


def _redraw(output: widgets.Output, make_figure) -> None:
    """Replace the figure; an exception is shown in the output area (a stale figure would hide it)."""
    try:
        fig = make_figure()
    except Exception as exc:  # noqa: BLE001 (whatever went wrong, the reader must see it)
        _show_error(output, exc)
        return
    _show_in(output, fig)
    plt.close(fig)


def _busy(button: widgets.Button, bar: widgets.IntProgress, output: widgets.Output, work) -> None:
    """Run ``work()`` with the button disabled; an exception is shown in the output area, never swallowed."""
    button.disabled = True
    try:
        work()
    except Exception as exc:  # noqa: BLE001 (whatever went wrong, the reader must see it)
        _show_error(output, exc)
        bar.description = "failed"
    finally:
        button.disabled = False


def _layer_picker(adapter, layers, rows: int = 6) -> widgets.SelectMultiple:
    for layer in layers:
        adapter.check_layer(layer)
    return widgets.SelectMultiple(options=list(range(adapter.n_layers)), value=tuple(layers), rows=rows,
                                  description="layers", layout=widgets.Layout(width="210px"))


def _edit_tables(result: dict, label: str, prompt: str, intact: str, edited: str, edited_name: str):
    """One summary row (perplexity change with its interval) and the two continuations side by side."""
    import pandas as pd

    summary = pd.DataFrame([{"edit": label, "layers": ", ".join(map(str, result["layers"])),
                             "perplexity": f"{result['base_ppl']:.2f} -> {result['ppl']:.2f}",
                             "change": f"{result['change_pct']:+,.1f}%",
                             "95% interval": f"{result['ci_low']:+,.1f}% .. {result['ci_high']:+,.1f}%"}])
    texts = pd.DataFrame({"prompt": [prompt], "intact model": [intact], edited_name: [edited]})
    return (summary.style.hide(axis="index"),
            texts.style.hide(axis="index").set_properties(**{"text-align": "left"}))


def _button_explorer(pick, controls: list, button: widgets.Button, tables) -> widgets.VBox:
    """Layer picker and controls on top, results below; ``tables()`` runs on every press (and once now), with
    the button disabled and saying so meanwhile; an error is shown where the results would be."""
    output = widgets.Output()
    label = button.description

    def run(_=None):
        if not pick.value:
            output.outputs = ()
            output.append_stdout("choose at least one layer\n")
            return
        button.disabled, button.description = True, "computing..."
        try:
            _show_in(output, *tables())
        except Exception as exc:  # noqa: BLE001 (whatever went wrong, the reader must see it)
            _show_error(output, exc)
        finally:
            button.disabled, button.description = False, label

    button.on_click(run)
    run()
    return widgets.VBox([widgets.HBox([pick, widgets.VBox(controls + [button])]), output])


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


def ablation_explorer(lab, layers=(11,), mode: str = "neighbor_mean", prompt: str | None = None,
                      tensors: str = "all"):
    """Pick layers and a mode, press the button: the joint ablation's perplexity change with its interval and
    a continuation of a fixed prompt, intact and ablated side by side (``tensors``: the chapter's TENSORS)."""
    from .generation import DEFAULT_PROMPTS, generate
    from .importance import MODES, joint_ablation

    prompt = prompt or DEFAULT_PROMPTS[0]
    pick = _layer_picker(lab.adapter, layers)
    how = widgets.Dropdown(options=list(MODES), value=mode, description="mode")
    button = widgets.Button(description="ablate", button_style="primary", icon="scissors")
    intact = generate(lab.specimen, prompt, lab.profile.gen_tokens)

    def tables():
        r = joint_ablation(lab, pick.value, how.value, tensors, prompt=prompt)
        return _edit_tables(r, f"{r['mode']} ablation", prompt, intact, r["continuation"], "ablated model")

    return _button_explorer(pick, [how], button, tables)


def prediction_explorer(specimen, params=None, component: str = "gate", layer: int = 15):
    """Pick a component and a target layer: predicted vs real weights, held-out and in-sample fits, with the
    chapter's ridge parameters (a ``PredictabilityParams``)."""
    from .plots import prediction_scatter
    from .predictability import PredictabilityParams, predict_layers, r2_and_cosine

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
        control.observe(lambda _: _redraw(output, figure), names="value")
    _redraw(output, figure)
    return widgets.VBox([widgets.HBox([pick, slider]), output])


def delta_map_explorer(specimens: dict, component: str = "gate"):
    """Pick a component and a model (specimen, shuffled, random init): the map of corr(D_i, D_j)."""
    from .plots import correlation_map_figure
    from .structure import delta_correlation_matrix

    first = next(iter(specimens.values()))[0]
    names = list(first.adapter.matrix_names)
    pick = widgets.Dropdown(options=names, value=component, description="component")
    which = widgets.Dropdown(options=list(specimens), value=next(iter(specimens)), description="model")
    output = widgets.Output()

    def figure():
        spec, order = specimens[which.value]
        matrix = delta_correlation_matrix(spec.adapter.stacked(pick.value, order))
        return correlation_map_figure(matrix, f"{pick.value}: {which.value}", spec.name)

    for control in (pick, which):
        control.observe(lambda _: _redraw(output, figure), names="value")
    _redraw(output, figure)
    return widgets.VBox([widgets.HBox([pick, which]), output])


def manipulation_explorer(lab, layers=(14,), strategy: str = "scale", alpha: float = 0.9, prompt: str | None = None):
    """Pick layers, a strategy and its knobs (alpha, t, rank, scope, neighbour), press the button: perplexity
    change with its interval and the manipulated model's continuation of a fixed prompt, beside the intact one."""
    from .generation import DEFAULT_PROMPTS, generate
    from .manipulate import SCOPES, SIDES, STRATEGIES, Manipulation

    adapter = lab.adapter
    prompt = prompt or DEFAULT_PROMPTS[0]
    width = widgets.Layout(width="340px")
    pick = _layer_picker(adapter, layers, rows=7)
    how = widgets.Dropdown(options=list(STRATEGIES), value=strategy, description="strategy", layout=width)
    alpha_s = widgets.FloatSlider(value=alpha, min=0.0, max=1.5, step=0.05, description="alpha", layout=width)
    t_s = widgets.FloatSlider(value=0.5, min=0.0, max=1.0, step=0.05, description="t (mix)", layout=width)
    # a rank above a matrix's smallest side cannot be asked for: the slider stops at the narrowest matrix (k and v
    # under grouped-query attention)
    max_rank = min(min(adapter.tensor(0, name).shape) for name in adapter.matrix_names)
    rank_s = widgets.IntSlider(value=min(16, max_rank), min=1, max=max_rank, description="rank", layout=width)
    scope = widgets.Dropdown(options=list(SCOPES), value="writers", description="scale scope", layout=width)
    side = widgets.Dropdown(options=list(SIDES), value="prev", description="neighbour", layout=width)
    button = widgets.Button(description="apply", button_style="primary", icon="sliders")
    intact = generate(lab.specimen, prompt, lab.profile.gen_tokens)

    def tables():
        m = Manipulation(how.value, alpha=alpha_s.value, t=t_s.value, rank=rank_s.value, neighbor=side.value,
                         scope=scope.value)
        layers = sorted(pick.value)
        measured = lab.measure(m.edit(layers), prompt)
        return _edit_tables({**measured.row(), "layers": layers}, m.label(), prompt, intact,
                            measured.continuation, "manipulated model")

    return _button_explorer(pick, [how, alpha_s, t_s, rank_s, scope, side], button, tables)


def recovery_explorer(lab, params, tables, classes: dict | None = None, layer: int = 11):
    """Pick a layer: its stored recovery curves (every noise seed and sham) at once. Set the damage (a target in
    nats, or a sigma), the learning rate and the steps, press *train*: the layer is damaged and fine-tuned live,
    with a progress bar, and the new curve is drawn beside the stored ones. The model is restored afterwards.
    ``classes`` maps layers to their chapter-2 class (the curves' colours)."""
    from dataclasses import replace

    import pandas as pd

    from .plots import recovery_curves_figure
    from .recovery import RecoveryContext, recovery_run

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
    tolerance = float(tables["runs"]["tolerance_nll"].iloc[0])
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
        _redraw(output, lambda: recovery_curves_figure(curves, classes, tolerance, lab.specimen.name))

    def work():
        bar.description, bar.value = "training", 0
        run = replace(params, layers=(pick.value,), sham_layers=(), lr=lr.value, steps=steps.value,
                      target_nats=amount.value if mode.value == "target nats" else params.target_nats,
                      eval_every=max(1, steps.value // 8))
        bar.max = run.steps
        context = RecoveryContext.build(lab, run, layers=[pick.value])
        sigma = amount.value if mode.value == "sigma" else None
        row, curve = recovery_run(context, pick.value, "damaged", run.noise_seed, run, sigma,
                                  on_step=lambda step: setattr(bar, "value", step))
        curve["noise_seed"] = -1  # drawn apart from the stored seeds
        live[:] = [curve.assign(kind="damaged")]
        bar.description = f"done: {row['initial_excess_nll']:+.2f} -> {row['final_excess_nll']:+.2f} nats"
        draw()

    pick.observe(draw, names="value")
    button.on_click(lambda _: _busy(button, bar, output, work))
    draw()
    return widgets.VBox([widgets.HBox([widgets.VBox([pick, mode, amount]), widgets.VBox([lr, steps, button, bar])]),
                         output])


def stored_growth_figure(tables: dict, arm: str, seed: int):
    """One stored run's validation curve beside the uniform arm's of the same seed, its growth events marked."""
    from .growth.experiment import mean_curves
    from .plots import growth_curves_figure

    curves, events = tables["curves"], tables["events"]
    shown = curves[curves["arm"].isin([arm, "uniform"]) & (curves["seed"] == seed)]
    grown = events[(events["arm"] == arm) & (events["seed"] == seed)] if len(events) else events
    return growth_curves_figure(shown, mean_curves(shown), grown, specimen=f"stored runs, seed {seed}")


def growth_explorer(tables, params, arms=("uniform", "developmental")):
    """Pick an arm and a seed: its stored validation curve beside the uniform arm's (same seed). Press *train*:
    the chosen ``arms`` are trained live at the ``smoke`` size, with a progress bar, and drawn."""
    import pandas as pd

    from .growth.experiment import ARMS, GrowthParams, mean_curves, text_data
    from .growth.trainer import train
    from .plots import growth_curves_figure

    curves = tables["curves"]
    stored_arms = list(dict.fromkeys(curves["arm"]))
    pick = widgets.Dropdown(options=stored_arms, value=stored_arms[-1], description="arm")
    seed = widgets.Dropdown(options=sorted(curves["seed"].unique().tolist()), description="seed")
    live_arms = widgets.SelectMultiple(options=list(ARMS), value=tuple(arms), rows=6, description="train")
    button = widgets.Button(description="train (smoke size)", button_style="primary", icon="play")
    bar = widgets.IntProgress(value=0, min=0, max=1, description="idle")
    output = widgets.Output()

    def draw(_=None):
        _redraw(output, lambda: stored_growth_figure(tables, pick.value, seed.value))

    def work():
        bar.value = 0
        small = GrowthParams.for_profile("smoke", arms=tuple(live_arms.value) or ("uniform",), seeds=1)
        _, data = text_data(small)
        bar.max, bar.description = len(small.arms), "training"
        fresh, events = [], []
        for name in small.arms:
            curve, records, _ = train(small.arm(name), small.config(), data, 0)
            fresh.append(curve)
            events.append(records)
            bar.value += 1
        live = pd.concat(fresh, ignore_index=True)
        events = pd.concat(events, ignore_index=True)
        _redraw(output, lambda: growth_curves_figure(live, mean_curves(live), events,
                                                     specimen="trained just now (smoke size)"))
        bar.description = "done"

    for control in (pick, seed):
        control.observe(draw, names="value")
    button.on_click(lambda _: _busy(button, bar, output, work))
    draw()
    return widgets.VBox([widgets.HBox([widgets.VBox([pick, seed]), widgets.VBox([live_arms, button, bar])]), output])


# ---- explorers that work in the published page, without a kernel ---------------------------------------------
# Every answer is computed here, from stored results, and put in a ``widgets.Stack``; ``widgets.jslink`` ties each
# control's index to the stack that shows the matching answer. The embedded widget manager runs those links in
# the reader's browser, so the built HTML responds to its controls with no kernel behind it.
STATIC_CLASS = "anatomy-static"  # how the browser test (tests/browser/check_pages.mjs) finds these explorers


def _linked_stacks(controls: list, leaf) -> widgets.Widget:
    """Nested stacks, one level per control (a widget with ``options`` and ``index``); ``leaf(*indices)`` makes
    the answer for one choice of every control."""
    def build(depth: int, chosen: tuple):
        if depth == len(controls):
            return leaf(*chosen)
        control = controls[depth]
        stack = widgets.Stack([build(depth + 1, chosen + (i,)) for i in range(len(control.options))],
                              selected_index=control.index)
        widgets.jslink((control, "index"), (stack, "selected_index"))
        return stack

    return build(0, ())


def _html(text: str) -> widgets.HTML:
    return widgets.HTML(f'<div class="anatomy-answer">{text}</div>')


def _figure_widget(fig, dpi: int = 72) -> widgets.Image:
    from io import BytesIO

    buffer = BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return widgets.Image(value=buffer.getvalue(), format="png", layout=widgets.Layout(max_width="100%"))


def _escape(text) -> str:
    import html

    return html.escape(str(text)) if text == text else ""  # NaN (no text) shows as nothing


def static_importance_explorer(tables: dict, continuations: dict | None = None, layer: int = 11,
                               mode: str = "neighbor_mean") -> widgets.VBox:
    """Pick a layer and an ablation mode: the stored change with its interval and class, and the ablated
    model's stored continuation (``continuations``: {mode: table with layer, prompt, continuation})."""
    modes = list(tables)
    first = tables[modes[0]]
    layers = [int(l) for l in first["layer"]]
    how = widgets.Dropdown(options=modes, value=mode if mode in modes else modes[0], description="mode")
    where = widgets.SelectionSlider(options=[f"L{l}" for l in layers], value=f"L{layer if layer in layers else 0}",
                                    description="layer", continuous_update=True,
                                    layout=widgets.Layout(width="480px"))

    def leaf(m: int, l: int):
        name = modes[m]
        row = tables[name].set_index("layer").loc[layers[l]]
        text = (f"<b>L{layers[l]}</b> removed by <code>{name}</code>: perplexity {row.change_pct:+,.1f}% "
                f"(95% interval {row.ci_low:+,.1f}% to {row.ci_high:+,.1f}%)")
        if "class" in row:
            text += f"; class: {_escape(row['class'])}"
        said = (continuations or {}).get(name)
        if said is not None and layers[l] in set(said["layer"]):
            one = said.set_index("layer").loc[layers[l]]
            text += (f"<br>prompt: <i>{_escape(one.prompt)}</i><br>ablated model: "
                     f"<i>{_escape(one.continuation) or '(nothing)'}</i>")
        return _html(text)

    return widgets.VBox([widgets.HBox([how, where]), _linked_stacks([how, where], leaf)]).add_class(STATIC_CLASS)


def static_manipulation_explorer(tables: dict, compress_layers, alpha: float = 0.9,
                                 strategy: str = "scale (writers)") -> widgets.VBox:
    """Pick a scaling, the layers it acts on and alpha on the stored grid: the perplexity change with its
    interval (single layers from the alpha sweeps; the connective layers together from the compression
    experiment, with the fact rate)."""
    sweeps = tables["sweeps"]
    sweeps = sweeps[sweeps["knob"] == "alpha"]
    comp = tables["compression"]
    alphas = sorted(set(sweeps["value"]) | set(comp["alpha"].dropna()))
    scopes = {"scale (writers)": "writers", "scale (all)": "all"}
    targets = [f"L{l}" for l in sorted({int(l) for l in sweeps["layers"].astype(str)})] + ["connective layers"]
    how = widgets.Dropdown(options=list(scopes), value=strategy, description="strategy")
    where = widgets.Dropdown(options=targets, value=targets[-1], description="layers")
    knob = widgets.SelectionSlider(options=[f"{a:g}" for a in alphas], value=f"{alpha:g}", description="alpha",
                                   layout=widgets.Layout(width="480px"))

    def leaf(s: int, t: int, a: int):
        scope, target, value = scopes[list(scopes)[s]], targets[t], alphas[a]
        if target == "connective layers":
            rows = comp[comp["label"].str.endswith(f"{scope})") & (comp["alpha"] == value)]
            label = f"the {len(compress_layers)} connective layers ({', '.join(map(str, compress_layers))})"
        else:
            rows = sweeps[(sweeps["scope"] == scope) & (sweeps["layers"].astype(str) == target[1:])
                          & (sweeps["value"] == value)]
            label = target
        if rows.empty:
            return _html(f"{list(scopes)[s]} on {label} at alpha = {value:g} is not in the stored grid: run the "
                         "chapter and use the live explorer below.")
        row = rows.iloc[0]
        text = (f"<b>{list(scopes)[s]}</b>, alpha = {value:g}, on {label}: perplexity {row.change_pct:+,.1f}% "
                f"(95% interval {row.ci_low:+,.1f}% to {row.ci_high:+,.1f}%)")
        if "fact_rate" in row and row.fact_rate == row.fact_rate:
            text += (f"<br>facts answered: {row.fact_rate:.0%} ({row.fact_rate_low:.0%} to {row.fact_rate_high:.0%})"
                     f", repetition {row.repetition_rate:.2f}")
        return _html(text)

    return widgets.VBox([widgets.HBox([how, where]), knob, _linked_stacks([how, where, knob], leaf)]).add_class(
        STATIC_CLASS)


def static_recovery_explorer(tables: dict, classes: dict, specimen: str, layer: int = 11) -> widgets.VBox:
    """Pick a layer: its stored recovery curves (every noise seed, and the sham where there is one)."""
    from .plots import recovery_curves_figure

    curves = tables["curves"]
    tolerance = float(tables["runs"]["tolerance_nll"].iloc[0])
    layers = sorted(int(l) for l in curves["layer"].unique())
    pick = widgets.Dropdown(options=[f"L{l}" for l in layers], value=f"L{layer if layer in layers else layers[0]}",
                            description="layer")

    def leaf(l: int):
        return _figure_widget(recovery_curves_figure(curves[curves["layer"] == layers[l]], classes, tolerance,
                                                     specimen))

    return widgets.VBox([pick, _linked_stacks([pick], leaf)]).add_class(STATIC_CLASS)


def static_growth_explorer(tables: dict, arm: str = "developmental") -> widgets.VBox:
    """Pick an arm and a seed: its stored validation curve beside the uniform arm's of the same seed."""
    curves = tables["curves"]
    arms = list(dict.fromkeys(curves["arm"]))
    seeds = sorted(int(s) for s in curves["seed"].unique())
    pick = widgets.Dropdown(options=arms, value=arm if arm in arms else arms[-1], description="arm")
    seed = widgets.Dropdown(options=[str(s) for s in seeds], description="seed")

    def leaf(a: int, s: int):
        return _figure_widget(stored_growth_figure(tables, arms[a], seeds[s]))

    return widgets.VBox([widgets.HBox([pick, seed]), _linked_stacks([pick, seed], leaf)]).add_class(STATIC_CLASS)
