"""Chapter 6's figures: recovery curves, and recovery against importance."""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D

from ..core.style import COLUMN, PAPER_STYLE, finish_figure, label_points, legend_below, use_book_style
from ..importance.figures import class_colours
from .analysis import at_sigma
from .power import HALF

HALF_SHARE = HALF.share  # the share the powered sweep's steps table counts steps to


def recovery_curves_figure(curves, classes: dict, tolerance: float | None = None, specimen_name: str | None = None,
                           judged=None):
    """Excess NLL against fine-tuning step, one small panel per layer (on shared axes): its damaged runs in its
    chapter-2 class's colour (a second noise seed fainter; a fixed-noise run dotted) and the sham of the same
    layer dashed in the same colour, so that the gap recovery is judged on is read inside one panel. ``judged``
    (``analysis.judged_runs``) marks where a run counts as recovered; ``tolerance`` shades the older unpaired
    band."""
    use_book_style()
    layers = sorted(int(l) for l in curves["layer"].unique())
    columns = min(3, len(layers))
    rows = -(-len(layers) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(COLUMN, 1.9 * rows + 1.2), sharex=True, sharey=True,
                             squeeze=False)
    colours = class_colours()
    protocol = curves["protocol"] if "protocol" in curves else "matched"
    curves = curves.assign(protocol=protocol)
    recovered_label = ""
    for ax, layer in zip(axes.flat, layers):
        cls = classes.get(layer, "")
        colour = colours.get(cls, "grey")
        if tolerance is not None:
            ax.axhspan(-tolerance, tolerance, color="grey", alpha=0.15)
        seen = set()
        for (kind, how, seed, sigma), run in curves[curves["layer"] == layer].groupby(
                ["kind", "protocol", "noise_seed", "sigma"], sort=True):
            if kind == "sham":
                ax.plot(run["step"], run["excess_nll"], color=colour, linestyle="--", linewidth=1.4)
                continue
            first = how not in seen
            seen.add(how)
            ax.plot(run["step"], run["excess_nll"], color=colour, linewidth=1.5, alpha=1.0 if first else 0.45,
                    linestyle=":" if how == "fixed" else "-", marker="o", markersize=2.5)
            if how == "fixed":  # several sigmas share a panel: each line says its own
                ax.annotate(f"σ {sigma:g}", (run["step"].iloc[-1], run["excess_nll"].iloc[-1]), fontsize=8,
                            xytext=(2, 0), textcoords="offset points", va="center", color=colour)
            if judged is not None:
                hit = judged[(judged["layer"] == layer) & (judged["protocol"] == how)
                             & (judged["noise_seed"] == seed) & at_sigma(judged, sigma) & judged["recovered"]]
                if len(hit):
                    step = hit["steps_to_recover"].iloc[0]
                    ax.scatter([step], run.loc[run["step"] == step, "excess_nll"], marker="*", s=110,
                               color="black", zorder=5)
                    recovered_label = f"recovered ({hit['criterion'].iloc[0]})"
        ax.axhline(0, color="black", linewidth=0.6)
        # a comma, not parentheses: a class may carry its own ("important (middle)")
        ax.set_title(f"L{layer}, {cls}" if cls else f"L{layer}", fontsize=9)
    for ax in axes.flat[len(layers):]:
        ax.set_visible(False)
    for ax in axes.flat:
        ax.set_xscale("symlog", linthresh=10)
    for ax in axes[-1]:
        ax.set_xlabel("step (symlog)")
    for ax in axes[:, 0]:
        ax.set_ylabel("NLL above\nbaseline (nats)")
    # the legend explains line styles (each panel's colour is its layer's class, named in its title)
    styles = [("-", 1.0, "damaged, first noise seed"), ("-", 0.45, "damaged, further noise seeds"),
              ("--", 1.0, "sham of the same layer (no noise)")]
    if (curves["protocol"] == "fixed").any():
        styles.append((":", 1.0, "damaged, fixed sigma"))
    proxies = [Line2D([], [], color="0.3", linestyle=style, alpha=alpha, linewidth=1.5, label=label)
               for style, alpha, label in styles]
    if recovered_label:
        proxies.append(Line2D([], [], color="black", marker="*", markersize=10, linestyle="none",
                              label=recovered_label))
    fig.legend(handles=proxies, ncol=2, frameon=False, loc="upper center", bbox_to_anchor=(0.5, 0.0)) \
        .set_in_layout(False)
    return finish_figure(fig, "Recovery after damage: each layer beside its sham\n(colour: the layer's chapter-2 "
                         "class)", specimen_name)


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


def power_curves_figure(curves, classes: dict, critical: int, budget: int, criterion_share: float,
                        specimen_name: str | None = None):
    """The powered sweep's recovery, one panel per learning rate (shared axes): the share of the damage undone
    against the sham (``power.power_curves``: the mean over a layer's noise seeds) at every evaluation, one line
    per layer in its chapter-2 class's colour, the paper's critical layer in black; the paper's budget and the
    chapter's criterion marked. A rate still running says so in its title."""
    use_book_style()
    rates = sorted(curves["lr"].unique())
    fig, axes = plt.subplots(1, len(rates), figsize=(COLUMN, 3.6), sharex=True, sharey=True, squeeze=False)
    colours = class_colours()
    for ax, lr in zip(axes[0], rates):
        mine = curves[curves["lr"] == lr]
        for layer, run in mine.groupby("layer"):
            if layer == critical:
                continue
            ax.plot(run["step"], run["undone"], color=colours.get(classes.get(layer, ""), "grey"), linewidth=1.2,
                    alpha=0.85)
        run = mine[mine["layer"] == critical]
        if len(run):
            ax.plot(run["step"], run["undone"], color="black", linewidth=2.4, zorder=4)
        ax.axvline(budget, **PAPER_STYLE)
        ax.axhline(criterion_share, color="0.35", linestyle=":", linewidth=1.2)
        ax.axhline(HALF_SHARE, color="0.55", linestyle="-.", linewidth=1.0)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_title(f"lr {lr:g}" + ("" if bool(mine["complete"].all()) else "\n(still running)"), fontsize=11)
        ax.set_xlabel("step")
    axes[0, 0].set_ylabel("share of the damage undone\nagainst the sham (mean over seeds)")
    axes[0, 0].yaxis.set_major_formatter(plt.FuncFormatter(lambda y, _: f"{y:.0%}"))
    shown = [c for c in dict.fromkeys(classes.get(int(layer), "") for layer in curves["layer"].unique()
                                      if int(layer) != critical) if c]
    handles = [Line2D([], [], color=colours.get(c, "grey"), linewidth=1.5, label=c) for c in shown]
    if (curves["layer"] == critical).any():  # named only where it is drawn
        handles.append(Line2D([], [], color="black", linewidth=2.4, label=f"L{critical}, the paper's critical layer"))
    handles += [Line2D([], [], **PAPER_STYLE, label=f"the paper's budget ({budget} steps)"),
                Line2D([], [], color="0.35", linestyle=":", linewidth=1.2,
                       label=f"the chapter's criterion ({criterion_share:.0%} undone)"),
                Line2D([], [], color="0.55", linestyle="-.", linewidth=1.0,
                       label=f"{HALF_SHARE:.0%} undone (the steps table)")]
    fig.legend(handles=handles, ncol=2, frameon=False, loc="upper center", bbox_to_anchor=(0.5, 0.0)) \
        .set_in_layout(False)
    return finish_figure(fig, "The powered sweep: recovery at each learning rate\n(one line per layer, colour: "
                         "its chapter-2 class)", specimen_name)
