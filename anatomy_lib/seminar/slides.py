"""The slides: one deck per session, generated from its plan, segment by segment in the plan's order, with the
chapter's outputs each segment puts on screen read from the chapter's built page.

The title (the session, its title and goals); then, for each of the plan's segments, a slide with its minutes and
activity, followed by what that segment brings: the first segment (the teacher's introduction), what is introduced;
the prediction segment, one slide per prediction with the question and nothing that answers it; the exercise
segment lists its exercises' keys; the groups segment names the groups and each group's task where the plan sets
one; a segment that shows outputs (``Segment.shows``), each of them as the page shows it (a figure, or a table
short enough for a slide), or, where the page has nothing by that name or it is too big for a slide, a slide that
says so and links to where it is on the page; the discussion segment, the discussion questions. The homework last
(its exercises, question and rubric, never the model answer). Nothing answers a prediction before its segment: an
output a prediction names is held back (a slide says so) if a segment before the prediction names it.

How a ``shows`` name finds its output on the page (``find_outputs``):

- Quoted phrases ('...') are exact, up to case, curly quotes and underscores: a section heading (the output sits
  in that section or under it), a table's caption, or a column's header; "its column(s) a and b" names columns
  (a header that starts with the words). An output must satisfy every one, and a quoted phrase the page does not
  have finds nothing: the name points at something the page no longer shows.
- The kind: "table" (or "column", "row") asks for a table; "figure", "curves", "map", "plot", "strip", "panel"
  for a figure; otherwise either.
- The other words score each remaining output: one point for each place a word is found (stemmed; a prefix of
  four letters or more counts), out of five: the section heading, the table's caption, its column headers, the
  function whose result it shows (``frontier_figure``), and the code that made it (its own statement where a
  cell draws several of its kind; the cell's code where it draws one). The best score wins; outputs that tie
  are all shown, in page order. A name with no quoted phrase needs a score above zero. Where nothing is found,
  the slide links to the section whose heading or code shares most words with the name, or to the page.
- A name that starts "the guide's" is looked for, by the rest of its words, in the seminar guide instead: under
  the session's own section there (its groups' verdicts side by side) or under no session (the course-wide tables).

A deck is one HTML file that opens offline: its own CSS and a few lines of script (the arrow keys, space or a
click move between slides; a counter shows where you are; ``#5`` in the address opens the fifth slide), images
referenced relatively, and a print style that puts one slide on each landscape page (print to PDF for a PDF).

Pure functions, strings in and out: ``chapter_outputs`` reads a built chapter page's HTML; ``find_outputs``
matches a ``shows`` name; ``session_slides`` orders a plan's slides; ``deck`` writes one deck; ``deck_index`` the
page that lists them. The book's Sphinx extension (``book/_ext/slides.py``) calls them when the build finishes,
and writes ``slides/session-N.html``.
"""
from __future__ import annotations

import html
import keyword
import posixpath
import re
from dataclasses import dataclass
from html.parser import HTMLParser

from .. import exercises
from .plans import Segment, SessionPlan
from .sheets import inline

MAX_TABLE_ROWS = 16  # a table with more rows (the header included) does not fit a slide: the page shows it
MAX_CELL_CHARS = 100  # nor does one with a paragraph in a cell
LINE_CHARS = 110  # about what one line of a slide's table holds at its font: a longer row wraps onto more lines
DECK_DIR = "slides"  # where the decks sit, relative to the built site's root
GUIDE = "book/seminar.html"  # the seminar guide, relative to the site's root: what a session without a chapter shows
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4}
EXPLORERS = ("anatomy-static", "anatomy-live")  # kernel-free and live explorers: controls, not key figures
CELL_WORDS = {"read": "read from the built page", "pause": "computers closed", "live": "cells run live"}

# ---- how a name finds an output -----------------------------------------------------------------------------
TABLE_WORDS = {"table", "tables", "column", "columns", "row", "rows"}
FIGURE_WORDS = {"figure", "figures", "plot", "plots", "curve", "curves", "map", "maps", "strip", "panel", "heatmap",
                "chart"}
