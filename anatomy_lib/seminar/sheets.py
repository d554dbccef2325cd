"""What the course prints and shows: the students' handout (one sheet per session), and the guide's HTML for a
session: its plan (``show_plan``), the teacher's notes computed from the stored results (``teacher_notes``),
the final project and the assessment.

Every text comes from ``plans`` and every number from ``answers`` (the stored results) or ``verdicts``: nothing
here is typed twice. A pre-reading's stopping point is read from its page (``reading_stop``): the next heading of
its level or above, so that no reading runs on into the section that answers a prediction. The plans' texts are
Markdown-light (``code`` spans, ``**bold**``); ``inline`` turns them into HTML, so a printed sheet shows code as
code, never as backticks.
"""
from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from pathlib import Path

import pandas as pd
from IPython.display import HTML

from .. import exercises
from ..core.display import show_table
from ..verdicts import KEY_CLAIMS
from .answers import Evidence
from .groups import DISSECTION, group_agreement, group_verdicts
from .plans import (
    DESIGN,
    FINAL_PROJECT,
    PLANS,
    PROJECT_RUBRIC,
    SessionPlan,
    misconceptions,
    session_minutes,
    session_plan,
)

BOOK = Path(__file__).resolve().parents[2] / "book"  # the book's pages, next to the library in the repository
BIBLIOGRAPHY = BOOK / "references.bib"  # where the book keeps its readings
INTRO_PAGE = "intro"  # session 0 reads the introduction
# terms a sheet uses that a student may not know: defined where a sheet first uses them
SHEET_TERMS = {"C*": f"the compute-optimal budget: {DESIGN.tokens_per_parameter:g} tokens per body parameter of the "
                     "target depth, in its training FLOPs"}
READINGS_PAGE = "readings.html"
BLANK_ROWS = 3  # rows of a grid with no claims to name, for the groups to fill in
SESSION_ZERO_ROWS = (("chapter 1's execution time (minutes)", "the guide's table"),
                     ("the specimen \"default\" loaded", "the book's specimen"),
                     ("the first exercise's check", "passed"))


# ---- text ---------------------------------------------------------------------------------------------------
def inline(text: str) -> str:
    """Markdown-light to HTML: escaped, `code` spans as code and **bold** as bold (no literal backticks)."""
    parts = html.escape(str(text), quote=False).split("`")
    out = "".join(f"<code>{p}</code>" if i % 2 else re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", p)
                  for i, p in enumerate(parts))
    return out


def _plan(number: int) -> SessionPlan:
    if number not in PLANS:
        raise ValueError(f"no session {number}; choose one of {sorted(PLANS)}")
    return PLANS[number]


@lru_cache(maxsize=None)
def _bibliography() -> dict[str, dict[str, str]]:
    """The book's BibTeX entries (title, author, year by key); empty where the book is not next to the library."""
    if not BIBLIOGRAPHY.is_file():
        return {}
    entries = {}
    for key, body in re.findall(r"@\w+\{([^,\s]+),(.*?)\n\}", BIBLIOGRAPHY.read_text(), flags=re.S):
        fields = dict(re.findall(r"(\w+)\s*=\s*\{(.*?)\},?\s*$", body, flags=re.M))
        entries[key] = {k: re.sub(r"[{}]|\\[\"'`^~]", "", v).replace("\\&", "&") for k, v in fields.items()}
    return entries


def bibliography_keys() -> set[str]:
    return set(_bibliography())


def reading(key: str) -> str:
    """An outside reading, cited by its BibTeX key (book/references.bib) as HTML: authors (year), linked to the book's
    readings page (which lists every entry), and the title; never the key itself, which means nothing to a reader."""
    entry = _bibliography().get(key)
    if entry is None:
        return f'<a href="{READINGS_PAGE}"><code>{html.escape(key)}</code></a>'
    authors = [a.split(",")[0].strip() for a in entry.get("author", "").split(" and ")]
    names = authors[0] if len(authors) == 1 else f"{authors[0]} and {authors[1]}" if len(authors) == 2 \
        else f"{authors[0]} et al."
    return (f'<a href="{READINGS_PAGE}">{html.escape(names)} ({html.escape(entry.get("year", ""))})</a>, '
            f'<i>{html.escape(entry.get("title", ""))}</i>')


CHAPTER_PAGES = {1: "01_specimen", 2: "02_importance", 3: "03_predictability", 4: "04_structure",
                 5: "05_manipulation", 6: "06_recovery", 7: "07_growth", 8: "08_atlas", 9: "09_verdicts"}


