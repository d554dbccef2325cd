"""Chapter 7's figures: validation curves, FLOPs to target, the anatomy of trained models, loss against compute,
the compute-optimal frontier and the speed-ups measured against it."""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from ..core.style import (
    COLUMN,
    PALETTE,
    PAPER_STYLE,
    SMALL,
    band_curve,
    finish_figure,
    layer_ticks,
    legend_below,
    shared_legend,
    symlog_axis,
    use_book_style,
)
from .frontier_analysis import loss_table
from .params import ARMS
from .scaling import branch_finals, loss_by_budget, saturating


def arm_colours(arms) -> dict:
    """One colour per arm, the same in every figure of the chapter: the arms of ``ARMS`` keep their place in the
    palette whichever subset a figure draws; other series (the frontier's fixed depths) take the colours after."""
    others = [a for a in arms if a not in ARMS]
    palette = sns.color_palette(PALETTE, len(ARMS) + len(others))
    return {a: palette[ARMS.index(a)] if a in ARMS else palette[len(ARMS) + others.index(a)] for a in arms}


def growth_curves_figure(curves, mean, events, paper_ratio: float | None = None, specimen_name: str | None = None):
    """Validation loss against training FLOPs (log), one colour per arm: every seed thin, the mean over seeds
    bold; growth events of the first seed marked on the axis."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(COLUMN, 4.4))
    arms = list(dict.fromkeys(curves["arm"]))
    colours = arm_colours(arms)
    # six styles for six arms: shallow (orange) and random_source (brown) shared a dash and read as one
    styles = dict(zip(arms, ["-", "--", "-.", ":", "-", (0, (3, 1, 1, 1, 1, 1))]))
    for (arm, seed), run in curves[curves["flops"] > 0].groupby(["arm", "seed"], sort=False):
        ax.plot(run["flops"], run["val_loss"], color=colours[arm], linewidth=0.7, alpha=0.45)
    for arm, run in mean.groupby("arm", sort=False):
        ax.plot(run["flops"], run["val_loss"], color=colours[arm], linewidth=2.4, linestyle=styles[arm],
                label=f"{arm} (mean)")
    if len(events):
        first = events[events["seed"] == events["seed"].min()]
        for event in first.itertuples():
            ax.axvline(event.flops, color=colours.get(event.arm, "grey"), linestyle=":", linewidth=1)
            ax.annotate("grow", (event.flops, 1.0), xycoords=("data", "axes fraction"), fontsize=SMALL,
                        color=colours.get(event.arm, "grey"), rotation=90, va="top", ha="right")
    ax.set_xscale("log")
    # ticks at 1, 2 and 5 of each decade: the budget spans about one decade, which plain decades mark only once
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0e}".replace("e+", "e")))
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.yaxis.set_major_locator(MaxNLocator(6))
    ax.set(xlabel="training FLOPs (log)", ylabel="validation loss (nats/token)",
           title="Every arm on the same FLOP budget\n(thin: seeds; bold: mean)")
    legend_below(ax, "", ncol=2)
    return finish_figure(fig, "", specimen_name)


def compute_to_target_figure(reach, paper_saving: float | None = None, specimen_name: str | None = None):
    """Speed-up over uniform in FLOPs to reach each target, per arm, with t-intervals over seeds; arms that did
    not reach a target in every seed are drawn hollow and labelled."""
    use_book_style()
    goals = list(dict.fromkeys(reach["target"]))
    arms = [a for a in dict.fromkeys(reach["arm"]) if a != "uniform"]
    fig, ax = plt.subplots(figsize=(COLUMN, 4.4))
    # greys: a target is not an arm, and the arms' colours mean arms everywhere else in the chapter
    colours = sns.color_palette("Greys", len(goals) + 2)[2:]
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
                ax.annotate(f"{r.reached}/{r.seeds}", (xi, 0.05), fontsize=SMALL, ha="center", rotation=90)
    ax.axhline(1, color="black", linewidth=0.8)
    if paper_saving:
        ax.axhline(1 / (1 - paper_saving), **PAPER_STYLE, label=f"paper: {paper_saving:.0%} cheaper "
                                                                 f"= {1 / (1 - paper_saving):.2f}x")
    # an arm's name on two lines where it has two words: "developmental" and "random_source" ran together
    ax.set_xticks(np.arange(len(arms)), [arm.replace("_", "\n") for arm in arms])
    ax.set(ylabel="speed-up (uniform / arm FLOPs)", title="FLOPs to reach the uniform arm's losses (same seed)")
    legend_below(ax, "target (hollow: not reached by every seed; n/m seeds)", ncol=2)
    return finish_figure(fig, "", specimen_name)


def anatomy_comparison_figure(anatomy, specimen_name: str | None = None):
    """Chapter 2's skip-ablation importance map of trained models side by side (change with 95% interval)."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(COLUMN, 4.4))
    colours = arm_colours(list(dict.fromkeys(anatomy["arm"])))
    for (arm, rows), marker in zip(anatomy.groupby("arm", sort=False), "osD^v"):
        band_curve(ax, "layer", rows, colours[arm], marker, arm)
    symlog_axis(ax)
    depths = sorted({int(n) for n in anatomy.groupby("arm")["layer"].nunique()})
    ax.set(xlabel="layer (0-based)", ylabel="change when skipped (%), symlog",
           title=f"Does an anatomy emerge?\nSkip ablation of trained {'/'.join(map(str, depths))}-layer models")
    layer_ticks(ax, anatomy["layer"].unique())
    legend_below(ax, "model", ncol=3)
    return finish_figure(fig, "", specimen_name)


