"""What the budget sweep says: final loss against compute per arm, a saturating power law per seed, paired
differences at every budget, and where the target depth overtakes its starting depth (measured, or
extrapolated and labelled so)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy.optimize import brentq, curve_fit

from ..core.gpu import gpu_seconds, gpu_throughput
from ..core.machine import matmul_peak
from ..core.stats import t_interval

# where a fitted crossover is looked for, in multiples of the base budget
SEARCH_MULTIPLES = (1e-3, 1e6)
# the book reads a fit no further than this many times the largest swept budget: past it a crossover is "not
# within reach of the data", never a number (a power law continued for orders of magnitude past four budgets
# says more about the fit than about the models)
EXTRAPOLATION_LIMIT = 2.0


def saturating(multiple, floor, scale, exponent):
    """L(m) = floor + scale * m^-exponent: loss against compute m (in base budgets)."""
    return floor + scale * np.power(multiple, -exponent)


def fit_power_law(multiples, losses) -> tuple[float, float, float]:
    """(floor, scale, exponent) of ``saturating`` by least squares, the floor kept below the lowest loss and
    non-negative, the exponent in (0.01, 3). NaNs when the fit does not converge."""
    m, y = np.asarray(multiples, float), np.asarray(losses, float)
    guess = (max(0.0, y.min() - 0.5), max(y.max() - y.min() + 0.5, 1e-3), 0.3)
    bounds = ([0.0, 1e-9, 0.01], [max(y.min() - 1e-6, 1e-6), np.inf, 3.0])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            popt, _ = curve_fit(saturating, m, y, p0=guess, bounds=bounds, maxfev=20000)
    except (RuntimeError, ValueError):
        return (math.nan,) * 3
    return tuple(float(v) for v in popt)


def branch_finals(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The sweep's final losses under the branch protocol (one row per arm, seed and budget)."""
    finals = tables["finals"]
    return finals[finals["protocol"] == "branch"].sort_values(["arm", "seed", "multiple"])


