"""Chapter 4's figures: delta correlations against their nulls, the correlation map, the functional view."""
from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

from ..core.style import (
    COLUMN,
    PALETTE,
    PAPER_STYLE,
    finish_figure,
    layer_ticks,
    legend_below,
    shared_legend,
    use_book_style,
)
from ..core.weightspace import ANALYTIC_NULL as analytic


def delta_correlation_figure(weights, specimen_name: str | None = None):
    """Lag-k delta correlation per component for the specimen and its nulls (dot: mean over layers; bar: their
    range), with the value independent layers give analytically. Lag 1 gets the full width (the paper's -0.5 is
    a lag-1 claim); the other lags sit under it, each on its own scale, since they live a hundred times closer
    to zero."""
    use_book_style()
    lags = sorted(weights["lag"].unique())
    others = [lag for lag in lags if lag != lags[0]]
    fig = plt.figure(figsize=(COLUMN, 6.4 if others else 3.6))
    grid = fig.add_gridspec(2 if others else 1, max(len(others), 1), height_ratios=[1.25, 1] if others else None)
    axes = [fig.add_subplot(grid[0, :])] + [fig.add_subplot(grid[1, i]) for i in range(len(others))]
    models = list(dict.fromkeys(weights["model"]))
    for ax, lag in zip(axes, lags):
        rows = weights[weights["lag"] == lag]
        sns.pointplot(data=rows, x="component", y="corr", hue="model", hue_order=models, ax=ax,
                      errorbar=("pi", 100), dodge=0.45, linestyle="none", markers=["o", "s", "D"][:len(models)],
                      capsize=0.1, palette=sns.color_palette(PALETTE)[:len(models)])
        ax.axhline(analytic.get(lag, 0.0), color="grey", linestyle=":", linewidth=1.5,
                   label="independent layers (analytic)")
        if lag == 1:
            ax.axhline(-0.5, **{**PAPER_STYLE, "linewidth": 0.8}, label="paper: -0.50 (lag 1)")
        ax.set(title=f"lag {lag}: corr(D_l, D_l+{lag})", xlabel="", ylabel="correlation" if ax is axes[0] or
               ax is axes[1] else "")
    shared_legend(fig, axes, ncol=3, title="dot: mean over layers; bar: range over layers")
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
    fig, ax = plt.subplots(figsize=(COLUMN, 4.2))
    colours = sns.color_palette(PALETTE)
    ax.plot(functional["layer"], functional["corr"], marker="o", color=colours[0],
            label="corr(u_l, u_l+1) over tokens and dims")
    ax.plot(functional["layer"], functional["mean_token_cosine"], marker="s", color=colours[1],
            label="mean per-token cosine(u_l, u_l+1)")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.axhline(-0.5, **PAPER_STYLE, label="the paper's -0.5 (for weights)")
    ax.set(xlabel="layer l", ylabel="correlation", title="Do consecutive layers undo each other's updates?")
    layer_ticks(ax, functional["layer"])
    legend_below(ax, "", ncol=2)
    return finish_figure(fig, "", specimen_name)
