"""Chapter 4's figures: delta correlations against their nulls, the correlation map, the functional view."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ..core.style import PALETTE, PAPER_STYLE, finish_figure, legend_below, use_book_style
from .compute import ANALYTIC_NULL as analytic


def delta_correlation_figure(weights, specimen_name: str | None = None):
    """Lag-k delta correlation per component for the specimen and its nulls, with the analytic values."""
    use_book_style()
    lags = sorted(weights["lag"].unique())
    fig, axes = plt.subplots(1, len(lags), figsize=(10, 4.6), sharey=True)
    axes = np.atleast_1d(axes)

    for ax, lag in zip(axes, lags):
        rows = weights[weights["lag"] == lag]
        sns.pointplot(data=rows, x="component", y="corr", hue="model", ax=ax, errorbar=("pi", 100),
                      dodge=0.45, linestyle="none", markers=["o", "s", "D"], capsize=0.1)
        ax.axhline(analytic.get(lag, 0.0), color="grey", linestyle=":", linewidth=1.5,
                   label=f"independent layers: {analytic.get(lag, 0.0):+.1f}")
        if lag == 1:
            ax.axhline(-0.5, **{**PAPER_STYLE, "linewidth": 0.8}, label="paper: -0.50")
        ax.set(title=f"lag {lag}: corr(D_l, D_l+{lag})", xlabel="component", ylabel="correlation")
        legend_below(ax, "", ncol=2)
    return finish_figure(fig, "Consecutive weight deltas against null models", specimen_name)


def correlation_map_figure(matrix, title: str, specimen_name: str | None = None):
    """The map corr(D_i, D_j) over all pairs of deltas, on a diverging colour-blind-safe scale."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 5.4))
    sns.heatmap(matrix, cmap="vlag", vmin=-1, vmax=1, center=0, square=True, ax=ax,
                cbar_kws={"label": "corr(D_i, D_j)"})
    ax.set(xlabel="delta j (between layers j and j+1)", ylabel="delta i", title=title)
    return finish_figure(fig, "", specimen_name)


def functional_figure(functional, specimen_name: str | None = None):
    """Correlation of consecutive layers' updates to the residual stream, per layer."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(10, 4.2))
    colours = sns.color_palette(PALETTE)
    ax.plot(functional["layer"], functional["corr"], marker="o", color=colours[0],
            label="corr(u_l, u_l+1) over tokens and dims")
    ax.plot(functional["layer"], functional["mean_token_cosine"], marker="s", color=colours[1],
            label="mean per-token cosine(u_l, u_l+1)")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.axhline(-0.5, **PAPER_STYLE, label="the paper's -0.5 (for weights)")
    ax.set(xlabel="layer l", ylabel="correlation", title="Do consecutive layers undo each other's updates?")
    ax.set_xticks(functional["layer"])
    legend_below(ax, "", ncol=3)
    return finish_figure(fig, "", specimen_name)
