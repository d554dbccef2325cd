"""Manipulation strategies: exact restore, neutral settings, clear errors, coherence metrics."""
import dataclasses

import numpy as np
import pytest
import torch
from conftest import state_hash
from conftest import tiny_lab as _lab

from anatomy_lib.core.generation import distinct_n, repetition_rate
from anatomy_lib.core.surgery import surgery
from anatomy_lib.manipulation import (
    COMPARED_STRATEGIES,
    STRATEGIES,
    Manipulation,
    ManipulationParams,
    apply,
    low_rank,
    measure,
    neighbour_of,
)


@pytest.mark.parametrize("m", [Manipulation(s) for s in STRATEGIES] + [Manipulation("scale", scope="all"),
                                                                       Manipulation("clone", neighbor="next")])
def test_every_strategy_restores_exactly(tiny, tiny_blocks, m):
    lab = _lab(tiny, tiny_blocks)
    before = state_hash(tiny.model)
    row = measure(lab, [0, 2, 4], m)
    assert state_hash(tiny.model) == before
    assert row["ci_low"] <= row["change_pct"] <= row["ci_high"]


@pytest.mark.parametrize("m", [Manipulation("scale", alpha=1.0), Manipulation("scale", alpha=1.0, scope="all"),
                               Manipulation("mix", t=1.0)])
def test_neutral_settings_leave_perplexity_unchanged(tiny, tiny_blocks, m):
    row = measure(_lab(tiny, tiny_blocks), [1, 3], m)
    assert row["change_pct"] == pytest.approx(0.0, abs=1e-4)


def test_zero_writers_scale_is_skip(tiny, tiny_blocks):
    lab = _lab(tiny, tiny_blocks)
    scaled = measure(lab, [2], Manipulation("scale", alpha=0.0))
    skipped = lab.measure(lambda editor: editor.skip(2))
    assert scaled["ppl"] == pytest.approx(skipped.ppl, rel=1e-6)


def test_mix_and_clone_values(tiny):
    adapter = tiny.adapter
    with surgery(tiny.model) as op:
        apply(op, 2, Manipulation("mix", t=0.25, neighbor="next"))
        expected = 0.25 * op.original(2, "q") + 0.75 * op.original(3, "q")
        torch.testing.assert_close(adapter.tensor(2, "q"), expected)
        apply(op, 0, Manipulation("clone", neighbor="prev"))  # no layer -1: the only neighbour, layer 1
        torch.testing.assert_close(adapter.tensor(0, "up"), op.original(1, "up"))
    assert neighbour_of(30, 29, "next") == 28 and neighbour_of(30, 0, "prev") == 1


def test_low_rank_is_the_truncated_svd():
    matrix = torch.randn(20, 12, dtype=torch.float64)
    approx = low_rank(matrix, 3)
    assert torch.linalg.matrix_rank(approx) == 3
    s = torch.linalg.svdvals(matrix)
    assert torch.linalg.norm(matrix - approx) ** 2 == pytest.approx(float((s[3:] ** 2).sum()))
    torch.testing.assert_close(low_rank(matrix, 12), matrix)
    with pytest.raises(ValueError, match="choose 1..12"):
        low_rank(matrix, 13)


def test_bad_requests_name_the_choices():
    with pytest.raises(ValueError, match="choose one of"):
        Manipulation("prune")
    with pytest.raises(ValueError, match="finite"):
        Manipulation("scale", alpha=float("nan"))
    with pytest.raises(ValueError, match="positive integer"):
        Manipulation("lowrank_mix", rank=0)
    with pytest.raises(ValueError, match="choose one of"):
        Manipulation("clone", neighbor="left")
    with pytest.raises(ValueError, match="choose one of"):
        Manipulation("scale", scope="norms")
    with pytest.raises(ValueError, match="at least one layer"):
        Manipulation("zero").edit([])
    with pytest.raises(ValueError, match="finite"):
        ManipulationParams(alphas=(0.5, float("inf")))
    with pytest.raises(ValueError, match="positive integer"):
        ManipulationParams(ranks=(0,))


def test_text_metrics():
    assert distinct_n("a b c d", 2) == 1.0
    assert distinct_n("the the the the", 2) == pytest.approx(1 / 3)
    assert repetition_rate("a b c a b c a b c") == pytest.approx(4 / 7)
    assert repetition_rate("one two three four") == 0.0 and distinct_n("", 2) == 0.0


def test_coherence_on_the_real_specimen(real_specimen):
    from anatomy_lib.core.generation import FACTS, coherence
    from anatomy_lib.core.lab import open_lab

    lab = open_lab(real_specimen, "smoke", progress=False)
    before = state_hash(real_specimen.model)
    metrics, table = coherence(lab, facts=FACTS[:3], max_new_tokens=8)
    assert metrics["facts_correct"] >= 2 and np.isfinite(metrics["generated_ppl"])
    broken, _ = coherence(lab, Manipulation("zero").edit(range(0, 30)), facts=FACTS[:3], max_new_tokens=8)
    assert broken["facts_correct"] == 0
    assert state_hash(real_specimen.model) == before
    assert len(table) == 3 + 3


