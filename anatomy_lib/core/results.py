"""The results store: diagnostic tables saved under ``data/results/<specimen>/<diagnostic>/`` with a manifest.

A request is everything that determines a result: specimen identity (weights hash included), the text blocks,
the diagnostic's algorithm version and every parameter (a frozen ``DiagnosticParams`` dataclass). Its canonical
JSON hashes to the file stem. ``load`` returns stored tables only when the manifest's request equals the one
asked for and every table's SHA-256 still matches; anything else (missing, truncated, corrupt, stale, another
algorithm version) reads as absent and is recomputed. Writes go to a temporary file, then are renamed. A fresh
computation is returned as read back from its CSV, so a hit and a miss give tables of the same column types.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import re
import subprocess
import tempfile
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import pandas as pd
import torch
import transformers

from .locks import exclusive, share
from .version import __version__

DATA_ENV = "ANATOMY_DATA"
# set to 1: every result must come from the store, a computation is refused (the chapter tests run on the committed
# smoke store this way, so a stale store fails them in one line instead of making them recompute for half an hour)
STORE_ONLY_ENV = "ANATOMY_STORE_ONLY"


class ComputationRefused(RuntimeError):
    """A result the store lacks was asked for while ``ANATOMY_STORE_ONLY`` forbids computing it."""
REPO_ROOT = Path(__file__).resolve().parents[2]  # anatomy_lib/core/results.py -> the checkout


def data_root() -> Path:
    """``$ANATOMY_DATA``, else the repository's ``data/`` beside the package, else a user cache folder."""
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV]).expanduser()
    repo_data = REPO_ROOT / "data"
    if repo_data.is_dir():
        return repo_data
    return Path.home() / ".cache" / "anatomy_lib"


def canonical_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def request_key(request: dict) -> str:
    return hashlib.sha256(canonical_json(request).encode()).hexdigest()[:16]


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "specimen"


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                             text=True, timeout=5)
        return out.stdout.strip() or None if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def code_changed_since_commit() -> bool | None:
    """Whether the library's code differs from the recorded commit (a result computed from uncommitted code)."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--", "anatomy_lib"], cwd=REPO_ROOT,
                             capture_output=True, text=True, timeout=5)
        return bool(out.stdout.strip()) if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def environment() -> dict:
    return {"anatomy_lib": __version__, "git_commit": git_commit(), "code_changed_since_commit":
            code_changed_since_commit(), "torch": torch.__version__,
            "transformers": transformers.__version__, "python": platform.python_version(),
            "platform": platform.platform(), **_accelerator()}


def _accelerator() -> dict:
    """The GPU a result was computed on, and the CUDA build torch uses (nothing on a machine without one)."""
    if not torch.cuda.is_available():
        return {}
    return {"gpu": torch.cuda.get_device_name(0), "cuda": torch.version.cuda,
            "gpu_memory_gib": round(torch.cuda.get_device_properties(0).total_memory / 2 ** 30, 1)}


def _atomic_write(path: Path, data: bytes) -> None:
    """Write through a temporary file and a rename. The file gets the mode any file written here gets (0666
    less the umask): ``mkstemp``'s private 0600 would make a results folder shared by a class unreadable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        share(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class ResultStore:
    """Save and load diagnostic tables keyed by their request."""

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else data_root() / "results"

    def folder(self, specimen_name: str, diagnostic: str) -> Path:
        return self.root / _safe(specimen_name) / diagnostic

    def _paths(self, request: dict, diagnostic: str):
        folder = self.folder(request["specimen"]["name"], diagnostic)
        key = request_key(request)
        return folder / f"{key}.json", (lambda table: folder / f"{key}.{table}.csv")

    def save(self, diagnostic: str, request: dict, tables: dict[str, pd.DataFrame], provenance: dict) -> Path:
        manifest_path, table_path = self._paths(request, diagnostic)
        digests = {}
        # under the result's lock: two processes storing the same result at once cannot mix one's tables with the
        # other's manifest
        with exclusive(manifest_path):
            for name, table in tables.items():
                data = table.to_csv(index=False).encode()
                digests[name] = {"sha256": hashlib.sha256(data).hexdigest(), "rows": len(table)}
                _atomic_write(table_path(name), data)
            manifest = {"diagnostic": diagnostic, "request": json.loads(canonical_json(request)),
                        "tables": digests, **provenance}
            # the manifest goes last: a crash before this line leaves no manifest, so nothing half-written is read
            _atomic_write(manifest_path, json.dumps(manifest, indent=2, sort_keys=True, default=str).encode())
        return manifest_path

    def checkpoints(self, diagnostic: str, request: dict) -> RunCheckpoints:
        """Where a sweep of independent runs toward this result keeps its finished runs."""
        manifest_path, _ = self._paths(request, diagnostic)
        return RunCheckpoints(manifest_path.with_suffix(".runs"))

    def has(self, diagnostic: str, request: dict) -> bool:
        """Whether a result for ``request`` is stored (its manifest names the same request), without reading its
        tables: for a result a chapter reads only where it exists (``load`` checks the tables too)."""
        manifest_path, _ = self._paths(request, diagnostic)
        if not manifest_path.is_file():
            return False
        try:
            return json.loads(manifest_path.read_text()).get("request") == json.loads(canonical_json(request))
        except (OSError, ValueError):
            return False

    def load(self, diagnostic: str, request: dict) -> tuple[dict[str, pd.DataFrame], dict] | None:
        manifest_path, table_path = self._paths(request, diagnostic)
        if not manifest_path.is_file():
            return None
        try:
            manifest = json.loads(manifest_path.read_text())
            if manifest.get("request") != json.loads(canonical_json(request)):
                return None
            tables = {}
            for name, meta in manifest["tables"].items():
                data = table_path(name).read_bytes()
                if hashlib.sha256(data).hexdigest() != meta["sha256"]:
                    raise ValueError(f"table {name!r} does not match its manifest's SHA-256")
                tables[name] = pd.read_csv(io.BytesIO(data))
            return tables, manifest
        except (OSError, ValueError, KeyError, TypeError) as exc:
            warnings.warn(f"stored result {manifest_path.name} is unusable ({exc}); recomputing", stacklevel=2)
            return None


