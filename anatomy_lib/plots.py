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
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE, font_scale=1.15)
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 110, "figure.autolayout": False,
                         "axes.titleweight": "bold", "axes.titlesize": 12})


def _legend_below(ax, title: str, ncol: int) -> None:
    """Legends go under the axes so they never hide data."""
    handles, labels = ax.get_legend_handles_labels()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    ax.legend(handles, labels, title=title or None, ncol=ncol, fontsize=10, title_fontsize=10, frameon=False,
              loc="upper center", bbox_to_anchor=(0.5, -0.26))


def _curve(ax, x, rows, colour, marker, label) -> None:
    """A change-vs-x line with its 95% interval as a band."""
    ax.plot(rows[x], rows["change_pct"], marker=marker, color=colour, label=label, linewidth=1.5)
    ax.fill_between(rows[x], rows["ci_low"], rows["ci_high"], color=colour, alpha=0.18)


def _finish(fig, text: str, specimen: str | None):
    """Title (with the specimen that produced the figure) and layout; returns the figure."""
    _title(fig, text, specimen)
    fig.tight_layout()
    return fig


def _title(fig, text: str, specimen: str | None) -> None:
    lines = [line for line in (text, f"specimen: {specimen}" if specimen else "") if line]
    fig.suptitle("\n".join(lines), fontsize=12, fontweight="bold")


def weight_norms_figure(norms, specimen: str | None = None):
    """Frobenius norm of every matrix across layers (left) and the mean norm gain (right)."""
    use_book_style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.4), gridspec_kw={"width_ratios": [2, 1]})
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
    return _finish(fig, "Weight norms per layer", specimen)


