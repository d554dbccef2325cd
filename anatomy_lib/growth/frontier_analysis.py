"""What the compute-optimal growth experiment's tables say: the frontier of fixed depths, where the target depth
overtakes the start, every growth arm's speed-up to the frontier's loss, and the checks of the protocol.

All of it reads ``frontier``'s ``finals`` table (one row per run and budget: ``kind`` trunk / lr / fresh, ``arm``,
``seed``, ``multiple`` of C*, ``final_val_loss`` in nats per byte, the ``flops`` spent). The unit of
replication is the seed: intervals are t-intervals over seeds (``core.stats.t_interval``), speed-ups are paired
by seed and summarised on the log scale (``analysis.ratio_interval``).

- **The frontier** at a budget is the fixed depth with the lowest mean loss there; its loss is the target a
  growth arm must reach.
- **A speed-up** at ``m`` x C* is ``m`` C* over the FLOPs the arm needs to reach the frontier's loss at ``m``,
  the arm's loss read along its own budgets (every budget is a properly decayed run) and interpolated linearly in
  log compute. Reaching it below the smallest budget, or only past the largest, is extrapolated from the last two
  budgets, never further than ``EXTRAPOLATION`` times the swept range; a seed that does not reach it even there
  enters at that limit (which flatters the arm), and the row counts such seeds.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..core.stats import t_interval
from .analysis import ratio_interval

EXTRAPOLATION = 2.0  # no read-out further than twice the largest (or half the smallest) swept budget


def trunk_finals(finals: pd.DataFrame) -> pd.DataFrame:
    """The budget sweep proper: every (arm, seed, multiple) of the trunks and their decay branches."""
    return finals[finals["kind"] == "trunk"]


def fixed_depths(finals: pd.DataFrame) -> list[str]:
    arms = trunk_finals(finals)["arm"].unique()
    return sorted((a for a in arms if a.startswith("depth")), key=lambda a: int(a.removeprefix("depth")))


def growth_arms(finals: pd.DataFrame) -> list[str]:
    return [a for a in trunk_finals(finals)["arm"].unique() if not a.startswith("depth")]


def loss_table(finals: pd.DataFrame) -> pd.DataFrame:
    """Mean final loss per arm and budget with its interval over seeds, and the budget in FLOPs."""
    rows = []
    for (arm, multiple), group in trunk_finals(finals).groupby(["arm", "multiple"]):
        mean, low, high = t_interval(group["final_val_loss"])
        rows.append({"arm": arm, "multiple": multiple, "budget_flops": float(group["budget_flops"].iloc[0]),
                     "loss": mean, "ci_low": low, "ci_high": high, "seeds": len(group)})
    return pd.DataFrame(rows)


def frontier_table(finals: pd.DataFrame) -> pd.DataFrame:
    """Per budget: the best fixed depth, its loss, the runner-up, and the paired difference runner-up - best
    (positive: the best depth really is better) with its interval over the seeds both have."""
    table = loss_table(finals)
    depths = table[table["arm"].isin(fixed_depths(finals))]
    trunks = trunk_finals(finals)
    rows = []
    for multiple, group in depths.groupby("multiple"):
        ranked = group.sort_values("loss")
        best, second = ranked.iloc[0], ranked.iloc[1] if len(ranked) > 1 else None
        row = {"multiple": multiple, "budget_flops": best["budget_flops"], "best_depth": best["arm"],
               "loss": best["loss"], "ci_low": best["ci_low"], "ci_high": best["ci_high"]}
        if second is not None:
            diff = paired(trunks, second["arm"], best["arm"], multiple)
            row.update({"runner_up": second["arm"], "margin": diff[0], "margin_low": diff[1], "margin_high": diff[2]})
        rows.append(row)
    return pd.DataFrame(rows)


def _by_seed(trunks: pd.DataFrame, arm: str, multiple: float) -> pd.Series:
    rows = trunks[(trunks["arm"] == arm) & (trunks["multiple"] == multiple)]
    return rows.set_index("seed")["final_val_loss"]


def paired(trunks: pd.DataFrame, a: str, b: str, multiple: float) -> tuple[float, float, float]:
    """a - b at one budget over the seeds both arms have."""
    x, y = _by_seed(trunks, a, multiple), _by_seed(trunks, b, multiple)
    common = x.index.intersection(y.index)
    return t_interval((x[common] - y[common]).to_numpy())


def _log_crossing(xs: np.ndarray, ys: np.ndarray) -> float:
    """Where a piecewise-linear y(log x) first goes from positive to not positive (NaN if it never does)."""
    for i in range(1, len(xs)):
        if ys[i - 1] > 0 >= ys[i]:
            t = ys[i - 1] / (ys[i - 1] - ys[i])
            return float(np.exp(np.log(xs[i - 1]) + t * (np.log(xs[i]) - np.log(xs[i - 1]))))
    return float("nan")


def crossover(finals: pd.DataFrame, deep: str, shallow: str) -> dict:
    """The budget (x C*) at which ``deep`` overtakes ``shallow``: per seed (both arms have it), the first sign
    change of their loss difference along the swept budgets, interpolated in log compute, never extrapolated. The
    summary is the geometric mean with its interval over the seeds that cross inside the sweep; the others are
    counted, and the crossing of the mean difference is given beside it."""
    trunks = trunk_finals(finals)
    multiples = np.sort(trunks["multiple"].unique())
    seeds = sorted(set(trunks.loc[trunks["arm"] == deep, "seed"]) & set(trunks.loc[trunks["arm"] == shallow, "seed"]))
    per_seed = {}
    for seed in seeds:
        diffs = np.array([_by_seed(trunks, deep, m).get(seed, np.nan) - _by_seed(trunks, shallow, m).get(seed, np.nan)
                          for m in multiples])
        per_seed[seed] = _log_crossing(multiples, diffs)
    mean_diff = np.array([paired(trunks, deep, shallow, m)[0] for m in multiples])
    crossed = [v for v in per_seed.values() if np.isfinite(v)]
    centre, low, high = ratio_interval(crossed) if crossed else (np.nan, np.nan, np.nan)
    return {"deep": deep, "shallow": shallow, "crossover": centre, "ci_low": low, "ci_high": high,
            "mean_crossover": _log_crossing(multiples, mean_diff), "seeds": len(seeds),
            "seeds_crossing": len(crossed), "per_seed": per_seed,
            "range": (float(multiples[0]), float(multiples[-1]))}


def flops_to_reach(budgets: np.ndarray, losses: np.ndarray, target: float) -> tuple[float, str]:
    """FLOPs at which a loss-vs-budget curve reaches ``target`` (linear in log compute between swept budgets,
    extrapolated from the nearest two up to ``EXTRAPOLATION`` beyond the range) and how: "measured",
    "extrapolated", or "censored" (not reached within the limit: the limit is returned)."""
    order = np.argsort(budgets)
    x, y = np.log(budgets[order]), losses[order]
    if y[0] <= target:  # reached before the smallest budget: extrapolate downward
        slope = (y[1] - y[0]) / (x[1] - x[0]) if len(x) > 1 else 0.0
        lowest = x[0] - math.log(EXTRAPOLATION)
        if y[0] == target or slope >= 0:
            return float(np.exp(x[0])), "measured" if y[0] == target else "censored"
        at = x[0] + (target - y[0]) / slope
        return (float(np.exp(max(at, lowest))), "extrapolated" if at >= lowest else "censored")
    for i in range(1, len(x)):
        if y[i] <= target:
            t = (y[i - 1] - target) / (y[i - 1] - y[i])
            return float(np.exp(x[i - 1] + t * (x[i] - x[i - 1]))), "measured"
    highest = x[-1] + math.log(EXTRAPOLATION)
    slope = (y[-1] - y[-2]) / (x[-1] - x[-2]) if len(x) > 1 else 0.0
    if slope >= 0:
        return float(np.exp(highest)), "censored"
    at = x[-1] + (target - y[-1]) / slope
    return (float(np.exp(at)), "extrapolated") if at <= highest else (float(np.exp(highest)), "censored")


def speedups(finals: pd.DataFrame, at: tuple[float, ...] = (0.5, 1.0, 2.0), reference: str | None = None
             ) -> pd.DataFrame:
    """Per growth arm and budget ``m`` in ``at``: the speed-up to the frontier's loss at ``m`` (paired by seed:
    seed s of the arm against seed s of the frontier's depth where that depth has it, else its mean), with its
    interval over seeds, and how many seeds needed extrapolation or were censored. Savings = 1 - 1/speed-up.
    ``reference`` (a fixed depth, e.g. ``"depth8"``) replaces the frontier by that one depth: the paper's own
    comparison, against the target trained at full depth from the start."""
    trunks = trunk_finals(finals)
    front = frontier_table(finals).set_index("multiple")
    if reference is not None:
        if reference not in fixed_depths(finals):
            raise ValueError(f"reference {reference!r} is not a fixed depth; choose one of {fixed_depths(finals)}")
        own_loss = loss_table(finals)
        own_loss = own_loss[own_loss["arm"] == reference].set_index("multiple")["loss"]
        front = front.assign(best_depth=reference, loss=own_loss.reindex(front.index))
    rows = []
    for arm in growth_arms(finals):
        own = trunks[trunks["arm"] == arm]
        for multiple in at:
            if multiple not in front.index:
                continue
            best = front.loc[multiple, "best_depth"]
            targets = _by_seed(trunks, best, multiple)
            ratios, how = [], []
            for seed, runs in own.groupby("seed"):
                target = targets.get(seed, front.loc[multiple, "loss"])
                runs = runs.sort_values("budget_flops")
                flops, kind = flops_to_reach(runs["budget_flops"].to_numpy(float),
                                             runs["final_val_loss"].to_numpy(float), float(target))
                ratios.append(front.loc[multiple, "budget_flops"] / flops)
                how.append(kind)
            centre, low, high = ratio_interval(ratios)
            rows.append({"arm": arm, "multiple": multiple, "frontier_depth": best, "speedup": centre,
                         "ci_low": low, "ci_high": high, "savings": 1 - 1 / centre, "seeds": len(ratios),
                         "extrapolated": how.count("extrapolated"), "censored": how.count("censored")})
    return pd.DataFrame(rows)


def matched_flops(finals: pd.DataFrame) -> pd.DataFrame:
    """Per growth arm and budget: its loss minus the best fixed depth's at the same FLOPs, paired by seed
    (negative: growth ahead), with its interval."""
    trunks = trunk_finals(finals)
    front = frontier_table(finals).set_index("multiple")
    rows = []
    for arm in growth_arms(finals):
        for multiple in sorted(trunks.loc[trunks["arm"] == arm, "multiple"].unique()):
            best = front.loc[multiple, "best_depth"]
            diff, low, high = paired(trunks, arm, best, multiple)
            rows.append({"arm": arm, "multiple": multiple, "versus": best, "difference": diff, "ci_low": low,
                         "ci_high": high})
    return pd.DataFrame(rows)


def paired_speedup_ratio(finals: pd.DataFrame, arm: str, control: str, multiple: float = 1.0
                         ) -> tuple[float, float, float]:
    """Speed-up of ``arm`` over ``control`` (e.g. developmental over random_source: does the importance-guided
    order matter?) at one budget: each seed's FLOPs for the control to reach the arm's own loss, over the arm's."""
    trunks = trunk_finals(finals)
    ratios = []
    for seed, runs in trunks[trunks["arm"] == control].groupby("seed"):
        mine = _by_seed(trunks, arm, multiple)
        if seed not in mine.index:
            continue
        runs = runs.sort_values("budget_flops")
        flops, _ = flops_to_reach(runs["budget_flops"].to_numpy(float), runs["final_val_loss"].to_numpy(float),
                                  float(mine[seed]))
        budget = float(trunks.loc[(trunks["arm"] == arm) & (trunks["multiple"] == multiple), "budget_flops"].iloc[0])
        ratios.append(flops / budget)
    return ratio_interval(ratios) if ratios else (np.nan, np.nan, np.nan)


