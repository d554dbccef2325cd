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
    return (f"The compute-optimal sweep is still being computed: {len(jobs) - len(missing)} of {len(jobs)} jobs are "
            f"kept ({parts}; {params.work():.3g} training FLOPs in all). The frontier, the speed-ups and the "
            "verdicts of this section are read only from the complete sweep (`python -m anatomy_lib growth-frontier` "
            "resumes it).")


def _design_sentence(tables: dict[str, pd.DataFrame], params) -> str:
    design = tables["design"]
    target = design[(design["depth"] == params.target_layers) & (design["multiple"] == 1.0)].iloc[0]
    return (f"Byte-level models of width {params.width}, depths {', '.join(map(str, params.depths))}; the "
            f"{params.target_layers}-layer target has {int(target.body_parameters):,} body parameters, so its "
            f"compute-optimal budget C* ({params.tokens_per_parameter:g} tokens per parameter) is "
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


def claims(tables: dict[str, pd.DataFrame], params) -> list[v.Claim]:
    """The paper's compute claims judged against the frontier at C*: developmental's cost to reach the best fixed
    depth's loss (paper: ~54% cheaper, a 2.17x speed-up), held to random_source (the same schedule with randomly
    chosen layers); and developmental at half of C* against the target depth at C*."""
    finals = tables["finals"]
    out = []
    speed = fa.speedups(finals, (1.0,))
    paper_speedup = PAPER_SPEEDUP
    for arm in ("developmental", "gstack"):
        rows = speed[speed["arm"] == arm]
        if not len(rows):
            continue
        r = rows.iloc[0]
        logs = (math.log(r.speedup), math.log(r.ci_low), math.log(r.ci_high)) if np.isfinite(r.ci_low) else \
            (math.log(r.speedup), math.nan, math.nan)
        verdict = v.comparison(*logs, paper_size=math.log(paper_speedup))
        checks = []
        if arm == "developmental" and "random_source" in set(finals["arm"]):
            ratio = fa.paired_speedup_ratio(finals, "developmental", "random_source")
            checks.append(v.ControlCheck("random_source", v.comparison(*np.log(ratio)) if np.isfinite(ratio[1])
                                         else v.NOT_COMPARABLE, "cloning random layers saves as much"))
        name = "developmental (the paper's arm)" if arm == "developmental" else "G_stack (a published operator)"
        out.append(v.Claim.held_to(
            f"{name}: compute to reach the compute-optimal frontier's loss at C*",
            f"~{PAPER['cost_saving']:.0%} less compute ({paper_speedup:.2f}x), against a uniform model",
            f"{_speedup_text(r)}; savings {r.savings:+.0%}",
            verdict, f"against the best fixed depth at each budget ({r.frontier_depth} at C*), {_seeds(r.seeds)}; "
            "speed-up interpolated in log compute", "comparison", checks, kind=v.MAGNITUDE))
    trunks = fa.trunk_finals(finals)
    deep = f"depth{params.target_layers}"
    half = trunks[(trunks["arm"] == "developmental") & (trunks["multiple"] == 0.5)].set_index("seed")
    full = trunks[(trunks["arm"] == deep) & (trunks["multiple"] == 1.0)].set_index("seed")
    common = half.index.intersection(full.index)
    if len(common) > 1:
        margin = t_interval((half.loc[common, "final_val_loss"] - full.loc[common, "final_val_loss"]).to_numpy())
        out.append(v.Claim.held_to(
            "developmental at 50% of the budget beats the target depth at 100% (at C*)", "yes",
            f"{estimate_text(*margin, decimals=3)} nats per byte (developmental at C*/2 minus "
            f"{params.target_layers} layers at C*)",
            v.comparison(*margin, paper_direction=-1), f"paired by seed over {len(common)} seeds", "comparison", []))
    return v.in_experiment("growth against the compute-optimal frontier", out)
