"""The verdict rules: a table of (paper, ours) pairs with the verdict each rule must give."""
import math

import pandas as pd
import pytest

from anatomy_lib import verdicts
from anatomy_lib.core import display
from anatomy_lib.core import rules as v

R, P, N, I, C = v.VERDICTS

NUMBER = [  # (paper, ours, low, high, keyword arguments, expected)
    (49.0, -0.5, -0.9, -0.0, {}, N),            # chapter 5: the sign differs, never "partly"
    (49.0, 40.0, 30.0, 50.0, {}, R),            # the paper's value inside our interval
    (49.0, 30.0, 26.0, 34.0, {}, R),            # outside the interval, within a factor of two
    (49.0, 10.0, 8.0, 12.0, {}, P),             # same sign, within an order of magnitude
    (49.0, 2.0, 1.0, 3.0, {}, N),               # same sign, beyond an order of magnitude
    (49.0, 5.0, -10.0, 60.0, {}, I),            # the interval holds both 49 and 0: too imprecise to tell
    (49.0, -5.0, -60.0, 60.0, {}, I),
    (49.0, 10.0, -1.0, 20.0, {}, N),            # positive point, sign not established, paper outside
    (63419.0, 1107.0, 857.0, 1430.0, {"factor": 10 ** 0.5}, N),
    (63419.0, 30000.0, 25000.0, 40000.0, {"factor": 10 ** 0.5}, R),
    (0.91, -0.79, None, None, {"absolute": 0.1}, N),
    (0.91, 0.85, None, None, {"absolute": 0.1}, R),
    (0.91, 0.5, None, None, {"absolute": 0.1}, P),
    (-0.5, -0.498, None, None, {"absolute": 0.05}, R),
    (-0.5, 0.1, None, None, {"absolute": 0.05}, N),
    (1.0, math.nan, None, None, {}, C),
]


@pytest.mark.parametrize("paper, ours, low, high, kwargs, expected", NUMBER)
def test_number_rule(paper, ours, low, high, kwargs, expected):
    assert v.number(paper, ours, low, high, **kwargs) == expected


@pytest.mark.parametrize("ours, low, reference, expected", [
    (250_000.0, 150_000.0, 25.0, R),   # whole interval beyond the bound
    (120_000.0, 90_000.0, 25.0, P),    # point beyond, interval not
    (20_000.0, 15_000.0, 25.0, P),     # within a factor of ten, on the claimed side
    (38.6, 37.0, 25.0, N),             # far below the bound
    (20.0, 19.0, 25.0, N),             # on the wrong side of the reference: never partly
])
def test_bound_rule(ours, low, reference, expected):
    assert v.bound(100_000.0, ours, low, reference=reference) == expected


@pytest.mark.parametrize("paper, ours, expected", [
    ({8, 9, 10, 11}, {8, 9, 10, 11}, R),
    ({8, 9, 10, 11}, {8, 9, 10}, R),         # Jaccard 0.75
    ({8, 9, 10, 11}, {11}, P),               # Jaccard 0.25
    ({8, 9, 10, 11}, {0, 1, 11}, N),         # Jaccard 1/6
    ({14, 17}, set(), N),
    (set(), set(), R),
])
def test_layer_set_rule(paper, ours, expected):
    assert v.layer_set(paper, ours) == expected


@pytest.mark.parametrize("holds, total, expected", [(7, 7, R), (4, 7, P), (14, 29, N), (0, 3, N), (0, 0, C)])
def test_share_rule(holds, total, expected):
    assert v.share(holds, total) == expected


@pytest.mark.parametrize("difference, low, high, kwargs, expected", [
    (-0.386, -0.802, 0.029, {"paper_direction": -1}, I),     # right direction, interval includes zero: low power
    (-0.386, -0.802, 0.029, {"paper_direction": -1, "paper_size": 0.47}, I),  # ... and the paper's size
    (-0.05, -0.10, 0.01, {"paper_direction": -1, "paper_size": 0.47}, N),     # includes zero, excludes the size
    (-0.5, -0.8, -0.2, {"paper_direction": -1}, R),
    (0.3, 0.1, 0.5, {"paper_direction": -1}, N),             # established the other way
    (0.78, 0.68, 0.88, {"paper_size": 0.54}, R),
    (0.10, 0.05, 0.15, {"paper_size": 0.54}, P),             # direction established, under half the size
    (0.068, -0.008, 0.143, {"paper_size": 3.7}, N),          # an effect smaller than claimed is established
    (-0.08, -0.74, 0.69, {}, I),                              # a correlation over 9 layers: compatible with both
    (0.0, 0.0, 0.0, {}, N),                                   # no difference at all, known exactly
    (math.nan, 0.0, 1.0, {}, C),
])
def test_comparison_rule(difference, low, high, kwargs, expected):
    assert v.comparison(difference, low, high, **kwargs) == expected


