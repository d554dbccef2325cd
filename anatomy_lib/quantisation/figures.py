"""The quantisation null's figure: each statistic's change under each scheme, per kind of model."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ..core.style import COLUMN, PALETTE, finish_figure, legend_below, use_book_style

MARKERS = ("o", "s", "^", "D")


def deltas_figure(table, chapter: int):
    """One row per statistic of ``chapter`` (a ``deltas`` table): the change quantisation causes, a dot per kind of
    model and scheme with its 95% interval over layers; zero (no change) solid."""
    use_book_style()
    rows = table[table["chapter"] == chapter]
    statistics = list(dict.fromkeys(rows["statistic"]))
    arms = list(dict.fromkeys(rows["arm"]))
    schemes = list(dict.fromkeys(rows["scheme"]))
    colours = sns.color_palette(PALETTE)
    fig, ax = plt.subplots(figsize=(COLUMN, 1.2 + 0.75 * len(statistics)))
    slots = len(arms) * len(schemes)
    for i, row in enumerate(rows.itertuples()):
        slot = arms.index(row.arm) * len(schemes) + schemes.index(row.scheme)
        y = statistics.index(row.statistic) + (slot - (slots - 1) / 2) * 0.7 / max(slots, 1)
        colour, marker = colours[schemes.index(row.scheme)], MARKERS[arms.index(row.arm) % len(MARKERS)]
        ax.errorbar(row.change, y, xerr=[[row.change - row.ci_low], [row.ci_high - row.change]], fmt=marker,
                    color=colour, markersize=6, capsize=2, label=f"{row.scheme}, {row.arm}")
    ax.axvline(0, color="black", linewidth=1)
    ax.set_yticks(np.arange(len(statistics)), statistics)
    ax.invert_yaxis()
    ax.set_xlabel("change under quantisation (quantised - fp32),\nmean over layers")
    legend_below(ax, "", ncol=2)
    return finish_figure(fig, f"What 4-bit rounding does to chapter {chapter}'s statistics", None)
