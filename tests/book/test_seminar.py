"""The seminar guide: its timing table (measured rows from the committed manifests, estimates from stated ratios),
its plans (ordered so that nothing answers a prediction before it is written, 90 minutes each), the answers
computed from the committed store, the groups' verdicts read from it, the handout and the assessment."""
import re
import time
from pathlib import Path

import pandas as pd
import pytest

from anatomy_lib import seminar
from anatomy_lib.core import estimate
from anatomy_lib.core.profiles import PROFILES
from anatomy_lib.importance import ImportanceParams
from anatomy_lib.recovery import RecoveryParams
from anatomy_lib.structure import StructureParams

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "data" / "results"  # the tests' own store is a temporary folder
# groups whose variant the committed store does not hold (their column reads "not stored"): chapter 1 on Gemma
# needs Gemma's baseline at the quick profile, which no chapter has stored yet
KNOWN_NOT_STORED: set = set()  # every group of every session is stored


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
    apart = pd.concat([runs.assign(computed_by=""), pd.DataFrame([{"diagnostic": "importance", "chapter": 2,
                                                                   "profile": "quick", "wall_time_s": 9e4,
                                                                   "computed_by": "python -m x"}])])
    assert seminar.chapter_times(81.0, apart).set_index("chapter").loc[2, "quick, CPU (measured)"] == \
        pytest.approx(20.0)  # a sweep run apart from its chapter is not part of recomputing it
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


# ---- plans ----------------------------------------------------------------------------------------------------
def test_every_session_has_a_ninety_minute_plan_in_an_order_that_keeps_the_predictions_honest():
    from anatomy_lib.verdicts import CHAPTERS

    assert set(seminar.PLANS) == {0} | {c.number for c in CHAPTERS} | {8, 9}
    for number, plan in seminar.PLANS.items():
        assert plan.number == number and seminar.order_problems(plan) == [], seminar.order_problems(plan)
        table = seminar.session_plan(number)
        assert seminar.session_minutes(number) == 90 == table["to (min)"].iloc[-1]
        assert (table["from (min)"].iloc[1:].to_numpy() == table["to (min)"].iloc[:-1].to_numpy()).all()
        assert set(table["cells"]) <= set(seminar.CELLS) and "pause" in set(table["cells"])
        assert plan.predictions and plan.discussion and plan.fallback and plan.goals and plan.introduce
        assert len(plan.groups) >= 2, f"session {number} has fewer than two groups"
        assert all(q.text.endswith("?") and q.answered_by for q in plan.predictions + plan.discussion)


def test_a_plan_that_shows_an_answer_early_is_caught():
    from dataclasses import replace

    plan = seminar.PLANS[2]
    early = replace(plan.segments[0], shows=(plan.predictions[0].answered_by,))
    broken = replace(plan, segments=(early, *plan.segments[1:]))
    assert any("before the prediction" in p for p in seminar.order_problems(broken))
    short = replace(plan, segments=plan.segments[:-1])
    assert any("expected 90" in p for p in seminar.order_problems(short))


def test_a_missing_session_names_the_choices():
    with pytest.raises(ValueError, match="choose one of"):
        seminar.session_plan(12)
    with pytest.raises(ValueError, match="choose one of"):
        seminar.show_plan(12)


def test_homework_readings_and_rubrics_exist():
    from anatomy_lib import exercises

    keys = set(re.findall(r"@\w+\{([^,\s]+),", (ROOT / "book" / "references.bib").read_text()))
    assert seminar.bibliography_keys() == keys
    for number, plan in seminar.PLANS.items():
        assert plan.homework.exercises and set(plan.homework.exercises) <= set(exercises.EXERCISES), number
        assert plan.reading[1] in keys, (number, plan.reading)
        assert plan.homework.rubric and all(points > 0 and what for points, what in plan.homework.rubric)
        assert plan.homework.points == sum(p for p, _ in plan.homework.rubric)
    assert seminar.PROJECT_RUBRIC and all(points > 0 for points, _ in seminar.PROJECT_RUBRIC)
    table = seminar.assessment()
    assert len(table) == len(seminar.PLANS) + 1 and (table["points"] > 0).all()


