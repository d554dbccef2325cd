"""What an exercise is and how a student's function is checked against the library's.

An ``Exercise`` names the function a student writes (``stub``: the cell they start from), the library's own
answer (``reference``), and a few ``Case``s: each runs the student's function on small inputs (a tiny random
model, synthetic block losses) and compares it with the reference, returning nothing when it agrees and what
differs when it does not. ``check`` runs the cases in order and stops at the first that fails, with the case's
hint; a function that raises is reported the same way, never as a traceback that ends the cell. ``mistakes``
are plausible wrong answers, each with the case that must catch it: the tests hold every checker to them, and
the seminar guide lists them for the teacher.
"""
from __future__ import annotations

import html
import inspect
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Case:
    """One comparison: ``test(fn)`` returns None when ``fn`` agrees with the reference, else what differs."""

    name: str
    hint: str
    test: Callable[[Callable], str | None]


@dataclass(frozen=True)
class Exercise:
    key: str
    chapter: int
    title: str
    task: str  # what to write, in a sentence or two (the chapter's exercise text says why)
    stub: str  # the code cell a student starts from
    reference: Callable
    cases: Callable[[], tuple[Case, ...]]  # built on demand: some make tiny models
    mistakes: dict[str, tuple[Callable, str]] = field(default_factory=dict)  # wrong answer -> case that catches it
    shows: tuple[Callable, ...] = ()  # library functions the solution points to

    @property
    def function_name(self) -> str:
        return self.stub.split("def ", 1)[1].split("(", 1)[0]


@dataclass(frozen=True)
class Report:
    """The outcome of one check: passed, or the first case that failed, what differed and a hint."""

    key: str
    passed: bool
    cases_run: int
    cases_total: int
    seconds: float
    case: str | None = None
    detail: str | None = None
    hint: str | None = None

    def __str__(self) -> str:
        if self.passed:
            return f"{self.key}: passed all {self.cases_total} cases ({self.seconds:.1f} s)"
        return (f"{self.key}: case {self.cases_run} of {self.cases_total} failed ({self.case}): {self.detail}\n"
                f"hint: {self.hint}")

    def _repr_html_(self) -> str:
        if self.passed:
            return (f'<div class="anatomy-check passed">&#10003; <b>{html.escape(self.key)}</b>: passed all '
                    f"{self.cases_total} cases ({self.seconds:.1f} s)</div>")
        return (f'<div class="anatomy-check failed">&#10007; <b>{html.escape(self.key)}</b>: case {self.cases_run} '
                f"of {self.cases_total} failed (<i>{html.escape(self.case)}</i>): {html.escape(self.detail)}<br>"
                f"<b>hint</b>: {html.escape(self.hint)}</div>")

    def __bool__(self) -> bool:
        return self.passed


def run_check(exercise: Exercise, fn: Callable) -> Report:
    """Run every case of ``exercise`` on ``fn`` in order; stop at the first that fails or raises."""
    if not callable(fn):
        raise TypeError(f"pass the function you wrote (e.g. {exercise.function_name}), not {type(fn).__name__}")
    started = time.perf_counter()
    cases = exercise.cases()
    for number, case in enumerate(cases, start=1):
        try:
            detail = case.test(fn)
        except NotImplementedError:
            detail = "not written yet (the function raises NotImplementedError)"
        except Exception as error:  # a student's bug is a failed case, reported in one line
            where = traceback.extract_tb(error.__traceback__)[-1]
            detail = f"raised {type(error).__name__}: {error} (line {where.lineno} of {where.name})"
        if detail is not None:
            return Report(exercise.key, False, number, len(cases), time.perf_counter() - started, case.name,
                          detail, case.hint)
    return Report(exercise.key, True, len(cases), len(cases), time.perf_counter() - started)


def source_of(fn: Callable) -> str:
    return inspect.getsource(fn)


# ---- comparisons the cases share ----------------------------------------------------------------------------
def differs(got, expected, *, rtol: float = 1e-6, atol: float = 1e-9, what: str = "value") -> str | None:
    """None if ``got`` matches ``expected`` (numbers or arrays, to the tolerances), else a one-line difference."""
    if got is None:
        return f"returned None; expected a {what} like {_short(expected)}"
    try:
        got_a = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return f"returned {type(got).__name__}; expected a {what} like {_short(expected)}"
    exp_a = np.asarray(expected, dtype=np.float64)
    if got_a.shape != exp_a.shape:
        return f"returned shape {got_a.shape}; expected {exp_a.shape}"
    if np.allclose(got_a, exp_a, rtol=rtol, atol=atol, equal_nan=True):
        return None
    return f"got {_short(got)}, expected {_short(expected)}"


def interval_level_differs(got, expected, tolerance: float = 0.04) -> str | None:
    """None if both ends of the interval ``got`` lie within ``tolerance`` of ``expected``'s width of its ends
    (with enough resamples, a 95% interval's ends move by about 1% of its width between seeds; a 90% interval's
    ends sit about 8% inside), else which end is off and by how much."""
    (low, high), (ref_low, ref_high) = (float(v) for v in got), (float(v) for v in expected)
    width = ref_high - ref_low
    for name, end, ref in (("lower", low, ref_low), ("upper", high, ref_high)):
        if abs(end - ref) > tolerance * width:
            return (f"the {name} end is {end:.4g}; a 95% interval's is about {ref:.4g} "
                    f"({(end - ref) / width:+.0%} of its width away)")
    return None


def _short(value) -> str:
    array = np.asarray(value, dtype=np.float64) if not isinstance(value, str) else None
    if array is None:
        return repr(value)
    if array.ndim == 0:
        return f"{float(array):.6g}"
    flat = ", ".join(f"{v:.4g}" for v in array.ravel()[:4])
    return f"[{flat}{', ...' if array.size > 4 else ''}] (shape {array.shape})"
