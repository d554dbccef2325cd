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

import html
import time
from dataclasses import dataclass, replace

import pandas as pd
from IPython.display import HTML

from . import exercises
from .core.display import show_table
from .core.estimate import stored_runs
from .core.gpu import from_cpu
from .core.lab import open_lab
from .core.profiles import PROFILES
from .importance import SECOND_SELECTION
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
    predict: str = ""  # the questions everyone answers before running anything
    discuss: str = ""  # the discussion questions that close the session


def _segments(plan: SessionPlan) -> list[Segment]:
    keys = ", ".join(e.key for e in exercises.of_chapter(plan.chapter))
    return [Segment(10, f"The teacher shows {plan.show}.", "read"),
            Segment(10, "Pause: everyone writes an answer to the session's predict-before-you-run questions.",
                    "pause"),
            Segment(15, f"Run {plan.live} at the chapter's defaults (stored results: the page's own execution "
                        "time, in the first table above); compare with the predictions.", "live"),
            Segment(25, f"In pairs, the exercises that check themselves ({keys}): stub, check, hint, check again; "
                        "then one written exercise of the chapter.", "live"),
            Segment(15, "Group work: each pair reruns the chapter with one knob changed (the groups below) and the "
                        "verdicts go side by side (seminar.group_verdicts).", "live"),
            Segment(15, "Discussion: the session's questions, the spread of verdicts across groups, and which "
                        "predictions were wrong.", "pause")]