def test_the_guide_shows_each_plan_with_its_reading_groups_and_homework():
    import html

    for number, plan in seminar.PLANS.items():
        shown = html.unescape(seminar.show_plan(number).data)
        title = seminar.sheets._bibliography()[plan.reading[1]]["title"]
        for part in ("Goals", "Introduced before the prediction", "Pre-reading", "Answered by", "Groups",
                     "Without a kernel", "Discussion", "Homework", "readings.html", title,
                     f"{plan.homework.points} points", f"Session {number}: {plan.title}"):
            assert part in shown, (number, part)
        for name in plan.groups:
            assert name in shown
        assert "`" not in shown
        # an outside reading shows its authors, year and title, never its BibTeX key
        assert not any(key in shown for key in seminar.bibliography_keys()), number


def test_misconceptions_are_the_exercises_catalogued_mistakes_and_the_plans_own():
    from anatomy_lib import exercises

    for number, plan in seminar.PLANS.items():
        found = seminar.misconceptions(plan)
        assert found, f"session {number} lists no misconception"
        caught = [m for e in exercises.of_chapter(plan.chapter) for m in e.mistakes] if plan.chapter else []
        assert all(any(m in f for f in found) for m in caught) and set(plan.misconceptions) <= set(found)


# ---- the handout ------------------------------------------------------------------------------------------------
def test_the_handout_has_a_sheet_per_session_with_its_questions_checks_and_a_grid_per_group():
    import pandas as pd

    claims = pd.DataFrame({"chapter": [2, 2, 3, 7], "Claim": ["critical core", "anti-layers <L14>",
                                                                "R^2 of gate, held-out layers",
                                                                "developmental (the paper's arm): compute to reach "
                                                                "the target depth's loss at C*"],
                           "Paper": ["L8-11", "L14, L17", "0.91", "2.17x"]})
    for number, plan in seminar.PLANS.items():
        sheet = seminar.handout(number, claims).data
        for e in seminar.session_exercises(number):
            assert f'exercises.check("{e.key}", {e.function_name})' in sheet
        assert set(plan.homework.exercises) <= {e.key for e in seminar.session_exercises(number)}
        assert sheet.count("<th>") == len(plan.groups) + 2  # the claim, the paper's value, one per group
        assert f"<h3>Session {number}: " in sheet and "Name:" in sheet and "Date:" in sheet
        assert "`" not in sheet  # the plans' code spans print as code, not as backticks
        assert sheet.count('class="anatomy-handout-space"') == len(plan.predictions)  # a box per question
        assert seminar.inline(plan.homework.question) in sheet
        for q in plan.discussion:
            assert seminar.inline(q.text) in sheet
    two = seminar.handout(2, claims).data
    assert "<td>critical core</td><td>L8-11</td>" in two and "&lt;L14&gt;" in two and "R^2 of gate" not in two
    nine = seminar.handout(9, claims).data  # no claims of its own: the book's key claims
    assert "R^2 of gate, held-out layers" in nine and "critical core" in nine and "developmental" in nine
    eight = seminar.handout(8, claims).data  # the atlas compares specimens: no claim about trained models
    assert "critical core" in eight and "developmental" not in eight
    assert seminar.handout(4).data.count("<tr>") == 4  # no claims table: three unnamed rows under the header
    every = seminar.handouts(claims).data
    assert every.startswith('<div class="anatomy-handouts">')
    assert every.count('<section class="anatomy-handout">') == len(seminar.PLANS) == 10
    with pytest.raises(ValueError, match="choose one of"):
        seminar.handout(12)


def test_rehearsal_times_every_exercise_and_each_checker_works():
    rehearsed = seminar.rehearsal(chapters={4, 7})
    assert set(rehearsed["chapter"]) == {4, 7} and rehearsed["checker works"].all()
    assert (rehearsed[["stub check (s)", "solved check (s)"]] < 60).all().all()


