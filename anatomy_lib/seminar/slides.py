"""The slides: one deck per session, generated from its plan and its chapter's built page, in the order the
session runs. The title (the session, its title and goals); what the teacher introduces before anyone predicts;
one slide per prediction, with the question and nothing that answers it; then the chapter's key figures in the
order its page shows them, each titled with the section it sits in (a chapter with no figure, chapter 9, shows
its short tables instead); the discussion; the homework. Session 0 has no chapter, so no figures.

A deck is one HTML file that opens offline: its own CSS and a few lines of script (the arrow keys, space or a
click move between slides; a counter shows where you are; ``#5`` in the address opens the fifth slide), images
referenced relatively, and a print style that puts one slide on each landscape page (print to PDF for a PDF).

Pure functions, strings in and out: ``chapter_outputs`` reads a built chapter page's HTML; ``session_slides``
orders a plan's slides; ``deck`` writes one deck; ``deck_index`` the page that lists them. The book's Sphinx
extension (``book/_ext/slides.py``) calls them when the build finishes, and writes ``slides/session-N.html``.
"""
from __future__ import annotations

import html
import posixpath
from dataclasses import dataclass
from html.parser import HTMLParser

from .plans import SessionPlan
from .sheets import inline

MAX_TABLE_ROWS = 12  # a table with more rows (the header included) does not fit a slide: the page shows it
MAX_CELL_CHARS = 100  # nor does one with a paragraph in a cell
DECK_DIR = "slides"  # where the decks sit, relative to the built site's root
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
HEADINGS = {"h1", "h2", "h3", "h4"}
EXPLORERS = ("anatomy-static", "anatomy-live")  # kernel-free and live explorers: controls, not key figures


@dataclass(frozen=True)
class PageFigure:
    heading: str  # the nearest section heading above it on the page
    src: str  # as the page writes it (relative to the page)
    alt: str = ""


@dataclass(frozen=True)
class PageTable:
    heading: str
    caption: str
    rows: tuple[tuple[str, ...], ...]  # the cells' text, the header row first


@dataclass(frozen=True)
class ChapterOutputs:
    """What a built chapter page shows, as its slides need it: the page's title, and the figures and short
    tables of its executed cells (not folded, not in an explorer) in page order."""
    title: str
    figures: tuple[PageFigure, ...] = ()
    tables: tuple[PageTable, ...] = ()


@dataclass(frozen=True)
class Slide:
    kind: str  # title, introduce, predict, figure, table, discussion, homework
    title: str
    body: str  # HTML


class _PageReader(HTMLParser):
    """Collects the headings, the cell outputs' images and tables of a built page (inside its article where it
    has one: the theme repeats the title and a table of contents around it)."""

    def __init__(self, in_article: bool):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, set[str]]] = []  # open elements with what they mean here
        self.need_article = in_article
        self.heading, self.title = "", ""
        self.text: list[str] | None = None  # the text of the heading being read
        self.figures: list[PageFigure] = []
        self.tables: list[PageTable] = []
        self.table: dict | None = None  # the table being read: caption, rows, the cell being read

    def _inside(self, flag: str) -> bool:
        return any(flag in flags for _, flags in self.stack)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        flags = set()
        if tag == "article":
            flags.add("article")
        if "cell_output" in classes:
            flags.add("output")
        if tag == "details" or any(c in classes for c in EXPLORERS):
            flags.add("hidden")
        if "headerlink" in classes:
            flags.add("headerlink")
        counts = (not self.need_article or self._inside("article") or "article" in flags)
        if tag == "img" and counts and self._inside("output") and not self._inside("hidden"):
            src = attrs.get("src") or ""
            if src and not src.startswith("data:"):
                self.figures.append(PageFigure(self.heading, src, attrs.get("alt") or ""))
        if tag in VOID:
            return
        if tag in HEADINGS and counts:
            flags.add("heading")
            self.text = []
        if tag == "table" and counts and self._inside("output") and not self._inside("hidden") \
                and self.table is None:
            flags.add("table")
            self.table = {"caption": [], "rows": [], "cell": None, "in_caption": False}
        if self.table is not None:
            if tag == "tr":
                self.table["rows"].append([])
            elif tag in ("td", "th"):
                self.table["cell"] = []
            elif tag == "caption":
                self.table["in_caption"] = True
        self.stack.append((tag, flags))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in VOID or all(t != tag for t, _ in self.stack):
            return
        while self.stack:
            open_tag, flags = self.stack.pop()
            self._close(open_tag, flags)
            if open_tag == tag:
                break

    def _close(self, tag, flags):
        if "heading" in flags and self.text is not None:
            self.heading = " ".join("".join(self.text).split())
            self.title = self.title or self.heading
            self.text = None
        if self.table is not None:
            if tag in ("td", "th") and self.table["cell"] is not None and self.table["rows"]:
                self.table["rows"][-1].append(" ".join("".join(self.table["cell"]).split()))
                self.table["cell"] = None
            elif tag == "caption":
                self.table["in_caption"] = False
        if "table" in flags and self.table is not None:
            rows = tuple(tuple(r) for r in self.table["rows"] if r)
            if rows and len(rows) <= MAX_TABLE_ROWS and all(len(c) <= MAX_CELL_CHARS for r in rows for c in r):
                self.tables.append(PageTable(self.heading, " ".join("".join(self.table["caption"]).split()), rows))
            self.table = None

    def handle_data(self, data):
        if self.text is not None and not self._inside("headerlink"):
            self.text.append(data)
        if self.table is not None:
            if self.table["in_caption"]:
                self.table["caption"].append(data)
            elif self.table["cell"] is not None:
                self.table["cell"].append(data)


