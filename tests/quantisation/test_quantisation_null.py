"""The quantisation null: llama.cpp's format choices, chapter 7's models retrained as they were, every model back
to fp32 bit for bit after each scheme, and the changes with their intervals."""
import re

import numpy as np
import pandas as pd
import pytest

from anatomy_lib import quantisation as qn


def test_q4_k_m_picks_llama_cpps_formats():
    more = [layer for layer in range(18) if qn.use_more_bits(layer, 18)]
    assert more == [0, 1, 4, 7, 10, 13, 15, 16, 17]  # what Gemma-3-270M's GGUF shows (tests/specimen)
    assert qn.tensor_format("Q4_K_M", "down", 0, 18, 2048) == "Q6_K"
    assert qn.tensor_format("Q4_K_M", "down", 2, 18, 2048) == "Q4_K"
    assert qn.tensor_format("Q4_K_M", "v", 0, 18, 640) == "Q8_0"  # Q6_K's fallback for rows of 640
    assert qn.tensor_format("Q4_K_M", "q", 3, 18, 640) == "Q5_0"  # Q4_K's
    assert qn.tensor_format("Q4_1", "q", 3, 18, 640) == "Q4_1"
    with pytest.raises(ValueError, match="valid schemes"):
        qn.tensor_format("Q2_K", "q", 0, 18, 640)
    with pytest.raises(ValueError, match="valid schemes"):
        qn.QuantisationParams(schemes=("Q3_K",))


@pytest.fixture(scope="module")
def smoke_null():
    params = qn.QuantisationParams.for_profile("smoke", seeds=1)
    return params, qn.quantisation_null(params, progress=False)


def test_every_model_is_measured_under_every_scheme_and_restored(smoke_null):
    params, tables = smoke_null
    models = tables["models"]
    assert list(models["model"]) == ["uniform seed 0", "gstack seed 0", qn.RANDOM_INIT]
    assert models["restored"].all()  # fp32 bit for bit after every scheme
    profiles = tables["activations"]
    assert profiles.groupby("model")["layer"].count().eq(params.target_layers).all()
    assert (profiles["ratio"] >= 1).all()
    assert set(tables["fits"]["scheme"]) == {qn.FP32, *qn.SCHEMES}
    assert set(tables["deltas"]["null"]) == {"specimen", "layer-shuffled"}
    errors = tables["errors"]
    assert (errors["relative_error"] > 0).all() and set(errors["scheme"]) == set(qn.SCHEMES)
    assert set(errors.loc[errors["scheme"] == "Q4_1", "format"]) == {"Q4_1"}
    # the smoke models' rows (32 and 64 values) are not multiples of 256: Q4_K_M falls back as llama.cpp does
    assert set(errors.loc[errors["scheme"] == "Q4_K_M", "format"]) <= {"Q5_0", "Q8_0"}


def test_the_retrained_models_are_chapter_7s(smoke_null):
    """The null retrains chapter 7's arms from their seeds: the same final loss as the growth run's."""
    from anatomy_lib.growth import GrowthParams, growth

    params, tables = smoke_null
    assert params.growth_params() == GrowthParams.for_profile("smoke", seeds=1)
    runs = growth(GrowthParams.for_profile("smoke", seeds=1, arms=("uniform", "gstack")), progress=False)["runs"]
    sentence = qn.report.retrain_sentence(tables, runs)
    merged = tables["models"].merge(runs, on=["arm", "seed"], suffixes=("", "_stored"))
    np.testing.assert_allclose(merged["final_val_loss"], merged["final_val_loss_stored"], atol=1e-6)
    assert sentence.startswith("The 2 retrained models are chapter 7's")


def test_changes_carry_intervals_and_sentences(smoke_null):
    import matplotlib.pyplot as plt

    _, tables = smoke_null
    table = qn.deltas(tables)
    assert set(table["statistic"]) == set(qn.STATISTICS)
    assert len(table) == len(qn.STATISTICS) * 3 * len(qn.SCHEMES)
    assert ((table["ci_low"] <= table["change"] + 1e-12) & (table["change"] <= table["ci_high"] + 1e-12)).all()
    np.testing.assert_allclose(table["change"], table["quantised"] - table["fp32"], atol=1e-9)
    for chapter in (3, 4):
        sentences = qn.findings(tables, chapter)
        assert sentences[0].startswith("SmolLM2's scheme Q4_1 rounds each layer matrix")
        assert sentences[-1] == qn.conclusion(table, chapter)
        fig = qn.deltas_figure(table, chapter)
        plt.close(fig)


def test_small_changes_are_never_printed_as_zero_and_the_summary_agrees_with_its_lines():
    """A nonzero change too small for four decimals gets more digits (never "0.0000" beside a summary that calls
    the largest change 0.0000 while a line above shows -0.0004); the summary's largest change is taken over every
    line the chapter lists, the layer-shuffled null's included, in the same digits."""
    from anatomy_lib.quantisation.report import _change, signed

    assert signed(3e-5) == "+0.00003" and signed(-2e-6) == "-0.000002" and signed(0.0) == "0.0000"
    assert set(signed(-1e-9)) == {"0", "."}  # beyond three more decimals: zero, with no sign
    rows = [("lag-1 delta correlation", "uniform", -0.495, -0.49502, -2e-5, -1e-4, 4e-5),
            ("lag-1 delta correlation", "random init", -0.5005, -0.50046, 4e-5, -3e-6, 1e-4),
            ("lag-1, layer-shuffled null", "gstack", -0.498, -0.4984, -4e-4, -7e-4, 2e-6)]
    table = pd.DataFrame([{"chapter": 4, "statistic": s, "arm": a, "scheme": "Q4_1", "fp32": f, "quantised": q,
                           "change": c, "ci_low": lo, "ci_high": hi, "layers": 3}
                          for s, a, f, q, c, lo, hi in rows])
    said = qn.conclusion(table, 4)
    assert "at most 0.00004 toward" in said
    assert f"is {_change(table.iloc[2])} (lag-1, layer-shuffled null, gstack, Q4_1)" in said
    assert "-0.0004 [-0.0007, +0.000002]" in said and not re.search(r"0\.0000(?!\d)", said)
    assert "-0.50050 to -0.50046" in said  # a move the sentence reports reads as one
