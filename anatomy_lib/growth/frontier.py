"""Growth where the question has an answer: byte-level models sized so that the target depth is compute-optimal
inside a CPU's budget, the compute-efficient frontier of fixed depths, and every growth arm against it.

Chapter 7's own study trains a 12-layer target far larger than its budget can serve, so a small model wins
before growth is tested. Here (``FrontierParams``):

- **Shapes.** Byte-level text (``bytes``: a 257-entry vocabulary, so the head costs almost nothing), width 48,
  MLP 192, context 256; depths 2, 4 and 8 (the target, with G_stack's factor 4 over the start of 2). The
  compute-optimal budget ``c_star`` is ``tokens_per_parameter`` (20, Hoffmann et al. 2022) times the target's
  body parameters, in the target's training FLOPs; budgets are ``multiples`` of it, C*/8 to 2C*.
- **One trunk per (arm, seed)** to the largest budget under a warm-up / stable / decay schedule, and a decay
  branch per smaller budget forked where its own decay starts (``BranchSchedule``; Hägele et al. 2024): every
  budget for the price of the largest plus 20% of the others. The warm-up is fixed in *tokens* and the same for
  every arm (``warmup_tokens``, charged in each arm's own FLOPs); growth events happen at fixed token counts, the
  same at every budget, before the smallest budget's decay; the re-warm-up after growth is fixed in tokens.
- **Learning rate per arm**: every rate of ``lrs`` at ``lr_check_multiple`` x C* (seed 0, one fresh run each);
  each arm's trunks use its best.
- **Seeds**: ``seeds_main`` for the target depth and G_stack, ``seeds_other`` for the rest; the unit of
  replication is the seed (paired: the same seed is the same data order and the same initial base).
- **Checks**: ``check_arms`` trained fresh (seed 0) at ``check_multiples``, beside their branches.

Every run is a *job*; finished jobs are kept one file each (``core.results.RunCheckpoints``, committed as they
finish) and a running job checkpoints its trainer state every few hundred steps (``checkpoints``), so the sweep
resumes where it stopped, on another machine too. ``frontier`` gathers the jobs into the stored result.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..core.checks import non_negative_number, one_of, positive_int, positive_number
from ..core.corpus import split_years
from ..core.flops import step_flops
from ..core.locks import claimed
from ..core.params import DiagnosticParams
from ..core.results import ResultStore, load_or_compute
from .bytes import VOCAB_SIZE, byte_blocks, byte_stream, ngram_baselines
from .checkpoints import Checkpointing, Forks
from .config import Arm, BranchSchedule, Event, TextData, TrainConfig
from .models import Shape, parameter_counts
from .trainer import train

FRONTIER_ARMS = ("gstack", "developmental", "random_source", "midas")
FRONTIER_COMMAND = "python -m anatomy_lib growth-frontier"  # runs the sweep apart from the chapter (CPU-hours)
SECOND_WIDTH = 32  # the scale check: the same design at a second width (``FrontierParams.at_width``)


@dataclass(frozen=True)
class FrontierParams(DiagnosticParams):
    """Every choice of the compute-optimal growth experiment, named (see the module docstring)."""

    DIAGNOSTIC = "growth_frontier"
    VERSION = 1

    width: int = field(default=48, metadata={"help": "model width"})
    heads: int = field(default=3, metadata={"help": "attention heads (head size 16)"})
    mlp_width: int = field(default=192, metadata={"help": "SwiGLU MLP width"})
    context: int = field(default=256, metadata={"help": "bytes per training sequence"})
    batch: int = field(default=16, metadata={"help": "sequences per step"})
    depths: tuple[int, ...] = field(default=(2, 4, 8), metadata={"help": "fixed depths of the frontier"})
    start_layers: int = field(default=2, metadata={"help": "depth the growing arms start at"})
    target_layers: int = field(default=8, metadata={"help": "depth the growing arms end at (its C* sets budgets)"})
    tokens_per_parameter: float = field(default=20.0, metadata={
        "help": "C* = this many tokens per body parameter of the target depth, in its training FLOPs"})
    multiples: tuple[float, ...] = field(default=(0.125, 0.25, 0.5, 1.0, 2.0), metadata={
        "help": "budgets, as multiples of C*"})
    growth_arms: tuple[str, ...] = field(default=FRONTIER_ARMS, metadata={"help": f"of {list(FRONTIER_ARMS)}"})
    lrs: tuple[float, ...] = field(default=(1e-3, 2e-3, 4e-3, 8e-3), metadata={
        "help": "peak learning rates of the per-arm check"})
    lr_check_multiple: float = field(default=0.25, metadata={"help": "budget of the learning-rate check (x C*)"})
    seeds_main: int = field(default=5, metadata={"help": "seeds of the target depth and G_stack"})
    seeds_other: int = field(default=3, metadata={"help": "seeds of every other arm"})
    warmup_tokens: int = field(default=131_072, metadata={"help": "warm-up, in tokens, the same for every arm"})
    decay: float = field(default=0.2, metadata={"help": "linear decay over the last fraction of each budget"})
    growth_tokens: int = field(default=393_216, metadata={
        "help": "G_stack grows after this many tokens (the same at every budget)"})
    develop_tokens: tuple[int, ...] = field(default=(262_144, 524_288), metadata={
        "help": "developmental and random_source grow after these many tokens (depth evenly to the target)"})
    midas_tokens: tuple[int, ...] = field(default=(196_608, 393_216, 589_824), metadata={
        "help": "MIDAS duplicates its middle block after these many tokens"})
    midas_block: int = field(default=2, metadata={"help": "MIDAS: layers duplicated at each stage"})
    rewarm_tokens: int = field(default=65_536, metadata={"help": "re-warm-up after a growth event, in tokens"})
    clone_noise: float = field(default=0.01, metadata={"help": "noise on cloned matrices, relative to their std"})
    check_arms: tuple[str, ...] = field(default=("depth8", "gstack"), metadata={
        "help": "arms also trained fresh (seed 0) at check_multiples, to check the branches"})
    check_multiples: tuple[float, ...] = field(default=(0.25, 1.0), metadata={"help": "budgets of the checks"})
    validation_blocks: int = field(default=256, metadata={"help": "validation blocks of context bytes (1930-1959)"})
    importance_blocks: int = field(default=16, metadata={"help": "blocks the developmental arm measures on"})
    evals: int = field(default=16, metadata={"help": "validation points along each trunk (log-spaced)"})
    checkpoint_every: int = field(default=200, metadata={"help": "steps between trainer checkpoints"})

    def __post_init__(self):
        for name in ("width", "heads", "mlp_width", "context", "batch", "start_layers", "target_layers",
                     "seeds_main", "seeds_other", "warmup_tokens", "growth_tokens", "validation_blocks",
                     "importance_blocks", "evals", "checkpoint_every", "midas_block"):
            positive_int(getattr(self, name), name)
        positive_number(self.tokens_per_parameter, "tokens_per_parameter")
        non_negative_number(self.clone_noise, "clone_noise")
        for arm in self.growth_arms:
            one_of(arm, FRONTIER_ARMS, "growth arm")
        if self.target_layers not in self.depths or self.start_layers not in self.depths:
            raise ValueError(f"the depths {self.depths} must include start_layers {self.start_layers} and "
                             f"target_layers {self.target_layers}")
        if self.target_layers % self.start_layers:
            raise ValueError(f"G_stack stacks {self.start_layers} layers: target_layers {self.target_layers} must be "
                             "a multiple")
        if list(self.multiples) != sorted(set(self.multiples)) or self.multiples[0] <= 0:
            raise ValueError(f"multiples must be positive and increasing, got {self.multiples}")
        if not 0 < self.decay < 1:
            raise ValueError(f"decay is a fraction of each budget in (0, 1), got {self.decay}")
        if self.start_layers + self.midas_block * len(self.midas_tokens) != self.target_layers:
            raise ValueError(f"MIDAS grows {self.start_layers} + {len(self.midas_tokens)} x {self.midas_block} "
                             f"layers, which must equal target_layers {self.target_layers}")
        for arm in self.check_arms:
            one_of(arm, self.arms, "check arm")
        smallest_decay = (1 - self.decay) * self.multiples[0] * self.c_star
        for arm in self.arms:
            spent = self.flops_at_tokens(arm, self.last_growth_tokens(arm) + self.rewarm_tokens)
            if spent >= smallest_decay:
                raise ValueError(f"{arm} is still growing (or re-warming) where the smallest budget's decay starts; "
                                 "grow earlier or raise the smallest multiple")

    # ---- shapes and budgets -------------------------------------------------------------------------------------
    @property
    def shape(self) -> Shape:
        return Shape(self.width, self.heads, self.heads, self.mlp_width, VOCAB_SIZE, self.context)

    def token_flops(self, n_layers: int) -> float:
        """Training FLOPs per token at a depth (``core.flops.step_flops``, per token of one sequence)."""
        return step_flops(self.shape, [True] * n_layers, True, 1) / self.context

    @property
    def body_parameters(self) -> int:
        return parameter_counts(self.shape, self.target_layers)["body"]

    @property
    def c_star(self) -> float:
        """The compute-optimal budget of the target depth by the stated rule (tokens_per_parameter tokens per body
        parameter, at its training FLOPs per token)."""
        return self.tokens_per_parameter * self.body_parameters * self.token_flops(self.target_layers)

    def budget(self, multiple: float) -> float:
        return multiple * self.c_star

    def at_width(self, width: int) -> "FrontierParams":
        """The same design at another width (the scale check): head size and MLP ratio kept, and every count of
        tokens (warm-up, growth points, re-warm-up) scaled with the target's compute-optimal token count, so each
        event falls at the same fraction of C* as here. Budgets stay multiples of the new C*."""
        head_size = self.width // self.heads
        if width % head_size:
            raise ValueError(f"width {width} must be a multiple of the head size {head_size}")
        heads, mlp_width = width // head_size, self.mlp_width * width // self.width
        # C* in tokens is tokens_per_parameter x the target's body parameters: the ratio of body parameters
        ratio = parameter_counts(Shape(width, heads, heads, mlp_width, VOCAB_SIZE, self.context),
                                 self.target_layers)["body"] / self.body_parameters
        step = self.batch * self.context  # tokens per optimiser step: events fall on whole steps

        def scaled(tokens: int) -> int:
            return max(step, round(tokens * ratio / step) * step)

        return replace(self, width=width, heads=heads, mlp_width=mlp_width, warmup_tokens=scaled(self.warmup_tokens),
                       growth_tokens=scaled(self.growth_tokens), develop_tokens=tuple(map(scaled, self.develop_tokens)),
                       midas_tokens=tuple(map(scaled, self.midas_tokens)), rewarm_tokens=scaled(self.rewarm_tokens))

    # ---- arms ---------------------------------------------------------------------------------------------------
    @property
    def arms(self) -> tuple[str, ...]:
        return tuple(f"depth{d}" for d in self.depths) + self.growth_arms

    def seeds(self, arm: str) -> int:
        return self.seeds_main if arm in (f"depth{self.target_layers}", "gstack") else self.seeds_other

    def start_depth(self, arm: str) -> int:
        return int(arm.removeprefix("depth")) if arm.startswith("depth") else self.start_layers

    def growth_points(self, arm: str) -> tuple[int, ...]:
        """Tokens after which an arm grows."""
        return {"gstack": (self.growth_tokens,), "developmental": self.develop_tokens,
                "random_source": self.develop_tokens, "midas": self.midas_tokens}.get(arm, ())

    def last_growth_tokens(self, arm: str) -> int:
        return max(self.growth_points(arm), default=0)

    def depth_after(self, arm: str, events_done: int) -> int:
        if events_done == 0 or arm.startswith("depth"):
            return self.start_depth(arm)
        if arm == "gstack":
            return self.target_layers
        if arm == "midas":
            return self.start_layers + self.midas_block * events_done
        steps = len(self.develop_tokens)
        return self.start_layers + math.ceil((self.target_layers - self.start_layers) * events_done / steps)

    def flops_at_tokens(self, arm: str, tokens: int) -> float:
        """Training FLOPs an arm has spent after ``tokens`` tokens (growth measurements aside)."""
        points = self.growth_points(arm)
        spent, done, previous = 0.0, 0, 0
        for point in (*points, math.inf):
            upto = min(tokens, point)
            spent += (upto - previous) * self.token_flops(self.depth_after(arm, done))
            if tokens <= point:
                return spent
            previous, done = point, done + 1
        return spent

    def arm_schedule(self, arm: str, lr: float) -> BranchSchedule:
        """Warm-up over ``warmup_tokens`` tokens (in this arm's FLOPs), then stable, then the decay of each
        budget's last ``decay``."""
        return BranchSchedule(lr, 0.0, self.decay, warmup_flops=self.warmup_tokens * self.token_flops(
            self.start_depth(arm)), floor=0.02)

    def arm_events(self, arm: str, trunk_budget: float) -> tuple[Event, ...]:
        """The arm's growth events, as fractions of the trunk's budget at their token counts."""
        kind = {"gstack": "stack", "midas": "middle", "developmental": "develop",
                "random_source": "random_develop"}.get(arm)
        events = []
        for i, tokens in enumerate(self.growth_points(arm)):
            fraction = self.flops_at_tokens(arm, tokens) / trunk_budget
            if kind == "stack":
                events.append(Event(fraction, kind, self.target_layers))
            elif kind == "middle":
                events.append(Event(fraction, kind, block=self.midas_block))
            else:
                events.append(Event(fraction, kind, self.depth_after(arm, i + 1)))
        return tuple(events)

    def config(self, arm: str, lr: float, budget: float, trunk_budget: float | None = None) -> TrainConfig:
        """A run of ``arm`` on ``budget``; a branch of a trunk of ``trunk_budget`` evaluates where the trunk does."""
        trunk_budget = trunk_budget or budget
        fractions = tuple(float(f) for f in np.unique(np.geomspace(0.002, 1.0, self.evals) * trunk_budget / budget)
                          if f <= 1.0)
        return TrainConfig(self.shape, budget, self.batch, self.arm_schedule(arm, lr),
                           eval_fractions=fractions + ((1.0,) if 1.0 not in fractions else ()), rewarm=0.0,
                           rewarm_flops=self.rewarm_tokens * self.token_flops(self.target_layers),
                           clone_noise=self.clone_noise, importance_boot=200)

    # ---- jobs ---------------------------------------------------------------------------------------------------
    def jobs(self) -> list[dict]:
        """Every run of the experiment, in the order they are run: the learning-rate checks, then the trunks seed
        by seed (every arm's seed 0 first, so a partial result already has the whole frontier of one seed), then
        the fresh checks."""
        out = [{"kind": "lr", "arm": arm, "seed": 0, "lr": lr, "multiple": self.lr_check_multiple}
               for arm in self.arms for lr in self.lrs]
        for seed in range(max(self.seeds_main, self.seeds_other)):
            out += [{"kind": "trunk", "arm": arm, "seed": seed, "lr": None, "multiple": self.multiples[-1]}
                    for arm in self.arms if seed < self.seeds(arm)]
        out += [{"kind": "fresh", "arm": arm, "seed": 0, "lr": None, "multiple": m}
                for arm in self.check_arms for m in self.check_multiples]
        return out

    def work(self, profile=None, jobs: list[int] | None = None) -> float:
        """Training FLOPs of every job, or of the job indices ``jobs`` (trunks with their decay branches)."""
        branches = self.decay * sum(self.multiples[:-1])
        every = self.jobs()
        total = 0.0
        for job in (every[i] for i in jobs) if jobs is not None else every:
            total += job["multiple"] + (branches if job["kind"] == "trunk" else 0.0)
        return total * self.c_star

    def describe(self) -> pd.DataFrame:
        """The design in numbers: per depth its parameters, FLOPs per token, and tokens and passes over the
        training text at every budget."""
        train_tokens = len(byte_stream("train"))
        rows = []
        for depth in self.depths:
            n = parameter_counts(self.shape, depth)["body"]
            for multiple in self.multiples:
                tokens = self.budget(multiple) / self.token_flops(depth)
                rows.append({"depth": depth, "body_parameters": n, "flops_per_token": self.token_flops(depth),
                             "multiple": multiple, "budget_flops": self.budget(multiple), "tokens": tokens,
                             "tokens_per_parameter": tokens / n, "passes": tokens / train_tokens})
        return pd.DataFrame(rows)


def frontier_data(params: FrontierParams) -> TextData:
    """The training bytes, and the validation and importance blocks (disjoint windows of 1930-1959)."""
    blocks = byte_blocks("validation", params.validation_blocks + params.importance_blocks, params.context, seed=0)
    return TextData(byte_stream("train"), blocks[:params.validation_blocks], blocks[params.validation_blocks:])


def request(params: FrontierParams) -> dict:
    return {"specimen": {"name": "growth-bytes"},
            "text": {"corpus": "sotu", "train": split_years("train"), "validation": split_years("validation"),
                     "vocabulary": "bytes"}, **params.as_request()}


def _arm(params: FrontierParams, arm: str, trunk_budget: float) -> Arm:
    return Arm(arm, params.start_depth(arm), params.arm_events(arm, trunk_budget))


def best_rates(lr_rows: pd.DataFrame) -> dict[str, float]:
    """Each arm's best learning rate in the check (lowest final validation loss)."""
    best = lr_rows.reset_index(drop=True).groupby("arm")["final_val_loss"].idxmin()
    return {arm: float(lr_rows["lr"].iloc[row]) for arm, row in best.items()}


def _final_row(job: dict, curve: pd.DataFrame, lr: float, multiple: float, protocol: str, budget: float,
               wall_s: float) -> dict:
    last = curve.iloc[-1]
    return {"kind": job["kind"], "arm": job["arm"], "seed": job["seed"], "lr": lr, "multiple": multiple,
            "protocol": protocol, "budget_flops": budget, "final_val_loss": float(last.val_loss),
            "flops": float(last.flops), "steps": int(last.step), "tokens": int(last.tokens),
            "layers": int(last.layers), "wall_s": wall_s}


def run_job(params: FrontierParams, job: dict, data: TextData, lr: float, checkpoint_dir: Path | None = None
            ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One job: (finals, curves). A trunk yields one final per budget (its branches); a check or a learning-rate
    run one. Resumes a trainer checkpoint under ``checkpoint_dir`` (named after the job)."""
    arm, seed = job["arm"], job["seed"]
    budget = params.budget(job["multiple"])
    checkpoint = None
    if checkpoint_dir is not None:
        checkpoint = Checkpointing(Path(checkpoint_dir) / f"{job['kind']}-{lr:g}-{job['multiple']:g}",
                                   params.checkpoint_every)
    finals, curves = [], []
    started = time.perf_counter()
    if job["kind"] != "trunk":
        curve, _, _ = train(_arm(params, arm, budget), params.config(arm, lr, budget), data, seed,
                            checkpoint=checkpoint)
        protocol = "lr check" if job["kind"] == "lr" else "fresh"
        finals.append(_final_row(job, curve, lr, job["multiple"], protocol, budget, time.perf_counter() - started))
        curves.append(curve.assign(run=job["kind"], multiple=job["multiple"], protocol=protocol, lr=lr))
        return pd.DataFrame(finals), pd.concat(curves, ignore_index=True)
    decay_points = {(1 - params.decay) * params.budget(m): m for m in params.multiples[:-1]}
    forks = Forks(tuple(decay_points))
    curve, _, _ = train(_arm(params, arm, budget), params.config(arm, lr, budget), data, seed, forks=forks,
                        checkpoint=checkpoint)
    finals.append(_final_row(job, curve, lr, job["multiple"], "branch", budget, time.perf_counter() - started))
    curves.append(curve.assign(run="trunk", multiple=job["multiple"], protocol="branch", lr=lr))
    for point, multiple in decay_points.items():
        branch_started = time.perf_counter()
        branch, _, _ = train(_arm(params, arm, budget), params.config(arm, lr, params.budget(multiple), budget),
                             data, seed, start=forks.states[point])
        finals.append(_final_row(job, branch, lr, multiple, "branch", params.budget(multiple),
                                 time.perf_counter() - branch_started))
        curves.append(branch[branch["flops"] >= point].assign(run="branch", multiple=multiple, protocol="branch",
                                                               lr=lr))
    return pd.DataFrame(finals), pd.concat(curves, ignore_index=True)


def run_frontier(params: FrontierParams, progress: bool = True, checkpoint_dir: str | Path | None = None,
                 max_jobs: int | None = None, poll_s: float = 30.0) -> dict[str, pd.DataFrame] | None:
    """Run every job not finished yet (each kept as it finishes), then the tables; None while jobs remain
    (``max_jobs`` stops after that many new ones: a session runs what its time allows).

    Several workers (processes, one thread each) can share the sweep: each claims a job by its lock
    (``locks.claimed``) and skips the jobs another holds; a trunk waits (polling every ``poll_s``) until every
    learning-rate check is kept, since its rate is the best of its arm's checks."""
    store = ResultStore().checkpoints(params.DIAGNOSTIC, request(params))
    data = frontier_data(params)
    jobs = params.jobs()
    n_checks = len(params.arms) * len(params.lrs)  # the jobs list puts the rate checks first
    done = [store.load(i) for i in range(len(jobs))]
    bar = tqdm(total=len(jobs), initial=sum(d is not None for d in done), desc="frontier jobs",
               disable=not progress)
    ran = 0
    while any(d is None for d in done):
        progressed = False
        for index in [i for i, found in enumerate(done) if found is None]:
            job = jobs[index]
            if job["lr"] is None and any(d is None for d in done[:n_checks]):
                continue
            if max_jobs is not None and ran >= max_jobs:
                bar.close()
                return None
            with claimed(store.path(index)) as mine:
                if not mine or (found := store.load(index)) is not None:
                    done[index] = found if mine else None
                    continue
                lr = job["lr"]
                if lr is None:
                    lr = best_rates(pd.concat([c[1] for c in done[:n_checks]]))[job["arm"]]
                bar.set_postfix_str(f"{job['kind']} {job['arm']} seed {job['seed']} lr {lr:g}")
                finals, curves = run_job(params, job, data, lr,
                                         checkpoint_dir and Path(checkpoint_dir) / f"job{index:03d}")
                row = {"job": index, **{k: v for k, v in job.items() if k != "lr"}, "lr": lr}
                done[index] = (row, finals, curves)
                store.save(index, done[index])
            ran, progressed = ran + 1, True
            bar.update()
        if not progressed:  # every job left is held by another worker, or waits for checks it runs
            time.sleep(poll_s)
            done = [d if d is not None else store.load(i) for i, d in enumerate(done)]
            bar.n = sum(d is not None for d in done)
            bar.refresh()
    bar.close()
    finals = pd.concat([d[1] for d in done], ignore_index=True)
    curves = pd.concat([d[2] for d in done], ignore_index=True)
    baselines = ngram_baselines(data.train, data.validation)
    return {"finals": finals, "curves": curves, "baselines": baselines, "design": params.describe()}


def frontier(params: FrontierParams | None = None, profile: str = "quick", recompute: bool = False,
             progress: bool = True, checkpoint_dir: str | Path | None = None) -> dict[str, pd.DataFrame]:
    """The experiment's tables through the results store (computed, and kept job by job, when missing)."""
    params = params or FrontierParams.for_profile(profile)

    def run():
        tables = run_frontier(params, progress, checkpoint_dir)
        assert tables is not None
        return tables

    tables, _ = load_or_compute(params.DIAGNOSTIC, request(params), run, device="cpu", recompute=recompute,
                                work_s=training_seconds, computed_by=FRONTIER_COMMAND)
    return tables


def training_seconds(tables: dict[str, pd.DataFrame]) -> float:
    """The sweep's own time: every job's training, summed (each job kept as it finished, most in earlier calls)."""
    return float(tables["finals"]["wall_s"].sum())


def finished_jobs(params: FrontierParams) -> pd.DataFrame:
    """The jobs kept so far (one row each), for a partial result."""
    store = ResultStore().checkpoints(params.DIAGNOSTIC, request(params))
    rows = [found[0] for i in range(len(params.jobs())) if (found := store.load(i)) is not None]
    return pd.DataFrame(rows)


def frontier_kept(params: FrontierParams) -> dict[str, pd.DataFrame]:
    """What the chapter shows: the stored result once every job is kept; before that, the tables of the jobs kept
    so far with ``missing`` (the jobs still to run). A chapter never starts the CPU-hours sweep itself."""
    stored = ResultStore().load(params.DIAGNOSTIC, request(params))
    if stored is not None:
        return stored[0]
    store = ResultStore().checkpoints(params.DIAGNOSTIC, request(params))
    jobs = params.jobs()
    kept = {i: found for i in range(len(jobs)) if (found := store.load(i)) is not None}
    data = frontier_data(params)
    empty = pd.DataFrame(columns=["kind", "arm", "seed", "multiple", "lr", "final_val_loss"])
    return {"finals": pd.concat([d[1] for d in kept.values()], ignore_index=True) if kept else empty,
            "curves": pd.concat([d[2] for d in kept.values()], ignore_index=True) if kept else pd.DataFrame(),
            "baselines": ngram_baselines(data.train, data.validation), "design": params.describe(),
            "missing": pd.DataFrame([{"job": i, **job} for i, job in enumerate(jobs) if i not in kept])}


def frontier_stored(params: FrontierParams) -> bool:
    """Whether the whole result is stored (a chapter reads it; it never starts the CPU-hours sweep itself)."""
    return ResultStore().load(params.DIAGNOSTIC, request(params)) is not None
