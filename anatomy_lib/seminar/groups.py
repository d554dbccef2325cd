"""Group work: the verdicts of several groups that ran one chapter with different choices, side by side.

A group is the chapter's defaults with overrides: parameters of the chapter's own parameter class, ``blocks_seed``
(another selection of evaluation text), ``specimen`` (the same diagnostic on another model) or ``experiment``
(another experiment of the chapter that judges the same claims: chapter 7's compute-optimal ``"frontier"``).
Every session's groups are meant to be stored (``data/``), so a group's column comes from the store in seconds;
a group a reader invents is computed, as its chapter would.

Sessions 8 and 9 teach the atlas and the verdicts, which have no claims of their own: their groups' columns hold
the claims of the chapters they sum up (the dissection chapters for the atlas, every chapter for the verdicts).

Rows are matched by position and worded as the first group's claims; a group whose own claim reads otherwise (on
Gemma, chapter 3 substitutes the layers at the same relative depth, not the same layer numbers) says so in its cell
(``own_wording``).
``group_agreement`` puts the table in a sentence for the teacher's notes: where the groups agree and where not.
"""
from __future__ import annotations

import contextlib
import difflib
import io
from dataclasses import replace

import pandas as pd

from .. import growth
from ..core.lab import NotStored, open_lab
from ..core.rules import VERDICTS
from ..verdicts import CHAPTERS, NO_SECOND_SPECIMEN, book_claims

GROUP_KEYS = ("blocks_seed", "specimen", "experiment")  # overrides that are not a parameter of the chapter
WORDING = "group's wording"  # a column used while merging: a group's own claim beside the row's
EXPERIMENTS = {7: ("frontier",)}  # chapter -> the further experiments a group may name
DISSECTION = tuple(c.number for c in CHAPTERS if not c.trains_own_models and c.number != 1)
SUMMARY_SESSIONS = {8: DISSECTION, 9: tuple(c.number for c in CHAPTERS)}  # session -> the chapters it sums up
NOT_STORED = "not stored"  # a group's cell where its result is missing from a read-only store (``missing="mark"``)
NOT_STATED = "not stated"  # a group's cell for a claim its experiment does not judge
ANOTHER_MODEL = "another model"  # chapter 1's cells on a specimen that is not the paper's: its value, not a verdict
OWN_CLAIM = "its own claim"  # in a cell: the words of the group's claim that differ from the row's


