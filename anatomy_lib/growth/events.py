"""Chapter 7's growth events up close: the loss just before and after an operator, and what the clone noise, the
optimiser's moments and the re-warm-up do to the steps that follow.

Every variant starts from the same state: the shallow trajectory of a seed at the first growth time (before
growing, every growing arm *is* that run), forked once. From there each arm's first event is applied as the
chapter runs it, without the noise on cloned matrices, with every AdamW moment reset, or without the re-warm-up,
and training follows for ``follow`` of the budget with dense evaluations. The chapter's own runs give the
before/after of every event; this isolates the three knobs on one event per arm.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..core.display import estimate_text
from ..core.flops import step_flops
from ..core.stats import t_interval
from .checkpoints import Forks
from .compute import text_data, through_store
from .config import Arm
from .params import GrowthParams
from .trainer import train

EVENT_ARMS = ("gstack", "developmental")
VARIANTS = {  # name -> the TrainConfig fields it changes
    "as run": {},
    "no clone noise": {"clone_noise": 0.0},
    "fresh optimiser": {"reset_optimizer": True},
    "no re-warm-up": {"rewarm": 0.0},
}


@dataclass(frozen=True)
class EventParams(GrowthParams):
    """The growth experiment's sizes (``GrowthParams``); the first event of each of ``event_arms``, followed for
    ``follow`` of the budget under every variant of ``VARIANTS``."""

    DIAGNOSTIC = "growth_events"
    VERSION = 1

    event_arms: tuple[str, ...] = field(default=EVENT_ARMS, metadata={"help": f"arms, of {list(EVENT_ARMS)}"})
    follow: float = field(default=0.1, metadata={"help": "training after the event, as a fraction of the budget"})
    follow_evals: int = field(default=10, metadata={"help": "evaluations over the follow-up"})

    def __post_init__(self):
        super().__post_init__()
        for arm in self.event_arms:
            if arm not in EVENT_ARMS:
                raise ValueError(f"the event study follows {list(EVENT_ARMS)}, not {arm!r}")
        if not 0 < self.follow < 1:
            raise ValueError(f"follow is a fraction of the budget in (0, 1), got {self.follow}")

    def first_event(self, arm: str):
        return self.arm(arm).events[0]

    def work(self, profile=None) -> float:
        """Training FLOPs: the shallow trunk to the latest first event, and the follow-up of every variant."""
        trunk = max(self.first_event(a).fraction for a in self.event_arms)
        return float(self.seeds * (trunk + len(self.event_arms) * len(VARIANTS) * self.follow) * self.budget)


def run_events(params: EventParams, progress: bool = True) -> dict[str, pd.DataFrame]:
    _, data = text_data(params)
    base = params.config()
    points = {params.first_event(a).fraction * params.budget for a in params.event_arms}
    curves = []
    jobs = params.seeds * len(params.event_arms) * len(VARIANTS)
    bar = tqdm(total=jobs, desc="growth events", disable=not progress)
    for seed in range(params.seeds):
        forks = Forks(tuple(points))
        # just past the last fork, evaluated at each (the loss just before an event)
        step = step_flops(params.shape, [True] * params.start_layers, True, params.batch)
        trunk = replace(base, stop_at=max(points) + 2 * step, eval_fractions=tuple(sorted(
            set(base.eval_fractions) | {params.first_event(a).fraction for a in params.event_arms})))
        train(params.arm("shallow"), trunk, data, seed, forks=forks)
        for arm in params.event_arms:
            event = params.first_event(arm)
            start = event.fraction * params.budget
            evals = tuple(float(f) for f in np.linspace(event.fraction, event.fraction + params.follow,
                                                        params.follow_evals + 1)[1:])
            for variant, changes in VARIANTS.items():
                config = replace(base, eval_fractions=evals, stop_at=start + params.follow * params.budget,
                                 extra_eval_steps=(), **changes)
                curve, _, _ = train(Arm(arm, params.start_layers, (event,)), config, data, seed,
                                    start=forks.states[start])
                curves.append(curve[curve["flops"] >= start - 1].assign(variant=variant))
                bar.update()
    bar.close()
    return {"curves": pd.concat(curves, ignore_index=True)}


def growth_events(params: EventParams | None = None, profile: str = "quick", recompute: bool = False,
                  progress: bool = True) -> dict[str, pd.DataFrame]:
    """The event study's tables, through the results store."""
    params = params or EventParams.for_profile(profile)
    return through_store("growth_events", params, lambda: run_events(params, progress), recompute)


def event_summary(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per arm and variant: the loss just before the event, the jump it causes, and the loss at the end of the
    follow-up, each paired against "as run" by seed (t-interval over seeds)."""
    rows = []
    for (arm, variant), group in tables["curves"].groupby(["arm", "variant"], sort=False):
        per_seed = {}
        for seed, run in group.groupby("seed"):
            run = run.sort_values(["flops", "step"])
            before = run[run["kind"] != "growth"].iloc[0]
            after = run[run["kind"] == "growth"].iloc[0]
            per_seed[seed] = (float(before.val_loss), float(after.val_loss), float(run.iloc[-1].val_loss))
        rows += [{"arm": arm, "variant": variant, "seed": s, "before": b, "after": a, "end": e}
                 for s, (b, a, e) in per_seed.items()]
    table = pd.DataFrame(rows)
    out = []
    for (arm, variant), group in table.groupby(["arm", "variant"], sort=False):
        ref = table[(table["arm"] == arm) & (table["variant"] == "as run")].set_index("seed")
        mine = group.set_index("seed")
        jump = t_interval(mine["after"] - mine["before"])
        end_vs = t_interval(mine["end"] - ref.loc[mine.index, "end"])
        out.append({"arm": arm, "variant": variant, "before": float(mine["before"].mean()),
                    "jump": jump[0], "jump_low": jump[1], "jump_high": jump[2], "end": float(mine["end"].mean()),
                    "end_minus_as_run": end_vs[0], "low": end_vs[1], "high": end_vs[2], "seeds": len(mine)})
    return pd.DataFrame(out)


def event_findings(tables: dict[str, pd.DataFrame], params: EventParams) -> list[str]:
    summary = event_summary(tables)
    out = []
    for arm, group in summary.groupby("arm", sort=False):
        run = group[group["variant"] == "as run"].iloc[0]
        parts = []
        for r in group[group["variant"] != "as run"].itertuples():
            side = "better" if r.high < 0 else "worse" if r.low > 0 else "no different"
            parts.append(f"{r.variant} {estimate_text(r.end_minus_as_run, r.low, r.high, decimals=3)} ({side})")
        out.append(f"{arm}'s first event changes the loss by {run.jump:+.2f} [{run.jump_low:+.2f}, "
                   f"{run.jump_high:+.2f}] nats at once; {params.follow:.0%} of the budget later, against the "
                   "chapter's own settings: " + ", ".join(parts) + ".")
    return out
