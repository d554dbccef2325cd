"""Numbers in the book's prose are computed, not typed: a digit in a Markdown cell must be a layer name, a
year, a citation, a chapter number, or one of the values below, each of which is the paper's own number, a
fact of the architecture, a setting the page documents, or arithmetic the page derives. Findings about our
measurements are generated from stored results (each chapter's "What this chapter finds")."""
import json
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[2] / "book"

# value -> why it may be typed
ALLOWED = {
    # the paper's numbers (see ../shared/paper.md); SmolLM2-135M's architecture
    "63,419": "paper: L11 alone", "0.91": "paper: R^2 of gate", "100,000": "paper: PPL after substitution",
    "-0.50": "paper: delta correlation", "49": "paper: +49% at alpha 0.9",
    "0.9": "paper: alpha", "200": "paper: recovery budget", "4.7": "paper: loss ratio", "0.127": "paper: loss",
    "0.599": "paper: loss", "13": "paper: wall-time saving", "54": "paper: cost saving", "12": "paper: 12 layers",
    "50": "paper: half the budget", "7": "paper: importance spans 10^7", "10": "powers of ten",
    "30": "paper: 30 layers, +30% threshold", "9": "query heads", "2": "SmolLM2, pairs, neighbours",
    "1.55": "G_stack's speed-up",
    "40": "MIDAS: up to 40% faster", "1.14": "e^0.127, derived on the page", "1": "one, first", "0": "zero, L0",
    # conventions and documented settings
    "95": "interval level", "2.5": "the lower percentile of a 95% interval",
    "97.5": "the upper percentile of a 95% interval",
    "80": "the power a detectable difference is stated at (rules.POWER)",
    "0.5": "-1/2 and t = 0.5 (documented defaults)",
    "1.1": "alpha grid", "0.01": "recovery tolerance floor (documented)", "16": "Q4 levels",
    "15": "Q4 levels 0..15", "32": "Q4 block of 32 weights", "4": "4-bit",
    "29": "the last layer of 30 (layers 0..29)",
    "0.2": "coherence rule: repetition at most +0.2", "25": "growth targets at 25/50/75% of the budget",
    "75": "growth targets at 25/50/75% of the budget",
    "1e-5": "the tolerance tests/core/test_distributed.py checks",
    "20": "the frontier's sizing rule, Chinchilla's 20 tokens per parameter (FrontierParams.tokens_per_parameter)",
}
CHAPTER = re.compile(r"^#+\s*\d+\.\s", re.M)
STRIP = [
    re.compile(r"\A---\n.*?\n---\n", re.S),  # front matter of a text notebook
    re.compile(r"^:\w+:.*$", re.M),          # directive options (:label:, :class:)
    re.compile(r"\b(?:[Cc]hapters?|[Ss]essions?) \d+(?: and \d+)?"),  # cross-references
    re.compile(r"`[^`]*`"),                  # inline code
    re.compile(r"\$\$.*?\$\$", re.S),        # display math
    re.compile(r"\$[^$]*\$"),                # inline math
    re.compile(r"\]\([^)]*\)"),              # link targets
    re.compile(r"https?://\S+"),
    re.compile(r"arXiv[: ]\s*\d{4}\.\d{4,5}", re.I),
    re.compile(r"\b\d{4}\.\d{4,5}\b"),       # arXiv ids
    re.compile(r"\bL\d+(?:-\d+)?\b"),        # layer names and ranges
    re.compile(r"\b(?:1[6-9]|20)\d{2}(?:-(?:1[6-9]|20)\d{2})?\b"),  # years and year ranges
    re.compile(r"SmolLM2-135M"), re.compile(r"Gemma-3-270M"),  # the two specimens' names
    re.compile(r"\b[A-Za-z]+-?\d+[A-Za-z]*\b"),  # names like Q4_1, Llama-2, distinct-2
    re.compile(r"\b\w*_\w*\b"),              # identifiers
    re.compile(r"\\operatorname\{[^}]*\}"),
]
NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e-?\d+)?")


