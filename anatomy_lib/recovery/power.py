"""Chapter 6 with the power to see recovery: the noise seed as the unit of replication, twice the evaluation
blocks, a grid of learning rates and twice the paper's budget.

The chapter's quick sweep (``sweep``) answers the paper at its own budget (200 steps), with one noise seed for most
layers, 8 evaluation blocks and one learning rate. Its two noise seeds of L11 gave intervals further apart than
the spread between layers, so an interval over blocks understates the uncertainty of a layer's recovery, and one
rate cannot say whether "steps to recover" measures the layer or the optimiser. This design runs every layer of a
sweep

- with ``seeds`` noise seeds (the unit of replication: a layer is summarised over its seeds),
- each layer with its sham (the same fine-tuning without noise),
- on ``eval_blocks`` evaluation blocks (chapter 2's 16 at quick: ``block_power`` computes, from the quick sweep,
  that the block-level uncertainty is already well under the spread between noise seeds),
- at every learning rate of ``lrs``, for ``steps`` optimiser steps,

with the damage matched once per (layer, noise seed) and shared by every rate. Each rate is one
``RecoveryParams`` sweep (``PowerDesign.sweeps``) stored on its own, so the chapter reads each with the same
analysis as the quick sweep. Runs are kept as they finish (``results.RunCheckpoints``), in the order of
``PowerDesign.schedule`` (seed 0 and the shams at every rate first, so a partial result already holds the
learning-rate grid; then the chapter's rate, so the sweep its verdicts read is complete soonest), and several
workers can share them (``locks.claimed``): ``python -m anatomy_lib recovery-power``.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..core import rules as v
from ..core.checks import positive_int, positive_number
from ..core.lab import NotStored
from ..core.locks import claimed, exclusive
from ..core.results import ResultStore
from ..core.stats import t_interval
from ..importance.compute import ImportanceParams, importance
from .analysis import (
    MAIN_CRITERION,
    MIN_LAYERS_FOR_INTERVAL,
    Criterion,
    judged_layers,
    judged_runs,
    rank_correlations,
)
from .params import RecoveryParams
from .report import PAPER, paper_claims, show_table
from .sweep import RecoveryContext, baseline_table, recovery_run, run_tables, runs_seconds
from .training import matched_sigma

POWER_LRS = (1e-4, 3e-4, 1e-3)
POWER_COMMAND = "python -m anatomy_lib recovery-power"  # runs the sweep, apart from the chapter (hours on a CPU)


@dataclass(frozen=True)
class PowerDesign:
    """What the powered sweep adds to a chapter-6 sweep (its layers, damage and optimiser otherwise kept)."""

    lrs: tuple[float, ...] = field(default=POWER_LRS, metadata={"help": "learning rates, one sweep each"})
    seeds: int = field(default=3, metadata={"help": "noise seeds per layer (the unit of replication)"})
    steps: int = field(default=400, metadata={"help": "fine-tuning budget in optimiser steps"})
    eval_blocks: int = field(default=16, metadata={
        "help": "evaluation blocks (16: chapter 2's at quick; ``block_power`` shows the seeds, not the blocks, "
                "limit a layer's interval)"})
    early_evals: tuple[int, ...] = field(default=(10, 50), metadata={
        "help": "evaluations before the regular ones ('almost at once' is within 10 steps)"})
    eval_every: int = field(default=100, metadata={"help": "then every k steps"})
    layers: tuple[int, ...] = field(default=(), metadata={
        "help": "the specimen's layers to run (default: every layer of the chapter's sweep); a reduced design "
                "runs fewer"})

    def __post_init__(self):
        if not self.lrs:
            raise ValueError("choose at least one learning rate (lrs)")
        for lr in self.lrs:
            positive_number(lr, "learning rate")
        for name in ("seeds", "steps", "eval_blocks", "eval_every"):
            positive_int(getattr(self, name), name)
        if any(int(layer) != layer or layer < 0 for layer in self.layers):
            raise ValueError(f"layers are the specimen's layer indices (0 and up), got {list(self.layers)}")

    def layers_of(self, base: RecoveryParams) -> tuple[int, ...]:
        """The layers this design runs: its own, else every layer of ``base`` (resolved for the specimen)."""
        return tuple(self.layers) or tuple(base.layers)

    def sweeps(self, base: RecoveryParams) -> list[RecoveryParams]:
        """One matched-damage sweep per learning rate: every layer of the design with ``seeds`` noise seeds and its
        sham, no fixed-noise protocol beside it, on at least ``base``'s evaluation blocks (0: all of them)."""
        blocks = 0 if base.eval_blocks == 0 else max(self.eval_blocks, base.eval_blocks)
        layers = self.layers_of(base)
        return [replace(base, layers=layers, lr=lr, damage="matched", steps=self.steps, eval_blocks=blocks,
                        eval_every=self.eval_every, early_evals=self.early_evals, repeat_layers=layers,
                        repeat_count=self.seeds, sham_layers=layers, sigmas=())
                for lr in self.lrs]

    def units(self, base: RecoveryParams) -> list[tuple[int, str, int]]:
        """(layer, kind, noise seed) of every unit of work, each run at every rate: each layer's first seed beside
        its sham (a partial result holds judged pairs and the whole learning-rate grid), the deepest layer first
        (a run costs in proportion to the layers from the damaged one up, so most pairs are kept soonest), then
        each further seed."""
        first = base.noise_seed
        layers = sorted(self.layers_of(base), reverse=True)
        pairs = [(layer, kind, first) for layer in layers for kind in ("damaged", "sham")]
        return pairs + [(layer, "damaged", first + i) for i in range(1, self.seeds) for layer in layers]

    def n_runs(self, base: RecoveryParams) -> int:
        return len(self.units(base)) * len(self.lrs)

    def schedule(self, base: RecoveryParams) -> list[tuple[tuple[int, str, int], tuple[int, ...]]]:
        """The order work is done in: (unit, the indices of the rates it runs at). Each layer's first seed and
        its sham at every rate (the whole learning-rate grid, judged, soonest), then the further seeds at the
        chapter's rate (the first: its sweep, the one the chapter's verdicts read, is complete soonest), then the
        further seeds at the other rates."""
        units, first = self.units(base), base.noise_seed
        pairs = [unit for unit in units if unit[2] == first]
        further = [unit for unit in units if unit[2] != first]
        every, others = tuple(range(len(self.lrs))), tuple(range(1, len(self.lrs)))
        return ([(unit, every) for unit in pairs] + [(unit, (0,)) for unit in further]
                + ([(unit, others) for unit in further] if others else []))


