"""The perplexity engine: batched evaluation under ``torch.inference_mode`` with a prefix cache.

The residual stream entering every layer is computed once for the intact model and kept. An edit at layer
``l`` cannot change what enters layers 0..l, so evaluating the edited model only runs layers l..L from the
cached stream. ``evaluate()`` finds ``l`` itself from the edits that ``surgery()`` registers on the model.
The cache describes the weights it was built from: after changing weights outside ``surgery`` (training,
say), call ``rebuild()``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from .adapter import as_adapter
from .bootstrap import perplexity_interval
from .corpus import TokenBlocks
from .nll import next_token_nll, token_nll


@dataclass
class Evaluation:
    """Per-block mean token NLL (nats); perplexity is exp of their mean (blocks have equal length)."""

    block_nll: np.ndarray

    @property
    def mean_nll(self) -> float:
        return float(np.mean(self.block_nll))

    @property
    def perplexity(self) -> float:
        return float(np.exp(self.mean_nll))

    def interval(self, n_boot: int = 2000, seed: int = 0, level: float = 0.95):
        return perplexity_interval(self.block_nll, n_boot=n_boot, seed=seed, level=level)

    def __repr__(self) -> str:
        return f"Evaluation(ppl={self.perplexity:.4g}, nll={self.mean_nll:.5f}, blocks={len(self.block_nll)})"


def block_nll_from_hidden(adapter, hidden: torch.Tensor, ids: torch.Tensor, chunk: int = 512) -> torch.Tensor:
    """Mean next-token NLL per block straight from the last residual stream.

    Logits are made ``chunk`` positions at a time and reduced to their NLL at once, so the (batch, T, vocab)
    logits tensor is never materialised: on a CPU this halves the cost of the head.
    """
    normed = adapter.final_norm(hidden[:, :-1]).reshape(-1, hidden.shape[-1])
    targets = ids[:, 1:].reshape(-1)
    nll = torch.empty(targets.shape[0], dtype=torch.float32, device=hidden.device)
    for i in range(0, targets.shape[0], chunk):
        nll[i:i + chunk] = token_nll(adapter.head_logits(normed[i:i + chunk]), targets[i:i + chunk])
    return nll.view(ids.shape[0], -1).mean(dim=1)


def plain_evaluation(model, blocks: TokenBlocks, batch_size: int = 4) -> Evaluation:
    """The reference: full forwards through the model's own ``forward``, no cache (the naive loop)."""
    device = next(model.parameters()).device
    out = []
    with torch.inference_mode():
        for i in range(0, blocks.n_blocks, batch_size):
            ids = blocks.ids[i:i + batch_size].to(device)
            out.append(next_token_nll(model(input_ids=ids).logits, ids, "block").double().cpu())
    return Evaluation(torch.cat(out).numpy())


class PerplexityEngine:
    """Evaluate a model, and edited versions of it, on fixed token blocks."""

    def __init__(self, model_or_adapter, blocks: TokenBlocks, batch_size: int = 4,
                 cache_device: str | torch.device | None = None, progress: bool = True):
        self.adapter = as_adapter(model_or_adapter)
        self.blocks = blocks
        self.batch_size = batch_size
        self.device = next(self.adapter.model.parameters()).device
        self.cache_device = torch.device(cache_device) if cache_device is not None else self.device
        self.progress = progress
        self._streams: list[torch.Tensor] = []  # [l]: the stream entering layer l; [n_layers]: leaving the last
        self.baseline: Evaluation | None = None
        self.rebuild()

    @property
    def n_tokens(self) -> int:
        """Tokens per full evaluation (every position of every block runs through the model)."""
        return self.blocks.ids.numel()

    def _batches(self):
        for i in range(0, self.blocks.n_blocks, self.batch_size):
            yield slice(i, i + self.batch_size), self.blocks.ids[i:i + self.batch_size].to(self.device)

    def rebuild(self) -> Evaluation:
        """Run the model once, caching the residual stream at every layer, and store the baseline."""
        if self.adapter.active_edits:
            raise RuntimeError(f"layers {sorted(self.adapter.active_edits)} are under an active edit; build the "
                               "cache from the intact model, outside surgery()")
        n_layers, a = self.adapter.n_layers, self.adapter
        stacks: list[list[torch.Tensor]] = [[] for _ in range(n_layers + 1)]
        nll = []
        with torch.inference_mode():
            batches = list(self._batches())
            for _, ids in tqdm(batches, desc="prefix cache", disable=not self.progress):
                captured: list[torch.Tensor] = []
                out = a.run_layers(a.embed(ids), 0, capture=captured)
                for layer, hidden in enumerate(captured + [out]):
                    stacks[layer].append(hidden.to(self.cache_device))
                nll.append(block_nll_from_hidden(a, out, ids).double().cpu())
        self._streams = [torch.cat(s) for s in stacks]
        self.baseline = Evaluation(torch.cat(nll).numpy())
        return self.baseline

    def stream(self, layer: int) -> torch.Tensor:
        """The intact model's residual stream entering ``layer`` for every block, (blocks, T, hidden);
        ``layer = n_layers`` gives the stream leaving the last layer."""
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer <= self.adapter.n_layers:
            raise ValueError(f"layer {layer!r} is out of range; streams exist for 0..{self.adapter.n_layers}")
        return self._streams[layer]

    def _start_layer(self, start) -> int:
        edited = sorted(self.adapter.active_edits)
        if start == "auto":
            return edited[0] if edited else self.adapter.n_layers
        if not isinstance(start, int) or not 0 <= start <= self.adapter.n_layers:
            raise ValueError(f"start must be 'auto' or a layer in 0..{self.adapter.n_layers}, got {start!r}")
        if edited and edited[0] < start:
            raise ValueError(f"layer {edited[0]} is edited, so evaluation must start at or before it, not at {start}")
        return start

    def evaluate(self, start: int | str = "auto", stop: int | None = None) -> Evaluation:
        """Evaluate the model as it is now, recomputing layers from ``start`` (default: the first edited one).

        With ``stop``, layers from ``stop`` on are left out entirely (the stream leaving layer ``stop - 1`` goes
        to the final norm and head): an early exit, used to drop trailing layers.
        """
        start = self._start_layer(start)
        a, out = self.adapter, []
        with torch.inference_mode():
            for rows, ids in self._batches():
                hidden = self._streams[start][rows].to(self.device)
                hidden = a.run_layers(hidden, start, stop)
                out.append(block_nll_from_hidden(a, hidden, ids).double().cpu())
        return Evaluation(torch.cat(out).numpy())

    def block_influence(self) -> np.ndarray:
        """ShortGPT's Block Influence per layer: 1 - mean cosine of the stream entering and leaving it."""
        values = []
        for layer in range(self.adapter.n_layers):
            cos = F.cosine_similarity(self.stream(layer).float(), self.stream(layer + 1).float(), dim=-1)
            values.append(1.0 - cos.mean().item())
        return np.asarray(values)
