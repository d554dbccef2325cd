"""Bootstrap intervals over blocks."""
import numpy as np
import pytest

from anatomy_lib.core.bootstrap import paired_change_interval, perplexity_interval, resample_indices, statistic_interval


def test_perplexity_interval_contains_the_estimate():
    nll = np.random.default_rng(0).normal(3.0, 0.3, size=40)
    ppl, low, high = perplexity_interval(nll, n_boot=500)
    assert low < ppl < high and ppl == pytest.approx(np.exp(nll.mean()))


def test_paired_change():
    base = np.random.default_rng(1).normal(3.0, 0.5, size=30)
    change, low, high = paired_change_interval(base, base, n_boot=300)
    assert change == low == high == 0.0
    worse = base + 0.1 + np.random.default_rng(2).normal(0, 0.01, size=30)
    change, low, high = paired_change_interval(base, worse, n_boot=300)
    assert 0 < low < change < high and change == pytest.approx(np.expm1(0.1) * 100, rel=0.05)
    with pytest.raises(ValueError, match="paired"):
        paired_change_interval(base, base[:5])


def test_rank_correlations_row_by_row_agree_with_scipy():
    """The vectorised Spearman (one correlation per resample) gives scipy's value on every row, NaN on a
    constant row, and statistic_interval(rows=True) the same interval as resampling one draw at a time."""
    from scipy import stats

    from anatomy_lib.core.stats import partial_spearman, spearman
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 4, 9).astype(float), rng.normal(size=9)  # ties in x, as steps capped at a budget
    draws = resample_indices(9, 500, 1)
    rows = spearman(x[draws], y[draws])
    for i, value in zip(draws, rows):
        if np.ptp(x[i]) == 0:
            assert np.isnan(value)
        else:
            assert value == pytest.approx(stats.spearmanr(x[i], y[i]).statistic, abs=1e-12)
    assert spearman([1, 2, 3], [3, 2, 1]) == -1.0 and np.isnan(spearman([1, 1, 1], [1, 2, 3]))
    one_at_a_time = statistic_interval(9, lambda i: spearman(x[i], y[i]), 500, 1)
    at_once = statistic_interval(9, lambda i: spearman(x[i], y[i]), 500, 1, rows=True)
    assert at_once == pytest.approx(one_at_a_time, abs=1e-12)
    z = -x  # exactly reversed: nothing is left once z is partialled out
    assert np.isnan(partial_spearman(x, y, z)) and np.isnan(partial_spearman(x[None], y[None], z[None])[0])
    assert partial_spearman(x, y, np.ones(9)) == pytest.approx(spearman(x, y))