def test_every_chapter_page_carries_its_exercises_with_a_check_and_a_folded_solution():
    import json

    from anatomy_lib import exercises

    book = ROOT / "book"
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


# ---- the committed store: answers and groups -------------------------------------------------------------------
@pytest.fixture(scope="module")
def committed_lab():
    """The book's specimen over the committed store, read only (``ANATOMY_DATA`` set for the module)."""
    import contextlib
    import io

    from anatomy_lib import open_lab

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANATOMY_DATA", str(COMMITTED.parent))
        with contextlib.redirect_stdout(io.StringIO()):
            lab = open_lab("default", "quick", progress=False).read_only()
        yield lab


@pytest.fixture(scope="module")
def evidence(committed_lab):
    return seminar.Evidence(committed_lab)


def _gemma_needed(number: int) -> bool:
    return number == 8 or any(o.get("specimen") for o in seminar.PLANS[number].groups.values())


QUESTIONS = [pytest.param(number, i, id=f"{number}-{q.answer.__name__}")
             for number, plan in seminar.PLANS.items() for i, q in enumerate(plan.predictions + plan.discussion)]


@pytest.mark.parametrize("number, index", QUESTIONS)
def test_every_question_is_answered_with_numbers_from_the_store(evidence, number, index, monkeypatch):
    from anatomy_lib.core.adapter import GEMMA_SUPPORTED

    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))
    plan = seminar.PLANS[number]
    question = (plan.predictions + plan.discussion)[index]
    if number == 8 and not GEMMA_SUPPORTED:
        pytest.skip("the atlas's answers read Gemma 3, which needs transformers >= 5")
    answer = question.answer(evidence)
    assert isinstance(answer, str) and answer.strip() and re.search(r"\d", answer), (question.text, answer)
    assert "nan" not in answer.split(), answer


def test_the_teacher_notes_fold_every_answer(evidence, monkeypatch):
    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))
    notes = seminar.teacher_notes(4, evidence).data
    assert notes.startswith('<details class="anatomy-teacher-notes">') and "Misconceptions to expect" in notes
    assert "When a group's result differs" in notes and "-0.50" in notes


@pytest.mark.parametrize("number", [n for n in sorted(seminar.PLANS) if n])
def test_group_verdicts_come_from_the_store_in_seconds(committed_lab, number, monkeypatch):
    from anatomy_lib.core.adapter import GEMMA_SUPPORTED

    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))
    plan = seminar.PLANS[number]
    if _gemma_needed(number) and not GEMMA_SUPPORTED:
        pytest.skip("a group reads Gemma 3, which needs transformers >= 5")
    started = time.perf_counter()
    table = seminar.group_verdicts(committed_lab, number, plan.groups, read_only=True, missing="mark")
    assert time.perf_counter() - started < 120  # loaded, never computed
    assert list(table.columns[-len(plan.groups):]) == list(plan.groups) and len(table)
    assert table[list(plan.groups)].notna().all().all()
    not_stored = {(number, name) for name in plan.groups if (table[name] == seminar.NOT_STORED).all()}
    assert not_stored <= KNOWN_NOT_STORED, not_stored
    for name in plan.groups:  # every stored group judges at least one claim, or gives another model's values
        assert (number, name) in not_stored or table[name].isin(
            ["reproduced", "partly reproduced", "not reproduced", "inconclusive", "not comparable"]).any() or (
            number == 1 and table[name].str.endswith(f"({seminar.ANOTHER_MODEL})").all())


def test_chapter_1_on_another_model_gives_its_values_not_verdicts(committed_lab, monkeypatch):
    """Chapter 1 describes the paper's specimen: Gemma's depth is not a failed reproduction of SmolLM2's."""
    from anatomy_lib.core.adapter import GEMMA_SUPPORTED

    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))
    if not GEMMA_SUPPORTED:
        pytest.skip("Gemma 3 needs transformers >= 5")
    plan = seminar.PLANS[1]
    mine, gemma = list(plan.groups)
    table = seminar.group_verdicts(committed_lab, 1, plan.groups, read_only=True).set_index("claim")
    assert table.loc["decoder layers", mine] == "reproduced"
    assert table.loc["decoder layers", gemma] == f"18 ({seminar.ANOTHER_MODEL})"
    assert not table[gemma].isin(["reproduced", "partly reproduced", "not reproduced"]).any()


