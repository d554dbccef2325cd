"""Chapter 8, the verdicts: every claim of the paper, judged by the chapters' own functions and default parameters,
collected from the chapter registry (``CHAPTERS``, each package's ``CHAPTER``) and summed up in a computed headline."""
from __future__ import annotations

import html

import pandas as pd

from . import growth, importance, manipulation, predictability, recovery, specimen, structure
from .core.display import style_claims
from .core.rules import PARTLY, REPRODUCED, VERDICTS

CHAPTERS = tuple(package.CHAPTER for package in (specimen, importance, predictability, structure, manipulation,
                                                 recovery, growth))
SECTION = "paper-vs-this-book"  # a claim links to the section of its chapter's page that computes it


def book_claims(lab, growth_profile: str | None = None, progress: bool = False) -> pd.DataFrame:
    """Every claim of the paper, judged by the same functions and parameters the chapters use (their defaults at
    the lab's profile; chapter 7 at ``growth_profile``, default the same), with the chapter, the specimen and
    the profile behind each row. Results come from the store; anything missing is computed, as the chapter
    would."""
    rows = []
    for chapter in CHAPTERS:
        profile = (growth_profile or lab.profile.name) if chapter.trains_own_models else lab.profile.name
        params = chapter.defaults(profile)
        claims = chapter.paper_claims(chapter.compute(lab, params, progress=progress), params)
        specimen_name = "models trained from scratch on sotu" if chapter.trains_own_models else lab.specimen.name
        link = f'<a href="{chapter.page}.html#{SECTION}">{chapter.number}. {chapter.title}</a>'
        for claim in claims:
            rows.append({"chapter": chapter.number, "section": link,
                         **{k.capitalize(): v for k, v in claim.__dict__.items()}, "specimen": specimen_name,
                         "profile": profile})
    return pd.DataFrame(rows)


def verdict_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Claims per chapter and verdict (a ``book_claims`` table), verdicts in the book's order."""
    counts = pd.crosstab(table["chapter"], table["Verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    counts.loc["all"] = counts.sum()
    return counts


def book_table(table: pd.DataFrame):
    """A ``book_claims`` table for reading: the note under each claim in small type, specimen and profile in
    one column, verdicts coloured (with their text); render with ``to_html(escape=False)``."""
    controls = table["Control"] if "Control" in table else pd.Series("", index=table.index)
    because = table["Because"] if "Because" in table else pd.Series("", index=table.index)

    def claim_cell(claim, note, control, knocked) -> str:
        cell = html.escape(claim)
        if note:
            cell += f"<br><small>{html.escape(note)}</small>"
        if control:
            cell += f"<br><small><b>held to:</b> {html.escape(control)}</small>"
        if knocked:
            cell += f"<br><small><b>knocked down:</b> {html.escape(knocked)}</small>"
        return cell

    shown = pd.DataFrame({
        "Section": table["section"],
        "Claim": [claim_cell(c, n, k or "", b or "") for c, n, k, b in
                  zip(table["Claim"], table["Note"], controls.fillna(""), because.fillna(""))],
        "Paper": table["Paper"].map(html.escape), "Ours": table["Ours"].map(html.escape),
        "Verdict": table["Verdict"], "Rule": table["Rule"],
        "Specimen, profile": [f"{html.escape(s)}, {p}" for s, p in zip(table["specimen"], table["profile"])]})
    return style_claims(shown).set_table_attributes('class="anatomy-claims"')


def _counted(table: pd.DataFrame) -> str:
    counts = table["Verdict"].value_counts()
    return ", ".join(f"{counts.get(v, 0)} {'is' if counts.get(v, 0) == 1 else 'are'} {v}" for v in VERDICTS)


def headline(table: pd.DataFrame) -> list[str]:
    """The book's verdict in sentences, computed from a ``book_claims`` table. The paper's description of its
    specimen (chapter 1) is counted apart from its findings."""
    findings, specimen = table[table["chapter"] != 1], table[table["chapter"] == 1]
    out = [f"Of the paper's {len(findings)} findings checked in this book (chapters 2 to 7), {_counted(findings)}."]
    for v in (REPRODUCED, PARTLY):
        named = findings[findings["Verdict"] == v]
        if len(named):
            out.append(f"{v.capitalize()}: " + "; ".join(f"{c.Claim} (chapter {c.chapter})"
                                                           for c in named.itertuples()) + ".")
    knocked = findings[findings["Because"].fillna("").astype(bool)] if "Because" in findings else findings.iloc[:0]
    if len(knocked):
        out.append(f"{len(knocked)} of the not-reproduced findings would pass their own rule but not the control "
                   "shown beside them, and are counted as not reproduced: "
                   + "; ".join(f"{c.Claim} (chapter {c.chapter}: {c.Because})" for c in knocked.itertuples()) + ".")
    if len(specimen):
        out.append(f"Its description of the specimen (chapter 1): {len(specimen)} facts, {_counted(specimen)}.")
    out.append("Specimens behind the rows: " + ", ".join(sorted(set(table["specimen"]))) + "; profiles: "
               + ", ".join(sorted(set(table["profile"]))) + ".")
    return out
