"""What a growth run is told: the learning-rate schedule, the arm (a starting depth and its growth events), the
settings every arm shares, and the text. Plain frozen dataclasses: ``params`` builds them from a chapter's
parameters, ``trainer`` runs them, ``checkpoints`` fingerprints them; none of them runs anything.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ..core.checks import one_of
from .models import Shape

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
    rewarm_flops: float | None = None  # ... or this many FLOPs, whatever the budget (decay branches share it)
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
