"""Chapter 6 in sentences and verdicts: recovery judged against the sham of the same layer, under both protocols."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core import rules as v
from ..core.display import Vocabulary
from ..core.params import PaperLayers
from .analysis import (
    MAIN_CRITERION,
    MIN_LAYERS_FOR_INTERVAL,
    SENSITIVITY,
    Criterion,
    at_sigma,
    judged_layers,
    judged_runs,
    protocol_label,
    rank_correlations,
    sham_drift,
    steps_label,
)
from .params import RecoveryParams

# this chapter's words for its tables' columns (and the intervals its estimates carry): ``show_table(t)``
show_table = Vocabulary(
    {"sigma": "noise σ", "noise_seed": "noise seed", "initial_excess_nll": "damage (nats)",
     "final_excess_nll": "left at the end (nats)", "area_excess_nll": "area (nats × steps)",
     "recovered_fraction": "damage undone", "steps": "steps to recover", "largest_move_nll": "largest |move| (nats)",
     "final_move_nll": "final move (nats)", "tolerance_nll": "tolerance (nats)", "protocol": "protocol"},
    {"recovered_fraction": ("fraction_low", "fraction_high")})

PAPER = {"critical_layer": 11, "budget_steps": 200}
RAW = Criterion("baseline", MAIN_CRITERION.share)  # the same share, without the sham's drift taken out
SHAM = "sham of the same layer"
EXPERIMENT = "single layers damaged with noise, then fine-tuned"  # the one experiment behind chapter 6's rows


def critical_layer(n_layers: int, paper_one_based: bool = False) -> int:
    """The paper's L11, at the same relative depth of a specimen of ``n_layers`` (itself on the paper's 30)."""
    return PaperLayers((PAPER["critical_layer"] - (1 if paper_one_based else 0),)).at_depth(n_layers)[0]


def main_protocol(params: RecoveryParams) -> str:
    return "matched" if params.damage == "matched" else "fixed"


def _protocols(judged: pd.DataFrame) -> list[tuple[str, float | None]]:
    """(protocol, sigma) of every protocol in a judged table: matched once, fixed once per sigma."""
    out = []
    for protocol in dict.fromkeys(judged["protocol"]):
        if protocol == "matched":
            out.append(("matched", None))
        else:
            out += [("fixed", float(s)) for s in sorted(judged.loc[judged["protocol"] == protocol, "sigma"].unique())]
    return out


def _layers(judged: pd.DataFrame, protocol: str, sigma: float | None) -> pd.DataFrame:
    layers = judged_layers(judged, protocol)
    return layers[at_sigma(layers, sigma)]


def _critical(judged: pd.DataFrame, protocol: str, sigma, critical: int) -> pd.DataFrame:
    return judged[(judged["layer"] == critical) & (judged["protocol"] == protocol) & at_sigma(judged, sigma)]


def _quick(layers: pd.DataFrame, classes: dict, quick_steps: int) -> tuple[int, int, str]:
    easy = layers[layers["layer"].map(classes).isin(["connective tissue", "output processor"])]
    fast = easy["recovered"] & (easy["steps_to_recover"] <= quick_steps)
    listed = ", ".join(f"L{r.layer}: {steps_label(r)}" for r in easy.itertuples())
    return int(fast.sum()), len(easy), listed


def _quick_caveats(layers: pd.DataFrame, classes: dict, params: RecoveryParams) -> str:
    """What "almost at once" is judged on beyond its counts: a class of the paper's that has no layer here (its
    half of the claim goes untested), and a window that falls within the learning-rate warm-up (the optimiser has
    not yet reached its rate)."""
    run = set(layers["layer"].map(classes))
    missing = [name for name in ("connective tissue", "output processor") if name not in run]
    out = (f"; no layer run here is classed {' or '.join(missing)}, so that half of the claim is untested"
           if missing else "")
    window = min(params.quick_steps, max(params.warmup_steps, 0))
    if window:  # LambdaLR's factor at step s is min(1, (s + 1) / (warmup + 1))
        mean_rate = np.mean([min(1.0, (step + 1) / (params.warmup_steps + 1)) for step in range(params.quick_steps)])
        out += (f"; the first {window} of its {params.quick_steps} steps are the learning-rate warm-up, so the "
                f"window trains at {mean_rate:.0%} of the rate on average")
    return out


def paper_claims(tables: dict[str, pd.DataFrame], params: RecoveryParams | None = None,
                 paper_one_based: bool = False, criterion: Criterion = MAIN_CRITERION):
    """L11 beyond 200 steps; redundant and output layers recover almost at once; recovery correlates with
    importance. ``tables["importance"]`` is chapter 2's classified table. Every claim is measured under the main
    protocol (``params.damage``) as the paper's protocol measures it, against the intact model (``criterion``'s
    share, raw), and held to the sham of the same layer: recovered means ``MAIN_CRITERION``, at least 90% of the
    initial damage undone against the sham at the same step (paired interval over blocks). L11's claim, a
    contrast, is held to every other layer run as well. The fixed-noise protocol's verdicts are in the note.
    ``criterion`` replaces the main criterion (the raw one keeps its share), as ``criterion_sensitivity`` does."""
    params = params or RecoveryParams()
    importance_table = tables["importance"]
    classes = dict(zip(importance_table["layer"], importance_table["class"]))
    main, raw = judged_runs(tables, criterion), judged_runs(tables, Criterion("baseline", criterion.share))
    protocol = main_protocol(params)
    sigma = None if protocol == "matched" else float(params.sigmas[0])
    others = [(p, s) for p, s in _protocols(main) if (p, s) != (protocol, sigma)]
    budget = int(main["budget"].iloc[0])
    critical = critical_layer(len(importance_table), paper_one_based)
    claims = []

    def elsewhere(verdict_of) -> str:
        return "; ".join(f"{protocol_label(p, s or 0)}: {verdict_of(p, s)}" for p, s in others)

    def l11_verdict(judged, p, s):
        runs = _critical(judged, p, s, critical)
        return v.share(int((~runs["recovered"]).sum()), len(runs)) if len(runs) else v.NOT_COMPARABLE

    # as every claim of this chapter: measured as the paper's protocol measures it (against the intact model, no
    # sham), then held to the sham of the same layer; this one also to every other layer run (it is a contrast)
    raw_seeds, seeds = _critical(raw, protocol, sigma, critical), _critical(main, protocol, sigma, critical)
    if len(raw_seeds):
        never_raw, never = int((~raw_seeds["recovered"]).sum()), int((~seeds["recovered"]).sum())
        claims.append(v.Claim.held_to(
            f"L{critical} does not recover within {budget} steps", f"> {PAPER['budget_steps']} steps",
            "steps to recover per noise seed: " + ", ".join(steps_label(r) for r in raw_seeds.itertuples())
            + "; share undone at the end " + _shares(raw_seeds),
            v.share(never_raw, len(raw_seeds)),
            f"L{critical} is {_class_words(classes.get(critical))} in chapter 2's map of this specimen; "
            f"{never_raw} of {len(raw_seeds)} seeds did not recover ({raw_label(criterion)}); against the sham: "
            + ", ".join(steps_label(r) for r in seeds.itertuples()) + f", share undone {_shares(seeds)}"
            + _distinctive(_layers(main, protocol, sigma), critical)
            + (f"; {elsewhere(lambda p, s: l11_verdict(raw, p, s))}" if others else ""), "share",
            [v.ControlCheck(SHAM, v.share(never, len(seeds)),
                            f"against the sham of the same layer, {len(seeds) - never} of {len(seeds)} seeds "
                            "recover"),
             _distinctive_check(_layers(main, protocol, sigma), critical)]))

    def quick_verdict(judged, p, s):
        holds, total, _ = _quick(_layers(judged, p, s), classes, params.quick_steps)
        return v.share(holds, total)

    holds, total, listed = _quick(_layers(main, protocol, sigma), classes, params.quick_steps)
    if total:
        raw_holds, _, raw_listed = _quick(_layers(raw, protocol, sigma), classes, params.quick_steps)
        claims.append(v.Claim.held_to(  # measured raw, as the paper would; the sham's steps in the note
            "redundant and output layers recover almost at once", "almost at once", raw_listed,
            v.share(raw_holds, total),
            f"'almost at once': within {params.quick_steps} steps; raw {raw_holds} of {total}, against the sham "
            f"{holds} of {total} ({listed})" + _quick_caveats(_layers(main, protocol, sigma), classes, params)
            + (f"; {elsewhere(lambda p, s: quick_verdict(raw, p, s))}" if others else ""),
            "share", [v.ControlCheck(SHAM, v.share(holds, total),
                                     f"once the sham's own drift is taken out, {holds} of {total} do")]))

    def correlation(judged, p, s):
        layers = _layers(judged, p, s)
        table = rank_correlations(layers, importance_table).set_index(["recovery measure", "correlation"])
        return table.loc[("area under excess NLL", "Spearman")], table.loc[
            ("area under excess NLL", "partial Spearman, given initial damage")]

    def correlation_verdict(judged, p, s):
        plain, partial = correlation(judged, p, s)
        if plain.layers < MIN_LAYERS_FOR_INTERVAL:  # its intervals are shown, never trusted to settle a sign
            return v.INCONCLUSIVE
        return v.weakest(*[v.comparison(r.rho, r.ci_low, r.ci_high, paper_direction=1) for r in (plain, partial)])

    def rho_text(r) -> str:  # no interval over too few layers: the power table shows none either
        return f"{r.rho:+.2f}" + (f" [{r.ci_low:+.2f}, {r.ci_high:+.2f}]" if r.layers >= MIN_LAYERS_FOR_INTERVAL
                                  else "")

    # measured as the paper would (the area above the intact model), then held to the sham of the same layer
    raw_plain, raw_partial = correlation(raw, protocol, sigma)
    plain, partial = correlation(main, protocol, sigma)
    claims.append(v.Claim.held_to(
        "recovery speed correlates with importance", "yes",
        f"Spearman(area, importance) {rho_text(raw_plain)}; given initial damage {rho_text(raw_partial)}",
        correlation_verdict(raw, protocol, sigma),
        f"area under the excess over the intact model; against the sham: {rho_text(plain)}, given initial "
        f"damage {rho_text(partial)}; both intervals must lie above zero"
        + (f"; over {int(raw_plain.layers)} layers, fewer than the {MIN_LAYERS_FOR_INTERVAL} a bootstrap over "
           "layers needs to settle a sign: no interval is shown, and the verdict is inconclusive" if raw_plain.layers <
           MIN_LAYERS_FOR_INTERVAL else f"; over {int(raw_plain.layers)} layers, "
           f"{v.power_text(raw_plain.ci_low, raw_plain.ci_high, '{:.2f}', bound=1.0)}; the interval is over "
           "layers, so more noise seeds cannot narrow it, only more layers can (the paper profile runs every one)"
           if raw_plain.ci_low <= 0 <= raw_plain.ci_high else "")
        + (f"; {elsewhere(lambda p, s: correlation_verdict(raw, p, s))}" if others else ""), "comparison",
        [v.ControlCheck(SHAM, correlation_verdict(main, protocol, sigma),
                        f"against the sham of the same layer: Spearman {rho_text(plain)}, given initial damage "
                        f"{rho_text(partial)}")]))
    return v.in_experiment(EXPERIMENT, claims)


def criterion_sensitivity(tables: dict[str, pd.DataFrame], params: RecoveryParams | None = None,
                          paper_one_based: bool = False, criteria=SENSITIVITY) -> pd.DataFrame:
    """Every claim of ``paper_claims`` under each recovery criterion of ``criteria`` (the share of the damage that
    must be undone, or the paired-interval rule; against the sham or the intact baseline): the paper says neither
    what "recovered" means nor what it is measured against. Tidy (``core.rules.sensitivity``); the curves are
    re-judged, nothing is retrained."""
    return v.sensitivity(lambda c: paper_claims(tables, params, paper_one_based, c), criteria, "criterion",
                         MAIN_CRITERION)


def _class_words(cls) -> str:
    """A layer's class in chapter 2's map, as a clause ("classed 'undetermined'")."""
    return f"classed '{cls}'" if isinstance(cls, str) and cls else "not classed"


def _shares(runs: pd.DataFrame) -> str:
    """Each run's share of the damage undone at the end of the budget, with its paired interval over blocks."""
    return ", ".join(f"{r.recovered_fraction:.0%} [{r.fraction_low:.0%}, {r.fraction_high:.0%}]"
                     for r in runs.itertuples())


