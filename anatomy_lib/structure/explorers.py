"""Chapter 4's explorer: the map of delta correlations for a component, specimen or null."""
from __future__ import annotations

import ipywidgets as widgets

from ..core.widgets import live, redraw
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
    return live(widgets.VBox([widgets.HBox([pick, which]), output]))
