"""Chapter 7 along the compute axis: uniform, shallow and G_stack at several budgets, one trajectory per arm.

At one budget the growth experiment cannot tell "growing helps" from "a small model wins a small budget": the
question is at what compute the target depth overtakes its starting depth, and whether growth gets there
sooner. Training every arm afresh at every budget costs the sum of the budgets; here each (arm, seed) trains
once, to the largest budget, under a ``BranchSchedule`` (warm-up over a fixed number of FLOPs, then a constant
rate), and each smaller budget is a decay branch forked from that trajectory where its own decay starts
(Hägele et al. 2024, arXiv 2405.18392). By construction a branch is the fresh run with the same schedule, step
for step (a test holds it to the bit); what it differs in from the chapter's own protocol is the warm-up,
which is ``warmup`` of the *base* budget at every budget instead of ``warmup`` of its own. ``check_arms`` are
also run fresh under the chapter's protocol at ``check_multiple`` to measure that difference.

G_stack grows at ``growth_time`` of *each* budget (the design the chapter's arm has, so every budget asks the
same question). Before its growth event a G_stack run is the shallow arm of the same seed (same
initialisation, data order and schedule), so each G_stack budget forks the shallow trajectory at its growth
time and trains afresh from there: its cost is ``1 - growth_time`` of each budget.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import pandas as pd
from tqdm.auto import tqdm

from .checkpoints import Forks
from .compute import is_stored, text_data, through_store
from .config import BranchSchedule, TrainConfig
from .params import GrowthParams
from .trainer import train

SWEEP_ARMS = ("uniform", "shallow", "gstack")


@dataclass(frozen=True)
class BudgetParams(GrowthParams):
    """The growth experiment's shapes and schedule (``GrowthParams``), at ``multiples`` of its budget."""

    DIAGNOSTIC = "growth_budgets"
    VERSION = 1

    arms: tuple[str, ...] = field(default=SWEEP_ARMS, metadata={"help": f"arms to train, of {list(SWEEP_ARMS)}"})
    multiples: tuple[float, ...] = field(default=(0.25, 0.5, 1.0, 2.0, 4.0), metadata={
        "help": "budgets, as multiples of budget_steps steps of the target depth"})
    check_arms: tuple[str, ...] = field(default=("uniform", "shallow"), metadata={
        "help": "arms also trained fresh (seed 0) under the chapter's own schedule, to check the branches"})
    check_multiple: float = field(default=2.0, metadata={"help": "the budget multiple of the fresh check runs"})
    compile: bool = field(default=True, metadata={"help": "torch.compile the training step"})

    def __post_init__(self):
        for arm in self.arms:
            if arm not in SWEEP_ARMS:
                raise ValueError(f"the budget sweep trains {list(SWEEP_ARMS)}, not {arm!r}")
        super().__post_init__()
        if not self.multiples or list(self.multiples) != sorted(set(self.multiples)) or self.multiples[0] <= 0:
            raise ValueError(f"multiples must be positive and increasing, got {self.multiples}")
        for arm in self.check_arms:
            if arm not in ("uniform", "shallow"):
                raise ValueError(f"check_arms are trained fresh from a warm-up: choose of ['uniform', 'shallow'], "
                                 f"not {arm!r}")
        if self.check_arms and self.check_multiple not in self.multiples:
            raise ValueError(f"check_multiple {self.check_multiple} must be one of the multiples {self.multiples}")
        smallest = self.multiples[0]
        if self.warmup / smallest + self.decay > 1:
            raise ValueError(f"the warm-up ({self.warmup} of the base budget) and the decay ({self.decay}) overlap "
                             f"at the smallest multiple {smallest}; raise it to at least "
                             f"{self.warmup / (1 - self.decay):.3g}")
        if "gstack" in self.arms and self.growth_time * smallest * self.budget_steps < 1:
            raise ValueError(f"at multiple {smallest}, G_stack would grow before its first step; raise the "
                             "smallest multiple or budget_steps")

    def budget_at(self, multiple: float) -> float:
        return multiple * self.budget

    def branch_config(self, multiple: float) -> TrainConfig:
        """The config of a run of this budget under the shared schedule (warm-up fixed in FLOPs)."""
        schedule = BranchSchedule(self.lr, 0.0, self.decay, warmup_flops=self.warmup * self.budget,
                                  floor=1e-3 / self.warmup if self.warmup else 1.0)
        return TrainConfig(self.shape, self.budget_at(multiple), self.batch, schedule,
                           eval_fractions=self.eval_fractions, rewarm=self.rewarm,
                           reset_optimizer=self.reset_optimizer, clone_noise=self.clone_noise, compile=self.compile)

    def fresh_config(self, multiple: float) -> TrainConfig:
        """The chapter's own protocol at this budget (warm-up ``warmup`` of this budget)."""
        base = self.config()
        return TrainConfig(base.shape, self.budget_at(multiple), self.batch, base.schedule,
                           eval_fractions=self.eval_fractions, rewarm=self.rewarm,
                           reset_optimizer=self.reset_optimizer, clone_noise=self.clone_noise, compile=self.compile)

    def work(self, profile=None) -> float:
        """Training FLOPs of the sweep: per seed, each trajectory to the largest budget plus the decay branches,
        G_stack's post-growth part of every budget, and the fresh check runs."""
        largest, smaller = self.multiples[-1], self.multiples[:-1]
        per_seed = 0.0
        for arm in self.arms:
            if arm == "gstack":
                per_seed += (1 - self.growth_time) * sum(self.multiples)
            else:
                per_seed += largest + self.decay * sum(smaller)
        if "gstack" in self.arms and "shallow" not in self.arms:
            per_seed += self.growth_time * largest  # the shallow trunk it forks from
        return float((self.seeds * per_seed + len(self.check_arms) * self.check_multiple) * self.budget)


