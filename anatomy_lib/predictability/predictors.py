"""Predictors of a layer's weights from earlier layers: ridge in two formulations, and the two baselines any
predictor must beat (the formulations are described in ``compute``)."""
from __future__ import annotations

import numpy as np
from sklearn.linear_model import Ridge

from ..core.checks import one_of, positive_number

FORMULATIONS = ("layerwise", "elementwise")
BASELINES = ("previous layer", "mean layer")


def r2_and_cosine(predicted: np.ndarray, actual: np.ndarray) -> tuple[float, float]:
    sse = float(np.sum((actual - predicted) ** 2))
    sst = float(np.sum((actual - actual.mean()) ** 2))
    cosine = float(predicted @ actual / (np.linalg.norm(predicted) * np.linalg.norm(actual) + 1e-30))
    return 1.0 - sse / sst, cosine


def _pairs(n_layers: int, context: int) -> list[tuple[list[int], int]]:
    return [(list(range(t - context, t)), t) for t in range(context, n_layers)]


def random_projection(n_features: int, proj_dim: int, seed: int) -> np.ndarray:
    """The fixed Gaussian map from a layer's flattened weights to the ``proj_dim`` features a layerwise fit sees."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n_features, proj_dim)).astype(np.float32) / np.sqrt(proj_dim)


class _Layerwise:
    def __init__(self, weights: np.ndarray, context: int, ridge_alpha: float, proj_dim: int, seed: int):
        self.weights, self.context, self.ridge_alpha = weights, context, ridge_alpha
        self.features = weights @ random_projection(weights.shape[1], proj_dim, seed)  # (layers, proj_dim)

    def _x(self, sources):
        return np.concatenate([self.features[s] for s in sources])

    def predict(self, train_pairs, target_pair) -> np.ndarray:
        # A ridge prediction is linear in the training targets: fitting the same ridge to the identity targets
        # gives, for the new input, the weight of each training layer, and the prediction is that weighted sum.
        # Identical to fitting on the full weights, without copying them for every fit.
        x = np.stack([self._x(s) for s, _ in train_pairs])
        ridge = Ridge(alpha=self.ridge_alpha).fit(x, np.eye(len(train_pairs)))
        mixing = ridge.predict(self._x(target_pair[0])[None]).reshape(-1)  # one training layer: sklearn drops an axis
        targets = [t for _, t in train_pairs]
        return mixing.astype(np.float32) @ self.weights[targets]


class _Elementwise:
    def __init__(self, weights: np.ndarray, context: int, ridge_alpha: float, max_positions: int, seed: int):
        self.weights, self.context, self.ridge_alpha = weights, context, ridge_alpha
        n = weights.shape[1]
        self.sample = np.random.default_rng(seed).choice(n, size=min(n, max_positions), replace=False)

    def predict(self, train_pairs, target_pair) -> np.ndarray:
        x = np.concatenate([self.weights[s][:, self.sample].T for s, _ in train_pairs])
        y = np.concatenate([self.weights[t][self.sample] for _, t in train_pairs])
        model = Ridge(alpha=self.ridge_alpha).fit(x, y)
        return model.predict(self.weights[target_pair[0]].T)


def predict_layers(weights: np.ndarray, formulation: str = "layerwise", context: int = 1, ridge_alpha: float = 1.0,
                   proj_dim: int = 64, max_positions: int = 200_000, seed: int = 0, in_sample: bool = False,
                   targets=None):
    """Predicted weights for each target layer (default: all that have ``context`` earlier layers):
    {target: flat prediction}, out-of-sample unless ``in_sample``."""
    one_of(formulation, FORMULATIONS, "formulation")
    if not 1 <= context < weights.shape[0] - 2:
        raise ValueError(f"context must be in 1..{weights.shape[0] - 3}, got {context}")
    positive_number(ridge_alpha, "ridge_alpha")
    model = (_Layerwise(weights, context, ridge_alpha, proj_dim, seed) if formulation == "layerwise"
             else _Elementwise(weights, context, ridge_alpha, max_positions, seed))
    pairs = _pairs(weights.shape[0], context)
    valid = [t for _, t in pairs]
    if targets is not None and not set(targets) <= set(valid):
        raise ValueError(f"target layers must be in {valid[0]}..{valid[-1]} (each needs {context} earlier layers)")
    out = {}
    for pair in pairs:
        target = pair[1]
        if targets is not None and target not in targets:
            continue
        train = pairs if in_sample else [p for p in pairs if target not in p[0] and p[1] != target]
        out[target] = model.predict(train, pair)
    return out


def baseline_predictions(weights: np.ndarray, baseline: str, targets) -> dict[int, np.ndarray]:
    """{target: flat prediction} from a baseline: copy the previous layer, or the mean of every other layer."""
    one_of(baseline, BASELINES, "baseline")
    if baseline == "previous layer":
        return {t: weights[t - 1] for t in targets}
    total = weights.sum(axis=0, dtype=np.float64)
    return {t: ((total - weights[t]) / (weights.shape[0] - 1)).astype(np.float32) for t in targets}
