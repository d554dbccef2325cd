"""Claims and findings as a reader sees them in a chapter: a styled claims table (verdicts coloured, with their
text so that colour is never the only cue) and computed findings as a Markdown list."""
from __future__ import annotations

import pandas as pd
from IPython.display import Markdown

from .rules import Claim, claims_table

_COLOURS = {"reproduced": "#d9f0d3", "partly reproduced": "#fee8c8", "not reproduced": "#f4cccc",
            "not comparable": "#e8e8e8"}


def style_claims(table: pd.DataFrame):
    """A styled claims table: verdicts coloured (with text, so colour is never the only cue)."""
    return (table.style.hide(axis="index")
            .map(lambda v: f"background-color: {_COLOURS.get(v, '')}", subset=["Verdict"])
            .set_properties(**{"text-align": "left", "white-space": "normal"}))


def show_claims(claims: list[Claim]):
    return style_claims(claims_table(claims))


def show_findings(sentences: list[str]):
    """A chapter's computed findings as a Markdown list (for the "What this chapter finds" cell)."""
    return Markdown("\n".join(f"- {s}" for s in sentences))