def heading_id(heading: str) -> str:
    """The anchor Sphinx gives a section heading (docutils' ``make_id`` for ASCII text: lower case, every run of
    other characters one hyphen; a leading number dropped with what follows it up to the first letter)."""
    slug = re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")
    return re.sub(r"^[^a-z]+", "", slug)


def page_of(plan: SessionPlan) -> str:
    """The page a session's pre-reading is on: its chapter's, or the introduction for the set-up session."""
    return CHAPTER_PAGES[plan.chapter] if plan.chapter else INTRO_PAGE


@lru_cache(maxsize=None)
def page_headings(page: str) -> tuple[tuple[int, str], ...]:
    """A book page's headings in order, as (level, text), read from its source (``book/<page>.ipynb``'s markdown
    cells, or ``book/<page>.md`` outside its code cells); empty where the book is not next to the library."""
    notebook, markdown = BOOK / f"{page}.ipynb", BOOK / f"{page}.md"
    if notebook.is_file():
        texts = ["".join(c["source"]) for c in json.loads(notebook.read_text())["cells"]
                 if c["cell_type"] == "markdown"]
    elif markdown.is_file():
        texts = [re.sub(r"^```.*?^```", "", markdown.read_text(), flags=re.S | re.M)]
    else:
        return ()
    return tuple((len(hashes), text.strip()) for source in texts
                 for hashes, text in re.findall(r"^(#+)\s+(.+)$", source, flags=re.M))


@lru_cache(maxsize=None)
def page_text(page: str) -> str:
    """A page's markdown source as one text (where a reading's stop inside a section is looked up)."""
    notebook, markdown = BOOK / f"{page}.ipynb", BOOK / f"{page}.md"
    if notebook.is_file():
        return "\n".join("".join(c["source"]) for c in json.loads(notebook.read_text())["cells"]
                         if c["cell_type"] == "markdown")
    return markdown.read_text() if markdown.is_file() else ""


def reading_stop(page: str, section: str) -> str:
    """The heading a reading of ``section`` stops before: the next one of its level or above (a page's opening,
    under its title, stops at the first section). Empty where the section ends the page or the page is absent."""
    headings = page_headings(page)
    found = [i for i, (_, text) in enumerate(headings) if text == section]
    if not found:
        if headings:
            raise ValueError(f"no section {section!r} on {page}; its headings: {[t for _, t in headings]}")
        return ""
    level = headings[found[0]][0]
    return next((text for depth, text in headings[found[0] + 1:] if depth <= max(level, 2)), "")


def _is_title(page: str, section: str) -> bool:
    return any(level == 1 and text == section for level, text in page_headings(page)) or \
        bool(re.match(r"\d+\. ", section))


def section_link(page: str, section: str, words: str) -> str:
    """A page's section as a link from the guide (a page's title: the page's top)."""
    anchor = "" if _is_title(page, section) else f"#{heading_id(section)}"
    return f'<a href="{page}.html{anchor}">{words}</a>'


def reading_spans(plan: SessionPlan) -> list[tuple[tuple[str, ...], str]]:
    """The pre-reading as (sections read in a row, the heading the last one stops before): a section whose stop is
    the next section read joins its span."""
    page = page_of(plan)
    spans: list[tuple[tuple[str, ...], str]] = []
    for section in (plan.reading[0], *plan.reading_also):
        stop = reading_stop(page, section)
        if spans and spans[-1][1] == section:
            spans[-1] = (spans[-1][0] + (section,), stop)
        else:
            spans.append(((section,), stop))
    return spans


def reading_html(plan: SessionPlan) -> str:
    """Where the pre-reading starts and exactly where it stops, as HTML: each span of sections linked, "up to (not
    including)" the heading it stops before (or the paragraph ``plan.reading_stop`` names), and the sections
    skipped between two spans named. Where the page's source is absent, the sections without their stops."""
    page = page_of(plan)
    where = f"chapter {plan.chapter}" if plan.chapter else "the introduction"
    titles = [text for _, text in page_headings(page)]
    parts, previous_stop = [], None
    for i, (sections, stop) in enumerate(reading_spans(plan)):
        if _is_title(page, sections[0]):
            named = f"{where}'s opening" if i == 0 else "the opening"
        else:
            named = (f"{where}, " if i == 0 else "") + " and ".join(f"'{html.escape(s)}'" for s in sections)
        text = section_link(page, sections[0], named)
        if plan.reading_stop and i == 0:
            text += f", up to (not including) the paragraph that begins '{html.escape(plan.reading_stop)}…'"
        elif stop:
            text += f", up to (not including) the section '{html.escape(stop)}'"
        if previous_stop in titles and sections[0] in titles:
            skipped = [t for level, t in page_headings(page)[titles.index(previous_stop):titles.index(sections[0])]
                       if level <= 2]
            if skipped:
                text = "skip " + ", ".join(f"'{html.escape(t)}'" for t in skipped) + "; then " + text
        parts.append(text)
        previous_stop = stop
    return "; ".join(parts)