def test_qualitative_and_uninformative_rules():
    assert (v.qualitative(True), v.qualitative(False), v.qualitative(None)) == (R, N, C)
    # in-sample R^2 of 1.00 against the paper's 0.91: never read as support
    assert v.uninformative() == C


def test_weakest_and_rules_table():
    assert v.weakest(R, P) == P and v.weakest(R, N, P) == N and v.weakest(R, C) == C and v.weakest(N, I) == I
    table = v.rules_table()
    assert set(table["rule"]) == set(v.RULES) and list(table.columns[1:]) == list(v.VERDICTS)
    assert list(v.control_rules_table()["survives its control"]) == [*v.SURVIVES, v.NOT_HELD, v.NO_CONTROL]


def test_detectable_difference_at_80_percent_power():
    """A 95% interval of half-width h detects (1.96 + 0.84) / 1.96 h = 1.43 h with 80% power."""
    assert v.detectable_difference(-1.0, 1.0) == pytest.approx((1.959964 + 0.841621) / 1.959964, rel=1e-5)
    assert v.detectable_difference(0.0, 0.5) == pytest.approx(0.25 * 1.42941, rel=1e-4)
    assert "80% power: 0.71" in v.power_text(-0.5, 0.5, "{:.2f}")
    # a correlation cannot exceed 1: an interval too wide to detect any is said so, never "detectable: 1.02"
    assert v.power_text(-0.74, 0.69, "{:.2f}", bound=1.0) == ("no effect of any possible size (up to 1.00) is "
                                                             "detectable at 80% power")
    assert "80% power: 0.71" in v.power_text(-0.5, 0.5, "{:.2f}", bound=1.0)


def test_claims_name_a_known_verdict_and_rule():
    with pytest.raises(ValueError, match="choose one of"):
        v.Claim("x", "1", "2", "kind of")
    with pytest.raises(ValueError, match="unknown rule"):
        v.Claim("x", "1", "2", R, rule="vibes")
    with pytest.raises(ValueError, match="unknown kind"):
        v.Claim("x", "1", "2", R, kind="anecdote")
    with pytest.raises(ValueError, match="unknown control outcome"):
        v.Claim("x", "1", "2", R, survives="maybe")
    table = v.claims_table([v.Claim("x", "1", "1", R, rule="number")])
    assert list(table.columns) == ["Claim", "Paper", "Ours", "Verdict", "Note", "Rule"]
    two = v.claims_table(v.in_experiment("a", [v.Claim("x", "1", "1", R)], kind=v.MAGNITUDE)
                         + v.in_experiment("b", [v.Claim("y", "1", "1", R)]))
    assert list(two["Experiment"]) == ["a", "b"] and list(two["Kind"]) == ["magnitude", "pattern"]


def test_other_evidence_for_the_same_claims_stands_beside_them():
    held = [v.Claim("x", "1", "1", R, survives=v.SURVIVES_NO, kind=v.PATTERN), v.Claim("y", "1", "2", N)]
    other = [v.Claim("x", "1", "1", R, survives=v.SURVIVES_YES)]
    table = v.claims_table(held, {"Elsewhere": other})
    assert list(table.columns) == ["Claim", "Paper", "Ours", "Verdict", v.SURVIVES_COLUMN, "Elsewhere", "Note",
                                   "Rule", "Kind"]
    assert list(table["Elsewhere"]) == ["supported", "not stated"]  # by the claim's name; none: said so
    assert list(table[v.SURVIVES_COLUMN]) == ["no", v.NO_CONTROL]  # never a blank cell
    # a measurement that does not support its claim is not held to the control it names: the cell says so
    unheld = v.Claim.held_to("z", "1", "5", N, "", "number", [v.ControlCheck("sham", R, "the sham does it too")])
    assert unheld.survives == "" and unheld.control == "sham"
    assert list(v.claims_table([held[0], unheld])[v.SURVIVES_COLUMN]) == ["no", v.NOT_HELD]
    html = display.show_claims(held, {"Elsewhere": other}).to_html()
    assert 'data-label="Elsewhere"' in html and html.count("background-color: #d9f0d3") >= 1