def test_a_group_that_is_not_stored_raises_unless_marked(committed_lab, monkeypatch):
    from anatomy_lib.core.adapter import GEMMA_SUPPORTED
    from anatomy_lib.core.lab import NotStored

    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))
    if not GEMMA_SUPPORTED:
        pytest.skip("Gemma 3 needs transformers >= 5")
    unstored = {"a selection of text nobody stored": {"blocks_seed": 987_654}}
    with pytest.raises(NotStored):
        seminar.group_verdicts(committed_lab, 1, unstored, read_only=True)
    marked = seminar.group_verdicts(committed_lab, 1, unstored, read_only=True, missing="mark")
    assert (marked["a selection of text nobody stored"] == seminar.NOT_STORED).all()
    with pytest.raises(ValueError, match="choose one of"):
        seminar.group_verdicts(committed_lab, 11, {"defaults": {}})


def test_the_frontier_group_sits_beside_the_small_budget(committed_lab, monkeypatch):
    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))
    groups = seminar.PLANS[7].groups
    table = seminar.group_verdicts(committed_lab, 7, groups, read_only=True)
    small, frontier = list(groups)
    assert (table[frontier] != seminar.NOT_STATED).any() and (table[small] != seminar.NOT_STATED).any()
    # each experiment's claims sit in its own column: no claim is judged twice
    assert not ((table[frontier] != seminar.NOT_STATED) & (table[small] != seminar.NOT_STATED)).any()


@pytest.mark.specimen
def test_group_verdicts_put_two_stored_selections_of_text_side_by_side(real_specimen, monkeypatch):
    from anatomy_lib import open_lab

    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))  # the committed store, read only

    lab = open_lab(real_specimen, "quick", progress=False).read_only()
    table = seminar.group_verdicts(lab, 2, {"defaults": {}, "seed 1": {"blocks_seed": 1, "seed": 1}},
                                   modes=("neighbor_mean",), read_only=True)
    assert list(table.columns) == ["claim", "paper", "defaults", "seed 1"]
    assert len(table) == 6 and table[["defaults", "seed 1"]].notna().all().all()


def test_every_pre_reading_is_a_section_of_its_page_that_does_not_show_results():
    from anatomy_lib.seminar.sheets import heading_id, page_of

    for number, plan in seminar.PLANS.items():
        headings = [text for _, text in seminar.page_headings(page_of(plan))]
        for section in (plan.reading[0], *plan.reading_also):
            assert section in headings, (number, section, headings)
            # a pre-reading explains the method: never the findings, the claims table or the conclusions
            assert not re.search(r"finds|found|Paper vs|conclude|Every claim", section), (number, section)
        assert page_of(plan) in seminar.reading_html(plan)
    assert heading_id("The paper's protocol at a small budget: the models") == \
        "the-paper-s-protocol-at-a-small-budget-the-models"
    assert heading_id("3. Weight predictability") == "weight-predictability"