NOT_CONTENT = {"table", "figure", "plot", "chart", "column", "row"}  # say what kind of output, not which
STOP = {"a", "an", "and", "against", "as", "at", "by", "each", "for", "from", "in", "into", "is", "it", "its", "of",
        "on", "or", "the", "their", "then", "this", "that", "to", "vs", "with", "what", "which", "where"}
CODE_NOISE = {w.lower() for w in keyword.kwlist} | {"display", "show", "fig", "pd", "np", "html", "self", "print"}
QUOTED = re.compile(r"(?:^|(?<=[\s(]))['‘](.+?)['’](?=$|[\s,.;:)])")  # 'a phrase', not a possessive's apostrophe
COLUMNS = re.compile(r"\bits columns?\s+(.+?)(?=\)|;|$)")  # "its column 'x'", "its columns a and b"
FIGURE_MADE = re.compile(r"\bfig\w*\s*=(?!=)|figure\s*\(|\bplt\.|\.plot\s*\(")  # a statement that draws a figure
TABLE_MADE = re.compile(r"show_table\s*\(|show_claims\s*\(|to_html\s*\(|table_html\s*\(")  # one that shows a table


def _norm(text: str) -> str:
    """For exact comparisons: case, curly quotes, underscores and runs of spaces do not count."""
    return " ".join(text.replace("’", "'").replace("‘", "'").replace("_", " ").casefold().split())


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _words(text: str, drop: set[str] = frozenset()) -> set[str]:
    """The words of a text, lower case, stemmed (a plural's s), without one-letter words and ``drop``."""
    found = re.findall(r"[a-z0-9]+", text.replace("²", "2").lower())
    return {_stem(w) for w in found if len(w) > 1 and w not in drop}


def _match(word: str, other: str) -> bool:
    """The same word, or one a prefix of the other with four letters or more (fact, factual)."""
    if word == other:
        return True
    short, long = sorted((word, other), key=len)
    return len(short) >= 4 and long.startswith(short)


def _found_in(word: str, words: set[str]) -> bool:
    return any(_match(word, w) for w in words)


def _column_matches(header: str, name: str) -> bool:
    header, name = _norm(header), _norm(name)
    return header == name or header.startswith(name + " ")


@dataclass(frozen=True)
class PageFigure:
    heading: str  # the nearest section heading above it on the page
    src: str  # as the page writes it (relative to the page)
    alt: str = ""
    anchor: str = ""  # its section's id on the page ('' where the page gives none)
    path: tuple[str, ...] = ()  # the headings it sits under, the page's title first, its own section's last
    code: str = ""  # the code that drew it: its own statement where its cell draws several, else the cell's code
    position: int = 0  # its place among the page's outputs
    maker: str = ""  # the function whose result it shows (``frontier_figure``), read from its statement


