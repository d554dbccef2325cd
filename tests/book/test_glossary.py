"""The glossary (book/glossary.md) and the chapters' links to it: every term a chapter uses is linked at its first
use in that chapter's prose, to an anchor the glossary has (Sphinx's ``term-`` ids). ``python
tests/book/test_glossary.py`` adds the missing links (review the diff); the test fails on any left missing."""
import json
import re
import unicodedata
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[2] / "book"
# words the glossary defines that are also everyday words in the book's prose ("the explorer's controls"): defined,
# never required to be linked
NOT_LINKED = {"control", "experiment", "verdict", "branch", "arm", "profile"}
LINK = '<a class="anatomy-term" href="glossary.html#{anchor}">{text}</a>'
# what a term's first use may not be inside: fenced blocks, headings, code, math, links, HTML tags and anchors
SKIP = re.compile(r"```.*?```|^#.*?$|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$|\[[^\]\n]*\]\([^)\n]*\)|<a\b.*?</a>|<[^>\n]+>",
                  re.S | re.M)


def glossary_terms() -> dict[str, str]:
    """{term: its anchor id}, read from the glossary directive (a term is an unindented line inside it)."""
    text = (BOOK / "glossary.md").read_text()
    block = text.split("```{glossary}", 1)[1].split("\n```", 1)[0]
    terms = [line.strip() for line in block.splitlines() if line.strip() and not line.startswith(" ")]
    return {term: anchor(term) for term in terms}


def anchor(term: str) -> str:
    """The id Sphinx gives a glossary term: its text folded to ASCII (R² becomes R2), case and underscores kept,
    every other run of characters a hyphen (checked against the built page by tests/browser/check_pages.mjs)."""
    folded = unicodedata.normalize("NFKD", term).encode("ascii", "ignore").decode()
    return "term-" + re.sub(r"[^A-Za-z0-9_-]+", "-", folded).strip("-")


def _pattern(term: str) -> re.Pattern:
    # the term, or its plural, as a whole word (G_stack's underscore and distinct-2's hyphen are part of it)
    return re.compile(r"(?<![\w-])" + re.escape(term) + r"(?:s|es)?(?![\w-])", re.I)


def first_use(text: str, term: str):
    """(start, end) of the first use of ``term`` in prose (outside code, math, headings, links, tags), or None;
    and whether a link to the glossary's entry comes before it."""
    skipped = [m.span() for m in SKIP.finditer(text)]
    for match in _pattern(term).finditer(text):
        if not any(a <= match.start() < b for a, b in skipped):
            return match.span()
    return None


def chapters() -> list[Path]:
    return sorted(BOOK.glob("0*.ipynb")) + [BOOK / "dissect.ipynb"]


def _prose(notebook: Path) -> list[dict]:
    return [c for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "markdown"]


def missing_links(notebook: Path) -> list[str]:
    terms = glossary_terms()
    cells = ["".join(c["source"]) for c in _prose(notebook)]
    missing = []
    for term, anchor in terms.items():
        if term in NOT_LINKED:
            continue
        linked = f'href="glossary.html#{anchor}"'
        for text in cells:
            if linked in text:
                break  # linked in an earlier (or this) cell before any unlinked use is found below
            if first_use(text, term) is not None:
                missing.append(term)
                break
    return missing


def test_the_glossary_defines_each_term_once():
    text = (BOOK / "glossary.md").read_text()
    block = text.split("```{glossary}", 1)[1].split("\n```", 1)[0]
    terms = [line.strip() for line in block.splitlines() if line.strip() and not line.startswith(" ")]
    assert len(terms) == len(set(terms)) and len(terms) >= 30


@pytest.mark.parametrize("notebook", chapters(), ids=lambda p: p.stem)
def test_a_chapter_links_each_glossary_term_at_its_first_use(notebook):
    assert not missing_links(notebook), f"{notebook.stem}: first uses not linked to the glossary: " \
                                        f"{missing_links(notebook)} (python tests/book/test_glossary.py adds them)"


@pytest.mark.parametrize("notebook", chapters(), ids=lambda p: p.stem)
def test_every_glossary_link_names_a_term_the_glossary_has(notebook):
    anchors = set(glossary_terms().values())
    for cell in _prose(notebook):
        for anchor in re.findall(r'href="glossary\.html#([^"]+)"', "".join(cell["source"])):
            assert anchor in anchors, f"{notebook.stem} links to {anchor}, which the glossary lacks"


def add_links() -> None:
    """Link each term's first use in every chapter (the first cell that uses it, its first use there)."""
    terms = glossary_terms()
    for notebook in chapters():
        nb = json.loads(notebook.read_text())
        cells = [c for c in nb["cells"] if c["cell_type"] == "markdown"]
        for term in missing_links(notebook):
            for cell in cells:
                text = "".join(cell["source"])
                span = first_use(text, term)
                if span is not None:
                    a, b = span
                    text = text[:a] + LINK.format(anchor=terms[term], text=text[a:b]) + text[b:]
                    cell["source"] = text.splitlines(True)
                    break
        notebook.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    add_links()