def spectra_figure(spectrum, norms=None, specimen: str | None = None):
    """Normalised singular-value spectra of one layer's matrices, with that layer's norms beside them."""
    use_book_style()
    layer = int(spectrum["layer"].iloc[0])
    ncols = 2 if norms is not None else 1
    fig, axes = plt.subplots(1, ncols, figsize=(10 if ncols == 2 else 7, 4.2),
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
    return _finish(fig, f"Layer {layer}", specimen)


CLASS_ORDER = ("critical core", "input processor", "output processor", "important (middle)",
               "connective tissue", "anti-layer")


def class_colours() -> dict[str, tuple]:
    colours = sns.color_palette(PALETTE)
    return dict(zip(CLASS_ORDER, [colours[3], colours[0], colours[2], colours[4], colours[7], colours[1]]))


def _symlog(ax, threshold: float = 1.0) -> None:
    ax.set_yscale("symlog", linthresh=threshold)
    ax.axhline(0, color="black", linewidth=0.8)


def _paper_index(layers, paper_one_based: bool) -> list[int]:
    return [l - 1 if paper_one_based else l for l in layers]


def anatomy_strip(table, paper: dict | None = None, specimen: str | None = None, paper_one_based: bool = False,
                  connective_pct: float = 30.0):
    """Per-layer perplexity change (symlog) with 95% intervals, bars coloured by anatomy class; the paper's
    critical core shaded, its anti-layers and its L11 value marked."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(10, 5.4))
    colours = class_colours()
    for cls in CLASS_ORDER:
        rows = table[table["class"] == cls]
        if rows.empty:
            continue
        ax.bar(rows["layer"], rows["change_pct"], color=colours[cls], label=cls, edgecolor="black",
               linewidth=0.5, hatch="//" if cls == "anti-layer" else None)
    err = np.vstack([table["change_pct"] - table["ci_low"], table["ci_high"] - table["change_pct"]])
    ax.errorbar(table["layer"], table["change_pct"], yerr=np.clip(err, 0, None), fmt="none", ecolor="black",
                elinewidth=1, capsize=2, label="95% bootstrap interval")
    _symlog(ax)
    ax.axhline(connective_pct, color="grey", linestyle=":", linewidth=1.2, label=f"+{connective_pct:g}% threshold")
    if paper:
        core = _paper_index(paper["critical_core"], paper_one_based)
        ax.axvspan(min(core) - 0.45, max(core) + 0.45, color="grey", alpha=0.15, label="paper: critical core")
        l11 = _paper_index([11], paper_one_based)[0]
        ax.scatter([l11], [paper["l11_change_pct"]], marker="*", s=220, color="black", zorder=5,
                   label=f"paper: L11 = +{paper['l11_change_pct']:,.0f}%")
        anti = _paper_index(paper["anti_layers"], paper_one_based)
        ax.scatter(anti, [-0.5] * len(anti), marker="v", s=90, color="black", zorder=5,
                   label="paper: anti-layers")
        ax.set_ylim(bottom=min(-2.0, float(table["ci_low"].min()) * 1.5))
    ax.set(xlabel="layer (0-based)", ylabel="perplexity change (%), symlog scale",
           title=f"Importance map: {table['mode'].iloc[0]} ablation")
    ax.set_xticks(sorted(table["layer"].unique()))
    ax.tick_params(axis="x", labelsize=9)
    ax.legend(fontsize=9.5, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
    return _finish(fig, "", specimen)


def modes_figure(tables, specimen: str | None = None):
    """Perplexity change per layer for each ablation mode, with 95% interval bands."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(10, 4.8))
    for (mode, rows), colour, marker in zip(tables.groupby("mode", sort=False), sns.color_palette(PALETTE),
                                            "osD^v"):
        _curve(ax, "layer", rows, colour, marker, mode)
    _symlog(ax)
    ax.set(xlabel="layer (0-based)", ylabel="perplexity change (%), symlog", title="Ablation modes compared")
    ax.set_xticks(sorted(tables["layer"].unique()))
    ax.tick_params(axis="x", labelsize=9)
    _legend_below(ax, "mode", ncol=4)
    return _finish(fig, "", specimen)


def influence_figure(table, rho: float, specimen: str | None = None):
    """ShortGPT's Block Influence against the measured perplexity change, one point per layer."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(7.5, 5))
    colours = class_colours()
    for cls, rows in table.groupby("class"):
        ax.scatter(rows["block_influence"], rows["change_pct"], color=colours.get(cls), label=cls, s=45,
                   edgecolor="black", linewidth=0.5)
    for row in table.itertuples():
        ax.annotate(str(row.layer), (row.block_influence, row.change_pct), fontsize=7.5,
                    xytext=(3, 3), textcoords="offset points")
    _symlog(ax)
    ax.set_xscale("log")
    ax.set(xlabel="Block Influence = 1 - cos(input, output)  (log)", ylabel="perplexity change (%), symlog",
           title=f"Block Influence vs ablation ({table['mode'].iloc[0]}); Spearman rho = {rho:.2f}")
    _legend_below(ax, "class", ncol=3)
    return _finish(fig, "", specimen)


def r2_figure(fits, paper_r2: float | None = None, specimen: str | None = None, floor: float = -2.0):
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
    fig, axes = plt.subplots(1, len(models), figsize=(10, 4.6), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, model in zip(axes, models):
        rows = fits[fits["model"] == model]
        sns.barplot(data=rows, x="component", y="r2", hue="predictor, fit", ax=ax, errorbar=None,
                    hue_order=order, palette=sns.color_palette(PALETTE)[:len(order)])
        ax.axhline(0, color="black", linewidth=0.8)
        if paper_r2 is not None:
            ax.axhline(paper_r2, **PAPER_STYLE, label=f"paper: R^2 = {paper_r2} (gate)")
        ax.set(title=model, xlabel="", ylabel="mean R^2 over layers", ylim=(floor, 1.15))
        ax.tick_params(axis="x", labelsize=9, rotation=45)
        ax.get_legend().remove()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, ncol=3, loc="lower center", frameon=False, fontsize=10)
    _title(fig, "Predictability of the next layer's weights", specimen)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    return fig


def ridge_sweep_figure(sweep, baselines, specimen: str | None = None):
    """Held-out R^2 of ridge (mean over components and layers) against projection size, one line per context,
    with the baselines' levels as horizontal lines ({name: mean held-out R^2})."""
    use_book_style()
    means = sweep.groupby(["context", "proj_dim"], as_index=False)["r2"].mean()
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    sns.lineplot(data=means, x="proj_dim", y="r2", hue="context", style="context", markers=True, dashes=False,
                 palette=sns.color_palette(PALETTE)[:means["context"].nunique()], ax=ax, linewidth=2)
    for (name, value), style in zip(baselines.items(), (":", "--")):
        ax.axhline(value, color="0.3", linestyle=style, linewidth=1.5, label=f"{name}: {value:+.2f}")
    ax.set_xscale("log", base=2)
    ax.set(xlabel="projection size (features per layer, log2)", ylabel="mean held-out R^2",
           title="Ridge on held-out layers, by context and projection size")
    ax.legend(title="context (layers) / baseline", fontsize=9, loc="best")
    return _finish(fig, "", specimen)


def delta_correlation_figure(weights, specimen: str | None = None):
    """Lag-k delta correlation per component for the specimen and its nulls, with the analytic values."""
    use_book_style()
    lags = sorted(weights["lag"].unique())
    fig, axes = plt.subplots(1, len(lags), figsize=(10, 4.6), sharey=True)
    axes = np.atleast_1d(axes)
    from .structure import ANALYTIC_NULL as analytic

    for ax, lag in zip(axes, lags):
        rows = weights[weights["lag"] == lag]
        sns.pointplot(data=rows, x="component", y="corr", hue="model", ax=ax, errorbar=("pi", 100),
                      dodge=0.45, linestyle="none", markers=["o", "s", "D"], capsize=0.1)
        ax.axhline(analytic.get(lag, 0.0), color="grey", linestyle=":", linewidth=1.5,
                   label=f"independent layers: {analytic.get(lag, 0.0):+.1f}")
        if lag == 1:
            ax.axhline(-0.5, **{**PAPER_STYLE, "linewidth": 0.8}, label="paper: -0.50")
        ax.set(title=f"lag {lag}: corr(D_l, D_l+{lag})", xlabel="component", ylabel="correlation")
        _legend_below(ax, "", ncol=2)
    return _finish(fig, "Consecutive weight deltas against null models", specimen)


def correlation_map_figure(matrix, title: str, specimen: str | None = None):
    """The map corr(D_i, D_j) over all pairs of deltas, on a diverging colour-blind-safe scale."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 5.4))
    sns.heatmap(matrix, cmap="vlag", vmin=-1, vmax=1, center=0, square=True, ax=ax,
                cbar_kws={"label": "corr(D_i, D_j)"})
    ax.set(xlabel="delta j (between layers j and j+1)", ylabel="delta i", title=title)
    return _finish(fig, "", specimen)


def functional_figure(functional, specimen: str | None = None):
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
    _legend_below(ax, "", ncol=3)
    return _finish(fig, "", specimen)


def prediction_scatter(actual, predicted_out, predicted_in, r2: tuple[float, float], title: str,
                       n_points: int = 4000, seed: int = 0):
    """Predicted against real weights for one layer and component, held-out and in-sample fits side by side;
    ``r2`` holds the two fits' R^2 (held-out, in-sample) as the diagnostic computed them."""
    use_book_style()
    idx = np.random.default_rng(seed).choice(len(actual), size=min(n_points, len(actual)), replace=False)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), sharex=True, sharey=True)
    for ax, predicted, label, score, colour in zip(axes, (predicted_out, predicted_in),
                                                    ("held-out fit", "in-sample fit"), r2,
                                                    sns.color_palette(PALETTE)[:2]):
        ax.scatter(actual[idx], predicted[idx], s=4, alpha=0.4, color=colour)
        lim = np.abs(actual[idx]).max()
        ax.plot([-lim, lim], [-lim, lim], color="black", linewidth=0.8, linestyle="--", label="perfect prediction")
        ax.set(xlabel="real weight", ylabel="predicted weight", title=f"{label}: R^2 = {score:.2f}")
        ax.legend(fontsize=9, loc="upper left")
    fig.suptitle(title, fontsize=12, fontweight="bold")
    fig.tight_layout()
    return fig