def test_claims_tables_render_for_a_page():
    claims = [v.Claim("x", "1", "1", R, "a note", "number", experiment="e1"),
              v.Claim("y", "2", "3", N, rule="qualitative", experiment="e2")]
    html = display.show_claims(claims).to_html()
    assert "reproduced" in html and "background-color" in html
    table = v.claims_table(claims).rename(columns=str.capitalize)
    table["Note"] = table["Note"].fillna("")
    book = table.assign(chapter=[2, 3], section=["<a>2</a>", "<a>3</a>"], specimen="s", profile="quick",
                        Standing=[c.standing for c in claims])
    assert 'class="anatomy-claims"' in verdicts.book_table(book).to_html(escape=False)
    # every body cell names its column, so a narrow page can show each claim as a card of labelled lines
    page = verdicts.book_table(book).to_html()
    assert page.count('data-label="Verdict (s, quick profile)"') == 2
    assert page.count("<td ") == page.count("data-label=")
    assert "Specimen, profile" not in page  # one specimen and profile: said once, in the verdict's header
    # a row whose control's part is not stated says why, as a chapter's claims table does
    held = book.assign(Control=["", "the sham"], Survives="")
    assert list(verdicts.book_table(held).styler.data[v.SURVIVES_COLUMN]) == [v.NO_CONTROL, v.NOT_HELD]
    mixed = verdicts.book_table(book.assign(specimen=["s", "t"])).to_html()
    assert "on t, quick" in mixed and "Specimen, profile" not in mixed
    assert html.count('data-label="Note"') == 2
    assert verdicts.verdict_counts(book).loc["findings, chapters 2-7"].sum() == 2
    assert verdicts.headline(book)[0].startswith("Of the paper's 2")
    # chapter 1's facts about the specimen stay out of the findings' total, as out of the headline's count
    fact = book.iloc[:1].assign(chapter=1)
    with_facts = pd.concat([book, fact], ignore_index=True)
    counts = verdicts.verdict_counts(with_facts)
    assert counts.loc["findings, chapters 2-7"].sum() == 2 and counts.loc["1 (the specimen's facts)"].sum() == 1
    assert verdicts.headline(with_facts)[0].startswith("Of the paper's 2")


CONTROLLED = [  # (measurement by the claim's own rule, [(control, verdict against it)], survives, words expected)
    (R, [("shallow control", R)], "yes", ""),                                  # beats its control
    (R, [("shallow control", N)], "no", "the shallow control saves as much"),  # the control does as well
    (R, [("shallow control", R), ("random_source", N)], "no", "random_source"),  # importance adds nothing
    (P, [("shallow control", R)], "yes", ""),
    (R, [("shallow control", P)], "in part", "(in part)"),
    (R, [("shallow control", I)], "no", "not shown to do worse"),                     # not shown to do worse
    (R, [("sham of the same layer", C)], "no", "could not be measured"),      # nothing credits the intervention
    (R, [("every other layer", v.NOT_DISCRIMINATING)], "not discriminating", "no other layer recovers"),
    (N, [("shallow control", N)], "", ""),                                     # nothing to hold: not reproduced
    (C, [("shallow control", R)], "", ""),
]


@pytest.mark.parametrize("own, checks, expected, words", CONTROLLED)
def test_a_measurement_is_held_to_its_controls(own, checks, expected, words):
    said = {"shallow control": "the shallow control saves as much", "random_source": "random_source does as well",
            "sham of the same layer": "the sham could not be measured",
            "every other layer": "no other layer recovers"}
    made = [v.ControlCheck(name, verdict, said[name]) for name, verdict in checks]
    survives, because = v.controlled(own, *made)
    assert survives == expected and words in because
    claim = v.Claim.held_to("a claim", "paper", "ours", own, "", "comparison", made)
    # the measurement is never rewritten by its control: the two parts are read together
    assert claim.verdict == own and claim.survives == expected
    assert claim.control == ", ".join(name for name, _ in checks)


@pytest.mark.parametrize("verdict, survives, expected", [
    (R, "", "supported"), (R, "yes", "supported"), (P, "yes", "supported in part"), (R, "in part", "supported in part"),
    (R, "no", "explained by a control"), (R, "not discriminating", "not discriminating"),
    (P, "not discriminating", "not discriminating"), (P, "no", "explained by a control"),
    (N, "", "not reproduced"), (I, "", "inconclusive"), (C, "", "not comparable")])
