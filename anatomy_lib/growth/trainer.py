"""One trainer for every arm of the growth experiment, on a FLOP budget.

An arm starts at some depth and may grow at given fractions of its FLOP budget. Every arm uses the same
AdamW, the same gradient clipping and the same warm-up / stable / decay learning-rate schedule, defined on the
fraction of the budget used (so a cheap shallow step advances the schedule less than a deep one). Steps are
charged with ``flops.step_flops``; measurements an arm makes to decide how to grow are charged too; training
stops before the step that would exceed the budget. Validation loss is measured at fixed fractions of the
budget on fixed blocks. Given its seed (initialisation, data order, noise), a run is deterministic on a CPU.

At a growth event the layers are rebuilt from a plan (``operators``: deep copies, never shared modules), the
optimiser is rebuilt to hold every trainable parameter (asserted), old layers keep their AdamW moments and
new ones start fresh, and the learning rate re-warms over a short fraction of the budget (``reset_optimizer``:
every moment starts fresh, as G_stack's code does).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from ..checks import one_of
from .flops import forward_flops, step_flops
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
        if f < 1 - self.decay:
            return self.lr
        return self.lr * (1 - (1 - self.final) * min(1.0, (f - (1 - self.decay)) / self.decay))


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


@dataclass
class TextData:
    train: np.ndarray  # one token stream
    validation: torch.Tensor  # (blocks, context) for the curves
    importance: torch.Tensor  # (blocks, context) the developmental arm measures importance on


def evaluate(model, blocks: torch.Tensor) -> float:
    """Mean next-token NLL (nats) over the blocks."""
    with torch.inference_mode():
        logits = model(input_ids=blocks).logits[:, :-1].float()
        return float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), blocks[:, 1:].reshape(-1)))


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
    """FLOPs of a skip-ablation importance map with a prefix cache: one full pass, then for each layer l a
    pass through layers l+1.. and the head."""
    batch, context = blocks.shape
    full = forward_flops(shape, n_layers, batch, context)
    return full + sum(forward_flops(shape, n_layers - l - 1, batch, context) for l in range(n_layers))


def measure_importance(model, blocks: torch.Tensor, n_boot: int, seed: int) -> pd.DataFrame:
    """Chapter 2's skip ablation, with intervals, on a model in training (its own blocks, no tokenizer)."""
    from dataclasses import replace as dc_replace

    from ..corpus import TokenBlocks
    from ..importance import ImportanceParams, classify, importance_sweep
    from ..lab import Lab
    from ..runtime import get_profile
    from ..specimens import Specimen

    specimen = Specimen(model, None, "growing", "growth experiment", "", "float32", "cpu")
    profile = dc_replace(get_profile("smoke"), name="growth", n_blocks=blocks.shape[0],
                         block_len=blocks.shape[1], batch_size=blocks.shape[0], n_boot=n_boot)
    lab = Lab(specimen, profile, TokenBlocks(blocks, list(range(blocks.shape[0])), {}), progress=False)
    model.eval()
    table = importance_sweep(lab, ImportanceParams(mode="skip", seed=seed), progress=False)
    table["class"] = classify(table, len(model.model.layers))
    return table


def _grow(model, event: Event, config: TrainConfig, data: TextData, seed: int) -> tuple[int, dict]:
    """Apply one event; returns (FLOPs it cost, a record of what it did)."""
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
            table = measure_importance(model, data.importance, config.importance_boot, seed)
            cost = importance_cost(config.shape, n, data.importance)
            drop = sorted(int(l) for l in table.loc[table["ci_high"] < 0, "layer"])
            ranking = [int(l) for l in table.sort_values("change_pct", ascending=False)["layer"] if l not in drop]
        else:
            ranking = list(np.random.default_rng(seed).permutation(n))
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


def train(arm: Arm, config: TrainConfig, data: TextData, seed: int, progress: bool = False):
    """Train one arm on the budget. Returns (curve table, events table, final model)."""
    shape = config.shape
    model = build_model(shape, arm.start_layers, seed)
    model.train()
    optimiser = _optimiser(model, config, None)
    rng = np.random.default_rng(10_000 + seed)
    events = sorted(arm.events, key=lambda e: e.fraction)
    for event in events:
        if event.fraction >= 1:
            raise ValueError("growth times must lie inside the budget")
    used, step, tokens, rewarm_from = 0.0, 0, 0, None
    eval_at = sorted(set(config.eval_fractions))
    curve, records = [], []
    started = time.perf_counter()
    context = shape.context
    starts_max = len(data.train) - context

    def record(kind: str = "eval") -> None:
        model.eval()
        curve.append({"arm": arm.name, "seed": seed, "step": step, "tokens": tokens, "flops": used,
                      "fraction": used / config.budget, "val_loss": evaluate(model, data.validation),
                      "layers": len(model.model.layers), "lr": current_lr, "kind": kind,
                      "wall_s": time.perf_counter() - started})
        model.train()

    current_lr = 0.0
    record()
    bar = tqdm(total=100, desc=f"{arm.name} (seed {seed})", disable=not progress, leave=False, unit="%")
    while True:
        while events and used >= events[0].fraction * config.budget:
            event = events.pop(0)
            cost, info = _grow(model, event, config, data, seed)
            used += cost
            records.append({"arm": arm.name, "seed": seed, "step": step, "flops": used, "fraction": event.fraction,
                            "cost_flops": cost, **info})
            model.train()
            optimiser = _optimiser(model, config, optimiser)
            rewarm_from = used
            record("growth")
        n_layers = len(model.model.layers)
        cost = step_flops(shape, [True] * n_layers, True, config.batch)
        if used + cost > config.budget:
            break
        current_lr = config.schedule(used / config.budget)
        if rewarm_from is not None and config.rewarm > 0:
            current_lr *= min(1.0, (used - rewarm_from) / (config.rewarm * config.budget) + 1e-3)
        for group in optimiser.param_groups:
            group["lr"] = current_lr
        starts = rng.integers(0, starts_max, size=config.batch)
        ids = torch.from_numpy(np.stack([data.train[s:s + context] for s in starts]))
        logits = model(input_ids=ids).logits[:, :-1]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), ids[:, 1:].reshape(-1))
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        optimiser.step()
        used += cost
        step += 1
        tokens += ids.numel()
        bar.update(int(100 * used / config.budget) - bar.n)
        if (eval_at and used >= eval_at[0] * config.budget) or step in config.extra_eval_steps:
            while eval_at and used >= eval_at[0] * config.budget:
                eval_at.pop(0)
            record("eval" if step not in config.extra_eval_steps else "equal steps")
    bar.close()
    if curve[-1]["step"] != step:
        record()
    model.eval()
    return pd.DataFrame(curve), pd.DataFrame(records), model
