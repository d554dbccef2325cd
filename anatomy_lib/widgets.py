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