def strategy_heatmap_figure(heatmap, specimen: str | None = None):
    """Perplexity change of each strategy (rows) at each single layer (columns), on a log colour scale."""
    from matplotlib.colors import SymLogNorm

    use_book_style()
    table = heatmap.pivot_table(index="label", columns="layers", values="change_pct", sort=False)
    table = table[sorted(table.columns, key=int)]
    fig, ax = plt.subplots(figsize=(1.0 + 0.75 * table.shape[1], 1.4 + 0.55 * table.shape[0]))
    annot = table.map(lambda v: f"{v:+.0f}" if abs(v) < 1e4 else f"{v:+.0e}")
    sns.heatmap(table, annot=annot, fmt="", cmap="cividis", norm=SymLogNorm(linthresh=1, vmin=-10,
                vmax=max(10.0, float(table.max().max()))), ax=ax, annot_kws={"fontsize": 8},
                cbar_kws={"label": "perplexity change (%), symlog"})
    ax.set(xlabel="layer", ylabel="strategy", title="Replacing one layer: perplexity change (%)")
    return _finish(fig, "", specimen)


def knob_figure(sweeps, knob: str, specimen: str | None = None, paper_point: tuple | None = None):
    """Perplexity change against one knob (alpha, t or rank), one line per layer and strategy label."""
    use_book_style()
    rows = sweeps[sweeps["knob"] == knob].copy()
    rows["curve"] = rows["strategy"] + (" / " + rows["scope"]).where(rows["strategy"] == "scale", "") + \
        ", layer " + rows["layers"].astype(str)
    fig, ax = plt.subplots(figsize=(10, 4.8))
    for (curve, group), colour, marker in zip(rows.groupby("curve", sort=False),
                                              sns.color_palette(PALETTE, 10) * 3, "osD^v<>pXh" * 3):
        _curve(ax, "value", group, colour, marker, curve)
    _symlog(ax)
    if knob == "rank":
        ax.set_xscale("log", base=2)
    if paper_point:
        ax.scatter(*paper_point, marker="*", s=220, color="black", zorder=5,
                   label=f"paper: alpha={paper_point[0]}, +{paper_point[1]:g}%")
    ax.set(xlabel=knob, ylabel="perplexity change (%), symlog", title=f"Sweeping {knob} on single layers")
    _legend_below(ax, "", ncol=3)
    return _finish(fig, "", specimen)