def multiple_label(multiple: float) -> str:
    """A budget as a multiple of the chapter's: 0.25x, 4x, 100x, then powers of ten."""
    if multiple < 1000:
        return f"{multiple:g}x"
    power = math.log10(multiple)
    return f"$10^{{{power:.0f}}}$x" if abs(power - round(power)) < 1e-9 else f"{multiple:.2g}x"


def budget_sweep_figure(tables, fitted, cross: dict, base_budget: float, specimen_name: str | None = None):
    """Final loss against training FLOPs (log) at every budget of the sweep. Left, the swept budgets: each seed as
    a dot, the mean with its t-interval, each seed's fitted saturating law as a thin line, the chapter's own budget
    marked. Right (only when the crossover lies beyond them): the same laws continued to the crossover
    (extrapolated, dashed, with its interval over seeds), on its own axis so that the data keep the width."""
    use_book_style()
    finals = branch_finals(tables)
    largest = float(finals["multiple"].max())
    reach = largest
    if cross.get("kind") == "extrapolated":
        reach = max(largest, float(np.nanmax([cross["extrapolated_high"], cross["extrapolated"]])))
    beyond = reach > largest
    fig, axes = plt.subplots(1, 2 if beyond else 1, figsize=(COLUMN, 4.6), squeeze=False,
                             gridspec_kw={"width_ratios": [3, 2]} if beyond else None)
    swept, continued = axes[0, 0], axes[0, 1] if beyond else None
    means = loss_by_budget(tables)
    arms = list(dict.fromkeys(finals["arm"]))
    colours = arm_colours(arms)
    markers = dict(zip(arms, "osD^v"))
    grid_in = np.geomspace(float(finals["multiple"].min()), largest, 60)
    grid_out = np.geomspace(largest, reach * 1.5, 60)
    dodge = dict(zip(arms, np.geomspace(0.96, 1.04, len(arms))))  # side by side at each budget, on the log axis
    for arm in arms:
        mine = finals[finals["arm"] == arm]
        swept.scatter(mine["budget_flops"] * dodge[arm], mine["final_val_loss"], color=colours[arm], s=14,
                      alpha=0.5)
        mean = means[means["arm"] == arm]
        swept.errorbar(mean["budget_flops"] * dodge[arm], mean["final_loss"],
                       yerr=np.vstack([mean["final_loss"] - mean["low"], mean["high"] - mean["final_loss"]]),
                       color=colours[arm], marker=markers[arm], linewidth=0, elinewidth=1.4, capsize=3,
                       markersize=7, label=f"{arm}: mean over seeds, 95% t-interval")
        for fit in fitted[fitted["arm"] == arm].itertuples():
            law = (fit.floor, fit.scale, fit.exponent)
            swept.plot(grid_in * base_budget, saturating(grid_in, *law), color=colours[arm], linewidth=0.8,
                       alpha=0.6)
            if continued is not None:
                continued.plot(grid_out * base_budget, saturating(grid_out, *law), color=colours[arm],
                               linewidth=0.8, alpha=0.7, linestyle="--")
    swept.axvline(base_budget, color="grey", linestyle=":", linewidth=1.5, label="the chapter's budget (1x)")
    if cross.get("kind") == "measured":
        swept.axvline(cross["measured"] * base_budget, color="black", linewidth=1.5,
                      label=f"crossover, measured: {cross['measured']:g}x")
    if continued is not None:
        point = cross["extrapolated"] * base_budget
        continued.axvline(point, color="black", linewidth=1.5, linestyle="--",
                          label=f"crossover, extrapolated: {cross['extrapolated']:.3g}x")
        if np.isfinite(cross["extrapolated_low"]):
            continued.axvspan(cross["extrapolated_low"] * base_budget, cross["extrapolated_high"] * base_budget,
                              color="grey", alpha=0.15, label="its 95% interval over seeds")
        continued.set_title("the fits continued (no data here)")
    in_multiples = FuncFormatter(lambda value, _: multiple_label(value / base_budget))
    for ax in (swept, continued):
        if ax is None:
            continue
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(in_multiples)
        ax.xaxis.set_minor_formatter(NullFormatter())
    # the swept budgets are the ticks of the left panel, so each mean sits on a labelled budget
    swept.set_xticks(sorted(finals["budget_flops"].unique()))
    if continued is not None:
        powers = range(math.ceil(math.log10(largest)), math.floor(math.log10(reach * 1.5)) + 1)
        continued.set_xticks([10.0 ** k * base_budget for k in powers])
    swept.yaxis.set_major_locator(MaxNLocator(6))
    swept.set(ylabel="final validation loss (nats/token)", title="the swept budgets",
              xlabel=f"training FLOPs per run (log; 1x = {base_budget:.3g})")
    if continued is not None:
        continued.set_xlabel("training FLOPs per run (log)")
    shared_legend(fig, [ax for ax in (swept, continued) if ax is not None], ncol=1)
    return finish_figure(fig, "Loss against compute:\ndoes the deep model overtake the shallow one?", specimen_name)