def chapter_outputs(page: str) -> ChapterOutputs:
    """The title, key figures and short tables (``MAX_TABLE_ROWS`` rows at most, no cell over ``MAX_CELL_CHARS``
    characters) of a built chapter page's HTML, in page order; each titled with the nearest section heading above
    it. Only what executed cells show, outside folded blocks and explorers, inside the page's article where it has
    one."""
    reader = _PageReader(in_article="<article" in page)
    reader.feed(page)
    reader.close()
    return ChapterOutputs(reader.title, tuple(reader.figures), tuple(reader.tables))


def rebase(src: str, page: str, deck: str) -> str:
    """A relative ``src`` written in ``page`` as the file ``deck`` must write it (both paths relative to the
    site's root, with ``/``); absolute addresses as they are."""
    if src.startswith(("/", "data:")) or "://" in src:
        return src
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page), src))
    return posixpath.relpath(target, posixpath.dirname(deck) or ".")


def _items(texts) -> str:
    return "".join(f"<li>{inline(t)}</li>" for t in texts)


def session_slides(plan: SessionPlan, outputs: ChapterOutputs | None = None, page: str = "",
                   deck: str = "") -> list[Slide]:
    """A session's slides in the order it runs: title, introduced, one per prediction, the chapter's figures
    (or, where it has none, its short tables), discussion, homework. ``page`` and ``deck`` (paths relative to the
    site's root) rebase the figures' paths from the chapter page to the deck; ``outputs`` None: no chapter."""
    kicker = f"Session {plan.number}" + (f", chapter {plan.chapter}" if plan.chapter else ", before chapter 1")
    chapter = ""
    if outputs is not None and page:
        href = html.escape(rebase(posixpath.basename(page), page, deck))
        chapter = f'<p class="chapter">The chapter: <a href="{href}">{html.escape(outputs.title)}</a></p>'
    slides = [Slide("title", plan.title,
                    f'<p class="kicker">{html.escape(kicker)}</p><p class="goals">{inline(plan.goals)}</p>{chapter}'),
              Slide("introduce", "Introduced today", f'<p class="lead">{inline(plan.introduce)}</p>')]
    count = len(plan.predictions)
    for i, question in enumerate(plan.predictions, 1):
        slides.append(Slide("predict", "Predict before you run" + (f" ({i} of {count})" if count > 1 else ""),
                            f'<p class="question">{inline(question.text)}</p>'
                            '<p class="note">Write your answer down before anything runs.</p>'))
    if outputs is not None:
        for figure in outputs.figures:
            src = html.escape(rebase(figure.src, page, deck) if page else figure.src)
            slides.append(Slide("figure", figure.heading or outputs.title,
                                f'<div class="figure"><img src="{src}" alt="{html.escape(figure.alt)}"></div>'))
        if not outputs.figures:
            for table in outputs.tables:
                head, *rows = table.rows
                body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
                caption = f"<caption>{html.escape(table.caption)}</caption>" if table.caption else ""
                slides.append(Slide("table", table.heading or outputs.title,
                                    f'<div class="table"><table>{caption}<thead><tr>'
                                    + "".join(f"<th>{html.escape(c)}</th>" for c in head)
                                    + f"</tr></thead><tbody>{body}</tbody></table></div>"))
    questions = _items(q.text for q in plan.discussion)
    slides.append(Slide("discussion", "Discussion", f'<ul class="questions">{questions}</ul>'))
    homework = plan.homework
    keys = ", ".join(f"<code>{html.escape(k)}</code>" for k in homework.exercises)
    rubric = _items(f"{points} point{'s' if points != 1 else ''}: {what}" for points, what in homework.rubric)
    slides.append(Slide("homework", f"Homework ({homework.points} points)",
                        f"<p>The exercises {keys}, checked by <code>exercises.check</code>; and a written question:"
                        f'</p><p class="question">{inline(homework.question)}</p><ul class="rubric">{rubric}</ul>'))
    return slides