def compression_figure(compression, paper_point: tuple, specimen: str | None = None):
    """Scaling all connective layers by alpha: perplexity change (left) and coherence (right)."""
    use_book_style()
    writers = compression["label"].str.endswith("writers)")
    scaled = compression[writers].dropna(subset=["alpha"]).sort_values("alpha")
    intact = compression[compression["strategy"] == "intact"].iloc[0]
    colours = sns.color_palette(PALETTE)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.6))
    _curve(left, "alpha", scaled, colours[0], "o", "scale (writers)")
    left.scatter(*paper_point, marker="*", s=240, color="black", zorder=5,
                 label=f"paper: alpha={paper_point[0]}, +{paper_point[1]:g}%")
    _symlog(left)
    left.set(xlabel="alpha (alpha = 0 removes the layers)", ylabel="perplexity change (%), symlog",
             title="Perplexity")
    _legend_below(left, "", ncol=2)
    if "fact_rate_low" in scaled:
        rate = scaled["fact_rate"]
        right.errorbar(scaled["alpha"], rate, yerr=[rate - scaled["fact_rate_low"], scaled["fact_rate_high"] - rate],
                       marker="o", color=colours[1], capsize=3, label="facts answered correctly (95% interval)")
    else:
        right.plot(scaled["alpha"], scaled["facts_correct"] / scaled["facts_total"], marker="o", color=colours[1],
                   label="facts answered correctly")
    right.plot(scaled["alpha"], scaled["distinct_2"], marker="s", color=colours[2], label="distinct-2")
    right.plot(scaled["alpha"], scaled["repetition_rate"], marker="D", color=colours[3], label="repetition rate")
    right.axhline(intact.facts_correct / intact.facts_total, color=colours[1], linestyle=":", linewidth=1.2,
                  label="intact: facts")
    right.set(xlabel="alpha", ylabel="share", ylim=(-0.05, 1.05), title="Coherence of generation")
    _legend_below(right, "", ncol=2)
    return _finish(fig, "Scaling every connective-tissue layer together", specimen)


