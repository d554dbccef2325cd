"""Massive activations (Sun et al. 2024, arXiv 2402.17762) along the depth: a test of why a layer can look critical.

A few residual-stream features of many language models reach values thousands of times the stream's median,
appear abruptly at one early layer, stay at fixed positions (the first token, delimiters) and act as biases
that attention relies on. Removing the layer that creates them changes every later layer's input, so it can
look "critical" for that reason alone. This module measures them on the evaluation blocks, from the intact
model's streams the prefix cache already holds (``PerplexityEngine.stream``: no extra forward pass):

- per layer, the stream leaving it: the largest absolute activation, the median absolute activation, their
  ratio, where the largest sits (feature, position), how many entries are massive and how many tokens hold one;
- per massive feature of each layer: its largest value and the share of its massive entries at the first position;
- the layer where they appear: the first whose output holds a massive entry (``ActivationParams``: at least
  ``ratio`` times the median and ``floor`` in absolute value, Sun et al.'s definition);
- ``importance_correlation``: whether the layers that grow the largest activation most are the important ones
  (Spearman between the growth, log10 of the largest value leaving over entering, and chapter 2's change), with
  a bootstrap interval over layers.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from ..core.bootstrap import statistic_interval
from ..core.checks import positive_int, positive_number
from ..core.lab import NotStored
from ..core.params import DiagnosticParams
from ..core.stats import spearman


@dataclass(frozen=True)
class ActivationParams(DiagnosticParams):
    """What counts as a massive activation (Sun et al.: about 1000 times the median and above 100)."""

    DIAGNOSTIC = "activations"
    VERSION = 1

    ratio: float = field(default=1000.0, metadata={"help": "massive: |activation| >= ratio x the stream's median"})
    floor: float = field(default=100.0, metadata={"help": "massive: and |activation| >= floor"})
    top_features: int = field(default=4, metadata={"help": "massive features listed per layer, largest first"})

    def __post_init__(self):
        positive_number(self.ratio, "ratio")
        positive_number(self.floor, "floor")
        positive_int(self.top_features, "top_features")


def _layer_profile(stream: torch.Tensor, params: ActivationParams) -> tuple[dict, list[dict]]:
    magnitude = stream.float().abs()
    blocks, positions, width = magnitude.shape
    flat = magnitude.reshape(-1, width)
    median = float(flat.median())
    largest, where = flat.max(), int(flat.argmax())
    threshold = max(params.floor, params.ratio * median)
    massive = magnitude >= threshold
    row = {"max_abs": float(largest), "median_abs": median, "ratio": float(largest) / median if median else np.inf,
           "top_feature": where % width, "top_position": (where // width) % positions,
           "massive_entries": int(massive.sum()), "massive_tokens": int(massive.any(dim=2).sum()),
           "threshold": threshold}
    features = []
    per_feature = magnitude.amax(dim=(0, 1))
    for feature in torch.nonzero(massive.any(dim=(0, 1))).flatten().tolist():
        hits = massive[..., feature]
        features.append({"feature": feature, "max_abs": float(per_feature[feature]),
                         "massive_entries": int(hits.sum()),
                         "first_position_share": float(hits[:, 0].sum()) / float(hits.sum())})
    features.sort(key=lambda f: -f["max_abs"])
    return row, features[:params.top_features]


def activation_profile(engine, params: ActivationParams = ActivationParams()) -> dict[str, pd.DataFrame]:
    """The massive-activation tables of one intact model on its engine's evaluation blocks: ``layers`` (one row
    per layer, the stream leaving it, with ``growth``: log10 of its largest value over the largest entering it)
    and ``features`` (one row per massive feature of each layer)."""
    n_layers = engine.adapter.n_layers
    rows, features = [], []
    entering_max = float(engine.stream(0).float().abs().max())
    for layer in range(n_layers):
        row, massive = _layer_profile(engine.stream(layer + 1), params)
        rows.append({"layer": layer, **row, "growth": float(np.log10(row["max_abs"] / entering_max))})
        features += [{"layer": layer, **f} for f in massive]
        entering_max = row["max_abs"]
    columns = ["layer", "feature", "max_abs", "massive_entries", "first_position_share"]
    return {"layers": pd.DataFrame(rows), "features": pd.DataFrame(features, columns=columns)}


def activations(lab, params: ActivationParams = ActivationParams(), recompute: bool = False) -> dict[str, pd.DataFrame]:
    """``activation_profile`` of a lab's specimen, through the results store."""
    return lab.stored(params, lambda: activation_profile(lab.engine, params), recompute)


def appearance_layer(layers: pd.DataFrame) -> int | None:
    """The first layer whose output holds a massive activation (None: no layer's does)."""
    massive = layers[layers["massive_entries"] > 0]
    return int(massive["layer"].iloc[0]) if len(massive) else None


def importance_correlation(layers: pd.DataFrame, importance_table: pd.DataFrame, n_boot: int = 2000,
                           seed: int = 0, level: float = 0.95) -> dict:
    """Spearman between each layer's growth of the largest activation and its importance (chapter 2's change
    under one operator), with a percentile bootstrap interval over layers."""
    merged = layers[["layer", "growth"]].merge(importance_table[["layer", "change_pct"]], on="layer")
    growth, change = merged["growth"].to_numpy(), merged["change_pct"].to_numpy()
    rho, low, high = statistic_interval(len(merged), lambda i: spearman(growth[i], change[i]), n_boot, seed, level,
                                       rows=True)
    return {"rho": rho, "ci_low": low, "ci_high": high, "layers": len(merged)}


def activation_panel(labs, params: ActivationParams = ActivationParams()) -> dict[str, dict[str, pd.DataFrame]]:
    """``activations`` of every lab ({specimen: tables}); a read-only lab without them stored is left out."""
    panel = {}
    for lab in labs:
        try:
            panel[lab.specimen.name] = activations(lab, params)
        except NotStored:
            continue
    return panel


def correlation_table(profiles: dict[str, dict[str, pd.DataFrame]],
                      importance_panel: dict[str, dict[str, pd.DataFrame]], seed: int = 0) -> pd.DataFrame:
    """For every specimen of both panels and every operator: the layer where massive activations appear, the
    operator's most important layer, and ``importance_correlation`` with its interval."""
    rows = []
    for name, tables in profiles.items():
        first = appearance_layer(tables["layers"])
        for operator, table in importance_panel.get(name, {}).items():
            top = int(table.loc[table["change_pct"].idxmax(), "layer"])
            rows.append({"specimen": name, "operator": operator, "appearance_layer": first, "top_layer": top,
                         **importance_correlation(tables["layers"], table, seed=seed)})
    return pd.DataFrame(rows)


def stacked_layers(profiles: dict[str, dict[str, pd.DataFrame]]) -> pd.DataFrame:
    """The ``layers`` tables of several specimens stacked, with ``specimen``, ``n_layers`` and relative depth
    (``layer / (n_layers - 1)``, the atlas's axis)."""
    parts = []
    for name, tables in profiles.items():
        layers = tables["layers"]
        n_layers = len(layers)
        parts.append(layers.assign(specimen=name, n_layers=n_layers, depth=layers["layer"] / max(n_layers - 1, 1)))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
