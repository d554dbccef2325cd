"""Chapter 2's figures: the importance strip by anatomy class, the modes compared, Block Influence."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ..core.style import (
    COLUMN,
    PALETTE,
    PAPER_STYLE,
    SMALL,
    band_curve,
    figure_title,
    finish_figure,
    label_points,
    layer_ticks,
    legend_below,
    symlog_axis,
    use_book_style,
)

CLASS_ORDER = ("critical core", "input processor", "output processor", "important (middle)",
               "connective tissue", "anti-layer", "undetermined")
CLASS_HATCH = {"anti-layer": "//", "undetermined": ".."}


def class_colours() -> dict[str, tuple]:
    """One colour per anatomy class from the colour-blind palette; "undetermined" is its brown, not its yellow,
    which a line on white hides."""
    colours = sns.color_palette(PALETTE)
    return dict(zip(CLASS_ORDER, [colours[3], colours[0], colours[2], colours[4], colours[7], colours[1],
                                  colours[5]]))


def _paper_index(layers, paper_one_based: bool) -> list[int]:
    return [l - 1 if paper_one_based else l for l in layers]


def anatomy_strip(table, paper: dict | None = None, specimen_name: str | None = None, paper_one_based: bool = False,
                  connective_pct: float = 30.0):
    """Per-layer perplexity change (symlog) with 95% intervals, bars coloured by anatomy class; the paper's
    critical core shaded, its anti-layers and its L11 value marked."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(COLUMN, 5.4))
    colours = class_colours()
    for cls in CLASS_ORDER:
        rows = table[table["class"] == cls]
        if rows.empty:
            continue
        ax.bar(rows["layer"], rows["change_pct"], color=colours[cls], label=cls, edgecolor="black",
               linewidth=0.5, hatch=CLASS_HATCH.get(cls))
    err = np.vstack([table["change_pct"] - table["ci_low"], table["ci_high"] - table["change_pct"]])
    ax.errorbar(table["layer"], table["change_pct"], yerr=np.clip(err, 0, None), fmt="none", ecolor="black",
                elinewidth=1, capsize=2, label="95% bootstrap interval")
    symlog_axis(ax)
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
    layer_ticks(ax, table["layer"].unique())
    legend_below(ax, "", ncol=2)
    return finish_figure(fig, "", specimen_name)


def modes_figure(tables, specimen_name: str | None = None):
    """Perplexity change per layer for each ablation mode, with 95% interval bands."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(COLUMN, 4.8))
    for (mode, rows), colour, marker in zip(tables.groupby("mode", sort=False), sns.color_palette(PALETTE),
                                            "osD^v"):
        band_curve(ax, "layer", rows, colour, marker, mode)
    symlog_axis(ax)
    ax.set(xlabel="layer (0-based)", ylabel="perplexity change (%), symlog", title="Ablation modes compared")
    layer_ticks(ax, tables["layer"].unique())
    legend_below(ax, "mode", ncol=3)
    return finish_figure(fig, "", specimen_name)


def influence_figure(table, rho: float, specimen_name: str | None = None):
    """ShortGPT's Block Influence against the measured perplexity change, one point per layer."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(COLUMN, 4.6))
    colours = class_colours()
    for cls, rows in table.groupby("class"):
        ax.scatter(rows["block_influence"], rows["change_pct"], color=colours.get(cls), label=cls, s=45,
                   edgecolor="black", linewidth=0.5)
    symlog_axis(ax)
    ax.set_xscale("log")
    ax.set(xlabel="Block Influence = 1 - cos(input, output)  (log)", ylabel="perplexity change (%), symlog",
           title=f"Block Influence vs ablation ({table['mode'].iloc[0]}); Spearman rho = {rho:.2f}")
    # the most important layers are labelled first, so a crowded corner drops the labels that matter least
    ranked = table.sort_values("change_pct", ascending=False)
    label_points(ax, ranked["block_influence"], ranked["change_pct"], [f"L{layer}" for layer in ranked["layer"]])
    legend_below(ax, "class", ncol=2)
    return finish_figure(fig, "", specimen_name)


def operators_figure(tables_by_specimen: dict, paper_l11_depth: float = 11 / 29):
    """Importance under every operator, one panel per specimen ({specimen: {operator: importance table}}): a
    strip per operator, each cell a layer coloured by log10 of its perplexity change (a change at or below
    +0.01% at the floor), a triangle where the whole interval lies below zero (an anti-layer), the paper's
    L11 depth dashed."""
    use_book_style()
    names = list(tables_by_specimen)
    strips = sum(len(tables) for tables in tables_by_specimen.values())
    fig, axes = plt.subplots(len(names), 1, figsize=(COLUMN, 1.6 + 0.42 * strips + 0.9 * len(names)),
                             squeeze=False)
    image = None
    for ax, name in zip(axes[:, 0], names):
        tables = tables_by_specimen[name]
        operators = list(tables)
        n_layers = len(next(iter(tables.values())))
        grid = np.full((len(operators), n_layers), np.nan)
        for row, operator in enumerate(operators):
            table = tables[operator].sort_values("layer")
            grid[row] = np.log10(np.clip(table["change_pct"].to_numpy(), 1e-2, None))
            anti = table.loc[table["ci_high"] < 0, "layer"]
            ax.scatter(anti, [row] * len(anti), marker="v", s=40, color="white", edgecolor="black", zorder=3)
        image = ax.imshow(grid, aspect="auto", cmap="viridis", vmin=-2, vmax=8, interpolation="nearest")
        ax.axvline(paper_l11_depth * (n_layers - 1), **PAPER_STYLE)
        ax.set_yticks(range(len(operators)), operators, fontsize=SMALL)
        layer_ticks(ax, range(n_layers))
        ax.grid(False)
        ax.set_xlabel("layer", fontsize=SMALL)
        ax.set_title(name, fontsize=SMALL + 1)
    # room at the left for the operators' names, inside the column
    fig.subplots_adjust(hspace=0.55, left=0.22, right=0.98)
    colourbar = fig.colorbar(image, ax=axes[:, 0].tolist(), orientation="horizontal", fraction=0.05, pad=0.12,
                             aspect=40)
    colourbar.set_label("log10 perplexity change (%); white triangle: interval below zero")
    figure_title(fig, "Importance under every ablation operator\n(dashed: the paper's L11 at the same relative depth)",
                 None)
    return fig


