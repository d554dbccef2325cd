"""The library's version and the transformers releases it is tested with, in a module of its own so that any
module (and the package's first import) can read them without importing anything else.

``TRANSFORMERS_SUPPORTED`` is the range ``pyproject.toml`` declares (a test keeps the two equal): its floor is
the oldest release the suite passes on (``make test-floor``), its cap the next major release, whose internals
(how a decoder layer is called) the adapter has not met. Outside it the import stops with one line that names
the range, instead of a deep traceback from inside the adapter later.
"""
from __future__ import annotations

import sys
from importlib.metadata import version

from packaging.specifiers import SpecifierSet
from packaging.version import Version

__version__ = "0.2.0"
TRANSFORMERS_SUPPORTED = ">=4.56,<6"


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
