"""Input checks shared by parameter dataclasses, weight surgery and the trainers.

Each returns the checked value or raises a ``ValueError`` whose message names what is valid, so a reader who
typed something wrong learns the fix from the message alone.
"""
from __future__ import annotations

import math


def finite_number(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def positive_number(value, what: str) -> float:
    value = finite_number(value, what)
    if value <= 0:
        raise ValueError(f"{what} must be a finite number > 0, got {value!r}")
    return value


def non_negative_number(value, what: str) -> float:
    value = finite_number(value, what)
    if value < 0:
        raise ValueError(f"{what} must be a finite number >= 0, got {value!r}")
    return value


def positive_int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return value


def one_of(value, choices, what: str):
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r}; choose one of {list(choices)}")
    return value
