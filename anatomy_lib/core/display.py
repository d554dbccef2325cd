"""Claims and findings as a reader sees them in a chapter: a styled claims table (verdicts coloured, with their
text so that colour is never the only cue) and computed findings as a Markdown list."""
from __future__ import annotations

import html

import pandas as pd
from IPython.display import Markdown

from .rules import Claim, claims_table

VERDICT_COLOURS = {"reproduced": "#d9f0d3", "partly reproduced": "#fee8c8", "not reproduced": "#f4cccc",
            "not comparable": "#e8e8e8"}


def style_claims(table: pd.DataFrame):
    """A styled claims table: verdicts coloured (with text, so colour is never the only cue)."""
    return (table.style.hide(axis="index")
            .map(lambda v: f"background-color: {VERDICT_COLOURS.get(v, '')}", subset=["Verdict"])
            .set_properties(**{"text-align": "left", "white-space": "normal"}))


def verdict_cell(verdict, ours: str = "", note: str = "") -> str:
    """One specimen's verdict on a claim as an HTML cell: the verdict coloured (with its text), ``note`` and our
    number in small type under it; a missing verdict shows ``note`` alone, in italics ("not run")."""
    if not isinstance(verdict, str) or not verdict:
        return f"<i>{html.escape(note or 'not run')}</i>"
    cell = f'<span style="background-color:{VERDICT_COLOURS.get(verdict, "")}">{html.escape(verdict)}</span>'
    for extra in (note, ours):
        if extra:
            cell += f"<br><small>{html.escape(str(extra))}</small>"
    return cell


def show_claims(claims: list[Claim]):
    return style_claims(claims_table(claims))


def show_findings(sentences: list[str]):
    """A chapter's computed findings as a Markdown list (for the "What this chapter finds" cell)."""
    return Markdown("\n".join(f"- {s}" for s in sentences))
