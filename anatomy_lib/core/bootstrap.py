"""Bootstrap intervals, the one resampling module of the book: over text blocks (the uncertainty the paper's
perplexity numbers never carry), over questions, and over layers (``statistic_interval``).

Blocks are the resampling unit (tokens within a block are not independent). A perplexity change is paired:
the same resampled blocks enter the intact and the edited mean, so shared difficulty cancels.
"""
from __future__ import annotations

import numpy as np


def resample_indices(n: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, n) indices of ``n`` items drawn with replacement: every bootstrap in the book draws these."""
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def percentile_interval(draws, level: float = 0.95) -> tuple[float, float]:
    """The central ``level`` percentile interval of bootstrap draws (non-finite draws left out; NaN if none)."""
    draws = np.asarray(draws, dtype=np.float64)
    draws = draws[np.isfinite(draws)]
    if not len(draws):
        return float("nan"), float("nan")
    tail = (1 - level) / 2 * 100
    return float(np.percentile(draws, tail)), float(np.percentile(draws, 100 - tail))


def statistic_interval(n: int, statistic, n_boot: int = 2000, seed: int = 0, level: float = 0.95,
                       rows: bool = False):
    """(estimate, low, high) of ``statistic(indices)`` over ``n`` items (e.g. a rank correlation over layers):
    the estimate on every item, the interval over resampled items (resamples where it is undefined, such as a
    correlation of tied values, left out). ``rows``: the statistic takes the (n_boot, n) resampled indices at
    once and gives one value per row (a vectorised statistic: thousands of resamples in one call)."""
    if rows:
        estimate = statistic(np.arange(n)[None, :])[0]
        draws = statistic(resample_indices(n, n_boot, seed))
    else:
        estimate = statistic(np.arange(n))
        draws = [statistic(i) for i in resample_indices(n, n_boot, seed)]
    return (float(estimate), *percentile_interval(draws, level))


def perplexity_interval(block_nll, n_boot: int = 2000, seed: int = 0, level: float = 0.95):
    """(perplexity, low, high): exp of the mean block NLL and its percentile bootstrap interval."""
    nll = np.asarray(block_nll, dtype=np.float64)
    draws = np.exp(nll[resample_indices(len(nll), n_boot, seed)].mean(axis=1))
    return (float(np.exp(nll.mean())), *percentile_interval(draws, level))


def paired_change_interval(base_nll, new_nll, n_boot: int = 2000, seed: int = 0, level: float = 0.95):
    """(change %, low %, high %): perplexity change of ``new`` over ``base`` with a paired bootstrap interval."""
    base = np.asarray(base_nll, dtype=np.float64)
    new = np.asarray(new_nll, dtype=np.float64)
    if base.shape != new.shape:
        raise ValueError(f"paired blocks must match: {base.shape} vs {new.shape}")
    diff = new - base
    draws = np.expm1(diff[resample_indices(len(diff), n_boot, seed)].mean(axis=1)) * 100
    return (float(np.expm1(diff.mean()) * 100), *percentile_interval(draws, level))


def mean_interval(values, n_boot: int = 2000, seed: int = 0, level: float = 0.95):
    """(mean, low, high): a mean and its percentile bootstrap interval over the items (e.g. prompts answered
    right, 1/0; a paired difference, edited minus intact)."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        raise ValueError("no values to average")
    draws = x[resample_indices(len(x), n_boot, seed)].mean(axis=1)
    return (float(x.mean()), *percentile_interval(draws, level))
