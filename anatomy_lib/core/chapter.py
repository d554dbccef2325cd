"""The chapter protocol: what every chapter package exposes, so that chapter 9, the seminar guide and the CLI
can treat chapters alike without knowing any one of them.

A chapter package (``specimen``, ``importance``, ``predictability``, ``structure``, ``manipulation``,
``recovery``, ``growth``) exposes, with these argument orders:

- ``Params``: its ``DiagnosticParams`` subclass (``Params.for_profile(profile)`` gives its defaults);
- ``compute(lab, params=None, *, recompute=False, progress=True) -> tables``: every table the chapter's
  claims and findings need, through the results store (``params=None``: the defaults at the lab's profile;
  a chapter that trains its own models ignores ``lab``, which may be None);
- ``paper_claims(tables, params) -> list[Claim]``: the paper's claims beside ours, each judged by a rule of
  ``rules``;
- ``findings(tables, params, specimen_name) -> list[str]``: what the chapter finds, in computed sentences;

and ``CHAPTER``, the ``Chapter`` record below, which chapter 9 iterates. Chapters may take keyword options
after these arguments (chapter 2's thresholds, say); the protocol calls them with their defaults.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

from .params import DiagnosticParams
from .rules import Claim

Tables = dict[str, pd.DataFrame]


@dataclass(frozen=True)
class Chapter:
    """One chapter of the book, as chapter 9 and the seminar guide see it."""

    number: int
    page: str  # the notebook's name in book/, without .ipynb
    title: str
    Params: type[DiagnosticParams]
    compute: Callable[..., Tables]
    paper_claims: Callable[..., list[Claim]]
    findings: Callable[..., list[str]]
    trains_own_models: bool = False  # growth: its rows are about models trained from scratch, not the specimen
    stored: tuple[type[DiagnosticParams], ...] = ()  # the parameters of every diagnostic it stores

    def defaults(self, profile, specimen: str | None = None) -> DiagnosticParams:
        """The chapter's defaults at ``profile`` (on ``specimen``, where the profile sizes it apart)."""
        return self.Params.for_profile(profile, specimen=specimen)
