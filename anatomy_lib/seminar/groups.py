"""Group work: the verdicts of several groups that ran one chapter with different choices, side by side.

A group is the chapter's defaults with overrides: parameters of the chapter's own parameter class, ``blocks_seed``
(another selection of evaluation text), ``specimen`` (the same diagnostic on another model) or ``experiment``
(another experiment of the chapter that judges the same claims: chapter 7's compute-optimal ``"frontier"``).
Every session's groups are meant to be stored (``data/``), so a group's column comes from the store in seconds;
a group a reader invents is computed, as its chapter would.

Sessions 8 and 9 teach the atlas and the verdicts, which have no claims of their own: their groups' columns hold
the claims of the chapters they sum up (the dissection chapters for the atlas, every chapter for the verdicts).
"""
from __future__ import annotations

import contextlib
import io
from dataclasses import replace

import pandas as pd

from .. import growth
from ..core.lab import NotStored, open_lab
from ..verdicts import CHAPTERS, NO_SECOND_SPECIMEN, book_claims

GROUP_KEYS = ("blocks_seed", "specimen", "experiment")  # overrides that are not a parameter of the chapter
EXPERIMENTS = {7: ("frontier",)}  # chapter -> the further experiments a group may name
DISSECTION = tuple(c.number for c in CHAPTERS if not c.trains_own_models and c.number != 1)
SUMMARY_SESSIONS = {8: DISSECTION, 9: tuple(c.number for c in CHAPTERS)}  # session -> the chapters it sums up
NOT_STORED = "not stored"  # a group's cell where its result is missing from a read-only store (``missing="mark"``)
NOT_STATED = "not stated"  # a group's cell for a claim its experiment does not judge


def group_lab(lab, overrides: dict, progress: bool = False, read_only: bool = False):
    """The lab a group runs in: ``lab`` itself, or one on another specimen or selection of text."""
    other = overrides.get("specimen")
    blocks_seed = overrides.get("blocks_seed")
    if (other is None or other == lab.specimen.name) and blocks_seed is None:
        found = lab
    else:
        with contextlib.redirect_stdout(io.StringIO()) if not progress else contextlib.nullcontext():
            found = open_lab(other or lab.specimen, lab.profile, seed=0 if blocks_seed is None else blocks_seed,
                             progress=progress)
    return found.read_only() if read_only else found


def _experiment_claims(lab, chapter: int, experiment: str, read_only: bool) -> list:
    """The claims of one of ``EXPERIMENTS``: chapter 7's frontier, read as the chapter reads it (the jobs kept so
    far; the CPU-hours sweep is never started here)."""
    if chapter not in EXPERIMENTS or experiment not in EXPERIMENTS[chapter]:
        raise ValueError(f"no experiment {experiment!r} in chapter {chapter}; choose one of {EXPERIMENTS}")
    params = growth.FrontierParams.for_profile(lab.profile.name)
    if read_only and not growth.frontier_stored(params):
        raise NotStored(f"the compute-optimal frontier is not stored at profile {lab.profile.name}")
    tables = growth.frontier_kept(params)
    return growth.frontier_claims(tables, params)


def _one_group(lab, book_chapter, overrides: dict, progress: bool, read_only: bool, compute_options) -> list:
    this_lab = group_lab(lab, overrides, progress, read_only)
    if overrides.get("experiment"):
        return _experiment_claims(this_lab, book_chapter.number, overrides["experiment"], read_only)
    params_overrides = {k: v for k, v in overrides.items() if k not in GROUP_KEYS}
    specimen = None if book_chapter.trains_own_models else this_lab.specimen.name
    params = replace(book_chapter.defaults(lab.profile.name, specimen), **params_overrides)
    with contextlib.redirect_stdout(io.StringIO()) if not progress else contextlib.nullcontext():
        tables = book_chapter.compute(this_lab, params, progress=progress, **compute_options)
    return book_chapter.paper_claims(tables, params)


