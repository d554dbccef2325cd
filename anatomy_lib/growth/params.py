"""The growth experiment: every arm on the same FLOP budget, several seeds, and what the curves mean.

Arms (``ARMS``), all ending at ``target_layers`` except the shallow control:

- ``uniform``: the target depth trained on the whole budget;
- ``shallow``: the growing arms' starting depth trained on the whole budget (does growth win only by being
  small for longer?);
- ``gstack``: G_stack, a base of ``start_layers`` stacked to the target at ``growth_time``;
- ``midas``: MIDAS-style gradual growth, the middle ``midas_block`` layers duplicated at each of
  ``midas_times``;
- ``developmental``: the paper's idea made concrete: ``start_layers`` "critical" layers trained first (and so
  longest), then at each of ``develop_times`` chapter 2's skip-ablation importance map is measured on the
  growing model itself (charged to the arm), the most important layers are cloned (plus noise) next to
  themselves and layers whose interval lies below zero are removed and replaced;
- ``random_source``: the developmental schedule with the cloned layers chosen at random (nothing measured):
  separates "critical first" from generic growth.

Measures: final validation loss at matched FLOPs; FLOPs to reach a target (the uniform run's final loss and its
loss at 25/50/75% of the budget, the uniform run of the same seed: paired), interpolated on log-FLOPs, "not
reached" never imputed; speed-up (uniform / arm) and savings (1 - arm / uniform), with t-intervals over seeds. Also the
paper's protocol (equal steps), and the importance map of the trained uniform and developmental models (computed
in ``analysis`` and ``compute``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..core.checks import non_negative_number, one_of, positive_int, positive_number
from ..core.flops import step_flops
from ..core.params import DiagnosticParams
from .config import Arm, Event, Schedule, TrainConfig
from .models import Shape

ARMS = ("uniform", "shallow", "gstack", "midas", "developmental", "random_source")


@dataclass(frozen=True)
class GrowthParams(DiagnosticParams):
    """Every choice the paper leaves unsaid (width, data, tokenizer, schedule, seeds), named."""

    DIAGNOSTIC = "growth"
    # The importance maps were once charged one layer-forward short per ablated layer; the correction (+6.6e9 FLOPs
    # a developmental run, 0.08% of its budget) moves no stored number at the printed precision (checked by a full
    # recompute: final losses within 0.0003 nats, same steps), so the stored results keep this version.
    VERSION = 1

    arms: tuple[str, ...] = field(default=ARMS, metadata={"help": "arms to train"})
    seeds: int = field(default=3, metadata={"help": "seeds per arm (initialisation and data order)"})
    target_layers: int = field(default=12, metadata={"help": "depth every growing arm ends at"})
    start_layers: int = field(default=3, metadata={"help": "depth the growing arms (and the shallow control) start at"})
    width: int = field(default=128, metadata={"help": "model width"})
    heads: int = field(default=4, metadata={"help": "attention heads"})
    mlp_width: int = field(default=512, metadata={"help": "MLP width"})
    context: int = field(default=128, metadata={"help": "tokens per training sequence"})
    vocab_size: int = field(default=4096, metadata={"help": "BPE vocabulary (a committed tokenizer)"})
    batch: int = field(default=16, metadata={"help": "sequences per step"})
    budget_steps: int = field(default=160, metadata={"help": "the budget, as the uniform arm's number of steps"})
    lr: float = field(default=3e-3, metadata={"help": "peak learning rate"})
    warmup: float = field(default=0.05, metadata={"help": "warm-up, as a fraction of the budget"})
    decay: float = field(default=0.2, metadata={"help": "linear decay over the last fraction of the budget"})
    growth_time: float = field(default=0.25, metadata={"help": "gstack: when to stack, as a fraction of the budget"})
    midas_block: int = field(default=3, metadata={"help": "midas: layers duplicated at each stage"})
    midas_times: tuple[float, ...] = field(default=(0.2, 0.4, 0.6), metadata={"help": "midas: stage times"})
    develop_times: tuple[float, ...] = field(default=(0.25, 0.5), metadata={
        "help": "developmental and random_source: growth times (depth grows evenly to target_layers)"})
    clone_noise: float = field(default=0.01, metadata={"help": "noise on cloned matrices, relative to their std"})
    rewarm: float = field(default=0.02, metadata={"help": "re-warm-up after growth, fraction of the budget"})
    reset_optimizer: bool = field(default=False, metadata={"help": "reset every AdamW moment at growth"})
    eval_fractions: tuple[float, ...] = field(default=(0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6,
                                                       0.7, 0.8, 0.9, 1.0), metadata={
        "help": "fractions of the budget at which validation loss is measured"})
    validation_blocks: int = field(default=16, metadata={"help": "validation blocks for the curves"})
    importance_blocks: int = field(default=8, metadata={"help": "validation blocks for the importance maps"})

    def __post_init__(self):
        for arm in self.arms:
            one_of(arm, ARMS, "arm")
        if not self.arms:
            raise ValueError(f"choose at least one arm of {list(ARMS)}")
        for name in ("seeds", "target_layers", "start_layers", "width", "heads", "mlp_width", "context", "batch",
                     "budget_steps", "midas_block", "validation_blocks", "importance_blocks"):
            positive_int(getattr(self, name), name)
        if self.start_layers > self.target_layers:
            raise ValueError(f"start_layers ({self.start_layers}) must not exceed target_layers "
                             f"({self.target_layers})")
        positive_number(self.lr, "lr")
        for name in ("clone_noise", "rewarm", "warmup", "decay"):
            non_negative_number(getattr(self, name), name)
        for fraction in self.eval_fractions:
            if not 0 < fraction <= 1:
                raise ValueError(f"evaluation fractions lie in (0, 1], got {fraction}")
        for time in (self.growth_time, *self.midas_times, *self.develop_times):
            if not 0 < time < 1:
                raise ValueError(f"growth times are fractions of the budget in (0, 1), got {time}")
        if "gstack" in self.arms and self.target_layers % self.start_layers:
            raise ValueError(f"gstack stacks {self.start_layers} layers; target_layers {self.target_layers} is not "
                             "a multiple")
        for name, chosen in (("growth_time", (self.growth_time,)), ("midas_times", self.midas_times),
                             ("develop_times", self.develop_times)):
            times = (0.0, *chosen, 1.0)
            if list(times) != sorted(times):
                raise ValueError(f"{name} must increase, got {chosen}")
            shortest = min(b - a for a, b in zip(times, times[1:]))
            if shortest * self.budget_steps < 1:
                raise ValueError(f"budget too small for a phase: {name} {chosen} leaves a phase of {shortest:.3f} "
                                 f"of the budget, under one of {self.budget_steps} steps; raise budget_steps to at "
                                 f"least {math.ceil(1 / shortest)}")
        if "midas" in self.arms and self.start_layers + self.midas_block * len(self.midas_times) != self.target_layers:
            raise ValueError(f"midas grows {self.start_layers} + {len(self.midas_times)} x {self.midas_block} layers, "
                             f"which must equal target_layers {self.target_layers}")

    @property
    def shape(self) -> Shape:
        return Shape(self.width, self.heads, self.heads, self.mlp_width, self.vocab_size, self.context)

    @property
    def budget(self) -> float:
        """FLOPs each arm may spend, ``budget_steps`` steps of the uniform arm."""
        return self.budget_steps * step_flops(self.shape, [True] * self.target_layers, True, self.batch)

    def work(self, profile=None) -> float:
        """Training FLOPs of every run: each arm spends the budget, with every seed."""
        return float(len(self.arms) * self.seeds * self.budget)

    def arm(self, name: str) -> Arm:
        """The schedule of one arm."""
        one_of(name, ARMS, "arm")
        s, t = self.start_layers, self.target_layers
        if name == "uniform":
            return Arm(name, t)
        if name == "shallow":
            return Arm(name, s)
        if name == "gstack":
            return Arm(name, s, (Event(self.growth_time, "stack", t),))
        if name == "midas":
            return Arm(name, s, tuple(Event(f, "middle", block=self.midas_block) for f in self.midas_times))
        kind = "develop" if name == "developmental" else "random_develop"
        steps = len(self.develop_times)
        targets = [s + math.ceil((t - s) * (i + 1) / steps) for i in range(steps)]
        return Arm(name, s, tuple(Event(f, kind, target) for f, target in zip(self.develop_times, targets)))

    def config(self) -> TrainConfig:
        return TrainConfig(self.shape, self.budget, self.batch, Schedule(self.lr, self.warmup, self.decay),
                           eval_fractions=self.eval_fractions, rewarm=self.rewarm,
                           reset_optimizer=self.reset_optimizer, clone_noise=self.clone_noise,
                           extra_eval_steps=(self.budget_steps,))
