"""Claims, findings and tables as a reader sees them in a chapter: a styled claims table (verdicts coloured, with
their text so that colour is never the only cue), computed findings as a Markdown list, and ``show_table``: any
result table with readable headers and units, an estimate and its interval in one column, numbers formatted for
reading (never ``inf``, ``nan`` or ``-0.0``), in a wrapper that scrolls, visibly, when the table is wider than
the page."""
from __future__ import annotations

import html
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd
from IPython.display import HTML, Markdown

from .rules import SURVIVES_COLUMN, Claim, claims_table

VERDICT_COLOURS = {"reproduced": "#d9f0d3", "partly reproduced": "#fee8c8", "not reproduced": "#f4cccc",
                   "inconclusive": "#dbe9f6", "not comparable": "#e8e8e8",
                   # the control's part of a verdict (the colour is never the only cue: the text is there)
                   "yes": "#d9f0d3", "in part": "#fee8c8", "no": "#f4cccc", "not discriminating": "#f4cccc",
                   # a measurement and its control read together (``rules.STANDINGS``)
                   "supported": "#d9f0d3", "supported in part": "#fee8c8", "explained by a control": "#f4cccc",
                   "not stated": "#e8e8e8"}


class ClaimsTable:
    """A styled claims table whose HTML cells carry their column's name (``data-label``): on a phone-width page
    the book's CSS shows each row as a card of labelled lines, so the verdict is never scrolled off to the side
    of a long table. Renders in a notebook like the pandas ``Styler`` it wraps (``styler``)."""

    def __init__(self, styler):
        self.styler = styler

    def to_html(self, **kwargs) -> str:
        return labelled_cells(self.styler.to_html(**kwargs), [str(c) for c in self.styler.data.columns])

    def _repr_html_(self) -> str:
        return self.to_html()


def labelled_cells(table_html: str, columns: list[str]) -> str:
    """``table_html`` (a ``Styler``'s HTML, whose body cells are classed ``colN``) with each body cell labelled
    by the name of its column (the HTML-escaped text a narrow page shows before the value)."""
    def label(match) -> str:
        return f'{match.group(0)[:-1]}data-label="{html.escape(columns[int(match.group(1))], quote=True)}">'
    return re.sub(r'<td [^>]*class="data row\d+ col(\d+)"[^>]*>', label, table_html)


def style_claims(table: pd.DataFrame, coloured: tuple[str, ...] = ()) -> ClaimsTable:
    """A styled claims table: verdicts (and the ``coloured`` columns) coloured, with text, so colour is never the
    only cue; cells labelled for a narrow page."""
    return ClaimsTable(table.style.hide(axis="index")
                       .map(lambda v: f"background-color: {VERDICT_COLOURS.get(v, '')}",
                            subset=[c for c in ("Verdict", SURVIVES_COLUMN, *coloured) if c in table])
                       .set_properties(**{"text-align": "left", "white-space": "normal"})
                       .set_table_attributes('class="anatomy-claims"'))


def show_sensitivity(wide: pd.DataFrame) -> ClaimsTable:
    """A ``rules.sensitivity_table`` for reading: every standing coloured (with its text), the first column (the
    claim or the value) plain, cells labelled for a narrow page."""
    return ClaimsTable(wide.style.hide(axis="index")
                       .map(lambda v: f"background-color: {VERDICT_COLOURS.get(v, '')}", subset=list(wide.columns[1:]))
                       .set_properties(**{"text-align": "left", "white-space": "normal"})
                       .set_table_attributes('class="anatomy-claims"'))


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


def show_claims(claims: list[Claim], beside: dict[str, list[Claim]] | None = None) -> ClaimsTable:
    """``claims`` for reading; ``beside``: other evidence's standing on the same claims, a coloured column each
    (``rules.claims_table``)."""
    return style_claims(claims_table(claims, beside), tuple(beside or ()))


def show_findings(sentences: list[str]):
    """A chapter's computed findings as a Markdown list (for the "What this chapter finds" cell)."""
    return Markdown("\n".join(f"- {s}" for s in sentences))


# ---- result tables for readers ------------------------------------------------------------------------------------
# Headers for the quantities every chapter shares, with units. A word that means something else in another
# chapter ("steps": to recover in chapter 6, of the optimiser in chapter 7) is not here: each chapter package
# passes its own (``Vocabulary``), and a table's own ``headers`` override both.
HEADERS = {
    "change_pct": "perplexity change (%)", "ppl": "perplexity", "base_ppl": "intact perplexity",
    "layer": "layer", "layers": "layers", "r2": "R²", "corr": "correlation", "rho": "Spearman ρ",
    "seed": "seed", "seeds": "seeds", "parameters": "parameters", "share_pct": "share of the model (%)",
    "mode": "mode", "component": "component", "model": "model", "context": "context", "wall_s": "wall time (s)",
    "flops": "FLOPs", "specimen": "specimen",
}
# intervals that join their estimate in one "estimate [low, high]" column: estimate -> (low, high)
INTERVALS = {"change_pct": ("ci_low", "ci_high"), "rho": ("ci_low", "ci_high"), "corr": ("ci_low", "ci_high")}


