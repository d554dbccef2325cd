"""Re-exports loaded on first use: a chapter package names its figures and explorers without importing them, so
that importing its compute modules (the CLI, a torchrun worker, a benchmark) never loads matplotlib or
ipywidgets."""
from __future__ import annotations

import importlib
import sys


def lazy_exports(package: str, modules: dict[str, tuple[str, ...]]):
    """``(__getattr__, __dir__)`` for ``package``: each name of ``modules`` ({submodule: names}) is imported from
    its submodule the first time it is asked for."""
    if any(isinstance(names, str) for names in modules.values()):
        raise TypeError("give each submodule's names as a tuple of strings")
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str):
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{where[name]}"), name)

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
