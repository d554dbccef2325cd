"""Chapter 9, the verdicts: every claim of the paper, judged by the chapters' own functions and default parameters,
collected from the chapter registry (``CHAPTERS``, each package's ``CHAPTER``) and summed up in a computed headline."""
from __future__ import annotations

import html

import pandas as pd

from . import growth, importance, manipulation, predictability, quantisation, recovery, specimen, structure
from .core.display import style_claims, verdict_cell
from .core.lab import NotStored
from .core.rules import (
    MIXED,
    NO_CONTROL,
    NOT_HELD,
    NOT_REPRODUCED,
    PASSES_BUT_CONTROLLED,
    STANDINGS,
    SURVIVES_COLUMN,
    VERDICTS,
    checkpoint_caveat,
    experiment_standing,
    standing,
)
from .growth.compute import is_stored

CHAPTERS = tuple(package.CHAPTER for package in (specimen, importance, predictability, structure, manipulation,
                                                 recovery, growth))
SECTION = "paper-vs-this-book"  # a claim links to the section of its chapter's page that computes it


def book_claims(lab, growth_profile: str | None = None, progress: bool = False,
                chapters=CHAPTERS) -> pd.DataFrame:
    """Every claim of the paper, judged by the same functions and parameters the chapters use (their defaults at
    the lab's profile; chapter 7 at ``growth_profile``, default the same), with the chapter, the specimen and
    the profile behind each row. Results come from the store; anything missing is computed, as the chapter
    would, except by a read-only lab (``Lab.read_only``): a chapter it has not stored is left out."""
    rows = []
    for chapter in chapters:
        profile = (growth_profile or lab.profile.name) if chapter.trains_own_models else lab.profile.name
        params = chapter.defaults(profile, None if chapter.trains_own_models else lab.specimen.name)
        try:
            tables = chapter.compute(lab, params, progress=progress)
        except NotStored:
            continue
        claims = chapter.paper_claims(tables, params)
        specimen_name = "models trained from scratch on sotu" if chapter.trains_own_models else lab.specimen.name
        link = f'<a href="{chapter.page}.html#{SECTION}">{chapter.number}. {chapter.title}</a>'
        for claim in claims:
            if not claim.experiment:
                raise ValueError(f"chapter {chapter.number}'s claim {claim.claim!r} names no experiment: its report "
                                 "marks every claim with rules.in_experiment")
            caveat = "" if chapter.trains_own_models else checkpoint_caveat(claim.kind, lab.specimen.name)
            rows.append({"chapter": chapter.number, "section": link,
                         **{k.capitalize(): v for k, v in claim.__dict__.items()}, "Standing": claim.standing,
                         "Checkpoint": caveat, "specimen": specimen_name, "profile": profile})
    return pd.DataFrame(rows)


GENERALITY = "generality"  # what a claim the paper made for SmolLM2 tests on any other specimen
NO_SECOND_SPECIMEN = {1: "describes the paper's specimen", 7: "none: trained models"}  # chapters that have none


def claims_by_specimen(labs, growth_profile: str | None = None, progress: bool = False) -> pd.DataFrame:
    """Chapter 9's claims on several specimens: one row per claim as judged on the first lab (the paper's own
    specimen, or the book's stand-in for it), with each further specimen's result (``<name>: ours``) and verdict
    (``<name>: verdict``) beside it, judged by the same rule. The paper made its claims for SmolLM2, so on any
    other specimen a claim tests its generality (``<name>: test``). Chapter 1 describes the paper's specimen and
    chapter 7 trains its own models: neither has a second specimen; a chapter a specimen has not stored reads
    "not run". Claims are matched by chapter and
    position (a claim about "layer 11" of SmolLM2 is the claim about the layer at the same relative depth)."""
    first, *others = labs
    # chapter 1's claims describe the paper's specimen (its depth, width, ...): nothing to generalise
    dissection = tuple(c for c in CHAPTERS if not c.trains_own_models and c.number != 1)
    return joined_by_specimen(book_claims(first, growth_profile, progress), first.specimen.name,
                              {lab.specimen.name: book_claims(lab, progress=progress, chapters=dissection)
                               for lab in others})


