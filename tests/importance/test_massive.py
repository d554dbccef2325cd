"""The causal test of massive activations: the birth layer found by growth, and the two stream edits (restore
the massive entries after an ablation; remove only the layer's massive write) on every supported family."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import state_hash, tiny_lab

from anatomy_lib.core.surgery import surgery
from anatomy_lib.importance import massive as mv
from anatomy_lib.importance.activations import ActivationParams, activation_profile, appearance_layer

PLANTED_LAYER, PLANTED_FEATURE = 2, 7
PARAMS = mv.MassiveParams(ratio=20.0, floor=1e-3)  # a tiny random model's stream has a median near 0.1


def plant_massive_write(spec, layer=PLANTED_LAYER, feature=PLANTED_FEATURE, size=3000.0):
    """Make ``layer``'s MLP write a massive value into ``feature`` (its post-norm gain on Gemma, whose post-norm
    rescales the write; the row of the down projection elsewhere)."""
    adapter = spec.adapter
    with torch.no_grad():
        if adapter.has_post_norms:
            adapter.tensor(layer, "mlp_post_norm")[feature] = size - adapter.gain_offset("mlp_post_norm")
        else:
            adapter.tensor(layer, "down")[feature] *= size


class SyntheticStreams:
    """Streams entering each layer, written by hand: what ``onset_by_growth`` reads of an engine."""

    def __init__(self, streams):
        self.streams = streams
        self.adapter = SimpleNamespace(n_layers=len(streams) - 1)

    def stream(self, layer):
        return self.streams[layer]


def test_the_birth_is_the_largest_jump_not_the_first_crossing():
    generator = torch.Generator().manual_seed(0)
    streams = [torch.randn(6, 10, 8, generator=generator) for _ in range(6)]
    for layer in range(6):  # feature 3 at the first position: 20 entering L0, L1 and L2, born at L2
        streams[layer][:, 0, 3] = 20.0 if layer < 3 else 24000.0
    streams[1][2, 0, 3] = 910.0  # leaving L0, one block: just past 1000 x a median near 0.7
    engine = SyntheticStreams(streams)
    profile = activation_profile(engine, ActivationParams())
    assert appearance_layer(profile["layers"]) == 0  # the threshold detector takes the lone early entry
    tables = mv.onset_by_growth(engine, mv.MassiveParams(), n_boot=200)
    summary = tables["summary"].iloc[0]
    assert summary["feature"] == 3 and summary["birth_layer"] == 2 and summary["first_position_share"] == 1.0
    assert summary["birth_growth"] == pytest.approx(np.log10(24000 / 20), rel=1e-6)
    assert summary["birth_share"] == 1.0 and summary["blocks_electing"] == 6
    onset = tables["onset"]
    assert onset.loc[2, "ci_low"] <= onset.loc[2, "growth"] <= onset.loc[2, "ci_high"]
    assert onset.loc[2, "entering"] == pytest.approx(20.0) and onset.loc[2, "leaving"] == pytest.approx(24000.0)


def test_restoring_the_massive_entries_undoes_the_ablation_and_removing_them_reproduces_it(tiny, tiny_blocks):
    plant_massive_write(tiny)
    lab = tiny_lab(tiny, tiny_blocks)
    engine, before = lab.engine, state_hash(tiny.model)
    tables = mv.onset_by_growth(engine, PARAMS, n_boot=200)
    assert tables["summary"].iloc[0]["birth_layer"] == PLANTED_LAYER
    assert tables["summary"].iloc[0]["feature"] == PLANTED_FEATURE
    sites = mv.massive_sites(engine, PLANTED_LAYER, PARAMS)
    assert sites.features == (PLANTED_FEATURE,) and sites.entries > 0
    base = engine.baseline.block_nll
    removed = lab.measure(mv.remove_massive_write(engine, sites)).block_nll
    for operator in mv.CAUSAL_OPERATORS:
        ablate = mv.ablation([PLANTED_LAYER], operator, engine=engine)
        ablated = lab.measure(ablate).block_nll
        restored = lab.measure(mv.combined(ablate, mv.restore_massive(engine, sites))).block_nll
        damage = np.abs(ablated - base).mean()
        assert damage > 1e-3, f"{tiny.adapter.family} {operator}: the planted write does not matter"
        assert np.abs(restored - base).mean() < 0.25 * damage, f"{tiny.adapter.family} {operator}: not undone"
        assert np.abs(removed - base).mean() > 0.5 * damage, f"{tiny.adapter.family} {operator}: not reproduced"
    assert state_hash(tiny.model) == before  # the stream edits leave with the surgery


def test_the_restore_hands_on_the_intact_values_at_the_sites_only(tiny_blocks):
    from anatomy_lib.core.specimens import tiny_specimen

    spec = tiny_specimen("llama", n_layers=5, seed=1)
    plant_massive_write(spec)
    lab = tiny_lab(spec, tiny_blocks)
    engine = lab.engine
    sites = mv.massive_sites(engine, PLANTED_LAYER, PARAMS)
    seen = {}
    with surgery(spec.adapter) as editor:
        mv.ablation([PLANTED_LAYER], "skip", engine=engine)(editor)
        mv.restore_massive(engine, sites)(editor)
        watch = spec.adapter.layers[PLANTED_LAYER + 1].register_forward_pre_hook(
            lambda module, args: seen.setdefault("stream", args[0].detach().clone()))
        engine.evaluate()
        watch.remove()
    intact, entering = engine.stream(PLANTED_LAYER + 1), engine.stream(PLANTED_LAYER)
    rows = slice(0, len(seen["stream"]))  # the first batch of blocks
    got, mask = seen["stream"][..., PLANTED_FEATURE], sites.mask[rows, :, 0]
    assert torch.equal(got[mask], intact[rows][..., PLANTED_FEATURE][mask])
    # elsewhere the skipped layer hands on what entered it
    assert torch.allclose(got[~mask], entering[rows][..., PLANTED_FEATURE][~mask])


def test_the_edits_refuse_a_stream_that_is_not_the_intact_models(tiny_blocks):
    from anatomy_lib.core.specimens import tiny_specimen

    spec = tiny_specimen("llama", n_layers=5, seed=1)
    plant_massive_write(spec)
    lab = tiny_lab(spec, tiny_blocks)
    sites = mv.massive_sites(lab.engine, PLANTED_LAYER, PARAMS)
    before = state_hash(spec.model)
    earlier = mv.ablation([0], "skip", engine=lab.engine)
    with pytest.raises(RuntimeError, match="not the intact model's"):
        lab.measure(mv.combined(earlier, mv.restore_massive(lab.engine, sites)))
    assert state_hash(spec.model) == before


def test_the_control_is_the_quiet_layer_of_nearest_importance():
    onset = pd.DataFrame({"layer": range(5), "growth": [0.1, 2.5, 0.1, 0.9, -0.2]})
    importance = pd.DataFrame({"layer": range(5), "change_pct": [500.0, 80.0, 3.0, 70.0, 60.0]})
    assert mv.control_layer(onset, importance, birth=1, max_growth=0.3) == 4  # L3 writes too much, L0 is far
    assert mv.control_layer(onset.assign(growth=5.0), importance, birth=1, max_growth=0.3) is None


def test_bad_parameters_name_the_choices():
    with pytest.raises(ValueError, match="neighbor_mean"):
        mv.MassiveParams(operators=("nope",))
    with pytest.raises(ValueError, match="at least one operator"):
        mv.MassiveParams(operators=())


def _causal_rows(undone, reproduced):
    """A causal table for one layer and operator with the given (share, low, high) of each intervention."""
    rows = [{"role": "birth", "layer": 3, "operator": "skip", "intervention": "ablate", "change_pct": 900.0,
             "ci_low": 800.0, "ci_high": 1000.0, "share": np.nan, "share_low": np.nan, "share_high": np.nan}]
    for name, (share, low, high) in (("ablate + restore", undone), ("remove write", reproduced)):
        rows.append({**rows[0], "intervention": name, "share": share, "share_low": low, "share_high": high})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("undone, reproduced, verdict", [
    ((0.9, 0.85, 0.95), (0.7, 0.6, 0.8), "explains"),
    ((0.1, 0.0, 0.2), (0.05, -0.1, 0.2), "does not explain"),
    ((0.9, 0.85, 0.95), (0.1, 0.0, 0.2), "partly explains"),
    ((0.5, 0.2, 0.8), (0.7, 0.6, 0.8), "inconclusive"),
])
def test_the_verdict_follows_the_intervals(undone, reproduced, verdict):
    assert mv.causal_verdict(_causal_rows(undone, reproduced), "birth", "skip") == verdict
    assert mv.causal_verdict(_causal_rows(undone, reproduced), "control", "skip") == "not run"


def test_the_findings_say_the_shares_and_the_verdict():
    from anatomy_lib.importance.report import massive_findings

    causal = _causal_rows((0.88, 0.86, 0.9), (4.7, 4.2, 5.2))
    summary = pd.DataFrame([{"sites_entries": 29, "sites_features": "247 507", "sites_first_position_share": 1.0}])
    said = " ".join(massive_findings({"tiny": {"summary": summary, "causal": causal}}))
    assert "the birth layer L3: skip +900% [+800, +1,000]" in said and "undoes 88% [86%, 90%]" in said
    assert "reproduces 470% [420%, 520%]" in said and "(explains)" in said
    assert "more than the ablation's whole damage" in said
    assert "no layer qualifies as a control" in said and "29 entries (features 247 507" in said
