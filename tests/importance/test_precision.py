"""Chapter 2's map in half precision: the same blocks in every precision, each precision stored apart, and the
summary counting non-finite changes instead of dropping them."""
import numpy as np
import pandas as pd
import pytest

from anatomy_lib.core.specimens import OFFLINE_SPECIMEN
from anatomy_lib.importance import precision as pr


def test_every_precision_sees_the_same_blocks_and_is_stored_apart(real_specimen):
    labs = {p: pr.precision_lab(OFFLINE_SPECIMEN, p, "smoke", n_blocks=2, progress=False) for p in pr.PRECISIONS}
    ids = [lab.blocks.ids for lab in labs.values()]
    assert all(np.array_equal(ids[0], other) for other in ids[1:])
    dtypes = {p: lab.specimen.identity["dtype"] for p, lab in labs.items()}
    assert dtypes == {"float32": "float32", "bfloat16": "bfloat16", "float16": "float16"}
    assert len({lab.specimen.weights_hash for lab in labs.values()}) == 3  # three store keys, never one
    base = {p: lab.engine.baseline.perplexity for p, lab in labs.items()}
    assert all(np.isfinite(v) for v in base.values())
    assert base["bfloat16"] == pytest.approx(base["float32"], rel=0.05)  # half precision, not a broken model
    with pytest.raises(pr.NotStored):
        pr.precision_lab(OFFLINE_SPECIMEN, "float16", "smoke", n_blocks=3, compute_missing=False,
                         progress=False).baseline()


def test_the_summary_counts_what_overflows_and_measures_the_departure():
    layers = range(4)
    reference = pd.DataFrame({"layer": layers, "change_pct": [10.0, 100.0, 9900.0, 1.0], "ci_low": 0.0,
                              "ci_high": 1.0, "mode": "skip", "precision": "float32"})
    half = reference.assign(precision="float16", change_pct=[10.0, 100.0, np.inf, 99.0])
    summary = pr.precision_summary({"changes": pd.concat([reference, half], ignore_index=True)}).set_index("precision")
    assert summary.loc["float32", "non_finite"] == 0 and summary.loc["float32", "largest_departure_orders"] == 0
    assert summary.loc["float16", "non_finite"] == 1
    assert summary.loc["float16", "departure_layer"] == 3
    assert summary.loc["float16", "largest_departure_orders"] == pytest.approx(np.log10(1.99 / 1.01))
    assert summary.loc["float32", "range_orders"] == pytest.approx(np.log10(9900))
    assert summary.loc["float16", "range_orders"] == pytest.approx(1.0)  # over the finite changes only


def test_bad_precisions_name_the_choices():
    with pytest.raises(ValueError, match="float16"):
        pr.PrecisionParams(precisions=("float8",))
    with pytest.raises(ValueError, match="reference"):
        pr.PrecisionParams(precisions=("float16",))


def test_the_findings_say_what_was_not_run_and_what_overflowed():
    reference = pd.DataFrame({"layer": range(3), "change_pct": [10.0, 1000.0, 1.0], "ci_low": 0.0, "ci_high": 1.0,
                              "mode": "skip", "precision": "float32"})
    half = reference.assign(precision="float16", change_pct=[10.0, np.inf, 1.0])
    base = pd.DataFrame([{"precision": "float32", "base_ppl": 20.0, "finite": True, "stored": True, "blocks": 4},
                         {"precision": "bfloat16", "base_ppl": np.nan, "finite": False, "stored": False, "blocks": 4},
                         {"precision": "float16", "base_ppl": 20.1, "finite": True, "stored": True, "blocks": 4}])
    said = " ".join(pr.precision_findings({"m": {"changes": pd.concat([reference, half]), "base": base}}))
    assert "20.000 in float32, not run in bfloat16, 20.100 in float16" in said
    broken = base.assign(finite=[True, True, False], stored=True)
    said_broken = pr.precision_findings({"m": {"changes": reference, "base": broken}})[0]
    assert "largest representable value is 65,504" in said_broken
    assert "float16 10^1.0 with 1 non-finite change," in said and "float32 spans 10^3.0" in said
    only = pr.precision_findings({"m": {"changes": reference, "base": base.iloc[:1]}})
    assert "no half-precision map is stored" in only[-1]
