"""Every run of a recovery experiment: the shared context, one run, the sweep (split under torchrun), the store."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from ..core.bootstrap import perplexity_interval
from ..core.distributed import gather, shard, world
from ..core.lab import Lab
from ..core.results import RunCheckpoints
from ..core.surgery import surgery
from ..importance.compute import ImportanceParams, importance
from .params import RecoveryParams
from .training import (
    add_damage,
    fine_tune,
    matched_sigma,
    streams_entering,
    trainable_parameters,
    training_pool,
    training_snapshot,
)


@dataclass
class RecoveryContext:
    """What every run of a sweep shares: the evaluation lab (chapter 2's blocks, or the first n of them), the
    training pool, the streams entering each layer, and the tolerance."""

    eval_lab: object
    pool_ids: torch.Tensor
    streams: dict
    tolerance: float
    base_nll: float

    @classmethod
    def build(cls, lab, params: RecoveryParams, layers=None) -> "RecoveryContext":
        wanted = min(params.eval_blocks or lab.blocks.n_blocks, lab.blocks.n_blocks)
        blocks = lab.blocks if wanted == lab.blocks.n_blocks else lab.blocks.subset(wanted)
        eval_lab = lab if blocks is lab.blocks else Lab(lab.specimen, lab.profile, blocks, lab.corpus_name,
                                                        lab.progress)
        base = eval_lab.engine.baseline  # built from the intact model, before any damage
        if params.tolerance_nats is not None:
            tolerance = params.tolerance_nats
        else:
            _, low, high = perplexity_interval(base.block_nll, lab.profile.n_boot, params.data_seed)
            tolerance = max(0.01, (np.log(high) - np.log(low)) / 2)
        pool = training_pool(lab.specimen, params.train_pool, params.train_len, params.data_seed)
        layers = sorted(set(params.layers) | set(params.sham_layers)) if layers is None else layers
        for layer in layers:
            lab.adapter.check_layer(layer)
        streams = streams_entering(lab.adapter, pool.ids, layers)
        return cls(eval_lab, pool.ids, streams, float(tolerance), base.mean_nll)


def recovery_run(context: RecoveryContext, layer: int, kind: str, noise_seed: int, params: RecoveryParams,
                 sigma: float | None = None, progress: bool = False, on_step=None,
                 matched: bool = False) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """One run: damage ``layer`` (matched or given sigma; a sham has sigma 0), fine-tune, evaluate.
    Returns (summary row, curve table, per-block NLLs). The model comes back bit for bit. ``matched``: the given
    sigma is the matched one, found before (one search serves a layer's runs at several learning rates)."""
    started = time.perf_counter()
    protocol = "sham" if kind == "sham" else "matched" if sigma is None or matched else "fixed"
    lab = context.eval_lab
    adapter = lab.adapter
    adapter.check_layer(layer)
    if kind == "sham":
        sigma = 0.0
    elif sigma is None:
        sigma, _ = matched_sigma(lab, layer, params.target_nats, noise_seed, params.noise_tensors,
                                 params.bisection_steps)
    engine = lab.engine
    with training_snapshot(adapter, trainable_parameters(adapter, layer, params.trainable)):
        with surgery(adapter) as editor:
            add_damage(editor, layer, sigma, noise_seed, params.noise_tensors)
            curve = fine_tune(adapter, engine, layer, context.streams[layer], context.pool_ids, params,
                              progress=progress, on_step=on_step)
    table = pd.DataFrame([{k: v for k, v in point.items() if k != "block_nll"} for point in curve])
    for position, (name, value) in enumerate((("layer", layer), ("kind", kind), ("protocol", protocol),
                                              ("noise_seed", noise_seed), ("sigma", sigma))):
        table.insert(position, name, value)
    table["excess_nll"] = table["nll"] - context.base_nll
    blocks = pd.DataFrame([{"layer": layer, "kind": kind, "protocol": protocol, "noise_seed": noise_seed,
                            "sigma": sigma, "step": point["step"], "block": b, "nll": float(nll)}
                           for point in curve for b, nll in enumerate(point["block_nll"])])
    summary = {**summarize_curve(table, context.tolerance, params.steps), "protocol": protocol,
               "wall_s": round(time.perf_counter() - started, 1)}
    return summary, table, blocks


def summarize_curve(curve: pd.DataFrame, tolerance: float, budget: int) -> dict:
    """Steps to recover (None: not within the budget), recovered fraction and area of one run's curve."""
    first = curve.iloc[0]
    excess = curve["excess_nll"].to_numpy()
    steps = curve["step"].to_numpy()
    recovered_at = steps[excess <= tolerance]
    initial = float(excess[0])
    area = float(np.sum((excess[1:] + excess[:-1]) / 2 * np.diff(steps)))
    return {"layer": int(first.layer), "kind": first.kind, "noise_seed": int(first.noise_seed),
            "sigma": float(first.sigma), "initial_excess_nll": initial,
            "initial_change_pct": float(np.expm1(initial) * 100), "tolerance_nll": tolerance,
            "recovered": bool(len(recovered_at)), "steps_to_recover": float(recovered_at[0]) if len(recovered_at)
            else np.nan, "budget": budget, "final_excess_nll": float(excess[-1]),
            "recovered_fraction": float(1 - excess[-1] / initial) if initial > 0 else np.nan,
            "area_excess_nll": area, "normalized_area": area / (initial * budget) if initial > 0 else np.nan}


def recovery_sweep(context: RecoveryContext, params: RecoveryParams, progress: bool = True,
                   checkpoints: RunCheckpoints | None = None) -> dict[str, pd.DataFrame]:
    """Every run of ``params``. Runs are independent, so under ``torchrun`` each process takes every N-th run
    and the results are gathered back in order: the tables equal a one-process sweep's. With ``checkpoints``,
    each finished run is kept as it ends and a run kept before is read instead of trained again."""
    at = world()
    jobs = list(enumerate(params.runs()))

    def one(index: int, job) -> tuple:
        kept = checkpoints.load(index) if checkpoints is not None else None
        if kept is not None:
            return kept
        layer, kind, seed, sigma = job
        run = recovery_run(context, layer, kind, seed, params, sigma)
        if checkpoints is not None:
            checkpoints.save(index, run)
        return run

    done = gather([one(index, job) for index, job in
                   tqdm(shard(jobs, at), desc="recovery runs", disable=not progress or not at.main)], at)
    return run_tables(done, baseline_table(context))


def baseline_table(context: RecoveryContext) -> pd.DataFrame:
    """The intact model's NLL on each evaluation block of ``context``."""
    nll = context.eval_lab.engine.baseline.block_nll
    return pd.DataFrame({"block": range(len(nll)), "nll": [float(x) for x in nll]})


def run_tables(done: list[tuple], baseline: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """A sweep's tables from its runs, each (summary row, curve, per-block NLLs, ...), and the baseline table."""
    return {"runs": pd.DataFrame([run[0] for run in done]),
            "curves": pd.concat([run[1] for run in done], ignore_index=True),
            "blocks": pd.concat([run[2] for run in done], ignore_index=True),
            "baseline": baseline}


def runs_seconds(tables: dict[str, pd.DataFrame]) -> float:
    """A sweep's own training time, the sum of its runs' (a resumed sweep ran some of them in earlier processes;
    the matched-noise search and the evaluation context are not counted)."""
    return float(tables["runs"]["wall_s"].sum())


def recovery(lab, params: RecoveryParams | None = None, recompute: bool = False,
             progress: bool = True) -> dict[str, pd.DataFrame]:
    """Every run of ``params`` (damaged layers, repeats, shams): a ``runs`` summary and the ``curves``, through
    the results store (``params``: resolved for the lab's specimen first; default: the lab's profile)."""
    params = (params or lab.defaults(RecoveryParams)).resolved(lab)

    checkpoints = lab.checkpoints(params)
    if recompute and lab.compute_missing and world().main:
        checkpoints.clear()  # recomputing means every run anew

    def run():
        if checkpoints.finished():
            print(f"resuming: {checkpoints.finished()} of {len(params.runs())} runs finished before "
                  f"({checkpoints.folder})")
        return recovery_sweep(RecoveryContext.build(lab, params), params, progress, checkpoints)

    tables = lab.stored(params, run, recompute, work_s=runs_seconds)
    if world().main:
        checkpoints.clear()  # the whole result is stored (or was already): its runs are no longer needed
    return tables


def merged(main: dict[str, pd.DataFrame], extra: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Two sweeps on the same blocks as one set of tables (the fixed-noise protocol beside the matched one)."""
    if not main["baseline"].equals(extra["baseline"]):
        raise ValueError("the two sweeps were evaluated on different blocks; they cannot be judged together")
    return {name: main[name] if name == "baseline" else pd.concat([main[name], extra[name]], ignore_index=True)
            for name in main}


def compute(lab, params: RecoveryParams | None = None, *, recompute: bool = False,
            progress: bool = True) -> dict[str, pd.DataFrame]:
    """Chapter 6's tables (the chapter protocol, ``core.chapter``): the runs, curves and per-block NLLs of the
    sweep, with the fixed-noise protocol at ``fixed_sigmas`` beside a matched sweep (its own stored result),
    and chapter 2's classified importance table (``importance``) that recovery is judged against."""
    params = (params or lab.defaults(RecoveryParams)).resolved(lab)
    tables = recovery(lab, params, recompute, progress)
    if params.sigmas and params.damage == "matched":
        tables = merged(tables, recovery(lab, params.fixed_protocol(), recompute, progress))
    return {**tables, "importance": importance(lab, ImportanceParams(), progress=progress)}