@dataclass(frozen=True)
class PageTable:
    heading: str
    caption: str
    rows: tuple[tuple[str, ...], ...]  # the cells' text, the header row first
    anchor: str = ""
    path: tuple[str, ...] = ()
    code: str = ""
    position: int = 0
    maker: str = ""

    @property
    def too_big(self) -> str:
        """Why the table does not fit a slide (more than ``MAX_TABLE_ROWS`` rows, the header included, or a cell
        over ``MAX_CELL_CHARS`` characters, or rows so long that, wrapped at about ``LINE_CHARS`` characters, they
        take more than ``MAX_TABLE_ROWS`` lines); '' where it fits."""
        if len(self.rows) > MAX_TABLE_ROWS:
            return f"{len(self.rows) - 1} rows"
        longest = max((len(c) for r in self.rows for c in r), default=0)
        if longest > MAX_CELL_CHARS:
            return f"a cell of {longest} characters"
        lines = sum(max(1, -(-sum(len(c) + 2 for c in row) // LINE_CHARS)) for row in self.rows)
        return f"{len(self.rows) - 1} rows, wrapped onto about {lines} lines" if lines > MAX_TABLE_ROWS else ""


@dataclass(frozen=True)
class PageSection:
    heading: str
    anchor: str
    level: int  # 1 for the page's title
    code: str = ""  # the code of the cells directly under its heading


@dataclass(frozen=True)
class ChapterOutputs:
    """What a built chapter page shows, as its slides need it: the page's title; the figures and tables of its
    executed cells (not folded, not in an explorer; long tables too, which stay on the page), each with its
    section and the code that made it; and its sections (to link to, and to locate a name the outputs lack)."""
    title: str
    figures: tuple[PageFigure, ...] = ()
    tables: tuple[PageTable, ...] = ()
    sections: tuple[PageSection, ...] = ()

    @property
    def outputs(self) -> tuple[PageFigure | PageTable, ...]:
        """Figures and tables together, in page order."""
        return tuple(sorted(self.figures + self.tables, key=lambda o: o.position))


@dataclass(frozen=True)
class Slide:
    kind: str  # title, segment, introduce, predict, figure, table, missing, discussion, homework
    title: str
    body: str  # HTML
    segment: int | None = None  # the index of the plan's segment it belongs to; None: the title and the homework


class _PageReader(HTMLParser):
    """Collects the headings, the cells' code, and the cell outputs' images and tables of a built page (inside its
    article where it has one: the theme repeats the title and a table of contents around it)."""

    def __init__(self, in_article: bool):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, set[str]]] = []  # open elements with what they mean here
        self.need_article = in_article
        self.title = ""
        self.path: list[tuple[int, str]] = []  # the open headings: (level, text)
        self.anchor = ""  # the current section's id
        self.section_id = ""  # the id of the last <section> opened
        self.heading: dict | None = None  # the heading being read: level, text, anchor
        self.sections: list[dict] = []
        self.outputs: list[dict] = []  # figures and tables, finished with their code when their cell closes
        self.cell: dict | None = None  # the cell being read: its code, its outputs
        self.table: dict | None = None  # the table being read: caption, rows, the cell being read

    def _inside(self, flag: str) -> bool:
        return any(flag in flags for _, flags in self.stack)

    def _where(self) -> dict:
        return {"heading": self.path[-1][1] if self.path else "", "anchor": self.anchor,
                "path": tuple(t for _, t in self.path)}

    def _output(self, record: dict) -> None:
        if self.cell is not None:
            self.cell["outputs"].append(record)
        else:
            self.outputs.append({**record, "code": "", "maker": ""})

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        flags = set()
        if tag == "article":
            flags.add("article")
        if tag == "section" and attrs.get("id"):
            self.section_id = attrs["id"]
        counts = (not self.need_article or self._inside("article") or "article" in flags)
        if "cell" in classes and counts and self.cell is None:
            flags.add("cell")
            self.cell = {"code": [], "outputs": []}
        if "cell_input" in classes:
            flags.add("input")
        if tag == "pre" and self._inside("input"):
            flags.add("code")
        if "cell_output" in classes:
            flags.add("output")
        if tag == "details" or any(c in classes for c in EXPLORERS):
            flags.add("hidden")
        if "headerlink" in classes:
            flags.add("headerlink")
            if self.heading is not None and (attrs.get("href") or "").startswith("#"):
                self.heading["anchor"] = attrs["href"][1:]
        if tag == "img" and counts and self._inside("output") and not self._inside("hidden"):
            src = attrs.get("src") or ""
            if src and not src.startswith("data:"):
                self._output({"kind": "figure", "src": src, "alt": attrs.get("alt") or "", **self._where()})
        if tag in VOID:
            return
        if tag in HEADINGS and counts:
            flags.add("heading")
            self.heading = {"level": HEADINGS[tag], "text": [], "anchor": attrs.get("id") or self.section_id}
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
        if "heading" in flags and self.heading is not None:
            text = " ".join("".join(self.heading["text"]).split())
            level = self.heading["level"]
            self.title = self.title or text
            self.path = [(lv, t) for lv, t in self.path if lv < level] + [(level, text)]
            self.anchor = self.heading["anchor"]
            self.sections.append({"heading": text, "anchor": self.anchor, "level": level, "code": []})
            self.heading = None
        if self.table is not None:
            if tag in ("td", "th") and self.table["cell"] is not None and self.table["rows"]:
                self.table["rows"][-1].append(" ".join("".join(self.table["cell"]).split()))
                self.table["cell"] = None
            elif tag == "caption":
                self.table["in_caption"] = False
        if "table" in flags and self.table is not None:
            rows = tuple(tuple(r) for r in self.table["rows"] if r)
            if rows:
                caption = " ".join("".join(self.table["caption"]).split())
                self._output({"kind": "table", "caption": caption, "rows": rows, **self._where()})
            self.table = None
        if "cell" in flags and self.cell is not None:
            self._close_cell()

    def _close_cell(self):
        code, outputs = "".join(self.cell["code"]), self.cell["outputs"]
        if self.sections:
            self.sections[-1]["code"].append(code)
        codes = [code] if len(outputs) == 1 else [""] * len(outputs)
        makers = [""] * len(outputs)
        statements = _statements(code)
        for kind, made in (("figure", FIGURE_MADE), ("table", TABLE_MADE)):
            mine = [i for i, o in enumerate(outputs) if o["kind"] == kind]
            drawn = [s for s in statements if made.search(s)]
            if len(drawn) == len(mine):  # one statement per output of its kind: each output gets its own
                for i, statement in zip(mine, drawn):
                    codes[i] = codes[i] or statement
                    makers[i] = _maker(statement)
        self.outputs.extend({**o, "code": c, "maker": m} for o, c, m in zip(outputs, codes, makers))
        self.cell = None

    def handle_data(self, data):
        if self.heading is not None and not self._inside("headerlink"):
            self.heading["text"].append(data)
        if self.cell is not None and self._inside("code"):
            self.cell["code"].append(data)
        if self.table is not None:
            if self.table["in_caption"]:
                self.table["caption"].append(data)
            elif self.table["cell"] is not None:
                self.table["cell"].append(data)


def _statements(code: str) -> list[str]:
    """A cell's code as statements: a line with the lines that continue its brackets; comments dropped."""
    out, current, depth = [], [], 0
    for line in code.splitlines():
        line = re.sub(r"#[^\"'\n]*$", "", line)
        if not current and not line.strip():
            continue
        current.append(line)
        depth += sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")
        if depth <= 0:
            out.append("\n".join(current))
            current, depth = [], 0
    if current:
        out.append("\n".join(current))
    return out


WRAPPERS = re.compile(r"\s*(?:\w+\s*=\s*|(?:display|HTML|show_table|show_claims|show_findings)\s*\()")


def _maker(statement: str) -> str:
    """The function whose result a statement shows, without its module: ``fig = gx.frontier_figure(...)`` and
    ``display(show_table(gx.budget_table(...)))`` give ``frontier_figure`` and ``budget_table``; '' where the
    statement shows a variable."""
    rest = statement
    while (match := WRAPPERS.match(rest)) is not None and match.end() > 0:
        rest = rest[match.end():]
    call = re.match(r"\s*([\w.]+)\s*\(", rest)
    return call.group(1).rsplit(".", 1)[-1] if call else ""


def chapter_outputs(page: str) -> ChapterOutputs:
    """The title, figures and tables of a built chapter page's HTML, in page order, each with the nearest section
    heading above it, the headings it sits under, and the code that made it; and the page's sections. Only what
    executed cells show, outside folded blocks and explorers, inside the page's article where it has one."""
    reader = _PageReader(in_article="<article" in page)
    reader.feed(page)
    reader.close()
    if reader.cell is not None:  # a page cut short: its last cell never closed
        reader._close_cell()
    figures, tables = [], []
    for i, o in enumerate(reader.outputs):
        where = {"heading": o["heading"], "anchor": o["anchor"], "path": o["path"], "code": o["code"], "position": i,
                 "maker": o["maker"]}
        if o["kind"] == "figure":
            figures.append(PageFigure(src=o["src"], alt=o["alt"], **where))
        else:
            tables.append(PageTable(caption=o["caption"], rows=o["rows"], **where))
    sections = tuple(PageSection(s["heading"], s["anchor"], s["level"], "\n".join(c for c in s["code"] if c))
                     for s in reader.sections)
    return ChapterOutputs(reader.title, tuple(figures), tuple(tables), sections)


# ---- a name on the page -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Found:
    """What one of a segment's ``shows`` names finds on a chapter's page (``find_outputs``)."""
    name: str
    outputs: tuple[PageFigure | PageTable, ...] = ()  # page order; tables too big for a slide included
    columns: tuple[str, ...] = ()  # the columns the name asks for (drawn out on the slide)
    reason: str = ""  # why nothing was found; '' where something was
    where: tuple[PageSection, ...] = ()  # where nothing was found: the sections to look at (none: the page)


def _parse(name: str) -> tuple[list[str], list[str], str | None, set[str]]:
    """A name's quoted phrases, its column names, the kind it asks for and its other words."""
    columns, rest = [], name
    match = COLUMNS.search(name)
    if match:
        listed = match.group(1)
        quoted = QUOTED.findall(listed)
        columns = quoted or [c.strip(" '\"") for c in re.split(r",\s*|\s+and\s+", listed) if c.strip(" '\"")]
        rest = name[:match.start()] + " " + name[match.end():]
    phrases = QUOTED.findall(rest)
    plain = QUOTED.sub(" ", rest)
    raw = set(re.findall(r"[a-z]+", plain.lower())) | ({"column"} if columns else set())
    kind = "table" if raw & TABLE_WORDS else "figure" if raw & FIGURE_WORDS else None
    return phrases, columns, kind, _words(plain, STOP) - NOT_CONTENT


def _fields(output: PageFigure | PageTable) -> list[set[str]]:
    """The five places a name's words are looked for: heading, caption (a figure's own alt text), column
    headers, the function that made it, its code."""
    if isinstance(output, PageTable):
        caption, headers = output.caption, " ".join(output.rows[0])
    else:  # an alt text that only repeats the file's name says nothing
        caption, headers = ("" if re.search(r"\.(png|jpe?g|svg|gif)$", output.alt) else output.alt), ""
    return [_words(output.heading), _words(caption), _words(headers), _words(output.maker),
            _words(output.code, CODE_NOISE)]


def _score(words: set[str], fields: list[set[str]]) -> int:
    return sum(_found_in(w, f) for w in words for f in fields)


def find_outputs(name: str, outputs: ChapterOutputs) -> Found:
    """The outputs of a chapter's page that one of a segment's ``shows`` names means (the rule is in the module's
    docstring): quoted phrases exact, the kind from its words, the other words scored against each output's
    heading, caption, columns and code; the best, ties all kept, in page order. Where nothing is found, the
    reason and the sections to look at instead."""
    phrases, columns, kind, words = _parse(name)
    headings = {_norm(s.heading) for s in outputs.sections}
    captions = {_norm(t.caption) for t in outputs.tables if t.caption}
    headers = {h for t in outputs.tables for h in t.rows[0]}
    sections, wanted_captions = [], []
    for phrase in phrases:
        if _norm(phrase) in headings:
            sections.append(_norm(phrase))
        elif _norm(phrase) in captions:
            wanted_captions.append(_norm(phrase))
        elif any(_column_matches(h, phrase) for h in headers):
            columns.append(phrase)
        else:
            return Found(name, reason=f"the page has no section, caption or column '{phrase}'")
    where = tuple(s for s in outputs.sections if _norm(s.heading) in sections)

    def fits(o) -> bool:
        if kind == "figure" and not isinstance(o, PageFigure) or kind == "table" and not isinstance(o, PageTable):
            return False
        if any(s not in {_norm(h) for h in o.path} for s in sections):
            return False
        if (wanted_captions or columns) and not isinstance(o, PageTable):
            return False
        if any(_norm(o.caption) != c for c in wanted_captions):
            return False
        return all(any(_column_matches(h, c) for h in o.rows[0]) for c in columns)

    candidates = [(o, _score(words, _fields(o))) for o in outputs.outputs if fits(o)]
    best = max((s for _, s in candidates), default=0)
    if not candidates or (best == 0 and not phrases and not columns):
        kind_text = {"figure": "figure", "table": "table"}.get(kind, "figure or table")
        return Found(name, columns=tuple(columns), reason=f"the page shows no {kind_text} by this name",
                     where=where or _locate(words, outputs))
    return Found(name, tuple(o for o, s in candidates if s == best), tuple(columns))


def _locate(words: set[str], outputs: ChapterOutputs) -> tuple[PageSection, ...]:
    """The section whose heading or code shares most of ``words`` (none where no section shares one)."""
    scored = [(_score(words, [_words(s.heading), _words(s.code, CODE_NOISE)]), -i, s)
              for i, s in enumerate(outputs.sections)]
    best = max(scored, default=None, key=lambda x: x[:2])
    return (best[2],) if best and best[0] > 0 else ()


def rebase(src: str, page: str, deck: str) -> str:
    """A relative ``src`` written in ``page`` as the file ``deck`` must write it (both paths relative to the
    site's root, with ``/``); absolute addresses as they are."""
    if src.startswith(("/", "data:")) or "://" in src:
        return src
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page), src))
    return posixpath.relpath(target, posixpath.dirname(deck) or ".")


