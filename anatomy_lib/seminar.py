"""The seminar guide's computations: how long each chapter takes, a 90-minute plan per session, the exercises'
rehearsal timings, and one table of verdicts for groups that ran a chapter with different parameters.

Times are measured where the book has a measurement: every committed result's manifest records the wall time
of its computation and the machine it ran on, and ``rehearsal`` times every exercise's check on this machine.

Everything else is an estimate, labelled as one, from two stated
assumptions: a diagnostic's time scales with the work its profile asks for (evaluated tokens, training tokens or
training FLOPs, read from the same parameter classes the chapters use), and a GPU runs the same work faster by
the ratio of its fp32 matmul peak to this CPU's measured one (``core.gpu``, the estimate the scale page uses too:
an optimistic bound, since small models use a GPU less well than a CPU).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

import pandas as pd

from . import exercises
from .core.estimate import stored_runs
from .core.gpu import from_cpu
from .core.lab import open_lab
from .core.profiles import PROFILES
from .quantisation import QuantisationParams
from .verdicts import CHAPTERS

# chapters 3 and 4's quantisation null is its own package (it builds on both and on chapter 7): counted with 3
OWN_PACKAGES = {QuantisationParams: 3}
PARAMS_OF = {cls.DIAGNOSTIC: cls for chapter in CHAPTERS for cls in chapter.stored} | {
    cls.DIAGNOSTIC: cls for cls in OWN_PACKAGES}
CHAPTER_OF = {cls.DIAGNOSTIC: chapter.number for chapter in CHAPTERS for cls in chapter.stored} | {
    cls.DIAGNOSTIC: number for cls, number in OWN_PACKAGES.items()}
GPUS = ("Colab T4", "A100")  # the free Colab GPU and a larger one (``core.gpu.FP32_TFLOPS``)


def work_ratio(diagnostic: str, to: str = "paper", base: str = "quick") -> float:
    """How much more work profile ``to`` asks of ``diagnostic`` than ``base``, by the parameters' own ``work``
    (evaluated tokens, training tokens of every recovery run, training FLOPs of every growth run)."""
    cls = PARAMS_OF[diagnostic]
    return cls.for_profile(to).work(PROFILES[to]) / cls.for_profile(base).work(PROFILES[base])


def chapter_runs(root=None) -> pd.DataFrame:
    """``core.estimate.stored_runs`` with each result's chapter."""
    runs = stored_runs(root, PARAMS_OF)
    return runs.assign(chapter=runs["diagnostic"].map(CHAPTER_OF))


def chapter_times(cpu_gflops: float, runs: pd.DataFrame | None = None, profile: str = "quick") -> pd.DataFrame:
    """Minutes per chapter to recompute its stored results: measured at ``profile`` on the machine named in the
    manifests, and estimated for the paper profile and for GPUs (see the module docstring). ``cpu_gflops`` is
    the matmul peak of the CPU the measurements come from."""
    runs = chapter_runs() if runs is None else runs
    runs = runs[runs["profile"] == profile]
    if "specimen" not in runs:
        runs = runs.assign(specimen="")
    rows = []
    for (chapter, specimen), group in runs.groupby(["chapter", "specimen"]):
        measured = group["wall_time_s"].sum() / 60
        paper = sum(r.wall_time_s * work_ratio(r.diagnostic, "paper", profile) for r in group.itertuples()) / 60
        row = {"chapter": int(chapter), "specimen": specimen or "trained from scratch",
               "diagnostics": ", ".join(sorted(set(group["diagnostic"]))),
               f"{profile}, CPU (measured)": measured, "paper, CPU (estimated)": paper}
        for gpu in GPUS:
            row[f"{profile}, {gpu} (estimated)"] = from_cpu(measured, cpu_gflops, gpu)
            row[f"paper, {gpu} (estimated)"] = from_cpu(paper, cpu_gflops, gpu)
        rows.append(row)
    return pd.DataFrame(rows)


# ---- the exercises, rehearsed --------------------------------------------------------------------------------
def rehearsal(chapters=None) -> pd.DataFrame:
    """Every exercise's check timed on this machine as a student meets it: the untouched stub (the first run),
    then the library's answer (a finished solution runs every case). Seconds, measured now."""
    rows = []
    for exercise in exercises.EXERCISES.values():
        if chapters is not None and exercise.chapter not in chapters:
            continue
        namespace: dict = {}
        exec(exercise.stub, namespace)  # the stub cell, exactly as the chapter gives it
        started = time.perf_counter()
        first = exercises.check(exercise.key, namespace[exercise.function_name])
        stub_s = time.perf_counter() - started
        started = time.perf_counter()
        solved = exercises.check(exercise.key, exercise.reference)
        rows.append({"chapter": exercise.chapter, "exercise": exercise.key, "title": exercise.title,
                     "cases": solved.cases_total, "stub check (s)": stub_s,
                     "solved check (s)": time.perf_counter() - started,
                     "checker works": not first.passed and solved.passed})
    return pd.DataFrame(rows)


# ---- 90-minute plans -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Segment:
    minutes: int
    activity: str
    cells: str  # "live" (run in the session), "read" (read from the built page) or "pause" (no computer)


