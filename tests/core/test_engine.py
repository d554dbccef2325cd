"""The perplexity engine: prefix cache equals plain full forwards, before and after edits."""
import numpy as np
import pytest

from anatomy_lib.core.engine import PerplexityEngine, plain_evaluation
from anatomy_lib.core.surgery import surgery


def test_cache_matches_plain_forward(tiny, tiny_blocks):
    engine = PerplexityEngine(tiny.model, tiny_blocks, batch_size=3, progress=False)
    plain = plain_evaluation(tiny.model, tiny_blocks, batch_size=2)
    np.testing.assert_allclose(engine.baseline.block_nll, plain.block_nll, rtol=1e-5)
    np.testing.assert_allclose(engine.evaluate().block_nll, plain.block_nll, rtol=1e-5)  # head only
    np.testing.assert_allclose(engine.evaluate(start=0).block_nll, plain.block_nll, rtol=1e-5)


@pytest.mark.parametrize("layers", [[0], [3], [1, 4]])
def test_edited_model_reruns_from_first_edit(tiny, tiny_blocks, layers):
    engine = PerplexityEngine(tiny.model, tiny_blocks, progress=False)
    with surgery(tiny.model) as op:
        for layer in layers:
            op.scale(layer, ["o", "down"], 0.2)
        assert engine._start_layer("auto") == min(layers)
        cached = engine.evaluate()
        plain = plain_evaluation(tiny.model, tiny_blocks)
        with pytest.raises(ValueError, match="must start at or before"):
            engine.evaluate(start=min(layers) + 1)
        with pytest.raises(RuntimeError, match="active edit"):
            engine.rebuild()
    np.testing.assert_allclose(cached.block_nll, plain.block_nll, rtol=1e-5)
    assert not np.allclose(cached.block_nll, engine.baseline.block_nll)
    np.testing.assert_allclose(engine.evaluate().block_nll, engine.baseline.block_nll, rtol=1e-6)


def test_early_exit_drops_trailing_layers(tiny, tiny_blocks):
    engine = PerplexityEngine(tiny.model, tiny_blocks, progress=False)
    n = engine.adapter.n_layers
    with surgery(tiny.model) as op:
        op.skip(n - 1)
        skipped = engine.evaluate()
    early = engine.evaluate(start=n - 1, stop=n - 1)
    np.testing.assert_allclose(early.block_nll, skipped.block_nll, rtol=1e-5)


def test_block_influence_is_bounded(tiny, tiny_blocks):
    engine = PerplexityEngine(tiny.model, tiny_blocks, progress=False)
    bi = engine.block_influence()
    assert bi.shape == (engine.adapter.n_layers,)
    assert np.all(bi >= -1e-6) and np.all(bi <= 2 + 1e-6)