def test_standing_reads_a_measurement_with_its_control(verdict, survives, expected):
    assert v.standing(verdict, survives) == expected


def test_an_experiment_of_many_rows_counts_once():
    """Chapter 5's seven rows are one experiment; the headline counts it once, "mixed" where its rows differ."""
    assert v.experiment_standing(["supported"] * 5) == "supported"
    assert v.experiment_standing(["supported", "not reproduced"]) == v.MIXED
    claims = v.in_experiment("compression", [v.Claim(f"row {i}", "1", "1", R, rule="number") for i in range(5)])
    claims += v.in_experiment("growth", [v.Claim(f"g {i}", "1", "1", N, rule="comparison") for i in range(5)])
    table = v.claims_table(claims).rename(columns=str.capitalize).assign(
        chapter=[5] * 5 + [7] * 5, section="", specimen="s", profile="quick", Standing=[c.standing for c in claims])
    by_experiment = verdicts.experiments(table)
    assert list(by_experiment["standing"]) == ["supported", "not reproduced"]
    assert list(by_experiment["claims"]) == [5, 5]
    assert verdicts.headline(table)[0].startswith("Of the paper's 2 experiments")
    assert "over their 10 claims" in verdicts.headline(table)[0]


def test_a_magnitude_on_another_checkpoint_says_so():
    assert "not the paper's SmolLM2-135M" in v.checkpoint_caveat(v.MAGNITUDE, "smollm2-135m-instruct-q4")
    assert v.checkpoint_caveat(v.PATTERN, "smollm2-135m-instruct-q4") == ""
    assert v.checkpoint_caveat(v.MAGNITUDE, "HuggingFaceTB/SmolLM2-135M") == ""
    assert "gemma" in v.checkpoint_caveat(v.MAGNITUDE, "gemma3-270m-q4")


def test_growth_triples_paper_ours_control():
    """(paper, ours, control) for a growth saving: ours meets the paper's 54%, so the rule alone says
    reproduced; a shallow control saving as much says it does not survive, one saving clearly less that it
    does."""
    paper, ours, ours_low, ours_high = 0.54, 0.78, 0.65, 0.87
    own = v.comparison(ours, ours_low, ours_high, paper_size=paper)
    assert own == R
    for control_gap, expected in (((0.0, -0.05, 0.05), "no"), ((0.3, 0.2, 0.4), "yes")):
        check = v.ControlCheck("shallow control", v.comparison(*control_gap), "the shallow control saves as much")
        assert v.controlled(own, check)[0] == expected


def test_a_paired_control_is_judged_by_its_margin_and_the_same_run_is_not_discriminating():
    """Per-seed values paired by seed: a control clearly worse in every seed is beaten; one equal to the last bit
    in every seed is the same run (not discriminating), whatever its interval would say; the sign follows
    ``lower_is_better``; seeds missing on either side are left out of the pairing."""
    subject = pd.Series({0: 3.0, 1: 3.1, 2: 2.9})
    worse = pd.Series({0: 3.5, 1: 3.7, 2: 3.4, 3: 1.0})
    beaten = v.paired_check("shallow control", "the shallow control is as good", subject, worse)
    assert beaten.verdict == R and "gap +0.533" in beaten.words
    assert v.paired_check("c", "w", subject, worse, lower_is_better=False).verdict == v.NOT_REPRODUCED
    same = v.paired_check("c", "the control does as well", subject, subject.copy())
    assert same.verdict == v.NOT_DISCRIMINATING and "same run" in same.words
    assert v.controlled(R, same)[0] == v.NOT_DISCRIMINATING


def test_recovery_triples_paper_ours_sham():
    """(paper, ours, sham) for "recovers almost at once": a layer back within 10 steps by the raw rule, whose
    sham improves as much, has not recovered anything the sham did not."""
    own = v.share(3, 3)
    assert v.controlled(own, v.ControlCheck("sham of the same layer", v.share(1, 3), "the sham moves as much"))[0] \
        == "no"
    assert v.controlled(own, v.ControlCheck("sham of the same layer", v.share(3, 3), "-"))[0] == "yes"