# A reduced design where a specimen's runs cost more than this CPU affords at the full one. Gemma-3-270M's head
# (262,144 tokens) makes each of its runs cost about three of SmolLM2's, so it runs four layers (the fewest
# ``power_correlations`` ranks): one of each class of chapter 2's map (input processor L1, critical core L5,
# output processor L17) and L6, the paper's L11 at the same relative depth (an important middle layer), which
# the paper's claim names; at the book's rate, where its quick sweep already undoes about three quarters of the
# damage in 200 steps (so a longer budget can show whether the criterion is met).
REDUCED_DESIGNS = {"gemma3-270m-q4": PowerDesign(lrs=(1e-4,), layers=(1, 5, 6, 17))}


def power_design(specimen_name: str) -> PowerDesign:
    """The powered design a specimen runs and the book reads: its reduced design, else the full one."""
    return REDUCED_DESIGNS.get(specimen_name, PowerDesign())


def _run_index(sweep: RecoveryParams, layer: int, kind: str, seed: int) -> int:
    return [(run[0], run[1], run[2]) for run in sweep.runs()].index((layer, kind, seed))


def _unit_lock(store, layer: int, kind: str, seed: int) -> Path:
    """The lock a worker takes for one unit: beside the first rate's runs, never removed (``locks.exclusive``), so
    every worker locks the same path for a unit whatever it has seen stored."""
    return store.folder.with_suffix(".units") / f"L{layer}-{kind}-{seed}"


def run_power(lab, design: PowerDesign, base: RecoveryParams | None = None, max_units: int | None = None,
              progress: bool = True, context: RecoveryContext | None = None) -> bool:
    """Run every run not kept yet, in the order of ``PowerDesign.schedule`` (each run kept as it finishes), then
    store each rate's whole sweep. Returns whether every sweep is stored. ``max_units`` stops after that many
    pieces of work (a session runs what its time allows). Another worker running the same command takes the
    work this one does not hold; what it held is waited for at the end and run here if it was left undone (its
    worker stopped), so one surviving worker finishes the sweep. What is kept or stored is read again once a
    unit's lock is held. ``context``: the evaluation lab, pool and streams (default: built from ``lab`` for the
    first sweep, once there is work)."""
    base = (base or lab.defaults(RecoveryParams)).resolved(lab)
    sweeps = design.sweeps(base)
    sweeps[0].check(lab.adapter)  # the design's own layers, against the specimen (one line naming the valid ones)
    stores = [lab.checkpoints(sweep) for sweep in sweeps]

    def missing(indices, rates) -> list[int]:
        """Of ``rates``, those whose run of this unit is neither kept nor part of a stored sweep (read afresh)."""
        return [k for k in rates
                if not stores[k].path(indices[k]).is_file() and stored_sweep(lab, sweeps[k]) is None]

    def work(unit, rates, lock) -> bool | None:
        """Run ``unit`` at the ``rates`` still missing under ``lock`` (``claimed``: skip a unit another worker
        holds; ``exclusive``: wait for it). Whether it ran; None where another worker holds it."""
        nonlocal context
        layer, kind, seed = unit
        indices = [_run_index(sweep, layer, kind, seed) for sweep in sweeps]
        if not missing(indices, rates):
            return False
        with lock(_unit_lock(stores[0], layer, kind, seed)) as mine:
            if not mine:
                return None
            todo = missing(indices, rates)  # another worker may have finished it meanwhile
            if not todo:
                return False
            context = context or RecoveryContext.build(lab, sweeps[0])
            bar.set_postfix_str(f"L{layer} {kind} seed {seed}, {len(todo)} rate{'s' if len(todo) > 1 else ''}")
            sigma = 0.0 if kind == "sham" else _kept_sigma(lab, sweeps, stores, indices)
            if sigma is None:  # the damage is matched once per layer and seed, for every rate
                sigma = matched_sigma(context.eval_lab, layer, base.target_nats, seed, base.noise_tensors,
                                      base.bisection_steps)[0]
            baseline = baseline_table(context)
            for k in todo:
                row, curve, blocks = recovery_run(context, layer, kind, seed, sweeps[k], sigma,
                                                  matched=kind != "sham")
                stores[k].save(indices[k], (row, curve, blocks, baseline))
        return True

    ran, held = 0, []
    schedule = design.schedule(base)
    bar = tqdm(schedule, desc="recovery runs (chapter's rate first)", disable=not progress)
    for unit, rates in bar:
        if max_units is not None and ran >= max_units:
            break
        outcome = work(unit, rates, claimed)
        ran += bool(outcome)
        if outcome is None:
            held.append((unit, rates))
    for unit, rates in held:  # wait for each unit another worker held; run it if that worker left it undone
        if max_units is not None and ran >= max_units:
            break
        ran += bool(work(unit, rates, exclusive))
    bar.close()
    return all(_store_complete(lab, sweep, store) for sweep, store in zip(sweeps, stores))