def _final(curve: pd.DataFrame, arm: str, seed: int, multiple: float, protocol: str, budget: float,
           own_s: float) -> dict:
    last = curve.iloc[-1]
    return {"arm": arm, "seed": seed, "multiple": multiple, "protocol": protocol, "budget_flops": budget,
            "final_val_loss": float(last.val_loss), "flops": float(last.flops), "steps": int(last.step),
            "tokens": int(last.tokens), "layers": int(last.layers), "wall_s": float(last.wall_s),
            "own_wall_s": own_s}


def run_budgets(params: BudgetParams, progress: bool = True) -> dict[str, pd.DataFrame]:
    """Every (arm, seed) trajectory with its branches, and the fresh check runs: final losses and curves."""
    _, data = text_data(params)
    largest = params.multiples[-1]
    finals, curves = [], []

    def keep(curve, arm, seed, multiple, protocol, started):
        own = time.perf_counter() - started
        finals.append(_final(curve, arm, seed, multiple, protocol, params.budget_at(multiple), own))
        curves.append(curve.assign(arm=arm, multiple=multiple, protocol=protocol))

    arms = [arm for arm in SWEEP_ARMS if arm in params.arms]  # G_stack last: it forks the shallow trajectory
    bar = tqdm(total=params.seeds * len(arms) + len(params.check_arms), desc="budget sweep", disable=not progress)
    stack_points = {params.growth_time * params.budget_at(m): m for m in params.multiples}
    for seed in range(params.seeds):
        trunks: dict[float, dict] = {}
        for arm in arms:
            if arm == "gstack":
                if "shallow" not in arms:  # the shallow trunk only, to the last growth time
                    forks = Forks(tuple(stack_points))
                    train(params.arm("shallow"), params.branch_config(largest), data, seed, forks=forks)
                    trunks = forks.states
                for point, multiple in stack_points.items():
                    started = time.perf_counter()
                    curve, _, _ = train(params.arm("gstack"), params.branch_config(multiple), data, seed,
                                        start=trunks[point])
                    keep(curve, arm, seed, multiple, "branch", started)
                bar.update()
                continue
            decay_points = {(1 - params.decay) * params.budget_at(m): m for m in params.multiples[:-1]}
            wanted = tuple(decay_points) + (tuple(stack_points) if arm == "shallow" else ())
            forks = Forks(wanted)
            started = time.perf_counter()
            curve, _, _ = train(params.arm(arm), params.branch_config(largest), data, seed, forks=forks)
            keep(curve, arm, seed, largest, "branch", started)
            for point, multiple in decay_points.items():
                started = time.perf_counter()
                branch, _, _ = train(params.arm(arm), params.branch_config(multiple), data, seed,
                                     start=forks.states[point])
                keep(branch, arm, seed, multiple, "branch", started)
            if arm == "shallow":
                trunks = {point: forks.states[point] for point in stack_points}
            bar.update()
    for arm in params.check_arms:
        started = time.perf_counter()
        curve, _, _ = train(params.arm(arm), params.fresh_config(params.check_multiple), data, 0)
        keep(curve, arm, 0, params.check_multiple, "fresh", started)
        bar.update()
    bar.close()
    return {"finals": pd.DataFrame(finals), "curves": pd.concat(curves, ignore_index=True)}


def budgets(params: BudgetParams | None = None, profile: str = "quick", recompute: bool = False,
            progress: bool = True) -> dict[str, pd.DataFrame]:
    """The sweep's tables, through the results store."""
    params = params or BudgetParams.for_profile(profile)
    return through_store("growth_budgets", params, lambda: run_budgets(params, progress), recompute)


def budgets_stored(params: BudgetParams) -> bool:
    """Whether the store holds this sweep (without computing it)."""
    return is_stored("growth_budgets", params)


def epochs(tokens: float, train_tokens: int) -> float:
    """Passes over the training text that ``tokens`` training tokens amount to."""
    return tokens / train_tokens if train_tokens else math.nan