# ---- the plan's segments ------------------------------------------------------------------------------------
def is_exercises(plan: SessionPlan, segment: Segment) -> bool:
    """The segment in which the chapter's exercises are done: its cells run live and it names every one of them."""
    keys = plan.exercise_keys
    return bool(keys) and segment.cells == "live" and all(k in segment.activity for k in keys)


def is_groups(segment: Segment) -> bool:
    """The groups' segment: its activity opens with the groups (or the jigsaw they form)."""
    return re.match(r"\s*(groups?|jigsaw)\b", segment.activity, re.IGNORECASE) is not None


def is_discussion(segment: Segment) -> bool:
    return re.match(r"\s*discussion\b", segment.activity, re.IGNORECASE) is not None


def _role(plan: SessionPlan, index: int, segment: Segment) -> str:
    if segment.predict:
        return "Predict"
    if index == 0:
        return "Introduction"
    if is_exercises(plan, segment):
        return "Exercises"
    if is_groups(segment):
        return "Groups"
    if is_discussion(segment):
        return "Discussion"
    return {"live": "Live", "read": "From the page", "pause": "On paper"}.get(segment.cells, "Next")


def _items(texts) -> str:
    return "".join(f"<li>{inline(t)}</li>" for t in texts)


class _Links:
    """Addresses from the deck: the chapter's page and its sections, the seminar guide."""

    def __init__(self, outputs: ChapterOutputs | None, page: str, deck: str):
        self.outputs, self.page, self.deck = outputs, page, deck
        self.href = rebase(posixpath.basename(page), page, deck) if page else ""

    def src(self, src: str) -> str:
        return rebase(src, self.page, self.deck) if self.page else src

    def section(self, anchor: str, text: str) -> str:
        if not self.href:
            return html.escape(text)
        target = self.href + (f"#{anchor}" if anchor else "")
        return f'<a href="{html.escape(target)}">{html.escape(text)}</a>'

    def guide(self) -> str:
        href = posixpath.relpath(GUIDE, posixpath.dirname(self.deck) or ".") if self.deck else GUIDE
        return f'<a href="{html.escape(href)}">the seminar guide</a>'


