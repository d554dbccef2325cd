"""Chapters 3 and 4 on any GGUF file, from its weights alone: what the page "Dissect your own model" runs in the
reader's browser (Pyodide: numpy and the pure-Python ``gguf`` package, nothing else), and what
``python -m anatomy_lib dissect FILE.gguf`` runs here.

For every weight-matrix component, one at a time (a browser tab holds one component's stack):

- per layer: Frobenius norm, RMS, top singular value and stable rank (``weightspace.matrix_summary``);
- chapter 3: the held-out R^2 of ridge predicting layer l from layer l-1 (layerwise, a fixed random projection
  of ``proj_dim`` features, leave-one-layer-out) beside the two baselines it must beat (copy the previous layer;
  the mean of every other layer);
- chapter 4: the lag-1 correlation of consecutive weight deltas, beside its layer-shuffled null (the file's own
  layers in ``n_shuffles`` random orders) and the analytic -1/2 of independent layers.

The parameters default to the chapters' own (``tests/core/test_dissection.py`` holds them equal), so a reader's
model lands on the same axes as the book's two specimens. Tables are lists of plain rows (no pandas: the browser
has none), with the columns of chapter 3's ``fits`` and chapter 4's ``weights`` tables.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np

from .gguf_weights import GGUFWeights
from .weightspace import delta_correlation_rows, fit_rows, matrix_summary, shuffled_orders

STEPS = ("read", "norms and spectra", "ridge", "delta correlations")


@dataclass(frozen=True)
class DissectionParams:
    """Chapter 3's ridge (layerwise, context 1) and chapter 4's layer-shuffled null, at the chapters' defaults."""

    ridge_alpha: float = 1.0
    proj_dim: int = 64
    n_shuffles: int = 5
    seed: int = 0


def component_tables(stack: np.ndarray, shape: tuple[int, int], component: str,
                     params: DissectionParams = DissectionParams(), on_step=None) -> dict[str, list[dict]]:
    """Every statistic of one component's (layers, elements) stack: {"layers", "ridge", "deltas"} rows."""
    step = on_step or (lambda name: None)
    n_layers = len(stack)
    layers = [{"component": component, "layer": layer, **matrix_summary(stack[layer].reshape(shape))}
              for layer in range(n_layers)]
    step("norms and spectra")
    ridge = [{"component": component, **row}
             for row in fit_rows(stack, "layerwise", 1, params.ridge_alpha, params.proj_dim, params.seed,
                                 fits=("out-of-sample",))]
    step("ridge")
    deltas = [{"model": "specimen", "component": component, "shuffle": -1, **row}
              for row in delta_correlation_rows(stack, lags=(1,))]
    for shuffle, order in enumerate(shuffled_orders(n_layers, params.n_shuffles, params.seed)):
        deltas += [{"model": "layer-shuffled", "component": component, "shuffle": shuffle, **row}
                   for row in delta_correlation_rows(stack, lags=(1,), order=order)]
    step("delta correlations")
    return {"layers": layers, "ridge": ridge, "deltas": deltas}


def describe(weights: GGUFWeights) -> dict:
    """What the file is: architecture, name, layers, heads, and each component's shape and format."""
    return {"architecture": weights.architecture, "name": weights.name, "n_layers": weights.n_layers,
            "n_heads": weights.n_heads, "n_kv_heads": weights.n_kv_heads, "components": list(weights.components),
            "shapes": {c: list(s) for c, s in weights.shapes.items()}, "formats": weights.tensor_types}


def dissect(path, params: DissectionParams = DissectionParams(), on_progress=None, on_component=None,
            components=None) -> dict:
    """Dissect the GGUF file at ``path`` (every component, or those named in ``components``): {"model":
    describe(...), "params", "layers", "ridge", "deltas", "seconds"}. ``on_progress(done, total, label)`` is
    called after every step, ``on_component(component, tables)`` as soon as a component's tables exist (the page
    draws them while the next is computed)."""
    started = time.perf_counter()
    weights = GGUFWeights.open(path)
    chosen = weights.components if components is None else tuple(components)
    unknown = [c for c in chosen if c not in weights.components]
    if unknown:
        raise ValueError(f"unknown components {unknown}; this file has {list(weights.components)}")
    total = len(chosen) * len(STEPS)
    done = 0
    result = {"model": describe(weights), "params": asdict(params), "layers": [], "ridge": [], "deltas": []}

    def step(name: str, component: str) -> None:
        nonlocal done
        done += 1
        if on_progress is not None:
            on_progress(done, total, f"{component}: {name}")

    for component in chosen:
        stack = weights.stack(component)
        step("read", component)
        tables = component_tables(stack, weights.shapes[component], component, params,
                                  lambda name, c=component: step(name, c))
        del stack
        for key, rows in tables.items():
            result[key] += rows
        if on_component is not None:
            on_component(component, tables)
    result["seconds"] = time.perf_counter() - started
    return result