def recovery_curves_figure(curves, classes: dict, tolerance: float, specimen: str | None = None):
    """Excess NLL against fine-tuning step, one line per damaged run coloured by its chapter-2 class and marked
    per layer (a second noise seed is drawn fainter), shams in black; the tolerance that counts as recovered is
    shaded."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(10, 5.6))
    colours = class_colours()
    markers = dict(zip(sorted(curves["layer"].unique()), "osD^v<>pXh*P" * 3))
    ax.axhspan(-tolerance, tolerance, color="grey", alpha=0.15, label=f"recovered: within {tolerance:.3f} nats")
    labelled = set()
    for (layer, kind, seed), run in curves.groupby(["layer", "kind", "noise_seed"], sort=True):
        if kind == "sham":
            ax.plot(run["step"], run["excess_nll"], color="black", linestyle="--", linewidth=1.3,
                    marker=markers[layer], label=f"sham (no noise), L{layer}")
            continue
        cls = classes.get(layer, "")
        first = layer not in labelled
        labelled.add(layer)
        ax.plot(run["step"], run["excess_nll"], color=colours.get(cls, "grey"), marker=markers[layer],
                markersize=4.5, linewidth=1.4, alpha=1.0 if first else 0.45,
                label=f"L{layer} ({cls})" if first else None)
    ax.set_xscale("symlog", linthresh=10)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set(xlabel="fine-tuning step (symlog: linear below 10)", ylabel="NLL above baseline (nats)",
           title="Recovery after damage: excess NLL on the evaluation blocks")
    _legend_below(ax, "", ncol=3)
    return _finish(fig, "", specimen)


def recovery_vs_importance_figure(layers, importance_table, budget: int, specimen: str | None = None):
    """Steps to recover (runs that did not recover drawn at the top, as '> budget') and the area under the
    excess-NLL curve, each against the chapter-2 importance of the layer."""
    use_book_style()
    merged = layers.merge(importance_table[["layer", "change_pct", "class"]], on="layer").rename(
        columns={"class": "anatomy"})
    colours = class_colours()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 5.4), sharex=True)
    for row in merged.itertuples():
        colour = colours.get(row.anatomy, "grey")
        steps = row.steps_to_recover if row.recovered else budget * 1.25
        left.scatter(row.change_pct, steps, color=colour, marker="o" if row.recovered else "^", s=60,
                     edgecolor="black", linewidth=0.6)
        right.scatter(row.change_pct, row.area_excess_nll, color=colour, s=60, edgecolor="black", linewidth=0.6)
        for ax, y in ((left, steps), (right, row.area_excess_nll)):
            ax.annotate(f"L{row.layer}", (row.change_pct, y), fontsize=8, xytext=(4, 3), textcoords="offset points")
    left.axhline(budget, **PAPER_STYLE, label=f"budget: {budget} steps (triangles: not recovered)")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("importance (perplexity change, %, log)")
    left.set(ylabel="steps to recover", title="Steps to recover", ylim=(0, budget * 1.35))
    right.set(ylabel="nats x steps", title="Area under the excess-NLL curve")
    _legend_below(left, "", ncol=1)
    handles = [plt.Line2D([], [], marker="o", linestyle="none", color=colours[c], label=c)
               for c in dict.fromkeys(merged["anatomy"])]
    right.legend(handles=handles, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.26), ncol=2,
                 frameon=False)
    return _finish(fig, "Does recovery follow importance?", specimen)


def growth_curves_figure(curves, mean, events, paper_ratio: float | None = None, specimen: str | None = None):
    """Validation loss against training FLOPs (log), one colour per arm: every seed thin, the mean over seeds
    bold; growth events of the first seed marked on the axis."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(10, 5.4))
    arms = list(dict.fromkeys(curves["arm"]))
    colours = dict(zip(arms, sns.color_palette(PALETTE, len(arms))))
    styles = dict(zip(arms, ["-", "--", "-.", ":", "-", "--"]))
    for (arm, seed), run in curves[curves["flops"] > 0].groupby(["arm", "seed"], sort=False):
        ax.plot(run["flops"], run["val_loss"], color=colours[arm], linewidth=0.7, alpha=0.45)
    for arm, run in mean.groupby("arm", sort=False):
        ax.plot(run["flops"], run["val_loss"], color=colours[arm], linewidth=2.4, linestyle=styles[arm],
                label=f"{arm} (mean)")
    if len(events):
        first = events[events["seed"] == events["seed"].min()]
        for event in first.itertuples():
            ax.axvline(event.flops, color=colours.get(event.arm, "grey"), linestyle=":", linewidth=1)
            ax.annotate("grow", (event.flops, 1.0), xycoords=("data", "axes fraction"), fontsize=7.5,
                        color=colours.get(event.arm, "grey"), rotation=90, va="top", ha="right")
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set(xlabel="training FLOPs (log)", ylabel="validation loss (nats per token)",
           title="Every arm on the same FLOP budget (thin: seeds; bold: mean)")
    _legend_below(ax, "", ncol=3)
    return _finish(fig, "", specimen)


