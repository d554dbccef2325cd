"""One trainer for every arm of the growth experiment, on a FLOP budget.

An arm starts at some depth and may grow at given fractions of its FLOP budget. Every arm uses the same
AdamW, the same gradient clipping and the same warm-up / stable / decay learning-rate schedule, defined on the
fraction of the budget used (so a cheap shallow step advances the schedule less than a deep one). Steps are
charged with ``core.flops.step_flops``; measurements an arm makes to decide how to grow are charged with
``core.flops.forward_flops`` for every layer they run (``importance_cost``); training
stops before the step that would exceed the budget. Validation loss is measured at fixed fractions of the
budget on fixed blocks. Given its seed (initialisation, data order, noise), a run is deterministic on a CPU.

At a growth event the layers are rebuilt from a plan (``operators``: deep copies, never shared modules), the
optimiser is rebuilt to hold every trainable parameter (asserted), old layers keep their AdamW moments and
new ones start fresh, and the learning rate re-warms over a short fraction of the budget (``reset_optimizer``:
every moment starts fresh, as G_stack's code does).

Under ``torchrun`` the same function trains with DistributedDataParallel: every process draws the same global
batch and takes its share of the blocks, so the loss curve does not depend on the number of processes; a growth
event is decided on rank 0, applied on every rank, and the wrapper and optimiser are rebuilt identically. With
``Checkpointing`` a run saves its whole state (model, optimiser, schedule position, data position, random
states, growth phase) atomically every few steps, and the same call continues from the last save.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from dataclasses import replace as dc_replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch.nn.parallel import DistributedDataParallel
from tqdm.auto import tqdm

from ..core.checks import one_of, positive_int
from ..core.corpus import TokenBlocks
from ..core.distributed import World, all_sum, barrier, broadcast, world
from ..core.flops import forward_flops, step_flops
from ..core.lab import Lab
from ..core.nll import next_token_nll
from ..core.profiles import get_profile
from ..core.runtime import get_device
from ..core.specimens import Specimen
from ..importance.analysis import classify
from ..importance.compute import ImportanceParams, importance_sweep
from .models import Shape, build_model
from .operators import Copy, apply_plan, middle_plan, remove_plan, stack_plan

EVENT_KINDS = ("stack", "middle", "develop", "random_develop")


@dataclass(frozen=True)
class Schedule:
    """Warm-up, stable, decay on the fraction f of the budget used: the same function for every arm."""

    lr: float = 3e-3
    warmup: float = 0.05  # fraction of the budget
    decay: float = 0.2  # the last fraction of the budget decays linearly ...
    final: float = 0.1  # ... to this share of lr

    def __call__(self, f: float) -> float:
        if f < self.warmup:
            return self.lr * (f + 1e-3) / self.warmup
        return self.after_warmup(f)

    def after_warmup(self, f: float) -> float:
        """The stable rate, then the linear decay over the last ``decay`` of the budget."""
        if f < 1 - self.decay:
            return self.lr
        return self.lr * (1 - (1 - self.final) * min(1.0, (f - (1 - self.decay)) / self.decay))

    def at(self, used: float, budget: float) -> float:
        """The rate after ``used`` of ``budget`` FLOPs (what the trainer asks)."""
        return self(used / budget)


@dataclass(frozen=True)
class BranchSchedule(Schedule):
    """Warm-up over a fixed number of FLOPs whatever the budget, then ``Schedule``'s stable rate and decay.
    Runs of any budget then share one trajectory until their own decay starts, so one run to the largest budget
    plus a decay branch per smaller budget equals a fresh run per budget, step for step (the warm-up / stable /
    decay idea of Hägele et al. 2024, arXiv 2405.18392). ``floor`` is the rate at step 0 as a share of ``lr``
    (0.02: ``Schedule``'s own at a 5% warm-up)."""

    warmup_flops: float = 0.0
    floor: float = 0.02

    def at(self, used: float, budget: float) -> float:
        if used < self.warmup_flops:
            return self.lr * (used / self.warmup_flops + self.floor)
        return self.after_warmup(used / budget)


@dataclass(frozen=True)
class Event:
    """Grow at ``fraction`` of the budget: ``stack`` to ``target`` layers, ``middle`` (duplicate the middle
    ``block``), ``develop`` (clone the most important layers up to ``target``, anti-layers removed and
    replaced) or ``random_develop`` (the same, cloned layers chosen at random, nothing measured)."""

    fraction: float
    kind: str
    target: int = 0
    block: int = 0

    def __post_init__(self):
        one_of(self.kind, EVENT_KINDS, "growth event")
        if not 0 < self.fraction < 1:
            raise ValueError(f"a growth time is a fraction of the budget in (0, 1), got {self.fraction}")


@dataclass(frozen=True)
class Arm:
    name: str
    start_layers: int
    events: tuple[Event, ...] = ()


@dataclass(frozen=True)
class TrainConfig:
    """What every arm shares."""

    shape: Shape
    budget: float  # FLOPs
    batch: int
    schedule: Schedule = Schedule()
    weight_decay: float = 0.1
    clip: float = 1.0
    eval_fractions: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    rewarm: float = 0.02  # fraction of the budget over which the rate re-warms after growth
    reset_optimizer: bool = False
    clone_noise: float = 0.01
    importance_boot: int = 500
    extra_eval_steps: tuple[int, ...] = field(default=())
    compile: bool = False  # torch.compile the training forward (evaluation stays eager)
    stop_at: float | None = None  # stop after this many FLOPs (the schedule still runs on the whole budget)


@dataclass
class TextData:
    train: np.ndarray  # one token stream
    validation: torch.Tensor  # (blocks, context) for the curves
    importance: torch.Tensor  # (blocks, context) the developmental arm measures importance on


def evaluate(model, blocks: torch.Tensor, at: World | None = None) -> float:
    """Mean next-token NLL (nats) over the blocks (under torchrun each process scores its share)."""
    at = at or World()
    device = next(model.parameters()).device
    with torch.inference_mode():
        if at.size == 1:
            blocks = blocks.to(device)
            return float(next_token_nll(model(input_ids=blocks).logits, blocks))
        mine, total = blocks[at.rank::at.size].to(device), 0.0
        if len(mine):
            total = float(next_token_nll(model(input_ids=mine).logits, mine, "sum"))
    total, count = all_sum([total, float(mine[:, 1:].numel())], at)
    return total / count


def _optimiser(model, config: TrainConfig, old: torch.optim.Optimizer | None) -> torch.optim.AdamW:
    parameters = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in parameters if p.ndim >= 2]
    other = [p for p in parameters if p.ndim < 2]
    optimiser = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                   {"params": other, "weight_decay": 0.0}], lr=config.schedule.lr)
    if old is not None and not config.reset_optimizer:
        for p in parameters:
            if p in old.state:
                optimiser.state[p] = old.state[p]
    held = {id(p) for group in optimiser.param_groups for p in group["params"]}
    assert held == {id(p) for p in parameters}, "the optimiser must hold every trainable parameter"
    return optimiser