def _table_html(table: PageTable, columns: tuple[str, ...]) -> str:
    head, *rows = table.rows
    named = {i for i, h in enumerate(head) if any(_column_matches(h, c) for c in columns)}

    def cell(tag: str, i: int, text: str) -> str:
        return f'<{tag}{" class=named" if i in named else ""}>{html.escape(text)}</{tag}>'

    body = "".join("<tr>" + "".join(cell("td", i, c) for i, c in enumerate(r)) + "</tr>" for r in rows)
    caption = f"<caption>{html.escape(table.caption)}</caption>" if table.caption else ""
    return (f'<div class="table"><table>{caption}<thead><tr>' + "".join(cell("th", i, c) for i, c in enumerate(head))
            + f"</tr></thead><tbody>{body}</tbody></table></div>")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


GUIDE_SHOWS = "the guide's "  # a ``shows`` name that starts so is looked for in the seminar guide, not the chapter


def session_guide(guide: ChapterOutputs, number: int) -> ChapterOutputs:
    """The seminar guide's outputs a session's deck may show: those under the session's own section (its plan
    and its groups' table) and those under no session (the course-wide tables)."""
    def mine(output) -> bool:
        heading = output.heading or ""
        return heading.startswith(f"Session {number}:") or not heading.startswith("Session ")

    return ChapterOutputs(guide.title, tuple(f for f in guide.figures if mine(f)),
                          tuple(t for t in guide.tables if mine(t)), guide.sections)