def own_wording(row_claim: str, group_claim) -> str:
    """Where ``group_claim`` reads otherwise than ``row_claim``: its differing words, each run inside the claim with
    the word before it so that it reads on its own (another layer range reads "layer(s)" and its numbers; a run
    that opens the claim is its subject and stands alone); empty where they read the same."""
    if not isinstance(group_claim, str) or not isinstance(row_claim, str) or group_claim == row_claim:
        return ""
    row_words, group_words = row_claim.split(), group_claim.split()
    runs = []
    for tag, _, _, start, end in difflib.SequenceMatcher(a=row_words, b=group_words, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            runs.append(" ".join(group_words[max(start - 1, 0):end]))
    return "; ".join(runs) or group_claim  # only words dropped: the group's whole wording


def with_wording(verdict, row_claim: str, group_claim) -> str:
    """A group's cell: its verdict, and its own claim's words where they differ from the row's."""
    differs = own_wording(row_claim, group_claim)
    return f"{verdict} ({OWN_CLAIM}: {differs})" if differs else verdict


def verdict_word(cell) -> str | None:
    """The verdict a cell holds (its words before any note), or None for a cell that judges nothing (not stored,
    not stated, no second specimen)."""
    if not isinstance(cell, str):
        return None
    word = cell.split(" (")[0]
    return word if word in VERDICTS else None


def group_agreement(table: pd.DataFrame, names) -> str:
    """The groups' table in a sentence, computed: on how many of the claims two or more groups judge they give the
    same verdict, and, where not, which group gave which; then the claims only one group judges, with their
    verdicts. For the teacher's notes, so that what they say of the groups can never contradict the table."""
    names = list(names)
    shared, differ = 0, []
    alone: dict[str, list[str]] = {name: [] for name in names}
    for _, row in table.iterrows():
        judged = {name: verdict_word(row[name]) for name in names if verdict_word(row[name])}
        if len(judged) == 1:
            name, verdict = next(iter(judged.items()))
            alone[name].append(verdict)
        if len(judged) < 2:
            continue
        shared += 1
        if len(set(judged.values())) > 1:
            by_verdict: dict[str, list[str]] = {}
            for name, verdict in judged.items():
                by_verdict.setdefault(verdict, []).append(name)
            differ.append(f"\"{row['claim']}\": " + " against ".join(f"{verdict} ({', '.join(groups)})"
                                                                    for verdict, groups in by_verdict.items()))
    if shared:
        out = (f"The groups agree on {shared - len(differ)} of the {shared} claims more than one of them judges"
               + (f"; they differ on {len(differ)}: " + "; ".join(differ) + "." if differ else "."))
    else:
        out = "No claim is judged by more than one group."
    only = []
    for name, verdicts in alone.items():
        if verdicts:
            counts = pd.Series(verdicts).value_counts()
            only.append(f"{name}, {len(verdicts)} claim{'s' if len(verdicts) != 1 else ''} ("
                        + ", ".join(f"{n} {verdict}" for verdict, n in counts.items()) + ")")
    if only:
        out += " Judged by one group only: " + "; ".join(only) + "."
    return out


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
    layer at the same relative depth on another specimen; the first group's wording names the row, and a cell whose
    group's claim reads otherwise adds its own words (``with_wording``). A group that
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
            # chapter 1 describes the paper's specimen: on another model there is no claim to judge, only its value
            described = chapter in NO_SECOND_SPECIMEN and not book_chapter.trains_own_models and \
                groups[name].get("specimen") not in (None, lab.specimen.name)
            part = pd.DataFrame([{"claim": c.claim, "paper": c.paper,
                                  name: f"{c.ours} ({ANOTHER_MODEL})" if described else c.verdict} for c in kept],
                                columns=["claim", "paper", name])
            part["position"] = range(len(part))
        if table is None:
            table = part
        elif by_wording:
            table = table.merge(part[["claim", "paper", name]], on=["claim", "paper"], how="left")
            new = part[~part.set_index(["claim", "paper"]).index.isin(table.set_index(["claim", "paper"]).index)]
            table = pd.concat([table, new.drop(columns="position")], ignore_index=True)
        else:
            theirs = part[["position", name, "claim"]].rename(columns={"claim": WORDING})
            table = table.merge(theirs, on="position", how="outer")
            table[name] = [with_wording(verdict, claim, wording) if isinstance(verdict, str) else verdict
                           for verdict, claim, wording in zip(table[name], table["claim"], table[WORDING])]
            table["claim"] = table["claim"].fillna(table[WORDING])  # a row only this group has: its own words
            table = table.drop(columns=WORDING)
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
            table = part.assign(**{WORDING: part["claim"]})
        else:
            theirs = part[["chapter", "position", name, "claim"]].rename(columns={"claim": WORDING})
            table = table.drop(columns=WORDING).merge(theirs, on=["chapter", "position"], how="left")
        cells = []
        for chapter, value, claim, wording in zip(table["chapter"], table[name], table["claim"], table[WORDING]):
            if isinstance(value, str):
                cells.append(with_wording(value, claim, wording))
            elif other and chapter in NO_SECOND_SPECIMEN:
                cells.append(NO_SECOND_SPECIMEN[chapter])
            elif missing == "raise" and read_only:
                raise NotStored(f"group {name!r}: chapter {chapter}'s claims are not stored")
            else:
                cells.append(NOT_STORED)
        table[name] = cells
    return table.drop(columns=["position", WORDING]).reset_index(drop=True)
