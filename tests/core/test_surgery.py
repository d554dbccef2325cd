"""Weight surgery restores the model bit for bit, whatever happens inside the block."""
import math

import pytest
import torch
from conftest import state_hash

from anatomy_lib.core.surgery import surgery


def adapter_edits(spec) -> dict:
    return spec.adapter.active_edits


def _all_edits(op, adapter):
    op.scale(1, None, 0.5)
    op.add_noise(2, ["q", "up"], 0.3, generator=torch.Generator().manual_seed(0))
    op.replace(3, "v", torch.zeros_like(adapter.tensor(3, "v")))
    op.replace(0, "k", op.original(0, "k").flip(0))
    op.skip(4, "block")
    op.skip(0, "attn")
    op.scale(1, ["o"], 3.0)  # the same tensor edited twice


def test_restore_is_exact(tiny):
    before = state_hash(tiny.model)
    with surgery(tiny.model) as op:
        _all_edits(op, tiny.adapter)
        assert state_hash(tiny.model) != before
        assert sorted(adapter_edits(tiny)) == [0, 1, 2, 3, 4]
    assert state_hash(tiny.model) == before
    assert tiny.adapter.active_edits == {}


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt()])
def test_restore_on_exception_and_interrupt(tiny, error):
    before = state_hash(tiny.model)
    with pytest.raises(type(error)):
        with surgery(tiny.model) as op:
            _all_edits(op, tiny.adapter)
            raise error
    assert state_hash(tiny.model) == before
    assert tiny.adapter.active_edits == {}


def test_skip_makes_the_layer_the_identity(tiny):
    adapter = tiny.adapter
    hidden = torch.randn(1, 12, adapter.hidden_size)
    with surgery(tiny.model) as op, torch.inference_mode():
        op.skip(2)
        out = adapter.run_layers(hidden, 2, 3)
    torch.testing.assert_close(out, hidden)


def test_nested_surgeries_unwind(tiny):
    before = state_hash(tiny.model)
    with surgery(tiny.model) as outer:
        outer.scale(1, None, 0.5)
        mid = state_hash(tiny.model)
        with surgery(tiny.model) as inner:
            inner.scale(1, None, 0.1)
            assert tiny.adapter.active_edits == {1: 2}
        assert state_hash(tiny.model) == mid
    assert state_hash(tiny.model) == before


@pytest.mark.parametrize("factor", [math.nan, math.inf, -math.inf, "0.5", None])
def test_bad_factor(tiny, factor):
    with surgery(tiny.model) as op, pytest.raises(ValueError, match="finite number"):
        op.scale(0, None, factor)


def test_bad_requests(tiny):
    adapter = tiny.adapter
    before = state_hash(tiny.model)
    with surgery(tiny.model) as op:
        with pytest.raises(ValueError, match=r"valid layers are 0\.\.4"):
            op.scale(5, None, 0.5)
        with pytest.raises(ValueError, match="valid names"):
            op.scale(0, ["qkv"], 0.5)
        with pytest.raises(ValueError, match="shape mismatch"):
            op.replace(0, "q", torch.zeros(3, 3))
        with pytest.raises(ValueError, match="NaN or inf"):
            op.replace(0, "q", torch.full_like(adapter.tensor(0, "q"), float("nan")))
        with pytest.raises(ValueError, match="choose one of"):
            op.skip(0, "everything")
        with pytest.raises(ValueError, match=">= 0"):
            op.add_noise(0, None, -1.0)
    assert state_hash(tiny.model) == before