def joined_by_specimen(table: pd.DataFrame, first_name: str, others: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """``claims_by_specimen``'s table from the first specimen's ``book_claims`` table and each further specimen's
    (by name; empty where it has stored nothing), matched by chapter and position."""
    table = table.copy()
    table["position"] = table.groupby("chapter").cumcount()
    table[f"{first_name}: test"] = "the paper's claim"
    for name, other in others.items():
        if other.empty:  # nothing stored for this specimen yet
            other = pd.DataFrame(columns=["chapter", "Claim", "Paper", "Ours", "Verdict", "Survives", "Because"])
        other = other.assign(position=other.groupby("chapter").cumcount())
        other = other.rename(columns={"Ours": f"{name}: ours", "Verdict": f"{name}: verdict", "Paper": f"{name}: paper",
                                      "Claim": f"{name}: claim", "Because": f"{name}: because",
                                      "Survives": f"{name}: survives"})
        keep = ["chapter", "position"] + [c for c in other.columns if c.startswith(f"{name}: ")]
        table = table.merge(other[keep], on=["chapter", "position"], how="left")
        run = table[f"{name}: verdict"].notna()
        table[f"{name}: test"] = [GENERALITY if r else NO_SECOND_SPECIMEN.get(ch, "not run")
                                  for r, ch in zip(run, table["chapter"])]
        table[f"{name}: ours"] = table[f"{name}: ours"].fillna("")
        survives = table[f"{name}: survives"] if f"{name}: survives" in table else pd.Series("", index=table.index)
        table[f"{name}: survives"] = survives.fillna("")
        table[f"{name}: standing"] = [standing(v, s) if isinstance(v, str) else ""
                                      for v, s in zip(table[f"{name}: verdict"], table[f"{name}: survives"])]
        table[f"{name}: at depth"] = [_at_depth(row, name) for row in table.to_dict("records")]
    return table.drop(columns="position")


def _at_depth(row: dict, name: str) -> str:
    """What a claim names on specimen ``name`` where that differs from the first specimen's wording: the
    paper's layers mapped to its depth (the critical core L8-11 of 30 layers is L5-6 of 18), or the claim as it
    reads there ("L6 (the paper's L11 depth) alone")."""
    claim, paper = row.get(f"{name}: claim"), row.get(f"{name}: paper")
    if isinstance(paper, str) and paper != row["Paper"]:
        return f"the paper's, at this depth: {paper}"
    if isinstance(claim, str) and claim != row["Claim"]:
        return f"here: {claim}"
    return ""


def specimen_note(row: dict, name: str, with_test: bool = True) -> str:
    """The small-type note of specimen ``name``'s verdict cell: what the row tests there (``<name>: test``,
    left out with ``with_test=False``), whether it survives its control there, and what the claim names at its
    depth."""
    test = row.get(f"{name}: test", "not run")
    parts = [test] if with_test or test != GENERALITY else []
    if row.get(f"{name}: survives"):
        parts.append(f"survives its control: {row[f'{name}: survives']}")
    return "; ".join(parts + [row[f"{name}: at depth"]] if row.get(f"{name}: at depth") else parts)


def generality_sentences(claims: pd.DataFrame, names: list[str]) -> list[str]:
    """Which claims hold on which specimen, counted from a ``claims_by_specimen`` table."""
    first, others = names[0], names[1:]
    out = []
    for name in others:
        tested = claims[claims[f"{name}: test"] == GENERALITY]
        if tested.empty:
            out.append(f"No claim has been tested on {name} yet.")
            continue
        same = (tested["Verdict"] == tested[f"{name}: verdict"]).sum()
        # "holds" reads a measurement with its control: a reproduced measurement that its control (or every
        # comparison unit) matches holds nowhere
        held_first = tested["Standing"].isin(("supported", "supported in part"))
        held_other = tested[f"{name}: standing"].isin(("supported", "supported in part"))
        both, first_only, other_only = (tested[held_first & held_other], tested[held_first & ~held_other],
                                        tested[~held_first & held_other])
        counts = tested[f"{name}: verdict"].value_counts()
        out.append(f"{len(tested)} of the paper's claims were tested on {name} as well (chapters "
                   f"{', '.join(str(c) for c in sorted(set(tested['chapter'])))}): "
                   + ", ".join(f"{n} {v}" for v, n in counts.items())
                   + f"; {same} get the same verdict as on {first}; read with their controls there, "
                   + _counted(tested[f"{name}: standing"], STANDINGS) + ".")
        for label, rows in (("supported on both", both), (f"supported on {first} only", first_only),
                            (f"supported on {name} only", other_only)):
            if len(rows):
                out.append(f"{label.capitalize()}: " + "; ".join(f"{r.Claim} (chapter {r.chapter})"
                                                                for r in rows.itertuples()) + ".")
        not_run = claims[claims[f"{name}: test"] == "not run"]
        if len(not_run):
            out.append(f"Not yet run on {name}: chapter(s) "
                       f"{', '.join(str(c) for c in sorted(set(not_run['chapter'])))} ({len(not_run)} claims).")
    return out


def verdict_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Claims per chapter and verdict (a ``book_claims`` table), verdicts in the book's order. The total counts
    the paper's findings (chapters 2 to 7) as ``headline`` does; chapter 1's row (facts about the specimen) stays
    out of it, so the two never disagree."""
    counts = pd.crosstab(table["chapter"], table["Verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    counts.index = counts.index.map(lambda c: "1 (the specimen's facts)" if c == 1 else str(c))
    counts.index.name = "chapter"
    findings = [c for c in counts.index if not c.startswith("1 ")]
    counts.loc["findings, chapters 2-7"] = counts.loc[findings].sum()
    return counts


def book_table(table: pd.DataFrame):
    """A ``book_claims`` table for reading: the note and the rule under each claim in small type, the specimen
    and profile most rows share in the verdict's header (a row measured elsewhere says so under its verdict),
    verdicts coloured (with their text); render with ``to_html(escape=False)``."""
    def column(name):
        return table[name].fillna("") if name in table else pd.Series("", index=table.index)

    def claim_cell(claim, note, control, because, experiment, kind, rule) -> str:
        cell = html.escape(claim)
        if experiment or kind:
            cell += "<br><small><b>experiment:</b> " + html.escape(" · ".join(x for x in (experiment, kind) if x)) \
                + "</small>"
        if note:
            cell += f"<br><small>{html.escape(note)}</small>"
        if rule:
            cell += f"<br><small><b>rule:</b> {html.escape(rule)}</small>"
        if control:
            cell += f"<br><small><b>held to:</b> {html.escape(control)}</small>"
        if because:
            cell += f"<br><small><b>the control showed:</b> {html.escape(because)}</small>"
        return cell

    def verdict_of(verdict, caveat) -> str:
        return verdict_cell(verdict, "", caveat)

    # the specimen and profile most rows share are said once, in the verdict's header; a row measured elsewhere
    # (chapter 7's trained models) says its own under its verdict, instead of a column that repeats one name on
    # every row and takes the room the further specimens' columns need
    where = pd.Series([f"{s}, {p} profile" for s, p in zip(table["specimen"], table["profile"])], index=table.index)
    usual = where.mode().iloc[0]
    shown = pd.DataFrame({
        "Section": table["section"],
        "Claim": [claim_cell(*parts) for parts in zip(table["Claim"], table["Note"], column("Control"),
                                                       column("Because"), column("Experiment"), column("Kind"),
                                                       column("Rule"))],
        "Paper": table["Paper"].map(html.escape), "Ours": table["Ours"].map(html.escape),
        f"Verdict ({html.escape(usual)})": [
            verdict_of(v, "; ".join(x for x in (c, "" if w == usual else f"on {w}") if x))
            for v, c, w in zip(table["Verdict"], column("Checkpoint"), where)],
        SURVIVES_COLUMN: [verdict_cell(s, "", "") if s else html.escape(NOT_HELD if c else NO_CONTROL)
                          for s, c in zip(column("Survives"), column("Control"))]})
    for name in other_specimens(table):  # a claims_by_specimen table: one more column per specimen
        shown[f"{name} ({GENERALITY})"] = [
            verdict_cell(row[f"{name}: verdict"], row[f"{name}: ours"], specimen_note(row, name, with_test=False))
            for row in table.to_dict("records")]
    return style_claims(shown)


def other_specimens(table: pd.DataFrame) -> list[str]:
    """The further specimens of a ``claims_by_specimen`` table (none in a ``book_claims`` table)."""
    return [c[:-len(": verdict")] for c in table.columns if c.endswith(": verdict")]


def _counted(values: pd.Series, order) -> str:
    counts = values.value_counts()
    return ", ".join(f"{counts.get(v, 0)} {v}" for v in order if counts.get(v, 0))


def experiments(table: pd.DataFrame) -> pd.DataFrame:
    """One row per experiment of a ``book_claims`` table (chapter order): its chapter, its claims, and its
    standing (``rules.experiment_standing``: the rows' common standing, or "mixed" with the rows' standings
    beside it). The headline counts these, so one experiment reported in five rows counts once."""
    rows = []
    for (chapter, experiment), group in table.groupby(["chapter", "Experiment"], sort=False):
        standings = list(group["Standing"])
        rows.append({"chapter": chapter, "experiment": experiment, "claims": len(group),
                     "standing": experiment_standing(standings),
                     "rows": _counted(group["Standing"], STANDINGS)})
    return pd.DataFrame(rows, columns=["chapter", "experiment", "claims", "standing", "rows"])


# The paper's three central claims, in the order its abstract makes them: an anatomy (a critical core), a paradox
# (predictable weights that cannot be substituted), and the method it derives (growth training).
KEY_CLAIMS = ((2, "critical core"), (3, "R^2 of gate, held-out layers"),
              (7, "developmental (the paper's arm): compute to reach the target depth's loss at C*"))


def key_findings(table: pd.DataFrame) -> list[str]:
    """The paper's three central claims (``KEY_CLAIMS``) as the book finds them, one sentence each, linked to the
    section that computes it: for the introduction's summary."""
    out = []
    for chapter, claim in KEY_CLAIMS:
        rows = table[(table["chapter"] == chapter) & (table["Claim"] == claim)]
        if not len(rows):
            continue
        row = rows.iloc[0]
        page = next(c.page for c in CHAPTERS if c.number == chapter)
        out.append(f'<a href="{page}.html#{SECTION}">{claim.replace("R^2", "R²")}</a> (chapter {chapter}): the '
                   f"paper's {row['Paper']}; this book's {row['Ours']} ({row['specimen']}): **{row['Standing']}**.")
    return out


def headline(table: pd.DataFrame) -> list[str]:
    """The book's verdict in sentences, computed from a ``book_claims`` (or ``claims_by_specimen``) table: the
    paper's experiments counted once each (``experiments``), the claims beside them, a measurement and its
    control read together (``rules.standing``). The paper's description of its specimen (chapter 1) is counted
    apart from its findings; further specimens are summed up after it."""
    findings, specimen = table[table["chapter"] != 1], table[table["chapter"] == 1]
    by_experiment = experiments(findings)
    out = [f"Of the paper's {len(by_experiment)} experiments checked in this book (chapters 2 to 7), "
           f"{_counted(by_experiment['standing'], (*STANDINGS, MIXED))}; over their {len(findings)} claims, "
           f"{_counted(findings['Standing'], STANDINGS)} (a claim is supported when its measurement is reproduced "
           "and survives its control; by measurement alone: "
           f"{_counted(findings['Verdict'], VERDICTS)})."]
    backed = by_experiment[[bool({"supported", "supported in part"} & set(findings.loc[
        (findings["chapter"] == r.chapter) & (findings["Experiment"] == r.experiment), "Standing"]))
        for r in by_experiment.itertuples()]]
    out.append(f"{len(backed)} of the {len(by_experiment)} experiments support at least one of the paper's claims"
               + (": " + "; ".join(f"{r.experiment} (chapter {r.chapter})" for r in backed.itertuples())
                  if len(backed) else "") + ".")
    for label in ("supported", "supported in part", "inconclusive"):
        named = findings[findings["Standing"] == label]
        if len(named):
            out.append(f"{label.capitalize()}: " + "; ".join(f"{c.Claim} (chapter {c.chapter})"
                                                             for c in named.itertuples()) + ".")
    explained = findings[findings["Standing"].isin(PASSES_BUT_CONTROLLED)]
    if len(explained):
        out.append(f"{len(explained)} claims pass their own rule but not the control shown beside them: "
                   + "; ".join(f"{c.Claim} (chapter {c.chapter}: {c.Survives}, {c.Because})"
                               for c in explained.itertuples()) + ".")
    mixed = by_experiment[by_experiment["standing"] == MIXED]
    if len(mixed):
        out.append("Mixed experiments: " + "; ".join(f"{r.experiment} (chapter {r.chapter}: {r.rows})"
                                                     for r in mixed.itertuples()) + ".")
    if len(specimen):
        out.append(f"Its description of the specimen (chapter 1): {len(specimen)} facts, "
                   f"{_counted(specimen['Verdict'], VERDICTS)}.")
    out.append("Specimens behind the rows: " + ", ".join(sorted(set(table["specimen"]))) + "; profiles: "
               + ", ".join(sorted(set(table["profile"]))) + ".")
    others = other_specimens(table)
    if others:  # a claims_by_specimen table: the same claims on further specimens
        dissection = {c.number for c in CHAPTERS if not c.trains_own_models}
        first = next(s for s, c in zip(table["specimen"], table["chapter"]) if c in dissection)
        out += generality_sentences(table, [first, *others])
    return out


def _not_reproduced(table: pd.DataFrame, chapter: int) -> str:
    rows = table[(table["chapter"] == chapter) & (table["Verdict"] == NOT_REPRODUCED)]
    return "; ".join(rows["Claim"]) or "none"


def explanations(table: pd.DataFrame, labs, profile: str = "quick") -> pd.DataFrame:
    """For the claims of chapters 2, 3 and 4 the book does not reproduce (a ``book_claims`` table), each
    explanation the book tests and what it showed, in computed sentences: the ablation operator (chapter 2's
    operator panel on every lab), massive activations (the causal test, on every lab that stores it), attention
    type (where a specimen's layers have types), half precision (the maps stored at the smoke profile's blocks, as
    chapter 2 reads them), and quantisation (the quantisation null,
    computed only when the first lab computes what is missing). A test whose results are not stored reads
    "not run"."""
    rows = []
    panel = importance.operator_panel(labs, operators=importance.OPERATORS, progress=False)
    if panel:
        summary = importance.panel_summary(panel)
        said = importance.operator_findings(summary)[-1]
        counted = ", ".join(f"{name}: {len(group)} operators" for name, group in summary.groupby("specimen",
                                                                                                  sort=False))
        rows.append({"chapter": 2, "explanation": "the ablation operator (what \"replace a layer\" means)",
                     "showed": f"{said} Tested on {counted}."})
    causal = importance.massive_panel(labs)
    if causal:
        said = [s for s in importance.massive_findings(causal) if "ablating the birth layer" in s]
        rows.append({"chapter": 2, "explanation": "massive activations (Sun et al. 2024), tested causally",
                     "showed": " ".join(said)})
    else:
        rows.append({"chapter": 2, "explanation": "massive activations (Sun et al. 2024), tested causally",
                     "showed": "not run"})
    if panel:
        types = importance.layer_type_findings(panel, {lab.specimen.name: lab.adapter.layer_types for lab in labs})
        if types:
            rows.append({"chapter": 2, "explanation": "attention type (global against sliding-window layers)",
                         "showed": " ".join(types)})
    precision = importance.precision_panels([lab.specimen.name for lab in labs],
                                            importance.PrecisionParams(n_blocks=None), importance.PRECISION_PROFILE)
    rows.append({"chapter": 2, "explanation": "half precision (the paper's T4, plausibly float16)",
                 "showed": " ".join(importance.precision_findings(precision)) or "not run"})
    params = quantisation.QuantisationParams.for_profile(profile)
    if labs and (labs[0].compute_missing or is_stored(params.DIAGNOSTIC, params)):
        table_null = quantisation.deltas(quantisation.quantisation_null(params, progress=False))
        for chapter in (3, 4):
            rows.append({"chapter": chapter, "explanation": "quantisation (the quantisation null)",
                         "showed": quantisation.conclusion(table_null, chapter)})
    else:
        rows += [{"chapter": c, "explanation": "quantisation (the quantisation null)", "showed": "not run"}
                 for c in (3, 4)]
    out = pd.DataFrame(rows, columns=["chapter", "explanation", "showed"])
    out.insert(1, "claims not reproduced", [_not_reproduced(table, c) for c in out["chapter"]])
    return out
