"""The figure style of the whole book, and the small drawing helpers every chapter's figures share.

Seaborn's colour-blind-safe palette, the specimen named in every title, the paper's value drawn in one style
(``PAPER_STYLE``) wherever the paper gives one, legends under the axes so they never hide data.

Figures are drawn for the book's content column: at a 1280 px window Jupyter Book's column is 688 px wide, so a
figure is ``COLUMN`` inches wide at ``DPI`` (660 px) and shows at its natural size, and no text is smaller than
``SMALL`` points (14.6 px at ``DPI``: the size of the body's small type, 14.4 px).
"""
from __future__ import annotations

import logging
import math
import os

import matplotlib.pyplot as plt
import seaborn as sns
from matplotlib.transforms import Bbox

PALETTE = "colorblind"
PAPER_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.2}
DPI = 100
COLUMN = 6.6  # inches: 660 px at DPI, inside the 688 px content column with room for a tight bounding box
SMALL = 10.5  # points: the smallest text in a figure (ticks, annotations, legends)
CONTENT_PX = 688  # the content column at a 1280 px window: a wider figure is shown scaled down to it
MIN_TEXT_PX = 11  # the smallest text a reader is asked to read, as displayed (the browser test's rule for tables)
STRICT_ENV = "ANATOMY_STRICT_FIGURES"  # set (the chapter tests do): a figure with a layout problem raises


class FigureLayoutError(ValueError):
    """A figure a reader could not read: tick labels that run together, or text too small once displayed."""


def layout_problems(fig) -> list[str]:
    """What a reader would trip on in a drawn figure: neighbouring tick labels of an axis whose boxes overlap
    ("100x10³x"), and text smaller than ``MIN_TEXT_PX`` as displayed (its size in points at ``DPI``, times the
    scale at which a figure wider than the column is shown). Empty for a readable figure."""
    renderer = fig.canvas.get_renderer()
    scale = min(1.0, CONTENT_PX / fig.bbox.width)
    problems = []
    for number, ax in enumerate(fig.axes):
        for axis, labels in (("x", ax.get_xticklabels()), ("y", ax.get_yticklabels())):
            shown = [t for t in labels if t.get_visible() and t.get_text().strip()]
            boxes = sorted(((t.get_window_extent(renderer), t) for t in shown),
                           key=lambda b: b[0].x0 if axis == "x" else b[0].y0)
            for (one, a), (two, b) in zip(boxes, boxes[1:]):
                slant = abs(math.sin(math.radians(a.get_rotation()))) if axis == "x" else 0.0
                if slant > 0.3:
                    # rotated labels are parallel lines: they collide when the gap between their anchors,
                    # measured across the text, is under a line's height (their boxes overlap long before)
                    anchors = [t.get_transform().transform(t.get_position())[0] for t in (a, b)]
                    gap = abs(anchors[1] - anchors[0]) * slant
                    clash = gap < a.get_fontsize() * fig.dpi / 72 * 0.9
                else:
                    clash = one.overlaps(two)
                if clash:
                    problems.append(f"panel {number + 1}: {axis} tick labels {a.get_text()!r} and "
                                    f"{b.get_text()!r} overlap")
    for text in fig.findobj(lambda artist: hasattr(artist, "get_fontsize") and hasattr(artist, "get_text")):
        if not text.get_visible() or not str(text.get_text()).strip():
            continue
        shown_px = text.get_fontsize() * fig.dpi / 72 * scale
        if shown_px < MIN_TEXT_PX - 0.05:
            problems.append(f"text {str(text.get_text())[:40]!r} shows at {shown_px:.1f} px (< {MIN_TEXT_PX})")
    return problems


def check_layout(fig) -> None:
    """Raise ``FigureLayoutError`` on any ``layout_problems`` where ``ANATOMY_STRICT_FIGURES`` is set (the chapter
    tests); elsewhere a figure is shown as drawn."""
    if os.environ.get(STRICT_ENV):
        problems = layout_problems(fig)
        if problems:
            title = fig._suptitle.get_text().splitlines()[0] if fig._suptitle else "a figure"
            raise FigureLayoutError(f"{title}: " + "; ".join(problems[:4]))


def use_book_style() -> None:
    # log and symlog tick labels are mathtext; where matplotlib's own TeX fonts are not installed it falls back
    # to DejaVu Sans (what the book wants) and says so once per font, which a page would show as stderr
    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE)
    plt.rcParams.update({"figure.dpi": DPI, "savefig.dpi": DPI, "figure.autolayout": False,
                         "axes.titleweight": "bold", "axes.titlesize": 12, "axes.labelsize": 11.5,
                         "xtick.labelsize": 11, "ytick.labelsize": 11, "legend.fontsize": SMALL,
                         "legend.title_fontsize": SMALL, "font.size": 11})


def legend_below(ax, title: str, ncol: int, handles: list | None = None) -> None:
    """Legends go under the axes so they never hide data. Left out of the layout (which would squeeze the axes
    to make room) and put under the axes' tick labels by ``place_legends``; the saved image grows to hold it.
    ``handles``: proxy artists with labels, instead of what the axes drew."""
    pairs = [(h.get_label(), h) for h in handles] if handles else zip(*reversed(ax.get_legend_handles_labels()))
    handles = dict(pairs)  # a label drawn twice is listed once
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    legend = ax.legend(list(handles.values()), list(handles), title=title or None, ncol=ncol, frameon=False,
                       loc="upper center", bbox_to_anchor=(0.5, -0.22))
    legend.set_in_layout(False)


