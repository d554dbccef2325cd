"""Chapter 7 in sentences and verdicts."""
from __future__ import annotations

import pandas as pd

from ..core import rules as v
from ..core.stats import t_interval
from .analysis import compute_to_target, final_losses, flops_to_target, loss_at_fraction, targets, wall_at_uniform_steps
from .params import GrowthParams

PAPER = {"dev_loss": 0.127, "uniform_loss": 0.599, "loss_ratio": 4.7, "wall_time_saving": 0.13, "cost_saving": 0.54}


def paper_claims(tables: dict[str, pd.DataFrame], params: GrowthParams):
    """4.7x lower loss; 13% less wall time; ~54% cheaper; better than uniform at half the budget. Each for the
    developmental arm against uniform, with intervals over seeds; each judged by a rule of ``core.rules`` (a ratio
    is compared as ratio - 1, so "better" has a sign)."""
    curves, runs = tables["curves"], tables["runs"]
    claims = []
    if not {"uniform", "developmental"} <= set(runs["arm"]):
        return claims
    final = runs.pivot(index="seed", columns="arm", values="final_val_loss")
    ratio = t_interval(final["uniform"] / final["developmental"])
    diff = t_interval(final["developmental"] - final["uniform"])
    claims.append(v.Claim("developmental vs uniform: validation loss at matched FLOPs",
                        f"{PAPER['dev_loss']} vs {PAPER['uniform_loss']} ({PAPER['loss_ratio']}x lower, equal steps)",
                        f"{final['developmental'].mean():.3f} vs {final['uniform'].mean():.3f} nats/token; ratio "
                        f"{ratio[0]:.3f} [{ratio[1]:.3f}, {ratio[2]:.3f}]",
                        _ratio_verdict(ratio),
                        f"difference {diff[0]:+.3f} [{diff[1]:+.3f}, {diff[2]:+.3f}] nats over {len(final)} seeds"
                        + (f"; shallow control {final['shallow'].mean():.3f}" if "shallow" in final else ""),
                        "comparison"))
    equal = wall_at_uniform_steps(curves, params.budget_steps)
    if {"uniform", "developmental"} <= set(equal.get("arm", [])):
        both = equal.pivot(index="seed", columns="arm", values="wall_s")
        saving = t_interval(1 - both["developmental"] / both["uniform"])
        losses = equal.pivot(index="seed", columns="arm", values="val_loss")
        eq_ratio = t_interval(losses["uniform"] / losses["developmental"])
        claims.append(v.Claim("the paper's protocol (equal steps): loss ratio uniform / developmental",
                              f"{PAPER['loss_ratio']}x", f"{eq_ratio[0]:.3f} [{eq_ratio[1]:.3f}, {eq_ratio[2]:.3f}]",
                              _ratio_verdict(eq_ratio), f"after {params.budget_steps} steps each", "comparison"))
        claims.append(v.Claim("wall time at equal steps", f"{PAPER['wall_time_saving']:.0%} less",
                              f"saving {saving[0]:+.0%} [{saving[1]:+.0%}, {saving[2]:+.0%}] (negative: slower)",
                              v.comparison(*saving, paper_size=PAPER["wall_time_saving"]),
                              "measured wall time on this machine", "comparison"))
    reach = compute_to_target(curves)
    final_target = reach[reach["target"] == "uniform final"].set_index("arm")
    if "developmental" in final_target.index:
        r = final_target.loc["developmental"]
        reached = r.reached == r.seeds
        control = (f"; the shallow control saves {final_target.loc['shallow', 'savings']:.0%} "
                   f"[{final_target.loc['shallow', 'savings_low']:.0%}, "
                   f"{final_target.loc['shallow', 'savings_high']:.0%}]"
                   if "shallow" in final_target.index else "")
        claims.append(v.Claim("training cost to reach the uniform arm's final loss",
                              f"~{PAPER['cost_saving']:.0%} lower",
                            (f"savings {r.savings:.0%} [{r.savings_low:.0%}, {r.savings_high:.0%}], speed-up "
                             f"{r.speedup:.2f}x" if r.reached else "") + f"; reached by {r.reached} of {r.seeds} seeds",
                            v.comparison(r.savings, r.savings_low, r.savings_high, paper_size=PAPER["cost_saving"])
                            if reached else v.qualitative(False),
                            "FLOPs, paired by seed, never imputed; every seed must reach the target" + control,
                            "comparison"))
    half = loss_at_fraction(curves[curves["arm"] == "developmental"], 0.5)
    uniform_final = final["uniform"]
    margin = t_interval([half[("developmental", s)] - uniform_final[s] for s in uniform_final.index
                         if ("developmental", s) in half.index])
    claims.append(v.Claim("developmental at 50% of the budget beats uniform at 100%", "yes",
                          f"{margin[0]:+.3f} [{margin[1]:+.3f}, {margin[2]:+.3f}] nats (developmental at half minus "
                          "uniform final)", v.comparison(*margin, paper_direction=-1),
                          "the difference's interval must lie below zero", "comparison"))
    return claims


