"""The stream operators (edits of what a layer hands on): the prefix cache and the model's own forward see the
same edit, the model comes back bit for bit, and each operator does what its name says."""
import numpy as np
import pytest
import torch

from anatomy_lib.core.engine import PerplexityEngine, plain_evaluation
from anatomy_lib.core.surgery import surgery
from anatomy_lib.importance import STREAM_OPERATORS, ablate, ablation, stream_means
from tests.conftest import state_hash


@pytest.mark.parametrize("operator", STREAM_OPERATORS)
def test_stream_operators_agree_between_cache_and_forward_and_restore(tiny, tiny_blocks, operator):
    engine = PerplexityEngine(tiny.model, tiny_blocks, progress=False)
    before = state_hash(tiny.model)
    with surgery(tiny.adapter) as editor:
        ablate(editor, 2, operator, engine=engine)
        assert engine._start_layer("auto") == 2
        cached = engine.evaluate()
        plain = plain_evaluation(tiny.model, tiny_blocks)
    np.testing.assert_allclose(cached.block_nll, plain.block_nll, rtol=1e-5)
    assert not np.allclose(cached.block_nll, engine.baseline.block_nll)
    assert state_hash(tiny.model) == before and not tiny.adapter.active_edits
    np.testing.assert_allclose(plain_evaluation(tiny.model, tiny_blocks).block_nll, engine.baseline.block_nll,
                               rtol=1e-6)  # the hook is gone


def test_stream_operators_install_what_they_name(tiny, tiny_blocks):
    engine = PerplexityEngine(tiny.model, tiny_blocks, progress=False)
    a, layer = tiny.adapter, 1
    entering = engine.stream(layer)
    mean_leaving, mean_update = stream_means(engine, layer)
    torch.testing.assert_close(mean_update, (engine.stream(layer + 1) - entering).double().mean((0, 1)).float())
    for operator, expected in (("zero_stream", torch.zeros_like(entering)),
                               ("mean_stream", mean_leaving.expand_as(entering)),
                               ("mean_update", entering + mean_update)):
        with surgery(a) as editor, torch.inference_mode():
            ablate(editor, layer, operator, engine=engine)
            captured = []
            a.run_layers(entering, layer, layer + 2, capture=captured)
        torch.testing.assert_close(captured[1], expected, rtol=1e-5, atol=1e-5)


def test_zeroing_the_last_stream_leaves_the_head_nothing(tiny_blocks):
    """Zeros through a final RMSNorm without bias are zeros: uniform logits, perplexity = vocabulary size."""
    from anatomy_lib.core.specimens import tiny_specimen

    spec = tiny_specimen("llama", n_layers=3, seed=2)
    engine = PerplexityEngine(spec.model, tiny_blocks, progress=False)
    with surgery(spec.adapter) as editor:
        ablation([2], "zero_stream")(editor)
        ppl = engine.evaluate().perplexity
    assert ppl == pytest.approx(spec.model.config.vocab_size, rel=1e-4)


def test_mean_operators_need_the_streams_and_restore_after_an_exception(tiny, tiny_blocks):
    engine = PerplexityEngine(tiny.model, tiny_blocks, progress=False)
    with pytest.raises(ValueError, match="needs the intact streams"):
        with surgery(tiny.adapter) as editor:
            ablate(editor, 0, "mean_update")
    with pytest.raises(KeyboardInterrupt):
        with surgery(tiny.adapter) as editor:
            ablate(editor, 0, "mean_stream", engine=engine)
            raise KeyboardInterrupt
    assert not tiny.adapter.active_edits and not tiny.adapter.layers[0]._forward_hooks
    with pytest.raises(ValueError, match="valid choices|choose one of|zero_stream"):
        ablation([0], "zero_everything")