def _kept_sigma(lab, sweeps, stores, indices) -> float | None:
    """The matched sigma of a unit that some rate has already run, kept or in a stored sweep (a resumed unit
    keeps its damage)."""
    for sweep, store, index in zip(sweeps, stores, indices):
        kept = store.load(index)
        if kept is not None:
            return float(kept[0]["sigma"])
    layer, kind, seed = sweeps[0].runs()[indices[0]][:3]
    for sweep in sweeps:
        stored = stored_sweep(lab, sweep)
        if stored is not None:
            runs = stored["runs"]
            same = runs[(runs["layer"] == layer) & (runs["kind"] == kind) & (runs["noise_seed"] == seed)]
            if len(same):
                return float(same["sigma"].iloc[0])
    return None


def stored_sweep(lab, sweep: RecoveryParams) -> dict[str, pd.DataFrame] | None:
    """A rate's whole sweep where it is stored (looked for first, so a sweep not stored yet is never a load)."""
    store, request = ResultStore(), lab.request(sweep)
    if not store.has(sweep.DIAGNOSTIC, request):
        return None
    found = store.load(sweep.DIAGNOSTIC, request)
    return None if found is None else found[0]


def _assembled(kept: list[tuple]) -> dict[str, pd.DataFrame]:
    return run_tables(kept, kept[0][3])  # every kept run carries the baseline it was judged on


def _store_complete(lab, sweep: RecoveryParams, store) -> bool:
    """Store a rate's sweep once every run is kept (then its run files go); whether it is stored. Under the
    sweep's own lock, so two workers finishing together store it once."""
    with exclusive(store.folder.with_suffix(".store")):
        if stored_sweep(lab, sweep) is not None:
            return True
        kept = [store.load(i) for i in range(len(sweep.runs()))]
        if any(run is None for run in kept):
            return False
        lab.stored(sweep, lambda: _assembled(kept), work_s=runs_seconds, computed_by=POWER_COMMAND)
        store.clear()
        return True


def power_kept(lab, design: PowerDesign, base: RecoveryParams | None = None) -> dict[float, dict]:
    """What the chapter shows, per learning rate: the stored sweep once complete, else the runs kept so far
    (``missing``: how many runs are still to run). Never trains."""
    base = (base or lab.defaults(RecoveryParams)).resolved(lab)
    out = {}
    for sweep in design.sweeps(base):
        stored = stored_sweep(lab, sweep)
        if stored is not None:
            out[sweep.lr] = {**stored, "missing": 0, "params": sweep}
            continue
        store = lab.checkpoints(sweep)
        kept = [run for i in range(len(sweep.runs())) if (run := store.load(i)) is not None]
        tables = _assembled(kept) if kept else {}
        out[sweep.lr] = {**tables, "missing": len(sweep.runs()) - len(kept), "params": sweep}
    return out


def power_progress(kept: dict[float, dict], design: PowerDesign, base: RecoveryParams,
                   specimen: str = "") -> str:
    """Where the powered sweep stands, in one sentence: the runs kept, which noise seeds they hold (by number: a
    seed is a name, not a count) and what the table below it shows, one row per rate and layer whose damaged run
    is kept beside its sham (so its rows are fewer than the runs kept); the command that resumes it names
    ``specimen`` where given."""
    total = design.n_runs(base)
    missing = sum(tables["missing"] for tables in kept.values())
    command = POWER_COMMAND + (f" --specimen {specimen}" if specimen else "")
    if not missing:
        rates = f"{len(design.lrs)} learning rates" if len(design.lrs) > 1 else f"learning rate {design.lrs[0]:g}"
        return (f"The powered sweep is complete: {total} runs ({len(design.layers_of(base))} layers x "
                f"{design.seeds} noise seeds and a sham each, at {rates}).")
    per_rate = "; ".join(f"lr {lr:g}: {len(design.units(base)) - tables['missing']} of {len(design.units(base))}"
                         for lr, tables in kept.items())
    found = sorted({int(seed) for tables in kept.values() if "runs" in tables
                    for seed in tables["runs"]["noise_seed"].unique()})
    if not found:  # nothing to tabulate yet: no table follows
        return (f"The powered sweep has not started: none of its {total} runs is kept yet "
                f"(`{command}` runs it).")
    waiting = [layer for layer in design.layers_of(base) if layer not in _paired_layers(kept)]
    absent = (f"; no row yet for {', '.join(f'L{layer}' for layer in waiting)}, whose damaged run and sham are "
              "not both kept" if waiting else "")
    return (f"The powered sweep is incomplete: {total - missing} of {total} runs are kept ({per_rate}; "
            f"{_seeds_so_far(found)}). The table below reads the kept runs only, one row per learning rate and "
            f"layer whose damaged run is kept beside its sham{absent}; a layer's interval over noise seeds appears "
            f"once it has two of them (`{command}` resumes the sweep).")


def _paired_layers(kept: dict[float, dict]) -> set[int]:
    """The layers with a damaged run kept beside their sham at some rate (those the tables have a row for)."""
    paired = set()
    for tables in kept.values():
        runs = tables.get("runs")
        if runs is not None and {"layer", "kind"} <= set(runs.columns):
            kinds = runs.groupby("layer")["kind"].agg(set)
            paired |= {int(layer) for layer, held in kinds.items() if {"damaged", "sham"} <= held}
    return paired