def session_title(number: int) -> str:
    return f"Session {number}: {_plan(number).title}"


def session_exercises(number: int) -> list:
    """The exercises a session's sheet lists: its chapter's, then the homework's others."""
    plan = _plan(number)
    listed = list(exercises.of_chapter(plan.chapter)) if plan.chapter else []
    keys = {e.key for e in listed}
    return listed + [exercises.get(k) for k in plan.homework.exercises if k not in keys]


def _groups_html(plan: SessionPlan) -> str:
    def what(overrides: dict) -> str:
        if overrides.get("experiment") == "frontier":  # not a parameter: the chapter's first section, stored
            return "the chapter's first section, 'Growth where the question has an answer' (stored, no parameter)"
        return ", ".join(f"<code>{html.escape(k)} = {html.escape(repr(v))}</code>" for k, v in overrides.items()) \
            or "the chapter's defaults"

    def task(name: str) -> str:
        return f"; {inline(plan.group_tasks[name])}" if name in plan.group_tasks else ""

    items = "".join(f"<li><b>{html.escape(name)}</b>: {what(overrides)}{task(name)}</li>"
                    for name, overrides in plan.groups.items())
    # the group note says what to compare: it belongs to the teacher's notes, beside what the table shows
    return f"<ul>{items}</ul>"


def _rubric_html(rubric) -> str:
    return "<ul>" + "".join(f"<li>{points} point{'s' if points != 1 else ''}: {inline(what)}</li>"
                            for points, what in rubric) + "</ul>"


# ---- the guide ----------------------------------------------------------------------------------------------
def show_plan(number: int) -> HTML:
    """A session's plan as the guide shows it: goals, what is introduced before the prediction, the pre-reading,
    the minute-by-minute table, the predictions (each with the output that answers it), the groups, the fallback
    without a kernel, the discussion and the homework with its rubric."""
    plan = _plan(number)
    _, key = plan.reading
    predicting = next(i for i, s in enumerate(plan.segments) if s.predict)
    start = sum(s.minutes for s in plan.segments[:predicting])
    end = start + plan.segments[predicting].minutes
    minutes = session_plan(number)
    minutes["activity"] = minutes["activity"].map(inline)  # the table's HTML keeps code spans as code
    table = show_table(minutes, left=("activity", "cells", "on screen"),
                       caption=f"{session_title(number)}, {session_minutes(number)} minutes")
    predictions = "".join(f"<li>{inline(q.text)} <i>Answered by</i>: {html.escape(q.answered_by)}.</li>"
                          for q in plan.predictions)
    discussion = "".join(f"<li>{inline(q.text)}</li>" for q in plan.discussion)
    homework = plan.homework
    keys = ", ".join(f"<code>{k}</code>" for k in homework.exercises)
    return HTML(
        f'<div class="anatomy-session-plan"><p><b>Goals</b>: {inline(plan.goals)}</p>'
        f"<p><b>Introduced before the prediction</b> (no results shown): {inline(plan.introduce)}</p>"
        f"<p><b>Pre-reading</b>: {reading_html(plan)}; and {reading(key)}.</p>"
        + table.data
        + f"<p><b>Predict before you run</b> (minutes {start} to {end}):</p><ol>{predictions}</ol>"
        f"<p><b>Groups</b>:</p>{_groups_html(plan)}"
        f"<p><b>Without a kernel</b>: {inline(plan.fallback)}.</p>"
        f"<p><b>Discussion</b>:</p><ul>{discussion}</ul>"
        f"<p><b>Homework</b> ({homework.points} points): the exercises {keys}, checked by "
        f"<code>exercises.check</code>, and a written question: {inline(homework.question)}</p>"
        f"{_rubric_html(homework.rubric)}</div>")


def group_advice(plan: SessionPlan) -> str:
    """What the teacher does when a group's result differs from the others' (Markdown-light)."""
    advice = ("First check that the group ran what it meant to: the chapter prints its parameters, and a result "
              "read from the store names its manifest; a group that recomputes sees an estimate before it starts. "
              "Then put its verdict beside the others' and ask which choice moved it.")
    return f"{plan.group_note} {advice}" if plan.group_note else advice


