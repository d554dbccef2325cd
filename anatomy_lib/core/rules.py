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

A verdict has two parts, stated here once and shown in the rules table:

- the **measurement** (``Claim.verdict``): what our number says of the paper's, by the claim's rule (reproduced,
  partly reproduced, not reproduced, not comparable, or **inconclusive**: our interval is compatible both with
  the paper's value and with no effect, so the measurement has too little power to tell; the row gives the
  difference it could detect, ``detectable_difference``);
- whether it **survives its control** (``Claim.survives``): where a claim credits an intervention (growth,
  importance-guided growth, recovery by fine-tuning) or singles out a layer, the strongest control the book shows
  beside it (the shallow model at the same FLOPs, the random-source schedule, the sham of the same layer, every
  other layer run): "yes" where the intervention beats every control, "in part" where it beats one only by part of
  the margin, "no" where a control does as well (or is not shown to do worse), "not discriminating" where the
  control, or every unit it is compared with, does the same (a layer that fails to recover where no layer
  recovers). The measurement is never rewritten by its control: the two are read together (``standing``).

Each claim also says its **kind** (``KINDS``: a pattern, a magnitude or an interpretation) and the named
**experiment** it belongs to, so that one experiment reported in five rows is counted once (``standing`` of an
experiment: the rows' common standing, or "mixed"). A magnitude measured on a checkpoint other than the paper's
says so (``checkpoint_caveat``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import pandas as pd

VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "inconclusive", "not comparable")

REPRODUCED, PARTLY, NOT_REPRODUCED, INCONCLUSIVE, NOT_COMPARABLE = VERDICTS

# whether a measurement survives the strongest control shown beside it ("" where the claim has none)
SURVIVES = ("yes", "in part", "no", "not discriminating")
SURVIVES_YES, SURVIVES_IN_PART, SURVIVES_NO, NOT_DISCRIMINATING = SURVIVES

KINDS = ("pattern", "magnitude", "interpretation")
PATTERN, MAGNITUDE, INTERPRETATION = KINDS

# what a claim and its control read as together, for counting (``standing``): a measurement its control matches is
# "explained by a control"; one that every comparison unit shares as well is "not discriminating" (it says nothing
# about the unit the paper named, and explains nothing either)
STANDINGS = ("supported", "supported in part", "explained by a control", "not discriminating", "not reproduced",
             "inconclusive", "not comparable")
PASSES_BUT_CONTROLLED = ("explained by a control", "not discriminating")  # pass their own rule, not the control
MIXED = "mixed"  # an experiment whose rows stand differently

PAPER_CHECKPOINT = "SmolLM2-135M"  # the paper's specimen: a magnitude measured on any other says so
# power of the detectable difference every inconclusive or wide "not reproduced" row states
POWER, LEVEL = 0.8, 0.95

RULES = {
    "number": ("ours agrees with the paper's value (inside our interval or within the tolerance) and has its sign",
               "same sign, within an order of magnitude, outside the tolerance",
               "the sign differs, or further than an order of magnitude",
               "our interval holds both the paper's value and zero (too imprecise to tell)",
               "ours is missing"),
    "bound": ("our whole interval lies beyond the paper's bound",
              "our point estimate lies beyond it, or within a factor of ten of it on the claimed side",
              "further than a factor of ten from the bound, or on the other side of the reference",
              "-", "ours is missing"),
    "layer_set": ("Jaccard overlap of the two sets >= 0.75", "Jaccard >= 0.25", "Jaccard < 0.25", "-", "-"),
    "share": ("holds for every member of the group", "holds for at least half", "holds for fewer than half",
              "-", "no member could be measured"),
    "comparison": ("the difference's interval excludes zero in the paper's direction (and is at least half the "
                   "paper's size, where it gives one)",
                   "direction established, but under half the paper's size",
                   "the difference is established the other way, or its interval includes zero but excludes the "
                   "paper's size (an effect smaller than claimed)",
                   "the interval includes zero and the paper's size (or, where the paper gives none, any effect in "
                   "its direction): the row states the difference detectable at 80% power",
                   "ours is missing"),
    "qualitative": ("the statement holds in our measurement", "-", "it does not hold",
                    "it holds, but the interval behind it cannot rule out its opposite", "it could not be tested"),
    "uninformative": ("-", "-", "-", "-", "always: the measure scores as high on a null model, so it cannot "
                                           "support the claim"),
}

# the second part of a verdict, in words (the rules table shows it under the measurement rules)
CONTROL_RULE = {
    SURVIVES_YES: "the intervention (or the layer singled out) beats every control shown beside it",
    SURVIVES_IN_PART: "it beats a control by part of the margin only",
    SURVIVES_NO: "a control does as well, or is not shown to do worse (named in the row, said in words)",
    NOT_DISCRIMINATING: "the control, or every unit it is compared with, does the same: the measurement says "
                        "nothing about the claim's subject",
}
# what a claims table shows where no control's part is stated: a measurement that does not support the claim has
# nothing for a control to explain; a claim that names no control has none to be held to
NOT_HELD, NO_CONTROL = "not held", "no control"
UNHELD_RULE = {NOT_HELD: "the measurement does not support the claim (not reproduced, inconclusive, not "
                         "comparable), so there is nothing for its control to explain",
               NO_CONTROL: "the book shows no control for this claim"}


def _sign(x: float) -> int:
    return int(float(x) > 0) - int(float(x) < 0)


def detectable_difference(low: float, high: float, *, level: float = LEVEL, power: float = POWER) -> float:
    """The smallest true difference an estimate with this (two-sided, ``level``) interval detects with
    probability ``power``: (z_level + z_power) times its standard error, the error read off the interval's
    half-width under a normal approximation (a t-interval over few seeds is wider, so this errs small)."""
    z_level, z_power = NormalDist().inv_cdf(0.5 + level / 2), NormalDist().inv_cdf(power)
    return (z_level + z_power) * (high - low) / 2 / z_level


def power_text(low: float, high: float, fmt: str = "{:.3g}", bound: float | None = None) -> str:
    """What a wide interval can detect, for a row's note. ``bound``: the largest size the quantity can take (1 for
    a correlation); where the detectable difference exceeds it, no effect of any possible size is detectable."""
    detectable = detectable_difference(low, high)
    if bound is not None and detectable > bound:
        return f"no effect of any possible size (up to {fmt.format(bound)}) is detectable at {POWER:.0%} power"
    return f"detectable at {POWER:.0%} power: {fmt.format(detectable)}"


def number(paper: float, ours: float, low: float | None = None, high: float | None = None, *,
           factor: float | None = 2.0, absolute: float | None = None) -> str:
    """A reported value. Agreement: the paper's value inside [low, high], within ``absolute`` of ours, or (if
    ``absolute`` is None) within ``factor`` of it with the same sign. An interval that holds both the paper's
    value and zero is inconclusive."""
    if any(v is not None and math.isnan(v) for v in (paper, ours, low, high)):
        return NOT_COMPARABLE
    interval = low is not None and high is not None
    if _sign(ours) != _sign(paper) and paper != 0:
        if interval and low <= paper <= high and low <= 0 <= high:
            return INCONCLUSIVE
        return NOT_REPRODUCED
    sign_established = not interval or paper == 0 or (low > 0 if paper > 0 else high < 0)
    inside = interval and low <= paper <= high
    if absolute is not None:
        close = abs(ours - paper) <= absolute
    else:
        close = paper != 0 and 1 / factor <= ours / paper <= factor
    if inside or close:
        return REPRODUCED if sign_established else INCONCLUSIVE
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
    optionally, at least the magnitude ``paper_size``). An interval that includes zero is inconclusive while
    it also reaches the paper's size (any effect in the paper's direction, where it gives none); one that
    includes zero but stops short of the paper's size shows an effect smaller than claimed: not reproduced."""
    if any(math.isnan(v) for v in (difference, low, high)):
        return NOT_COMPARABLE
    established = low > 0 if paper_direction > 0 else high < 0
    if not established:
        against = high < 0 if paper_direction > 0 else low > 0
        if against:
            return NOT_REPRODUCED
        reach = high if paper_direction > 0 else -low  # the largest effect in the paper's direction still allowed
        if reach <= 0 or (paper_size is not None and reach < abs(paper_size)):
            return NOT_REPRODUCED
        return INCONCLUSIVE
    if paper_size is not None and abs(difference) < abs(paper_size) / 2:
        return PARTLY
    return REPRODUCED


