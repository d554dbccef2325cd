"""Figures. Each function takes a result table and returns a matplotlib Figure; none computes anything.

One style for the whole book: seaborn's colour-blind-safe palette, readable font sizes, the specimen named in
every title, the paper's value marked wherever the paper gives one.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

PALETTE = "colorblind"
PAPER_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.2}


def use_book_style() -> None:
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE, font_scale=1.05)
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 110, "figure.autolayout": False,
                         "axes.titleweight": "bold", "axes.titlesize": 12})


def _legend_below(ax, title: str, ncol: int) -> None:
    """Legends go under the axes so they never hide data."""
    handles, labels = ax.get_legend_handles_labels()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    ax.legend(handles, labels, title=title, ncol=ncol, fontsize=9, title_fontsize=9, frameon=False,
              loc="upper center", bbox_to_anchor=(0.5, -0.26))


def _title(fig, text: str, specimen: str | None) -> None:
    fig.suptitle(text if not specimen else f"{text}\nspecimen: {specimen}", fontsize=12, fontweight="bold")


def weight_norms_figure(norms, specimen: str | None = None):
    """Frobenius norm of every matrix across layers (left) and the mean norm gain (right)."""
    use_book_style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.4), gridspec_kw={"width_ratios": [2, 1]})
    matrices = norms[norms["kind"] == "matrix"]
    sns.lineplot(data=matrices, x="layer", y="frobenius", hue="tensor", style="tensor", markers=True,
                 dashes=False, ax=left)
    left.set(xlabel="layer", ylabel="Frobenius norm", title="Weight matrices")
    _legend_below(left, "tensor", ncol=7)
    gains = norms[norms["tensor"].isin(["attn_norm", "mlp_norm"])]
    colours = sns.color_palette(PALETTE)
    sns.lineplot(data=gains, x="layer", y="rms", hue="tensor", style="tensor", markers=True, dashes=False,
                 ax=right, palette=[colours[0], colours[3]])
    right.set(xlabel="layer", ylabel="RMS of the gain vector", title="Norm gains")
    _legend_below(right, "tensor", ncol=2)
    for ax in (left, right):
        ax.set_xticks(range(0, int(norms["layer"].max()) + 1, 2 if norms["layer"].max() > 12 else 1))
        ax.tick_params(axis="x", labelsize=9)
    _title(fig, "Weight norms per layer", specimen)
    fig.tight_layout()
    return fig


def spectra_figure(spectrum, norms=None, specimen: str | None = None):
    """Normalised singular-value spectra of one layer's matrices, with that layer's norms beside them."""
    use_book_style()
    layer = int(spectrum["layer"].iloc[0])
    ncols = 2 if norms is not None else 1
    fig, axes = plt.subplots(1, ncols, figsize=(12 if ncols == 2 else 7, 4.2),
                             gridspec_kw={"width_ratios": [2, 1]} if ncols == 2 else None)
    axes = np.atleast_1d(axes)
    sns.lineplot(data=spectrum, x="index", y="sigma_rel", hue="tensor", ax=axes[0], linewidth=1.6)
    axes[0].set(yscale="log", xlabel="singular value index (largest first)", ylabel="sigma / sigma_max",
                title=f"Singular-value spectra, layer {layer}")
    _legend_below(axes[0], "tensor", ncol=7)
    if norms is not None:
        row = norms[(norms["layer"] == layer) & (norms["kind"] == "matrix")]
        sns.barplot(data=row, x="tensor", y="frobenius", hue="tensor", ax=axes[1], legend=False)
        axes[1].set(xlabel="tensor", ylabel="Frobenius norm", title=f"Norms, layer {layer}")
    _title(fig, f"Layer {layer}", specimen)
    fig.tight_layout()
    return fig
