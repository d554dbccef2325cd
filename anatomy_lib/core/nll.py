"""The next-token negative log-likelihood: the one loss the book measures perplexity with and trains with.

Position t predicts token t + 1, in float32 whatever the model's dtype. ``token_nll`` takes logits already
aligned with their targets; ``next_token_nll`` takes a model's full-length logits and shifts them itself.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

REDUCTIONS = ("mean", "sum", "block", "none")


def token_nll(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """NLL (nats) of each target under its logits, shaped like ``targets``; ``logits`` is (..., vocab)."""
    losses = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none")
    return losses.view(targets.shape)


def next_token_nll(logits: torch.Tensor, ids: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """Next-token NLL of sequences ``ids`` (batch, T) under their logits (batch, T, vocab): positions 1..T-1
    predicted from 0..T-2. ``reduction``: mean over every predicted token, their sum, the mean per sequence
    (``block``), or none (batch, T - 1)."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"unknown reduction {reduction!r}; choose one of {list(REDUCTIONS)}")
    losses = token_nll(logits[:, :-1], ids[:, 1:])
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    return losses.mean(dim=1) if reduction == "block" else losses