def activations_figure(rows, tops=None, ratio: float = 1000.0, births: dict | None = None):
    """Massive activations along the depth: for every specimen (``stacked_layers`` rows), the largest absolute
    activation leaving each layer over the stream's median (log scale) against relative depth; a large marker at
    the layer where the massive activation is born (``births``: {specimen: layer}, from ``massive.onset_by_growth``;
    for a specimen without one, where the threshold detector first finds a massive entry), a cross at each
    specimen's most important layer (``tops``: rows with ``specimen`` and ``top_layer``, from
    ``correlation_table`` for one operator), Sun et al.'s ratio dotted."""
    births = births or {}
    use_book_style()
    fig, ax = plt.subplots(figsize=(COLUMN, 4.2))
    colours = sns.color_palette(PALETTE)
    markers = ("o", "s", "^", "D", "v", "P")
    for i, (name, part) in enumerate(rows.groupby("specimen", sort=False)):
        colour, marker = colours[i % len(colours)], markers[i % len(markers)]
        ax.plot(part["depth"], part["ratio"], marker=marker, color=colour, label=name, linewidth=1.4, markersize=5,
                markerfacecolor="white")
        massive = part[part["massive_entries"] > 0]
        if name in births:
            born = part[part["layer"] == births[name]].iloc[0]
            ax.plot(born["depth"], born["ratio"], marker=marker, color=colour, markersize=11, linestyle="none",
                    label=f"{name}: born at L{int(born['layer'])} (largest jump)")
        elif len(massive):
            first = massive.iloc[0]
            ax.plot(first["depth"], first["ratio"], marker=marker, color=colour, markersize=11, linestyle="none",
                    label=f"{name}: massive from L{int(first['layer'])}")
        if tops is not None:
            for top in tops.loc[tops["specimen"] == name, "top_layer"]:
                at = part.loc[part["layer"] == top].iloc[0]
                ax.plot(at["depth"], at["ratio"], marker="X", color="black", markersize=9, linestyle="none",
                        label="most important layer (the paper's ablation)")
    ax.axhline(ratio, color="grey", linestyle=":", linewidth=1.2, label=f"massive: {ratio:,.0f} x the median")
    ax.set(yscale="log", xlabel="relative depth (0: first layer, 1: last)",
           ylabel="largest |activation| / median")
    legend_below(ax, "", ncol=1)
    return finish_figure(fig, "Massive activations along the depth", None)


INTERVENTION_LABELS = {"ablate": "ablated", "ablate + restore": "ablated, massive entries restored",
                       "remove write": "intact, massive write removed"}


def massive_causal_figure(causal: dict):
    """The causal test of the massive activation (``massive.causal_test`` per specimen): one panel per specimen,
    a group of bars per layer (birth, control) and operator, the damage in log perplexity (mean NLL over the
    intact model's, symlog) of the plain ablation, the ablation with the massive entries restored, and the intact
    layer with only its massive write removed, each with its 95% interval."""
    use_book_style()
    names = list(causal)
    fig, axes = plt.subplots(len(names), 1, figsize=(COLUMN, 3.4 * len(names)), squeeze=False)
    colours = sns.color_palette(PALETTE)
    order = list(INTERVENTION_LABELS)
    width = 0.8 / len(order)
    for ax, name in zip(axes[:, 0], names):
        rows = causal[name]["causal"]
        groups = list(dict.fromkeys(zip(rows["role"], rows["layer"], rows["operator"])))
        for i, intervention in enumerate(order):
            for g, (role, layer, operator) in enumerate(groups):
                row = rows[(rows["role"] == role) & (rows["layer"] == layer) & (rows["operator"] == operator)
                           & (rows["intervention"] == intervention)].iloc[0]
                nll = np.log1p(np.array([row.change_pct, row.ci_low, row.ci_high]) / 100)
                x = g + (i - (len(order) - 1) / 2) * width
                ax.bar(x, nll[0], width, color=colours[i], label=INTERVENTION_LABELS[intervention],
                       yerr=[[nll[0] - nll[1]], [nll[2] - nll[0]]], capsize=2, error_kw={"linewidth": 0.9})
        lowest = np.log1p(rows["ci_low"].to_numpy() / 100).min()
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([f"{role} L{layer}\n{operator}" for role, layer, operator in groups], fontsize=SMALL)
        symlog_axis(ax, 0.01)
        if lowest > -0.01:  # nothing below the linear part: no empty decades under zero
            ax.set_ylim(bottom=min(lowest, 0.0) - 0.002)
        ax.set(ylabel="damage (log perplexity)", title=name)
    legend_below(axes[-1, 0], "", ncol=1)
    return finish_figure(fig, "Is the critical layer critical because of its massive activation?", None)