def test_every_pre_reading_says_where_to_stop_and_stops_before_the_findings():
    import html

    from anatomy_lib.seminar.plans import INTRO_SECTIONS
    from anatomy_lib.seminar.sheets import page_of, page_text

    for number, plan in seminar.PLANS.items():
        page = page_of(plan)
        headings = [text for _, text in seminar.page_headings(page)]
        shown = html.unescape(seminar.reading_html(plan))
        for sections, stop in seminar.reading_spans(plan):
            assert stop in headings, (number, sections, stop)  # the stop is a heading of the page itself
            read = headings[headings.index(sections[0]):headings.index(stop)]
            assert not any(re.search(r"finds|found|Paper vs", h) for h in read), (number, read)
            assert f"up to (not including) the section '{stop}'" in shown or plan.reading_stop, (number, shown)
        if plan.reading_stop:  # a stop inside the section: the paragraph exists, inside what is read
            text = page_text(page)
            first, stop = seminar.reading_spans(plan)[0][0][0], seminar.reading_spans(plan)[0][1]
            assert text.index(first) < text.index(plan.reading_stop) < text.index(f"# {stop}")
            assert f"the paragraph that begins '{plan.reading_stop}" in shown
    # a chapter's opening stops at its first section (chapter 3's first section explains why a fit interpolates)
    assert seminar.reading_stop("03_predictability", seminar.PLANS[3].reading[0]) == \
        [t for _, t in seminar.page_headings("03_predictability")][1]
    # the set-up session reads how to read the book and skips the introduction's findings
    zero = html.unescape(seminar.reading_html(seminar.PLANS[0]))
    findings = [t for _, t in seminar.page_headings("intro")][1]
    assert "found" in findings and f"skip '{findings}'" in zero
    assert all(f"'{section}'" in zero for section in INTRO_SECTIONS)
    with pytest.raises(ValueError, match="its headings"):
        seminar.reading_stop("03_predictability", "no such section")



# ---- what the groups' cells and the teacher's notes say -------------------------------------------------------
def test_a_group_whose_claim_reads_otherwise_names_its_own_claim_in_its_cell():
    assert seminar.own_wording("PPL after substituting layer(s) 10-19", "PPL after substituting layer(s) 6-11") == \
        "layer(s) 6-11"
    assert seminar.own_wording("L11 alone", "L6 alone") == "L6"  # the claim's subject stands alone
    assert seminar.own_wording("critical core", "critical core") == ""
    cell = seminar.groups.with_wording("reproduced", "PPL after substituting layer(s) 15", "PPL after substituting "
                                       "layer(s) 9")
    assert cell == f"reproduced ({seminar.OWN_CLAIM}: layer(s) 9)" and seminar.verdict_word(cell) == "reproduced"
    assert seminar.verdict_word(seminar.NOT_STATED) is None and seminar.verdict_word(float("nan")) is None


def test_the_gemma_group_names_the_layers_it_substituted(committed_lab, monkeypatch):
    from anatomy_lib.core.adapter import GEMMA_SUPPORTED
    from anatomy_lib.seminar.groups import _one_group
    from anatomy_lib.verdicts import CHAPTERS

    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))
    if not GEMMA_SUPPORTED:
        pytest.skip("Gemma 3 needs transformers >= 5")
    plan = seminar.PLANS[3]
    table = seminar.group_verdicts(committed_lab, 3, plan.groups, read_only=True)
    mine, gemma = list(plan.groups)
    own = _one_group(committed_lab, CHAPTERS[[c.number for c in CHAPTERS].index(3)], plan.groups[gemma], False,
                     True, {})
    for (_, row), claim in zip(table.iterrows(), own):
        if claim.claim == row["claim"]:  # the same words: the cell is the verdict alone
            assert row[gemma] == claim.verdict
        else:  # other layers: the cell says which
            differs = seminar.own_wording(row["claim"], claim.claim)
            assert row[gemma] == f"{claim.verdict} ({seminar.OWN_CLAIM}: {differs})"
            assert seminar.OWN_CLAIM not in row[mine]
    assert table[gemma].str.contains(seminar.OWN_CLAIM, regex=False).any()


def test_group_agreement_is_computed_from_the_table():
    table = pd.DataFrame({"claim": ["a", "b", "c", "d"], "paper": ["", "", "", ""],
                          "one": ["reproduced", "partly reproduced", "not reproduced", seminar.NOT_STATED],
                          "two": ["reproduced", f"reproduced ({seminar.OWN_CLAIM}: layer(s) 6-11)", "not reproduced",
                                  "inconclusive"]})
    sentence = seminar.group_agreement(table, ["one", "two"])
    assert sentence.startswith("The groups agree on 2 of the 3 claims")
    assert '"b": partly reproduced (one) against reproduced (two)' in sentence
    assert "two, 1 claim (1 inconclusive)" in sentence
    apart = table.assign(one=seminar.NOT_STATED)
    assert seminar.group_agreement(apart, ["one", "two"]).startswith("No claim is judged by more than one group")


