"""The results store: exact-request hits, misses on any change, corruption detected, atomic writes."""
import json
import os
import stat
from dataclasses import asdict, dataclass, field

import pandas as pd
import pytest

from anatomy_lib.core.params import DiagnosticParams
from anatomy_lib.core.results import ResultStore, load_or_compute

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


def test_a_compute_resumed_from_earlier_work_records_that_work_s_time(tmp_path):
    compute, _ = _compute_counter()
    _, manifest = load_or_compute("importance", REQUEST, compute, store=ResultStore(tmp_path),
                                  work_s=lambda tables: 60.0 * len(tables["layers"]))
    assert manifest["wall_time_s"] == 120.0 and "computed_by" not in manifest


def test_a_result_run_apart_names_its_command_and_is_not_what_a_chapter_estimates_from(tmp_path):
    from anatomy_lib.core.estimate import estimate, stored_runs
    from anatomy_lib.core.profiles import PROFILES

    store, tables = ResultStore(tmp_path), lambda: {"t": pd.DataFrame({"x": [1]})}
    request = lambda width: {"specimen": {"name": "spec"}, "profile": asdict(PROFILES["quick"]),
                             **Knobs(width=width).as_request()}
    load_or_compute("knobs", request(1), tables, store=store, work_s=lambda _: 60.0)
    _, apart = load_or_compute("knobs", request(2), tables, store=store, work_s=lambda _: 6000.0,
                               computed_by="python -m somewhere")
    assert apart["computed_by"] == "python -m somewhere"  # newer, but run apart: the chapter's own is read
    assert "about 1.0 min" in estimate(Knobs(width=1), PROFILES["quick"], "cpu", tmp_path, specimen="spec")
    assert sorted(stored_runs(tmp_path)["computed_by"]) == ["", "python -m somewhere"]


@pytest.mark.parametrize("change", [("params", {"mode": "y"}), ("specimen", {"name": "tiny", "weights_hash": "x"})])
def test_any_change_of_request_misses(tmp_path, change):
    store = ResultStore(tmp_path)
    compute, calls = _compute_counter()
    assert not store.has("importance", REQUEST)
    load_or_compute("importance", REQUEST, compute, store=store)
    assert store.has("importance", REQUEST)
    assert store.load("importance", {**REQUEST, change[0]: change[1]}) is None
    assert not store.has("importance", {**REQUEST, change[0]: change[1]})


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


@dataclass(frozen=True)
class Knobs(DiagnosticParams):
    DIAGNOSTIC = "knobs"
    width: int = field(default=1)


def test_an_unreadable_manifest_never_fails_a_computation(tmp_path, capsys):
    """The estimate printed before a computation skips a manifest it cannot read (naming it), and the fresh
    result replaces the corrupt entry."""
    from anatomy_lib.core.estimate import announce, estimate
    from anatomy_lib.core.profiles import PROFILES

    store = ResultStore(tmp_path)
    params = Knobs(width=3)
    request = {"specimen": {"name": "spec"}, **params.as_request()}
    tables = lambda: {"t": pd.DataFrame({"x": [1, 2]})}
    _, manifest = load_or_compute("knobs", request, tables, store=store)
    path = next(tmp_path.glob("spec/knobs/*.json"))
    path.write_text("{not json")
    with pytest.warns(UserWarning, match=str(path.name)):
        text = estimate(params, PROFILES["quick"], "cpu", tmp_path)
    assert text.startswith("no stored")
    with pytest.warns(UserWarning):
        found, fresh = load_or_compute("knobs", request, tables, store=store,
                                       before=lambda: announce(params, PROFILES["quick"], "cpu"))
    assert "computing knobs" in capsys.readouterr().out
    assert json.loads(path.read_text())["request"] == fresh["request"] and found["t"]["x"].tolist() == [1, 2]


def test_the_data_folder_is_the_checkout_s(monkeypatch):
    from anatomy_lib.core.results import REPO_ROOT, data_root

    monkeypatch.delenv("ANATOMY_DATA")
    assert data_root() == REPO_ROOT / "data" and (REPO_ROOT / "anatomy_lib" / "core" / "results.py").is_file()


def test_stored_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        ResultStore(tmp_path).save("knobs", {"specimen": {"name": "spec"}}, {"t": pd.DataFrame({"x": [1]})}, {})
    finally:
        os.umask(old)
    modes = {p.name.split(".")[-1]: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.glob("spec/knobs/*")}
    assert modes and set(modes.values()) == {0o644}, modes


def _store_repeatedly(root, value, rounds):
    import pandas as pd

    from anatomy_lib.core.results import ResultStore

    store = ResultStore(root)
    for _ in range(rounds):
        store.save("race", {"specimen": {"name": "s"}, "k": 1},
                   {"a": pd.DataFrame({"x": [value] * 50}), "b": pd.DataFrame({"y": [value] * 50})}, {})


def test_two_processes_storing_one_result_never_mix_their_tables(tmp_path):
    """Each save writes its tables and then its manifest under the result's lock: whatever the interleaving, the
    stored result is one process's whole set (without the lock, one's manifest lands on the other's tables and
    the result reads as unusable)."""
    import multiprocessing

    from anatomy_lib.core.results import ResultStore

    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_store_repeatedly, args=(str(tmp_path), value, 40)) for value in (1, 2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [worker.exitcode for worker in workers] == [0, 0]
    tables, _ = ResultStore(tmp_path).load("race", {"specimen": {"name": "s"}, "k": 1})
    assert set(tables["a"]["x"]) == set(tables["b"]["y"]) and len(set(tables["a"]["x"])) == 1


def test_a_store_only_run_refuses_to_compute_and_names_the_fix(tmp_path, monkeypatch):
    from anatomy_lib.core.results import STORE_ONLY_ENV, ComputationRefused

    store = ResultStore(tmp_path)
    compute, calls = _compute_counter()
    load_or_compute("diag", REQUEST, compute, store=store)
    monkeypatch.setenv(STORE_ONLY_ENV, "1")
    load_or_compute("diag", REQUEST, compute, store=store)  # stored: read, not computed
    assert len(calls) == 1
    with pytest.raises(ComputationRefused, match="lacks diag for tiny with these parameters.*make smoke-store"):
        load_or_compute("diag", {**REQUEST, "params": {"mode": "y"}}, compute, store=store)
    assert len(calls) == 1
