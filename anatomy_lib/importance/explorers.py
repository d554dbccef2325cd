"""Chapter 2's explorers: ablate layers live, or pick a stored layer and mode in the published page."""
from __future__ import annotations

import ipywidgets as widgets

from ..core.generation import DEFAULT_PROMPTS, generate
from ..core.widgets import (
    STATIC_CLASS,
    answer_html,
    button_explorer,
    by_specimen,
    edit_tables,
    escape_text,
    layer_picker,
    linked_stacks,
)
from .compute import MODES, ContinuationParams, ablation_continuations, compute, joint_ablation


def ablation_explorer(lab, layers=(11,), mode: str = "neighbor_mean", prompt: str | None = None,
                      tensors: str = "all"):
    """Pick layers and a mode, press the button: the joint ablation's perplexity change with its interval and
    a continuation of a fixed prompt, intact and ablated side by side (``tensors``: the chapter's TENSORS)."""
    prompt = prompt or DEFAULT_PROMPTS[0]
    pick = layer_picker(lab.adapter, layers)
    how = widgets.Dropdown(options=list(MODES), value=mode, description="mode")
    button = widgets.Button(description="ablate", button_style="primary", icon="scissors")
    intact = generate(lab.specimen, prompt, lab.profile.gen_tokens)

    def tables():
        r = joint_ablation(lab, pick.value, how.value, tensors, prompt=prompt)
        return edit_tables(r, f"{r['mode']} ablation", prompt, intact, r["continuation"], "ablated model")

    return button_explorer(pick, [how], button, tables)


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
            text += f"; class: {escape_text(row['class'])}"
        said = (continuations or {}).get(name)
        if said is not None and layers[l] in set(said["layer"]):
            one = said.set_index("layer").loc[layers[l]]
            text += (f"<br>prompt: <i>{escape_text(one.prompt)}</i><br>ablated model: "
                     f"<i>{escape_text(one.continuation) or '(nothing)'}</i>")
        return answer_html(text)

    return widgets.VBox([widgets.HBox([how, where]), linked_stacks([how, where], leaf)]).add_class(STATIC_CLASS)


def static_explorers_by_specimen(lab, tables: dict, continuations: dict, others, layer: int = 11,
                                 mode: str = "neighbor_mean") -> widgets.Widget:
    """Chapter 2's published explorer for its own ``lab`` (the chapter's tables and continuations) and for each
    read-only lab of ``others`` whose importance tables (for the same operators) and continuations are stored,
    behind a specimen picker; ``layer`` is named on the paper's 30 layers and opens at the same depth of each
    specimen. Continuations exist for the weight edits (``MODES``) only."""
    def build(lab):
        their = compute(lab, modes=tuple(tables), progress=False)
        said = {m: ablation_continuations(lab, ContinuationParams(m)) for m in their if m in MODES}
        return static_importance_explorer(their, said, lab.at_depth((layer,))[0], mode)

    own = static_importance_explorer(tables, continuations, lab.at_depth((layer,))[0], mode)
    return by_specimen(lab.specimen.name, own, others, build)