def branch_check(finals: pd.DataFrame) -> pd.DataFrame:
    """Fresh runs beside the branch of the same arm, seed and budget: fresh - branch (nats per byte)."""
    fresh = finals[finals["kind"] == "fresh"]
    trunks = trunk_finals(finals)
    rows = []
    for _, run in fresh.iterrows():
        branch = trunks[(trunks["arm"] == run["arm"]) & (trunks["seed"] == run["seed"])
                        & (trunks["multiple"] == run["multiple"])]
        if len(branch):
            rows.append({"arm": run["arm"], "seed": run["seed"], "multiple": run["multiple"],
                         "fresh": run["final_val_loss"], "branch": float(branch["final_val_loss"].iloc[0]),
                         "fresh_minus_branch": run["final_val_loss"] - float(branch["final_val_loss"].iloc[0])})
    return pd.DataFrame(rows)


def rate_check(finals: pd.DataFrame) -> pd.DataFrame:
    """Each arm's learning-rate check: its best rate, and whether that rate is at an edge of the grid (the
    optimum may lie outside it)."""
    checks = finals[finals["kind"] == "lr"]
    rows = []
    for arm, group in checks.groupby("arm"):
        group = group.sort_values("lr")
        best = group.loc[group["final_val_loss"].idxmin()]
        rates = group["lr"].tolist()
        rows.append({"arm": arm, "best_lr": best["lr"], "loss": best["final_val_loss"],
                     "edge": best["lr"] in (rates[0], rates[-1]),
                     "spread": float(group["final_val_loss"].max() - group["final_val_loss"].min())})
    return pd.DataFrame(rows)


