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
    assert (runs["wall_time_s"] > 0).all() and set(runs["profile"].dropna()) <= {"quick", "smoke"}
    # smoke: chapter 2's half-precision maps only (baselines and importance sweeps on the smoke profile's blocks)
    assert set(runs.loc[runs["profile"] == "smoke", "diagnostic"]) <= {"baseline", "importance"}
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
    full = [m for _, m in estimate.stored_manifests(COMMITTED) if m["diagnostic"] == "importance"
            and m["request"]["specimen"].get("dtype", "float32") == "float32"]  # half precision is left out
    newest = max(full, key=lambda m: m.get("created", ""))
    tokens = newest["request"]["profile"]["n_blocks"] * newest["request"]["profile"]["block_len"]
    minutes = newest["wall_time_s"] / 60 * PROFILES["paper"].tokens / tokens
    assert f"{minutes:,.1f} min" in text and "scaled by the work these parameters ask" in text
    recovery = RecoveryParams.for_profile("quick")
    assert "GPU" in estimate.estimate(recovery, PROFILES["quick"], "cuda:0", COMMITTED)
    assert "a GPU runtime" in estimate.estimate(recovery, PROFILES["quick"], "cpu", COMMITTED)
    nowhere = estimate.estimate(ImportanceParams(), PROFILES["quick"], "cpu", COMMITTED / "nowhere")
    assert nowhere.startswith("no stored")
    estimate.announce(StructureParams(), PROFILES["quick"], "cpu")
    assert capsys.readouterr().out.startswith("computing structure (profile quick, cpu)")


# ---- plans, handout, rehearsal, group work ----------------------------------------------------------------
def test_every_chapter_has_a_ninety_minute_plan_with_questions_and_a_fallback():
    from anatomy_lib.verdicts import CHAPTERS

    assert set(seminar.PLANS) == {c.number for c in CHAPTERS} | {8, 9}
    for chapter, plan in seminar.PLANS.items():
        table = seminar.session_plan(chapter)
        assert seminar.session_minutes(chapter) == 90
        assert (table["from (min)"].iloc[1:].to_numpy() == table["to (min)"].iloc[:-1].to_numpy()).all()
        assert set(table["cells"]) == {"live", "read", "pause"}
        assert plan.predict.endswith("?") and plan.discuss and plan.fallback and "defaults" in plan.groups
        shown = seminar.show_plan(chapter).data
        assert plan.predict[:20] in shown.replace("&#x27;", "'") and "Without a kernel" in shown


def test_a_missing_session_names_the_choices():
    with pytest.raises(ValueError, match="choose one of"):
        seminar.session_plan(12)


def test_the_handout_lists_each_sessions_checks_and_a_grid_per_group():
    import pandas as pd

    from anatomy_lib import exercises

    claims = pd.DataFrame({"chapter": [2, 2, 3], "Claim": ["critical core", "anti-layers <L14>", "R^2 of gate"],
                           "Paper": ["L8-11", "L14, L17", "0.91"]})
    for chapter, plan in seminar.PLANS.items():
        sheet = seminar.handout(chapter, claims).data
        for e in exercises.of_chapter(chapter):
            assert f'exercises.check("{e.key}", {e.function_name})' in sheet
        assert sheet.count("<th>") == len(plan.groups) + 2  # the claim, the paper's value, one per group
        assert f"<h3>Session {chapter}: " in sheet and "Name:" in sheet and "Date:" in sheet
        assert "`" not in sheet  # the guide's code spans print as code, not as backticks
        assert sheet.count('class="anatomy-handout-space"') == plan.predict.count("?")  # a box per question
    two = seminar.handout(2, claims).data
    assert "<td>critical core</td><td>L8-11</td>" in two and "&lt;L14&gt;" in two and "R^2 of gate" not in two
    assert seminar.handout(9).data.count("<tr>") == 4  # no claims table: three unnamed rows under the header
    both = seminar.handouts(claims).data
    assert both.startswith('<div class="anatomy-handouts">') and both.count('<section class="anatomy-handout">') \
        == len(seminar.PLANS)
    with pytest.raises(ValueError, match="choose one of"):
        seminar.handout(12)


def test_rehearsal_times_every_exercise_and_each_checker_works():
    rehearsed = seminar.rehearsal(chapters={4, 7})
    assert set(rehearsed["chapter"]) == {4, 7} and rehearsed["checker works"].all()
    assert (rehearsed[["stub check (s)", "solved check (s)"]] < 60).all().all()


def test_every_chapter_page_carries_its_exercises_with_a_check_and_a_folded_solution():
    import json

    from anatomy_lib import exercises

    book = Path(__file__).resolve().parents[2] / "book"
    for chapter in range(1, 10):
        page = next(book.glob(f"0{chapter}_*.ipynb"))
        cells = json.loads(page.read_text())["cells"]
        for e in exercises.of_chapter(chapter):
            checks = [c for c in cells if f'exercises.check("{e.key}", {e.function_name})' in "".join(c["source"])]
            solutions = [c for c in cells if f'exercises.solution("{e.key}")' in "".join(c["source"])]
            assert len(checks) == 1 and "exercise-check" in checks[0]["metadata"]["tags"], (page.name, e.key)
            assert e.stub.strip() in "".join(checks[0]["source"])
            assert len(solutions) == 1 and "hide-cell" in solutions[0]["metadata"]["tags"], (page.name, e.key)
            assert solutions[0]["metadata"].get("cellView") == "form"  # folded in Colab as well


@pytest.mark.specimen
def test_group_verdicts_put_two_stored_selections_of_text_side_by_side(real_specimen, monkeypatch):
    from anatomy_lib import open_lab

    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))  # the committed store, read only

    lab = open_lab(real_specimen, "quick", progress=False).read_only()
    table = seminar.group_verdicts(lab, 2, {"defaults": {}, "seed 1": {"blocks_seed": 1, "seed": 1}},
                                   modes=("neighbor_mean",), read_only=True)
    assert list(table.columns) == ["claim", "paper", "defaults", "seed 1"]
    assert len(table) == 6 and table[["defaults", "seed 1"]].notna().all().all()
    with pytest.raises(ValueError, match="choose one of"):
        seminar.group_verdicts(lab, 11, {"defaults": {}})