def groups_sentence(number: int, evidence: Evidence, groups_table: pd.DataFrame | None = None) -> str:
    """What the groups' table of a session shows, computed (``groups.group_agreement``); the set-up session's
    groups compare machines, not claims. ``groups_table``: the table already read (else it is read here)."""
    plan = _plan(number)
    if number == 0:
        return "The groups compare their machines' set-up, not claims: there is no verdict table."
    if groups_table is None:
        groups_table = group_verdicts(evidence.lab, number, plan.groups, read_only=True, missing="mark")
    return group_agreement(groups_table, plan.groups)


def teacher_notes(number: int, evidence: Evidence, open_: bool = False,
                  groups_table: pd.DataFrame | None = None) -> HTML:
    """The teacher's notes of a session, folded (``<details>``): each prediction and discussion question with its
    answer computed from the stored results (``answers``), the answer to any task set in class, the homework's
    model answer, the misconceptions to expect (``misconceptions``), what the groups' table shows (computed from
    it: ``groups_table``, or read here) and what to do when a group's result differs."""
    plan = _plan(number)

    def answered(questions) -> str:
        return "".join(f"<li><p><b>{inline(q.text)}</b></p><p>{inline(q.answer(evidence))}</p></li>"
                       for q in questions)

    start, tasks = 0, []
    for segment in plan.segments:
        if segment.answer is not None:
            tasks.append(f"<li><p><b>Minutes {start} to {start + segment.minutes}</b>: {inline(segment.activity)}"
                         f"</p><p>{inline(segment.answer(evidence))}</p></li>")
        start += segment.minutes
    in_class = f"<p><b>In class</b>, answered:</p><ol>{''.join(tasks)}</ol>" if tasks else ""
    model = plan.homework.model_answer
    model_text = inline(model(evidence)) if model is not None else "no model answer"
    mistakes = misconceptions(plan)
    listed = "".join(f"<li>{inline(m)}</li>" for m in mistakes) or "<li>none catalogued</li>"
    return HTML(f'<details class="anatomy-teacher-notes"{" open" if open_ else ""}><summary>Teacher\'s notes, '
                f"{html.escape(session_title(number).lower())}</summary>"
                f"<p><b>Predictions</b>, answered from the stored results:</p><ol>{answered(plan.predictions)}</ol>"
                f"{in_class}"
                f"<p><b>Discussion</b>:</p><ol>{answered(plan.discussion)}</ol>"
                f"<p><b>Homework, a model answer</b> (not on the students' sheet): {model_text}</p>"
                f"<p><b>Misconceptions to expect</b> ({len(mistakes)}; those of the exercises are each caught by a "
                f"case of its checker):</p><ul>{listed}</ul>"
                f"<p><b>What the groups' table shows</b>: {inline(groups_sentence(number, evidence, groups_table))}"
                f"</p><p><b>When a group's result differs</b>: {inline(group_advice(plan))}</p></details>")


def final_project() -> HTML:
    points = sum(p for p, _ in PROJECT_RUBRIC)
    return HTML(f"<p>{inline(FINAL_PROJECT)}</p><p><b>Rubric</b> ({points} points):</p>"
                f"{_rubric_html(PROJECT_RUBRIC)}")


def assessment() -> pd.DataFrame:
    """Every homework with its points, then the final project: the course's assessment in one table."""
    rows = [{"session": n, "title": plan.title, "exercises": ", ".join(plan.homework.exercises),
             "written question": plan.homework.question, "points": plan.homework.points}
            for n, plan in sorted(PLANS.items())]
    rows.append({"session": "", "title": "Final project", "exercises": "",
                 "written question": FINAL_PROJECT.split(". ")[0] + ".",
                 "points": sum(p for p, _ in PROJECT_RUBRIC)})
    return pd.DataFrame(rows)


# ---- the handout --------------------------------------------------------------------------------------------
def _grid_rows(number: int, claims: pd.DataFrame | None) -> list[tuple[str, str]]:
    """The verdict grid's rows: the chapter's own claims with the paper's value; the book's key claims for the
    sessions that sum chapters up (8 and 9); what the room compares in session 0; blank rows without claims."""
    if number == 0:
        return list(SESSION_ZERO_ROWS)
    if claims is None or claims.empty:
        return [("", "")] * BLANK_ROWS
    if number in {c for c in claims["chapter"]}:
        mine = claims[claims["chapter"] == number]
    else:
        keys = [(c, name) for c, name in KEY_CLAIMS if number != 8 or c in DISSECTION]  # the atlas: dissection
        mine = pd.concat([claims[(claims["chapter"] == c) & (claims["Claim"] == name)] for c, name in keys])
    named = [(str(row["Claim"]), str(row["Paper"])) for _, row in mine.iterrows()]
    return named or [("", "")] * BLANK_ROWS