def qualitative(holds: bool | None) -> str:
    return NOT_COMPARABLE if holds is None else REPRODUCED if holds else NOT_REPRODUCED


def uninformative() -> str:
    return NOT_COMPARABLE


def weakest(*verdicts: str) -> str:
    """The least supportive of several verdicts on parts of one claim (inconclusive below not reproduced: a part
    that cannot be told leaves the whole untold; not comparable counts as weakest)."""
    order = (REPRODUCED, PARTLY, NOT_REPRODUCED, INCONCLUSIVE, NOT_COMPARABLE)
    return max(verdicts, key=order.index)


@dataclass(frozen=True)
class ControlCheck:
    """One control a claim must beat: its name, the verdict (usually of ``comparison``) of the intervention
    against it, or ``NOT_DISCRIMINATING`` where the control does the same as the claim's subject, and what to
    say when the control does as well ("the shallow control saves as much")."""

    control: str
    verdict: str
    words: str

    def __post_init__(self):
        if self.verdict not in (*VERDICTS, NOT_DISCRIMINATING):
            raise ValueError(f"unknown verdict {self.verdict!r}; choose one of {[*VERDICTS, NOT_DISCRIMINATING]}")


def paired_check(control: str, words: str, subject: pd.Series, against: pd.Series, *, lower_is_better: bool = True,
                 fmt: str = "{:+.3f}") -> ControlCheck:
    """The intervention (``subject``) against a control (``against``), each a value per seed, paired by seed: the
    control's margin (``against - subject`` where lower is better) with its t-interval, judged by ``comparison``.
    Equal in every seed to the last bit is ``NOT_DISCRIMINATING``: up to where it is measured, the control is the
    same run, and no interval of zero-width differences can say otherwise."""
    from .stats import t_interval  # scipy is imported only by the rule that needs an interval

    seeds = [s for s in subject.index if s in against.index and pd.notna(subject[s]) and pd.notna(against[s])]
    if seeds and all(subject[s] == against[s] for s in seeds):
        return ControlCheck(control, NOT_DISCRIMINATING, words + " (the same value in every seed: up to where it is "
                                                                 "measured, it is the same run)")
    sign = 1 if lower_is_better else -1
    gap = t_interval([sign * (against[s] - subject[s]) for s in seeds])
    said = words + f" (gap {fmt.format(gap[0])} [{fmt.format(gap[1])}, {fmt.format(gap[2])}])"
    return ControlCheck(control, comparison(*gap), said)


