"""The library's version and the transformers releases it is tested with, in a module of its own so that any
module (and the package's first import) can read them without importing anything else.

``TRANSFORMERS_SUPPORTED`` is the range ``pyproject.toml`` declares (a test keeps the two equal): its floor is
the oldest release the suite passes on (``make test-floor``), its cap the next major release, whose internals
(how a decoder layer is called) the adapter has not met. Outside it the import stops with one line that names
the range, instead of a deep traceback from inside the adapter later.

``check_runtime`` is what a chapter's Colab cell runs once the dependencies are installed: torch at or above its
tested floor (``TORCH_FLOOR``, pyproject.toml's), transformers in range, no package upgraded under a module the
runtime had already imported (which needs a restart), and whether a GPU is there; any failure is one line.
"""
from __future__ import annotations

import sys
from importlib.metadata import version

from packaging.specifiers import SpecifierSet
from packaging.version import Version

__version__ = "0.2.0"
TRANSFORMERS_SUPPORTED = ">=4.56,<6"
TORCH_FLOOR = ">=2.13"


class UnsupportedTransformers(ImportError):
    pass


def check_transformers(installed: str | None = None) -> str:
    """The installed transformers version; ``UnsupportedTransformers`` when it lies outside the tested range."""
    if installed is None:
        loaded = sys.modules.get("transformers")  # a runtime that imported it before an upgrade still runs this one
        installed = getattr(loaded, "__version__", None) or version("transformers")
    if Version(installed) not in SpecifierSet(TRANSFORMERS_SUPPORTED):
        raise UnsupportedTransformers(
            f"anatomy_lib supports transformers{TRANSFORMERS_SUPPORTED}, found {installed}: run "
            f"pip install 'transformers{TRANSFORMERS_SUPPORTED}' and restart the runtime")
    return installed


class RuntimeNotReady(RuntimeError):
    pass


def check_runtime(installed: dict[str, str] | None = None, loaded: dict[str, str] | None = None,
                  gpu: bool | None = None) -> str:
    """One line on the runtime a chapter is about to use; ``RuntimeNotReady`` (one line, what to do) when torch is
    below its floor, transformers out of range, or a package was upgraded after the runtime imported it.
    ``installed`` and ``loaded`` ({package: version} on disk and in memory) and ``gpu`` default to this runtime."""
    names = ("torch", "transformers", "ipywidgets")
    if installed is None:
        installed = {}
        for name in names:
            try:
                installed[name] = version(name)
            except Exception:  # not installed: said below
                continue
    if loaded is None:
        loaded = {n: getattr(sys.modules[n], "__version__", "") for n in names if n in sys.modules}
    torch_version = installed.get("torch", "")
    if not torch_version or Version(torch_version.split("+")[0]) not in SpecifierSet(TORCH_FLOOR):
        raise RuntimeNotReady(f"anatomy_lib needs torch{TORCH_FLOOR}, found {torch_version or 'none'}: pick a "
                              f"newer runtime (Runtime > Change runtime type) or pip install 'torch{TORCH_FLOOR}'")
    try:
        check_transformers(installed.get("transformers", "0"))
    except UnsupportedTransformers as exc:
        raise RuntimeNotReady(str(exc)) from None
    stale = [f"{n} {loaded[n]} -> {installed[n]}" for n in loaded if loaded[n] and installed.get(n)
             and loaded[n].split("+")[0] != installed[n].split("+")[0]]
    if stale:
        raise RuntimeNotReady(f"upgraded after the runtime imported them ({', '.join(stale)}): restart the session "
                              f"(Runtime > Restart session) and run the chapter again")
    if gpu is None:
        import torch  # here, not at the top: the module is read before the dependencies are known to be there

        gpu = torch.cuda.is_available()
    where = "a GPU" if gpu else ("no GPU: a chapter whose results are not stored for its parameters computes them "
                                 "on this CPU, which can take tens of minutes; Runtime > Change runtime type > GPU "
                                 "is faster")
    return f"ready: torch {torch_version}, transformers {installed['transformers']}, {where}"
