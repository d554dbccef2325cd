"""Weight-space statistics in numpy alone: chapters 3 and 4 compute them from a specimen's weights, and the page
"Dissect your own model" computes the same functions in the reader's browser (Pyodide has numpy, not torch,
pandas or scikit-learn, so nothing here imports them).

A *stack* is one weight matrix of every layer, flattened: an array of shape (layers, elements), in depth order.

- Chapter 3 (predictability): ``predict_layers`` fits ridge regressions that predict a layer's weights from
  earlier layers, in two formulations (``FORMULATIONS``, described in ``predictability.compute``), held out
  (leave-one-layer-out) or in-sample; ``baseline_predictions`` gives the two baselines any predictor must beat;
  ``r2_and_cosine`` scores a prediction.
- Chapter 4 (structure): ``delta_correlation_rows`` gives corr(D_l, D_(l+k)) for D_l = W_(l+1) - W_l, whose
  value for independent layers is exactly -1/2 at lag 1 (``ANALYTIC_NULL``); ``shuffled_orders`` are the
  layer orders of its layer-shuffled null.
- Both: ``matrix_summary`` (Frobenius norm, RMS, top singular value and stable rank of one layer's matrix).

Every sum that decides a reported number runs in float64, so CPython and the browser's numpy (different BLAS
builds, different summation orders) agree to about 1e-12 rather than float32's 1e-6.
"""
from __future__ import annotations

import numpy as np

FORMULATIONS = ("layerwise", "elementwise")
BASELINES = ("previous layer", "mean layer")
LAGS = (1, 2, 3)
ANALYTIC_NULL = {1: -0.5, 2: 0.0, 3: 0.0}
# rows of a layer's flattened weights projected at a time: bounds the projection's memory (a browser tab has a
# few GB at most) without changing a number, since the projection's Gaussian draws come in the same order
PROJECTION_CHUNK = 32_768
POWER_ITERATIONS = 60


def _check_one_of(value, choices, name: str) -> None:
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of {list(choices)}")


# ---- chapter 4: delta correlations -------------------------------------------------------------------------

def correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of two flat arrays over their elements, in float64."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a = a - a.mean()
    b = b - b.mean()
    return float((a @ b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def delta_correlation_rows(weights: np.ndarray, lags=LAGS, order=None) -> list[dict]:
    """corr(D_l, D_(l+k)) of a (layers, elements) stack taken in ``order`` (default: depth): one row {layer, lag,
    corr} per layer l and lag k. Each delta is formed when needed, never all at once: a stack of deltas in float64
    would be twice the stack's size again, more than a browser tab can spare."""
    weights = np.asarray(weights)
    order = list(range(len(weights))) if order is None else list(order)

    def delta(l: int) -> np.ndarray:
        return weights[order[l + 1]].astype(np.float64) - weights[order[l]]

    return [{"layer": layer, "lag": lag, "corr": correlation(delta(layer), delta(layer + lag))}
            for lag in lags for layer in range(len(order) - 1 - lag)]


def shuffled_orders(n_layers: int, n_shuffles: int, seed: int) -> list[list[int]]:
    """The layer orders of the layer-shuffled null: the specimen's own weights, depth order destroyed."""
    rng = np.random.default_rng(seed)
    return [rng.permutation(n_layers).tolist() for _ in range(n_shuffles)]


# ---- chapter 3: predicting a layer from earlier layers --------------------------------------------------------

def r2_and_cosine(predicted: np.ndarray, actual: np.ndarray) -> tuple[float, float]:
    """R^2 of a prediction (1 - SSE / SST, SST around the layer's own mean) and its cosine to the real weights."""
    predicted = np.asarray(predicted, dtype=np.float64)
    actual = np.asarray(actual, dtype=np.float64)
    sse = float(np.sum((actual - predicted) ** 2))
    sst = float(np.sum((actual - actual.mean()) ** 2))
    cosine = float(predicted @ actual / (np.linalg.norm(predicted) * np.linalg.norm(actual) + 1e-30))
    return 1.0 - sse / sst, cosine


def random_projection(n_features: int, proj_dim: int, seed: int, start: int = 0,
                      stop: int | None = None) -> np.ndarray:
    """Rows ``start:stop`` of the fixed Gaussian map (n_features, proj_dim) / sqrt(proj_dim) from a layer's
    flattened weights to the ``proj_dim`` features a layerwise fit sees (the draws come row by row, so any slice
    equals the same rows of the whole map)."""
    stop = n_features if stop is None else stop
    rng = np.random.default_rng(seed)
    if start:
        rng.standard_normal(start * proj_dim)  # skip the rows before ``start``: same stream, same numbers
    return rng.standard_normal((stop - start, proj_dim)) / np.sqrt(proj_dim)


def project(weights: np.ndarray, proj_dim: int, seed: int, chunk: int = PROJECTION_CHUNK) -> np.ndarray:
    """weights @ random_projection: (layers, proj_dim) features, in float64, a chunk of rows at a time."""
    weights = np.asarray(weights)
    n_features = weights.shape[1]
    rng = np.random.default_rng(seed)
    features = np.zeros((weights.shape[0], proj_dim))
    for start in range(0, n_features, chunk):
        stop = min(start + chunk, n_features)
        block = rng.standard_normal((stop - start, proj_dim))
        features += weights[:, start:stop].astype(np.float64) @ block
    return features / np.sqrt(proj_dim)


def ridge_predict(x: np.ndarray, y: np.ndarray, x_new: np.ndarray, alpha: float) -> np.ndarray:
    """Ridge regression with an intercept (the penalty on the coefficients only), fitted on (x, y) and evaluated
    at ``x_new``: the estimator of scikit-learn's ``Ridge(alpha)``, solved in float64 in its primal form when
    there are more samples than features and in its dual (kernel) form otherwise."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    x_new = np.asarray(x_new, dtype=np.float64)
    x_mean, y_mean = x.mean(axis=0), y.mean(axis=0)
    xc, yc = x - x_mean, y - y_mean
    if x.shape[0] > x.shape[1]:
        coef = np.linalg.solve(xc.T @ xc + alpha * np.eye(x.shape[1]), xc.T @ yc)
    else:
        coef = xc.T @ np.linalg.solve(xc @ xc.T + alpha * np.eye(x.shape[0]), yc)
    return (x_new - x_mean) @ coef + y_mean


def layer_pairs(n_layers: int, context: int) -> list[tuple[list[int], int]]:
    """(source layers, target layer) of every fit: the ``context`` layers before each target."""
    return [(list(range(t - context, t)), t) for t in range(context, n_layers)]


class _Layerwise:
    """A layer is a sample: its projected weights are the features, its full weights the target."""

    def __init__(self, weights: np.ndarray, ridge_alpha: float, proj_dim: int, seed: int):
        self.weights, self.ridge_alpha = weights, ridge_alpha
        self.features = project(weights, proj_dim, seed)

    def _x(self, sources):
        return np.concatenate([self.features[s] for s in sources])

    def mixture(self, train_pairs, target_pair) -> tuple[list[int], np.ndarray]:
        # A ridge prediction is linear in the training targets: fitting the same ridge to the identity targets
        # gives, for the new input, the weight of each training layer, and the prediction is that weighted sum.
        # Identical to fitting on the full weights, without copying them for every fit.
        x = np.stack([self._x(s) for s, _ in train_pairs])
        mixing = ridge_predict(x, np.eye(len(train_pairs)), self._x(target_pair[0])[None], self.ridge_alpha)[0]
        return [t for _, t in train_pairs], mixing

    def predict(self, train_pairs, target_pair) -> np.ndarray:
        layers, mixing = self.mixture(train_pairs, target_pair)
        return mixing @ self.weights[layers].astype(np.float64)


class _Elementwise:
    """A weight position is a sample: W_(l+1)[i, j] predicted from W_(l-context+1..l)[i, j]."""

    def __init__(self, weights: np.ndarray, ridge_alpha: float, max_positions: int, seed: int):
        self.weights, self.ridge_alpha = weights, ridge_alpha
        n = weights.shape[1]
        self.sample = np.random.default_rng(seed).choice(n, size=min(n, max_positions), replace=False)

    def predict(self, train_pairs, target_pair) -> np.ndarray:
        x = np.concatenate([self.weights[s][:, self.sample].T for s, _ in train_pairs])
        y = np.concatenate([self.weights[t][self.sample] for _, t in train_pairs])
        return ridge_predict(x, y, self.weights[target_pair[0]].T, self.ridge_alpha)


def _fits(weights: np.ndarray, formulation: str, context: int, ridge_alpha: float, proj_dim: int,
          max_positions: int, seed: int, in_sample: bool, targets):
    """(model, [(training pairs, target pair)]) of every fit predict_layers makes, its arguments checked."""
    _check_one_of(formulation, FORMULATIONS, "formulation")
    if not 1 <= context < weights.shape[0] - 2:
        raise ValueError(f"context must be in 1..{weights.shape[0] - 3}, got {context}")
    if not ridge_alpha > 0:
        raise ValueError(f"ridge_alpha must be positive, got {ridge_alpha}")
    pairs = layer_pairs(weights.shape[0], context)
    valid = [t for _, t in pairs]
    if targets is not None and not set(targets) <= set(valid):
        raise ValueError(f"target layers must be in {valid[0]}..{valid[-1]} (each needs {context} earlier layers)")
    model = (_Layerwise(weights, ridge_alpha, proj_dim, seed) if formulation == "layerwise"
             else _Elementwise(weights, ridge_alpha, max_positions, seed))
    fits = [([p for p in pairs if in_sample or (pair[1] not in p[0] and p[1] != pair[1])], pair)
            for pair in pairs if targets is None or pair[1] in targets]
    return model, fits


def predict_layers(weights: np.ndarray, formulation: str = "layerwise", context: int = 1, ridge_alpha: float = 1.0,
                   proj_dim: int = 64, max_positions: int = 200_000, seed: int = 0, in_sample: bool = False,
                   targets=None) -> dict[int, np.ndarray]:
    """Predicted weights for each target layer (default: all that have ``context`` earlier layers):
    {target: flat prediction (float64)}, out-of-sample (leave-one-layer-out: every pair involving the target, as
    target or as a source, is left out of its fit) unless ``in_sample``."""
    weights = np.asarray(weights)
    model, fits = _fits(weights, formulation, context, ridge_alpha, proj_dim, max_positions, seed, in_sample,
                        targets)
    return {pair[1]: model.predict(train, pair) for train, pair in fits}


def ridge_mixtures(weights: np.ndarray, context: int = 1, ridge_alpha: float = 1.0, proj_dim: int = 64,
                   seed: int = 0, in_sample: bool = False, targets=None) -> dict[int, tuple[list[int], np.ndarray]]:
    """The layerwise ridge's predictions as mixtures of layers: {target: (layers, coefficients)}, so that
    predict_layers(...)[target] = coefficients @ weights[layers]; scored without forming them
    (``mixture_scores``)."""
    weights = np.asarray(weights)
    model, fits = _fits(weights, "layerwise", context, ridge_alpha, proj_dim, 0, seed, in_sample, targets)
    return {pair[1]: model.mixture(train, pair) for train, pair in fits}


def baseline_mixtures(n_layers: int, baseline: str, targets) -> dict[int, tuple[list[int], np.ndarray]]:
    """The two baselines as mixtures of layers: the previous layer, or the mean of every other layer."""
    _check_one_of(baseline, BASELINES, "baseline")
    if baseline == "previous layer":
        return {t: ([t - 1], np.ones(1)) for t in targets}
    return {t: ([l for l in range(n_layers) if l != t], np.full(n_layers - 1, 1.0 / (n_layers - 1)))
            for t in targets}


class LayerGram:
    """Inner products of a stack's layers, in float64, a chunk of elements at a time: every score of a
    prediction that is a mixture of layers, with no prediction formed (30 products of a layer instead of a full
    prediction per target: the difference between seconds and minutes in a browser)."""

    def __init__(self, weights: np.ndarray, chunk: int = PROJECTION_CHUNK):
        weights = np.asarray(weights)
        self.n_elements = weights.shape[1]
        self.gram = np.zeros((len(weights), len(weights)))
        self.sums = np.zeros(len(weights))
        for start in range(0, self.n_elements, chunk):
            block = weights[:, start:start + chunk].astype(np.float64)
            self.gram += block @ block.T
            self.sums += block.sum(axis=1)

    def scores(self, target: int, layers, coefficients) -> tuple[float, float]:
        """(R^2, cosine) of the prediction coefficients @ weights[layers] of layer ``target``: the same
        numbers as ``r2_and_cosine`` on the formed prediction, from the Gram matrix alone."""
        layers, coefficients = list(layers), np.asarray(coefficients, dtype=np.float64)
        own = self.gram[target, target]
        cross = float(coefficients @ self.gram[target, layers])
        power = float(coefficients @ self.gram[np.ix_(layers, layers)] @ coefficients)
        sse = own - 2 * cross + power
        sst = own - self.sums[target] ** 2 / self.n_elements
        return 1.0 - sse / sst, cross / (np.sqrt(max(power, 0.0)) * np.sqrt(own) + 1e-30)


def baseline_predictions(weights: np.ndarray, baseline: str, targets) -> dict[int, np.ndarray]:
    """{target: flat prediction} from a baseline: copy the previous layer, or the mean of every other layer."""
    _check_one_of(baseline, BASELINES, "baseline")
    weights = np.asarray(weights)
    if baseline == "previous layer":
        return {t: weights[t - 1] for t in targets}
    total = weights.sum(axis=0, dtype=np.float64)
    return {t: (total - weights[t]) / (weights.shape[0] - 1) for t in targets}


def held_out_scores(weights: np.ndarray, formulation: str = "layerwise", context: int = 1, ridge_alpha: float = 1.0,
                    proj_dim: int = 64, seed: int = 0, in_sample: bool = False,
                    gram: LayerGram | None = None) -> dict[int, tuple[float, float]]:
    """{target: (R^2, cosine)} of ridge's prediction of every target layer (held out unless ``in_sample``):
    layerwise from the Gram matrix, elementwise from the formed predictions."""
    weights = np.asarray(weights)
    if formulation != "layerwise":
        predicted = predict_layers(weights, formulation, context, ridge_alpha, proj_dim, seed=seed,
                                   in_sample=in_sample)
        return {t: r2_and_cosine(flat, weights[t]) for t, flat in predicted.items()}
    gram = LayerGram(weights) if gram is None else gram
    return {t: gram.scores(t, *mixture)
            for t, mixture in ridge_mixtures(weights, context, ridge_alpha, proj_dim, seed, in_sample).items()}


def fit_rows(weights: np.ndarray, formulation: str = "layerwise", context: int = 1, ridge_alpha: float = 1.0,
             proj_dim: int = 64, seed: int = 0, fits=("out-of-sample", "in-sample")) -> list[dict]:
    """Chapter 3's scores of one component's stack: rows {layer, predictor, fit, r2, cosine} for ridge (each of
    ``fits``) and for the two baselines (out-of-sample by construction)."""
    weights = np.asarray(weights)
    gram = LayerGram(weights)
    rows = []
    for fit in fits:
        _check_one_of(fit, ("out-of-sample", "in-sample"), "fit")
        scores = held_out_scores(weights, formulation, context, ridge_alpha, proj_dim, seed,
                                 in_sample=fit == "in-sample", gram=gram)
        rows += [{"layer": t, "predictor": "ridge", "fit": fit, "r2": r2, "cosine": cosine}
                 for t, (r2, cosine) in scores.items()]
    for baseline in BASELINES:
        for t, mixture in baseline_mixtures(len(weights), baseline, range(context, len(weights))).items():
            r2, cosine = gram.scores(t, *mixture)
            rows.append({"layer": t, "predictor": baseline, "fit": "out-of-sample", "r2": r2, "cosine": cosine})
    return rows


# ---- both chapters: one layer's matrix ------------------------------------------------------------------------

def top_singular_value(matrix: np.ndarray, iterations: int = POWER_ITERATIONS, seed: int = 0) -> float:
    """The largest singular value by power iteration on M^T M from a seeded start (a fixed number of steps, so
    the browser and CPython take the same path): about 60 matrix-vector products, against a full SVD's cost."""
    matrix = np.asarray(matrix, dtype=np.float64)
    vector = np.random.default_rng(seed).standard_normal(matrix.shape[1])
    for _ in range(iterations):
        vector = matrix.T @ (matrix @ vector)
        norm = np.linalg.norm(vector)
        if norm == 0:
            return 0.0
        vector /= norm
    return float(np.linalg.norm(matrix @ vector))


def matrix_summary(matrix: np.ndarray) -> dict:
    """Frobenius norm, RMS, top singular value and stable rank (||M||_F^2 / sigma_1^2: how many directions
    carry the matrix's energy) of one layer's weight matrix."""
    matrix = np.asarray(matrix, dtype=np.float64)
    frobenius = float(np.linalg.norm(matrix))
    sigma = top_singular_value(matrix)
    return {"frobenius": frobenius, "rms": frobenius / np.sqrt(matrix.size), "top_singular": sigma,
            "stable_rank": frobenius ** 2 / sigma ** 2 if sigma > 0 else float("nan")}
