"""Chapter 4's explorers: the map of delta correlations for a component, specimen or null (live, or every map
precomputed for the published page)."""
from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from ..core.widgets import STATIC_CLASS, answer_html, figure_widget, linked_stacks, needs_kernel, redraw
from .compute import delta_correlation_matrix
from .figures import correlation_map_figure


def delta_map_explorer(specimens: dict, component: str = "gate"):
    """Pick a component and a model (specimen, shuffled, random init): the map of corr(D_i, D_j)."""
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
        control.observe(lambda _: redraw(output, figure), names="value")
    redraw(output, figure)
    return needs_kernel(widgets.VBox([widgets.HBox([pick, which]), output]))


def static_delta_map_explorer(specimens: dict, component: str = "gate") -> widgets.VBox:
    """The published page's explorer: every component's map for every model (``specimens``: {model name:
    (specimen, layer order or None)}), precomputed and linked to two pickers, each map with its mean lag-1 and
    lag-2 correlation in a line above it. No kernel needed."""
    first = next(iter(specimens.values()))[0]
    names = list(first.adapter.matrix_names)
    pick = widgets.Dropdown(options=names, value=component if component in names else names[0],
                            description="component")
    which = widgets.Dropdown(options=list(specimens), value=next(iter(specimens)), description="model")

    def leaf(c: int, m: int):
        model = list(specimens)[m]
        spec, order = specimens[model]
        matrix = delta_correlation_matrix(spec.adapter.stacked(names[c], order))
        lag1, lag2 = np.diagonal(matrix, 1).mean(), np.diagonal(matrix, 2).mean()
        text = (f"<b>{names[c]}, {model}</b>: mean corr(D_l, D_l+1) = {lag1:+.3f}, mean corr(D_l, D_l+2) = "
                f"{lag2:+.3f}")
        return widgets.VBox([answer_html(text), figure_widget(correlation_map_figure(
            matrix, f"{names[c]}: {model}", spec.name))])

    return widgets.VBox([widgets.HBox([pick, which]), linked_stacks([pick, which], leaf)]).add_class(STATIC_CLASS)
