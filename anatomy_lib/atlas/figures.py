"""The atlas's figures: the chapters' headline measures for every specimen on one relative-depth axis, and the
claims-by-specimen table."""
from __future__ import annotations

import html
import itertools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..core.display import verdict_cell
from ..core.style import COLUMN, PALETTE, PAPER_STYLE, SMALL, figure_title, place_legends, use_book_style
from ..growth import figures as growth_figures
from ..growth.params import ARMS
from ..importance import figures as imp_figures
from ..manipulation import PAPER as MANIPULATION_PAPER
from ..verdicts import specimen_note
from .report import MODE

MARKERS = ("o", "s", "^", "D", "v", "P")


def _styles(names) -> dict[str, tuple]:
    """A colour and marker per series: a model chapter 7 trained keeps its arm's colour from that chapter (a reader
    has learnt it there), and the specimens take colours no arm uses, the first black."""
    by_arm = growth_figures.arm_colours(ARMS)
    spare = itertools.cycle(["black", *sns.color_palette(PALETTE)[len(ARMS):]])
    styles = {}
    for i, name in enumerate(names):
        arm = name.split(": ", 1)[1] if name.startswith("trained") and ": " in name else None
        styles[name] = (by_arm[arm] if arm in by_arm else next(spare), MARKERS[i % len(MARKERS)])
    return styles


def atlas_figure(tables: dict[str, pd.DataFrame]):
    """Six panels: importance (with intervals: neighbour-mean ablation on the specimens, chapter 7's skip ablation
    on its trained models, dashed) and Block Influence against relative depth, for every specimen and those
    models; held-out R^2 of ridge and of the mean-layer baseline; the lag-1 delta correlation per component
    against its layer-shuffled null; the alpha curve of the writers; and the share of the damage undone against the
    sham of the same layer (chapter 6's main criterion) where chapter 6 was run."""
    use_book_style()
    importance = tables["importance"]
    importance = importance[importance["mode"] == MODE]
    trained = tables.get("trained", pd.DataFrame())
    names = list(dict.fromkeys(list(importance["specimen"]) + list(trained.get("specimen", []))))
    style = _styles(names)
    fig, axes = plt.subplots(3, 2, figsize=(COLUMN, 11.0))
    (imp, influence), (pred, struct), (alpha, rec) = axes

    for name, rows in pd.concat([importance, trained], ignore_index=True).groupby("specimen", sort=False):
        colour, marker = style[name]
        dashed = name.startswith("trained")
        low = np.maximum(rows["ci_low"], 1e-3)
        imp.plot(rows["depth"], np.maximum(rows["change_pct"], 1e-3), marker=marker, color=colour, label=name,
                 linestyle="--" if dashed else "-", linewidth=1.3, markersize=4)
        imp.fill_between(rows["depth"], low, np.maximum(rows["ci_high"], 1e-3), color=colour, alpha=0.15)
        influence.plot(rows["depth"], rows["block_influence"], marker=marker, color=colour, label=name,
                       linestyle="--" if dashed else "-", linewidth=1.3, markersize=4)
    imp.set(yscale="log", xlabel="relative depth", ylabel="perplexity change, % (log)",
            title="Importance: neighbour mean\n(trained models, dashed: skip)")
    influence.set(xlabel="relative depth", ylabel="1 - cos(in, out)", title="Block Influence\n")

    held = tables["predictability"]
    for name, rows in held.groupby("specimen", sort=False):
        colour, marker = style[name]
        for predictor, line in (("ridge", "-"), ("mean layer", ":")):
            part = rows[rows["predictor"] == predictor]
            pred.plot(part["depth"], part["r2"], marker=marker, color=colour, linestyle=line, linewidth=1.3,
                      markersize=4, label=f"{name}, {predictor}")
    pred.axhline(0, color="grey", linewidth=0.8)
    pred.set(xlabel="relative depth", ylabel="held-out R^2 (component mean)",
             title="Predictability: ridge (solid)\nvs mean layer (dotted)")

    structure = tables["structure"]
    specimens = list(dict.fromkeys(structure.get("specimen", [])))
    for i, (name, rows) in enumerate(structure.groupby("specimen", sort=False)):
        colour, marker = style[name]
        x = np.arange(len(rows)) + (i - (len(specimens) - 1) / 2) * 0.25
        struct.vlines(x, rows["null_low"], rows["null_high"], color=colour, linewidth=5, alpha=0.3)
        struct.plot(x, rows["corr"], marker=marker, color=colour, linestyle="none", label=name)
        struct.set_xticks(np.arange(len(rows)), rows["component"])
    struct.axhline(-0.5, **PAPER_STYLE, label="paper: -0.50")
    struct.set(xlabel="component", ylabel="lag-1 delta correlation",
               title="Structure: specimen (dot)\nvs shuffled null (bar)")

    curve = tables["alpha"]
    for name, rows in curve.groupby("specimen", sort=False):
        colour, marker = style[name]
        for line, (layer, part) in zip(("-", "--", ":"), rows.groupby("layer")):
            part = part.sort_values("alpha")
            alpha.plot(part["alpha"], part["change_pct"], marker=marker, color=colour, linestyle=line,
                       linewidth=1.3, markersize=4, label=name)
            alpha.fill_between(part["alpha"], part["ci_low"], part["ci_high"], color=colour, alpha=0.15)
    alpha.axvline(MANIPULATION_PAPER["alpha"], **PAPER_STYLE)
    alpha.set(yscale="symlog", xlabel="alpha (writers scaled)", ylabel="perplexity change, % (symlog)",
              title="Manipulation: alpha curves\n(dashed: the paper's alpha)")

    runs = tables["recovery"]
    for name, rows in (runs.groupby("specimen", sort=False) if not runs.empty else []):
        colour, marker = style[name]
        mean = rows.groupby("depth", as_index=False)["recovered_fraction"].mean()
        rec.plot(mean["depth"], 100 * mean["recovered_fraction"], marker=marker, color=colour, label=name,
                 linewidth=1.3, markersize=4)
    rec.set(xlabel="relative depth", ylabel="damage undone vs the sham, %",
            title="Recovery, sham-corrected\n(matched damage)")
    rec.set_ylim(min(0, rec.get_ylim()[0]), max(100, rec.get_ylim()[1]))
    not_run = tables.get("not_run", pd.DataFrame())
    for ax, measure in ((alpha, "alpha"), (rec, "recovery"), (pred, "predictability"), (struct, "structure")):
        missing = sorted(not_run.loc[not_run["measure"] == measure, "specimen"]) if not not_run.empty else []
        if missing:
            ax.text(0.5, 0.04, "not run yet: " + ", ".join(missing), transform=ax.transAxes, ha="center",
                    fontsize=SMALL, color="grey")

    handles = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            key = label.split(",")[0]
            if not key.startswith("_"):
                handles.setdefault(key, handle)
    legend = fig.legend(list(handles.values()), list(handles), loc="upper center", ncol=2, frameon=False)
    legend.set_in_layout(False)
    figure_title(fig, "The atlas: every chapter's headline measure\non one depth axis", None)
    fig.tight_layout()
    place_legends(fig)
    return fig