def importance_cost(shape: Shape, n_layers: int, blocks: torch.Tensor) -> int:
    """FLOPs of a skip-ablation importance map with a prefix cache: one full pass that builds the cache, then for
    each layer l a pass through layers l.. and the head (the engine restarts at the edited layer: a skipped layer
    still runs, with its writers zeroed)."""
    batch, context = blocks.shape
    full = forward_flops(shape, n_layers, batch, context)
    return full + sum(forward_flops(shape, n_layers - l, batch, context) for l in range(n_layers))


def measure_importance(model, blocks: torch.Tensor, n_boot: int, seed: int) -> pd.DataFrame:
    """Chapter 2's skip ablation, with intervals, on a model in training (its own blocks, no tokenizer)."""
    specimen = Specimen(model, None, "growing", "growth experiment", "", "float32",
                        str(next(model.parameters()).device))
    profile = dc_replace(get_profile("smoke"), name="growth", n_blocks=blocks.shape[0],
                         block_len=blocks.shape[1], batch_size=blocks.shape[0], n_boot=n_boot)
    lab = Lab(specimen, profile, TokenBlocks(blocks, list(range(blocks.shape[0])), {}), progress=False)
    model.eval()
    table = importance_sweep(lab, ImportanceParams(mode="skip", seed=seed), progress=False)
    table["class"] = classify(table, len(model.model.layers))
    return table


