"""Growth operators: how a trained model becomes a deeper one.

A *plan* lists the layers of the new model in order: an ``int`` keeps that existing layer (the same module, so
its optimiser state can carry over), ``Copy(i, noise)`` inserts a deep copy of layer i, its matrices perturbed
by Gaussian noise of ``noise`` times each matrix's std. No module is ever shared: keeping a layer twice is an
error. The published operators and the paper's developmental idea are each a function that makes a plan:

- ``stack_plan``: G_stack (Du et al. 2024), the whole stack repeated;
- ``middle_plan``: MIDAS (Saunshi et al. 2024), the middle block duplicated in place;
- ``clone_plan``: a copy of each chosen source inserted right after it (the developmental arm);
- ``remove_plan``: layers dropped (anti-layers).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import torch

from .models import renumber


@dataclass(frozen=True)
class Copy:
    source: int
    noise: float = 0.0


def _copy_layer(layer: torch.nn.Module, noise: float, generator: torch.Generator) -> torch.nn.Module:
    new = copy.deepcopy(layer)
    if noise > 0:
        with torch.no_grad():
            for parameter in new.parameters():
                if parameter.ndim == 2:
                    scale = noise * parameter.float().std().item()
                    parameter.add_((torch.randn(parameter.shape, generator=generator) * scale).to(parameter.device))
    return new


def apply_plan(model, plan: list, seed: int = 0) -> list[bool]:
    """Rebuild ``model.model.layers`` from ``plan``; returns, per new layer, whether it is new (a copy)."""
    layers = model.model.layers
    kept = [entry for entry in plan if isinstance(entry, int)]
    if len(kept) != len(set(kept)):
        raise ValueError(f"a plan keeps a layer at most once (a shared module would train twice): {plan}")
    for entry in plan:
        source = entry.source if isinstance(entry, Copy) else entry
        if not 0 <= source < len(layers):
            raise ValueError(f"plan entry {entry!r} names a layer outside 0..{len(layers) - 1}")
    if not plan:
        raise ValueError("a plan must keep or copy at least one layer")
    generator = torch.Generator().manual_seed(seed)
    new = [layers[e] if isinstance(e, int) else _copy_layer(layers[e.source], e.noise, generator) for e in plan]
    model.model.layers = torch.nn.ModuleList(new)
    renumber(model)
    return [isinstance(e, Copy) for e in plan]


def stack_plan(n_layers: int, target: int, noise: float = 0.0) -> list:
    """G_stack: the n layers repeated in order until ``target`` layers (target a multiple of n)."""
    if target % n_layers or target < n_layers:
        raise ValueError(f"stacking {n_layers} layers reaches multiples of {n_layers}, not {target}")
    return list(range(n_layers)) + [Copy(i % n_layers, noise) for i in range(n_layers, target)]


def middle_plan(n_layers: int, block: int, noise: float = 0.0) -> list:
    """MIDAS: the middle ``block`` layers duplicated, the copy placed right after the original block."""
    if not 1 <= block <= n_layers:
        raise ValueError(f"block must be in 1..{n_layers}, got {block}")
    start = (n_layers - block) // 2
    end = start + block
    return list(range(end)) + [Copy(i, noise) for i in range(start, end)] + list(range(end, n_layers))


def clone_plan(n_layers: int, sources: list[int], noise: float = 0.0) -> list:
    """A copy of each source (a source may repeat) inserted right after it."""
    plan = []
    for layer in range(n_layers):
        plan.append(layer)
        plan += [Copy(layer, noise)] * sources.count(layer)
    return plan


def remove_plan(n_layers: int, drop: list[int]) -> list:
    if len(set(drop)) >= n_layers:
        raise ValueError("cannot remove every layer")
    return [layer for layer in range(n_layers) if layer not in set(drop)]
