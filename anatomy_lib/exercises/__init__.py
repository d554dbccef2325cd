"""Exercises that check themselves: a function a student writes in a chapter, checked against the library's.

In a chapter::

    from anatomy_lib import exercises
    def neighbour_mean(editor, layer): ...          # the stub cell, filled in
    exercises.check("neighbour-mean", neighbour_mean)

says "passed all 3 cases" or names the first case that failed, what differed, and a hint; it runs on a CPU in
seconds (tiny random models, synthetic block losses), in Jupyter or Colab, without a kernel restart.
``exercises.solution(key)`` shows the library's answer and the library code behind it, and checks it.
"""
from __future__ import annotations

import pandas as pd
from IPython.display import Markdown

from . import growth, importance, manipulation, predictability, recovery, specimen, structure, verdicts
from .checking import Case, Exercise, Report, run_check, source_of

EXERCISES: dict[str, Exercise] = {e.key: e for module in (specimen, importance, predictability, structure,
                                                          manipulation, recovery, growth, verdicts)
                                  for e in module.EXERCISES}


def get(key: str) -> Exercise:
    if key not in EXERCISES:
        raise ValueError(f"unknown exercise {key!r}; choose one of {list(EXERCISES)}")
    return EXERCISES[key]


def check(key: str, fn) -> Report:
    """Check a student's function for exercise ``key``: a ``Report`` (shown as one line in a notebook)."""
    return run_check(get(key), fn)


def of_chapter(chapter: int) -> list[Exercise]:
    return [e for e in EXERCISES.values() if e.chapter == chapter]


def solution(key: str) -> Markdown:
    """The library's answer to exercise ``key`` with the library functions behind it, and its check."""
    exercise = get(key)
    report = check(key, exercise.reference)
    parts = [f"**Solution to `{key}`** (the library's own answer; {report})", "```python",
             source_of(exercise.reference).rstrip(), "```"]
    for fn in exercise.shows:
        parts += [f"It calls `{fn.__module__}.{fn.__qualname__}`:", "```python", source_of(fn).rstrip(), "```"]
    return Markdown("\n".join(parts))


def catalogue() -> pd.DataFrame:
    """Every exercise: chapter, key, what to write, and the mistakes its checker is tested to catch."""
    return pd.DataFrame([{"chapter": e.chapter, "exercise": e.key, "title": e.title, "write": e.task,
                          "cases": len(e.cases()), "mistakes caught": "; ".join(e.mistakes)}
                         for e in EXERCISES.values()])


__all__ = ["Case", "Exercise", "Report", "EXERCISES", "catalogue", "check", "get", "of_chapter", "solution"]