def fits(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """A saturating power law per (arm, seed) through its final losses at every budget."""
    rows = []
    for (arm, seed), group in branch_finals(tables).groupby(["arm", "seed"]):
        floor, scale, exponent = fit_power_law(group["multiple"], group["final_val_loss"])
        predicted = saturating(group["multiple"].to_numpy(), floor, scale, exponent)
        rows.append({"arm": arm, "seed": int(seed), "floor": floor, "scale": scale, "exponent": exponent,
                     "rms_residual": float(np.sqrt(np.mean((predicted - group["final_val_loss"]) ** 2)))})
    return pd.DataFrame(rows)


def loss_by_budget(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per arm and budget: mean final loss with a t-interval over seeds, tokens and steps."""
    rows = []
    for (arm, multiple), group in branch_finals(tables).groupby(["arm", "multiple"]):
        mean, low, high = t_interval(group["final_val_loss"])
        rows.append({"arm": arm, "multiple": multiple, "budget_flops": float(group["budget_flops"].iloc[0]),
                     "final_loss": mean, "low": low, "high": high, "seeds": len(group),
                     "tokens": float(group["tokens"].mean()), "steps": float(group["steps"].mean())})
    return pd.DataFrame(rows)


def paired_differences(tables: dict[str, pd.DataFrame], pairs=(("uniform", "shallow"), ("gstack", "shallow"),
                                                              ("gstack", "uniform"))) -> pd.DataFrame:
    """At every budget, arm A minus arm B in final loss, paired by seed, with a t-interval (below zero: A is
    better)."""
    finals = branch_finals(tables)
    wide = finals.pivot_table(index=["multiple", "seed"], columns="arm", values="final_val_loss")
    rows = []
    for a, b in pairs:
        if a not in wide or b not in wide:
            continue
        for multiple, group in wide.groupby(level="multiple"):
            mean, low, high = t_interval(group[a] - group[b])
            rows.append({"pair": f"{a} - {b}", "multiple": multiple, "difference": mean, "low": low, "high": high,
                         "verdict": f"{a} better" if high < 0 else f"{b} better" if low > 0 else "undetermined"})
    return pd.DataFrame(rows)


def crossing(fit_a, fit_b, beyond: float = SEARCH_MULTIPLES[0]) -> float:
    """The smallest budget multiple above ``beyond`` at which A's fitted loss falls below B's (NaN: not within
    ``SEARCH_MULTIPLES``)."""
    if any(math.isnan(v) for v in (*fit_a, *fit_b)):
        return math.nan
    grid = np.geomspace(max(beyond, SEARCH_MULTIPLES[0]), SEARCH_MULTIPLES[1], 400)
    gap = saturating(grid, *fit_a) - saturating(grid, *fit_b)
    below = np.nonzero(gap < 0)[0]
    if not len(below):
        return math.nan
    i = below[0]
    if i == 0:
        return float(grid[0])
    f = lambda log_m: saturating(np.exp(log_m), *fit_a) - saturating(np.exp(log_m), *fit_b)
    return float(np.exp(brentq(f, math.log(grid[i - 1]), math.log(grid[i]))))


def crossover(tables: dict[str, pd.DataFrame], deep: str = "uniform", shallow: str = "shallow") -> dict:
    """Where ``deep`` overtakes ``shallow``. Measured when, at some swept budget, the paired difference's
    interval lies below zero (the smallest such budget); otherwise extrapolated from each seed's fits (the
    first crossing above the largest swept budget, and no further than ``EXTRAPOLATION_LIMIT`` times it), with a
    t-interval of its log over the seeds that cross there, and labelled as an extrapolation. ``seeds_crossing``
    says how many seeds' fits cross within the limit; ``per_seed`` keeps every seed's (NaN: not within it)."""
    differences = paired_differences(tables, ((deep, shallow),))
    measured = differences[differences["high"] < 0]
    largest = float(branch_finals(tables)["multiple"].max())
    fitted = fits(tables).set_index(["arm", "seed"])
    seeds = sorted(set(fitted.loc[deep].index) & set(fitted.loc[shallow].index))
    per_seed = []
    for seed in seeds:
        a = tuple(fitted.loc[(deep, seed), ["floor", "scale", "exponent"]])
        b = tuple(fitted.loc[(shallow, seed), ["floor", "scale", "exponent"]])
        point = crossing(a, b, beyond=largest if measured.empty else SEARCH_MULTIPLES[0])
        per_seed.append(point if point <= EXTRAPOLATION_LIMIT * largest else math.nan)
    crossing_seeds = [m for m in per_seed if np.isfinite(m)]
    if crossing_seeds:
        mean, low, high = t_interval(np.log10(crossing_seeds)) if len(crossing_seeds) > 1 else \
            (math.log10(crossing_seeds[0]), math.nan, math.nan)
    else:
        mean = low = high = math.nan
    out = {"deep": deep, "shallow": shallow, "largest_swept": largest, "seeds": len(seeds),
           "limit": EXTRAPOLATION_LIMIT * largest,
           "seeds_crossing": len(crossing_seeds), "per_seed": per_seed,
           "extrapolated": 10 ** mean if np.isfinite(mean) else math.nan,
           "extrapolated_low": 10 ** low if np.isfinite(low) else math.nan,
           "extrapolated_high": 10 ** high if np.isfinite(high) else math.nan}
    out["measured"] = float(measured["multiple"].min()) if len(measured) else math.nan
    out["kind"] = "measured" if len(measured) else "extrapolated" if crossing_seeds else "none"
    return out


def seed_crossings(per_seed: list[float], limit: float, arm: str = "G_stack", rival: str = "it") -> str:
    """Where each seed's fitted laws put ``arm`` past ``rival`` (``crossover``'s ``per_seed``, NaN: not within
    ``limit``), as a clause: the budgets of the seeds that cross, then the others counted once ("not within 8x"
    said once, never once per seed)."""
    crossing = sorted(m for m in per_seed if np.isfinite(m))
    beyond = len(per_seed) - len(crossing)
    reach = f"within {limit:g}x the chapter's budget ({EXTRAPOLATION_LIMIT:g} times the largest swept one)"
    if not crossing:
        return f"no seed's fitted laws put {arm} past {rival} {reach}"
    budgets = _listed([f"{m:.3g}x" for m in crossing])
    if not beyond:
        return f"each seed's fitted laws put {arm} past {rival}, at {budgets} (extrapolated)"
    others = "that of the other seed" if beyond == 1 else f"those of the other {beyond}"
    return (f"the fitted laws of {len(crossing)} of {len(per_seed)} seeds put {arm} past {rival}, at {budgets} "
            f"(extrapolated), and {others} not {reach}")


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def compute_cost(multiple: float, base_budget: float, cpu_flops_per_s: float, gpu: str = "H200") -> dict:
    """FLOPs of one run at ``multiple`` base budgets, the hours it takes on this CPU at its measured throughput,
    and on one ``gpu`` by the book's one GPU convention (``core.gpu``: the fp32 peak at its stated share)."""
    flops = multiple * base_budget
    return {"flops": flops, "cpu_hours": flops / cpu_flops_per_s / 3600, "gpu_hours": gpu_seconds(flops, gpu) / 3600}