def test_group_notes_say_what_to_compare_never_what_will_be_found():
    from anatomy_lib.core.rules import VERDICTS

    for number, plan in seminar.PLANS.items():
        note = plan.group_note.lower()
        assert not any(verdict in note for verdict in VERDICTS), (number, plan.group_note)
        assert not re.search(r"robust|both specimens (give|sit)|differs between", note), (number, plan.group_note)


def test_the_teacher_notes_show_the_groups_table_in_a_sentence(committed_lab, evidence, monkeypatch):
    import html

    from anatomy_lib.core.adapter import GEMMA_SUPPORTED

    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))
    if not GEMMA_SUPPORTED:
        pytest.skip("Gemma 3 needs transformers >= 5")
    plan = seminar.PLANS[3]
    table = seminar.group_verdicts(committed_lab, 3, plan.groups, read_only=True, missing="mark")
    notes = html.unescape(seminar.teacher_notes(3, evidence, groups_table=table).data)
    assert "What the groups' table shows" in notes
    assert seminar.group_agreement(table, plan.groups) in notes


# ---- session 7: the two regimes, the sizing, the jigsaw --------------------------------------------------------
def test_session_seven_is_a_jigsaw_after_a_live_frontier():
    from anatomy_lib.seminar import plans

    plan = seminar.PLANS[7]
    live = next(s for s in plan.segments if s.shows and plan.segments.index(s) > 1)
    assert set(live.shows) == {"the frontier figure", plans.SPEEDUP_TABLE}  # the compute-optimal experiment only
    jigsaw = [s for s in plan.segments if plans.FINAL_LOSS_TABLE in s.shows]
    assert jigsaw and "Jigsaw" in jigsaw[0].activity and set(plan.group_tasks) == set(plan.groups)
    assert all("explains its verdicts to the other" in task for task in plan.group_tasks.values())
    assert plan.predictions[0].answered_by == plans.SPEEDUP_TABLE
    assert seminar.order_problems(plan) == []
    # the answering outputs are named as the page names them: its caption, its sections
    source = (ROOT / "book" / "07_growth.ipynb").read_text()
    assert plans.SPEEDUP_CAPTION in source
    headings = [t for _, t in seminar.page_headings("07_growth")]
    assert plans.FRONTIER_SECTION in headings and "Loss against compute" in headings
    assert plans.SMALL_BUDGET_SECTION in headings


def test_the_speedup_table_has_the_column_session_seven_names(evidence, monkeypatch):
    from anatomy_lib import growth
    from anatomy_lib.seminar import plans

    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))
    tables = evidence.tables(7)
    summary = growth.frontier_speedup_summary(tables["frontier"], tables["frontier_params"])
    assert plans.SPEEDUP_COLUMN in summary.columns


def test_growth_is_answered_in_both_regimes(evidence, monkeypatch):
    from anatomy_lib.core.display import estimate_text
    from anatomy_lib.core.stats import t_interval
    from anatomy_lib.growth import frontier_analysis

    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))
    answer = seminar.answers.answer_growth_vs_uniform(evidence)
    final = evidence.tables(7)["runs"].pivot(index="seed", columns="arm", values="final_val_loss")
    for control in ("uniform", "shallow"):  # the small budget: against uniform and against the shallow control
        gap = t_interval((final["gstack"] - final[control]).to_numpy())
        assert f"minus {control} {estimate_text(*gap, decimals=3)}" in answer
    found, params = seminar.answers._frontier(evidence)
    at_c = frontier_analysis.speedups(found["finals"], (1.0,), reference=f"depth{params.target_layers}")
    gstack = at_c[at_c["arm"] == "gstack"].iloc[0]
    assert f"G_stack {gstack.speedup:.2f}x [{gstack.ci_low:.2f}, {gstack.ci_high:.2f}]" in answer
    assert "small budget" in answer and "read at C*" in answer  # which comparison the verdict uses
    convince = seminar.answers.answer_equal_steps(evidence)
    frontier = seminar.answers.frontier_report.speedup_table(found)
    row = frontier[(frontier["arm"] == "gstack") & (frontier["multiple"] == 1.0)].iloc[0]
    assert "interval lies wholly above 1" in convince
    assert f"G_stack {row.speedup:.2f}x [{row.ci_low:.2f}, {row.ci_high:.2f}]" in convince