def _seeds_so_far(seeds: list[int]) -> str:
    """The noise seeds kept, named by number ("only noise seed 0 so far"), never as a bare list a reader could
    take for a count."""
    if len(seeds) == 1:
        return f"only noise seed {seeds[0]} so far"
    return f"noise seeds {', '.join(map(str, seeds[:-1]))} and {seeds[-1]} so far"


def power_table(kept: dict[float, dict], criterion: Criterion = MAIN_CRITERION, n_boot: int = 2000,
                seed: int = 0) -> pd.DataFrame:
    """Per learning rate and layer: the share of the damage undone against the sham at the end of the budget,
    its mean over the noise seeds kept with a t-interval over them (the seed is the unit), the same share against
    the intact model (raw: where the sham drifts by a large part of the damage, the two differ by that drift), how
    many seeds count as recovered by ``criterion`` and their median steps to recover, and the sham's own drift."""
    rows = []
    for lr, tables in kept.items():
        if "runs" not in tables or not len(tables["runs"]):
            continue
        judged = judged_runs(tables, criterion, n_boot, seed)
        if not len(judged):  # no damaged run kept beside its sham yet
            continue
        curves = tables["curves"]
        last = undone_by_seed(tables).sort_values("step").groupby(["layer", "noise_seed"]).last()
        raw = last["undone_raw"].to_dict()  # (layer, noise seed) -> raw share undone at the last evaluation
        shams = curves[curves["kind"] == "sham"]
        for layer, group in judged.groupby("layer"):
            mean, low, high = t_interval(group["recovered_fraction"])
            recovered = group["steps_to_recover"].dropna()
            sham = shams[shams["layer"] == layer].sort_values("step")
            rows.append({"lr": lr, "layer": int(layer), "seeds": len(group),
                         "initial_excess_nll": float(group["initial_excess_nll"].mean()),
                         "undone": mean, "undone_low": low, "undone_high": high,
                         "undone_raw": float(np.mean([raw[int(layer), int(s)] for s in group["noise_seed"]])),
                         "recovered": f"{len(recovered)} of {len(group)}",
                         "median_steps": float(np.median(recovered)) if len(recovered) else np.nan,
                         "budget": int(tables["params"].steps),
                         "sham_final_move_nll": float(sham["excess_nll"].iloc[-1]) if len(sham) else np.nan})
    return pd.DataFrame(rows)


def undone_by_seed(tables: dict) -> pd.DataFrame:
    """One rate's damaged runs kept beside their sham, at every evaluation: the share of the initial damage undone
    against the sham of the same layer (the damaged run's excess over the sham's, at the same step) and against the
    intact model (raw), per layer, noise seed and step. Empty where no such pair is kept."""
    curves = tables.get("curves")
    if curves is None or not len(curves):
        return pd.DataFrame(columns=["layer", "noise_seed", "step", "undone", "undone_raw"])
    shams = curves[curves["kind"] == "sham"][["layer", "step", "excess_nll"]].rename(
        columns={"excess_nll": "sham_excess"})
    damaged = curves[curves["kind"] == "damaged"].merge(shams, on=["layer", "step"])  # only beside its sham
    initial = damaged[damaged["step"] == 0].set_index(["layer", "noise_seed"])["excess_nll"]
    start = initial.reindex(pd.MultiIndex.from_frame(damaged[["layer", "noise_seed"]])).to_numpy()
    return damaged.assign(undone=1 - (damaged["excess_nll"] - damaged["sham_excess"]) / start,
                          undone_raw=1 - damaged["excess_nll"] / start)[
        ["layer", "noise_seed", "step", "undone", "undone_raw"]]


def power_curves(kept: dict[float, dict]) -> pd.DataFrame:
    """``undone_by_seed`` per learning rate, the mean over the noise seeds kept (``seeds``) at every evaluation;
    ``complete``: the rate's sweep is. The curves ``power_table`` reads at their last step, so a figure can show
    how each layer gets there."""
    rows = []
    for lr, tables in kept.items():
        runs = undone_by_seed(tables)
        if not len(runs):
            continue
        mean = runs.groupby(["layer", "step"]).agg(undone=("undone", "mean"), undone_raw=("undone_raw", "mean"),
                                                   seeds=("noise_seed", "nunique")).reset_index()
        rows.append(mean.assign(lr=lr, complete=not tables["missing"]))
    columns = ["lr", "layer", "step", "undone", "undone_raw", "seeds", "complete"]
    return pd.concat(rows, ignore_index=True)[columns] if rows else pd.DataFrame(columns=columns)


def critical_place(kept: dict[float, dict], critical: int, step: int) -> pd.DataFrame:
    """Where the paper's critical layer stands among the layers run, at each complete rate, by the share of the
    damage undone against the sham at ``step`` (the paper's budget): its mean over noise seeds with a t-interval,
    how many other layers have undone less on average (``behind``), and how many sit clearly below or above it
    (their interval over seeds entirely under or over its own: ``clearly_behind``, ``clearly_ahead``). The paper's
    claim makes it the slowest."""
    rows = []
    for lr, tables in kept.items():
        if tables["missing"]:
            continue
        runs = undone_by_seed(tables)
        at = runs[runs["step"] == step]
        if critical not in set(at["layer"]):
            continue
        intervals = {int(layer): t_interval(group["undone"]) for layer, group in at.groupby("layer")}
        mean, low, high = intervals.pop(critical)
        rows.append({"lr": float(lr), "step": step, "undone": mean, "undone_low": low, "undone_high": high,
                     "others": len(intervals), "behind": sum(m < mean for m, _, _ in intervals.values()),
                     "clearly_behind": sum(h < low for _, _, h in intervals.values()),
                     "clearly_ahead": sum(lo > high for _, lo, _ in intervals.values())})
    return pd.DataFrame(rows)


