"""The results store: exact-request hits, misses on any change, corruption detected, atomic writes."""
import json

import pandas as pd
import pytest

from dataclasses import dataclass

from anatomy_lib.results import DiagnosticParams, ResultStore, load_or_compute

REQUEST = {"specimen": {"name": "tiny", "weights_hash": "abc"}, "blocks": {"seed": 0}, "params": {"mode": "x"}}


def _compute_counter():
    calls = []

    def compute():
        calls.append(1)
        return {"layers": pd.DataFrame({"layer": [0, 1], "change_pct": [1.5, -0.25], "class": ["a", "b"]})}

    return compute, calls


def test_roundtrip_and_manifest(tmp_path):
    store = ResultStore(tmp_path)
    compute, calls = _compute_counter()
    tables, manifest = load_or_compute("importance", REQUEST, compute, store=store, device="cpu")
    again, _ = load_or_compute("importance", REQUEST, compute, store=store)
    assert len(calls) == 1
    pd.testing.assert_frame_equal(tables["layers"], again["layers"])
    for key in ("environment", "device", "wall_time_s", "created", "request", "tables"):
        assert key in manifest
    assert manifest["environment"]["torch"] and manifest["environment"]["transformers"]
    assert not list(tmp_path.rglob("*.tmp"))


@pytest.mark.parametrize("change", [("params", {"mode": "y"}), ("specimen", {"name": "tiny", "weights_hash": "x"})])
def test_any_change_of_request_misses(tmp_path, change):
    store = ResultStore(tmp_path)
    compute, calls = _compute_counter()
    load_or_compute("importance", REQUEST, compute, store=store)
    assert store.load("importance", {**REQUEST, change[0]: change[1]}) is None


def test_corrupt_or_truncated_files_are_recomputed(tmp_path):
    store = ResultStore(tmp_path)
    compute, calls = _compute_counter()
    load_or_compute("importance", REQUEST, compute, store=store)
    csv = next(tmp_path.rglob("*.csv"))
    csv.write_bytes(csv.read_bytes()[:-5])
    with pytest.warns(UserWarning, match="recomputing"):
        assert store.load("importance", REQUEST) is None
    with pytest.warns(UserWarning, match="recomputing"):
        load_or_compute("importance", REQUEST, compute, store=store)
    assert len(calls) == 2
    manifest = next(tmp_path.rglob("*.json"))
    manifest.write_text(manifest.read_text()[:20])
    with pytest.warns(UserWarning):
        load_or_compute("importance", REQUEST, compute, store=store)
    assert len(calls) == 3
    assert json.loads(manifest.read_text())["request"]["params"] == {"mode": "x"}


def test_a_hit_and_a_miss_return_the_same_types(tmp_path):
    store = ResultStore(tmp_path)

    def compute():  # in memory: an object column of None, floats that look like integers, a category
        return {"t": pd.DataFrame({"a": [1.0, 2.0], "b": [None, "x"], "c": pd.Categorical(["u", "v"])})}

    fresh, _ = load_or_compute("importance", REQUEST, compute, store=store)
    hit, _ = load_or_compute("importance", REQUEST, compute, store=store)
    pd.testing.assert_frame_equal(fresh["t"], hit["t"])
    unsaved, _ = load_or_compute("importance", {**REQUEST, "params": {"mode": "z"}}, compute, store=store, save=False)
    pd.testing.assert_frame_equal(unsaved["t"], hit["t"])


@dataclass(frozen=True)
class _Params(DiagnosticParams):
    DIAGNOSTIC = "toy"
    VERSION = 1
    knob: int = 3


@dataclass(frozen=True)
class _ParamsV2(_Params):
    VERSION = 2


def test_another_algorithm_version_is_recomputed(tmp_path):
    store = ResultStore(tmp_path)
    compute, calls = _compute_counter()
    request = lambda p: {**REQUEST, **p.as_request()}
    assert request(_Params())["diagnostic"] == {"name": "toy", "version": 1}
    assert request(_Params())["params"] == {"knob": 3}
    load_or_compute("toy", request(_Params()), compute, store=store)
    load_or_compute("toy", request(_Params()), compute, store=store)
    load_or_compute("toy", request(_ParamsV2()), compute, store=store)
    assert len(calls) == 2