def test_the_paper_pattern_is_judged_part_by_part():
    """A paper-shaped table (core L8-11, everything else in the middle under +30%, range 10^7) shows the
    pattern; lifting one middle layer above +30% or shrinking the range breaks exactly that part."""
    import pandas as pd

    from anatomy_lib.importance import Thresholds, classify, operator_summary, paper_pattern

    def table(changes):
        t = pd.DataFrame({"layer": range(30), "change_pct": changes, "ci_low": np.asarray(changes) - 0.5,
                          "ci_high": np.asarray(changes) + 0.5})
        t["class"] = classify(t, 30, Thresholds())
        return t

    changes = np.full(30, 5.0)
    changes[[8, 9, 10, 11]] = [5e3, 5e3, 5e3, 6.3e4]
    changes[[0, 29]] = [1e6, 200.0]
    changes[3] = 1e6 / 10 ** 7  # importance spans 10^7
    paper_like = paper_pattern(table(changes), 30)
    assert paper_like["pattern"] and paper_like["critical_core"] == [8, 9, 10, 11]
    lifted = changes.copy()
    lifted[14] = 80.0
    broken = paper_pattern(table(lifted), 30)
    assert not broken["pattern"] and broken["middle_above_connective"] == [14] and broken["range_matches"]
    narrow = changes.copy()
    narrow[3] = 1.0
    assert not paper_pattern(table(narrow), 30)["range_matches"]
    everywhere = changes.copy()
    everywhere[8:22] = 1e5  # a middle that is all core (as overwriting the stream gives) has no connective tissue
    all_core = paper_pattern(table(everywhere), 30)
    assert all_core["has_core"] and not all_core["rest_connective"] and not all_core["pattern"]
    summary = operator_summary({"paper-like": table(changes), "lifted": table(lifted)}, 30)
    assert summary["pattern"].tolist() == [True, False] and summary["top_layer"].tolist() == [0, 0]


def test_operator_sentences_and_figure_from_tables():
    import matplotlib.pyplot as plt
    import pandas as pd

    from anatomy_lib.importance import Thresholds, classify, operator_findings, operators_figure, panel_summary

    def table(changes):
        changes = np.asarray(changes, dtype=float)
        t = pd.DataFrame({"layer": range(len(changes)), "change_pct": changes, "ci_low": changes - 0.5,
                          "ci_high": changes + 0.5})
        t["class"] = classify(t, len(changes), Thresholds())
        return t

    small = {"skip": table([500.0, 40.0, 2.0, -3.0, 60.0, 800.0]), "zero_stream": table([1e5] * 6)}
    summary = panel_summary({"tiny": small})
    assert list(summary["specimen"]) == ["tiny", "tiny"] and list(summary["operator"]) == ["skip", "zero_stream"]
    sentences = operator_findings(summary)
    assert sentences[0].startswith("tiny, skip: largest change L5 +800%") and "anti-layers L3" in sentences[0]
    assert sentences[-1].startswith("No operator on any specimen gives the paper's pattern")
    fig = operators_figure({"tiny": small, "other": {"skip": table([1.0] * 9)}})
    assert len(fig.axes) == 3  # two panels and the colour bar
    plt.close(fig)


def test_the_panel_measures_every_operator_and_leaves_out_what_a_read_only_lab_lacks(tiny, tiny_blocks):
    """Chapter 2's operator panel and massive-activation section, end to end on a tiny model: every operator's
    table, the summary, the correlations with intervals, the sentences; a second, read-only lab whose results are
    not stored is left out rather than computed."""
    import matplotlib.pyplot as plt

    from anatomy_lib import importance as imp
    from anatomy_lib.core.specimens import tiny_specimen
    from tests.conftest import tiny_lab

    lab = tiny_lab(tiny, tiny_blocks)
    unstored = tiny_lab(tiny_specimen("llama", n_layers=3, seed=7), tiny_blocks).read_only()
    panel = imp.operator_panel([lab, unstored], operators=imp.OPERATORS, progress=False)
    assert list(panel) == [lab.specimen.name] and list(panel[lab.specimen.name]) == list(imp.OPERATORS)
    for table in panel[lab.specimen.name].values():
        assert len(table) == tiny.adapter.n_layers and (table["ci_low"] <= table["ci_high"]).all()
    summary = imp.panel_summary(panel)
    assert len(summary) == len(imp.OPERATORS)
    assert len(imp.operator_findings(summary)) == len(imp.OPERATORS) + 1
    shown = imp.operator_table(summary)
    assert list(shown["operator"]) == list(imp.OPERATORS)
    profiles = imp.activation_panel([lab, unstored], imp.ActivationParams(ratio=5.0, floor=1e-6))
    assert list(profiles) == [lab.specimen.name]
    correlations = imp.correlation_table(profiles, panel)
    assert len(correlations) == len(imp.OPERATORS)
    defined = correlations["rho"].notna()  # undefined where an operator's changes are all equal
    assert (correlations.loc[defined, "ci_low"] <= correlations.loc[defined, "ci_high"]).all()
    sentences = imp.activation_findings(profiles, correlations)
    assert sentences[0].startswith(f"On {lab.specimen.name}, the first layer whose output holds a massive entry "
                                   "(the threshold detector) is L")
    fig = imp.activations_figure(imp.stacked_layers(profiles), correlations[correlations["operator"] == "skip"], 5.0)
    plt.close(fig)
