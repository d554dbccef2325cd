"""How long each chapter takes, for planning a seminar (the seminar guide's table).

Measured where the book has a measurement: every committed result's manifest records the wall time of its
computation and the machine it ran on. Everything else is an estimate, labelled as one, from two stated
assumptions: a diagnostic's time scales with the work its profile asks for (evaluated tokens, training tokens or
training FLOPs, read from the same parameter classes the chapters use), and a GPU runs the same work faster by
the ratio of its fp32 matmul peak to this CPU's measured one (an optimistic bound: small models use a GPU
less well than a CPU).
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .runtime import PROFILES

CHAPTER_OF = {"baseline": 1, "importance": 2, "continuations": 2, "predictability": 3, "structure": 4,
              "manipulate": 5, "recovery": 6, "growth": 7}
# fp32 matmul peaks from NVIDIA's datasheets (TFLOP/s): the free Colab GPU and a larger one
GPU_PEAK_TFLOPS = {"Colab T4": 8.1, "A100": 19.5}


def stored_runs(root: str | Path | None = None) -> pd.DataFrame:
    """One row per committed result: diagnostic, chapter, profile, wall time (s), device, platform, created."""
    from .results import data_root

    root = Path(root) if root is not None else data_root() / "results"
    rows = []
    for path in sorted(root.glob("*/*/*.json")):
        manifest = json.loads(path.read_text())
        diagnostic = manifest["diagnostic"]
        rows.append({"diagnostic": diagnostic, "chapter": CHAPTER_OF.get(diagnostic),
                     "profile": profile_of(manifest["request"]),
                     "wall_time_s": float(manifest["wall_time_s"]), "device": manifest.get("device", ""),
                     "platform": manifest.get("environment", {}).get("platform", ""),
                     "created": manifest.get("created", "")})
    return pd.DataFrame(rows, columns=["diagnostic", "chapter", "profile", "wall_time_s", "device", "platform",
                                       "created"])


def profile_of(request: dict) -> str | None:
    """The profile a request was made at (growth requests carry their sizes instead: matched against each
    profile's parameters)."""
    if isinstance(request.get("profile"), dict):
        return request["profile"]["name"]
    if request.get("diagnostic", {}).get("name") == "growth":
        from dataclasses import asdict

        from .growth.experiment import GrowthParams

        for name in PROFILES:
            wanted = json.loads(json.dumps(asdict(GrowthParams.for_profile(name))))
            if request["params"] == wanted:
                return name
    return None


def _tokens(profile: str) -> int:
    p = PROFILES[profile]
    return p.n_blocks * p.block_len


def work_ratio(diagnostic: str, to: str = "paper", base: str = "quick") -> float:
    """How much more work profile ``to`` asks of ``diagnostic`` than ``base``: evaluated tokens, training tokens
    (recovery) or training FLOPs (growth)."""
    if diagnostic == "recovery":
        from .recovery import RecoveryParams

        def work(profile):
            p = RecoveryParams.for_profile(profile)
            runs = len(p.layers) + (p.repeat_count - 1) * len(set(p.repeat_layers) & set(p.layers)) \
                + len(p.sham_layers)
            return runs * p.steps * p.batch_size * p.train_len
    elif diagnostic == "growth":
        from .growth.experiment import GrowthParams

        def work(profile):
            p = GrowthParams.for_profile(profile)
            return len(p.arms) * p.seeds * p.budget
    else:
        work = _tokens
    return work(to) / work(base)


def chapter_times(cpu_gflops: float, runs: pd.DataFrame | None = None, profile: str = "quick") -> pd.DataFrame:
    """Minutes per chapter to recompute its stored results: measured at ``profile`` on the machine named in the
    manifests, and estimated for the paper profile and for GPUs (see the module docstring). ``cpu_gflops`` is
    the matmul peak of the CPU the measurements come from."""
    runs = stored_runs() if runs is None else runs
    runs = runs[runs["profile"] == profile]
    rows = []
    for chapter, group in runs.groupby("chapter"):
        measured = group["wall_time_s"].sum() / 60
        paper = sum(r.wall_time_s * work_ratio(r.diagnostic, "paper", profile) for r in group.itertuples()) / 60
        row = {"chapter": int(chapter), "diagnostics": ", ".join(sorted(set(group["diagnostic"]))),
               f"{profile}, CPU (measured)": measured, "paper, CPU (estimated)": paper}
        for gpu, tflops in GPU_PEAK_TFLOPS.items():
            speedup = tflops * 1000 / cpu_gflops
            row[f"{profile}, {gpu} (estimated)"] = measured / speedup
            row[f"paper, {gpu} (estimated)"] = paper / speedup
        rows.append(row)
    return pd.DataFrame(rows)


def estimate(diagnostic: str, profile: str, device: str, root: str | Path | None = None) -> str:
    """What a recomputation will cost, in a sentence: the stored measurement of the same diagnostic, scaled by
    the work the profile asks for; said plainly when there is nothing to scale from."""
    runs = stored_runs(root)
    runs = runs[(runs["diagnostic"] == diagnostic) & runs["profile"].isin(list(PROFILES))]
    if runs.empty or profile not in PROFILES:
        return "no stored measurement to estimate its time from"
    base = runs.sort_values("created").iloc[-1]
    minutes = base.wall_time_s / 60 * work_ratio(diagnostic, profile, base.profile)
    where = f"{base.device} on {base.platform}" if base.platform else base.device
    text = (f"about {minutes:,.1f} min on a machine like the one that stored it ({where}, "
            f"{base.wall_time_s / 60:,.1f} min at the {base.profile} profile")
    if profile != base.profile:
        text += f", scaled by the work of the {profile} profile"
    text += ")"
    if device.startswith("cuda") and str(base.device) == "cpu":
        text += "; on this GPU probably far less"
    return text


def announce(diagnostic: str, profile: str, device: str, quiet: bool = False) -> None:
    """Print, before a long computation, what it is and how long it may take."""
    if not quiet:
        print(f"computing {diagnostic} (profile {profile}, {device}): no stored result matches these parameters; "
              f"{estimate(diagnostic, profile, device)}", flush=True)