def compute_to_target_figure(reach, paper_saving: float | None = None, specimen: str | None = None):
    """Speed-up over uniform in FLOPs to reach each target, per arm, with t-intervals over seeds; arms that did
    not reach a target in every seed are drawn hollow and labelled."""
    use_book_style()
    goals = list(dict.fromkeys(reach["target"]))
    arms = [a for a in dict.fromkeys(reach["arm"]) if a != "uniform"]
    fig, ax = plt.subplots(figsize=(10, 5.4))
    colours = sns.color_palette(PALETTE, len(goals))
    width = 0.8 / len(goals)
    for i, goal in enumerate(goals):
        rows = reach[(reach["target"] == goal)].set_index("arm").reindex(arms)
        x = np.arange(len(arms)) + (i - (len(goals) - 1) / 2) * width
        full = (rows["reached"] == rows["seeds"]).to_numpy()
        err = np.vstack([rows["speedup"] - rows["speedup_low"], rows["speedup_high"] - rows["speedup"]])
        ax.bar(x, rows["speedup"].fillna(0), width, color=[colours[i] if f else "white" for f in full],
               edgecolor=colours[i], linewidth=1.5, label=f"{goal} ({rows['target_loss'].iloc[0]:.2f} nats)",
               yerr=np.nan_to_num(np.clip(err, 0, None)), capsize=3)
        for xi, r in zip(x, rows.itertuples()):
            if r.reached < r.seeds:
                ax.annotate(f"{r.reached}/{r.seeds}", (xi, 0.05), fontsize=7.5, ha="center", rotation=90)
    ax.axhline(1, color="black", linewidth=0.8)
    if paper_saving:
        ax.axhline(1 / (1 - paper_saving), **PAPER_STYLE, label=f"paper: {paper_saving:.0%} cheaper "
                                                                 f"= {1 / (1 - paper_saving):.2f}x")
    ax.set_xticks(np.arange(len(arms)), arms)
    ax.set(ylabel="speed-up (uniform / arm FLOPs)", title="FLOPs to reach the uniform arm's losses (same seed)")
    _legend_below(ax, "target (hollow: not reached by every seed; n/m seeds)", ncol=2)
    return _finish(fig, "", specimen)


def anatomy_comparison_figure(anatomy, specimen: str | None = None):
    """Chapter 2's skip-ablation importance map of trained models side by side (change with 95% interval)."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(10, 5.2))
    for (arm, rows), colour, marker in zip(anatomy.groupby("arm", sort=False), sns.color_palette(PALETTE), "osD^"):
        _curve(ax, "layer", rows, colour, marker, arm)
    _symlog(ax)
    ax.set(xlabel="layer (0-based)", ylabel="change when skipped (%), symlog",
           title="Does an anatomy emerge? Skip ablation of trained 12-layer models")
    ax.set_xticks(sorted(anatomy["layer"].unique()))
    _legend_below(ax, "model", ncol=3)
    return _finish(fig, "", specimen)
