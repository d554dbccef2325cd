"""Every docstring the API page renders is valid reStructuredText.

The API pages (``book/api/``) renders the library's docstrings with Sphinx's autodoc, and the strict build
(``make book-strict``) fails on the first docutils error in one of them (an unexpected indentation, a ``|x|``
read as a substitution). The strict build takes minutes; this test parses the same docstrings with docutils in
about a second, so such a slip fails ``make test`` instead.
"""
from __future__ import annotations

import importlib
import inspect
import io
import pkgutil

import pytest

import anatomy_lib

# docutils comes with the book's extras; the floor environment (``make test-floor``) has only the test extras and
# collects this module without running it
docutils_core = pytest.importorskip("docutils.core")


def _modules():
    yield anatomy_lib
    for info in pkgutil.walk_packages(anatomy_lib.__path__, "anatomy_lib."):
        if info.name.endswith("__main__"):
            continue
        yield importlib.import_module(info.name)


def _docstrings():
    """(qualified name, docstring) of every module and of every class, function and method it defines."""
    for module in _modules():
        if module.__doc__:
            yield module.__name__, module.__doc__
        for name, obj in vars(module).items():
            if getattr(obj, "__module__", None) != module.__name__ or not (inspect.isclass(obj)
                                                                            or inspect.isfunction(obj)):
                continue
            if obj.__doc__:
                yield f"{module.__name__}.{name}", obj.__doc__
            if inspect.isclass(obj):
                for member_name, member in vars(obj).items():
                    if inspect.isfunction(member) and member.__doc__:
                        yield f"{module.__name__}.{name}.{member_name}", member.__doc__


def _rst_problems(text: str) -> list[str]:
    """docutils' warnings and errors for one docstring, parsed and transformed (substitutions are resolved by a
    transform, after parsing) as a standalone document."""
    stream = io.StringIO()
    docutils_core.publish_doctree(inspect.cleandoc(text), settings_overrides={
        "report_level": 2, "halt_level": 5, "warning_stream": stream})
    return [line for line in stream.getvalue().splitlines() if "(WARNING/2)" in line or "(ERROR/3)" in line
            or "(SEVERE/4)" in line]


def test_every_docstring_parses_as_restructuredtext():
    problems = [f"{name}, {problem}" for name, text in _docstrings() for problem in _rst_problems(text)]
    assert not problems, "docstrings the strict book build would reject:\n" + "\n".join(problems)


def test_the_check_catches_what_failed_the_strict_build():
    """The two slips that failed a strict build: a list item continued after a paragraph, and ``|x|``."""
    assert any("indentation" in p for p in _rst_problems("A paragraph.\n- not an item\n  but indented\n"))
    assert any("substitution" in p.lower() for p in _rst_problems("the size |x - y| of it"))
    assert not _rst_problems("A list:\n\n- one\n- two\n\nText with ``literal`` and *emphasis*.")
