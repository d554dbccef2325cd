"""How the book judges a claim: one rule per kind of claim, and the "paper vs this book" tables built from them.

Every verdict in the book comes from one of the rules below, applied to the paper's value and ours (with its
interval where we have one). The rules are stated in words in ``RULES`` (shown in the verdicts chapter) and in
code in the functions of the same names; ``tests/test_verdicts.py`` pins each rule with (paper, ours) pairs.

- ``number``: a value the paper reports. Reproduced when ours agrees (the paper's value inside our interval, or
  within the stated tolerance) *and* has the paper's sign; partly when the sign agrees and ours is within an
  order of magnitude; a sign that differs is never partly.
- ``bound``: the paper reports "above X" (or "below X"). Reproduced when our whole interval is beyond X; partly
  when our point is beyond it or within an order of magnitude of it on the claimed side of the reference.
- ``layer_set``: a set of layers. Reproduced when the Jaccard overlap is at least 0.75, partly from 0.25.
- ``share``: a statement about every member of a group ("every component", "all remaining layers").
  Reproduced when it holds for all, partly when for at least half, not reproduced otherwise.
- ``comparison``: A is better (or larger) than B. Reproduced when the interval of the difference excludes zero
  in the paper's direction (and, where the paper gives a size, ours is at least half of it; smaller is partly);
  a difference whose interval includes zero, or points the other way, is not reproduced.
- ``qualitative``: a yes/no statement we can test directly.
- ``uninformative``: the paper's measure is shown (on the same page) to score as high on a null model; whatever
  its value, it is not evidence for the claim, so the verdict is "not comparable".
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "not comparable")
REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_COMPARABLE = VERDICTS

RULES = {
    "number": ("ours agrees with the paper's value (inside our interval or within the tolerance) and has its sign",
               "same sign, within an order of magnitude, outside the tolerance",
               "the sign differs, or further than an order of magnitude",
               "our interval holds both the paper's value and zero (too imprecise to tell)"),
    "bound": ("our whole interval lies beyond the paper's bound",
              "our point estimate lies beyond it, or within a factor of ten of it on the claimed side",
              "further than a factor of ten from the bound, or on the other side of the reference",
              "-"),
    "layer_set": ("Jaccard overlap of the two sets >= 0.75", "Jaccard >= 0.25", "Jaccard < 0.25", "-"),
    "share": ("holds for every member of the group", "holds for at least half", "holds for fewer than half",
              "no member could be measured"),
    "comparison": ("the difference's interval excludes zero in the paper's direction (and is at least half the "
                   "paper's size, where it gives one)",
                   "direction established, but under half the paper's size",
                   "the interval includes zero, or the difference points the other way",
                   "-"),
    "qualitative": ("the statement holds in our measurement", "-", "it does not hold", "it could not be tested"),
    "uninformative": ("-", "-", "-", "always: the measure scores as high on a null model, so it cannot support "
                                      "the claim"),
}


def _sign(x: float) -> int:
    return int(float(x) > 0) - int(float(x) < 0)


def number(paper: float, ours: float, low: float | None = None, high: float | None = None, *,
           factor: float | None = 2.0, absolute: float | None = None) -> str:
    """A reported value. Agreement: the paper's value inside [low, high], within ``absolute`` of ours, or (if
    ``absolute`` is None) within ``factor`` of it with the same sign."""
    if any(v is not None and math.isnan(v) for v in (paper, ours, low, high)):
        return NOT_COMPARABLE
    interval = low is not None and high is not None
    if _sign(ours) != _sign(paper) and paper != 0:
        if interval and low <= paper <= high and low <= 0 <= high:
            return NOT_COMPARABLE
        return NOT_REPRODUCED
    sign_established = not interval or paper == 0 or (low > 0 if paper > 0 else high < 0)
    inside = interval and low <= paper <= high
    if absolute is not None:
        close = abs(ours - paper) <= absolute
    else:
        close = paper != 0 and 1 / factor <= ours / paper <= factor
    if inside or close:
        return REPRODUCED if sign_established else NOT_COMPARABLE
    if not sign_established:
        return NOT_REPRODUCED
    within_order = paper != 0 and 0.1 <= ours / paper <= 10
    return PARTLY if within_order else NOT_REPRODUCED


def bound(paper_bound: float, ours: float, low: float | None = None, *, above: bool = True,
          reference: float | None = None) -> str:
    """The paper says the value is above (``above``) or below ``paper_bound``; ``reference`` is where "no
    effect" lies (e.g. the intact perplexity): a value on its wrong side is never partly."""
    if math.isnan(ours):
        return NOT_COMPARABLE
    beyond = (lambda v: v > paper_bound) if above else (lambda v: v < paper_bound)
    if low is not None and beyond(low):
        return REPRODUCED
    if reference is not None and (ours <= reference if above else ours >= reference):
        return NOT_REPRODUCED
    near = (ours >= paper_bound / 10) if above else (ours <= paper_bound * 10)
    return PARTLY if beyond(ours) or near else NOT_REPRODUCED


