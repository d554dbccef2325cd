"""How the book judges a claim: one rule per kind of claim, and the ``Claim`` row every chapter reports.

Every verdict in the book comes from one of the rules below, applied to the paper's value and ours (with its
interval where we have one). The rules are stated in words in ``RULES`` (shown in the verdicts chapter) and in
code in the functions of the same names; ``tests/core/test_rules.py`` pins each rule with (paper, ours) pairs.

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

Controls. A claim that credits an intervention (growth, importance-guided growth, recovery by fine-tuning) is
judged by its own rule against the paper's baseline *and* against the strongest control the book shows beside
it (``controlled``): the shallow model at the same FLOPs, the random-source growth schedule, the sham of the
same layer. A verdict its rule calls reproduced (or partly) stays so only if the intervention also beats every
control; where a control does as well, the verdict is "not reproduced", the row names the control
(``Claim.control``) and says so in words (``Claim.because``), and the verdicts chapter counts it that way.
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
    "controlled": ("its own rule says reproduced and the intervention beats every control shown beside it",
                   "its own rule says partly, or a control is beaten by part of the margin only",
                   "its own rule says not, or a control does as well (named in the row, said in words)",
                   "its own rule could not compare"),
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


@dataclass(frozen=True)
class ControlCheck:
    """One control a claim must beat: its name, the verdict (usually of ``comparison``) of the intervention
    against it, and what to say when the control does as well ("the shallow control saves as much")."""

    control: str
    verdict: str
    words: str

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}; choose one of {list(VERDICTS)}")


def controlled(verdict: str, *checks: ControlCheck) -> tuple[str, str]:
    """(verdict, because): ``verdict`` (the claim judged by its own rule) held to every control. A supportive
    verdict survives a control the intervention beats; it falls to "not reproduced" where a control does as
    well (or could not be measured: then nothing credits the intervention), and to "partly" where the
    intervention beats a control only by part of the margin. ``because`` names what knocked it down."""
    if verdict not in (REPRODUCED, PARTLY):
        return verdict, ""
    failed = [c for c in checks if c.verdict in (NOT_REPRODUCED, NOT_COMPARABLE)]
    if failed:
        return NOT_REPRODUCED, "; ".join(c.words for c in failed)
    partial = [c for c in checks if c.verdict == PARTLY]
    if partial and verdict == REPRODUCED:
        return PARTLY, "; ".join(f"{c.words} (in part)" for c in partial)
    return verdict, ""


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
    control: str = ""  # the controls the verdict was held to (``controlled``), named
    because: str = ""  # where a control knocked the verdict down: what it showed, in words

    @classmethod
    def held_to(cls, claim: str, paper: str, ours: str, verdict: str, note: str, rule: str,
                checks: list[ControlCheck]) -> "Claim":
        """A claim whose verdict (by ``rule``) is held to ``checks`` (``controlled``)."""
        final, because = controlled(verdict, *checks)
        return cls(claim, paper, ours, final, note, rule, ", ".join(c.control for c in checks), because)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}; choose one of {list(VERDICTS)}")
        if self.rule and self.rule not in RULES:
            raise ValueError(f"unknown rule {self.rule!r}; choose one of {list(RULES)}")


def claims_table(claims: list[Claim]) -> pd.DataFrame:
    """One row per claim; the control columns only where some claim was held to a control."""
    table = pd.DataFrame([c.__dict__ for c in claims])
    unused = [name for name in ("control", "because") if name in table and not table[name].astype(bool).any()]
    return table.drop(columns=unused).rename(columns=str.capitalize)