def activations_figure(tables: dict[str, pd.DataFrame]):
    """Massive activations of every specimen and of chapter 7's trained models on the atlas's depth axis
    (``importance.activations_figure``), each one's most important layer crossed (the paper's ablation on the
    specimens, chapter 7's skip ablation on its models), the birth layer marked where chapter 2's causal test is
    stored (else the first layer past the threshold)."""
    importance = tables["importance"]
    importance = pd.concat([importance[importance["mode"] == MODE], tables.get("trained", pd.DataFrame())],
                           ignore_index=True)
    tops = importance.loc[importance.groupby("specimen", sort=False)["change_pct"].idxmax(), ["specimen", "layer"]]
    massive = tables.get("massive", pd.DataFrame())
    births = dict(zip(massive["specimen"], massive["birth_layer"].astype(int))) if not massive.empty else {}
    return imp_figures.activations_figure(tables["activations"], tops.rename(columns={"layer": "top_layer"}),
                                          births=births)


def claims_table_html(claims: pd.DataFrame, names: list[str]) -> str:
    """The claims-by-specimen table (``claims_by_specimen``) as HTML: the claim, the paper's number, and per
    specimen our number and verdict (coloured, with its text); rows a specimen has not run say so."""
    head = "".join(f"<th>{html.escape(n)}</th>" for n in ["Chapter", "Claim", "Paper"] + names)
    rows = []
    for row in claims.to_dict("records"):
        cells = [str(row["chapter"]), html.escape(row["Claim"]), html.escape(str(row["Paper"])),
                 verdict_cell(row["Verdict"], row["Ours"])]
        for name in names[1:]:
            cells.append(verdict_cell(row.get(f"{name}: verdict"), row.get(f"{name}: ours", ""),
                                      specimen_note(row, name)))
        labels = ["Chapter", "Claim", "Paper"] + names  # data-label: a narrow page shows rows as labelled cards
        rows.append("<tr>" + "".join(f'<td data-label="{html.escape(n, quote=True)}">{c}</td>'
                                     for n, c in zip(labels, cells)) + "</tr>")
    return (f'<table class="anatomy-claims anatomy-atlas"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")