def test_session_seven_sizing_comes_from_the_library(evidence, monkeypatch):
    import math

    from anatomy_lib.growth import FrontierParams
    from anatomy_lib.seminar import answers, plans

    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))
    design = FrontierParams.for_profile("quick")
    in_class = next(s for s in plans.PLANS[7].segments if s.answer is not None)
    assert str(design.width) in in_class.activity and str(design.target_layers) in in_class.activity
    worked = in_class.answer(evidence)
    assert f"{design.body_parameters:,}" in worked and f"C* = {design.c_star:.3g}" in worked
    sized = min((design.at_width(16 * k) for k in range(1, 129)),
                key=lambda p: abs(math.log(p.c_star / answers.SIZING_BUDGET_FLOPS)))
    model = plans.PLANS[7].homework.model_answer(evidence)
    assert f"Width {sized.width} " in model and f"{sized.body_parameters:,} body parameters" in model
    assert f"C* = {sized.c_star:.3g}" in model
    question = plans.PLANS[7].homework.question
    assert all(str(n) in question for n in (design.context, design.target_layers, design.width // design.heads))
    assert "body parameter" in question and "embedding" in question


# ---- homework ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("number", sorted(seminar.PLANS))
def test_every_homework_has_a_model_answer_in_the_notes_and_not_on_the_sheet(evidence, number, monkeypatch):
    import html

    from anatomy_lib.core.adapter import GEMMA_SUPPORTED

    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED.parent))
    plan = seminar.PLANS[number]
    if number in (1, 8) and not GEMMA_SUPPORTED:
        pytest.skip("the model answer reads Gemma 3, which needs transformers >= 5")
    assert plan.homework.model_answer is not None, number
    model = plan.homework.model_answer(evidence)
    assert model.strip() and re.search(r"\d", model) and "nan" not in model.split(), model
    assert seminar.inline(model) in seminar.teacher_notes(number, evidence, groups_table=pd.DataFrame(
        columns=["claim", "paper", *plan.groups])).data
    assert html.unescape(seminar.inline(model)) not in html.unescape(seminar.handout(number).data)


def test_homework_questions_are_tight_and_not_repeated():
    homework = [k for plan in seminar.PLANS.values() for k in plan.homework.exercises]
    assert len(homework) == len(set(homework)), "an exercise is set as homework twice"
    three = seminar.PLANS[3].homework.question
    assert "only the other layers' weights" in three and "above 0" in three  # no constant can pass
    assert "this CPU" not in seminar.PLANS[6].homework.question


# ---- the handout's words ---------------------------------------------------------------------------------------
def test_a_sheet_defines_c_star_where_it_first_uses_it():
    from anatomy_lib.seminar.sheets import SHEET_TERMS, define_terms

    claims = pd.DataFrame({"chapter": [7], "Claim": ["developmental (the paper's arm): compute to reach the target "
                                                     "depth's loss at C*"], "Paper": ["2.17x"]})
    nine = seminar.handout(9, claims).data
    at = nine.index("C*")
    assert nine[at:].startswith(f"C* ({SHEET_TERMS['C*']})")
    seven = seminar.handout(7, claims).data
    assert seven[seven.index("C*") + 2:].lstrip().startswith("(")  # the homework defines it where it first appears
    assert define_terms("no term here") == "no term here"
    assert "one column per condition a group runs" in nine
