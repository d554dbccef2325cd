"""Rank correlations (``scipy.stats``) and small-sample intervals, shared by every chapter that reports them."""
from __future__ import annotations

import math

import numpy as np
from scipy import stats


def spearman(x, y):
    """Spearman's rank correlation (ties get average ranks); NaN when either side is constant. On 2-D input, one
    correlation per row (a bootstrap's resamples at once, as ``bootstrap.statistic_interval(rows=True)`` asks)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape[-1] < 2:
        return float("nan") if x.ndim == 1 else np.full(x.shape[0], np.nan)
    rx, ry = stats.rankdata(x, axis=-1), stats.rankdata(y, axis=-1)
    rx -= rx.mean(axis=-1, keepdims=True)
    ry -= ry.mean(axis=-1, keepdims=True)
    scale = np.sqrt((rx * rx).sum(axis=-1) * (ry * ry).sum(axis=-1))
    constant = (np.ptp(x, axis=-1) == 0) | (np.ptp(y, axis=-1) == 0)
    rho = np.where(constant, np.nan, (rx * ry).sum(axis=-1) / np.where(constant, 1.0, scale))
    rho = np.where(np.abs(rho) > 1 - 1e-12, np.sign(rho), rho)  # same order (or reversed) is exactly +-1
    return float(rho) if rho.ndim == 0 else rho


def partial_spearman(x, y, z):
    """Spearman correlation of x and y with z partialled out (the partial correlation of the three rank
    correlations); with z constant there is nothing to partial out, and the plain correlation comes back. Row-wise
    on 2-D input, like ``spearman``."""
    rxy, rxz, ryz = (np.asarray(r, dtype=np.float64) for r in (spearman(x, y), spearman(x, z), spearman(y, z)))
    denominator = np.sqrt((1 - rxz ** 2) * (1 - ryz ** 2))
    usable = denominator > 1e-12
    partial = np.where(usable, (rxy - rxz * ryz) / np.where(usable, denominator, 1.0), np.nan)
    partial = np.where(np.isnan(rxz) | np.isnan(ryz), rxy, partial)
    return float(partial) if partial.ndim == 0 else partial


def t_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided t-interval of paired differences (NaN if fewer than two)."""
    values = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if len(values) < 2:
        return (float(values.mean()) if len(values) else np.nan, np.nan, np.nan)
    half = stats.t.ppf(0.5 + level / 2, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
    return float(values.mean()), float(values.mean() - half), float(values.mean() + half)