def _grow(model, event: Event, config: TrainConfig, data: TextData, seed: int, at: World = World()
          ) -> tuple[int, dict]:
    """Apply one event; returns (FLOPs it cost, a record of what it did). What to clone and drop is decided on
    rank 0 and broadcast, so every process grows the same model."""
    n = len(model.model.layers)
    record = {"kind": event.kind, "layers_before": n, "sources": "", "removed": ""}
    cost = 0
    noise = config.clone_noise
    if event.kind == "stack":
        plan = stack_plan(n, event.target, noise)
    elif event.kind == "middle":
        plan = middle_plan(n, event.block, noise)
    else:
        drop: list[int] = []
        if event.kind == "develop":
            decision = None
            if at.main:
                table = measure_importance(model, data.importance, config.importance_boot, seed)
                drop = sorted(int(l) for l in table.loc[table["ci_high"] < 0, "layer"])
                decision = (drop, [int(l) for l in table.sort_values("change_pct", ascending=False)["layer"]
                                   if l not in drop])
            drop, ranking = broadcast(decision, at)
            cost = importance_cost(config.shape, n, data.importance)
        else:
            ranking = [int(l) for l in np.random.default_rng(seed).permutation(n)]
        needed = event.target - (n - len(drop))
        if needed < 0:
            raise ValueError(f"cannot develop {n} layers into {event.target}")
        sources = [int(ranking[i % len(ranking)]) for i in range(needed)]
        # each kept layer, then the copies made of it (clone_plan's order, without the dropped layers)
        plan = [entry for layer in remove_plan(n, drop)
                for entry in [layer] + [Copy(layer, noise)] * sources.count(layer)]
        record.update(sources=",".join(map(str, sorted(sources))), removed=",".join(map(str, drop)))
    new = apply_plan(model, plan, seed=seed + 7919 * n)
    record["layers_after"] = len(model.model.layers)
    record["new_layers"] = int(sum(new))
    return cost, record


@dataclass(frozen=True)
class Checkpointing:
    """Where a run saves its state, and every how many optimiser steps."""

    directory: str | Path
    every: int = 50

    def __post_init__(self):
        positive_int(self.every, "checkpoint interval (steps)")

    def path(self, arm: str, seed: int) -> Path:
        return Path(self.directory) / f"{arm}-seed{seed}.pt"


CHECKPOINT_FORMAT = ("anatomy-growth-checkpoint", 1)


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be resumed from: unreadable, or written by another run."""


def run_fingerprint(arm: Arm, config: TrainConfig, data: TextData, seed: int) -> str:
    """What a checkpoint must belong to: the arm, every training setting, the seed and the data."""
    digest = hashlib.sha256(json.dumps([asdict(arm), asdict(config), seed], sort_keys=True, default=str).encode())
    for array in (data.train, data.validation.numpy(), data.importance.numpy()):
        digest.update(str(array.shape).encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def save_checkpoint(path: Path, state: dict) -> None:
    """Write atomically: a kill mid-write leaves the previous checkpoint intact."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    torch.save(state, partial)
    os.replace(partial, path)


def load_checkpoint(path: Path, fingerprint: str) -> dict | None:
    """The saved state of this run, None when there is none; a clear error for a file that cannot be read or
    that another run wrote (never a silent restart from scratch)."""
    if not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 (any unreadable file gets the same advice)
        raise CheckpointError(f"checkpoint {path} cannot be read ({type(error).__name__}: truncated, corrupt or "
                              "not written by this trainer); delete it to restart this run from scratch") from error
    if not isinstance(state, dict) or tuple(state.get("format", ())) != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path} is not a growth checkpoint of format {CHECKPOINT_FORMAT}; delete it or choose "
                           "another checkpoint directory")
    if state.get("fingerprint") != fingerprint:
        raise CheckpointError(f"checkpoint {path} was written by another run (other arm, settings, seed or data); "
                           "delete it or choose another checkpoint directory")
    return state