def _ratio_verdict(ratio) -> str:
    """uniform / developmental loss against the paper's 4.7x: compared as ratio - 1 (above zero: better)."""
    return v.comparison(ratio[0] - 1, ratio[1] - 1, ratio[2] - 1, paper_size=PAPER["loss_ratio"] - 1)


def findings(tables: dict[str, pd.DataFrame], params: GrowthParams, specimen_name: str = "") -> list[str]:
    """What the runs say, in sentences whose numbers come from the tables. ``specimen_name`` is part of the chapter
    protocol only: growth trains its own models, and the sentences name them."""
    runs = tables["runs"]
    losses = final_losses(runs).set_index("arm")
    best = losses["final_loss"].idxmin()
    out = [f"{len(runs)} runs ({runs['arm'].nunique()} arms x {runs['seed'].nunique()} seeds) on a budget of "
           f"{params.budget:.3g} FLOPs each; the lowest final validation loss is {best}'s "
           f"({losses.loc[best, 'final_loss']:.3f} nats per token)."]
    for arm in losses.index:
        if arm == "uniform":
            continue
        r = losses.loc[arm]
        side = "below" if r.diff_high < 0 else "above" if r.diff_low > 0 else "not distinguishable from"
        out.append(f"{arm}: {r.final_loss:.3f} nats, {r.minus_uniform:+.3f} [{r.diff_low:+.3f}, {r.diff_high:+.3f}] "
                   f"against uniform ({side} it).")
    events = tables.get("events")
    if events is not None and len(events):
        goal = targets(tables["curves"])
        goal = goal[goal["target"] == "uniform final"].set_index("seed")["target_loss"]
        early = []
        for (arm, seed), curve in tables["curves"].groupby(["arm", "seed"]):
            first = events[(events["arm"] == arm) & (events["seed"] == seed)]["flops"]
            if len(first) and seed in goal.index and flops_to_target(curve, goal[seed]) < first.min():
                early.append((arm, seed))
        grown = events.groupby("arm")["seed"].nunique()
        out.append(f"{len(early)} of {int(grown.sum())} growing runs reached their seed's final uniform loss before "
                   f"their first growth event, i.e. while still {params.start_layers} layers deep: at this budget "
                   "the deep model is undertrained, and the growing arms' advantage is being shallow, as the "
                   "shallow control shows.")
    if {"developmental", "random_source"} <= set(losses.index):
        pair = runs.pivot(index="seed", columns="arm", values="final_val_loss")
        diff = t_interval(pair["developmental"] - pair["random_source"])
        out.append(f"Cloning the most important layers instead of random ones changes the final loss by {diff[0]:+.3f} "
                   f"[{diff[1]:+.3f}, {diff[2]:+.3f}] nats.")
    return out
