"""The seminar guide's timing table: measured rows come from the committed manifests, estimates from stated
ratios."""
from pathlib import Path

import pandas as pd
import pytest

from anatomy_lib import seminar
from anatomy_lib.core import estimate
from anatomy_lib.core.profiles import PROFILES
from anatomy_lib.importance import ImportanceParams
from anatomy_lib.recovery import RecoveryParams
from anatomy_lib.structure import StructureParams

COMMITTED = Path(__file__).resolve().parents[2] / "data" / "results"  # the tests' own store is a temporary folder


def test_stored_runs_cover_every_chapter_with_a_computation():
    runs = seminar.chapter_runs(COMMITTED)
    assert set(runs["chapter"]) == set(range(1, 8))
    assert (runs["wall_time_s"] > 0).all() and set(runs["profile"].dropna()) == {"quick"}
    # the only results no profile names are chapter 7's learning-rate check (variants of the quick runs)
    assert set(runs.loc[runs["profile"].isna(), "diagnostic"]) <= {"growth"}


def test_an_empty_store_gives_an_empty_table(tmp_path):
    assert seminar.chapter_runs(tmp_path).empty and seminar.chapter_times(100.0, seminar.chapter_runs(tmp_path)).empty


def test_work_ratios_follow_the_profiles():
    assert seminar.work_ratio("importance") == pytest.approx(128 * 1024 / (16 * 512))
    assert seminar.work_ratio("importance", "quick", "quick") == 1.0
    assert seminar.work_ratio("recovery") > seminar.work_ratio("importance")
    assert seminar.work_ratio("growth", "smoke") < 1


def test_chapter_times_scale_measured_minutes():
    runs = pd.DataFrame([{"diagnostic": "importance", "chapter": 2, "profile": "quick", "wall_time_s": 600.0},
                         {"diagnostic": "importance", "chapter": 2, "profile": "quick", "wall_time_s": 600.0},
                         {"diagnostic": "structure", "chapter": 4, "profile": "smoke", "wall_time_s": 9.0}])
    times = seminar.chapter_times(cpu_gflops=81.0, runs=runs).set_index("chapter")
    assert list(times.index) == [2]  # other profiles are not mixed in
    assert times.loc[2, "quick, CPU (measured)"] == pytest.approx(20.0)
    assert times.loc[2, "paper, CPU (estimated)"] == pytest.approx(320.0)
    assert times.loc[2, "quick, Colab T4 (estimated)"] == pytest.approx(20.0 / 100)
    # the scale page's estimate: the same work in FLOPs, the same share of each peak, the same answer
    from anatomy_lib.core import gpu

    flops = 20.0 * 81.0e9 * gpu.UTILISATION
    assert gpu.gpu_seconds(flops, "Colab T4") == pytest.approx(times.loc[2, "quick, Colab T4 (estimated)"])


def test_a_recomputation_is_announced_with_an_estimate(capsys):
    text = estimate.estimate(ImportanceParams(), PROFILES["paper"], "cpu", COMMITTED)
    quick = estimate.stored_runs(COMMITTED).query("diagnostic == 'importance'").sort_values("created").iloc[-1]
    assert f"{quick.wall_time_s / 60 * 16:,.1f} min" in text and "scaled by the work these parameters ask" in text
    recovery = RecoveryParams.for_profile("quick")
    assert "GPU" in estimate.estimate(recovery, PROFILES["quick"], "cuda:0", COMMITTED)
    assert "a GPU runtime" in estimate.estimate(recovery, PROFILES["quick"], "cpu", COMMITTED)
    nowhere = estimate.estimate(ImportanceParams(), PROFILES["quick"], "cpu", COMMITTED / "nowhere")
    assert nowhere.startswith("no stored")
    estimate.announce(StructureParams(), PROFILES["quick"], "cpu")
    assert capsys.readouterr().out.startswith("computing structure (profile quick, cpu)")