def test_manipulation_explorer_recomputes_on_press(real_specimen):
    from anatomy_lib.core.lab import open_lab
    from anatomy_lib.manipulation import manipulation_explorer

    lab = open_lab(real_specimen, "smoke", progress=False)
    lab = dataclasses.replace(lab, blocks=lab.blocks.subset(2))
    box = manipulation_explorer(lab, (14,), "scale", 0.9)
    pick, knobs = box.children[0].children
    output = box.children[1]
    first = str(output.outputs)
    assert "alpha=0.9" in first
    knobs.children[1].value = 0.5  # the alpha slider
    knobs.children[-1].click()  # the apply button
    assert "alpha=0.5" in str(output.outputs) and str(output.outputs) != first
    pick.value = ()
    knobs.children[-1].click()
    assert "choose at least one layer" in str(output.outputs)


def test_empty_continuations_count_as_incoherent_never_nan():
    from anatomy_lib.core.generation import FACTS, coherence_metrics

    facts = FACTS[:4]
    metrics, correct = coherence_metrics(["", ""], ["", "", "", ""], facts, [float("nan")] * 2, n_boot=50)
    assert correct == [False] * 4 and metrics["empty_share"] == 1.0 and metrics["repetition_rate"] == 1.0
    assert metrics["generated_ppl"] == float("inf") and metrics["fact_rate_high"] == 0.0
    assert not any(np.isnan(v) for v in metrics.values() if isinstance(v, float))
    mixed, _ = coherence_metrics(["Paris is the capital.", ""], ["Paris.", "", "", ""], facts, [1.0, float("nan")],
                                 n_boot=50)
    assert mixed["empty_share"] == pytest.approx(4 / 6) and mixed["generated_ppl"] == pytest.approx(np.e)
    assert mixed["fact_rate"] == 0.25 and mixed["fact_rate_low"] <= 0.25 <= mixed["fact_rate_high"]


def test_answers_match_whole_words_only():
    from anatomy_lib.core.generation import answers_correctly

    assert answers_correctly("It is 7 days.", ("seven", "7")) and answers_correctly("Seven.", ("seven", "7"))
    assert not answers_correctly("It boils at 100 degrees", ("0", "zero"))
    assert answers_correctly("Water freezes at 0 °C", ("0", "zero"))
    assert not answers_correctly("a banana", ("z",)) and answers_correctly("The letter Z.", ("z",))


def test_the_fact_set_is_large_enough_and_well_formed():
    from anatomy_lib.core.facts import FACTS

    assert len(FACTS) >= 50 and len({q for q, _ in FACTS}) == len(FACTS)
    assert all(q.endswith("?") and answers and all(a == a.lower() for a in answers) for q, answers in FACTS)


def test_a_specimen_without_connective_tissue_has_nothing_to_compress():
    """Gemma-3-270M has no connective tissue at quick: the compression claims are kept, each 'not comparable'."""
    import pandas as pd

    from anatomy_lib.core.rules import NOT_COMPARABLE
    from anatomy_lib.manipulation import findings, paper_claims

    intact = pd.DataFrame([{"strategy": "intact", "label": "intact", "alpha": 1.0, "change_pct": 0.0, "ci_low": 0.0,
                            "ci_high": 0.0, "facts_correct": 3, "facts_total": 8, "fact_rate": 0.375,
                            "fact_rate_low": 0.125, "fact_rate_high": 0.75}])
    claims = paper_claims({"compression": intact, "heatmap": pd.DataFrame()})
    assert len(claims) == 7 and {c.verdict for c in claims} == {NOT_COMPARABLE}
    # named as a specimen with connective tissue names them, so the two join in chapter 9 and across cuts
    done = pd.concat([intact] + [intact.assign(strategy=m.strategy, label=m.label(), fact_change=-0.3,
                                               fact_change_low=-0.4, fact_change_high=-0.2, change_pct=1e6,
                                               ci_low=1e5, ci_high=1e7)
                                 for m in COMPARED_STRATEGIES if m.strategy != "scale"], ignore_index=True)
    assert {c.claim for c in paper_claims({"compression": done})} <= {c.claim for c in claims}
    assert any("nothing to compress" in s for s in findings({"compression": intact, "heatmap": pd.DataFrame()}))


