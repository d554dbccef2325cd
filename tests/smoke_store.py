"""The smoke store: the smoke-profile results the chapter tests read, kept apart from the book's ``data/``.

``data/`` holds what the book reads at its own profile; ``tests/smoke-store/`` holds what each chapter asks for at
``PROFILE="smoke"``. A chapter test runs on :func:`assemble` (``data/`` with the smoke store laid over it) with
``ANATOMY_STORE_ONLY=1``, so a result missing there fails in one line instead of being recomputed.

``python tests/smoke_store.py [--fresh] [chapter ...]`` (``make smoke-store``) executes the chapters at smoke on
the offline specimen against an assembled copy and keeps in ``tests/smoke-store/`` every result the book's
``data/`` does not already hold. ``--fresh`` starts from ``data/`` alone, so results no chapter asks for any more
are dropped.
"""
from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK_DATA = ROOT / "data"
SMOKE_STORE = ROOT / "tests" / "smoke-store"
SPECIMEN = "smollm2-135m-instruct-q4"
SKIP = shutil.ignore_patterns("*.lock")


def assemble(into: Path, *, with_smoke: bool = True) -> Path:
    """A data root at ``into``: a copy of ``data/`` with the smoke store laid over it."""
    shutil.copytree(BOOK_DATA, into, ignore=SKIP)
    if with_smoke and SMOKE_STORE.is_dir():
        shutil.copytree(SMOKE_STORE, into, ignore=SKIP, dirs_exist_ok=True)
    return into


def _beyond_book_data(root: Path) -> list[Path]:
    """Files under ``root/results`` that ``data/results`` lacks or holds differently (relative paths)."""
    kept = []
    for path in sorted((root / "results").rglob("*")):
        if path.is_dir() or path.suffix == ".lock" or ".runs" in path.parts:
            continue
        relative = path.relative_to(root)
        book = BOOK_DATA / relative
        if not (book.is_file() and filecmp.cmp(book, path, shallow=False)):
            kept.append(relative)
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", help="notebook stems, e.g. 02_importance (default: every chapter)")
    parser.add_argument("--fresh", action="store_true", help="start from data/ alone and replace the smoke store")
    args = parser.parse_args(argv)
    notebooks = sorted((ROOT / "book").glob("0*.ipynb"))
    if args.chapters:
        known = {n.stem: n for n in notebooks}
        unknown = [c for c in args.chapters if c not in known]
        if unknown:
            parser.error(f"unknown chapter(s) {unknown}; choose from {sorted(known)}")
        notebooks = [known[c] for c in args.chapters]
    with tempfile.TemporaryDirectory(prefix="smoke-store-") as scratch:
        root = assemble(Path(scratch) / "data", with_smoke=not args.fresh)
        env = dict(os.environ, ANATOMY_DATA=str(root), ANATOMY_PROGRESS="0", HF_HUB_OFFLINE="1", MPLBACKEND="Agg")
        for notebook in notebooks:
            print(f"{notebook.stem} at smoke", flush=True)
            out = Path(scratch) / notebook.name
            subprocess.run([sys.executable, "-m", "papermill", "--no-progress-bar", "--log-level", "WARNING",
                            "--cwd", str(ROOT / "book"), "-k", "python3", "-p", "PROFILE", "smoke",
                            "-p", "SPECIMEN", SPECIMEN, str(notebook), str(out)], env=env, check=True)
        kept = _beyond_book_data(root)
        if args.fresh:
            shutil.rmtree(SMOKE_STORE / "results", ignore_errors=True)
        for relative in kept:
            (SMOKE_STORE / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / relative, SMOKE_STORE / relative)
    print(f"{len(kept)} files in {SMOKE_STORE.relative_to(ROOT)} (commit them)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