def frontier_figure(tables, c_star: float, specimen_name: str | None = None):
    """The compute-optimal experiment: final loss (nats per byte) against training FLOPs (log), the fixed depths
    solid with their intervals over seeds, the growth arms dashed, the count-based bigram and trigram tables as
    horizontal references and C* marked."""
    use_book_style()
    table = loss_table(tables["finals"])
    arms = sorted(table["arm"].unique(), key=lambda a: (not a.startswith("depth"),
                                                         int(a.removeprefix("depth")) if a.startswith("depth") else a))
    colours = arm_colours(arms)
    # the fixed depths are the reference the growth arms are judged against: neutral greys, darker when deeper,
    # so no depth shares a hue with a growth arm
    fixed_arms = [a for a in arms if a.startswith("depth")]
    colours.update(zip(fixed_arms, [str(g) for g in np.linspace(0.65, 0.0, len(fixed_arms))]))
    markers = dict(zip(arms, ["o", "s", "D", "^", "v", "P", "X", "*"]))
    dodge = dict(zip(arms, np.geomspace(0.95, 1.05, len(arms))))
    fig, ax = plt.subplots(figsize=(COLUMN, 4.6))
    for arm in arms:
        rows = table[table["arm"] == arm].sort_values("budget_flops")
        x = rows["budget_flops"] * dodge[arm]
        fixed = arm.startswith("depth")
        depth = arm.removeprefix("depth")
        label = (f"{depth} layer" + ("" if depth == "1" else "s")) if fixed else arm
        ax.errorbar(x, rows["loss"], yerr=[rows["loss"] - rows["ci_low"], rows["ci_high"] - rows["loss"]],
                    color=colours[arm], marker=markers[arm], markersize=5, linewidth=2.0 if fixed else 1.3,
                    linestyle="-" if fixed else "--", capsize=2, label=label)
    levels = tables["baselines"].set_index("model")["val_loss"]
    for name, style in (("bigram", ":"), ("trigram", "-.")):
        if name in levels:
            ax.axhline(levels[name], color="0.35", linestyle=style, linewidth=1.0, label=f"{name} table")
    ax.axvline(c_star, **PAPER_STYLE, label="C* of the target depth")
    ax.set_xscale("log")
    # the swept budgets as the ticks, named as multiples of C* (log minor labels run together in a column)
    budgets = np.sort(table["budget_flops"].unique())
    ax.set_xticks(budgets, [f"{b / c_star:g} C*" for b in budgets])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(f"training FLOPs (C* = {c_star:.3g})")
    ax.set_ylabel("final validation loss (nats per byte)")
    legend_below(ax, "", ncol=3)
    return finish_figure(fig, "Loss against compute: fixed depths and growth", specimen_name)


