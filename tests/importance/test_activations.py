"""Massive activations: found where they are, at the layer where they appear, from the cached streams."""
import numpy as np
import pandas as pd
import pytest
import torch

from anatomy_lib.core.engine import PerplexityEngine
from anatomy_lib.importance.activations import (
    ActivationParams,
    _layer_profile,
    activation_profile,
    appearance_layer,
    importance_correlation,
)


def test_a_planted_massive_feature_is_found_with_its_position():
    stream = torch.randn(3, 20, 16, generator=torch.Generator().manual_seed(0))
    stream[:, 0, 5] = 4000.0  # feature 5 at the first position of every block, as in Sun et al.
    stream[1, 7, 9] = -2500.0
    row, features = _layer_profile(stream, ActivationParams())
    assert row["max_abs"] == 4000.0 and row["top_feature"] == 5 and row["top_position"] == 0
    assert row["massive_entries"] == 4 and row["massive_tokens"] == 4
    assert [f["feature"] for f in features] == [5, 9]
    assert features[0]["first_position_share"] == 1.0 and features[1]["first_position_share"] == 0.0
    quiet, none = _layer_profile(torch.randn(2, 8, 16), ActivationParams())
    assert quiet["massive_entries"] == 0 and none == []


def test_profile_reads_every_layer_of_the_cache(tiny, tiny_blocks):
    engine = PerplexityEngine(tiny.model, tiny_blocks, progress=False)
    tables = activation_profile(engine, ActivationParams(ratio=5.0, floor=1e-6))
    layers = tables["layers"]
    assert layers["layer"].tolist() == list(range(tiny.adapter.n_layers))
    for row in layers.itertuples():
        assert row.max_abs == float(engine.stream(row.layer + 1).abs().max())
    assert np.isfinite(layers["growth"]).all()
    first = appearance_layer(layers)
    assert first is None or set(tables["features"]["layer"]) <= set(range(first, tiny.adapter.n_layers))


def test_importance_correlation_has_an_interval():
    layers = pd.DataFrame({"layer": range(10), "growth": np.linspace(0, 3, 10)})
    importance = pd.DataFrame({"layer": range(10), "change_pct": np.linspace(1, 100, 10)})
    result = importance_correlation(layers, importance, n_boot=200)
    assert result["rho"] == pytest.approx(1.0) and result["ci_low"] <= result["rho"] <= result["ci_high"] + 1e-12
    assert appearance_layer(layers.assign(massive_entries=[0, 0, 3] + [1] * 7)) == 2
