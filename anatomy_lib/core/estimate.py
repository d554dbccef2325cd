"""How long a computation will take, said before it starts: the stored measurement of the same diagnostic,
scaled by the work the parameters ask for (``DiagnosticParams.work``).

The estimate reads every manifest of the store; one it cannot read is skipped with a warning that names the
file, so an estimate never fails the computation it announces (the store itself treats that entry as absent, and
the fresh result replaces it).
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd

from .params import DiagnosticParams
from .profiles import PROFILES, Profile
from .results import data_root


def stored_manifests(root: str | Path | None = None) -> list[tuple[Path, dict]]:
    """(path, manifest) of every readable manifest under ``root`` (default: the store)."""
    root = Path(root) if root is not None else data_root() / "results"
    found = []
    for path in sorted(root.glob("*/*/*.json")):
        try:
            manifest = json.loads(path.read_text())
            if not isinstance(manifest, dict) or not isinstance(manifest.get("request"), dict) \
                    or not isinstance(manifest.get("diagnostic"), str):
                raise ValueError("a manifest is an object with a diagnostic name and a request")
            manifest["wall_time_s"] = float(manifest["wall_time_s"])
            found.append((path, manifest))
        except (OSError, ValueError, TypeError, KeyError) as exc:
            warnings.warn(f"skipping unreadable manifest {path} ({exc})", stacklevel=2)
    return found


def profile_of(request: dict, params_class: type[DiagnosticParams] | None = None) -> str | None:
    """The profile a request was made at: named in it, or (a diagnostic that trains its own models records its
    sizes instead) the profile whose defaults equal its parameters."""
    if isinstance(request.get("profile"), dict):
        return request["profile"].get("name")
    if params_class is not None:
        asked = json.loads(json.dumps(request.get("params"), default=str))  # tuples and lists compare alike
        for name in PROFILES:
            wanted = json.loads(json.dumps(params_class.for_profile(name).as_request()["params"], default=str))
            if asked == wanted:
                return name
    return None


def specimen_of(manifest: dict) -> str:
    """The name of the specimen a stored result was measured on ("" for experiments that train their own)."""
    specimen = manifest["request"].get("specimen")
    return specimen.get("name", "") if isinstance(specimen, dict) else ""


def stored_runs(root: str | Path | None = None,
                params_classes: dict[str, type[DiagnosticParams]] | None = None) -> pd.DataFrame:
    """One row per stored result: diagnostic, specimen, profile, wall time (s), device, platform, created, and the
    command that computed it where no chapter does (``computed_by``, else "")."""
    classes = params_classes or {}
    rows = [{"diagnostic": m["diagnostic"], "specimen": specimen_of(m),
             "profile": profile_of(m["request"], classes.get(m["diagnostic"])),
             "wall_time_s": float(m["wall_time_s"]), "device": m.get("device", ""),
             "platform": m.get("environment", {}).get("platform", ""), "created": m.get("created", ""),
             "computed_by": m.get("computed_by", "")}
            for _, m in stored_manifests(root)]
    return pd.DataFrame(rows, columns=["diagnostic", "specimen", "profile", "wall_time_s", "device", "platform",
                                       "created", "computed_by"])


def _stored_work(manifest: dict, params_class: type[DiagnosticParams]) -> float | None:
    """The work of a stored result's own parameters; None when they no longer describe the class."""
    request = manifest["request"]
    try:
        stored = params_class.from_request(request.get("params", {}))
        profile = Profile(**request["profile"]) if isinstance(request.get("profile"), dict) else None
        return stored.work(profile)
    except (TypeError, ValueError, KeyError):
        return None


def estimate(params: DiagnosticParams, profile: Profile | None, device: str, root: str | Path | None = None,
             specimen: str | None = None) -> str:
    """What computing ``params`` will cost, in a sentence: the newest stored measurement of the same diagnostic
    (on ``specimen`` where one exists: a specimen with a larger vocabulary costs more per token; one a chapter
    computed before one run apart, whose workers may have shared the machine), scaled by the ratio of the two
    works; said plainly when there is nothing to scale from."""
    cls = type(params)
    candidates = []
    for _, manifest in stored_manifests(root):
        if manifest["diagnostic"] != params.DIAGNOSTIC:
            continue
        if manifest["request"].get("specimen", {}).get("dtype", "float32") != "float32":
            continue  # half precision on a CPU runs at another speed (chapter 2's precision maps)
        work = _stored_work(manifest, cls)
        if work:
            candidates.append((specimen_of(manifest) == specimen, not manifest.get("computed_by"),
                               manifest.get("created", ""), manifest, work))
    if not candidates:
        return "no stored measurement to estimate its time from"
    same, _, _, base, base_work = max(candidates, key=lambda c: c[:3])
    seconds = float(base["wall_time_s"])
    minutes = seconds / 60 * params.work(profile) / base_work
    platform = base.get("environment", {}).get("platform", "")
    where = f"{base.get('device', '')} on {platform}" if platform else base.get("device", "")
    stored_profile = profile_of(base["request"], cls) or "custom"
    other = "" if same or not specimen_of(base) else f" on {specimen_of(base)}"
    text = (f"about {minutes:,.1f} min on a machine like the one that stored it ({where}, {seconds / 60:,.1f} min "
            f"for its {stored_profile} run{other}, scaled by the work these parameters ask for)")
    if device.startswith("cuda") and str(base.get("device", "")) == "cpu":
        text += "; on this GPU probably far less"
    elif device == "cpu":
        text += "; a GPU runtime (in Colab: Runtime > Change runtime type) is faster"
    return text


def announce(params: DiagnosticParams, profile: Profile | None, device: str, quiet: bool = False,
             profile_name: str | None = None, specimen: str | None = None) -> None:
    """Print, before a long computation, what it is and how long it may take. Whatever goes wrong in the
    estimate is said in the sentence; it never stops the computation it announces."""
    if quiet:
        return
    name = profile_name or (profile.name if profile is not None else "custom")
    try:
        expected = estimate(params, profile, device, specimen=specimen)
    except Exception as exc:  # an estimate is a courtesy: the computation goes on
        expected = f"no estimate ({type(exc).__name__}: {exc})"
    print(f"computing {params.DIAGNOSTIC} (profile {name}, {device}): no stored result matches these "
          f"parameters; {expected}", flush=True)
