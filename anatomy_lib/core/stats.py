"""Rank correlations (``scipy.stats``) and small-sample intervals, shared by every chapter that reports them."""
from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats


def spearman(x, y) -> float:
    """Spearman's rank correlation (ties get average ranks); NaN when either side is constant."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        return float(stats.spearmanr(x, y).statistic)


def partial_spearman(x, y, z) -> float:
    """Spearman correlation of x and y with z partialled out (the partial correlation of the three rank
    correlations); with z constant there is nothing to partial out, and the plain correlation comes back."""
    rxy, rxz, ryz = spearman(x, y), spearman(x, z), spearman(y, z)
    if math.isnan(rxz) or math.isnan(ryz):
        return rxy
    denominator = math.sqrt((1 - rxz ** 2) * (1 - ryz ** 2))
    return float((rxy - rxz * ryz) / denominator) if denominator > 1e-12 else float("nan")


def t_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided t-interval of paired differences (NaN if fewer than two)."""
    values = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if len(values) < 2:
        return (float(values.mean()) if len(values) else np.nan, np.nan, np.nan)
    half = stats.t.ppf(0.5 + level / 2, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
    return float(values.mean()), float(values.mean() - half), float(values.mean() + half)