def prose(path: Path) -> list[str]:
    if path.suffix == ".md":
        return [path.read_text()]
    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def without_code(text: str) -> str:
    """Drop code blocks and code cells; keep the prose inside MyST directives (exercises, solutions)."""
    kept, state = [], None
    for line in text.split("\n"):
        stripped = line.strip()
        if state == "code":
            state = None if stripped.startswith("```") else "code"
        elif stripped.startswith("```"):
            info = stripped[3:].strip()
            if state == "directive" and not info:
                state = None
            elif info.startswith("{") and not info.startswith("{code-cell}"):
                state = "directive"
            else:
                state = "code"
        else:
            kept.append(line)
    return "\n".join(kept)


def typed_numbers(text: str) -> list[str]:
    text = CHAPTER.sub("", without_code(text))
    for pattern in STRIP:
        text = pattern.sub(" ", text)
    found = []
    for raw in NUMBER.findall(text):
        value = raw.lstrip("+").rstrip(",.")
        if value not in ALLOWED and value.lstrip("-") not in ALLOWED:
            found.append(raw)
    return found


@pytest.mark.parametrize("path", sorted(BOOK.glob("*.ipynb")) + sorted(BOOK.glob("*.md")), ids=lambda p: p.name)
def test_no_untracked_number_in_prose(path):
    stray = [n for text in prose(path) for n in typed_numbers(text)]
    assert not stray, f"{path.name}: numbers typed into prose (compute them, or allow-list them with a reason): {stray}"


def test_the_check_catches_a_typed_finding():
    assert typed_numbers("A fifth of the model, 21.4% of the weights, with 28 samples") == ["21.4", "28"]
    assert typed_numbers("L11 costs more than L8-11 in 2026 (arXiv 2603.19348), `x = 0.37`") == []


def test_the_api_pages_document_every_module_in_its_own_section():
    library = BOOK.parent / "anatomy_lib"
    modules = {".".join(("anatomy_lib",) + p.relative_to(library).with_suffix("").parts)
               for p in library.rglob("*.py") if not p.name.startswith("__")}
    page = "\n".join(p.read_text() for p in sorted((BOOK / "api").glob("*.md")))  # one page per floor
    documented = set(re.findall(r"^\.\. automodule:: (\S+)$", page, re.M))
    assert modules <= documented, f"not on the API pages: {sorted(modules - documented)}"
    for module in modules:
        assert f"## `{module}`" in page, f"{module} has no heading of its own"


def test_the_api_index_counts_the_modules_of_each_page():
    library = BOOK.parent / "anatomy_lib"
    modules = {".".join(("anatomy_lib",) + p.relative_to(library).with_suffix("").parts)
               for p in library.rglob("*.py") if not p.name.startswith("__")}
    index = (BOOK / "api" / "index.md").read_text()
    listed = re.findall(r"\]\((\w+)\.md\): (\d+) modules", index)
    assert len(listed) == len(list((BOOK / "api").glob("*.md"))) - 1  # every page but the index
    for page, count in listed:
        documented = re.findall(r"^\.\. automodule:: (\S+)$", (BOOK / "api" / f"{page}.md").read_text(), re.M)
        assert int(count) == len([m for m in documented if m in modules]), f"api/index.md miscounts {page}.md"


@pytest.mark.parametrize("chapter", sorted(p.stem for p in BOOK.glob("0*.ipynb")))
def test_a_chapter_has_the_section_its_claims_link_to(chapter):
    from anatomy_lib.verdicts import SECTION

    headings = [line for cell in json.loads((BOOK / f"{chapter}.ipynb").read_text())["cells"]
                if cell["cell_type"] == "markdown" for line in "".join(cell["source"]).splitlines()
                if line.startswith("## ")]
    slugs = {re.sub(r"[^a-z0-9]+", "-", h[3:].lower()).strip("-") for h in headings}
    from anatomy_lib.verdicts import CHAPTERS

    if any(c.page.endswith(chapter) for c in CHAPTERS):
        assert SECTION in slugs, f"{chapter} has no '## Paper vs this book' section for chapter 9's links"