def _numpy_rng_from(state: dict) -> np.random.Generator:
    rng = np.random.default_rng()
    rng.bit_generator.state = state
    return rng


@dataclass
class Forks:
    """FLOP thresholds at which ``train`` keeps a copy of its whole state (before the first step taken at or past
    each): ``train(..., start=forks.states[t])`` continues from one, under another config or arm."""

    thresholds: tuple[float, ...]
    states: dict[float, dict] = field(default_factory=dict)


def train(arm: Arm, config: TrainConfig, data: TextData, seed: int, progress: bool = False,
          checkpoint: Checkpointing | None = None, forks: Forks | None = None, start: dict | None = None):
    """Train one arm on the budget. Returns (curve table, events table, final model). Under ``torchrun`` every
    process calls it and gets the same tables; with ``checkpoint`` it resumes from the last save. ``forks``
    collects states along the way; ``start`` (one of them) continues another run's trajectory as this arm under
    this config: the curve so far is relabelled, its evaluations to come are this config's."""
    if start is not None and checkpoint is not None:
        raise ValueError("a run continues either from a checkpoint or from a fork's state, not both")
    at = world()
    if config.batch % at.size:
        raise ValueError(f"the global batch of {config.batch} blocks must divide evenly among {at.size} processes")
    shape = config.shape
    device = training_device(at)
    events = sorted(arm.events, key=lambda e: e.fraction)
    for event in events:
        if event.fraction >= 1:
            raise ValueError("growth times must lie inside the budget")
    path = checkpoint.path(arm.name, seed) if checkpoint else None
    fingerprint = run_fingerprint(arm, config, data, seed) if checkpoint else ""
    saved = load_checkpoint(path, fingerprint) if checkpoint else copy.deepcopy(start)
    model = build_model(shape, saved["n_layers"] if saved else arm.start_layers, seed)
    optimiser = _optimiser(model, config, None)
    rng = np.random.default_rng(10_000 + seed)
    used, step, tokens, rewarm_from, current_lr, elapsed = 0.0, 0, 0, None, 0.0, 0.0
    eval_at = sorted(set(config.eval_fractions))
    curve, records = [], []
    if saved:
        model.load_state_dict(saved["model"])
        optimiser.load_state_dict(saved["optimiser"])
        loop = saved["loop"]
        used, step, tokens, rewarm_from = loop["used"], loop["step"], loop["tokens"], loop["rewarm_from"]
        current_lr, elapsed, eval_at = loop["current_lr"], loop["elapsed"], list(loop["eval_at"])
        events = events[loop["events_done"]:]
        curve, records = list(saved["curve"]), list(saved["records"])
        rng = _numpy_rng_from(saved["numpy_rng"])
        torch.set_rng_state(saved["torch_rng"])
        if start is not None:
            curve = [{**row, "arm": arm.name, "fraction": row["flops"] / config.budget} for row in curve]
            eval_at = [f for f in sorted(set(config.eval_fractions)) if f * config.budget > used]
        if saved["done"]:
            model.eval()
            return pd.DataFrame(curve), pd.DataFrame(records), model
    model.to(device)
    ddp = _wrap(model, at, config.compile)
    started = time.perf_counter() - elapsed
    context = shape.context
    starts_max = len(data.train) - context
    n_events = len(arm.events)

    def record(kind: str = "eval") -> None:
        model.eval()
        curve.append({"arm": arm.name, "seed": seed, "step": step, "tokens": tokens, "flops": used,
                      "fraction": used / config.budget, "val_loss": evaluate(model, data.validation, at),
                      "layers": len(model.model.layers), "lr": current_lr, "kind": kind,
                      "wall_s": time.perf_counter() - started})
        model.train()

    def state(done: bool = False) -> dict:
        return {"format": list(CHECKPOINT_FORMAT), "fingerprint": fingerprint, "done": done,
                "n_layers": len(model.model.layers), "model": model.state_dict(),
                "optimiser": optimiser.state_dict(), "curve": curve, "records": records,
                "loop": {"used": used, "step": step, "tokens": tokens, "rewarm_from": rewarm_from,
                         "current_lr": current_lr, "elapsed": time.perf_counter() - started, "eval_at": eval_at,
                         "events_done": n_events - len(events)},
                "numpy_rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state()}

    def save(done: bool = False) -> None:
        if at.main:
            save_checkpoint(path, state(done))
        barrier(at)

    pending = sorted(t for t in (forks.thresholds if forks else ()) if t > used)

    model.train()
    if not saved:
        record()
    bar = tqdm(total=100, initial=int(100 * used / config.budget), desc=f"{arm.name} (seed {seed})",
               disable=not progress or not at.main, leave=False, unit="%")
    while True:
        while pending and used >= pending[0]:
            forks.states[pending.pop(0)] = copy.deepcopy(state())
        while events and used >= events[0].fraction * config.budget:
            event = events.pop(0)
            cost, info = _grow(model, event, config, data, seed, at)
            used += cost
            records.append({"arm": arm.name, "seed": seed, "step": step, "flops": used, "fraction": event.fraction,
                            "cost_flops": cost, **info})
            model.to(device)
            model.train()
            ddp = _wrap(model, at, config.compile)
            optimiser = _optimiser(model, config, optimiser)
            rewarm_from = used
            record("growth")
        n_layers = len(model.model.layers)
        cost = step_flops(shape, [True] * n_layers, True, config.batch)
        if used + cost > (config.budget if config.stop_at is None else min(config.stop_at, config.budget)):
            break
        current_lr = config.schedule.at(used, config.budget)
        if rewarm_from is not None and config.rewarm > 0:
            current_lr *= min(1.0, (used - rewarm_from) / (config.rewarm * config.budget) + 1e-3)
        for group in optimiser.param_groups:
            group["lr"] = current_lr
        # every process draws the same global batch and trains on its share of it
        starts = rng.integers(0, starts_max, size=config.batch)[at.rank::at.size]
        ids = torch.from_numpy(np.stack([data.train[s:s + context] for s in starts])).to(device)
        loss = next_token_nll(ddp(input_ids=ids).logits, ids)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        optimiser.step()
        used += cost
        step += 1
        tokens += ids.numel() * at.size
        bar.update(int(100 * used / config.budget) - bar.n)
        if (eval_at and used >= eval_at[0] * config.budget) or step in config.extra_eval_steps:
            while eval_at and used >= eval_at[0] * config.budget:
                eval_at.pop(0)
            record("eval" if step not in config.extra_eval_steps else "equal steps")
        if checkpoint and step % checkpoint.every == 0:
            save()
    bar.close()
    if curve[-1]["step"] != step:
        record()
    if checkpoint:
        save(done=True)
    model.eval()
    return pd.DataFrame(curve), pd.DataFrame(records), model


def training_device(at: World) -> torch.device:
    """Under torchrun each process's own device; alone, the runtime's choice (``ANATOMY_DEVICE``, else a GPU)."""
    return at.device if at.size > 1 else get_device()


def _wrap(model, at: World, compiled: bool = False):
    """The module a training step calls: DistributedDataParallel under torchrun (which also copies rank 0's
    weights to every process), the model itself otherwise; compiled with ``torch.compile`` when asked (a new
    depth compiles once per process, later models of a depth already seen reuse it)."""
    wrapped = model
    if at.size > 1:
        device_ids = [at.local_rank] if at.device.type == "cuda" else None
        wrapped = DistributedDataParallel(model, device_ids=device_ids)
    return torch.compile(wrapped) if compiled else wrapped