def jaccard(a, b) -> float:
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 1.0


def layer_set(paper, ours) -> str:
    overlap = jaccard(paper, ours)
    return REPRODUCED if overlap >= 0.75 else PARTLY if overlap >= 0.25 else NOT_REPRODUCED


def share(holds: int, total: int) -> str:
    if total == 0:
        return NOT_COMPARABLE
    return REPRODUCED if holds == total else PARTLY if 2 * holds >= total else NOT_REPRODUCED


def comparison(difference: float, low: float, high: float, *, paper_direction: int = 1,
               paper_size: float | None = None) -> str:
    """``difference`` = A - B with its interval; the paper says A - B has the sign ``paper_direction`` (and,
    optionally, at least the magnitude ``paper_size``)."""
    if any(math.isnan(v) for v in (difference, low, high)):
        return NOT_COMPARABLE
    established = low > 0 if paper_direction > 0 else high < 0
    if not established:
        return NOT_REPRODUCED
    if paper_size is not None and abs(difference) < abs(paper_size) / 2:
        return PARTLY
    return REPRODUCED


def qualitative(holds: bool | None) -> str:
    return NOT_COMPARABLE if holds is None else REPRODUCED if holds else NOT_REPRODUCED


def uninformative() -> str:
    return NOT_COMPARABLE


def weakest(*verdicts: str) -> str:
    """The least supportive of several verdicts on parts of one claim (not comparable counts as weakest)."""
    order = (REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_COMPARABLE)
    return max(verdicts, key=order.index)


def rules_table() -> pd.DataFrame:
    """The rule set in words, one row per kind of claim (the verdicts chapter shows it)."""
    return pd.DataFrame([{"rule": name, **dict(zip(VERDICTS, text))} for name, text in RULES.items()])


@dataclass
class Claim:
    claim: str
    paper: str
    ours: str
    verdict: str
    note: str = ""
    rule: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}; choose one of {list(VERDICTS)}")
        if self.rule and self.rule not in RULES:
            raise ValueError(f"unknown rule {self.rule!r}; choose one of {list(RULES)}")


def claims_table(claims: list[Claim]) -> pd.DataFrame:
    return pd.DataFrame([c.__dict__ for c in claims]).rename(columns=str.capitalize)


_COLOURS = {"reproduced": "#d9f0d3", "partly reproduced": "#fee8c8", "not reproduced": "#f4cccc",
            "not comparable": "#e8e8e8"}


def style_claims(table: pd.DataFrame):
    """A styled claims table: verdicts coloured (with text, so colour is never the only cue)."""
    return (table.style.hide(axis="index")
            .map(lambda v: f"background-color: {_COLOURS.get(v, '')}", subset=["Verdict"])
            .set_properties(**{"text-align": "left", "white-space": "normal"}))


def show_claims(claims: list[Claim]):
    return style_claims(claims_table(claims))


def show_findings(sentences: list[str]):
    """A chapter's computed findings as a Markdown list (for the "What this chapter finds" cell)."""
    from IPython.display import Markdown

    return Markdown("\n".join(f"- {s}" for s in sentences))


CHAPTERS = {  # number -> (page, title); a claim links to the section of its page that computes it
    1: ("01_specimen", "The specimen"), 2: ("02_importance", "Importance"), 3: ("03_predictability", "Predictability"),
    4: ("04_structure", "Structure"), 5: ("05_manipulation", "Manipulation"), 6: ("06_recovery", "Recovery"),
    7: ("07_growth", "Growth training"),
}
SECTION = "paper-vs-this-book"


