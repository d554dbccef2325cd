"""Weight-space diagnostics: the -0.5 null, out-of-sample R^2, quantisation noise, substitution."""
import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import state_hash

from anatomy_lib import predictability as pred
from anatomy_lib import structure as st
from anatomy_lib.core import weightspace


def test_independent_layers_give_minus_one_half():
    weights = torch.from_numpy(np.random.default_rng(0).standard_normal((30, 50_000)).astype(np.float32) + 2.0)
    summary = st.summarize(st.delta_correlations_of(weights).assign(model="iid", component="x"))
    means = dict(zip(summary["lag"], summary["mean"]))
    assert means[1] == pytest.approx(-0.5, abs=0.01)
    assert means[2] == pytest.approx(0.0, abs=0.01) and means[3] == pytest.approx(0.0, abs=0.01)
    matrix = st.delta_correlation_matrix(weights)
    assert np.allclose(np.diag(matrix), 1.0) and np.diag(matrix, 1).mean() == pytest.approx(-0.5, abs=0.01)


def test_random_walk_gives_zero_and_shuffling_restores_minus_one_half(tiny):
    steps = np.random.default_rng(1).standard_normal((30, 20_000)).astype(np.float32)
    walk = torch.from_numpy(np.cumsum(steps, axis=0))
    assert st.delta_correlations_of(walk, lags=(1,))["corr"].mean() == pytest.approx(0.0, abs=0.02)
    order = np.random.default_rng(0).permutation(30)
    shuffled = st.delta_correlations_of(walk[order], lags=(1,))["corr"].mean()
    assert shuffled < -0.3  # shuffling a smooth trajectory destroys its order


def test_out_of_sample_r2_of_independent_layers_is_not_positive():
    weights = np.random.default_rng(2).standard_normal((20, 3000)).astype(np.float32)
    held_out = pred.predict_layers(weights, "layerwise", proj_dim=32)
    in_sample = pred.predict_layers(weights, "layerwise", proj_dim=32, in_sample=True)
    r2_out = np.mean([pred.r2_and_cosine(p, weights[t])[0] for t, p in held_out.items()])
    r2_in = np.mean([pred.r2_and_cosine(p, weights[t])[0] for t, p in in_sample.items()])
    assert r2_out < 0.02 and r2_in > 0.5  # leakage, measured
    element = pred.predict_layers(weights, "elementwise", context=2)
    assert np.mean([pred.r2_and_cosine(p, weights[t])[0] for t, p in element.items()]) < 0.02


def test_predictable_layers_are_predicted_out_of_sample():
    rng = np.random.default_rng(3)
    base = rng.standard_normal(4000).astype(np.float32)
    weights = np.stack([base * (1 + 0.05 * l) + 0.01 * rng.standard_normal(4000) for l in range(20)])
    element = pred.predict_layers(weights.astype(np.float32), "elementwise")
    assert np.mean([pred.r2_and_cosine(p, weights[t])[0] for t, p in element.items()]) > 0.95


def test_bad_predictability_requests():
    weights = np.zeros((10, 50), dtype=np.float32)
    with pytest.raises(ValueError, match="choose one of"):
        pred.predict_layers(weights, "neural")
    with pytest.raises(ValueError, match="context"):
        pred.predict_layers(weights, context=9)
    with pytest.raises(ValueError, match="ridge_alpha"):
        pred.predict_layers(weights, ridge_alpha=float("nan"))
    with pytest.raises(ValueError, match="target layers"):
        pred.predict_layers(weights, targets=[0])


def _q4_1(values: torch.Tensor) -> torch.Tensor:
    blocks = values.reshape(-1, 32).double()
    low, high = blocks.min(1, keepdim=True).values, blocks.max(1, keepdim=True).values
    step = (high - low) / 15
    return (low + step * ((blocks - low) / step).round()).reshape(values.shape).float()


def test_q4_1_noise_bound_matches_the_rounding_error():
    original = torch.randn(64, 256)
    quantised = _q4_1(original)
    info = st.q4_1_noise(quantised)
    assert info["on_grid_share"] == 1.0
    assert info["noise_var"] == pytest.approx(float((quantised - original).double().var()), rel=0.1)
    assert st.q4_1_noise(original)["on_grid_share"] < 0.01


def test_quantisation_correction_recovers_the_true_correlation():
    rng = np.random.default_rng(4)
    base = rng.standard_normal(32 * 2000)
    walk = base + np.cumsum(rng.standard_normal((12, 32 * 2000)), axis=0) * 0.15  # true lag-1 correlation 0
    quantised = torch.stack([_q4_1(torch.from_numpy(w).float()) for w in walk])

    from anatomy_lib.core.adapter import ModelAdapter

    class Stack:  # the two things quantisation_share needs of an adapter
        matrix_names = ("x",)
        n_layers = 12
        stacked = ModelAdapter.stacked

        def tensor(self, layer, name):
            return quantised[layer]

    table = st.quantisation_share(Stack())
    assert table["corr"].mean() < -0.1  # the noise drags it toward -0.5
    assert table["noise_share"].mean() > 0.2
    assert table["corr_without_noise"].mean() == pytest.approx(0.0, abs=0.05)


def test_claims_tables_compute_verdicts():
    rows = []
    for model, value in (("specimen", -0.5), ("layer-shuffled", -0.5), ("random init", -0.5)):
        for layer in range(5):
            rows.append({"model": model, "component": "gate", "layer": layer, "lag": 1,
                         "corr": value + 0.001 * layer})
    tables = {"weights": pd.DataFrame(rows),
              "functional": pd.DataFrame({"layer": range(4), "corr": [0.1, 0.2, -0.05, 0.3]})}
    claims = st.paper_claims(tables)
    assert [c.verdict for c in claims] == ["reproduced", "not reproduced", "not reproduced"]


def test_substitution_restores_the_model(real_specimen):
    from anatomy_lib.core.lab import open_lab

    lab = open_lab(real_specimen, "smoke", progress=False)
    lab = dataclasses.replace(lab, blocks=lab.blocks.subset(2))
    before = state_hash(real_specimen.model)
    measured = pred.substitute_predictions(lab, [15], pred.PredictabilityParams(proj_dim=16))
    assert state_hash(real_specimen.model) == before
    assert measured.ci_low <= measured.change_pct <= measured.ci_high and measured.ppl > measured.base_ppl


def test_layerwise_ridge_equals_a_direct_sklearn_fit():
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(5)
    weights = rng.standard_normal((12, 500)).astype(np.float32)
    model = weightspace._Layerwise(weights, ridge_alpha=0.7, proj_dim=16, seed=0)
    pairs = weightspace.layer_pairs(12, 2)
    train, target = pairs[:-1], pairs[-1]
    x = np.stack([model._x(s) for s, _ in train])
    direct = Ridge(alpha=0.7).fit(x, np.stack([weights[t] for _, t in train])).predict(model._x(target[0])[None])[0]
    np.testing.assert_allclose(model.predict(train, target), direct, rtol=1e-9, atol=1e-12)