def _output_slides(name: str, outputs: ChapterOutputs | None, links: _Links, index: int,
                   held: set[int], in_guide: bool = False) -> list[Slide]:
    """The slides of one ``shows`` name: one per output that fits a slide; one that says where the rest is.
    ``in_guide``: the name is looked for in the seminar guide (``outputs``, its part for the session), without
    its ``GUIDE_SHOWS`` prefix."""
    page = "the seminar guide" if in_guide else "the chapter's page"
    if outputs is None:
        missing = "the seminar guide was not read" if in_guide else "this session has no chapter page"
        return [Slide("missing", _capital(name), f"<p>Not on a slide: {missing}. See {links.guide()}.</p>", index)]
    found = find_outputs(name[len(GUIDE_SHOWS):] if in_guide else name, outputs)
    slides, notes = [], []
    for output in found.outputs:
        title = output.heading or outputs.title
        where = "in the guide" if in_guide else "on the page"
        shows = (f'<p class="shows">{inline(name)} · {links.section(output.anchor, where)}</p>')
        if output.position in held:
            notes.append(f"<li>Held back until the predictions are written (it answers one): "
                         f"{links.section(output.anchor, title)}.</li>")
        elif isinstance(output, PageFigure):
            alt = output.alt if output.alt and not re.search(r"\.(png|jpe?g|svg|gif)$", output.alt) else title
            src = html.escape(links.src(output.src))
            slides.append(Slide("figure", title, f'{shows}<div class="figure"><img src="{src}" '
                                                 f'alt="{html.escape(alt)}"></div>', index))
        elif output.too_big:
            notes.append(f"<li>Too big for a slide ({output.too_big}): see it on {page}, in "
                         f"{links.section(output.anchor, title)}.</li>")
        else:
            slides.append(Slide("table", title, shows + _table_html(output, found.columns), index))
    if not found.outputs:
        places = ", ".join(links.section(s.anchor, s.heading) for s in found.where) \
            or links.section("", outputs.title)
        notes.append(f"<li>Not found on {page} ({html.escape(found.reason)}): see it, {places}.</li>")
    if notes:
        slides.append(Slide("missing", _capital(name), f'<p class="shows">Not on a slide: see {page}.</p>'
                                                       f'<ul class="notes">{"".join(notes)}</ul>', index))
    return slides


