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
states, growth phase) atomically every few steps, and the same call continues from the last save
(``checkpoints``). What a run is told lives in ``config``.

Read ``train`` top to bottom: it opens a run (fresh, from a checkpoint or from a fork), then loops: keep the forks
due, apply the growth events due, take one step if the budget allows it, evaluate when due, save when due.
``_Run`` holds the state that loop moves forward.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace

import numpy as np
import pandas as pd
import torch
from torch.nn.parallel import DistributedDataParallel
from tqdm.auto import tqdm

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
from .checkpoints import (
    CHECKPOINT_FORMAT,
    Checkpointing,
    Forks,
    load_checkpoint,
    numpy_rng_from,
    run_fingerprint,
    save_checkpoint,
)
from .config import Arm, Event, TextData, TrainConfig
from .models import Shape, build_model
from .operators import Copy, apply_plan, middle_plan, remove_plan, stack_plan


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


@dataclass
class _Run:
    """The state a training loop moves forward: the model and its optimiser, the position in the budget, the data
    order, the growth events still to come, and what has been recorded. ``snapshot`` is all of it as a
    checkpoint; ``restore`` puts a snapshot back."""

    arm: Arm
    config: TrainConfig
    data: TextData
    seed: int
    at: World
    fingerprint: str
    model: torch.nn.Module
    optimiser: torch.optim.Optimizer
    rng: np.random.Generator
    events: list[Event]
    eval_at: list[float]
    used: float = 0.0  # FLOPs spent
    step: int = 0
    tokens: int = 0
    rewarm_from: float | None = None  # FLOPs at the last growth event
    current_lr: float = 0.0
    elapsed: float = 0.0  # wall seconds before this process took the run over
    curve: list[dict] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)
    module: torch.nn.Module | None = None  # what a step calls (the model, wrapped under torchrun)
    started: float = 0.0

    @classmethod
    def open(cls, arm: Arm, config: TrainConfig, data: TextData, seed: int, at: World, fingerprint: str,
             saved: dict | None, relabel: bool) -> "_Run":
        """A fresh run, or ``saved`` restored (``relabel``: a fork's state continued as this arm and config)."""
        model = build_model(config.shape, saved["n_layers"] if saved else arm.start_layers, seed)
        run = cls(arm, config, data, seed, at, fingerprint, model, _optimiser(model, config, None),
                  np.random.default_rng(10_000 + seed), sorted(arm.events, key=lambda e: e.fraction),
                  sorted(set(config.eval_fractions)))
        if saved:
            run.restore(saved, relabel)
        return run

    def snapshot(self, done: bool = False) -> dict:
        return {"format": list(CHECKPOINT_FORMAT), "fingerprint": self.fingerprint, "done": done,
                "n_layers": len(self.model.model.layers), "model": self.model.state_dict(),
                "optimiser": self.optimiser.state_dict(), "curve": self.curve, "records": self.records,
                "loop": {"used": self.used, "step": self.step, "tokens": self.tokens, "rewarm_from": self.rewarm_from,
                         "current_lr": self.current_lr, "elapsed": time.perf_counter() - self.started,
                         "eval_at": self.eval_at, "events_done": len(self.arm.events) - len(self.events)},
                "numpy_rng": self.rng.bit_generator.state, "torch_rng": torch.get_rng_state()}

    def restore(self, saved: dict, relabel: bool) -> None:
        self.model.load_state_dict(saved["model"])
        self.optimiser.load_state_dict(saved["optimiser"])
        loop = saved["loop"]
        self.used, self.step, self.tokens = loop["used"], loop["step"], loop["tokens"]
        self.rewarm_from, self.current_lr, self.elapsed = loop["rewarm_from"], loop["current_lr"], loop["elapsed"]
        self.eval_at = list(loop["eval_at"])
        self.events = self.events[loop["events_done"]:]
        self.curve, self.records = list(saved["curve"]), list(saved["records"])
        self.rng = numpy_rng_from(saved["numpy_rng"])
        torch.set_rng_state(saved["torch_rng"])
        if relabel:  # the trajectory so far becomes this arm's; its evaluations to come are this config's
            budget = self.config.budget
            self.curve = [{**row, "arm": self.arm.name, "fraction": row["flops"] / budget} for row in self.curve]
            self.eval_at = [f for f in sorted(set(self.config.eval_fractions)) if f * budget > self.used]

    def go(self, device: torch.device) -> None:
        """Move to the device and start the clock (the run's wall time continues from ``elapsed``)."""
        self.model.to(device)
        self.module = _wrap(self.model, self.at, self.config.compile)
        self.started = time.perf_counter() - self.elapsed

    def record(self, kind: str = "eval") -> None:
        """One point of the curve: validation loss now."""
        self.model.eval()
        self.curve.append({"arm": self.arm.name, "seed": self.seed, "step": self.step, "tokens": self.tokens,
                           "flops": self.used, "fraction": self.used / self.config.budget,
                           "val_loss": evaluate(self.model, self.data.validation, self.at),
                           "layers": len(self.model.model.layers), "lr": self.current_lr, "kind": kind,
                           "wall_s": time.perf_counter() - self.started})
        self.model.train()

    def grow(self, event: Event, device: torch.device) -> None:
        """Apply a growth event (charged to the budget), rebuild the wrapper and the optimiser, start the
        re-warm-up, record the loss right after."""
        cost, info = _grow(self.model, event, self.config, self.data, self.seed, self.at)
        self.used += cost
        self.records.append({"arm": self.arm.name, "seed": self.seed, "step": self.step, "flops": self.used,
                             "fraction": event.fraction, "cost_flops": cost, **info})
        self.model.to(device)
        self.model.train()
        self.module = _wrap(self.model, self.at, self.config.compile)
        self.optimiser = _optimiser(self.model, self.config, self.optimiser)
        self.rewarm_from = self.used
        self.record("growth")

    def growth_due(self) -> bool:
        return bool(self.events) and self.used >= self.events[0].fraction * self.config.budget

    def step_cost(self) -> float:
        return step_flops(self.config.shape, [True] * len(self.model.model.layers), True, self.config.batch)

    @property
    def stop(self) -> float:
        """FLOPs the run may spend (the budget, or ``stop_at`` where that comes first)."""
        config = self.config
        return config.budget if config.stop_at is None else min(config.stop_at, config.budget)

    def learning_rate(self) -> float:
        """The schedule's rate at this point, scaled down while re-warming after a growth event."""
        config = self.config
        rate = config.schedule.at(self.used, config.budget)
        length = config.rewarm * config.budget if config.rewarm_flops is None else config.rewarm_flops
        if self.rewarm_from is not None and length > 0:
            rate *= min(1.0, (self.used - self.rewarm_from) / length + 1e-3)
        return rate

    def train_step(self, cost: float, device: torch.device) -> None:
        """One optimiser step on a batch drawn from the training stream; every process draws the same global
        batch and trains on its share of it."""
        config, at = self.config, self.at
        self.current_lr = self.learning_rate()
        for group in self.optimiser.param_groups:
            group["lr"] = self.current_lr
        context = config.shape.context
        starts = self.rng.integers(0, len(self.data.train) - context, size=config.batch)[at.rank::at.size]
        ids = torch.from_numpy(np.stack([self.data.train[s:s + context] for s in starts])).to(device)
        loss = next_token_nll(self.module(input_ids=ids).logits, ids)
        self.optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), config.clip)
        self.optimiser.step()
        self.used += cost
        self.step += 1
        self.tokens += ids.numel() * at.size

    def evaluate_if_due(self) -> None:
        """Record the loss at the next evaluation fraction passed (and at the extra steps asked for)."""
        budget, extra = self.config.budget, self.config.extra_eval_steps
        if (self.eval_at and self.used >= self.eval_at[0] * budget) or self.step in extra:
            while self.eval_at and self.used >= self.eval_at[0] * budget:
                self.eval_at.pop(0)
            self.record("eval" if self.step not in extra else "equal steps")

    def save(self, checkpoint: Checkpointing, forks: Forks | None, done: bool = False) -> None:
        """The run's state, with the forks kept so far (a resumed run still has the states it passed)."""
        if self.at.main:
            state = self.snapshot(done)
            if forks is not None:
                state["forks"] = forks.states
            save_checkpoint(checkpoint.path(self.arm.name, self.seed), state)
        barrier(self.at)

    def result(self):
        self.model.eval()
        return pd.DataFrame(self.curve), pd.DataFrame(self.records), self.model


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
    if any(event.fraction >= 1 for event in arm.events):
        raise ValueError("growth times must lie inside the budget")
    fingerprint = run_fingerprint(arm, config, data, seed) if checkpoint else ""
    saved = load_checkpoint(checkpoint.path(arm.name, seed), fingerprint) if checkpoint else copy.deepcopy(start)
    run = _Run.open(arm, config, data, seed, at, fingerprint, saved, relabel=start is not None)
    if forks is not None and checkpoint is not None and saved:
        forks.states.update(saved.get("forks", {}))
    if saved and saved["done"]:
        return run.result()
    device = training_device(at)
    run.go(device)
    pending = sorted(t for t in (forks.thresholds if forks else ()) if t > run.used)
    run.model.train()
    if not saved:
        run.record()
    bar = tqdm(total=100, initial=int(100 * run.used / config.budget), desc=f"{arm.name} (seed {seed})",
               disable=not progress or not at.main, leave=False, unit="%")
    while True:
        while pending and run.used >= pending[0]:
            forks.states[pending.pop(0)] = copy.deepcopy(run.snapshot())
        while run.growth_due():
            run.grow(run.events.pop(0), device)
        cost = run.step_cost()
        if run.used + cost > run.stop:
            break
        run.train_step(cost, device)
        bar.update(int(100 * run.used / config.budget) - bar.n)
        run.evaluate_if_due()
        if checkpoint and run.step % checkpoint.every == 0:
            run.save(checkpoint, forks)
    bar.close()
    if run.curve[-1]["step"] != run.step:
        run.record()
    if checkpoint:
        run.save(checkpoint, forks, done=True)
    return run.result()


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
