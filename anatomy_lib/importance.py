"""Diagnostic 1, the importance map: ablate one layer at a time and measure the perplexity change.

Ablation modes:
- ``neighbor_mean`` (the paper's): every tensor of layer l becomes the mean of layers l-1 and l+1; the first
  and last layer, having one neighbour, take that neighbour's tensors (the paper does not say; this is our choice).
- ``skip``: the layer becomes the identity on the residual stream (its o and down projections zeroed).
- ``attn_only`` / ``mlp_only``: only the attention / only the MLP block is removed.
Every change carries a paired bootstrap 95% interval over text blocks. In the same cached pass we compute
ShortGPT's Block Influence (1 - cosine of a layer's input and output residual).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from tqdm.auto import tqdm

from .stats import paired_change_interval
from .surgery import WeightSurgery, surgery

MODES = ("neighbor_mean", "skip", "attn_only", "mlp_only")
TENSOR_SETS = ("all", "matrices")
PAPER = {"critical_core": [8, 9, 10, 11], "l11_change_pct": 63419.0, "anti_layers": [14, 17],
         "io_processors": [1, 2, 23, 24, 25, 26, 27, 28], "connective_below_pct": 30.0, "range_orders": 7.0}


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown ablation mode {mode!r}; choose one of {list(MODES)}")
    return mode


def neighbors(n_layers: int, layer: int) -> list[int]:
    """Layers whose mean replaces ``layer`` under ``neighbor_mean``: l-1 and l+1 where they exist."""
    return [n for n in (layer - 1, layer + 1) if 0 <= n < n_layers]


def ablate(op: WeightSurgery, layer: int, mode: str, tensors: str = "all") -> None:
    """Apply one ablation to ``layer`` inside an open ``surgery``."""
    check_mode(mode)
    adapter = op.adapter
    adapter.check_layer(layer)
    if mode == "neighbor_mean":
        if tensors not in TENSOR_SETS:
            raise ValueError(f"unknown tensor set {tensors!r}; choose one of {list(TENSOR_SETS)}")
        names = adapter.tensor_names if tensors == "all" else adapter.matrix_names
        sources = neighbors(adapter.n_layers, layer)
        for name in names:
            mean = sum(op.original(n, name).double() for n in sources) / len(sources)
            op.replace(layer, name, mean)
    else:
        op.skip(layer, {"skip": "block", "attn_only": "attn", "mlp_only": "mlp"}[mode])


@dataclass(frozen=True)
class Thresholds:
    """Anatomy classes; defaults follow the paper (connective tissue under +30%)."""

    connective_pct: float = 30.0  # upper interval bound below this: connective tissue
    critical_pct: float = 1000.0  # point change at or above this: critical core
    io_fraction: float = 1 / 3  # important layers in the first / last fraction are input / output processors


def classify(table: pd.DataFrame, n_layers: int, thresholds: Thresholds = Thresholds()) -> pd.Series:
    """One anatomy class per row of an importance table (columns layer, change_pct, ci_low, ci_high)."""
    edge = int(round(n_layers * thresholds.io_fraction))

    def one(row) -> str:
        if row.ci_high < 0:
            return "anti-layer"
        if row.ci_high < thresholds.connective_pct:
            return "connective tissue"
        if row.change_pct >= thresholds.critical_pct:
            return "critical core"
        if row.layer < edge:
            return "input processor"
        if row.layer >= n_layers - edge:
            return "output processor"
        return "important (middle)"

    return table.apply(one, axis=1)


def importance_sweep(engine, mode: str = "neighbor_mean", layers=None, tensors: str = "all",
                     n_boot: int = 2000, seed: int = 0, progress: bool = True) -> pd.DataFrame:
    """Ablate each layer in turn; one row per layer with the change, its interval and Block Influence."""
    check_mode(mode)
    adapter = engine.adapter
    layers = list(range(adapter.n_layers)) if layers is None else [adapter.check_layer(l) for l in layers]
    base = engine.baseline
    influence = engine.block_influence()
    rows = []
    for layer in tqdm(layers, desc=f"importance ({mode})", disable=not progress):
        with surgery(adapter) as op:
            ablate(op, layer, mode, tensors)
            result = engine.evaluate()
        change, low, high = paired_change_interval(base.block_nll, result.block_nll, n_boot, seed)
        rows.append({"layer": layer, "mode": mode, "ppl": result.perplexity, "base_ppl": base.perplexity,
                     "change_pct": change, "ci_low": low, "ci_high": high,
                     "block_influence": influence[layer]})
    return pd.DataFrame(rows)


def importance(lab, mode: str = "neighbor_mean", tensors: str = "all", thresholds: Thresholds = Thresholds(),
               seed: int = 0, recompute: bool = False, progress: bool = True) -> pd.DataFrame:
    """The importance table for a lab's specimen, from the results store when it holds this exact request."""
    from .results import load_or_compute

    params = {"mode": mode, "tensors": tensors, "seed": seed, "n_boot": lab.profile.n_boot}
    compute = lambda: {"layers": importance_sweep(lab.engine, mode, None, tensors, lab.profile.n_boot, seed,
                                                  progress)}
    tables, _ = load_or_compute("importance", lab.request(params), compute, device=lab.specimen.device,
                                recompute=recompute)
    table = tables["layers"]
    table["class"] = classify(table, lab.adapter.n_layers, thresholds)
    return table


def joint_ablation(lab, layers, mode: str = "neighbor_mean", tensors: str = "all", seed: int = 0):
    """Ablate several layers together; (change %, low, high, perplexity). Neighbour means use intact weights."""
    adapter = lab.adapter
    layers = sorted({adapter.check_layer(l) for l in layers})
    if not layers:
        raise ValueError("choose at least one layer to ablate")
    with surgery(adapter) as op:
        for layer in layers:
            ablate(op, layer, mode, tensors)
        result = lab.engine.evaluate()
    change, low, high = paired_change_interval(lab.engine.baseline.block_nll, result.block_nll,
                                               lab.profile.n_boot, seed)
    return change, low, high, result.perplexity


def rank_agreement(table: pd.DataFrame) -> float:
    """Spearman correlation between Block Influence and the measured perplexity change."""
    return float(spearmanr(table["block_influence"], table["change_pct"]).statistic)


def importance_range_orders(table: pd.DataFrame, significant_only: bool = False) -> float:
    """log10 of largest over smallest |change|: the paper's "importance spans 10^7"."""
    changes = table["change_pct"].abs()
    if significant_only:
        changes = changes[(table["ci_low"] > 0) | (table["ci_high"] < 0)]
    changes = changes[changes > 0]
    return float(np.log10(changes.max() / changes.min())) if len(changes) > 1 else float("nan")
