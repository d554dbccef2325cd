"""Chapters 8 and 9's exercises: carrying a layer named on the paper's 30-layer model to another depth, and the
rule that judges a reported number against ours and its interval."""
from __future__ import annotations

from ..core import rules
from ..core.params import PaperLayers
from .checking import Case, Exercise

# ---- the same relative depth (chapter 8) ------------------------------------------------------------------------
DEPTH_STUB = '''def at_depth(layers, n_layers):
    """The layers of an n_layers-deep model at the same relative depth as `layers`, which are numbered on the
    paper's 30-layer model (0 is the first decoder layer, 29 the last). Relative depth is l / 29 on the paper's
    model and k / (n_layers - 1) on the other: layer l goes to the nearest k, round(l * (n_layers - 1) / 29).
    Keep the order of `layers`; where two land on the same layer keep the first."""
    raise NotImplementedError  # your code here
'''


def at_depth(layers, n_layers: int) -> tuple[int, ...]:
    """The library's answer (``core.params.PaperLayers.at_depth``: every parameter named on the paper's layers
    goes through it)."""
    return PaperLayers(tuple(layers)).at_depth(n_layers)


def _depth_cases() -> tuple[Case, ...]:
    def case(layers, n_layers):
        expected = at_depth(layers, n_layers)

        def test(fn):
            got = fn(layers, n_layers)
            got = tuple(int(v) for v in got) if got is not None else None
            return None if got == expected else f"at depth {n_layers}: got {got}, expected {expected}"
        return test

    return (Case("the paper's recovery layers on Gemma-3-270M (18 layers)", "relative depth is l / (n - 1): the "
                 "first layers of both models correspond, and so do the last (29 goes to n - 1); round to the "
                 "nearest layer", case((0, 1, 11, 14, 24, 29), 18)),
            Case("every layer on a 12-layer model", "several of the paper's layers land on the same layer of a "
                 "shallower model: keep the first, drop the repeats", case(tuple(range(30)), 12)),
            Case("the paper's own depth", "on a 30-layer model every layer maps to itself", case((3, 11, 17), 30)),
            Case("layers not in order, with a repeat, on a 12-layer model", "keep the order they were given in "
                 "(do not sort) and drop a layer only where an earlier one landed on it already",
                 case((24, 3, 11, 12, 2), 12)))


def _proportional_floor(layers, n_layers):
    return tuple(dict.fromkeys(int(l * n_layers / 30) for l in layers))


def _rounds_down(layers, n_layers):
    return tuple(dict.fromkeys(int(l * (n_layers - 1) / 29) for l in layers))


def _sorted(layers, n_layers):
    return tuple(sorted(set(round(l * (n_layers - 1) / 29) for l in layers)))


def _keeps_repeats(layers, n_layers):
    return tuple(round(l * (n_layers - 1) / 29) for l in layers)


# ---- the number rule (chapter 9) -------------------------------------------------------------------------------
NUMBER_STUB = '''def number_verdict(paper, ours, low=None, high=None, factor=2.0):
    """The verdict on a value the paper reports, given ours and (where we have one) our interval [low, high]:
    "reproduced": ours agrees (the paper's value inside our interval, or within `factor` of ours) and has the
        paper's sign, established (the interval, if any, excludes zero on the paper's side);
    "inconclusive": it would agree, but our interval also holds zero (or the signs differ while our interval
        holds both the paper's value and zero): too imprecise to tell;
    "partly reproduced": same, established sign, within an order of magnitude (0.1 to 10 times);
    "not reproduced": the sign differs, an interval on the paper's side that is far away, or more than an order
        of magnitude away."""
    raise NotImplementedError  # your code here
'''


def number_verdict(paper: float, ours: float, low: float | None = None, high: float | None = None,
                   factor: float = 2.0) -> str:
    """The library's answer (``core.rules.number``, the rule every reported number in the book goes through)."""
    return rules.number(paper, ours, low, high, factor=factor)


def _number_cases() -> tuple[Case, ...]:
    def case(examples):
        def test(fn):
            for args in examples:
                got, expected = fn(*args), number_verdict(*args)
                if got != expected:
                    named = ", ".join(f"{k}={v:g}" for k, v in zip(("paper", "ours", "low", "high"), args)
                                      if v is not None)
                    return f"for {named}: got {got!r}, expected {expected!r}"
            return None
        return test

    return (Case("values without an interval", "within a factor of two with the same sign is reproduced; 0.1 to 10 "
                 "times is partly; further is not", case([(0.91, 0.6), (0.91, 0.2), (0.91, 0.05), (63419.0, 40000.0)])),
            Case("a sign that differs", "a value of the other sign is never partly reproduced, however close in size",
                 case([(0.5, -0.4), (-0.5, 0.3), (0.5, -0.4, -0.6, -0.2)])),
            Case("values with an interval", "the paper's value inside our interval is reproduced if the interval "
                 "excludes zero on the paper's side", case([(0.5, 0.3, 0.2, 0.6), (0.5, 0.12, 0.08, 0.16),
                                                           (0.5, 0.01, 0.005, 0.02)])),
            Case("an interval that holds zero", "if our interval holds zero as well as the paper's value, the sign is "
                 "not established: the measurement cannot tell, so the verdict is 'inconclusive'",
                 case([(0.5, 0.3, -0.1, 0.7), (0.5, -0.05, -0.2, 0.6), (0.5, 0.05, -0.01, 0.11)])))


def _ignores_sign(paper, ours, low=None, high=None, factor=2.0):
    return rules.number(abs(paper), abs(ours), None if low is None else min(abs(low), abs(high)),
                        None if high is None else max(abs(low), abs(high)), factor=factor)


def _one_way_ratio(paper, ours, low=None, high=None, factor=2.0):
    """'Within a factor' read as ours / paper <= factor only: a value five times smaller passes."""
    if low is None and (ours > 0) == (paper > 0) and abs(ours / paper) <= factor:
        return rules.REPRODUCED
    return rules.number(paper, ours, low, high, factor=factor)


def _ignores_zero(paper, ours, low=None, high=None, factor=2.0):
    if low is not None and low <= paper <= high and (ours > 0) == (paper > 0):
        return rules.REPRODUCED
    return rules.number(paper, ours, factor=factor)


EXERCISES = (
    Exercise("same-depth", 8, "The same relative depth on another model",
             "Carry layers named on the paper's 30-layer model to a model of another depth.", DEPTH_STUB, at_depth,
             _depth_cases,
             mistakes={"l x n / 30, rounded down": (_proportional_floor, "the paper's recovery layers"),
                       "repeats kept": (_keeps_repeats, "every layer on a 12-layer model"),
                       "rounded down, not to the nearest layer": (_rounds_down, "the paper's recovery layers"),
                       "sorted (the given order lost)": (_sorted, "layers not in order")},
             shows=(PaperLayers.at_depth,)),
    Exercise("number-rule", 9, "The rule for a reported number",
             "Write the rule chapter 9 judges every reported number by.", NUMBER_STUB, number_verdict, _number_cases,
             mistakes={"sign ignored": (_ignores_sign, "a sign that differs"),
                       "an interval holding zero taken as agreement": (_ignores_zero, "an interval that holds zero"),
                       "the factor read one way (ours / paper <= factor)": (_one_way_ratio, "values without")},
             shows=(rules.number,)),
)
