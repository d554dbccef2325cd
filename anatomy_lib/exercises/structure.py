"""Chapter 4's exercises: the lag-1 correlation of consecutive weight deltas, and its analytic value under an
autoregressive model of the layers (whose special case a = 0, independent layers, is the chapter's null)."""
from __future__ import annotations

import numpy as np
import torch

from ..core.weightspace import ANALYTIC_NULL
from ..structure.compute import delta_correlations_of
from .checking import Case, Exercise, differs

# ---- the lag-1 delta correlation ----------------------------------------------------------------------------
DELTA_STUB = '''def lag1_delta_correlations(weights):
    """For a (layers, elements) array of one matrix per layer, flattened: the Pearson correlation of every
    pair of consecutive deltas, corr(D_l, D_(l+1)) with D_l = W_(l+1) - W_l. Returns a list of layers - 2
    numbers."""
    raise NotImplementedError  # your code here
'''


def lag1_delta_correlations(weights) -> list[float]:
    """The library's answer (``structure.compute.delta_correlations_of``, lag 1)."""
    table = delta_correlations_of(torch.as_tensor(np.asarray(weights)), lags=(1,))
    return table.sort_values("layer")["corr"].tolist()


def _stacks() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    independent = rng.normal(0.0, 1.0, (7, 500))
    walk = np.cumsum(rng.normal(0.0, 1.0, (7, 500)), axis=0)
    independent -= independent.mean(axis=1, keepdims=True)  # centred layers: here a cosine would agree
    walk -= walk.mean(axis=1, keepdims=True)
    drifting = independent + np.arange(7)[:, None] * rng.normal(0.5, 0.1, 500)  # deltas with a shared mean
    return {"independent": independent, "walk": walk, "drifting": drifting}


def _delta_cases() -> tuple[Case, ...]:
    stacks = _stacks()

    def case(name):
        weights = stacks[name]
        return lambda fn: differs(list(fn(weights)), lag1_delta_correlations(weights), rtol=1e-6, atol=1e-8,
                                  what="list of correlations")

    return (Case("independent layers", "correlate the deltas D_l = W_(l+1) - W_l, not the layers themselves",
                 case("independent")),
            Case("a random walk", "consecutive deltas of a random walk are independent: the correlation is near 0",
                 case("walk")),
            Case("layers drifting by a shared step", "centre each delta before correlating: a Pearson correlation, "
                 "not a cosine", case("drifting")))


def _layer_correlations(weights):
    w = np.asarray(weights, dtype=np.float64)
    return [float(np.corrcoef(w[l], w[l + 1])[0, 1]) for l in range(len(w) - 2)]


def _cosines(weights):
    d = np.diff(np.asarray(weights, dtype=np.float64), axis=0)
    return [float(d[l] @ d[l + 1] / np.linalg.norm(d[l]) / np.linalg.norm(d[l + 1])) for l in range(len(d) - 1)]


def _pooled(weights):
    d = np.diff(np.asarray(weights, dtype=np.float64), axis=0)
    return [float(np.corrcoef(d[:-1].ravel(), d[1:].ravel())[0, 1])]


# ---- the analytic value under AR(1) --------------------------------------------------------------------------
AR1_STUB = '''def ar1_delta_correlation(a):
    """corr(D_l, D_(l+1)) for layers that follow a stationary autoregressive process W_l = a W_(l-1) + e_l
    (independent e_l, |a| < 1), with D_l = W_(l+1) - W_l. Derive it; a = 0 is independent layers."""
    raise NotImplementedError  # your code here
'''


def ar1_delta_correlation(a: float) -> float:
    """The derivation's result: cov(D_l, D_(l+1)) = -(1 - a)^2 var(W) over var(D) = 2 (1 - a) var(W) gives
    -(1 - a) / 2; at a = 0 it is the chapter's analytic null for independent layers
    (``core.weightspace.ANALYTIC_NULL``)."""
    return -(1 - a) / 2


def simulated_ar1_delta_correlation(a: float, n_layers: int = 400, n: int = 2000, seed: int = 0) -> float:
    """The same correlation measured on simulated AR(1) layers (the check the derivation can be held to)."""
    rng = np.random.default_rng(seed)
    w = np.empty((n_layers, n))
    w[0] = rng.normal(0.0, 1.0 / np.sqrt(1 - a * a), n)  # start in the stationary state
    for l in range(1, n_layers):
        w[l] = a * w[l - 1] + rng.normal(0.0, 1.0, n)
    return float(np.mean(lag1_delta_correlations(w)))


def _ar1_cases() -> tuple[Case, ...]:
    def at(a, atol=1e-9):
        return lambda fn: differs(fn(a), ar1_delta_correlation(a), atol=atol, what="correlation")

    return (Case("independent layers (a = 0)", f"independent layers give {ANALYTIC_NULL[1]:g}: "
                 "var(D) = 2 var(W), cov(D_l, D_(l+1)) = -var(W)", at(0.0)),
            Case("a = 0.5", "with W_l = a W_(l-1) + e_l, cov(W_l, W_(l+1)) = a var(W): expand "
                 "cov(W_(l+1) - W_l, W_(l+2) - W_(l+1)) and divide by var(D) = 2 (1 - a) var(W)", at(0.5)),
            Case("a = 0.9, close to a random walk", "as a tends to 1 the layers become a random walk, whose "
                 "consecutive deltas are independent: the correlation tends to 0", at(0.9)),
            Case("a = -0.5, layers that alternate", "the same formula holds for negative a: the correlation "
                 "falls below -1/2", at(-0.5)))


def _constant_null(a):
    return -0.5


def _forgets_half(a):
    return -(1 - a)


def _stationary_factor(a):
    """var(W) = var(e) / (1 - a^2) carried into the ratio, where it cancels."""
    return -(1 - a * a) / 2


def _positive_a_only(a):
    return -(1 - abs(a)) / 2


EXERCISES = (
    Exercise("delta-correlation", 4, "The lag-1 correlation of consecutive deltas",
             "Compute chapter 4's statistic on a stack of layers.", DELTA_STUB, lag1_delta_correlations,
             _delta_cases,
             mistakes={"correlating layers, not deltas": (_layer_correlations, "independent layers"),
                       "a cosine instead of a correlation": (_cosines, "layers drifting"),
                       "one correlation pooled over every pair": (_pooled, "independent layers")},
             shows=(delta_correlations_of,)),
    Exercise("ar1-null", 4, "The statistic's analytic value for autoregressive layers",
             "Derive corr(D_l, D_(l+1)) for stationary AR(1) layers; a = 0 gives the chapter's null.", AR1_STUB,
             ar1_delta_correlation, _ar1_cases,
             mistakes={"always -1/2": (_constant_null, "a = 0.5"),
                       "the covariance ratio without the variance of a delta": (_forgets_half, "independent"),
                       "the stationary variance's 1 - a^2 left in the ratio": (_stationary_factor, "a = 0.5"),
                       "derived for positive a only (|a|)": (_positive_a_only, "a = -0.5")},
             shows=(simulated_ar1_delta_correlation,)),
)
