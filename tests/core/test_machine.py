"""The stored matmul peak (core.machine): one measurement every page reads, stored atomically, and a probe now
(said so) only where none is stored."""
import json

from anatomy_lib.core import machine
from anatomy_lib.core.results import REPO_ROOT


def test_a_stored_peak_is_read_back_and_named(tmp_path, monkeypatch):
    monkeypatch.setattr(machine, "matmul_peak_gflops", lambda **_: 50.0)
    record = machine.measure_peak(rounds=2, sizes=(64,))
    assert record["matmul_peak_gflops"] == 50.0 and record["probes_gflops"] == [50.0, 50.0]
    path = machine.store_peak(record, tmp_path)
    assert json.loads(path.read_text())["threads"] == record["threads"]
    monkeypatch.setattr(machine, "matmul_peak_gflops", lambda **_: 1.0)  # a busy machine now: must not be used
    gflops, source = machine.matmul_peak(tmp_path)
    assert gflops == 50.0 and "stored results" in source and "best of 2 probes" in source


def test_the_best_probe_is_kept(monkeypatch):
    probes = iter([10.0, 30.0, 20.0])
    monkeypatch.setattr(machine, "matmul_peak_gflops", lambda **_: next(probes))
    assert machine.measure_peak(rounds=3, sizes=(64,))["matmul_peak_gflops"] == 30.0


def test_without_a_stored_peak_it_probes_now_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(machine, "matmul_peak_gflops", lambda **_: 7.0)
    gflops, source = machine.matmul_peak(tmp_path)
    assert gflops == 7.0 and "probed now" in source


def test_the_repository_stores_one_peak():
    record = machine.stored_peak(REPO_ROOT / "data" / "results")  # the tests' own store is a temporary one
    assert record is not None and record["matmul_peak_gflops"] > 0 and len(record["probes_gflops"]) >= 3