def _segment_slide(plan: SessionPlan, index: int, segment: Segment, start: int) -> Slide:
    when = (f"Minutes {start} to {start + segment.minutes} ({segment.minutes} min) · "
            f"{CELL_WORDS.get(segment.cells, segment.cells)}")
    body = f'<p class="when">{html.escape(when)}</p><p class="lead">{inline(segment.activity)}</p>'
    if is_exercises(plan, segment):
        keys = "".join(f"<li><code>{html.escape(e.key)}</code>: {inline(e.title)}</li>"
                       for e in exercises.of_chapter(plan.chapter))
        body += f'<p>Each checked by <code>exercises.check</code>:</p><ul class="keys">{keys}</ul>'
    if is_groups(segment):
        groups = "".join(f"<li><b>{inline(g)}</b>" + (f": {inline(plan.group_tasks[g])}" if g in plan.group_tasks
                                                          else "") + "</li>" for g in plan.groups)
        body += f'<ul class="groups">{groups}</ul>'
    return Slide("segment", _role(plan, index, segment), body, index)


def session_slides(plan: SessionPlan, outputs: ChapterOutputs | None = None, page: str = "",
                   deck: str = "", guide: ChapterOutputs | None = None) -> list[Slide]:
    """A session's slides in the order its plan runs: the title; then for each segment its slide (minutes and
    activity), followed by what is introduced (the first segment), the predictions (the prediction segment), the
    outputs it shows, the discussion questions (the discussion segment); the homework last. ``page`` and ``deck``
    (paths relative to the site's root) rebase the figures' paths and the links from the chapter page to the deck;
    ``outputs`` None: no chapter. ``guide``: the seminar guide's outputs (``chapter_outputs`` of its built page),
    where a name that starts with ``GUIDE_SHOWS`` is looked for."""
    links = _Links(outputs, page, deck)
    mine = session_guide(guide, plan.number) if guide is not None else None
    guide_links = _Links(mine, GUIDE, deck)
    kicker = f"Session {plan.number}" + (f", chapter {plan.chapter}" if plan.chapter else ", before chapter 1")
    chapter = ""
    if outputs is not None and page:
        chapter = f'<p class="chapter">The chapter: {links.section("", outputs.title)}</p>'
    slides = [Slide("title", plan.title,
                    f'<p class="kicker">{html.escape(kicker)}</p><p class="goals">{inline(plan.goals)}</p>{chapter}')]
    predicting = next((i for i, s in enumerate(plan.segments) if s.predict), len(plan.segments))
    answers = {o.position for q in plan.predictions for o in find_outputs(q.answered_by, outputs).outputs} \
        if outputs is not None else set()
    count, start, discussed = len(plan.predictions), 0, False
    for index, segment in enumerate(plan.segments):
        slides.append(_segment_slide(plan, index, segment, start))
        start += segment.minutes
        if index == 0:
            slides.append(Slide("introduce", "Introduced today", f'<p class="lead">{inline(plan.introduce)}</p>',
                                index))
        if segment.predict:
            for i, question in enumerate(plan.predictions, 1):
                slides.append(Slide("predict", "Predict before you run" + (f" ({i} of {count})" if count > 1 else ""),
                                    f'<p class="question">{inline(question.text)}</p>'
                                    '<p class="note">Write your answer down before anything runs.</p>', index))
        held = answers if index <= predicting else set()
        for name in segment.shows:
            if name.startswith(GUIDE_SHOWS):
                slides.extend(_output_slides(name, mine, guide_links, index, set(), in_guide=True))
            else:
                slides.extend(_output_slides(name, outputs, links, index, held))
        if is_discussion(segment) and not discussed:
            slides.append(_discussion(plan, index))
            discussed = True
    if not discussed:
        slides.append(_discussion(plan, None))
    homework = plan.homework
    keys = ", ".join(f"<code>{html.escape(k)}</code>" for k in homework.exercises)
    rubric = _items(f"{points} point{'s' if points != 1 else ''}: {what}" for points, what in homework.rubric)
    slides.append(Slide("homework", f"Homework ({homework.points} points)",
                        f"<p>The exercises {keys}, checked by <code>exercises.check</code>; and a written question:"
                        f'</p><p class="question">{inline(homework.question)}</p><ul class="rubric">{rubric}</ul>'))
    return slides