def speedup_figure(speedups, paper_speedup: float, specimen_name: str | None = None):
    """Each growth arm's speed-up to the frontier's loss at each read-out budget, with its interval over seeds;
    1 (no saving) and the paper's claimed speed-up marked. Hollow markers: some seeds read past the sweep."""
    use_book_style()
    arms = list(dict.fromkeys(speedups["arm"]))
    multiples = sorted(speedups["multiple"].unique())
    colours = arm_colours(arms)
    fig, ax = plt.subplots(figsize=(COLUMN, 3.8))
    width = 0.7 / max(len(arms), 1)
    for i, arm in enumerate(arms):
        rows = speedups[speedups["arm"] == arm].set_index("multiple").reindex(multiples)
        x = np.arange(len(multiples)) + (i - (len(arms) - 1) / 2) * width
        beyond = (rows["extrapolated"] + rows["censored"]).fillna(0) > 0
        ax.errorbar(x, rows["speedup"], yerr=[rows["speedup"] - rows["ci_low"], rows["ci_high"] - rows["speedup"]],
                    color=colours[arm], marker="o", linestyle="none", capsize=3, markerfacecolor="none")
        # the legend's marker filled (hollow means "past the sweep", and an arm is not that)
        ax.plot(x[~beyond.to_numpy()], rows["speedup"][~beyond], "o", color=colours[arm], label=arm)
    ax.axhline(1.0, color="0.3", linewidth=1.0, label="no saving (1x)")
    ax.axhline(paper_speedup, **PAPER_STYLE, label=f"paper: {paper_speedup:.2f}x")
    ax.plot([], [], "o", color="0.4", markerfacecolor="none", linestyle="none",
            label="hollow: past the sweep")
    ax.set_yscale("log")
    low, high = ax.get_ylim()
    ax.set_yticks([t for t in (0.125, 0.25, 0.5, 1, 2, 4, 8) if low <= t <= high])
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(np.arange(len(multiples)), [f"{m:g} x C*" for m in multiples])
    ax.set_xlabel("the frontier's loss at")
    ax.set_ylabel("speed-up (frontier FLOPs / arm FLOPs)")
    legend_below(ax, "", ncol=3)
    return finish_figure(fig, "Compute saved by growing, against the best fixed depth", specimen_name)