def group_verdicts(lab, chapter: int, groups: dict[str, dict], progress: bool = False, read_only: bool = False,
                   missing: str = "raise", **compute_options) -> pd.DataFrame:
    """One row per claim of ``chapter``, one verdict column per group: each group's parameters are the chapter's
    defaults with its overrides (``GROUP_KEYS`` open another lab or name another experiment). Results come from
    the store where they match, and are computed otherwise, as the chapter would (never, with ``read_only``: a
    missing result raises ``NotStored``, or with ``missing="mark"`` fills the group's column with
    ``NOT_STORED``). Claims are matched by position, so a claim about "L11" on SmolLM2 meets the claim about the
    layer at the same relative depth on another specimen; the first group's wording names the row. A group that
    names an experiment is matched by the claim's wording instead, and the other groups leave out that
    experiment's claims (its column holds them). Sessions 8 and 9 (``SUMMARY_SESSIONS``) put the claims of the
    chapters they sum up side by side, one row per claim with its chapter."""
    if missing not in ("raise", "mark"):
        raise ValueError(f"missing is 'raise' or 'mark', got {missing!r}")
    if chapter in SUMMARY_SESSIONS:
        return _summary_verdicts(lab, chapter, groups, progress, read_only, missing)
    by_number = {c.number: c for c in CHAPTERS}
    if chapter not in by_number:
        raise ValueError(f"no chapter {chapter} with claims; choose one of "
                         f"{sorted(set(by_number) | set(SUMMARY_SESSIONS))}")
    book_chapter = by_number[chapter]
    found: dict[str, list | None] = {}
    for name, overrides in groups.items():
        try:
            found[name] = _one_group(lab, book_chapter, dict(overrides), progress, read_only, compute_options)
        except NotStored:
            if missing == "raise":
                raise
            found[name] = None
    named = {c.experiment for name, claims in found.items() if groups[name].get("experiment") and claims
             for c in claims}
    table = None
    for name, claims in found.items():
        by_wording = bool(groups[name].get("experiment"))
        if claims is None:
            part = pd.DataFrame(columns=["claim", "paper", name, "position"])
        else:
            kept = claims if by_wording else [c for c in claims if c.experiment not in named]
            part = pd.DataFrame([{"claim": c.claim, "paper": c.paper, name: c.verdict} for c in kept])
            part["position"] = range(len(part))
        if table is None:
            table = part
        elif by_wording:
            table = table.merge(part[["claim", "paper", name]], on=["claim", "paper"], how="left")
            new = part[~part.set_index(["claim", "paper"]).index.isin(table.set_index(["claim", "paper"]).index)]
            table = pd.concat([table, new.drop(columns="position")], ignore_index=True)
        else:
            table = table.merge(part[["position", name]], on="position", how="outer")
    for name, claims in found.items():
        table[name] = table[name].fillna(NOT_STORED if claims is None else NOT_STATED)
    return table.drop(columns="position").reset_index(drop=True)


def _summary_verdicts(lab, session: int, groups: dict[str, dict], progress: bool, read_only: bool,
                      missing: str) -> pd.DataFrame:
    """Sessions 8 and 9: every claim of the chapters the session sums up, one verdict column per group, matched by
    chapter and position (as ``verdicts.claims_by_specimen`` does). A group on another specimen has no row of
    chapter 1 (it describes the paper's specimen) or chapter 7 (models trained from scratch): its cell says so."""
    table = None
    for name, overrides in groups.items():
        params_overrides = {k: v for k, v in overrides.items() if k not in GROUP_KEYS}
        if params_overrides or overrides.get("experiment"):
            raise ValueError(f"session {session}'s groups change the specimen or the text only, got {overrides}")
        try:
            this_lab = group_lab(lab, overrides, progress, read_only)
        except NotStored:
            if missing == "raise":
                raise
            this_lab = None
        other = this_lab is not None and this_lab.specimen.name != lab.specimen.name
        chapters = tuple(c for c in CHAPTERS if c.number in SUMMARY_SESSIONS[session]
                         and not (other and c.number in NO_SECOND_SPECIMEN))
        with contextlib.redirect_stdout(io.StringIO()) if not progress else contextlib.nullcontext():
            claims = book_claims(this_lab, progress=progress, chapters=chapters) if this_lab is not None \
                else pd.DataFrame(columns=["chapter", "Claim", "Paper", "Verdict"])
        part = claims.rename(columns={"Claim": "claim", "Paper": "paper", "Verdict": name})
        part = part.assign(position=part.groupby("chapter").cumcount())[["chapter", "position", "claim", "paper",
                                                                         name]]
        if table is None:
            table = part
        else:
            table = table.merge(part[["chapter", "position", name]], on=["chapter", "position"], how="left")
        cells = []
        for chapter, value in zip(table["chapter"], table[name]):
            if isinstance(value, str):
                cells.append(value)
            elif other and chapter in NO_SECOND_SPECIMEN:
                cells.append(NO_SECOND_SPECIMEN[chapter])
            elif missing == "raise" and read_only:
                raise NotStored(f"group {name!r}: chapter {chapter}'s claims are not stored")
            else:
                cells.append(NOT_STORED)
        table[name] = cells
    return table.drop(columns="position").reset_index(drop=True)