def book_claims(lab, growth_profile: str | None = None, progress: bool = False) -> pd.DataFrame:
    """Every claim of the paper, judged by the same functions and parameters the chapters use (their defaults),
    with the chapter, the specimen and the profile behind each row. Results come from the store; anything
    missing is computed, as the chapter would."""
    from . import importance as imp
    from . import manipulate as man
    from . import predictability as pred
    from . import recovery as rec
    from . import structure as st
    from . import weight_stats
    from .growth import experiment as gx

    profile = lab.profile.name
    importance = imp.importance(lab, imp.ImportanceParams(), progress=progress)
    per_chapter = {
        1: weight_stats.paper_claims(weight_stats.architecture(lab.specimen)),
        2: imp.paper_claims(importance),
        3: pred.paper_claims(pred.predictability(lab, pred.PredictabilityParams(), progress=progress)),
        4: st.paper_claims(st.structure(lab, st.StructureParams())),
        5: man.paper_claims(man.manipulation(lab, man.ManipulationParams(), progress=progress)),
        6: rec.paper_claims(rec.recovery(lab, rec.RecoveryParams.for_profile(profile), progress=progress),
                            importance),
    }
    growth_profile = growth_profile or profile
    growth_params = gx.GrowthParams.for_profile(growth_profile)
    per_chapter[7] = gx.paper_claims(gx.growth(growth_params, progress=progress), growth_params)
    rows = []
    for chapter, claims in per_chapter.items():
        page, title = CHAPTERS[chapter]
        specimen = "models trained from scratch on sotu" if chapter == 7 else lab.specimen.name
        for claim in claims:
            rows.append({"chapter": chapter, "section": f'<a href="{page}.html#{SECTION}">{chapter}. {title}</a>',
                         **{k.capitalize(): v for k, v in claim.__dict__.items()}, "specimen": specimen,
                         "profile": growth_profile if chapter == 7 else profile})
    return pd.DataFrame(rows)


def verdict_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Claims per chapter and verdict (a ``book_claims`` table), verdicts in the book's order."""
    counts = pd.crosstab(table["chapter"], table["Verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    counts.loc["all"] = counts.sum()
    return counts


def book_table(table: pd.DataFrame):
    """A ``book_claims`` table for reading: the note under each claim in small type, specimen and profile in
    one column, verdicts coloured (with their text); render with ``to_html(escape=False)``."""
    import html

    shown = pd.DataFrame({
        "Section": table["section"],
        "Claim": [f"{html.escape(c)}<br><small>{html.escape(n)}</small>" if n else html.escape(c)
                  for c, n in zip(table["Claim"], table["Note"])],
        "Paper": table["Paper"].map(html.escape), "Ours": table["Ours"].map(html.escape),
        "Verdict": table["Verdict"], "Rule": table["Rule"],
        "Specimen, profile": [f"{html.escape(s)}, {p}" for s, p in zip(table["specimen"], table["profile"])]})
    return style_claims(shown).set_table_attributes('class="anatomy-claims"')


def _counted(table: pd.DataFrame) -> str:
    counts = table["Verdict"].value_counts()
    return ", ".join(f"{counts.get(v, 0)} {'is' if counts.get(v, 0) == 1 else 'are'} {v}" for v in VERDICTS)


def headline(table: pd.DataFrame) -> list[str]:
    """The book's verdict in sentences, computed from a ``book_claims`` table. The paper's description of its
    specimen (chapter 1) is counted apart from its findings."""
    findings, specimen = table[table["chapter"] != 1], table[table["chapter"] == 1]
    out = [f"Of the paper's {len(findings)} findings checked in this book (chapters 2 to 7), {_counted(findings)}."]
    for v in (REPRODUCED, PARTLY):
        named = findings[findings["Verdict"] == v]
        if len(named):
            out.append(f"{v.capitalize()}: " + "; ".join(f"{c.Claim} (chapter {c.chapter})"
                                                           for c in named.itertuples()) + ".")
    if len(specimen):
        out.append(f"Its description of the specimen (chapter 1): {len(specimen)} facts, {_counted(specimen)}.")
    out.append("Specimens behind the rows: " + ", ".join(sorted(set(table["specimen"]))) + "; profiles: "
               + ", ".join(sorted(set(table["profile"]))) + ".")
    return out
