"""Chapter 6's figures: recovery curves, and recovery against importance."""
from __future__ import annotations

import matplotlib.pyplot as plt

from ..core.style import COLUMN, PAPER_STYLE, finish_figure, label_points, legend_below, use_book_style
from ..importance.figures import class_colours
from .analysis import at_sigma


def recovery_curves_figure(curves, classes: dict, tolerance: float | None = None, specimen_name: str | None = None,
                           judged=None):
    """Excess NLL against fine-tuning step, one line per damaged run coloured by its chapter-2 class and marked
    per layer (a second noise seed is drawn fainter; a fixed-noise run dotted, labelled with its sigma), the
    sham of each layer in black, dashed: the gap between a damaged run and its sham is what recovery is judged
    on. ``judged`` (``analysis.judged_runs``) marks where each run counts as recovered; ``tolerance`` shades the
    older unpaired band."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(COLUMN, 4.6))
    colours = class_colours()
    markers = dict(zip(sorted(curves["layer"].unique()), "osD^v<>pXh*P" * 3))
    if tolerance is not None:
        ax.axhspan(-tolerance, tolerance, color="grey", alpha=0.15, label=f"within {tolerance:.3f} nats (unpaired)")
    labelled = set()
    protocol = curves["protocol"] if "protocol" in curves else "matched"
    marked = False
    for (layer, kind, how, seed, sigma), run in curves.assign(protocol=protocol).groupby(
            ["layer", "kind", "protocol", "noise_seed", "sigma"], sort=True):
        if kind == "sham":
            ax.plot(run["step"], run["excess_nll"], color="black", linestyle="--", linewidth=1.3,
                    marker=markers[layer], label=f"sham of L{layer} (no noise)")
            continue
        cls = classes.get(layer, "")
        key = (layer, how)
        first = key not in labelled
        labelled.add(key)
        name = f"L{layer} ({cls})" + (f", fixed sigma {sigma:g}" if how == "fixed" else "")
        ax.plot(run["step"], run["excess_nll"], color=colours.get(cls, "grey"), marker=markers[layer],
                markersize=4.5, linewidth=1.4, alpha=1.0 if first else 0.45,
                linestyle=":" if how == "fixed" else "-", label=name if first else None)
        if judged is not None:
            hit = judged[(judged["layer"] == layer) & (judged["protocol"] == how) & (judged["noise_seed"] == seed)
                         & at_sigma(judged, sigma) & judged["recovered"]]
            if len(hit):
                step = hit["steps_to_recover"].iloc[0]
                y = run.loc[run["step"] == step, "excess_nll"]
                ax.scatter([step], y, marker="*", s=160, color="black", zorder=5,
                           label=f"recovered ({hit['criterion'].iloc[0]})" if not marked else None)
                marked = True
    ax.set_xscale("symlog", linthresh=10)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set(xlabel="fine-tuning step (symlog: linear below 10)", ylabel="NLL above baseline (nats)",
           title="Recovery after damage:\nexcess NLL on the evaluation blocks")
    legend_below(ax, "", ncol=2)
    return finish_figure(fig, "", specimen_name)


def recovery_vs_importance_figure(layers, importance_table, budget: int, specimen_name: str | None = None):
    """Steps to recover (runs that did not recover drawn at the top, as '> budget') and the area under the
    excess-NLL curve, each against the chapter-2 importance of the layer."""
    use_book_style()
    merged = layers.merge(importance_table[["layer", "change_pct", "class"]], on="layer").rename(
        columns={"class": "anatomy"})
    colours = class_colours()
    fig, (left, right) = plt.subplots(1, 2, figsize=(COLUMN, 4.2), sharex=True)
    for row in merged.itertuples():
        colour = colours.get(row.anatomy, "grey")
        steps = row.steps_to_recover if row.recovered else budget * 1.25
        left.scatter(row.change_pct, steps, color=colour, marker="o" if row.recovered else "^", s=60,
                     edgecolor="black", linewidth=0.6)
        right.scatter(row.change_pct, row.area_excess_nll, color=colour, s=60, edgecolor="black", linewidth=0.6)
    left.axhline(budget, **PAPER_STYLE, label=f"budget: {budget} steps (triangles: not recovered)")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("importance (perplexity change, %, log)")
    left.set(ylabel="steps to recover", title="Steps to recover", ylim=(0, budget * 1.35))
    right.set(ylabel="nats x steps", title="Area under excess NLL")
    steps = merged["steps_to_recover"].where(merged["recovered"], budget * 1.25)
    names = [f"L{layer}" for layer in merged["layer"]]
    label_points(left, merged["change_pct"], steps, names)
    label_points(right, merged["change_pct"], merged["area_excess_nll"], names)
    legend_below(left, "", ncol=1)
    handles = [plt.Line2D([], [], marker="o", linestyle="none", color=colours[c], label=c)
               for c in dict.fromkeys(merged["anatomy"])]
    legend_below(right, "", ncol=1, handles=handles)
    return finish_figure(fig, "Does recovery follow importance?", specimen_name)
