"""Bootstrap intervals over blocks."""
import numpy as np
import pytest

from anatomy_lib.core.bootstrap import paired_change_interval, perplexity_interval


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