def measured_throughput(tables: dict[str, pd.DataFrame], arm: str = "uniform") -> float:
    """Training FLOPs per second of the sweep's fastest trunk run of ``arm`` on the machine that ran it (its FLOPs
    over its own wall time, evaluations included: a little below the trainer's step rate; the fastest, because
    anything else running on the machine only ever slows a run down)."""
    finals = branch_finals(tables)
    longest = finals[(finals["arm"] == arm) & (finals["multiple"] == finals["multiple"].max())]
    return float((longest["flops"] / longest["own_wall_s"]).max())


def branch_check(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The fresh runs under the chapter's own schedule beside the branches of the same arm, seed and budget: the
    difference, against the spread of that arm's seeds at that budget."""
    finals = tables["finals"]
    fresh = finals[finals["protocol"] == "fresh"]
    branches = branch_finals(tables)
    rows = []
    for r in fresh.itertuples():
        same = branches[(branches["arm"] == r.arm) & (branches["multiple"] == r.multiple)]
        branch = same[same["seed"] == r.seed]["final_val_loss"]
        if not len(branch):
            continue
        rows.append({"arm": r.arm, "seed": int(r.seed), "multiple": r.multiple, "fresh": float(r.final_val_loss),
                     "branch": float(branch.iloc[0]), "difference": float(r.final_val_loss - branch.iloc[0]),
                     "seed_sd": float(same["final_val_loss"].std(ddof=1)) if len(same) > 1 else math.nan})
    return pd.DataFrame(rows)


def budget_table(tables: dict[str, pd.DataFrame], train_tokens: int) -> pd.DataFrame:
    """For reading: per arm and budget, the final loss with its interval, tokens seen and the passes over the
    training text they amount to."""
    table = loss_by_budget(tables)
    table["epochs"] = table["tokens"] / train_tokens
    return table


def budget_findings(tables: dict[str, pd.DataFrame], params, train_tokens: int, gpu: str = "H200") -> list[str]:
    """The budget sweep in sentences whose numbers come from its tables; ``params`` (the sweep's ``GrowthParams``)
    gives the base budget and the two depths compared."""
    out = []
    base_budget, deep, shallow = params.budget, params.target_layers, params.start_layers
    by_budget = budget_table(tables, train_tokens)
    multiples = sorted(by_budget["multiple"].unique())
    seeds = int(by_budget["seeds"].max())
    out.append(f"{by_budget['arm'].nunique()} arms x {seeds} seeds at {len(multiples)} budgets, "
               f"{multiples[0]:g}x to {multiples[-1]:g}x the chapter's ({base_budget * multiples[0]:.3g} to "
               f"{base_budget * multiples[-1]:.3g} FLOPs); the most data reuse is "
               f"{by_budget['epochs'].max():.1f} passes over the training text "
               f"({by_budget.loc[by_budget['epochs'].idxmax(), 'arm']} at {multiples[-1]:g}x).")
    differences = paired_differences(tables)
    for pair, group in differences.groupby("pair", sort=False):
        steps = ", ".join(f"{r.multiple:g}x {r.difference:+.3f} [{r.low:+.3f}, {r.high:+.3f}]"
                          for r in group.itertuples())
        out.append(f"{pair} (final loss, paired by seed; below zero: the first is better): {steps}.")
    cross = crossover(tables)
    cpu = measured_throughput(tables)
    if cross["kind"] == "measured":
        cost = compute_cost(cross["measured"], base_budget, cpu, gpu)
        out.append(f"Measured: from {cross['measured']:g}x the chapter's budget ({cost['flops']:.3g} FLOPs) the "
                   f"{deep}-layer uniform model is better than the {shallow}-layer one, its paired interval below "
                   "zero.")
    elif cross["kind"] == "extrapolated":
        point = cross["extrapolated"]
        cost = compute_cost(point, base_budget, cpu, gpu)
        interval = (f" [{cross['extrapolated_low']:.3g}x, {cross['extrapolated_high']:.3g}x]"
                    if np.isfinite(cross["extrapolated_low"]) else "")
        fitted = fits(tables)
        unfixed = int((fitted["floor"] < 1e-6).sum())
        peak = matmul_peak()[0]
        out.append(f"Not reached within {cross['largest_swept']:g}x. Extrapolated (saturating power laws fitted per "
                   f"seed; {cross['seeds_crossing']} of {cross['seeds']} seeds' fits cross): the uniform model "
                   f"would overtake the shallow one at about {point:.3g}x the chapter's budget{interval}, "
                   f"{cost['flops']:.3g} FLOPs per run: {cost['cpu_hours']:.0f} hours of this CPU at the sweep's "
                   f"{cpu / 1e9:.0f} GFLOP/s ({cpu / 1e9 / peak:.0%} of its stored fp32 matmul peak, {peak:.0f} "
                   f"GFLOP/s), {cost['gpu_hours'] * 60:.0f} minutes on one {gpu} (the book's GPU "
                   f"convention, {gpu_throughput(gpu) / 1e12:.0f} TFLOP/s sustained). An extrapolation, not a "
                   "measurement"
                   + (f": the swept budgets do not pin the loss floor down ({unfixed} of {len(fitted)} fits put it "
                      "at zero), so this continues power laws far beyond the data." if unfixed else "."))
    else:
        out.append(f"Not reached within {cross['largest_swept']:g}x, and no seed's fitted laws cross within "
                   f"{cross['limit']:g}x (the book reads a fit no further than {EXTRAPOLATION_LIMIT:g} times the "
                   f"largest swept budget): on these curves the {shallow}-layer model stays ahead as far as the data "
                   "reach.")
    if {"gstack", "shallow"} <= set(branch_finals(tables)["arm"]):
        grown = crossover(tables, "gstack", "shallow")
        gaps = paired_differences(tables, (("gstack", "shallow"),))
        if grown["kind"] == "measured":
            out.append(f"G_stack overtakes the shallow model from {grown['measured']:g}x (measured).")
        else:
            first, last = gaps["difference"].iloc[0], gaps["difference"].iloc[-1]
            out.append(f"G_stack's gap to the shallow model {'narrows' if abs(last) < abs(first) else 'widens'} from "
                       f"{first:+.3f} nats at {gaps['multiple'].iloc[0]:g}x to {last:+.3f} at "
                       f"{gaps['multiple'].iloc[-1]:g}x; {seed_crossings(grown['per_seed'], grown['limit'])}: the "
                       "budgets where growth could first pay lie beyond this sweep.")
    check = branch_check(tables)
    if len(check):
        parts = ", ".join(f"{r.arm} {r.difference:+.3f} nats (seed spread {r.seed_sd:.3f})" for r in check.itertuples())
        sentence = (f"Branch against fresh run at {check['multiple'].iloc[0]:g}x (the chapter's warm-up of its own "
                    f"budget instead of the base budget's): fresh minus branch {parts}")
        beyond = check[check["difference"].abs() > check["seed_sd"]]
        if len(beyond):
            gap = differences[(differences["pair"] == "uniform - shallow")
                              & (differences["multiple"] == check["multiple"].iloc[0])]["difference"]
            ratio = (beyond["difference"].abs() / beyond["seed_sd"]).max()
            sentence += (f"; for {' and '.join(beyond['arm'])} that is more than the seed spread (up to "
                         f"{ratio:.1f} times it): the warm-up shared with the base budget costs up to "
                         f"{beyond['difference'].abs().max():.3f} nats at larger budgets, and the arms by amounts "
                         f"{check['difference'].max() - check['difference'].min():.3f} nats apart")
            if len(gap):
                sentence += (f", against a uniform - shallow gap of {gap.iloc[0]:+.3f} nats there: the ordering "
                             + ("does not depend on it" if abs(gap.iloc[0]) > 2 * check["difference"].abs().max()
                                else "could depend on it"))
        out.append(sentence + ".")
    return out