def baseline_check(finals: pd.DataFrame, baselines: pd.DataFrame, kinds: tuple[str, ...] = ("trunk",)) -> dict:
    """How many runs (by default the trunks' budgets; ``kinds`` of jobs) end below the bigram table and the
    trigram table on the same blocks."""
    trunks = finals[finals["kind"].isin(kinds)]
    levels = baselines.set_index("model")["val_loss"]
    bigram = float(levels.loc["bigram"])
    trigram = float(levels.loc["trigram"])
    return {"runs": len(trunks), "beat_bigram": int((trunks["final_val_loss"] < bigram).sum()),
            "beat_trigram": int((trunks["final_val_loss"] < trigram).sum()), "bigram": bigram, "trigram": trigram,
            "worst": float(trunks["final_val_loss"].max())}


def regime_check(finals: pd.DataFrame, baselines: pd.DataFrame, target: str, depths: list[str],
                 seed: int = 0) -> dict:
    """Whether a sweep (complete or not) is in the regime the experiment needs, read from one seed's trunks (the
    first seed every arm runs, kept first): the best fixed depth at C* and how far the target trails it there
    (positive: the target is not the best depth), and the budgets at which every kept run of that seed, growth
    arms included, ends below the bigram table. Empty until every fixed depth of ``depths`` is kept at C*."""
    trunks = trunk_finals(finals)
    trunks = trunks[trunks["seed"] == seed]
    at_c = trunks[(trunks["multiple"] == 1.0) & trunks["arm"].isin(depths)]
    if not set(depths) <= set(at_c["arm"]) or target not in depths:
        return {}
    best = at_c.loc[at_c["final_val_loss"].idxmin()]
    bigram = float(baselines.set_index("model")["val_loss"].loc["bigram"])
    worst = trunks.groupby("multiple")["final_val_loss"].max()
    return {"seed": seed, "arms": sorted(trunks["arm"].unique()), "best_depth": best["arm"],
            "target_gap": float(at_c.set_index("arm").loc[target, "final_val_loss"] - best["final_val_loss"]),
            "bigram": bigram, "below_bigram": [float(m) for m, loss in worst.items() if loss < bigram],
            "above_bigram": [float(m) for m, loss in worst.items() if loss >= bigram]}
