"""The one FLOP convention: the analytic counts agree with FlopCounterMode (on eager attention, which it sees),
and a fraction of the matmul peak above one is refused."""
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from anatomy_lib.core import flops
from anatomy_lib.core.flops import PeakProbe, adapter_forward_flops, forward_flops, shape_of, step_flops
from anatomy_lib.core.specimens import tiny_specimen
from anatomy_lib.recovery import cached_step_loss, streams_entering


def test_a_cached_recovery_step_counts_as_the_convention_says():
    spec = tiny_specimen("llama", n_layers=4, seed=0)
    spec.model.config._attn_implementation = "eager"
    adapter = spec.adapter
    ids = torch.randint(0, 256, (2, 32))
    layer = 1
    stream = streams_entering(adapter, ids, [layer])[layer]
    trainable = list(adapter.layers[layer].parameters())
    for p in spec.model.parameters():
        p.requires_grad_(False)
    for p in trainable:
        p.requires_grad_(True)
    with FlopCounterMode(display=False) as counter:
        cached_step_loss(adapter, stream, ids, layer).backward()
    shape = shape_of(adapter, 32)
    expected = step_flops(shape, [True] + [False] * (adapter.n_layers - layer - 1), False, 2)
    assert counter.get_total_flops() == pytest.approx(expected, rel=0.03)
    with FlopCounterMode(display=False) as counter:
        with torch.no_grad():
            adapter.logits(adapter.run_layers(adapter.embed(ids), 0))
    assert counter.get_total_flops() == pytest.approx(forward_flops(shape, adapter.n_layers, 2), rel=0.03)
    # the count from the adapter's own tensors (any family) is the same convention, to the FLOP
    assert adapter_forward_flops(adapter, 32) * 2 * 32 == forward_flops(shape, adapter.n_layers, 2)


def test_a_fraction_of_the_peak_above_one_is_refused(monkeypatch):
    probes = iter([50.0, 80.0])
    monkeypatch.setattr(flops, "matmul_peak_gflops", lambda **_: next(probes))
    peak = PeakProbe()
    assert peak.fraction(40.0) == pytest.approx(0.5)  # the larger of the probes before and after
    with pytest.raises(RuntimeError, match="the peak probe is wrong"):
        peak.fraction(120.0)


def test_the_peak_probe_measures_something():
    assert flops.matmul_peak_gflops(sizes=(256,), repeats=2) > 0
