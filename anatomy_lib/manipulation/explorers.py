"""Chapter 5's explorers: manipulate layers live, or pick a stored scaling in the published page."""
from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

from ..core.display import estimate_text
from ..core.generation import DEFAULT_PROMPTS, generate
from ..core.widgets import (
    STATIC_CLASS,
    answer_html,
    button_explorer,
    by_specimen,
    edit_tables,
    layer_picker,
    linked_stacks,
)
from .compute import ManipulationParams, compute
from .strategies import SCOPES, SIDES, STRATEGIES, Manipulation


def manipulation_explorer(lab, layers=(14,), strategy: str = "scale", alpha: float = 0.9, prompt: str | None = None):
    """Pick layers, a strategy and its knobs (alpha, t, rank, scope, neighbour), press the button: perplexity
    change with its interval and the manipulated model's continuation of a fixed prompt, beside the intact one."""
    adapter = lab.adapter
    prompt = prompt or DEFAULT_PROMPTS[0]
    width = widgets.Layout(width="340px")
    pick = layer_picker(adapter, layers, rows=7)
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
        return edit_tables({**measured.row(), "layers": layers}, m.label(), prompt, intact,
                            measured.continuation, "manipulated model")

    return button_explorer(pick, [how, alpha_s, t_s, rank_s, scope, side], button, tables)


def static_manipulation_explorer(tables: dict, compress_layers, alpha: float = 0.9,
                                 strategy: str = "scale (writers)") -> widgets.VBox:
    """Pick a scaling, the layers it acts on and alpha on the stored grid: the perplexity change with its
    interval (single layers from the alpha sweeps; the connective layers together from the compression
    experiment, with the fact rate)."""
    sweeps = tables["sweeps"]
    sweeps = sweeps[sweeps["knob"] == "alpha"]
    comp = tables["compression"]
    alphas = sorted(set(sweeps["value"]))
    scopes = {"scale (writers)": "writers", "scale (all)": "all"}
    connective = f"the {len(compress_layers)} connective layers ({', '.join(map(str, compress_layers))})"

    def rows_for(scope: str, target: str, value: float) -> pd.DataFrame:
        if target == "connective layers":
            return comp[comp["label"].str.endswith(f"{scope})") & (comp["alpha"] == value)]
        return sweeps[(sweeps["scope"] == scope) & (sweeps["layers"].astype(str) == target[1:])
                      & (sweeps["value"] == value)]

    # one choice per (strategy, layers) stored at every alpha of the grid, so that every position answers (a
    # specimen without connective tissue, Gemma, has no compression: its single layers only)
    targets = [f"L{l}" for l in sorted({int(l) for l in sweeps["layers"].astype(str)})] + (
        ["connective layers"] if len(compress_layers) else [])
    choices = [(name, target) for target in targets for name, scope in scopes.items()
               if all(len(rows_for(scope, target, a)) for a in alphas)]
    names = [f"{name} on {connective if target == 'connective layers' else target}" for name, target in choices]
    opening = next((i for i, (name, target) in enumerate(choices) if name == strategy
                    and target == "connective layers"), len(choices) - 1)
    pick = widgets.Dropdown(options=names, value=names[opening], description="scaling",
                            layout=widgets.Layout(width="min(100%, 520px)"))
    knob = widgets.SelectionSlider(options=[f"{a:g}" for a in alphas], value=f"{alpha:g}", description="alpha",
                                   layout=widgets.Layout(width="480px"))

    def leaf(p: int, a: int):
        (name, target), value = choices[p], alphas[a]
        row = rows_for(scopes[name], target, value).iloc[0]
        text = (f"<b>{names[p]}</b>, alpha = {value:g}: perplexity change "
                f"{estimate_text(row.change_pct, row.ci_low, row.ci_high, unit='%')} (95% interval)")
        if "fact_rate" in row and row.fact_rate == row.fact_rate:
            text += (f"<br>facts answered: {row.fact_rate:.0%} ({row.fact_rate_low:.0%} to {row.fact_rate_high:.0%})"
                     f", repetition {row.repetition_rate:.2f}")
        return answer_html(text)

    return widgets.VBox([pick, knob, linked_stacks([pick, knob], leaf)]).add_class(STATIC_CLASS)


def static_explorers_by_specimen(lab, tables: dict, compress_layers, others, alpha: float = 0.9) -> widgets.Widget:
    """Chapter 5's published explorer for its own ``lab`` and for each read-only lab of ``others`` whose chapter-5
    tables are stored at its defaults (its connective layers from its own chapter 2), behind a specimen picker."""
    def build(other):
        params = other.defaults(ManipulationParams).resolved(other)
        return static_manipulation_explorer(compute(other, params, progress=False), params.compress_layers, alpha)

    return by_specimen(lab.specimen.name, static_manipulation_explorer(tables, compress_layers, alpha), others, build)