def define_terms(sheet: str) -> str:
    """A sheet with each of ``SHEET_TERMS`` defined where the sheet first uses it (in brackets after it), unless
    the sheet's own text defines it there already (a bracket follows it)."""
    for term, definition in SHEET_TERMS.items():
        at = sheet.find(term)
        if at >= 0 and not sheet[at + len(term):].lstrip().startswith("("):
            sheet = f"{sheet[:at + len(term)]} ({html.escape(definition)}){sheet[at + len(term):]}"
    return sheet


def handout(number: int, claims: pd.DataFrame | None = None) -> HTML:
    """A session's sheet for students, one printed page: the session's title, name and date fields, an answer box
    per prediction (written before anything runs), the exercises to check (the call that checks each), the
    homework's written question and the next session's pre-reading, a verdict grid (its rows the chapter's own
    claims with the paper's value, its columns the conditions the groups run: a specimen, a selection of text, an
    experiment), and the discussion questions; a term a student may not know (``SHEET_TERMS``) defined where the
    sheet first uses it. ``claims`` is ``verdicts.book_claims``'s table (its chapter, Claim and Paper columns);
    without it the grid has unnamed rows. The homework's model answer is for the teacher's notes only."""
    plan = _plan(number)
    predictions = "".join(f'<li><p>{inline(q.text)}</p><div class="anatomy-handout-space"></div></li>'
                          for q in plan.predictions)
    checks = "".join(f"<li><b>{html.escape(e.title)}</b> (chapter {e.chapter}): write <code>{e.function_name}"
                     f"</code>, then <code>exercises.check(\"{e.key}\", {e.function_name})</code></li>"
                     for e in session_exercises(number))
    groups = "".join(f"<th>{html.escape(name)}</th>" for name in plan.groups)
    first = ("what you compare", "the book") if number == 0 else ("the paper's claim", "paper")
    rows = "".join(f"<tr><td>{inline(claim)}</td><td>{inline(paper)}</td>" + "<td></td>" * len(plan.groups)
                   + "</tr>" for claim, paper in _grid_rows(number, claims))
    discussion = "".join(f"<li>{inline(q.text)}</li>" for q in plan.discussion)
    where = f"chapter {plan.chapter}" if plan.chapter else "the set-up"
    grid_intro = ("<p><b>The groups' verdicts</b>, one column per condition a group runs (reproduced, partly "
                  "reproduced, not reproduced, inconclusive, not comparable):</p>") if number else \
        "<p><b>Your group's set-up</b> (fill in your column):</p>"
    following = PLANS.get(number + 1)
    next_reading = (f"<p><b>Before session {number + 1}, read</b>: {reading_html(following)}; and "
                    f"{reading(following.reading[1])}.</p>") if following else ""
    return HTML(define_terms(f'<section class="anatomy-handout"><header><h3>{html.escape(session_title(number))}</h3>'
                '<p class="anatomy-handout-fields"><span>Name: <span class="anatomy-handout-line"></span></span>'
                '<span>Date: <span class="anatomy-handout-line"></span></span></p></header>'
                f"<p><b>Before you run anything, write down</b> ({where}):</p>"
                f'<ol class="anatomy-handout-predictions">{predictions}</ol>'
                "<p><b>Exercises that check themselves</b> (at the end of their chapter's page):</p>"
                f"<ol>{checks}</ol>"
                f"<p><b>Homework</b> ({plan.homework.points} points), in writing: {inline(plan.homework.question)}</p>"
                f'{next_reading}{grid_intro}<table class="anatomy-handout-grid"><tr><th>{first[0]}</th>'
                f"<th>{first[1]}</th>{groups}</tr>{rows}</table><p><b>Discussion</b>:</p><ul>{discussion}</ul>"
                "</section>"))


def handouts(claims: pd.DataFrame | None = None) -> HTML:
    """Every session's sheet in one block, so that print starts each sheet but the first on a new page (CSS
    ``:first-child``: sheets displayed one per output cell would each be the first of its own cell)."""
    sheets = "".join(handout(number, claims).data for number in sorted(PLANS))
    return HTML(f'<div class="anatomy-handouts">{sheets}</div>')