STYLE = """
*{box-sizing:border-box}
html,body{margin:0;height:100%;background:#1d2330;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.slide{display:none;position:absolute;inset:0;flex-direction:column;padding:4vh 5vw 7vh;background:#fff;color:#1d2330;
 font-size:clamp(14px,2.6vh,30px);line-height:1.4;overflow:hidden}
.slide.current{display:flex}
.slide h1{font-size:1.7em;margin:0 0 .6em;line-height:1.15;color:#0b4f8a}
.slide[data-kind=title]{justify-content:center;padding-left:8vw;padding-right:8vw}
.slide[data-kind=title] h1{font-size:2.6em}
.slide[data-kind=title] .kicker{order:-1}
.kicker{text-transform:uppercase;letter-spacing:.08em;color:#5a6577;margin:0 0 .4em}
.goals,.lead{font-size:1.15em;max-width:60em}
.slide[data-kind=predict]{background:#fff8e6}
.question{font-size:1.35em;font-weight:600;max-width:48em}
.note{color:#5a6577}
.figure{flex:1 1 auto;min-height:0;display:flex;justify-content:center;align-items:center}
.figure img{width:100%;height:100%;object-fit:contain}
.table{flex:1 1 auto;min-height:0;overflow:auto}
table{border-collapse:collapse;font-size:.72em}
caption{caption-side:top;text-align:left;color:#5a6577;padding-bottom:.3em}
th,td{border-bottom:1px solid #d5dae2;padding:.25em .6em;text-align:left;vertical-align:top}
th{border-bottom:2px solid #1d2330}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em;background:#eef1f5;padding:0 .2em}
a{color:#0b4f8a}
#counter{position:fixed;right:2vw;bottom:2vh;color:#5a6577;font-size:14px;z-index:2}
#nav{position:fixed;left:2vw;bottom:2vh;font-size:14px;z-index:2}
@media print{
 @page{size:A4 landscape;margin:0}
 html,body{height:auto;background:#fff}
 .slide{display:flex!important;position:relative;width:297mm;height:209mm;font-size:15pt;break-after:page;
  page-break-after:always}
 .slide:last-of-type{break-after:auto;page-break-after:auto}
 #counter,#nav{display:none}
}
"""

SCRIPT = """
const slides=[...document.querySelectorAll('.slide')];
const counter=document.getElementById('counter');
let current=0;
function show(n){
  current=Math.max(0,Math.min(slides.length-1,n));
  slides.forEach((s,i)=>s.classList.toggle('current',i===current));
  counter.textContent=(current+1)+' / '+slides.length;
  history.replaceState(null,'','#'+(current+1));
}
document.addEventListener('keydown',(e)=>{
  if(e.altKey||e.ctrlKey||e.metaKey)return;
  const next=['ArrowRight','ArrowDown','PageDown',' ','Enter'],back=['ArrowLeft','ArrowUp','PageUp','Backspace'];
  if(next.includes(e.key))show(current+1);else if(back.includes(e.key))show(current-1);
  else if(e.key==='Home')show(0);else if(e.key==='End')show(slides.length-1);else return;
  e.preventDefault();
});
document.addEventListener('click',(e)=>{if(!e.target.closest('a'))show(current+1);});
show((parseInt(location.hash.slice(1),10)||1)-1);
"""


def deck(plan: SessionPlan, outputs: ChapterOutputs | None = None, page: str = "", deck_path: str = "") -> str:
    """A session's deck as one HTML file (``session_slides`` in order; its own style and script, nothing
    loaded from the network). ``deck_path``, relative to the site's root, is where the deck is written, by
    default ``slides/session-N.html``."""
    deck_path = deck_path or f"{DECK_DIR}/session-{plan.number}.html"
    slides = session_slides(plan, outputs, page, deck_path)
    sections = "\n".join(
        f'<section class="slide" id="slide-{i}" data-kind="{s.kind}"><h1>{html.escape(s.title)}</h1>{s.body}</section>'
        for i, s in enumerate(slides, 1))
    root = posixpath.relpath(".", posixpath.dirname(deck_path) or ".")
    title = html.escape(f"Session {plan.number}: {plan.title}")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1"><title>{title} (slides)</title>'
            f"<style>{STYLE}</style></head><body>\n{sections}\n"
            f'<div id="nav"><a href="index.html">All decks</a> · '
            f'<a href="{root}/book/seminar.html">Seminar guide</a></div><div id="counter"></div>'
            f"<script>{SCRIPT}</script></body></html>\n")


def deck_index(plans) -> str:
    """The page that lists the decks, one link per session (``plans``: ``SessionPlan`` objects in order)."""
    rows = "".join(f'<li><a href="session-{p.number}.html">Session {p.number}: {html.escape(p.title)}</a></li>'
                   for p in plans)
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Seminar slides</title>'
            "<style>body{font-family:system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em;"
            "line-height:1.5}a{color:#0b4f8a}</style></head><body><h1>Seminar slides</h1>"
            "<p>One deck per session: arrow keys, space or a click move between slides; print to PDF for one slide "
            f'a page. From the <a href="../book/seminar.html">seminar guide</a>.</p><ol start="0">{rows}</ol>'
            "</body></html>\n")
