"""The importance diagnostic, checked against an independent from-scratch computation."""
import copy

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import state_hash, tiny_lab

from anatomy_lib.core.engine import plain_evaluation
from anatomy_lib.core.surgery import surgery
from anatomy_lib.importance import (
    MODES,
    PAPER,
    ImportanceParams,
    Thresholds,
    ablate,
    classify,
    connective_layers,
    importance_range_orders,
    importance_sweep,
    joint_ablation,
    neighbors,
    paper_claims,
    rank_agreement,
    undetermined_reasons,
)


def _from_scratch(spec, blocks, layer, mode):
    """Deep-copy the model, overwrite the weights by hand, run plain full forwards."""
    model = copy.deepcopy(spec.model)
    adapter = type(spec.adapter)(model)
    with torch.no_grad():
        if mode == "neighbor_mean":
            srcs = [n for n in (layer - 1, layer + 1) if 0 <= n < adapter.n_layers]
            for name in adapter.tensor_names:
                mean = sum(spec.adapter.tensor(n, name).double() for n in srcs) / len(srcs)
                adapter.tensor(layer, name).copy_(mean)
        else:
            names = {"skip": ["o", "o_bias", "down", "down_bias"], "attn_only": ["o", "o_bias"],
                     "mlp_only": ["down", "down_bias"]}[mode]
            for name in names:
                if name in adapter.tensor_names:
                    adapter.tensor(layer, name).zero_()
    base = plain_evaluation(spec.model, blocks).block_nll
    new = plain_evaluation(model, blocks).block_nll
    return float(np.expm1(new.mean() - base.mean()) * 100)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layer", [0, 2, 4])
def test_change_equals_from_scratch_computation(tiny, tiny_blocks, mode, layer):
    lab = tiny_lab(tiny, tiny_blocks)
    before = state_hash(tiny.model)
    table = importance_sweep(lab, ImportanceParams(mode=mode), layers=[layer], progress=False)
    assert state_hash(tiny.model) == before
    expected = _from_scratch(tiny, tiny_blocks, layer, mode)
    assert table["change_pct"].iloc[0] == pytest.approx(expected, rel=1e-4, abs=1e-4)
    row = table.iloc[0]
    assert row.ci_low <= row.change_pct <= row.ci_high


def test_neighbors_at_the_edges():
    assert neighbors(30, 0) == [1] and neighbors(30, 29) == [28] and neighbors(30, 11) == [10, 12]


def test_full_sweep_shape_and_block_influence(tiny, tiny_blocks):
    lab = tiny_lab(tiny, tiny_blocks)
    table = importance_sweep(lab, ImportanceParams(mode="skip"), progress=False)
    assert table["layer"].tolist() == list(range(tiny.adapter.n_layers))
    np.testing.assert_allclose(table["block_influence"], lab.engine.block_influence())
    assert -1 <= rank_agreement(table) <= 1


def test_joint_ablation_of_one_layer_is_the_sweep_row(tiny, tiny_blocks):
    lab = tiny_lab(tiny, tiny_blocks)
    row = importance_sweep(lab, ImportanceParams(mode="skip"), layers=[2], progress=False).iloc[0]
    joint = joint_ablation(lab, [2], "skip")
    assert joint["change_pct"] == pytest.approx(row.change_pct) and joint["continuation"] is None
    with pytest.raises(ValueError, match="at least one layer"):
        joint_ablation(lab, [], "skip")


def test_connective_layers_reads_the_class_column():
    table = pd.DataFrame({"layer": [0, 1, 2, 3], "class": ["critical core", "connective tissue", "anti-layer",
                                                           "connective tissue"]})
    assert connective_layers(table) == [1, 3]


def test_params_check_their_choices():
    with pytest.raises(ValueError, match="choose one of"):
        ImportanceParams(mode="delete")
    with pytest.raises(ValueError, match="choose one of"):
        ImportanceParams(tensors="norms")


def test_bad_mode_and_tensor_set(tiny):
    with surgery(tiny.model) as op:
        with pytest.raises(ValueError, match="choose one of"):
            ablate(op, 1, "delete")
        with pytest.raises(ValueError, match="choose one of"):
            ablate(op, 1, "neighbor_mean", tensors="norms")
        with pytest.raises(ValueError, match="valid layers"):
            ablate(op, 9, "skip")


def _table(changes, half_width=1.0):
    n = len(changes)
    return pd.DataFrame({"layer": range(n), "mode": "neighbor_mean", "change_pct": changes,
                         "ci_low": np.asarray(changes) - half_width, "ci_high": np.asarray(changes) + half_width,
                         "block_influence": np.linspace(0.1, 0.5, n)})


def test_anti_layer_needs_its_whole_interval_below_zero():
    table = _table([5.0, -0.5, -3.0, 2000.0, 50.0, 10.0], half_width=1.0)
    classes = classify(table, 6).tolist()
    assert classes[1] == "connective tissue"  # -0.5 with an interval crossing zero is not an anti-layer
    assert classes[2] == "anti-layer"
    assert classes[3] == "critical core"
    assert classes[4] == "input processor" or classes[4] == "output processor" or "important" in classes[4]


def test_every_class_is_decided_by_the_interval():
    """A layer whose interval straddles the threshold that decides its class is undetermined, whichever side its
    point estimate lies on (the paper's L11: a point above +1,000%, an interval reaching below it)."""
    table = pd.DataFrame({"layer": [0, 12, 13, 14, 15, 16], "change_pct": [40.0, 1500.0, 900.0, 25.0, 1500.0, 40.0],
                          "ci_low": [20.0, 800.0, 500.0, 10.0, 1100.0, 35.0],
                          "ci_high": [60.0, 2500.0, 1200.0, 45.0, 2000.0, 50.0]})
    table["class"] = classify(table, 30)
    assert table["class"].tolist() == ["undetermined", "undetermined", "undetermined", "undetermined",
                                       "critical core", "important (middle)"]
    assert undetermined_reasons(table) == {0: "+30%", 12: "+1000%", 13: "+1000%", 14: "+30%"}