def controlled(verdict: str, *checks: ControlCheck) -> tuple[str, str]:
    """(survives, because): whether a measurement whose own rule gave ``verdict`` survives ``checks``. Nothing is
    held where there is no check or the measurement itself does not support the claim (""). A control that does
    the same as the claim's subject makes it "not discriminating"; one the intervention does not beat (as well,
    inconclusive, or not measured: then nothing credits the intervention) "no"; one beaten by part of the
    margin "in part". ``because`` says, in the checks' words, what the controls showed."""
    if not checks or verdict not in (REPRODUCED, PARTLY):
        return "", ""
    same = [c for c in checks if c.verdict == NOT_DISCRIMINATING]
    if same:
        return NOT_DISCRIMINATING, "; ".join(c.words for c in same)
    failed = [c for c in checks if c.verdict in (NOT_REPRODUCED, INCONCLUSIVE, NOT_COMPARABLE)]
    if failed:
        return SURVIVES_NO, "; ".join(c.words + (" (not shown to do worse: the interval includes zero)"
                                                 if c.verdict == INCONCLUSIVE else "")
                                      for c in failed)
    partial = [c for c in checks if c.verdict == PARTLY]
    if partial:
        return SURVIVES_IN_PART, "; ".join(f"{c.words} (in part)" for c in partial)
    return SURVIVES_YES, ""


def standing(verdict: str, survives: str = "") -> str:
    """What a measurement and its control read as together (``STANDINGS``), for counting."""
    if verdict in (REPRODUCED, PARTLY):
        if survives == NOT_DISCRIMINATING:
            return "not discriminating"
        if survives == SURVIVES_NO:
            return "explained by a control"
        return "supported" if verdict == REPRODUCED and survives in ("", SURVIVES_YES) else "supported in part"
    return {NOT_REPRODUCED: "not reproduced", INCONCLUSIVE: "inconclusive"}.get(verdict, "not comparable")


def experiment_standing(standings) -> str:
    """An experiment's standing from its rows': their common standing, or "mixed"."""
    found = set(standings)
    return found.pop() if len(found) == 1 else MIXED