def raw_label(criterion: Criterion) -> str:
    """The raw twin of ``criterion``, in words: the same rule, against the intact model."""
    return Criterion("baseline", criterion.share).label


def _distinctive_check(layers: pd.DataFrame, critical: int) -> v.ControlCheck:
    """The paper's claim is a contrast with layers that recover: it singles L11 out only where other layers run
    do recover (not discriminating where none does; in part where at least half fail as well)."""
    others = layers[layers["layer"] != critical]
    failed = int((~others["recovered"]).sum())
    verdict = (v.NOT_COMPARABLE if others.empty else v.NOT_DISCRIMINATING if failed == len(others)
               else v.PARTLY if 2 * failed >= len(others) else v.REPRODUCED)
    return v.ControlCheck("every other layer run (held to its sham)", verdict,
                          f"{failed} of {len(others)} other layers do not recover either")


def _distinctive(layers: pd.DataFrame, critical: int) -> str:
    """Whether the critical layer's failure to recover sets it apart: how many of the other layers run also
    failed (the paper's claim is a contrast with layers that recover)."""
    others = layers[layers["layer"] != critical]
    if others.empty:
        return ""
    failed = int((~others["recovered"]).sum())
    return (f"; {failed} of {len(others)} other layers did not recover either"
            + (": not distinctive of this layer" if failed == len(others) else ""))


