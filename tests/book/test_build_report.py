"""`make book` tells the truth: a page whose notebook fails makes the build exit non-zero, with one line naming
the page, the cell and the saved traceback, and the failed page is executed again by the next build."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")


def _notebook(cells: list[str]) -> dict:
    return {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# A page"}]
            + [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": source}
               for source in cells],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def _tiny_book(folder: Path, failing: bool) -> None:
    (folder / "_ext").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "book" / "_ext" / "execution_report.py", folder / "_ext")
    (folder / "_config.yml").write_text(
        "title: tiny\nonly_build_toc_files: true\nexclude_patterns: [_build]\n"
        "execute:\n  execute_notebooks: cache\n  allow_errors: false\n"
        "sphinx:\n  local_extensions:\n    execution_report: _ext\n")
    (folder / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n- file: good\n- file: bad\n")
    (folder / "intro.md").write_text("# Intro\n")
    (folder / "good.ipynb").write_text(json.dumps(_notebook(["print(1 + 1)"])))
    bad = ["x = 1", "raise OSError('[Errno 39] Directory not empty')" if failing else "print(x)"]
    (folder / "bad.ipynb").write_text(json.dumps(_notebook(bad)))


def _build(folder: Path):
    return subprocess.run([str(JUPYTER_BOOK), "build", str(folder)], capture_output=True, text=True, timeout=300)


@pytest.mark.integration
def test_a_failing_cell_fails_the_build_with_one_line_and_is_rerun(tmp_path):
    if not JUPYTER_BOOK.is_file():
        pytest.skip("jupyter-book is not installed beside this Python")
    _tiny_book(tmp_path, failing=True)
    first = _build(tmp_path)
    assert first.returncode != 0
    lines = [line for line in first.stdout.splitlines() if line.startswith("FAILED ")]
    assert len(lines) == 1, first.stdout[-2000:]
    assert lines[0].startswith("FAILED bad: cell 2 (`raise OSError(")
    assert "OSError: [Errno 39] Directory not empty" in lines[0] and "bad.err.log" in lines[0]
    assert (tmp_path / "_build" / "html" / "bad.html").is_file()  # the pages are still written
    report = tmp_path / "_build" / "html" / "reports" / "failed-pages.txt"
    assert report.read_text().splitlines() == lines
    # unchanged sources: an incremental build runs the failed page again and fails again
    again = _build(tmp_path)
    assert again.returncode != 0 and "FAILED bad: cell 2" in again.stdout
    # fixed: the build passes and the report is gone
    _tiny_book(tmp_path, failing=False)
    fixed = _build(tmp_path)
    assert fixed.returncode == 0, fixed.stdout[-2000:]
    assert "FAILED" not in fixed.stdout and not report.exists()
    assert not list(report.parent.rglob("*.err.log"))  # the fixed page's old traceback is gone too


def test_the_book_citation_carries_the_book_title():
    """The intro's BibTeX is titled with the book's title (Jupyter Book's ``html_title``), not Sphinx's default
    project name ("Project name not set")."""
    from types import SimpleNamespace

    import yaml

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from citation import book_entry

    title = yaml.safe_load((ROOT / "_config.yml").read_text())["title"]
    config = SimpleNamespace(html_title=title, project="Project name not set", author="A", copyright="2026",
                             html_theme_options={"repository_url": "https://example.org"})
    entry = book_entry(config, "1.0", "abc")
    assert f"title   = {{{title}: an open replication" in entry and "not set" not in entry