def test_claims_join_by_specimen_with_the_paper_layers_at_each_depth():
    """A second specimen's claims sit beside the first's by chapter and position; where a claim names layers
    the note says which they are at that depth; a chapter it has not stored reads "not run", chapter 1 "describes
    the paper's specimen"."""
    from anatomy_lib.atlas.figures import claims_table_html

    def claims(rows):
        return pd.DataFrame([dict(zip(["chapter", "Claim", "Paper", "Ours", "Verdict"], r)) for r in rows])

    first = claims([(1, "decoder layers", "30", "30", R), (2, "critical core", "L8, L9, L10, L11", "none", N),
                    (2, "L11 alone", "+63,419%", "+1,107%", N), (6, "L11 does not recover", "> 200", "> 200", R)])
    first = first.assign(Note="", Rule="", section="", specimen="smollm2", profile="quick")
    second = claims([(2, "critical core", "L5, L6", "L4, L5", N), (2, "L6 (the paper's L11 depth) alone", "+63,419%",
                                                                      "+358%", N)])
    table = verdicts.joined_by_specimen(first, "smollm2", {"gemma": second})
    assert table["gemma: test"].tolist() == ["describes the paper's specimen", "generality", "generality", "not run"]
    assert table["gemma: at depth"].tolist() == ["", "the paper's, at this depth: L5, L6",
                                                 "here: L6 (the paper's L11 depth) alone", ""]
    assert verdicts.specimen_note(table.iloc[1].to_dict(), "gemma") == \
        "generality; the paper's, at this depth: L5, L6"
    assert verdicts.specimen_note(table.iloc[1].to_dict(), "gemma", with_test=False) == \
        "the paper's, at this depth: L5, L6"
    page = claims_table_html(table, ["smollm2", "gemma"])
    assert "at this depth: L5, L6" in page and "<i>not run</i>" in page
    assert verdicts.other_specimens(table) == ["gemma"]
    assert "gemma (generality)" in verdicts.book_table(table).to_html(escape=False)


def test_a_claim_holds_on_a_specimen_only_with_its_control():
    """Generality reads a measurement with its control on each specimen: a claim reproduced on both but matched
    by its control (or by every comparison unit) is not "supported on both", and the second specimen's cell says
    whether it survives its control there."""
    def claims(rows):
        table = pd.DataFrame([dict(zip(["chapter", "Claim", "Paper", "Ours", "Verdict", "Survives"], r))
                              for r in rows])
        return table.assign(Standing=[v.standing(r.Verdict, r.Survives) for r in table.itertuples()])

    first = claims([(2, "ends matter", "yes", "yes", R, "yes"), (4, "lag-1 deltas", "0.9", "0.9", R,
                                                                   v.NOT_DISCRIMINATING)])
    first = first.assign(Note="", Rule="", section="", specimen="smollm2", profile="quick")
    second = claims([(2, "ends matter", "yes", "yes", R, "yes"), (4, "lag-1 deltas", "0.9", "0.8", R,
                                                                    v.NOT_DISCRIMINATING)])
    table = verdicts.joined_by_specimen(first, "smollm2", {"gemma": second})
    assert table["gemma: standing"].tolist() == ["supported", "not discriminating"]
    said = verdicts.generality_sentences(table, ["smollm2", "gemma"])
    assert "Supported on both: ends matter (chapter 2)." in said
    assert not any("lag-1" in s for s in said if s.startswith("Supported"))
    assert "read with their controls there, 1 supported, 1 not discriminating" in said[0]
    assert "survives its control: not discriminating" in verdicts.specimen_note(table.iloc[1].to_dict(), "gemma")


def test_sensitivity_finds_the_claims_whose_standing_moves():
    def claims_at(cut):
        return [v.Claim("steady", "x", "y", v.REPRODUCED),
                v.Claim("moving", "x", "y", v.REPRODUCED if cut <= 1 else v.NOT_REPRODUCED),
                *([v.Claim("only low", "x", "y", v.PARTLY)] if cut < 2 else [])]

    grid = v.sensitivity(claims_at, (0.5, 1, 2), "cut", 1)
    assert v.robust_claims(grid).to_dict() == {"steady": True, "moving": False, "only low": True}
    wide = v.sensitivity_table(grid, "cut")
    assert wide.columns.tolist() == ["claim", "0.5", "1 (book)", "2", "same across the grid"]
    assert wide.set_index("claim").loc["only low", "2"] == "not stated"
    by_value = v.sensitivity_table(grid, "cut", by_value=True)
    assert by_value["cut"].tolist() == ["0.5", "1 (book)", "2"] and "moving" in by_value.columns
    sentence = v.sensitivity_sentence(grid, {"cut": "cut at"})
    assert sentence.startswith("2 of 3 claims keep their standing")
    assert '"moving" (supported at the book\'s values; cut at 2: not reproduced)' in sentence
