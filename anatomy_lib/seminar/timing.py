"""How long the course's pieces take: each chapter's recomputation (measured where the store has a measurement,
estimated otherwise) and each exercise's check, rehearsed on this machine.

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

import pandas as pd

from .. import exercises
from ..core.estimate import stored_runs
from ..core.gpu import from_cpu
from ..core.profiles import PROFILES
from ..growth import FrontierParams
from ..quantisation import QuantisationParams
from ..verdicts import CHAPTERS

# chapters 3 and 4's quantisation null is its own package (it builds on both and on chapter 7): counted with 3;
# chapter 7's compute-optimal frontier is stored apart from the chapter's protocol (``growth.frontier_kept``)
OWN_PACKAGES = {QuantisationParams: 3, FrontierParams: 7}
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
    manifests, and estimated for the paper profile and for GPUs (see the module docstring); a result run apart
    from its chapter (its manifest names the command, ``computed_by``) is left out. ``cpu_gflops`` is
    the matmul peak of the CPU the measurements come from."""
    runs = chapter_runs() if runs is None else runs
    runs = runs[runs["profile"] == profile]
    if "computed_by" in runs:  # a sweep run apart (chapter 6's powered sweep, chapter 7's frontier) is read, not rerun
        runs = runs[runs["computed_by"].fillna("") == ""]
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