def test_the_unstated_cuts_move_the_verdicts_they_should_and_only_those():
    """A mix that loses 20 of the intact 60 points of facts destroys coherence at a claimed loss of a quarter or a
    half of the intact rate, only partly at three quarters (under half the claimed size); zero at +2e6% counts as
    millions from +1e5% and +1e6%, not from +1e7%."""
    import pandas as pd

    from anatomy_lib.core import rules
    from anatomy_lib.manipulation import Thresholds, paper_claims, threshold_sensitivity

    def row(strategy, label, alpha, change, low, high, fact, fact_low, fact_high, repetition=0.1):
        return {"strategy": strategy, "label": label, "alpha": alpha, "change_pct": change, "ci_low": low,
                "ci_high": high, "facts_correct": round(fact * 20), "facts_total": 20, "fact_rate": fact,
                "fact_rate_low": fact - 0.1, "fact_rate_high": fact + 0.1, "fact_change": fact - 0.6,
                "fact_change_low": fact_low, "fact_change_high": fact_high, "empty_share": 0.0,
                "repetition_rate": repetition}

    comp = pd.DataFrame([row("intact", "intact", 1.0, 0.0, 0.0, 0.0, 0.6, 0.0, 0.0),
                         row("scale", "scale (writers)", 0.9, 40.0, 30.0, 50.0, 0.55, -0.15, 0.05, repetition=0.35),
                         row("mix", "mix", 1.0, 5e4, 4e4, 6e4, 0.4, -0.35, -0.05),
                         row("zero", "zero", 1.0, 2e6, 1.5e6, 2.5e6, 0.0, -0.75, -0.45)])
    tables = {"compression": comp, "heatmap": pd.DataFrame()}
    table = threshold_sensitivity(tables)
    mix = table[(table["claim"] == "mix on the connective layers destroys coherence")
                & (table["parameter"] == "loss_share")].set_index("value")["verdict"]
    assert mix[0.25] == mix[0.5] == rules.REPRODUCED and mix[0.75] == rules.PARTLY
    huge = table[(table["claim"] == "the other strategies cost millions of percent")
                 & (table["parameter"] == "huge_pct")].set_index("value")["verdict"]
    assert huge[1e5] == huge[1e6] and huge[1e7] != huge[1e6]
    # repetition up by 0.25: coherent only when the cut allows a rise of 0.3
    keeps = table[(table["claim"] == "scale alpha=0.9 keeps generation coherent")
                  & (table["parameter"] == "repetition_rise")].set_index("value")["verdict"]
    assert keeps[0.3] != keeps[0.2] == keeps[0.1]
    # each claim's rule states the cut it was judged with
    claims = paper_claims(tables, None, Thresholds(loss_share=0.75))
    assert any("a claimed loss of 75% of the intact rate" in c.note for c in claims)
    assert table["default"].sum() == len(paper_claims(tables)) * 3


def test_each_connective_cut_compresses_its_own_layers_through_the_store(tiny, tiny_blocks, monkeypatch):
    """Chapter 5 at every cut of chapter 2's connective threshold: a cut that picks the chapter's layers reads the
    chapter's table, one that picks none the intact row alone, any other runs the compression experiment on its
    own layers once (stored: a read-only lab then reads it back) and is judged as ``connective_pct``. Generation
    needs a tokenizer the tiny model lacks, so ``compression`` is replaced by one that records its layers."""
    import importlib

    import pandas as pd

    from anatomy_lib.importance import ImportanceParams, importance
    from anatomy_lib.manipulation import compression_at_cuts, connective_cuts, threshold_sensitivity

    lab = _lab(tiny, tiny_blocks)
    every = connective_cuts(lab, (1e12,))[1e12]  # every layer not wholly below zero
    assert every == tuple(int(l) for l in importance(lab, ImportanceParams()).query("ci_high >= 0")["layer"])
    assert connective_cuts(lab, (-1e12,)) == {-1e12: ()}
    asked = []

    def compression(lab, layers, alphas, seed=0, progress=True):
        asked.append(tuple(layers))
        row = {"strategy": "intact", "label": "intact", "alpha": 1.0, "change_pct": 0.0, "ci_low": 0.0,
               "ci_high": 0.0, "facts_correct": 10, "facts_total": 20, "fact_rate": 0.5, "fact_rate_low": 0.3,
               "fact_rate_high": 0.7, "fact_change": 0.0, "fact_change_low": 0.0, "fact_change_high": 0.0,
               "empty_share": 0.0, "repetition_rate": 0.1}
        return pd.DataFrame([row, {**row, "strategy": "zero", "label": "zero", "change_pct": 1e7,
                                   "ci_low": 9e6, "ci_high": 1.1e7}]), pd.DataFrame({"label": ["intact"]})

    monkeypatch.setattr(importlib.import_module("anatomy_lib.manipulation.compute"), "compression", compression)
    own = pd.DataFrame([{"strategy": "intact", "label": "intact", "alpha": 1.0}])
    params = ManipulationParams(compress_layers=every[:1])
    by_cut = compression_at_cuts(lab, params, {"compression": own}, (-1e12, 1e12), progress=False)
    assert asked == [every] and list(by_cut[-1e12]["strategy"]) == ["intact"]
    assert list(by_cut[1e12]["strategy"]) == ["intact", "zero"]
    again = compression_at_cuts(lab.read_only(), params, {"compression": own}, (1e12,), progress=False)
    assert asked == [every] and again[1e12].equals(by_cut[1e12])
    mine = compression_at_cuts(lab, ManipulationParams(compress_layers=every), {"compression": own}, (1e12,))
    assert mine[1e12] is own
    sensitivity = threshold_sensitivity({"compression": own}, grid={}, by_cut=by_cut)
    assert set(sensitivity["parameter"]) == {"connective_pct"} and not sensitivity["default"].any()
    assert set(sensitivity["value"]) == {1e12}  # nothing to compress at -1e12: no claim stated there