def critical_sentence(place: pd.DataFrame, critical: int) -> str:
    """``critical_place`` in words, and what it says of the paper's claim that the critical layer recovers
    slowest: "" until a rate is complete."""
    if not len(place):
        return ""
    parts = [f"{r.undone:.0%} [{r.undone_low:.0%}, {r.undone_high:.0%}] at lr {r.lr:g}, ahead of {r.behind} of the "
             f"{r.others} other layers ({r.clearly_behind} clearly; {r.clearly_ahead} clearly ahead of it)"
             for r in place.itertuples()]
    text = (f"At the paper's budget ({int(place['step'].iloc[0])} steps), L{critical} has undone, of its damage "
            "against the sham (mean over noise seeds, t-interval; clearly: the two intervals over seeds do not "
            "overlap): " + "; ".join(parts) + ".")
    if (place["clearly_ahead"] == 0).all() and (2 * place["behind"] >= place["others"]).all():
        return text + (f" At every rate L{critical} has undone as much as at least half the layers run here and "
                       "no layer is clearly ahead of it: nothing sets it apart as the slowest, as the paper's claim "
                       "would.")
    if (place["clearly_behind"] == 0).all() and (2 * place["behind"] < place["others"]).all():
        return text + f" At every rate L{critical} is among the slower layers, as the paper's claim would have it."
    return text + f" L{critical}'s place among the layers changes with the rate."


SIZEABLE_DRIFT = 0.5  # a sham drift of at least this share of the damage: the sham-corrected share reads the sham


def drift_sentence(end: pd.DataFrame, kept: dict[float, dict]) -> str:
    """The sham's own drift at the end of the budget at each rate (``power_table``'s rows), and where it is a
    sizeable share of the damage (``SIZEABLE_DRIFT``), what the share undone against the sham then means. A rate
    still running is read from the shams kept so far (a layer has one sham, so a kept sham's drift is final; only
    which layers are in can change), and says so. "" until a damaged run is kept beside its sham."""
    if not len(end):
        return ""
    rows = end.assign(ratio=end["sham_final_move_nll"].abs() / end["initial_excess_nll"])
    parts, sizeable = [], []
    for lr, group in rows.groupby("lr"):
        worst = group.loc[group["ratio"].idxmax()]
        running = " (the layers kept so far)" if kept.get(lr, {}).get("missing", 0) else ""
        parts.append(f"at lr {lr:g}{running}, {group['sham_final_move_nll'].min():+.3f} to "
                     f"{group['sham_final_move_nll'].max():+.3f} nats (at most {worst['ratio']:.0%} of the damage, "
                     f"L{int(worst['layer'])})")
        big = group[group["ratio"] >= SIZEABLE_DRIFT]
        if len(big):
            sizeable.append(f"lr {lr:g}: " + ", ".join(f"L{int(layer)}" for layer in big["layer"]))
    text = (f"The sham's own drift at the end of {int(rows['budget'].max())} steps (below zero: fine-tuning alone "
            "improved the intact model on the evaluation text; above zero, it made it worse): "
            + "; ".join(parts) + ".")
    if not sizeable:
        return text + (f" It stays under {SIZEABLE_DRIFT:.0%} of the damage for every layer, so the share undone "
                       "against the sham reads the layer more than its sham.")
    return text + (f" Where it is {SIZEABLE_DRIFT:.0%} of the damage or more ({'; '.join(sizeable)}), the share "
                   "undone against the sham measures how close the damaged run comes to its sham, which has itself "
                   "moved that far from the intact model: it does not say the model is back where it started, so "
                   "read those rows with the raw share beside them.")


HALF = Criterion("sham", 0.5)  # a share every layer's curve reaches or nears within the budget (the 90% rule's
# curves level off between about 45% and 85% of the damage undone, so steps to 90% are censored for every run)


def power_steps(kept: dict[float, dict], criterion: Criterion = HALF, n_boot: int = 2000, seed: int = 0
                ) -> pd.DataFrame:
    """Steps to recover by ``criterion`` (default: half the damage undone against the sham, by the interval's
    lower end) per learning rate and layer: the median over the noise seeds that got there, how many did, and
    the layer's pooled row (``judged_layers``: recovered only if every seed did, then its slowest seed's steps),
    which ``power_correlations`` ranks. A measured number of steps, where the 90% rule gives none."""
    rows = []
    for lr, tables in kept.items():
        if "runs" not in tables or not len(tables["runs"]):
            continue
        judged = judged_runs(tables, criterion, n_boot, seed)
        if not len(judged):
            continue
        pooled = judged_layers(judged).set_index("layer")
        for layer, group in judged.groupby("layer"):
            reached = group["steps_to_recover"].dropna()
            rows.append({"lr": lr, "layer": int(layer), "criterion": criterion.short_label, "seeds": len(group),
                         "reached": len(reached), "median_steps": float(np.median(reached)) if len(reached) else np.nan,
                         "budget": int(tables["params"].steps), **{
                             k: pooled.loc[layer, k] for k in ("recovered", "steps_to_recover",
                                                               "initial_excess_nll", "area_excess_nll")}})
    return pd.DataFrame(rows)


def steps_cell(row) -> str:
    """'100 (3 of 3)': the median steps over the seeds that got there and how many did; '> 400 (0 of 3)'."""
    steps = f"{row.median_steps:.0f}" if row.reached else f"> {row.budget}"
    return f"{steps} ({row.reached} of {row.seeds})"