def shared_legend(fig, axes, ncol: int, title: str = "") -> None:
    """One legend for several panels, under all of them (labels deduplicated, the panels' own legends removed),
    placed by ``place_legends``."""
    handles = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if not label.startswith("_"):
                handles.setdefault(label, handle)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    legend = fig.legend(list(handles.values()), list(handles), title=title or None, ncol=ncol, frameon=False,
                        loc="upper center", bbox_to_anchor=(0.5, 0.0))
    legend.set_in_layout(False)


def place_legends(fig, gap_px: float = 6.0) -> None:
    """After the layout: point labels (``label_points``) are placed, and every legend left out of the layout sits
    ``gap_px`` under what it belongs to (an axes' legend under that axes' tick labels and x label, a figure's
    legend under the lowest axes), then counts again for the saved image's tight bounding box, which would
    otherwise cut it off."""
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        _place_labels(ax, renderer)
    lowest = None
    for ax in fig.axes:
        box = ax.get_tightbbox(renderer)
        if box is None:
            continue
        lowest = box.y0 if lowest is None else min(lowest, box.y0)
        legend = ax.get_legend()
        if legend is not None and not legend.get_in_layout():
            x = ax.transAxes.inverted().transform((0.0, box.y0 - gap_px))
            legend.set_bbox_to_anchor((0.5, x[1]), transform=ax.transAxes)
            legend.set_in_layout(True)
    for legend in fig.legends:
        if not legend.get_in_layout() and lowest is not None:
            legend.set_bbox_to_anchor((0.5, (lowest - gap_px) / fig.bbox.height), transform=fig.transFigure)
            legend.set_in_layout(True)


def layer_ticks(ax, layers, share: float = 1.0, axis: str = "x") -> None:
    """Ticks at layers, thinned (every 2nd, 5th or 10th) so labels never collide on an axis ``share`` of the
    column wide."""
    layers = sorted(int(layer) for layer in layers)
    # two-digit labels at 11 pt need about 20 px each plus a gap, and an axes gets at most ~85% of its share of
    # the 660 px column after its y label and margins: 20 labels per full column (layout_problems checks)
    room = max(int(20 * share), 4)
    step = next((s for s in (1, 2, 5, 10, 20) if len(layers) / s <= room), 50)
    ticks = [layer for layer in layers if layer % step == 0]
    (ax.set_xticks if axis == "x" else ax.set_yticks)(ticks)


def band_curve(ax, x, rows, colour, marker, label) -> None:
    """A change-vs-x line with its 95% interval as a band."""
    ax.plot(rows[x], rows["change_pct"], marker=marker, color=colour, label=label, linewidth=1.5)
    ax.fill_between(rows[x], rows["ci_low"], rows["ci_high"], color=colour, alpha=0.18)


def finish_figure(fig, text: str, specimen_name: str | None):
    """Title (with the name of the specimen that produced the figure) and layout; returns the figure."""
    figure_title(fig, text, specimen_name)
    fig.tight_layout()
    place_legends(fig)
    check_layout(fig)
    return fig


def figure_title(fig, text: str, specimen_name: str | None) -> None:
    lines = [line for line in (text, f"specimen: {specimen_name}" if specimen_name else "") if line]
    fig.suptitle("\n".join(lines), fontsize=12.5, fontweight="bold")


def symlog_axis(ax, threshold: float = 1.0) -> None:
    ax.set_yscale("symlog", linthresh=threshold)
    ax.axhline(0, color="black", linewidth=0.8)


def label_points(ax, xs, ys, labels) -> None:
    """Label scatter points without collisions, in the order given (most important first): the labels are
    placed after the figure's layout (``place_legends``), each trying four spots around its point and left out
    when all four overlap a label already placed or another labelled point; every point keeps its marker."""
    pending = getattr(ax, "_anatomy_labels", [])
    pending.extend(zip(xs, ys, labels))
    ax._anatomy_labels = pending


def _place_labels(ax, renderer) -> None:
    pending = getattr(ax, "_anatomy_labels", [])
    # every labelled point's marker counts as taken, so a label never sits on a neighbour's point
    points = [Bbox.from_bounds(px - 4, py - 4, 8, 8) if math.isfinite(px) and math.isfinite(py) else None
              for px, py in (ax.transData.transform((x, y)) for x, y, _ in pending)]
    placed = []
    for i, (x, y, text) in enumerate(pending):
        others = [box for j, box in enumerate(points) if j != i and box is not None]
        for dx, dy in ((4, 3), (4, -12), (-6, 3), (-6, -12)):
            note = ax.annotate(str(text), (x, y), fontsize=SMALL, xytext=(dx, dy), textcoords="offset points",
                               ha="left" if dx > 0 else "right")
            box = note.get_window_extent(renderer).expanded(1.05, 1.1)
            if not any(box.overlaps(other) for other in placed + others):
                placed.append(box)
                break
            note.remove()
    ax._anatomy_labels = []