def checkpoint_caveat(kind: str, specimen: str) -> str:
    """The words a magnitude measured on another checkpoint than the paper's carries ("" otherwise): a pattern
    may carry over between checkpoints, a size need not."""
    base = specimen.lower().split("/")[-1]
    same = base.startswith(PAPER_CHECKPOINT.lower()) and not any(
        tag in base for tag in ("instruct", "q4", "q8", "gguf"))
    return "" if kind != MAGNITUDE or same else f"a magnitude, measured on {specimen}, not the paper's " \
                                                 f"{PAPER_CHECKPOINT}"


def rules_table() -> pd.DataFrame:
    """The rule set in words, one row per kind of claim, then the control's part of every verdict (the
    verdicts chapter shows both)."""
    rows = [{"rule": name, **dict(zip(VERDICTS, text))} for name, text in RULES.items()]
    return pd.DataFrame(rows)


def control_rules_table() -> pd.DataFrame:
    """The second part of a verdict in words: what each "survives its control" value means."""
    rules = {**CONTROL_RULE, **UNHELD_RULE}
    return pd.DataFrame({"survives its control": list(rules), "when": list(rules.values())})


@dataclass
class Claim:
    claim: str
    paper: str
    ours: str
    verdict: str
    note: str = ""
    rule: str = ""
    control: str = ""  # the controls the measurement was held to (``controlled``), named
    because: str = ""  # what the controls showed where the measurement does not survive them, in words
    survives: str = ""  # ``SURVIVES``, or "" where no control is held
    experiment: str = ""  # the named experiment the row reports (one experiment may give several rows)
    kind: str = ""  # ``KINDS``

    @classmethod
    def held_to(cls, claim: str, paper: str, ours: str, verdict: str, note: str, rule: str,
                checks: list[ControlCheck], **named) -> "Claim":
        """A claim whose measurement (by ``rule``) is held to ``checks`` (``controlled``)."""
        survives, because = controlled(verdict, *checks)
        return cls(claim, paper, ours, verdict, note, rule, ", ".join(c.control for c in checks), because,
                   survives, **named)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}; choose one of {list(VERDICTS)}")
        if self.rule and self.rule not in RULES:
            raise ValueError(f"unknown rule {self.rule!r}; choose one of {list(RULES)}")
        if self.survives and self.survives not in SURVIVES:
            raise ValueError(f"unknown control outcome {self.survives!r}; choose one of {list(SURVIVES)}")
        if self.kind and self.kind not in KINDS:
            raise ValueError(f"unknown kind {self.kind!r}; choose one of {list(KINDS)}")

    @property
    def standing(self) -> str:
        return standing(self.verdict, self.survives)


def in_experiment(experiment: str, claims: list[Claim], kinds: dict[int, str] | None = None,
                  kind: str = PATTERN) -> list[Claim]:
    """``claims``, every one marked as a row of ``experiment``, of ``kind`` unless ``kinds`` (by position) says
    otherwise: a chapter's report names its experiments in one place."""
    kinds = kinds or {}
    for i, c in enumerate(claims):
        c.experiment = experiment
        c.kind = c.kind or kinds.get(i, kind)
    return claims


def claims_table(claims: list[Claim], beside: dict[str, list[Claim]] | None = None) -> pd.DataFrame:
    """One row per claim; the control columns only where some claim was held to a control (whether the verdict
    survives it right after the verdict, so the judgement reads together before the notes), the kind where one is
    named, the experiment where the rows come from more than one; a row whose control's part is not stated says why
    (``NOT_HELD``, ``NO_CONTROL``). ``beside``: other evidence for the same claims
    (column name -> its claims), each a column of the standing it gives a claim of the same name ("not stated"
    where it has none), after the verdict and its control."""
    table = pd.DataFrame([c.__dict__ for c in claims])
    unused = [name for name in ("control", "because", "survives", "kind") if name in table
              and not table[name].astype(bool).any()]
    if "experiment" in table and table["experiment"].nunique() <= 1:
        unused.append("experiment")
    table = table.drop(columns=unused)
    if "survives" in table:  # the judgement together (the verdict, then its control's part) before the notes
        unheld = table["control"].astype(bool).map({True: NOT_HELD, False: NO_CONTROL}) if "control" in table \
            else NO_CONTROL
        table["survives"] = table["survives"].where(table["survives"].astype(bool), unheld)  # never a blank cell
        table.insert(list(table.columns).index("verdict") + 1, "survives", table.pop("survives"))
    after = list(table.columns).index("survives" if "survives" in table else "verdict")
    for position, (column, other) in enumerate((beside or {}).items(), start=after + 1):
        standings = {c.claim: c.standing for c in other}
        table.insert(position, column, [standings.get(c.claim, "not stated") for c in claims])
    named = set(beside or {})
    return table.rename(columns=lambda c: c if c in named else SURVIVES_COLUMN if c == "survives"
                        else c.capitalize())