def readable(value: float, spec: str) -> str:
    """A number for a reader: ``spec`` is a format spec ("+,.1f", ".0%"...); no ``inf`` (an empty or infinite
    quantity says so), no ``nan`` ("n/a"), no ``-0.0`` (a value that rounds to zero shows as zero)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, (int, float)) and math.isinf(value):
        return "unbounded" if value > 0 else "-unbounded"
    text = format(value, spec)
    if not any(c in "123456789" for c in text.split("e")[0]):  # rounds to zero: no sign ("-0.0%", "+0.00")
        text = format(type(value)(0), spec.replace("+", ""))
    return text


def nonzero_readable(value: float, spec: str) -> str:
    """``readable``, except that a nonzero value a fixed-point ``spec`` ("+,.1f") would round to zero gets up to
    three more decimals ("-0.02", not "0.0"): an interval that excludes zero never reads as one that touches it."""
    fixed = re.fullmatch(r"(.*\.)(\d+)f", spec)
    if fixed and isinstance(value, (int, float)) and math.isfinite(value) and value:
        digits = int(fixed.group(2))
        while digits < int(fixed.group(2)) + 3 and round(abs(value), digits) == 0:
            digits += 1
        spec = f"{fixed.group(1)}{digits}f"
    return readable(value, spec)


def estimate_text(value: float, low: float, high: float, decimals: int = 1, unit: str = "") -> str:
    """"value [low, high]" for a sentence or a claim, signed, with thousands separators and ``unit`` after the
    value, each number by ``nonzero_readable`` ("[-0.9, -0.02]", never "-0.0")."""
    spec = f"+,.{decimals}f"
    return f"{nonzero_readable(value, spec)}{unit} [{nonzero_readable(low, spec)}, {nonzero_readable(high, spec)}]"


def _formatter(spec: str | Callable) -> Callable:
    return spec if callable(spec) else (lambda v: v if isinstance(v, str) else readable(v, spec))


@dataclass(frozen=True)
class Vocabulary:
    """A chapter's names for its tables' columns (``headers``) and the intervals its estimates carry
    (``intervals``, {estimate: (low, high)}), on top of the shared ``HEADERS`` and ``INTERVALS``. Calling it shows
    a table in those words: a chapter package exports ``show_table = Vocabulary(...)``."""

    headers: dict = field(default_factory=dict)
    intervals: dict = field(default_factory=dict)

    def __call__(self, table: pd.DataFrame, formats: dict | None = None, headers: dict | None = None,
                 intervals: dict | None = None, **options) -> HTML:
        return show_table(table, formats, {**self.headers, **(headers or {})},
                          intervals={**self.intervals, **(intervals or {})}, **options)

    def extended(self, other: "Vocabulary") -> "Vocabulary":
        """This vocabulary with ``other``'s words added (a chapter that shows another chapter's columns)."""
        return Vocabulary({**self.headers, **other.headers}, {**self.intervals, **other.intervals})


def show_table(table: pd.DataFrame, formats: dict | None = None, headers: dict | None = None,
               caption: str = "", index: bool = False, left: tuple = (), intervals: dict | None = None) -> HTML:
    """A result table as a reader sees it. ``formats``: {column: format spec or function}; a column with an
    interval in ``intervals`` or ``INTERVALS`` ({estimate: (low, high)}, both bounds present) becomes one
    "estimate [low, high]" column in the estimate's format. ``headers`` override ``HEADERS`` (any other name
    loses its underscores). Columns in ``left`` are left-aligned (text); numbers are right-aligned. The HTML
    scrolls inside its wrapper when wider than the page, with a scroll bar that stays visible. A column named in
    ``formats`` or ``left`` that the table lacks is an error (a silently ignored name hides a typo or a table
    that changed)."""
    formats, headers = dict(formats or {}), dict(headers or {})
    shown = table.reset_index() if index else table.copy()
    unknown = [str(c) for c in (*formats, *left) if c not in shown.columns]
    if unknown:
        raise ValueError(f"show_table: no column {', '.join(map(repr, unknown))} in this table; its columns are "
                         f"{', '.join(map(repr, map(str, shown.columns)))}")
    for estimate, (low, high) in {**INTERVALS, **(intervals or {})}.items():
        if estimate in shown and low in shown and high in shown:
            spec = formats.get(estimate, "+,.2f")
            fmt = _formatter(spec) if callable(spec) else (lambda v, spec=spec: v if isinstance(v, str)
                                                             else nonzero_readable(v, spec))
            shown[estimate] = [f"{fmt(v)} [{fmt(lo)}, {fmt(hi)}]" if lo == lo and hi == hi else fmt(v)
                               for v, lo, hi in zip(shown[estimate], shown[low], shown[high])]
            shown = shown.drop(columns=[low, high])
            formats[estimate] = str
            headers.setdefault(estimate, f"{HEADERS.get(estimate, estimate)} [95% interval]")
    for column in shown.columns:
        if column in formats:
            shown[column] = shown[column].map(_formatter(formats[column]))
        elif pd.api.types.is_float_dtype(shown[column]):
            shown[column] = shown[column].map(lambda v: readable(v, ",.3g"))
        else:
            shown[column] = shown[column].map(lambda v: "n/a" if v is None or v != v else v)
    names = {c: headers.get(c, HEADERS.get(c, str(c).replace("_", " "))) for c in shown.columns}
    styler = shown.rename(columns=names).style.hide(axis="index")
    text_columns = [names[c] for c in shown.columns if c in left or shown[c].map(_is_text).all()]
    if text_columns:
        styler = styler.set_properties(subset=text_columns, **{"text-align": "left"})
        positions = [i for i, c in enumerate(shown.columns) if names[c] in text_columns]
        styler = styler.set_table_styles([{"selector": f"th.col_heading.col{i}", "props": "text-align: left;"}
                                          for i in positions], overwrite=False)
    if caption:
        styler = styler.set_caption(html.escape(caption))
    return HTML(f'<div class="anatomy-table">{styler.to_html()}</div>')


def _is_text(value) -> bool:
    if not isinstance(value, str):
        return False
    stripped = value.replace(",", "").replace("%", "").replace("[", " ").replace("]", " ").split()
    try:
        [float(part) for part in stripped]
    except ValueError:
        return True
    return False
