"""Chapter 6 in sentences and verdicts."""
from __future__ import annotations

import pandas as pd

from ..core import rules as v
from .analysis import per_layer, rank_correlations, sham_drift, steps_label
from .params import RecoveryParams

PAPER = {"critical_layer": 11, "budget_steps": 200}


def paper_claims(tables: dict[str, pd.DataFrame], params: RecoveryParams | None = None,
                 paper_one_based: bool = False):
    """L11 beyond 200 steps; redundant and output layers recover almost at once; recovery correlates with
    importance. ``tables["importance"]`` is chapter 2's classified table. Each judged by a rule of
    ``core.rules``."""
    importance_table = tables["importance"]
    quick_steps = (params or RecoveryParams()).quick_steps
    runs = tables["runs"]
    layers = per_layer(runs)
    budget = int(runs["budget"].iloc[0])
    claims = []
    critical = PAPER["critical_layer"] - (1 if paper_one_based else 0)
    seeds = runs[(runs["layer"] == critical) & (runs["kind"] == "damaged")]
    if not seeds.empty:
        never = int((~seeds["recovered"]).sum())
        labels = ", ".join(steps_label(r) for r in seeds.itertuples())
        claims.append(v.Claim(f"L{critical} does not recover within {budget} steps",
                              f"> {PAPER['budget_steps']} steps", f"steps to recover per noise seed: {labels}",
                              v.share(never, len(seeds)), f"{never} of {len(seeds)} seeds did not recover", "share"))
    classes = dict(zip(importance_table["layer"], importance_table["class"]))
    easy = layers[layers["layer"].map(classes).isin(["connective tissue", "output processor"])]
    if not easy.empty:
        fast = easy["recovered"] & (easy["steps_to_recover"] <= quick_steps)
        listed = ", ".join(f"L{r.layer} ({classes[r.layer]}): {steps_label(r)}" for r in easy.itertuples())
        claims.append(v.Claim("redundant and output layers recover almost at once", "almost at once", listed,
                              v.share(int(fast.sum()), len(fast)),
                              f"'almost at once': within {quick_steps} steps; {int(fast.sum())} of {len(fast)} did",
                              "share"))
    correlations = rank_correlations(layers, importance_table)
    area = correlations[(correlations["recovery measure"] == "area under excess NLL")].set_index("correlation")
    plain, partial = area.loc["Spearman"], area.loc["partial Spearman | initial damage"]
    judged = [v.comparison(r.rho, r.ci_low, r.ci_high, paper_direction=1) for r in (plain, partial)]
    claims.append(v.Claim("recovery speed correlates with importance", "yes",
                          f"Spearman(area, importance) {plain.rho:+.2f} [{plain.ci_low:+.2f}, {plain.ci_high:+.2f}]; "
                          f"given initial damage {partial.rho:+.2f} [{partial.ci_low:+.2f}, {partial.ci_high:+.2f}]",
                          v.weakest(*judged), f"{len(layers)} layers; both intervals must lie above zero",
                          "comparison"))
    return claims


def findings(tables: dict[str, pd.DataFrame], params: RecoveryParams | None = None,
             specimen_name: str = "the specimen") -> list[str]:
    """What the stored runs say, in sentences whose every number comes from the tables (``tables["importance"]``:
    chapter 2's classified table)."""
    importance_table = tables["importance"]
    runs, curves = tables["runs"], tables["curves"]
    layers = per_layer(runs)
    budget = int(runs["budget"].iloc[0])
    tolerance = float(runs["tolerance_nll"].iloc[0])
    damaged = runs[runs["kind"] == "damaged"]
    out = [f"On {specimen_name}, {len(layers)} layers were damaged ({len(damaged)} runs with their noise seeds) to an "
           f"initial NLL increase of {damaged['initial_excess_nll'].min():.2f}-"
           f"{damaged['initial_excess_nll'].max():.2f} "
           f"nats and fine-tuned for {budget} steps; recovered means within {tolerance:.3f} nats of the baseline."]
    recovered = layers[layers["recovered"]]
    never = layers[~layers["recovered"]]
    if not recovered.empty:
        fastest = recovered.loc[recovered["steps_to_recover"].idxmin()]
        slowest = recovered.loc[recovered["steps_to_recover"].idxmax()]
        out.append(f"{len(recovered)} of {len(layers)} layers recovered within the budget, the fastest "
                   f"L{fastest.layer} "
                   f"after {fastest.steps_to_recover:.0f} steps and the slowest L{slowest.layer} after "
                   f"{slowest.steps_to_recover:.0f}" + (f"; {', '.join(f'L{l}' for l in never['layer'])} did not "
                                                        f"(> {budget} steps)." if not never.empty else "."))
    else:
        out.append(f"No layer recovered within {budget} steps.")
    best = layers.loc[layers["recovered_fraction"].idxmax()]
    worst = layers.loc[layers["recovered_fraction"].idxmin()]
    out.append(f"By the end of the budget, the share of the damage undone ranged from {worst.recovered_fraction:.0%} "
               f"(L{worst.layer}) to {best.recovered_fraction:.0%} (L{best.layer}).")
    shams = sham_drift(runs, curves)
    if not shams.empty:
        moves = ", ".join(f"L{r.layer} {r.final_move_nll:+.3f}" for r in shams.itertuples())
        out.append(f"Fine-tuning alone (the sham, no noise) moved the NLL by {moves} nats by the end "
                   f"({'within' if shams['within_tolerance'].all() else 'beyond'} the recovery tolerance).")
    correlations = rank_correlations(layers, importance_table).set_index(["recovery measure", "correlation"])
    area = correlations.loc[("area under excess NLL", "Spearman")]
    out.append(f"The area under the excess-NLL curve and chapter 2's importance have a Spearman correlation of "
               f"{area.rho:+.2f} (95% interval {area.ci_low:+.2f} to {area.ci_high:+.2f}, over {int(area.layers)} "
               f"layers).")
    return out
