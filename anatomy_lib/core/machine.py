"""The fp32 matmul peak of the machine that computed the stored results: measured once, on an idle machine, and
stored beside the results (``results/machine/matmul-peak.json``), so that every page that states it or converts a
stored CPU time into GPU minutes (the seminar guide, the scale page, chapter 7) uses the same number.

Why stored and not probed at build time: the stored timings were measured on the results' machine, so their
conversion needs that machine's peak, not the build machine's; and a probe taken while anything else runs (a
background sweep on one of two cores) reads about half the peak: two pages of one build once gave 101 and 135
GFLOP/s for one machine. ``python -m anatomy_lib.benchmark peak --store`` measures and stores it (run it with
the machine otherwise idle); ``matmul_peak()`` reads it, and measures now only where nothing is stored.
"""
from __future__ import annotations

import json
import platform
import time
from datetime import datetime, timezone
from pathlib import Path

import torch

from .flops import PEAK_SIZES, matmul_peak_gflops
from .locks import exclusive
from .results import _atomic_write, data_root, environment

PEAK_FILE = Path("machine") / "matmul-peak.json"
ROUNDS = 5  # probes, best kept: a probe can only be slowed down by other work, never sped up


def peak_path(root: Path | None = None) -> Path:
    return (Path(root) if root is not None else data_root() / "results") / PEAK_FILE


def cpu_model() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo; the platform's processor string elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def measure_peak(rounds: int = ROUNDS, sizes=PEAK_SIZES) -> dict:
    """The best of ``rounds`` matmul probes with every thread torch uses, with what was measured and where."""
    started = time.perf_counter()
    probes = [matmul_peak_gflops(sizes=sizes) for _ in range(rounds)]
    return {"matmul_peak_gflops": max(probes), "probes_gflops": [round(p, 2) for p in probes],
            "threads": torch.get_num_threads(), "sizes": list(sizes), "cpu": cpu_model(),
            "seconds": round(time.perf_counter() - started, 2),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "environment": environment()}


def store_peak(record: dict, root: Path | None = None) -> Path:
    path = peak_path(root)
    with exclusive(path):
        _atomic_write(path, (json.dumps(record, indent=1, sort_keys=True) + "\n").encode())
    return path


def stored_peak(root: Path | None = None) -> dict | None:
    """The stored record, or None where none is stored."""
    path = peak_path(root)
    return json.loads(path.read_text()) if path.is_file() else None


def matmul_peak(root: Path | None = None) -> tuple[float, str]:
    """(GFLOP/s, where it comes from, in words): the stored peak of the results' machine, else one measured now
    on this machine (said so: a build machine busy with other work understates it)."""
    record = stored_peak(root)
    if record is not None:
        return (float(record["matmul_peak_gflops"]),
                f"the fp32 matmul peak of the machine that computed the stored results ({record['cpu']}, "
                f"{record['threads']} threads), best of {len(record['probes_gflops'])} probes on "
                f"{record['created'][:10]}")
    return (matmul_peak_gflops(), "the fp32 matmul peak of this machine, probed now (none is stored: a busy "
                                  "machine reads low)")
