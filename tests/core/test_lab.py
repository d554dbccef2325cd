"""Lab.measure, the one measuring path: engine first, edit inside surgery, paired interval, optional text."""
import dataclasses

import numpy as np
import pytest
from conftest import state_hash, tiny_lab

from anatomy_lib.core.bootstrap import paired_change_interval
from anatomy_lib.core.engine import plain_evaluation
from anatomy_lib.core.lab import Baseline


def test_measure_builds_the_engine_from_the_intact_model_and_restores(tiny, tiny_blocks):
    lab = tiny_lab(tiny, tiny_blocks)
    before = state_hash(tiny.model)
    assert "engine" not in vars(lab)  # nothing primed: measure must build the cache before editing
    measured = lab.measure(lambda editor: editor.skip(3))
    assert state_hash(tiny.model) == before and tiny.adapter.active_edits == {}
    intact = plain_evaluation(tiny.model, tiny_blocks)
    np.testing.assert_allclose(lab.engine.baseline.block_nll, intact.block_nll, rtol=1e-5)
    expected = paired_change_interval(intact.block_nll, measured.block_nll, lab.profile.n_boot, 0)
    assert (measured.change_pct, measured.ci_low, measured.ci_high) == pytest.approx(expected, abs=1e-3)
    assert list(measured.row()) == ["ppl", "base_ppl", "change_pct", "ci_low", "ci_high"]
    assert measured.continuation is None


def test_measure_restores_when_the_edit_fails(tiny, tiny_blocks):
    lab = tiny_lab(tiny, tiny_blocks)
    before = state_hash(tiny.model)

    def broken(editor):
        editor.skip(1)
        raise RuntimeError("half-way")

    with pytest.raises(RuntimeError, match="half-way"):
        lab.measure(broken)
    assert state_hash(tiny.model) == before and tiny.adapter.active_edits == {}


def test_measure_generates_under_the_edit(real_specimen):
    from anatomy_lib.core.lab import open_lab

    lab = open_lab(real_specimen, "smoke", progress=False)
    lab = dataclasses.replace(lab, blocks=lab.blocks.subset(2))
    before = state_hash(real_specimen.model)
    intact = lab.measure(lambda editor: None, prompt="What is the capital of France?", max_new_tokens=8)
    broken = lab.measure(lambda editor: [editor.skip(l) for l in range(30)], prompt="What is the capital of France?",
                         max_new_tokens=8)
    assert "Paris" in intact.continuation and "Paris" not in broken.continuation
    assert intact.change_pct == 0.0 and broken.change_pct > 100
    assert "continuation" in broken.row()
    assert state_hash(real_specimen.model) == before


def test_a_lab_is_immutable_so_its_engine_never_goes_stale(tiny, tiny_blocks):
    lab = tiny_lab(tiny, tiny_blocks)
    engine = lab.engine
    with pytest.raises(dataclasses.FrozenInstanceError):
        lab.blocks = lab.blocks.subset(2)
    other = dataclasses.replace(lab, blocks=lab.blocks.subset(2))
    assert other.engine is not engine and other.engine.blocks.n_blocks == 2
    assert other.request(Baseline()) != lab.request(Baseline())


def test_paper_layers_follow_the_specimen_depth(tiny, tiny_blocks):
    from anatomy_lib.core.params import PaperLayers
    from anatomy_lib.manipulation import ManipulationParams
    from anatomy_lib.predictability import PredictabilityParams
    from anatomy_lib.recovery import RecoveryParams

    assert PaperLayers((0, 11, 29)).at_depth(30) == (0, 11, 29)
    assert PaperLayers((0, 11, 14, 29)).at_depth(5) == (0, 2, 4)
    lab = tiny_lab(tiny, tiny_blocks)  # 5 layers: no default may name a layer the model lacks
    for params in (RecoveryParams.for_profile("quick"), RecoveryParams.for_profile("paper"),
                   ManipulationParams(compress_layers=(1,)), PredictabilityParams()):
        resolved = params.resolved(lab)
        for value in resolved.layer_fields().values():
            flat = [v for part in value for v in (part if isinstance(part, tuple) else (part,))]
            assert all(0 <= layer < 5 for layer in flat), (type(params).__name__, value)
    with pytest.raises(ValueError, match=r"layers: layer 7 is out of range; valid layers are 0\.\.4"):
        RecoveryParams(layers=(7,)).resolved(lab)
