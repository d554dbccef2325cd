"""Chapter 3's exercises: a held-out ridge prediction of a layer's weights, and R² against the mean."""
from __future__ import annotations

import numpy as np
from sklearn.linear_model import Ridge

from ..core.weightspace import predict_layers, r2_and_cosine, random_projection
from .checking import Case, Exercise, differs

PROJ_DIM, SEED = 8, 0

# ---- the held-out ridge prediction --------------------------------------------------------------------------
HELD_OUT_STUB = '''def held_out_prediction(features, weights, target, ridge_alpha=1.0):
    """Predict weights[target] (one layer's flattened matrix) from features[target - 1], with a ridge
    regression (sklearn.linear_model.Ridge) fitted on the pairs features[l - 1] -> weights[l] that never show
    it the target layer. features: (layers, d), a fixed random projection of each layer's weights;
    weights: (layers, n)."""
    raise NotImplementedError  # your code here
'''


def held_out_prediction(features, weights, target: int, ridge_alpha: float = 1.0):
    """The library's answer: chapter 3's layerwise predictor, out of sample (its features are these: the same
    projection of the same weights)."""
    return predict_layers(weights, "layerwise", 1, ridge_alpha, PROJ_DIM, seed=SEED, targets=[target])[target]


def _layers(n_layers: int = 8, n: int = 48, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Layers that drift slowly plus their own noise: a fit has something to learn, and leakage shows."""
    rng = np.random.default_rng(seed)
    weights = (np.cumsum(rng.normal(0, 0.3, (n_layers, n)), axis=0) + rng.normal(0, 1.0, (n_layers, n)))
    weights = weights.astype(np.float32)
    return weights @ random_projection(n, PROJ_DIM, SEED), weights


def _held_out_cases() -> tuple[Case, ...]:
    features, weights = _layers()

    def case(target, ridge_alpha=1.0):
        expected = held_out_prediction(features, weights, target, ridge_alpha)
        return lambda fn: differs(fn(features, weights, target, ridge_alpha), expected, rtol=1e-3, atol=1e-4,
                                  what="prediction")

    return (Case("the last layer (7 of 8)", "train only on pairs that never show the fit the target layer, as "
                 "output or as input; for the last layer that leaves out its own pair (6 -> 7): a fit that has seen "
                 "the target scores its own training data", case(7)),
            Case("a middle layer (4 of 8)", "drop the pair whose *input* is the target layer too "
                 "(target -> target + 1): it shows the fit that layer's weights", case(4)),
            Case("the second layer (1 of 8)", "the target's own pair is 0 -> 1 and the pair 1 -> 2 has it as "
                 "input: leave out both, train on the rest", case(1)),
            Case("a stronger ridge (alpha 30, layer 4)", "pass ridge_alpha to Ridge(alpha=...): sklearn's default "
                 "is 1.0, so a fit that ignores the argument agrees only at 1.0", case(4, 30.0)))


def _in_sample(features, weights, target, ridge_alpha=1.0):
    pairs = range(1, len(weights))
    model = Ridge(alpha=ridge_alpha).fit(features[[l - 1 for l in pairs]], weights[list(pairs)])
    return model.predict(features[target - 1][None])[0]


def _keeps_input_pair(features, weights, target, ridge_alpha=1.0):
    pairs = [l for l in range(1, len(weights)) if l != target]
    model = Ridge(alpha=ridge_alpha).fit(features[[l - 1 for l in pairs]], weights[pairs])
    return model.predict(features[target - 1][None])[0]


def _ignores_ridge_alpha(features, weights, target, ridge_alpha=1.0):
    return held_out_prediction(features, weights, target, 1.0)


# ---- R² -------------------------------------------------------------------------------------------------
R2_STUB = '''def r2(predicted, actual):
    """The coefficient of determination of a prediction of a flattened weight matrix: one minus the squared
    error over the squared deviation of the actual weights from their mean."""
    raise NotImplementedError  # your code here
'''


def r2(predicted, actual) -> float:
    """The library's answer (``core.weightspace.r2_and_cosine``)."""
    return r2_and_cosine(np.asarray(predicted, dtype=np.float64), np.asarray(actual, dtype=np.float64))[0]


def _r2_cases() -> tuple[Case, ...]:
    rng = np.random.default_rng(0)
    actual = rng.normal(0.0, 1.0, 400)
    actual -= actual.mean()
    x = actual + rng.normal(0.0, 0.5, 400)
    slope, intercept = np.polyfit(x, actual, 1)
    close = intercept + slope * x  # the least-squares fit: here R^2 equals the squared correlation
    worse = -0.8 * actual + rng.normal(0.0, 0.5, 400)  # anti-correlated: worse than predicting the mean
    worse -= worse.mean()  # centred like the actual weights: only the offset case is about offsets
    shifted = actual + 2.0
    offset_actual = actual + 0.7
    return (Case("a least-squares prediction", "R^2 = 1 - sum((actual - predicted)^2) / sum((actual - mean(actual))^2)",
                 lambda fn: differs(fn(close, actual), r2(close, actual), what="R^2")),
            Case("a prediction worse than the mean", "R^2 can be negative: a squared correlation cannot, and "
                 "rewards a prediction that is perfectly wrong in sign",
                 lambda fn: differs(fn(worse, actual), r2(worse, actual), what="R^2")),
            Case("a prediction off by a constant", "a constant offset is an error: compare with the actual values, "
                 "not after centring the prediction", lambda fn: differs(fn(shifted, actual), r2(shifted, actual),
                                                                         what="R^2")),
            Case("actual weights with a non-zero mean", "the baseline is the actual weights' mean, not zero",
                 lambda fn: differs(fn(close + 0.7, offset_actual), r2(close + 0.7, offset_actual), what="R^2")))


def _squared_correlation(predicted, actual):
    return float(np.corrcoef(predicted, actual)[0, 1] ** 2)


def _centres_the_prediction(predicted, actual):
    predicted, actual = np.asarray(predicted), np.asarray(actual)
    residual = (actual - actual.mean()) - (predicted - predicted.mean())
    return float(1 - np.sum(residual ** 2) / np.sum((actual - actual.mean()) ** 2))


def _uncentred(predicted, actual):
    predicted, actual = np.asarray(predicted), np.asarray(actual)
    return float(1 - np.sum((actual - predicted) ** 2) / np.sum(actual ** 2))


EXERCISES = (
    Exercise("held-out-ridge", 3, "A held-out ridge prediction of a layer",
             "Fit chapter 3's layerwise ridge without letting it see the layer it predicts.", HELD_OUT_STUB,
             held_out_prediction, _held_out_cases,
             mistakes={"fitted on every pair (in-sample)": (_in_sample, "the last layer"),
                       "the pair leaving the target kept": (_keeps_input_pair, "a middle layer"),
                       "the ridge strength ignored (sklearn's default alpha)": (_ignores_ridge_alpha,
                                                                                 "a stronger ridge")},
             shows=(predict_layers,)),
    Exercise("r2", 3, "R² against the mean", "Score a predicted layer the way chapter 3 does.", R2_STUB, r2,
             _r2_cases,
             mistakes={"squared correlation": (_squared_correlation, "a prediction worse than the mean"),
                       "deviations measured from zero": (_uncentred, "actual weights with a non-zero mean"),
                       "the prediction centred before scoring": (_centres_the_prediction, "a prediction off by")},
             shows=(r2_and_cosine,)),
)