def rate_steps(steps: pd.DataFrame, kept: dict[float, dict]) -> pd.DataFrame:
    """Per learning rate whose sweep is complete: how many layers got there in every noise seed (``power_steps``'
    pooled row), the steps at which a run is evaluated (the only steps a run can be seen to get there), and the
    median layer's steps, a layer that did not counting as more than the budget (so the
    median is NaN where half the layers or more did not get there). Whether "steps to recover" measures the layer or
    the optimiser is read from how these move between rates."""
    rows = []
    for lr, layers in steps.groupby("lr"):
        if kept.get(lr, {}).get("missing", 1):
            continue
        pooled = layers["steps_to_recover"].where(layers["recovered"].astype(bool), np.inf).astype(float)
        median = float(np.median(pooled))
        finite = pooled[np.isfinite(pooled)]
        rows.append({"lr": float(lr), "layers": len(layers), "reached": len(finite),
                     "median_steps": median if np.isfinite(median) else np.nan,
                     "fastest": float(finite.min()) if len(finite) else np.nan,
                     "slowest": float(finite.max()) if len(finite) else np.nan,
                     "budget": int(layers["budget"].max()), "criterion": layers["criterion"].iloc[0],
                     "evaluations": tuple(int(step) for step in sorted(kept[lr]["curves"]["step"].unique()) if step)})
    return pd.DataFrame(rows)


def rate_sentence(by_rate: pd.DataFrame) -> str:
    """``rate_steps`` in words: each complete rate's count and median layer, then how far the median layer moves
    from the lowest rate to the highest (a fold, or a lower bound where the lowest rate's is past its budget) beside
    the spread between layers at one rate (slowest over fastest of those that got there): the rate sets the steps as
    much as the layer does only where it moves them at least two-fold and at least as far as the layers differ. ""
    until a rate is complete."""
    if not len(by_rate):
        return ""
    by_rate = by_rate.sort_values("lr")

    def median_words(row) -> str:
        return (f"the median layer {row.median_steps:.0f} steps" if np.isfinite(row.median_steps)
                else f"the median layer more than {row.budget} steps")

    parts = [f"at lr {row.lr:g}, {row.reached} of {row.layers} layers got there in every noise seed within "
             f"{row.budget} steps, {median_words(row)}" for row in by_rate.itertuples()]
    evaluations = ", ".join(map(str, by_rate["evaluations"].iloc[0]))
    text = (f"Steps to recover by the criterion \"{by_rate['criterion'].iloc[0]}\" (a layer counted at its slowest "
            f"seed; a run is seen to get there only at an evaluation, at steps {evaluations}): "
            + "; ".join(parts) + ".")
    if len(by_rate) < 2:
        return text
    low, high = by_rate.iloc[0], by_rate.iloc[-1]
    if not np.isfinite(high["median_steps"]):
        return text + (f" Even at lr {high['lr']:g} half the layers or more do not get there: the rate does not "
                       "make the median layer's steps a measured number.")
    if not np.isfinite(low["median_steps"]):
        fold, bound = low["budget"] / high["median_steps"], "more than "
    else:
        fold, bound = low["median_steps"] / high["median_steps"], ""
    moved = (f" From lr {low['lr']:g} to lr {high['lr']:g} ({high['lr'] / low['lr']:g} times the rate) the median "
             f"layer's steps fall {bound}{fold:.1f}-fold")
    spread = [f"{r.fastest:.0f}-{r.slowest:.0f} steps at lr {r.lr:g}" for r in by_rate.itertuples()
              if r.reached >= 2]
    moved += (f", while the layers that got there at one rate span {', '.join(spread)}" if spread else "")
    between_layers = max((r.slowest / r.fastest for r in by_rate.itertuples() if r.reached >= 2), default=1.0)
    if fold >= max(2.0, between_layers):
        return text + moved + (": how many steps a layer takes to recover is set by the optimiser as much as by "
                               "the layer, so a budget given without its learning rate, like the paper's 200 steps, "
                               "says little about a layer.")
    if bound:  # the lowest rate's median layer is past its budget: the fold is only a lower bound
        return text + moved + (f", and the layers at one rate differ up to {between_layers:.0f}-fold: a budget needs "
                               f"its learning rate, but whether the rate or the layer moves the steps more, this "
                               f"budget cannot say (at lr {low['lr']:g} the median layer is past it)."
                               if fold >= 2 else f": at lr {low['lr']:g} the median layer is past the budget, so how "
                               "far the rate moves it is not measured.")
    if fold >= 2:
        return text + moved + (": a budget needs its learning rate, but the layers differ more at one rate than "
                               "the rate moves the median layer over this grid.")
    return text + moved + ": the rate moves it less than two-fold over this grid."


def power_correlations(steps: pd.DataFrame, importance: pd.DataFrame, n_boot: int = 2000, seed: int = 0,
                       min_layers: int = 4) -> pd.DataFrame:
    """Per learning rate, chapter 6's rank correlations of recovery with importance (``rank_correlations``: steps
    to recover, censored runs ranked above every recovered one, and the area under the excess; each plain and
    given the initial damage) over every layer kept at that rate, once ``min_layers`` are."""
    out = []
    for lr, layers in steps.groupby("lr"):
        if len(layers) < min_layers:
            continue
        table = rank_correlations(layers, importance, n_boot, seed)
        out.append(table.assign(lr=lr, criterion=layers["criterion"].iloc[0]))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def truncated(tables: dict, steps: int) -> dict:
    """A sweep's tables as if its budget had been ``steps``: the evaluations after it dropped (the runs are the
    same up to it), so the paper's 200-step budget is read from a longer sweep without retraining."""
    out = {**tables, "curves": tables["curves"][tables["curves"]["step"] <= steps],
           "blocks": tables["blocks"][tables["blocks"]["step"] <= steps],
           "runs": tables["runs"].assign(budget=steps)}
    if "params" in tables:
        out["params"] = replace(tables["params"], steps=steps)
    return out


