"""Chapter 1's explorer: pick a layer, see its spectra and norms."""
from __future__ import annotations

import ipywidgets as widgets

from ..core.widgets import live, redraw
from .compute import singular_values, weight_norms
from .figures import spectra_figure


def layer_explorer(specimen, layer: int = 0) -> widgets.VBox:
    """Pick a layer: its matrices' norms and singular-value spectra."""
    adapter = specimen.adapter
    adapter.check_layer(layer)
    norms = weight_norms(adapter)
    slider = widgets.IntSlider(value=layer, min=0, max=adapter.n_layers - 1, description="layer",
                               continuous_update=False, layout=widgets.Layout(width="60%"))
    output = widgets.Output()

    def draw(_=None):
        redraw(output, lambda: spectra_figure(singular_values(adapter, slider.value), norms, specimen.name))

    slider.observe(draw, names="value")
    draw()
    return live(widgets.VBox([slider, output]))