def _discussion(plan: SessionPlan, index: int | None) -> Slide:
    questions = _items(q.text for q in plan.discussion)
    return Slide("discussion", "Discussion", f'<ul class="questions">{questions}</ul>', index)


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
.when,.shows{color:#5a6577;margin:0 0 .6em}
.shows{font-size:.8em;margin-top:-.4em}
.slide[data-kind=segment] h1{margin-bottom:.2em}
.slide[data-kind=missing]{background:#f3f5f8}
.keys li,.groups li,.notes li{margin:.2em 0}
th.named,td.named{background:#fff3c4;font-weight:600}
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


def deck(plan: SessionPlan, outputs: ChapterOutputs | None = None, page: str = "", deck_path: str = "",
         guide: ChapterOutputs | None = None) -> str:
    """A session's deck as one HTML file (``session_slides`` in order; its own style and script, nothing
    loaded from the network). ``deck_path``, relative to the site's root, is where the deck is written, by
    default ``slides/session-N.html``; ``guide``: the seminar guide's outputs."""
    deck_path = deck_path or f"{DECK_DIR}/session-{plan.number}.html"
    slides = session_slides(plan, outputs, page, deck_path, guide)
    sections = "\n".join(
        f'<section class="slide" id="slide-{i}" data-kind="{s.kind}"'
        + ("" if s.segment is None else f' data-segment="{s.segment + 1}"')
        + f"><h1>{html.escape(s.title)}</h1>{s.body}</section>"
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