def power_sensitivity(kept: dict[float, dict], importance: pd.DataFrame, paper_one_based: bool = False,
                      book_lr: float = POWER_LRS[0], budgets: tuple[int, ...] = (PAPER["budget_steps"],)
                      ) -> pd.DataFrame:
    """Every claim of ``report.paper_claims`` at each learning rate whose sweep is complete, at its whole budget
    and read at each of ``budgets`` (the paper's 200 steps by default; evaluations past it dropped): the seeds,
    not the blocks, carry each claim's share of runs. Tidy, as ``core.rules.sensitivity`` gives it, one parameter
    "rate and budget" whose values are (rate, steps); empty until one rate is complete. ``book_lr`` at the
    paper's budget is marked as the book's. A claim that names its budget is named "within the budget"."""
    complete = [lr for lr, tables in kept.items() if not tables["missing"]]
    grid = [(lr, steps) for lr in complete
            for steps in sorted({*budgets, int(kept[lr]["params"].steps)}) if steps <= kept[lr]["params"].steps]

    def claims_at(value):
        lr, steps = value
        tables = truncated({**kept[lr], "importance": importance}, steps)
        return [replace(c, claim=c.claim.replace(f"within {steps} steps", "within the budget"))
                for c in paper_claims(tables, tables["params"], paper_one_based)]

    return v.sensitivity(claims_at, grid, "rate and budget", (book_lr, PAPER["budget_steps"]))


def power_sensitivity_sentence(by_rate: pd.DataFrame, kept: dict[float, dict]) -> str:
    """``power_sensitivity`` in words (``rules.sensitivity_sentence``), saying which rates it has tried where some
    are still running: a standing kept "at every value tried" over one rate is not yet robustness across rates."""
    running = [lr for lr, tables in kept.items() if tables["missing"]]
    if not len(by_rate):
        return "No learning rate of the powered sweep is complete yet: no verdict is read from it."
    said = v.sensitivity_sentence(by_rate, {"rate and budget": "at"}, lambda _, x: rate_and_budget_label(x))
    book = by_rate[by_rate["default"]].set_index("claim")["standing"]
    moved = by_rate[by_rate["claim"].map(book).ne(by_rate["standing"]) & by_rate["claim"].isin(book.index)]
    if len(moved):  # the tables above hold runs to the sham; a verdict is the measurement judged raw
        said += (" Where a verdict changes, the measurement it judges (against the intact model, as the paper "
                 "would; the tables above hold the runs to the sham) reads: "
                 + "; ".join(f"\"{r.claim}\" at {rate_and_budget_label(r.value)}: {r.ours}"
                             for r in moved.itertuples()) + ".")
    if not running:
        return said
    tried = sorted({lr for lr, _ in by_rate["value"]})
    return (said + f" Only lr {', '.join(f'{lr:g}' for lr in tried)} {'is' if len(tried) == 1 else 'are'} complete"
            f" (lr {', '.join(f'{lr:g}' for lr in sorted(running))} still running): the claims are not yet tried "
            "across the learning-rate grid.")


def rate_and_budget_label(value) -> str:
    lr, steps = value
    return f"lr {lr:g}, {steps} steps"


def block_power(judged: pd.DataFrame, blocks_then: int, blocks_now: int, protocol: str = "matched") -> dict:
    """How much more evaluation blocks would buy, from a sweep's judged runs (``analysis.judged_runs``) on
    ``blocks_then`` blocks: a run's standard error over blocks (the median 95% half-width of its share of the
    damage undone over 1.96), scaled to ``blocks_now`` blocks by the square root, against the standard deviation
    between noise seeds of the same layer (pooled over the layers with two or more seeds: few degrees of freedom).
    Where the block error is well under the seed spread, a layer's interval over its seeds is set by the seeds.
    Only the runs of ``protocol`` count (the fixed-noise protocol's runs are other damage, not seeds)."""
    judged = judged[judged["protocol"] == protocol]
    se = float(((judged["fraction_high"] - judged["fraction_low"]) / 2).median()) / 1.96
    repeated = judged.groupby("layer").filter(lambda g: g["noise_seed"].nunique() >= 2)
    groups = [g["recovered_fraction"].to_numpy() for _, g in repeated.groupby("layer")]
    dof = sum(len(g) - 1 for g in groups)
    seed_sd = float(np.sqrt(sum(((g - g.mean()) ** 2).sum() for g in groups) / dof)) if dof else np.nan
    return {"se_then": se, "se_now": se * np.sqrt(blocks_then / blocks_now), "seed_sd": seed_sd,
            "seed_dof": dof, "layers_with_seeds": len(groups), "blocks_then": blocks_then, "blocks_now": blocks_now}


def block_power_sentence(power: dict) -> str:
    if not np.isfinite(power["seed_sd"]):
        return (f"A run's standard error over {power['blocks_then']} blocks is about {power['se_then']:.0%} of the "
                "damage; no layer has two noise seeds to compare it with.")
    ratio = power["seed_sd"] / power["se_now"]
    return (f"Why {power['blocks_now']} evaluation blocks: in the sweep above a run's standard error over "
            f"{power['blocks_then']} blocks is about {power['se_then']:.0%} of the damage undone, about "
            f"{power['se_now']:.0%} at {power['blocks_now']}, while noise seeds of the same layer differ with a "
            f"standard deviation of {power['seed_sd']:.0%} ({power['layers_with_seeds']} layers with two or more "
            f"seeds, {power['seed_dof']} degrees of freedom), {ratio:.1f} times the error at "
            f"{power['blocks_now']} blocks: "
            + (f"a layer's precision is set mostly by its noise seeds, so beyond {power['blocks_now']} blocks the "
               "powered sweep adds seeds, not more blocks (its interval over seeds leaves out the part of the block "
               "error its seeds share: one sham and the same blocks serve them all)." if ratio >= 2 else
               "blocks and seeds both limit a layer's precision, so more of both would help."))


