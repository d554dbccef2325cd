"""Chapter 5's figures: the strategy map, the knob curves, the compression experiment."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.colors import SymLogNorm

from ..core.style import COLUMN, PALETTE, SMALL, band_curve, finish_figure, legend_below, symlog_axis, use_book_style


def strategy_heatmap_figure(heatmap, specimen_name: str | None = None):
    """Perplexity change of each strategy (columns) at each single layer (rows), on a log colour scale: layers down
    the page, so that thirty of them fit the column with every cell's number readable."""
    use_book_style()
    table = heatmap.pivot_table(index="layers", columns="label", values="change_pct", sort=False)
    table = table.loc[sorted(table.index, key=int)]
    fig, ax = plt.subplots(figsize=(COLUMN, 1.6 + 0.3 * table.shape[0]))
    annot = table.map(lambda v: f"{v:+.0f}" if abs(v) < 1e4 else f"{v:+.0e}")
    sns.heatmap(table, annot=annot, fmt="", cmap="cividis", norm=SymLogNorm(linthresh=1, vmin=-10,
                vmax=max(10.0, float(table.max().max()))), ax=ax, annot_kws={"fontsize": SMALL - 1},
                cbar_kws={"label": "perplexity change (%), symlog"})
    ax.set(ylabel="layer", xlabel="", title="Replacing one layer: perplexity change (%)")
    ax.tick_params(axis="y", rotation=0)  # layer numbers read across, as everywhere else in the book
    # the colour bar's ticks: -10, 0, 10, then every decade up to the largest change, every other one beyond five
    # (symlog's own ticks put a label at each decade and its minor ticks, which crowd the bar)
    top = int(np.floor(np.log10(max(10.0, float(table.max().max())))))
    decades = list(range(1, top + 1))
    if len(decades) > 5:
        decades = decades[::2] if decades[-1] in decades[::2] else [*decades[::2], decades[-1]]
    colour_bar = ax.collections[0].colorbar
    colour_bar.set_ticks([-10, 0, *[10.0 ** k for k in decades]])
    colour_bar.set_ticklabels([f"{v:+,.0f}" if abs(v) < 1e4 else f"{v:+.0e}".replace("e+0", "e") for v in
                               colour_bar.get_ticks()])
    colour_bar.ax.minorticks_off()
    ax.tick_params(axis="x", rotation=20)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    return finish_figure(fig, "", specimen_name)


def knob_figure(sweeps, knob: str, specimen_name: str | None = None, paper_point: tuple | None = None):
    """Perplexity change against one knob (alpha, t or rank), one line per layer and strategy label."""
    use_book_style()
    rows = sweeps[sweeps["knob"] == knob].copy()
    rows["curve"] = rows["strategy"] + (" / " + rows["scope"]).where(rows["strategy"] == "scale", "") + \
        ", layer " + rows["layers"].astype(str)
    fig, ax = plt.subplots(figsize=(COLUMN, 4.8))
    for (curve, group), colour, marker in zip(rows.groupby("curve", sort=False),
                                              sns.color_palette(PALETTE, 10) * 3, "osD^v<>pXh" * 3):
        band_curve(ax, "value", group, colour, marker, curve)
    symlog_axis(ax)
    if knob == "rank":
        ax.set_xscale("log", base=2)
    if paper_point:
        ax.scatter(*paper_point, marker="*", s=220, color="black", zorder=5,
                   label=f"paper: alpha={paper_point[0]}, +{paper_point[1]:g}%")
    ax.set(xlabel=knob, ylabel="perplexity change (%), symlog", title=f"Sweeping {knob} on single layers")
    legend_below(ax, "", ncol=2)
    return finish_figure(fig, "", specimen_name)


def compression_figure(compression, paper_point: tuple, specimen_name: str | None = None):
    """Scaling all connective layers by alpha: perplexity change (left) and coherence (right)."""
    use_book_style()
    writers = compression["label"].str.endswith("writers)")
    scaled = compression[writers].dropna(subset=["alpha"]).sort_values("alpha")
    intact = compression[compression["strategy"] == "intact"].iloc[0]
    colours = sns.color_palette(PALETTE)
    fig, (left, right) = plt.subplots(1, 2, figsize=(COLUMN, 4.0))
    band_curve(left, "alpha", scaled, colours[0], "o", "scale (writers)")
    left.scatter(*paper_point, marker="*", s=240, color="black", zorder=5,
                 label=f"paper: alpha={paper_point[0]}, +{paper_point[1]:g}%")
    symlog_axis(left)
    left.set(xlabel="alpha (alpha = 0 removes the layers)", ylabel="perplexity change (%), symlog",
             title="Perplexity")
    legend_below(left, "", ncol=1)
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
    legend_below(right, "", ncol=1)
    return finish_figure(fig, "Scaling every connective-tissue layer together", specimen_name)
