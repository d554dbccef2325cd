"""Chapter 7's figures: validation curves, FLOPs to target, the anatomy of trained models, loss against compute."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ..core.style import PALETTE, PAPER_STYLE, band_curve, finish_figure, legend_below, symlog_axis, use_book_style
from .scaling import branch_finals, loss_by_budget, saturating


def growth_curves_figure(curves, mean, events, paper_ratio: float | None = None, specimen_name: str | None = None):
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
    legend_below(ax, "", ncol=3)
    return finish_figure(fig, "", specimen_name)


def compute_to_target_figure(reach, paper_saving: float | None = None, specimen_name: str | None = None):
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
    legend_below(ax, "target (hollow: not reached by every seed; n/m seeds)", ncol=2)
    return finish_figure(fig, "", specimen_name)


def anatomy_comparison_figure(anatomy, specimen_name: str | None = None):
    """Chapter 2's skip-ablation importance map of trained models side by side (change with 95% interval)."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(10, 5.2))
    for (arm, rows), colour, marker in zip(anatomy.groupby("arm", sort=False), sns.color_palette(PALETTE), "osD^"):
        band_curve(ax, "layer", rows, colour, marker, arm)
    symlog_axis(ax)
    ax.set(xlabel="layer (0-based)", ylabel="change when skipped (%), symlog",
           title="Does an anatomy emerge? Skip ablation of trained 12-layer models")
    ax.set_xticks(sorted(anatomy["layer"].unique()))
    legend_below(ax, "model", ncol=3)
    return finish_figure(fig, "", specimen_name)


def budget_sweep_figure(tables, fitted, cross: dict, base_budget: float, specimen_name: str | None = None):
    """Final loss against training FLOPs (log) at every budget of the sweep: each seed as a dot, the mean with
    its t-interval, each seed's fitted saturating law as a thin line (dashed beyond the swept budgets, up to the
    crossover); the chapter's own budget and the crossover (measured or extrapolated, with its interval) marked."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(10, 5.4))
    finals = branch_finals(tables)
    means = loss_by_budget(tables)
    arms = list(dict.fromkeys(finals["arm"]))
    colours = dict(zip(arms, sns.color_palette(PALETTE, len(arms))))
    markers = dict(zip(arms, "osD^v"))
    largest = float(finals["multiple"].max())
    reach = largest
    if cross.get("kind") == "extrapolated":
        reach = max(largest, float(np.nanmax([cross["extrapolated_high"], cross["extrapolated"]])))
    grid_in = np.geomspace(float(finals["multiple"].min()), largest, 60)
    grid_out = np.geomspace(largest, reach * 1.5, 60) if reach > largest else None
    dodge = dict(zip(arms, np.geomspace(0.96, 1.04, len(arms))))  # side by side at each budget, on the log axis
    for arm in arms:
        mine = finals[finals["arm"] == arm]
        ax.scatter(mine["budget_flops"] * dodge[arm], mine["final_val_loss"], color=colours[arm], s=14, alpha=0.5)
        mean = means[means["arm"] == arm]
        ax.errorbar(mean["budget_flops"] * dodge[arm], mean["final_loss"],
                    yerr=np.vstack([mean["final_loss"] - mean["low"], mean["high"] - mean["final_loss"]]),
                    color=colours[arm], marker=markers[arm], linewidth=0, elinewidth=1.4, capsize=3, markersize=7,
                    label=f"{arm}: mean over seeds, 95% t-interval")
        for fit in fitted[fitted["arm"] == arm].itertuples():
            law = (fit.floor, fit.scale, fit.exponent)
            ax.plot(grid_in * base_budget, saturating(grid_in, *law), color=colours[arm], linewidth=0.8, alpha=0.6)
            if grid_out is not None:
                ax.plot(grid_out * base_budget, saturating(grid_out, *law), color=colours[arm], linewidth=0.8,
                        alpha=0.6, linestyle="--")
    ax.axvline(base_budget, color="grey", linestyle=":", linewidth=1.5, label="the chapter's budget (1x)")
    if cross.get("kind") == "measured":
        ax.axvline(cross["measured"] * base_budget, color="black", linewidth=1.5,
                   label=f"crossover, measured: {cross['measured']:g}x")
    elif cross.get("kind") == "extrapolated":
        point = cross["extrapolated"] * base_budget
        ax.axvline(point, color="black", linewidth=1.5, linestyle="--",
                   label=f"crossover, extrapolated: {cross['extrapolated']:.3g}x")
        if np.isfinite(cross["extrapolated_low"]):
            ax.axvspan(cross["extrapolated_low"] * base_budget, cross["extrapolated_high"] * base_budget,
                       color="grey", alpha=0.15, label="its 95% interval over seeds")
    ax.set_xscale("log")
    ax.set(xlabel="training FLOPs per run (log)", ylabel="final validation loss (nats per token)",
           title="Loss against compute: does the deep model overtake the shallow one?")
    legend_below(ax, "", ncol=2)
    return finish_figure(fig, "", specimen_name)