def test_threshold_sensitivity_reclassifies_from_the_same_intervals():
    """The critical core at +1000% misses two middle layers at +300% [+250, +350] that a cut at +200% admits: the
    grid shows the verdict moving, and the book's value gives the chapter's own verdicts."""
    from anatomy_lib.core import rules
    from anatomy_lib.importance import threshold_sensitivity

    changes = np.full(30, 5.0)
    changes[[8, 9, 10, 11]] = [300.0, 300.0, 5000.0, 5000.0]
    table = _table(changes, half_width=50.0)
    table["class"] = classify(table, 30)
    tables = {"neighbor_mean": table}
    grid = threshold_sensitivity(tables, grid={"critical_pct": (200.0, 1000.0)})
    core = grid[grid["claim"] == "critical core"].set_index("value")["verdict"]
    assert core[200.0] == "reproduced" and core[1000.0] == "partly reproduced"
    book = grid[grid["default"]].set_index("claim")["verdict"]
    assert book.to_dict() == {c.claim: c.verdict for c in paper_claims(tables)}
    wide = rules.sensitivity_table(grid, "critical_pct", lambda x: f"+{x:g}%")
    assert wide.columns.tolist() == ["claim", "+200%", "+1000% (book)", "same across the grid"]
    assert wide.set_index("claim").loc["critical core", "same across the grid"] == "no"
    assert table["class"].tolist() == classify(table, 30).tolist()  # the caller's table is left as it was


def test_paper_claims_reproduce_on_a_paper_shaped_table():
    changes = np.full(30, 5.0)
    changes[[8, 9, 10]] = 5000.0
    changes[11] = PAPER["l11_change_pct"]
    changes[[14, 17]] = -5.0
    changes[[1, 2, 23, 24, 25, 26, 27, 28]] = 200.0
    changes[3] = 0.006  # so that importance spans 10^7.02
    table = _table(changes, half_width=0.5)
    table["class"] = classify(table, 30, Thresholds(io_fraction=0.25))
    claims = paper_claims({"neighbor_mean": table}, thresholds=Thresholds(io_fraction=0.25))
    verdicts = {c.claim: c.verdict for c in claims}
    assert set(verdicts.values()) == {"reproduced"}, verdicts
    assert importance_range_orders(table) > 7
    shifted = {c.claim: c.verdict for c in paper_claims({"neighbor_mean": table}, paper_one_based=True)}
    assert shifted["critical core"] != "reproduced"


def test_paper_claims_name_the_paper_layers_at_the_specimen_depth():
    """On an 18-layer model the paper's L11 is the layer at its relative depth (L6), the critical core L8-11
    is L5-6 and the anti-layers L14, L17 are L8, L10: the claims test those layers, not layers 8-11 of 18."""
    changes = np.full(18, 5.0)
    changes[[5, 6]] = 5000.0
    changes[6] = PAPER["l11_change_pct"]
    changes[[8, 10]] = -5.0
    table = _table(changes, half_width=0.5)
    table["class"] = classify(table, 18)
    claims = {c.claim: c for c in paper_claims({"neighbor_mean": table})}
    l11 = claims["L6 (the paper's L11 depth) alone"]
    assert l11.verdict == "reproduced" and l11.ours.startswith("+63,419%")
    assert claims["critical core"].paper == "L5, L6"
    assert claims["anti-layers (interval below zero)"].paper == "L8, L10"
    assert claims["anti-layers (interval below zero)"].verdict == "reproduced"


def test_mode_summary_names_each_modes_top_layer_and_classes():
    import pandas as pd

    from anatomy_lib.importance import mode_summary

    a = pd.DataFrame({"layer": [0, 1, 2], "change_pct": [5.0, 900.0, 20.0],
                      "class": ["connective tissue", "critical core", "connective tissue"]})
    b = pd.DataFrame({"layer": [0, 1, 2], "change_pct": [50.0, 10.0, -3.0],
                      "class": ["input processor", "connective tissue", "anti-layer"]})
    summary = mode_summary({"neighbor_mean": a, "skip": b}, "neighbor_mean").set_index("mode")
    assert summary.loc["neighbor_mean", "most important layer"] == 1
    assert summary.loc["skip", "its change"] == "+50%" and summary.loc["skip", "anti-layers"] == "2"
    assert summary.loc["neighbor_mean", "anti-layers"] == "none"
    assert summary.loc["neighbor_mean", "connective tissue"] == 2
    assert summary.loc["neighbor_mean", "Spearman vs neighbor_mean"] == 1.0


def test_importance_by_attention_type_ranks_the_rare_type_with_an_exact_p_value():
    from anatomy_lib.importance.analysis import layer_type_summary

    table = pd.DataFrame({"layer": range(8), "change_pct": [5.0, 900.0, 4.0, 3.0, 800.0, 2.0, 1.0, 700.0]})
    types = ["sliding_attention"] * 8
    for layer in (1, 4, 7):
        types[layer] = "full_attention"
    summary = layer_type_summary(table, types).set_index("type")
    assert summary.loc["global", "layers"] == [1, 4, 7] and summary.loc["global", "ranks"] == [1, 2, 3]
    assert summary.loc["global", "first"] == 1 and summary.loc["global", "first_rank"] == 1
    assert summary.loc["global", "p_value"] == pytest.approx(1 / 56)  # the one best set of 3 among C(8, 3)
    assert layer_type_summary(table, ["full_attention"] * 8).empty  # one type: nothing to compare
