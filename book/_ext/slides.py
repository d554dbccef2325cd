"""The seminar's slides: when the HTML build finishes, one deck per session at ``slides/session-N.html`` and an
index at ``slides/index.html``, next to the book's pages.

Each deck follows the session's plan (``anatomy_lib.seminar.PLANS``) segment by segment, with the outputs each
segment shows read from its chapter's built page (``book/0N_*.html``: its figures and tables, found by the names
the plan gives them) or from the seminar guide's (``book/seminar.html``: the groups' verdicts side by side); the
generation is ``anatomy_lib.seminar.slides``, this module only reads the pages and
writes the files. A deck is one self-contained HTML file: it opens offline
from the built book and prints one slide a page (tests/browser/check_slides.mjs walks and prints every deck).
"""
from __future__ import annotations

from pathlib import Path

from sphinx.util import logging

from anatomy_lib.seminar import PLANS
from anatomy_lib.seminar.slides import DECK_DIR, GUIDE, chapter_outputs, deck, deck_index, session_slides

logger = logging.getLogger(__name__)


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"


def write_decks(outdir: Path) -> list[str]:
    """Write every session's deck and the index under ``outdir/slides``; one line per deck (its slides, and how
    many show a figure, a table, or send to the page for an output that is not on a slide)."""
    folder = outdir / DECK_DIR
    folder.mkdir(exist_ok=True)
    lines = []
    guide_page = outdir / GUIDE
    guide = chapter_outputs(guide_page.read_text(encoding="utf-8")) if guide_page.is_file() else None
    if guide is None:
        logger.warning(f"slides: no built seminar guide at {GUIDE}: the decks send what they show from it there")
    for number, plan in sorted(PLANS.items()):
        outputs, page = None, ""
        if plan.chapter:
            pages = sorted((outdir / "book").glob(f"{plan.chapter:02d}_*.html"))
            if pages:
                page = pages[0].relative_to(outdir).as_posix()
                outputs = chapter_outputs(pages[0].read_text(encoding="utf-8"))
            else:
                logger.warning(f"slides: no built page for chapter {plan.chapter}: session {number}'s deck sends "
                               "every output it shows to the page")
        path = f"{DECK_DIR}/session-{number}.html"
        (outdir / path).write_text(deck(plan, outputs, page, path, guide), encoding="utf-8")
        kinds = [s.kind for s in session_slides(plan, outputs, page, path, guide)]
        lines.append(f"session {number} ({_count(len(kinds), 'slide')}: {_count(kinds.count('figure'), 'figure')}, "
                     f"{_count(kinds.count('table'), 'table')}, {kinds.count('missing')} to the page)")
    (folder / "index.html").write_text(deck_index([PLANS[n] for n in sorted(PLANS)]), encoding="utf-8")
    return lines


def _build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    lines = write_decks(Path(app.outdir))
    logger.info(f"slides: {len(lines)} decks in {DECK_DIR}/: " + "; ".join(lines))


def setup(app):
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
