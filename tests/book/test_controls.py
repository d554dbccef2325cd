"""No verdict in the book contradicts a control the book shows: the committed results, read as chapter 9 reads
them, checked against the controls computed here directly from the same stored tables. Nothing is computed:
every result must come from the committed store (a missing one fails the test at once)."""
from pathlib import Path

import pytest

from anatomy_lib import verdicts
from anatomy_lib.core.lab import open_lab
from anatomy_lib.core.results import DATA_ENV, ResultStore
from anatomy_lib.core.rules import NOT_REPRODUCED, PARTLY, REPRODUCED
from anatomy_lib.core.stats import t_interval
from anatomy_lib.growth import GrowthParams, growth
from anatomy_lib.recovery import MAIN_CRITERION, RecoveryParams, judged_layers, judged_runs, main_protocol
from anatomy_lib.recovery import compute as recovery_compute

SUPPORT = ("supported", "supported in part")  # standings (rules.standing): a measurement read with its control
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def committed_store():
    """The repository's committed results, read only: a request the store does not hold is an error, never a
    computation."""
    loaded = ResultStore.load

    def committed_only(self, diagnostic, request):
        found = loaded(self, diagnostic, request)
        if found is None:
            raise AssertionError(f"no committed {diagnostic} result for the chapters' defaults: run make results")
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(DATA_ENV, str(ROOT / "data"))
        patch.setattr(ResultStore, "load", committed_only)
        yield


@pytest.fixture(scope="module")
def book(real_specimen, committed_store):
    lab = open_lab(real_specimen, "quick", progress=False)
    return lab, verdicts.book_claims(lab)


def test_a_claim_its_control_explains_is_never_counted_as_support(book):
    """A measurement that passes its rule but not its control keeps its measurement verdict, says which control
    and what it showed, and is counted as "explained by a control" (or "not discriminating", where every
    comparison unit does the same), never as supported."""
    _, table = book
    knocked = table[table["Survives"].isin(["no", "not discriminating"])]
    assert knocked["Verdict"].isin([REPRODUCED, PARTLY]).all()
    assert all(row.Control and row.Because for row in knocked.itertuples())
    assert (knocked["Standing"] == knocked["Survives"].map({"no": "explained by a control",
                                                            "not discriminating": "not discriminating"})).all()
    headline = " ".join(verdicts.headline(table))
    assert len(knocked) == 0 or f"{len(knocked)} claims pass their own rule but not the control" in headline


def test_no_growth_verdict_credits_growth_that_its_controls_match(book, committed_store):
    """If the developmental arm does not beat the shallow model at the same FLOPs (or random layer choice),
    paired by seed with the interval excluding zero, no chapter-7 row may say reproduced or partly."""
    _, table = book
    runs = growth(GrowthParams(), progress=False)["runs"]
    final = runs.pivot(index="seed", columns="arm", values="final_val_loss")
    beats = {control: t_interval(final[control] - final["developmental"])[1] > 0
             for control in ("shallow", "random_source")}
    rows = table[table["chapter"] == 7]
    assert len(rows) and all(row.Control for row in rows.itertuples())
    if not all(beats.values()):
        supported = rows[rows["Standing"].isin(SUPPORT)]
        assert supported.empty, supported[["Claim", "Verdict", "Survives", "Because"]]


def test_no_recovery_verdict_credits_recovery_the_sham_explains(book):
    """A chapter-6 row that says layers recover (almost at once) must hold against the sham of the same layer:
    recomputed here from the stored per-block NLLs."""
    lab, table = book
    params = RecoveryParams.for_profile("quick").resolved(lab)
    tables = recovery_compute(lab, params, progress=False)
    layers = judged_layers(judged_runs(tables, MAIN_CRITERION), main_protocol(params))
    classes = dict(zip(tables["importance"]["layer"], tables["importance"]["class"]))
    easy = layers[layers["layer"].map(classes).isin(["connective tissue", "output processor"])]
    fast = easy["recovered"] & (easy["steps_to_recover"] <= params.quick_steps)
    row = table[(table["chapter"] == 6) & table["Claim"].str.contains("almost at once")]
    assert len(row) == 1 and row["Control"].iloc[0] == "sham of the same layer"
    if len(easy) and not fast.all():
        assert row["Standing"].iloc[0] != "supported"
    if 2 * int(fast.sum()) < len(easy):
        assert row["Standing"].iloc[0] not in SUPPORT


def test_every_explanation_the_book_tests_is_stated_from_committed_results(book):
    """Chapter 9's "explanations tested": rows for chapters 2 to 4, each from committed results (none
    "not run"), each naming exactly the chapter's claims that are not reproduced."""
    lab, table = book
    tested = verdicts.explanations(table, [lab.read_only()], "quick")
    # chapter 2: the operator, massive activations (causal), half precision; chapters 3 and 4: quantisation
    assert set(tested["chapter"]) == {2, 3, 4} and len(tested) == 5
    assert "not run" not in set(tested["showed"])
    for _, row in tested.iterrows():
        named = table[(table["chapter"] == row["chapter"]) & (table["Verdict"] == NOT_REPRODUCED)]["Claim"]
        assert row["claims not reproduced"] == ("; ".join(named) or "none")


def test_the_atlas_draws_recovery_against_the_sham(real_specimen, committed_store):
    """Chapter 8's recovery panel is chapter 6's main criterion (the share undone against the sham of the same
    layer), not the raw share that chapter argues against."""
    from anatomy_lib.atlas.compute import recovery_rows
    from anatomy_lib.recovery import Criterion

    lab = open_lab(real_specimen, "quick", progress=False)
    rows = recovery_rows(lab)
    tables = recovery_compute(lab.read_only(), progress=False)
    protocol = rows["protocol"].iloc[0]
    sham, raw = (judged_runs(tables, c, lab.profile.n_boot) for c in (MAIN_CRITERION, Criterion("baseline", 0.9)))
    assert rows["recovered_fraction"].tolist() == pytest.approx(
        sham.loc[sham["protocol"] == protocol, "recovered_fraction"].tolist())
    assert rows["recovered_fraction"].tolist() != pytest.approx(
        raw.loc[raw["protocol"] == protocol, "recovered_fraction"].tolist())


def test_the_introductions_key_findings_are_the_verdicts_table_rows(book):
    """The intro's three sentences name each key claim's standing exactly as chapter 9's table has it, and link to
    the chapter section that computes it."""
    _, table = book
    sentences = verdicts.key_findings(table)
    assert len(sentences) == len(verdicts.KEY_CLAIMS)
    for sentence, (chapter, claim) in zip(sentences, verdicts.KEY_CLAIMS):
        row = table[(table["chapter"] == chapter) & (table["Claim"] == claim)].iloc[0]
        assert f"**{row['Standing']}**" in sentence and str(row["Ours"]) in sentence
        assert f'href="0{chapter}_' in sentence and f"#{verdicts.SECTION}" in sentence
