"""The verdict rules: a table of (paper, ours) pairs with the verdict each rule must give."""
import math

import pandas as pd
import pytest

from anatomy_lib import verdicts
from anatomy_lib.core import display
from anatomy_lib.core import rules as v

R, P, N, C = v.VERDICTS

NUMBER = [  # (paper, ours, low, high, keyword arguments, expected)
    (49.0, -0.5, -0.9, -0.0, {}, N),            # chapter 5: the sign differs, never "partly"
    (49.0, 40.0, 30.0, 50.0, {}, R),            # the paper's value inside our interval
    (49.0, 30.0, 26.0, 34.0, {}, R),            # outside the interval, within a factor of two
    (49.0, 10.0, 8.0, 12.0, {}, P),             # same sign, within an order of magnitude
    (49.0, 2.0, 1.0, 3.0, {}, N),               # same sign, beyond an order of magnitude
    (49.0, 5.0, -10.0, 60.0, {}, C),            # the interval holds both 49 and 0: too imprecise
    (49.0, -5.0, -60.0, 60.0, {}, C),
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
    (-0.386, -0.802, 0.029, {"paper_direction": -1}, N),     # right direction, interval includes zero
    (-0.5, -0.8, -0.2, {"paper_direction": -1}, R),
    (0.3, 0.1, 0.5, {"paper_direction": -1}, N),             # established the other way
    (0.78, 0.68, 0.88, {"paper_size": 0.54}, R),
    (0.10, 0.05, 0.15, {"paper_size": 0.54}, P),             # direction established, under half the size
    (0.068, -0.008, 0.143, {"paper_size": 3.7}, N),
    (math.nan, 0.0, 1.0, {}, C),
])
def test_comparison_rule(difference, low, high, kwargs, expected):
    assert v.comparison(difference, low, high, **kwargs) == expected


def test_qualitative_and_uninformative_rules():
    assert (v.qualitative(True), v.qualitative(False), v.qualitative(None)) == (R, N, C)
    # in-sample R^2 of 1.00 against the paper's 0.91: never read as support
    assert v.uninformative() == C


def test_weakest_and_rules_table():
    assert v.weakest(R, P) == P and v.weakest(R, N, P) == N and v.weakest(R, C) == C
    table = v.rules_table()
    assert set(table["rule"]) == set(v.RULES) and list(table.columns[1:]) == list(v.VERDICTS)


def test_claims_name_a_known_verdict_and_rule():
    with pytest.raises(ValueError, match="choose one of"):
        v.Claim("x", "1", "2", "kind of")
    with pytest.raises(ValueError, match="unknown rule"):
        v.Claim("x", "1", "2", R, rule="vibes")
    table = v.claims_table([v.Claim("x", "1", "1", R, rule="number")])
    assert list(table.columns) == ["Claim", "Paper", "Ours", "Verdict", "Note", "Rule"]


def test_claims_tables_render_for_a_page():
    claims = [v.Claim("x", "1", "1", R, "a note", "number"), v.Claim("y", "2", "3", N, rule="qualitative")]
    html = display.show_claims(claims).to_html()
    assert "reproduced" in html and "background-color" in html
    table = v.claims_table(claims).rename(columns=str.capitalize)
    table["Note"] = table["Note"].fillna("")
    book = table.assign(chapter=[2, 3], section=["<a>2</a>", "<a>3</a>"], specimen="s", profile="quick")
    assert 'class="anatomy-claims"' in verdicts.book_table(book).to_html(escape=False)
    # every body cell names its column, so a narrow page can show each claim as a card of labelled lines
    page = verdicts.book_table(book).to_html()
    assert page.count('data-label="Verdict"') == 2 and page.count("<td ") == page.count("data-label=")
    assert html.count('data-label="Note"') == 2
    assert verdicts.verdict_counts(book).loc["findings, chapters 2-7"].sum() == 2
    assert verdicts.headline(book)[0].startswith("Of the paper's 2")
    # chapter 1's facts about the specimen stay out of the findings' total, as out of the headline's count
    fact = book.iloc[:1].assign(chapter=1)
    with_facts = pd.concat([book, fact], ignore_index=True)
    counts = verdicts.verdict_counts(with_facts)
    assert counts.loc["findings, chapters 2-7"].sum() == 2 and counts.loc["1 (the specimen's facts)"].sum() == 1
    assert verdicts.headline(with_facts)[0].startswith("Of the paper's 2")


CONTROLLED = [  # (verdict by the claim's own rule, [(control, verdict against it)], expected verdict, words expected)
    (R, [("shallow control", R)], R, ""),                                   # beats its control: stands
    (R, [("shallow control", N)], N, "the shallow control saves as much"),  # the control does as well
    (R, [("shallow control", R), ("random_source", N)], N, "random_source"),  # importance adds nothing
    (P, [("shallow control", R)], P, ""),
    (R, [("shallow control", P)], P, "(in part)"),
    (R, [("sham of the same layer", C)], N, "could not be measured"),      # nothing credits the intervention
    (N, [("shallow control", N)], N, ""),                                   # already not reproduced: nothing added
    (C, [("shallow control", R)], C, ""),
]


@pytest.mark.parametrize("own, checks, expected, words", CONTROLLED)
def test_a_verdict_is_held_to_its_controls(own, checks, expected, words):
    said = {"shallow control": "the shallow control saves as much", "random_source": "random_source does as well",
            "sham of the same layer": "the sham could not be measured"}
    made = [v.ControlCheck(name, verdict, said[name]) for name, verdict in checks]
    verdict, because = v.controlled(own, *made)
    assert verdict == expected and words in because
    claim = v.Claim.held_to("a claim", "paper", "ours", own, "", "comparison", made)
    assert claim.verdict == expected and claim.control == ", ".join(name for name, _ in checks)


def test_growth_triples_paper_ours_control():
    """(paper, ours, control) for a growth saving: ours meets the paper's 54%, so the rule alone says
    reproduced; a shallow control saving as much knocks it down, one saving clearly less leaves it standing."""
    paper, ours, ours_low, ours_high = 0.54, 0.78, 0.65, 0.87
    own = v.comparison(ours, ours_low, ours_high, paper_size=paper)
    assert own == R
    for control_gap, expected in (((0.0, -0.05, 0.05), N), ((0.3, 0.2, 0.4), R)):
        check = v.ControlCheck("shallow control", v.comparison(*control_gap), "the shallow control saves as much")
        assert v.controlled(own, check)[0] == expected


def test_recovery_triples_paper_ours_sham():
    """(paper, ours, sham) for "recovers almost at once": a layer back within 10 steps by the raw rule, whose
    sham improves as much, has not recovered anything the sham did not."""
    own = v.share(3, 3)
    assert v.controlled(own, v.ControlCheck("sham of the same layer", v.share(1, 3), "the sham moves as much"))[0] == N
    assert v.controlled(own, v.ControlCheck("sham of the same layer", v.share(3, 3), "-"))[0] == R


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
