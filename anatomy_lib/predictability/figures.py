"""Chapter 3's figures: R^2 per component against the baselines and nulls, the ridge sweep, one layer's fit."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ..core.style import (
    COLUMN,
    PALETTE,
    PAPER_STYLE,
    SMALL,
    finish_figure,
    legend_below,
    shared_legend,
    use_book_style,
)


def r2_figure(fits, paper_r2: float | None = None, specimen_name: str | None = None, floor: float = -2.0):
    """Mean R^2 per component: ridge in-sample and on held-out layers, beside the two baselines (previous layer,
    mean layer), for the specimen and its two null models. The axis stops at ``floor``; bars below it are drawn
    to the floor."""
    use_book_style()
    fits = fits.copy()
    if "predictor" not in fits:
        fits["predictor"] = "ridge"
    fits["predictor, fit"] = np.where(fits["predictor"] == "ridge",
                                      "ridge, " + fits["fit"].str.replace("out-of-sample", "held-out"),
                                      fits["predictor"] + " (held-out)")
    order = [o for o in ("ridge, in-sample", "ridge, held-out", "previous layer (held-out)", "mean layer (held-out)")
             if o in set(fits["predictor, fit"])]
    models = list(dict.fromkeys(fits["model"]))
    # one panel per model, stacked: seven components times four bars need the column's width
    fig, axes = plt.subplots(len(models), 1, figsize=(COLUMN, 0.6 + 2.3 * len(models)), sharex=True, sharey=True)
    axes = np.atleast_1d(axes)
    for ax, model in zip(axes, models):
        rows = fits[fits["model"] == model]
        sns.barplot(data=rows, x="component", y="r2", hue="predictor, fit", ax=ax, errorbar=None,
                    hue_order=order, palette=sns.color_palette(PALETTE)[:len(order)])
        ax.axhline(0, color="black", linewidth=0.8)
        if paper_r2 is not None:
            ax.axhline(paper_r2, **PAPER_STYLE, label=f"paper: R^2 = {paper_r2} (gate)")
        ax.set(title=model, xlabel="", ylabel="mean R^2", ylim=(floor, 1.15))
    shared_legend(fig, axes, ncol=2, title="mean R^2 over layers")
    return finish_figure(fig, "Predictability of the next layer's weights", specimen_name)


def ridge_sweep_figure(sweep, baselines, specimen_name: str | None = None):
    """Held-out R^2 of ridge (mean over components and layers) against projection size, one line per context,
    with the baselines' levels as horizontal lines ({name: mean held-out R^2})."""
    use_book_style()
    means = sweep.groupby(["context", "proj_dim"], as_index=False)["r2"].mean()
    fig, ax = plt.subplots(figsize=(COLUMN, 4.0))
    sns.lineplot(data=means, x="proj_dim", y="r2", hue="context", style="context", markers=True, dashes=False,
                 palette=sns.color_palette(PALETTE)[:means["context"].nunique()], ax=ax, linewidth=2)
    for (name, value), style in zip(baselines.items(), (":", "--")):
        ax.axhline(value, color="0.3", linestyle=style, linewidth=1.5, label=f"{name}: {value:+.2f}")
    ax.set_xscale("log", base=2)
    ax.set(xlabel="projection size (features per layer, log2)", ylabel="mean held-out R^2",
           title="Ridge on held-out layers, by context and projection size")
    legend_below(ax, "context (layers) / baseline", ncol=3)
    return finish_figure(fig, "", specimen_name)


def prediction_scatter(actual, predicted_out, predicted_in, r2: tuple[float, float], title: str,
                       n_points: int = 4000, seed: int = 0):
    """Predicted against real weights for one layer and component, held-out and in-sample fits side by side;
    ``r2`` holds the two fits' R^2 (held-out, in-sample) as the diagnostic computed them."""
    use_book_style()
    idx = np.random.default_rng(seed).choice(len(actual), size=min(n_points, len(actual)), replace=False)
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN, 3.8), sharex=True, sharey=True)
    for ax, predicted, label, score, colour in zip(axes, (predicted_out, predicted_in),
                                                    ("held-out fit", "in-sample fit"), r2,
                                                    sns.color_palette(PALETTE)[:2]):
        ax.scatter(actual[idx], predicted[idx], s=4, alpha=0.4, color=colour)
        lim = np.abs(actual[idx]).max()
        ax.plot([-lim, lim], [-lim, lim], color="black", linewidth=0.8, linestyle="--", label="perfect prediction")
        ax.set(xlabel="real weight", ylabel="predicted weight", title=f"{label}: R^2 = {score:.2f}")
        ax.set_title(f"{label}: R^2 = {score:.2f}", fontsize=SMALL + 0.5)
    axes[0].legend(loc="upper left")
    return finish_figure(fig, title, None)


def r2_by_layer_figure(fits, component: str, specimen_name: str | None = None):
    """R² of one component's weights across depth on the specimen: ridge held-out and in-sample, and the two
    baselines (previous layer, mean of the other layers), from a chapter-3 ``fits`` table."""
    use_book_style()
    rows = fits[(fits["component"] == component) & (fits["model"] == "specimen")]
    fig, ax = plt.subplots(figsize=(COLUMN, 3.0))
    colours = sns.color_palette(PALETTE)
    for (predictor, fit), label, colour, marker in (
            (("ridge", "out-of-sample"), "ridge, held-out", colours[1], "o"),
            (("ridge", "in-sample"), "ridge, in-sample", colours[0], "s"),
            (("previous layer", "out-of-sample"), "previous layer", colours[2], "^"),
            (("mean layer", "out-of-sample"), "mean layer", colours[3], "D")):
        part = rows[(rows["predictor"] == predictor) & (rows["fit"] == fit)].sort_values("layer")
        ax.plot(part["layer"], part["r2"], marker=marker, color=colour, label=label, linewidth=1.3, markersize=4)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set(xlabel="layer predicted", ylabel="R²", title=f"{component}: R² across depth", ylim=(-2.05, 1.1))
    legend_below(ax, "", ncol=4)
    return finish_figure(fig, "", specimen_name)
