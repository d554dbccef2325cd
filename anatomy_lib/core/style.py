"""The figure style of the whole book, and the small drawing helpers every chapter's figures share.

Seaborn's colour-blind-safe palette, readable font sizes, the specimen named in every title, the paper's value
drawn in one style (``PAPER_STYLE``) wherever the paper gives one, legends under the axes so they never hide data.
"""
from __future__ import annotations

import logging

import matplotlib.pyplot as plt
import seaborn as sns

PALETTE = "colorblind"
PAPER_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.2}


def use_book_style() -> None:
    # log and symlog tick labels are mathtext; where matplotlib's own TeX fonts are not installed it falls back
    # to DejaVu Sans (what the book wants) and says so once per font, which a page would show as stderr
    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE, font_scale=1.15)
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 110, "figure.autolayout": False,
                         "axes.titleweight": "bold", "axes.titlesize": 12})


def legend_below(ax, title: str, ncol: int) -> None:
    """Legends go under the axes so they never hide data."""
    handles, labels = ax.get_legend_handles_labels()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    ax.legend(handles, labels, title=title or None, ncol=ncol, fontsize=10, title_fontsize=10, frameon=False,
              loc="upper center", bbox_to_anchor=(0.5, -0.26))


def band_curve(ax, x, rows, colour, marker, label) -> None:
    """A change-vs-x line with its 95% interval as a band."""
    ax.plot(rows[x], rows["change_pct"], marker=marker, color=colour, label=label, linewidth=1.5)
    ax.fill_between(rows[x], rows["ci_low"], rows["ci_high"], color=colour, alpha=0.18)


def finish_figure(fig, text: str, specimen_name: str | None):
    """Title (with the name of the specimen that produced the figure) and layout; returns the figure."""
    figure_title(fig, text, specimen_name)
    fig.tight_layout()
    return fig


def figure_title(fig, text: str, specimen_name: str | None) -> None:
    lines = [line for line in (text, f"specimen: {specimen_name}" if specimen_name else "") if line]
    fig.suptitle("\n".join(lines), fontsize=12, fontweight="bold")


def symlog_axis(ax, threshold: float = 1.0) -> None:
    ax.set_yscale("symlog", linthresh=threshold)
    ax.axhline(0, color="black", linewidth=0.8)
