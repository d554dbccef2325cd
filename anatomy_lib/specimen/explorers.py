"""Chapter 1's explorers: pick a layer, see its spectra and norms (live, or precomputed for the published page)."""
from __future__ import annotations

import ipywidgets as widgets

from ..core.widgets import STATIC_CLASS, answer_html, figure_widget, linked_stacks, needs_kernel, redraw
from .compute import effective_rank, singular_values, weight_norms
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
    return needs_kernel(widgets.VBox([slider, output]))


def explorer_layers(n_layers: int, layer: int, profile: str = "quick") -> list[int]:
    """The layers a static explorer precomputes: every one, except at the smoke profile (a test): the first, the
    chosen and the last, so that a chapter test does not render a figure per layer of a 30-layer model."""
    return sorted({0, layer, n_layers - 1}) if profile == "smoke" else list(range(n_layers))


def static_layer_explorer(specimen, layer: int = 0, profile: str = "quick") -> widgets.VBox:
    """The published page's layer explorer: every layer's spectra figure and a line per matrix (Frobenius norm,
    largest singular value, entropy effective rank against the full rank), precomputed and linked to a layer
    slider, so that it answers without a kernel (``explorer_layers``: at smoke, three layers only)."""
    adapter = specimen.adapter
    adapter.check_layer(layer)
    norms = weight_norms(adapter)
    layers = explorer_layers(adapter.n_layers, layer, profile)
    where = widgets.SelectionSlider(options=[f"L{l}" for l in layers], value=f"L{layer}",
                                    description="layer", continuous_update=True,
                                    layout=widgets.Layout(width="420px", max_width="100%"))

    def leaf(index: int):
        spectrum = singular_values(adapter, index)
        ranks = effective_rank(spectrum).set_index("tensor")
        top = spectrum[spectrum["index"] == 0].set_index("tensor")["sigma"]
        frobenius = norms[(norms["layer"] == index) & (norms["kind"] == "matrix")].set_index("tensor")["frobenius"]
        lines = "".join(f"<tr><td>{name}</td><td>{frobenius[name]:,.1f}</td><td>{top[name]:,.2f}</td>"
                        f"<td>{ranks.loc[name, 'effective_rank']:,.0f} of {ranks.loc[name, 'full_rank']}</td></tr>"
                        for name in ranks.index)
        text = (f"<b>L{index}</b><table><thead><tr><th>matrix</th><th>Frobenius norm</th><th>largest singular "
                f"value</th><th>effective rank</th></tr></thead><tbody>{lines}</tbody></table>")
        return widgets.VBox([answer_html(text), figure_widget(spectra_figure(spectrum, norms, specimen.name))])

    return widgets.VBox([where, linked_stacks([where], lambda i: leaf(layers[i]))]).add_class(STATIC_CLASS)
