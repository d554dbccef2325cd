"""Chapter 1's figures: weight norms across layers and one layer's singular-value spectra."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ..core.style import COLUMN, PALETTE, finish_figure, layer_ticks, legend_below, use_book_style

# the norms on the residual stream: before attention and the MLP, and (Gemma) after each block
STREAM_NORMS = ("attn_norm", "mlp_norm", "attn_post_norm", "mlp_post_norm")


def weight_norms_figure(norms, specimen_name: str | None = None):
    """Frobenius norm of every matrix across layers (left) and the mean norm gain (right)."""
    use_book_style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(COLUMN, 4.4), gridspec_kw={"width_ratios": [2, 1]})
    matrices = norms[norms["kind"] == "matrix"]
    sns.lineplot(data=matrices, x="layer", y="frobenius", hue="tensor", style="tensor", markers=True,
                 dashes=False, ax=left)
    left.set(xlabel="layer", ylabel="Frobenius norm", title="Weight matrices")
    legend_below(left, "tensor", ncol=4)
    stream_norms = [n for n in STREAM_NORMS if n in set(norms["tensor"])]
    gains = norms[norms["tensor"].isin(stream_norms)]
    colours = sns.color_palette(PALETTE)
    sns.lineplot(data=gains, x="layer", y="rms", hue="tensor", style="tensor", markers=True, dashes=False,
                 ax=right, palette=[colours[i] for i in (0, 3, 1, 4)][:len(stream_norms)], hue_order=stream_norms)
    right.set(xlabel="layer", ylabel="RMS of the gain vector", title="Norm gains")
    legend_below(right, "tensor", ncol=1)
    for ax, share in ((left, 2 / 3), (right, 1 / 3)):
        layer_ticks(ax, norms["layer"].unique(), share)
    return finish_figure(fig, "Weight norms per layer", specimen_name)


def spectra_figure(spectrum, norms=None, specimen_name: str | None = None):
    """Normalised singular-value spectra of one layer's matrices, with that layer's norms beside them."""
    use_book_style()
    layer = int(spectrum["layer"].iloc[0])
    ncols = 2 if norms is not None else 1
    fig, axes = plt.subplots(1, ncols, figsize=(COLUMN, 4.0),
                             gridspec_kw={"width_ratios": [2, 1]} if ncols == 2 else None)
    axes = np.atleast_1d(axes)
    sns.lineplot(data=spectrum, x="index", y="sigma_rel", hue="tensor", ax=axes[0], linewidth=1.6)
    axes[0].set(yscale="log", xlabel="singular value index (largest first)", ylabel="sigma / sigma_max",
                title=f"Singular-value spectra, layer {layer}")
    legend_below(axes[0], "tensor", ncol=4)
    if norms is not None:
        row = norms[(norms["layer"] == layer) & (norms["kind"] == "matrix")]
        sns.barplot(data=row, x="tensor", y="frobenius", hue="tensor", ax=axes[1], legend=False)
        axes[1].set(xlabel="", ylabel="Frobenius norm", title=f"Norms, layer {layer}")
        axes[1].tick_params(axis="x", rotation=90)
    return finish_figure(fig, f"Layer {layer}", specimen_name)