def _drift_credited(main: pd.DataFrame, raw: pd.DataFrame, shams: pd.DataFrame, target_nats: float) -> list[str]:
    """Per protocol, where the raw rule (against the intact baseline) counts more layers recovered than the same
    rule held to the sham: the layers whose "recovery" is fine-tuning's own drift."""
    out = []
    for p, s in _protocols(main):
        held, plain = _layers(main, p, s), _layers(raw, p, s)
        credited = sorted(set(plain.loc[plain["recovered"], "layer"]) - set(held.loc[held["recovered"], "layer"]))
        if not credited:
            continue
        damage = held.loc[held["layer"].isin(credited), "initial_excess_nll"]
        drift = shams.loc[shams["layer"].isin(credited), "final_move_nll"].abs()
        out.append(f"{protocol_label(p, s or 0, target_nats)}: against the intact baseline instead of the sham (the "
                   f"same rule), {int(plain['recovered'].sum())} of {len(plain)} layers recover (L"
                   + ", L".join(str(layer) for layer in credited) + f"), against {int(held['recovered'].sum())} "
                   f"held to the sham. Their damage ({damage.min():.2f}-{damage.max():.2f} nats) is of the order of "
                   f"the improvement fine-tuning brings their intact layer ({drift.min():.2f}-{drift.max():.2f} "
                   "nats): the raw rule credits that improvement as recovery.")
    return out