class RunCheckpoints:
    """The finished runs of a long sweep of independent runs (chapter 6's), one JSON file per run in
    ``<key>.runs/`` beside the result they build toward: a sweep stopped part-way (a session that ends, a
    machine taken back) resumes from its last finished run instead of from the start. Each file (JSON, named
    ``.ckpt`` so that nothing takes it for a manifest) holds a run's summary row and its tables; the folder is
    removed once the whole result is stored. A folder committed part-way lets a later session on a fresh
    machine resume too."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def path(self, index: int) -> Path:
        """Where run ``index`` is kept (a worker claims a run by locking this path: ``locks.claimed``)."""
        return self.folder / f"run-{index:04d}.ckpt"

    def load(self, index: int):
        """Run ``index`` as (row, table, ...) if it finished before, else None."""
        path = self.path(index)
        try:
            saved = json.loads(path.read_text())
        except FileNotFoundError:  # never kept, or cleared by another worker once the whole result was stored
            return None
        return (saved["row"], *(pd.read_json(io.StringIO(t), orient="split") for t in saved["tables"]))

    def save(self, index: int, run: tuple) -> None:
        row, *tables = run
        data = {"row": row, "tables": [t.to_json(orient="split", index=False, double_precision=15) for t in tables]}
        _atomic_write(self.path(index), json.dumps(data, default=float).encode())

    def finished(self) -> int:
        return len(list(self.folder.glob("run-*.ckpt"))) if self.folder.is_dir() else 0

    def clear(self) -> None:
        """Remove the kept runs once the whole result is stored (a lock file stays: another worker may hold it, and
        removing it would let a third take a different lock; ``locks.exclusive``)."""
        for path in self.folder.glob("run-*.ckpt"):
            path.unlink(missing_ok=True)
        if self.folder.is_dir() and not any(self.folder.iterdir()):
            self.folder.rmdir()


def _as_stored(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Tables as a CSV round trip gives them back: the types a stored hit has."""
    return {name: pd.read_csv(io.BytesIO(table.to_csv(index=False).encode())) for name, table in tables.items()}


def load_or_compute(diagnostic: str, request: dict, compute: Callable[[], dict[str, pd.DataFrame]],
                    store: ResultStore | None = None, device: str = "", recompute: bool = False, save: bool = True,
                    before: Callable[[], None] | None = None,
                    work_s: Callable[[dict[str, pd.DataFrame]], float] | None = None, computed_by: str = ""):
    """Return ``(tables, manifest)`` from the store if it holds this exact request, else compute and save
    (``before()`` runs first then: a chapter says what it is about to compute and how long it may take).
    ``work_s(tables)``: the compute's own seconds where part of it ran before this call (a sweep resumed or
    assembled from kept runs), recorded as the manifest's wall time instead of this call's. ``computed_by``: the
    command that computes a result no chapter computes itself (a sweep run apart), recorded in the manifest, so
    that a chapter's recomputation time leaves it out.

    Either way the tables are those a CSV read returns, so callers see one set of column types."""
    store = store or ResultStore()
    if not recompute:
        found = store.load(diagnostic, request)
        if found is not None:
            return found
    if os.environ.get(STORE_ONLY_ENV) == "1":
        specimen = request.get("specimen", {}).get("name", "?")
        profile = request.get("profile", {}).get("name", "")
        raise ComputationRefused(
            f"{STORE_ONLY_ENV}=1 and the store under {store.root} lacks {diagnostic} for {specimen}"
            f"{' at profile ' + profile if profile else ''} with these parameters: refresh it (`make smoke-store` for "
            "the smoke profile) or unset the variable")
    if before is not None:
        before()
    started = time.perf_counter()
    tables = _as_stored(compute())
    seconds = time.perf_counter() - started if work_s is None else float(work_s(tables))
    provenance = {"environment": environment(), "device": device, "wall_time_s": round(seconds, 3),
                  "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  **({"computed_by": computed_by} if computed_by else {})}
    manifest = {"diagnostic": diagnostic, "request": request, **provenance}
    if save:
        path = store.save(diagnostic, request, tables, provenance)
        manifest = json.loads(path.read_text())
    return tables, manifest