# ---- as the chapter shows it ----------------------------------------------------------------------------------
def power_view(lab, base: RecoveryParams | None = None, n_boot: int | None = None,
               design: PowerDesign | None = None) -> dict:
    """A specimen's powered sweep as chapter 6 shows it, never training: its design (default ``power_design``), the base
    sweep, the runs kept per rate (``power_kept``), the sentence saying how far it has come, the table at the end
    of the budget (``power_table``), the steps to undo half the damage (``power_steps``), and chapter 2's
    importance map with each layer's class (None and empty where a read-only lab has not stored it)."""
    base = (base or lab.defaults(RecoveryParams)).resolved(lab)
    design = design or power_design(lab.specimen.name)
    kept = power_kept(lab, design, base)
    n_boot = n_boot or lab.profile.n_boot
    try:
        ranked = importance(lab, ImportanceParams(), progress=False)
    except NotStored:
        ranked = None
    classes = {} if ranked is None else dict(zip(ranked["layer"], ranked["class"]))
    return {"design": design, "base": base, "kept": kept,
            "progress": power_progress(kept, design, base, lab.specimen.name),
            "end": power_table(kept, n_boot=n_boot), "half": power_steps(kept, n_boot=n_boot),
            "importance": ranked, "classes": classes, "n_boot": n_boot}


def design_sentence(view: dict, specimen_name: str) -> str:
    """What a specimen's powered design runs, computed from it, and why it is reduced where it is."""
    design, base = view["design"], view["base"]
    layers = design.layers_of(base)
    rates = ", ".join(f"{lr:g}" for lr in design.lrs)
    reduced = ("a reduced design: " if specimen_name in REDUCED_DESIGNS else "")
    return (f"{specimen_name}, {reduced}layers {', '.join(f'L{layer}' for layer in layers)}, {design.seeds} noise "
            f"seeds and a sham each, at learning rate{'s' if len(design.lrs) > 1 else ''} {rates}, {design.steps} "
            f"steps, {design.sweeps(base)[0].eval_blocks or 'every'} evaluation blocks: {design.n_runs(base)} runs.")


def power_tables(view: dict, seed: int = 0) -> dict:
    """The powered sweep's tables in this chapter's words (each None until there is something to show): ``end``,
    per rate and layer, the share of the damage undone against the sham at the end of the budget with its interval
    over noise seeds; ``half``, the steps to undo half of it, a column per rate; ``rho``, recovery against
    importance at each rate with four or more layers kept (``power_correlations``)."""
    end, half, steps, classes = view["end"], view["half"], view["design"].steps, view["classes"]
    out = {"end": None, "half": None, "rho": None}
    if len(end):
        shown = end.assign(cls=end["layer"].map(classes)).rename(columns={"cls": "class"})[
            ["lr", "layer", "class", "seeds", "initial_excess_nll", "undone", "undone_low", "undone_high",
             "undone_raw", "recovered", "median_steps", "sham_final_move_nll"]]
        out["end"] = show_table(shown, {"lr": "g", "initial_excess_nll": ".2f", "undone": ".0%", "undone_raw": ".0%",
                                        "median_steps": ".0f", "sham_final_move_nll": "+.3f"},
                                {"initial_excess_nll": "damage (nats)", "undone": "damage undone",
                                 "undone_raw": "undone (raw)", "median_steps": "median steps",
                                 "sham_final_move_nll": "sham's drift (nats)"},
                                intervals={"undone": ("undone_low", "undone_high")}, left=("class", "recovered"),
                                caption=f"at the end of {steps} steps: the share of the damage undone against the "
                                "sham of the same layer (interval over noise seeds) and against the intact model "
                                "(raw); where the sham's drift is a sizeable part of the damage, the sham-corrected "
                                "share reads the sham as much as the layer")
    if len(half):
        cells = half.assign(cell=[steps_cell(r) for r in half.itertuples()], lr=half["lr"].map("lr {:g}".format))
        grid = cells.pivot(index="layer", columns="lr", values="cell").fillna("not kept").reset_index()
        grid.insert(1, "class", grid["layer"].map(classes))
        out["half"] = show_table(grid, left=("class",), caption="steps to undo half the damage against the sham: "
                                 "median over the seeds that did (how many of the seeds kept)")
        rho = (power_correlations(half, view["importance"], view["n_boot"], seed)
               if view["importance"] is not None else pd.DataFrame())
        if len(rho):
            criterion = rho["criterion"].iloc[0]
            rho = rho.assign(**{"recovery measure": rho["recovery measure"].replace(
                "steps to recover", f"steps to {criterion}")})
            few = rho["layers"] < MIN_LAYERS_FOR_INTERVAL
            rho.loc[few, ["ci_low", "ci_high"]] = np.nan
            columns = ["lr", "recovery measure", "correlation", "rho", "ci_low", "ci_high", "layers"]
            out["rho"] = show_table(rho[columns], {"lr": "g", "rho": "+.2f"},
                                    caption="recovery against importance (chapter 2's change), Spearman over the "
                                    "layers kept at each rate, 95% bootstrap interval over layers (none over fewer "
                                    f"than {MIN_LAYERS_FOR_INTERVAL} layers: resampling so few points, with ties, "
                                    "gives intervals narrower than the data can carry)")
    return out