PLANS = {
    1: SessionPlan(1, "the architecture and the parameter budget tables", "the baseline-perplexity cell",
                   {"defaults": {}}, "read the budget table and the interval on the built page; the exercises' "
                   "checkers run in any Python with the library installed",
                   predict=('What share of the parameters is the token embedding? Would a perplexity interval be '
                            'narrower or wider if it resampled tokens instead of blocks?'),
                   discuss=('The offline specimen is quantised and instruction-tuned. Which later claims could that '
                            'change, and which should be immune?')),
    2: SessionPlan(2, "the paper's importance map beside ours (the anatomy strip)", "the sweep cell (stored)",
                   {"defaults": {}, "norms kept (matrices only)": {"tensors": "matrices"},
                    "another selection of text": {"blocks_seed": SECOND_SELECTION, "seed": SECOND_SELECTION}},
                   "the static explorer on the page answers the single-layer questions; joint ablations need a "
                   "kernel",
                   predict=("Which layer will matter most, and will replacing a layer by its neighbours' mean and "
                            'skipping it agree?'),
                   discuss=('Is the paper\'s map a map of the model or of its ablation method? What would an "anti-'
                            'layer" need to be real?')),
    3: SessionPlan(3, "the in-sample against held-out R² figure", "the fits cell (stored)",
                   {"defaults": {}, "elementwise": {"formulation": "elementwise"}},
                   "the kernel-free prediction explorer on the page",
                   predict=('With one sample per layer pair and more features than samples, what in-sample R² will a '
                            'randomly initialised model reach? Will ridge beat copying the previous layer on held-out '
                            'layers?'),
                   discuss='Is there an "R²-perplexity paradox" once R² is measured out of sample?'),
    4: SessionPlan(4, "the delta-correlation figure with its nulls", "the structure cell (stored)",
                   {"defaults": {}}, "the kernel-free delta map explorer on the page",
                   predict=('What lag-one correlation do independent layers give, and what do a random walk and an '
                            'autoregressive process give?'),
                   discuss='When does a number that matches a null model still tell us something?'),
    5: SessionPlan(5, "the strategy map and the alpha curves", "the strategy and alpha cells (stored)",
                   {"defaults": {}}, "the kernel-free strategy explorer on the page",
                   predict=('Which strategy keeps the most facts when applied to every connective-tissue layer at once?'
                            ' Is there an alpha that improves perplexity?'),
                   discuss='What makes a coherence measure trustworthy? How many questions does a difference need?'),
    6: SessionPlan(6, "the recovery curves with their shams", "the recovery cell (stored)",
                   {"defaults": {}}, "the kernel-free recovery explorer on the page (recomputing a run takes "
                   "minutes per layer on a CPU)",
                   predict=('Will the most important layer recover slowest? How much does fine-tuning alone (the sham) '
                            'move the loss?'),
                   discuss=('"recovers within N steps" is a claim about an optimiser as much as about a layer. What '
                            'would a claim about the layer alone look like?')),
    7: SessionPlan(7, "the loss-against-FLOPs figure with the shallow control", "the growth cells (stored)",
                   {"defaults": {}}, "the kernel-free growth explorer on the page; training needs a GPU at the "
                   "paper profile",
                   predict=('At equal FLOPs, will growing a model beat training it at full depth from the start? Will a'
                            ' shallow model trained on the whole budget beat both?'),
                   discuss=('The paper compared at equal steps. What does that comparison reward, and what would '
                            'convince you that a growth schedule helps?')),
    8: SessionPlan(8, "the atlas figures, both specimens at relative depth", "the atlas cells (stored)",
                   {"defaults": {}}, "the atlas page itself: every figure is static",
                   predict=("Which of the paper's layer-specific claims will hold on Gemma-3-270M at the same relative "
                            'depth?'),
                   discuss='How many specimens would a claim about "transformers" need?'),
    9: SessionPlan(9, "the verdicts table and its counts", "the verdicts cells (stored)",
                   {"defaults": {}}, "the verdicts page itself: every table is static",
                   predict="Which of the paper's claims will survive the controls?",
                   discuss=('Which verdicts would change on the base model, at the `paper` profile, or with another '
                            'corpus? Write the experiment that would settle one of them.')),
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
def group_verdicts(lab, chapter: int, groups: dict[str, dict], progress: bool = False, read_only: bool = False,
                   **compute_options):
    """One row per claim of ``chapter``, one verdict column per group: each group's parameters are the chapter's
    defaults with its overrides (``blocks_seed`` picks another selection of evaluation text). Results come from
    the store where they match, and are computed otherwise, as the chapter would (never, with ``read_only``:
    a missing result raises ``NotStored``)."""
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
        group_lab = group_lab.read_only() if read_only else group_lab
        params = replace(book_chapter.defaults(lab.profile.name, lab.specimen.name), **overrides)
        tables = book_chapter.compute(group_lab, params, progress=progress, **compute_options)
        claims = pd.DataFrame([{"claim": c.claim, "paper": c.paper, name: c.verdict}
                               for c in book_chapter.paper_claims(tables, params)])
        table = claims if table is None else table.merge(claims[["claim", name]], on="claim", how="outer")
    return table


def show_plan(chapter: int):
    """A session's plan as the guide shows it: the minute table, the groups for the group work, the fallback."""
    plan = PLANS[chapter]
    groups = "; ".join(f"<b>{html.escape(name)}</b>: " + (", ".join(f"<code>{k} = {v!r}</code>" for k, v in
                                                                  overrides.items()) or "the chapter's defaults")
                       for name, overrides in plan.groups.items())
    table = show_table(session_plan(chapter), left=("activity", "cells"),
                       caption=f"session plan, {session_minutes(chapter)} minutes")
    return HTML(f"<p><b>Predict before you run</b> (minutes 10 to 20): {html.escape(plan.predict)}</p>"
                + table.data + f"<p><b>Groups</b>: {groups}.</p><p><b>Without a kernel</b>: "
                f"{html.escape(plan.fallback)}.</p><p><b>Discussion</b>: {html.escape(plan.discuss)}</p>")


SESSION_TITLES = {8: "The atlas", 9: "The verdicts"}  # the two chapters without a diagnostic of their own


def _inline(text: str) -> str:
    """Plain text for a printed sheet: HTML-escaped, with the guide's `code` spans as code, not backticks."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _questions(text: str) -> list[str]:
    """A plan's questions, one per answer box (split after each question mark)."""
    out, current = [], ""
    for piece in text.replace("? ", "?\n").splitlines():
        current = (current + " " + piece).strip()
        if current.endswith("?"):
            out.append(current)
            current = ""
    return out + ([current] if current else [])


def handout(chapter: int, claims: pd.DataFrame | None = None) -> HTML:
    """A session's sheet for students, one printed page: the session's title, name and date fields, an answer
    box per prediction (written before anything runs), the exercises to check (the call that checks each), the
    chapter's own claims with the paper's value and a column per group for its verdict, and the discussion
    questions. ``claims`` is ``verdicts.book_claims``'s table (its Chapter, Claim and Paper columns); without it
    the grid has unnamed rows."""
    if chapter not in PLANS:
        raise ValueError(f"no session for chapter {chapter}; choose one of {sorted(PLANS)}")
    plan = PLANS[chapter]
    title = {c.number: c.title for c in CHAPTERS}.get(chapter) or SESSION_TITLES.get(chapter, "")
    predictions = "".join(f'<li><p>{_inline(q)}</p><div class="anatomy-handout-space"></div></li>'
                          for q in _questions(plan.predict))
    checks = "".join(f"<li><b>{html.escape(e.title)}</b>: write <code>{e.function_name}</code>, then "
                     f"<code>exercises.check(\"{e.key}\", {e.function_name})</code></li>"
                     for e in exercises.of_chapter(chapter))
    groups = "".join(f"<th>{html.escape(name)}</th>" for name in plan.groups)
    mine = claims[claims["chapter"] == chapter] if claims is not None else pd.DataFrame()
    named = [(row["Claim"], row["Paper"]) for _, row in mine.iterrows()] or [("", "")] * 3
    rows = "".join(f"<tr><td>{_inline(str(claim))}</td><td>{_inline(str(paper))}</td>"
                   + "<td></td>" * len(plan.groups) + "</tr>" for claim, paper in named)
    return HTML(f'<section class="anatomy-handout"><header><h3>Session {chapter}: {html.escape(title)}</h3>'
                '<p class="anatomy-handout-fields"><span>Name: <span class="anatomy-handout-line"></span></span>'
                '<span>Date: <span class="anatomy-handout-line"></span></span></p></header>'
                f"<p><b>Before you run anything, write down</b> (chapter {chapter}):</p>"
                f'<ol class="anatomy-handout-predictions">{predictions}</ol>'
                f"<p><b>Exercises that check themselves</b> (at the end of chapter {chapter}'s page):</p>"
                f"<ol>{checks}</ol>"
                "<p><b>Your groups' verdicts</b> (reproduced, partly, not reproduced, inconclusive, not "
                "comparable):</p>"
                f'<table class="anatomy-handout-grid"><tr><th>the paper\'s claim</th><th>paper</th>{groups}</tr>'
                f"{rows}</table><p><b>Discussion</b>: {_inline(plan.discuss)}</p></section>")


def handouts(claims: pd.DataFrame | None = None) -> HTML:
    """Every session's sheet in one block, so that print starts each sheet but the first on a new page (CSS
    ``:first-child``: sheets displayed one per output cell would each be the first of its own cell)."""
    sheets = "".join(handout(chapter, claims).data for chapter in sorted(PLANS))
    return HTML(f'<div class="anatomy-handouts">{sheets}</div>')