@dataclass(frozen=True)
class SessionPlan:
    chapter: int
    show: str  # what the teacher opens the session with
    live: str  # the cells run live at the defaults
    groups: dict  # {group: parameter overrides} for the group-work segment (``group_verdicts``)
    fallback: str  # the same session without a kernel


def _segments(plan: SessionPlan) -> list[Segment]:
    keys = ", ".join(f"`{e.key}`" for e in exercises.of_chapter(plan.chapter))
    return [Segment(10, f"The teacher shows {plan.show}.", "read"),
            Segment(10, "Pause: everyone writes an answer to the session's *predict before you run* questions.",
                    "pause"),
            Segment(15, f"Run {plan.live} at the chapter's defaults (stored results: the page's own execution "
                        "time, in the first table above); compare with the predictions.", "live"),
            Segment(25, f"In pairs, the exercises that check themselves ({keys}): stub, check, hint, check again; "
                        "then one written exercise of the chapter.", "live"),
            Segment(15, "Group work: each pair reruns the chapter with one knob changed (the groups below) and the "
                        "verdicts go side by side (`seminar.group_verdicts`).", "live"),
            Segment(15, "Discussion: the session's questions, the spread of verdicts across groups, and which "
                        "predictions were wrong.", "pause")]


PLANS = {
    1: SessionPlan(1, "the architecture and the parameter budget tables", "the baseline-perplexity cell",
                   {"defaults": {}}, "read the budget table and the interval on the built page; the exercises' "
                   "checkers run in any Python with the library installed"),
    2: SessionPlan(2, "the paper's importance map beside ours (the anatomy strip)", "the sweep cell (stored)",
                   {"defaults": {}, "norms kept (matrices only)": {"tensors": "matrices"},
                    "another selection of text": {"blocks_seed": 1, "seed": 1}},
                   "the static explorer on the page answers the single-layer questions; joint ablations need a "
                   "kernel"),
    3: SessionPlan(3, "the in-sample against held-out R² figure", "the fits cell (stored)",
                   {"defaults": {}, "elementwise": {"formulation": "elementwise"}},
                   "the kernel-free prediction explorer on the page"),
    4: SessionPlan(4, "the delta-correlation figure with its nulls", "the structure cell (stored)",
                   {"defaults": {}}, "the kernel-free delta map explorer on the page"),
    5: SessionPlan(5, "the strategy map and the alpha curves", "the strategy and alpha cells (stored)",
                   {"defaults": {}}, "the kernel-free strategy explorer on the page"),
    6: SessionPlan(6, "the recovery curves with their shams", "the recovery cell (stored)",
                   {"defaults": {}}, "the kernel-free recovery explorer on the page (recomputing a run takes "
                   "minutes per layer on a CPU)"),
    7: SessionPlan(7, "the loss-against-FLOPs figure with the shallow control", "the growth cells (stored)",
                   {"defaults": {}}, "the kernel-free growth explorer on the page; training needs a GPU at the "
                   "paper profile"),
    8: SessionPlan(8, "the atlas figures, both specimens at relative depth", "the atlas cells (stored)",
                   {"defaults": {}}, "the atlas page itself: every figure is static"),
    9: SessionPlan(9, "the verdicts table and its counts", "the verdicts cells (stored)",
                   {"defaults": {}}, "the verdicts page itself: every table is static"),
}


def session_plan(chapter: int) -> pd.DataFrame:
    """The minute-by-minute plan of a chapter's session (90 minutes): start, end, activity, and whether its cells
    run live, are read from the built page, or the computers stay closed."""
    if chapter not in PLANS:
        raise ValueError(f"no session for chapter {chapter}; choose one of {sorted(PLANS)}")
    rows, start = [], 0
    for segment in _segments(PLANS[chapter]):
        rows.append({"from (min)": start, "to (min)": start + segment.minutes, "activity": segment.activity,
                     "cells": segment.cells})
        start += segment.minutes
    return pd.DataFrame(rows)


def session_minutes(chapter: int) -> int:
    return int(session_plan(chapter)["to (min)"].iloc[-1])


# ---- group work ------------------------------------------------------------------------------------------------
def group_verdicts(lab, chapter: int, groups: dict[str, dict], progress: bool = False, **compute_options):
    """One row per claim of ``chapter``, one verdict column per group: each group's parameters are the chapter's
    defaults with its overrides (``blocks_seed`` picks another selection of evaluation text). Results come from
    the store where they match, and are computed otherwise, as the chapter would."""
    by_number = {c.number: c for c in CHAPTERS}
    if chapter not in by_number:
        raise ValueError(f"no chapter {chapter} with claims; choose one of {sorted(by_number)}")
    book_chapter = by_number[chapter]
    table = None
    for name, overrides in groups.items():
        overrides = dict(overrides)
        blocks_seed = overrides.pop("blocks_seed", None)
        group_lab = lab if blocks_seed is None else open_lab(lab.specimen, lab.profile, seed=blocks_seed,
                                                             progress=progress)
        params = replace(book_chapter.defaults(lab.profile.name, lab.specimen.name), **overrides)
        tables = book_chapter.compute(group_lab, params, progress=progress, **compute_options)
        claims = pd.DataFrame([{"claim": c.claim, "paper": c.paper, name: c.verdict}
                               for c in book_chapter.paper_claims(tables, params)])
        table = claims if table is None else table.merge(claims[["claim", name]], on="claim", how="outer")
    return table