def _fixed_contrast(raw: pd.DataFrame, critical: int, target_nats: float) -> list[str]:
    """Per fixed-noise protocol, the paper's contrast as its protocol would show it (raw, one noise level for every
    layer) beside how far each layer starts: one sigma damages layers unequally, so a layer that starts further
    away has further to come back whatever its role."""
    out = []
    for p, s in _protocols(raw):
        if p != "fixed":
            continue
        layers = _layers(raw, p, s)
        if critical not in set(layers["layer"]) or len(layers) < 2:
            continue
        damage = layers.set_index("layer")["initial_excess_nll"]
        others = layers[layers["layer"] != critical]
        rank = int((damage > damage[critical]).sum()) + 1
        place = "the largest" if rank == 1 else f"the {_ordinal(rank)} largest"
        recovered = bool(layers.loc[layers["layer"] == critical, "recovered"].iloc[0])
        back = int(others["recovered"].sum())
        if not recovered and back:
            judged = (f"Judged raw, as the paper would, L{critical} does not recover within the budget while {back} "
                      f"of the {len(others)} others do: at one noise level that contrast mixes the layer with how "
                      "far it starts, which the matched protocol removes.")
        elif not recovered:
            judged = (f"Judged raw, as the paper would, neither L{critical} nor any of the {len(others)} others "
                      "recovers within the budget: at this noise level there is no contrast to explain.")
        else:
            judged = (f"Judged raw, as the paper would, L{critical} recovers within the budget, as {back} of the "
                      f"{len(others)} others do.")
        out.append(f"{protocol_label(p, s or 0, target_nats)}: one noise level damages the layers unequally: "
                   f"L{critical} starts from {damage[critical]:.2f} nats, {place} of the {len(layers)} layers run "
                   f"(the others {others['initial_excess_nll'].min():.2f}-{others['initial_excess_nll'].max():.2f}). "
                   + judged)
    return out


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def findings(tables: dict[str, pd.DataFrame], params: RecoveryParams | None = None,
             specimen_name: str = "the specimen", fixed_note: bool = True, paper_one_based: bool = False
             ) -> list[str]:
    """What the stored runs say, in sentences whose every number comes from the tables (``tables["importance"]``:
    chapter 2's classified table). ``fixed_note``: say so where the fixed-noise protocol was not run (False for a
    design that leaves it out on purpose, as the powered sweep does). ``paper_one_based``: which layer is the
    paper's L11 (``critical_layer``)."""
    params = params or RecoveryParams()
    importance_table = tables["importance"]
    runs = tables["runs"]
    main = judged_runs(tables, MAIN_CRITERION)
    protocol = main_protocol(params)
    sigma = None if protocol == "matched" else float(params.sigmas[0])
    layers = _layers(main, protocol, sigma)
    budget = int(runs["budget"].iloc[0])
    damaged = runs[(runs["kind"] == "damaged") & (runs["protocol"] == protocol)]
    low, high = damaged["initial_excess_nll"].min(), damaged["initial_excess_nll"].max()
    out = [f"On {specimen_name}, {len(layers)} layers were damaged ({len(damaged)} runs of the "
           f"{protocol_label(protocol, sigma or 0, params.target_nats)} protocol with their noise seeds) to an "
           f"initial NLL increase of {low:.2f}-{high:.2f} nats and fine-tuned for {budget} steps of "
           f"{params.batch_size} x {params.train_len} tokens ({budget * params.batch_size * params.train_len:,} "
           f"training tokens at lr {params.lr:g}, training "
           f"{'the damaged layer alone' if params.trainable == 'layer' else 'the damaged layer and those above'})"
           "; recovered "
           f"means {MAIN_CRITERION.label} (the lower end of the paired interval over blocks)."]
    for p, s in _protocols(main):
        mine = _layers(main, p, s)
        back = mine[mine["recovered"]]
        label = protocol_label(p, s or 0, params.target_nats)
        runs_of = main[(main["protocol"] == p) & at_sigma(main, s)]["recovered_fraction"]
        # the per-layer range (each layer's mean over its noise seeds) and the per-run range the tables list
        undone = (f"{mine['recovered_fraction'].min():.0%} to {mine['recovered_fraction'].max():.0%} per layer "
                  f"(the mean over its noise seeds; single runs {runs_of.min():.0%} to {runs_of.max():.0%})")
        if back.empty:
            out.append(f"{label}: no layer recovered within {budget} steps; the share of the damage undone ranged "
                       f"from {undone}, from an initial damage of "
                       f"{mine['initial_excess_nll'].min():.2f}-{mine['initial_excess_nll'].max():.2f} nats.")
        else:
            fastest = back.loc[back["steps_to_recover"].idxmin()]
            out.append(f"{label}: {len(back)} of {len(mine)} layers recovered, the fastest L{fastest.layer} after "
                       f"{fastest.steps_to_recover:.0f} steps; undone at the end: {undone}.")
    if fixed_note and protocol == "matched" and not (runs["protocol"] == "fixed").any():
        out.append("The fixed-noise protocol (one sigma for every layer, the paper's likely design) is not in these "
                   "tables: its verdicts are not shown on this page (parameters with `sigmas=(0.25, 1.0)` run it "
                   "beside the matched sweep).")
    shams = sham_drift(runs, tables["curves"])
    raw = judged_runs(tables, RAW)
    if not shams.empty:
        improved = shams[shams["final_move_nll"] < 0]
        # what the sham means depends on its sign: fine-tuning can teach the intact model or disturb it
        if len(improved) == len(shams):
            meaning = ("without the sham, part of every \"recovery\" is the speeches teaching the intact model, "
                       "and raw recovery looks faster than it is")
        elif len(improved) * 2 > len(shams):
            meaning = (f"without the sham, part of the \"recovery\" of the {len(improved)} layers whose sham "
                       "improved is the speeches teaching the intact model (raw recovery looks faster than it is "
                       "there, slower where the sham got worse)")
        elif improved.empty:
            meaning = ("fine-tuning alone makes the intact model worse on these blocks, so raw recovery looks slower "
                       "than the damage's own repair; the sham-corrected verdict removes that drift")
        else:
            meaning = "the drift has no common sign, so only the sham of the same layer corrects a run"
        out.append(f"Fine-tuning alone (the sham of each layer, no noise) moved the NLL by "
                   f"{shams['final_move_nll'].min():+.3f} to {shams['final_move_nll'].max():+.3f} nats by step "
                   f"{budget} "
                   f"({len(improved)} of {len(shams)} improved): {meaning}.")
        out += _drift_credited(main, raw, shams, params.target_nats)
    out += _fixed_contrast(raw, critical_layer(len(importance_table), paper_one_based), params.target_nats)
    correlations = rank_correlations(layers, importance_table).set_index(["recovery measure", "correlation"])
    for measure in ("steps to recover", "area under excess NLL"):
        r = correlations.loc[(measure, "Spearman")]
        if not np.isfinite(r.rho):
            out.append(f"{measure.capitalize()} cannot be ranked against chapter 2's importance: every layer is "
                       f"censored at > {budget} steps (all tied), so its correlation is undefined; the area under "
                       "the excess-NLL curve, never censored, carries the comparison.")
            continue
        direction = (f"too few layers for the interval to settle a sign (fewer than {MIN_LAYERS_FOR_INTERVAL})"
                     if r.layers < MIN_LAYERS_FOR_INTERVAL else
                     "the paper's direction (important layers recover more slowly)" if r.ci_low > 0 else
                     "against the paper's direction (important layers recover faster)" if r.ci_high < 0 else
                     "with a sign the interval does not settle")
        out.append(f"{measure.capitalize()} and chapter 2's importance: Spearman {r.rho:+.2f} (95% interval "
                   f"{r.ci_low:+.2f} to {r.ci_high:+.2f}, {int(r.layers)} layers), {direction}.")
    return out