SURVIVES_COLUMN = "Survives its control"


def sensitivity(claims_at, values, parameter: str, default) -> pd.DataFrame:
    """Every claim's verdict as one choice the paper leaves unsaid varies over ``values``: ``claims_at(value)``
    returns the claims judged at that value. Tidy: one row per (claim, value), with the measurement's verdict, the
    control's part, the standing they read as, whether ``value`` is the book's ``default``, and what was measured
    there (``ours``, so a verdict that moves can be read beside its number). A claim is matched across values by
    its name; a claim the rule cannot state at some value is absent there."""
    rows = []
    for value in values:
        for c in claims_at(value):
            rows.append({"claim": c.claim, "parameter": parameter, "value": value, "verdict": c.verdict,
                         "survives": c.survives, "standing": c.standing, "default": value == default,
                         "ours": c.ours})
    table = pd.DataFrame(rows, columns=["claim", "parameter", "value", "verdict", "survives", "standing", "default",
                                        "ours"])
    table["value"] = pd.Series([r["value"] for r in rows], dtype=object)  # as given: 1 stays 1, not 1.0
    return table


def robust_claims(table: pd.DataFrame) -> pd.Series:
    """Per claim of a ``sensitivity`` table (all parameters together): True where its standing is the same at
    every value of every parameter tried."""
    return table.groupby("claim", sort=False)["standing"].nunique().eq(1)


def sensitivity_table(table: pd.DataFrame, parameter: str, fmt=str, by_value: bool = False) -> pd.DataFrame:
    """One parameter of a ``sensitivity`` table for reading: a row per claim, a column per value (the book's value
    marked), each cell the claim's standing there, and whether the standing is the same across the grid.
    ``by_value``: a row per value and a column per claim instead (a long grid of few claims fits a page so)."""
    part = table[table["parameter"] == parameter]
    labels = {v: fmt(v) + (" (book)" if d else "") for v, d in zip(part["value"], part["default"])}
    wide = (part.assign(value=part["value"].map(labels))
            .pivot(index="claim", columns="value", values="standing")
            .reindex(index=list(dict.fromkeys(part["claim"])), columns=list(dict.fromkeys(labels.values()))))
    if by_value:
        wide = wide.T.fillna("not stated")
        wide.columns.name = None
        return wide.rename_axis(parameter).reset_index()
    wide["same across the grid"] = ["yes" if row.dropna().nunique() == 1 else "no" for _, row in wide.iterrows()]
    wide = wide.fillna("not stated")
    wide.columns.name = None
    return wide.reset_index()


def sensitivity_sentence(table: pd.DataFrame, names: dict[str, str] | None = None, label=None) -> str:
    """Which claims keep their standing over every grid of a ``sensitivity`` table, and, for the others, the
    parameter values at which they change (``names``: a parameter's words; ``label(parameter, value)``: a value's)."""
    names = names or {}
    label = label or (lambda parameter, value: str(value))
    robust = robust_claims(table)
    fixed = [c for c, r in robust.items() if r]
    text = f"{len(fixed)} of {len(robust)} claims keep their standing at every value tried"
    moving = []
    for claim, r in robust.items():
        if r:
            continue
        rows = table[table["claim"] == claim]
        book = rows.loc[rows["default"], "standing"]
        book = book.iloc[0] if len(book) else "not stated"
        changes = []
        for parameter, part in rows.groupby("parameter", sort=False):
            other = part[part["standing"] != book]
            if len(other):
                shifts = zip(other["value"], other["standing"])
                changes.append(f"{names.get(parameter, parameter)} "
                               + ", ".join(f"{label(parameter, value)}: {moved}" for value, moved in shifts))
        moving.append(f"\"{claim}\" ({book} at the book's values; " + "; ".join(changes) + ")")
    return text + (". It changes for " + "; ".join(moving) + "." if moving else ".")
