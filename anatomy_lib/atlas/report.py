"""The atlas in sentences: what each headline measure looks like on each specimen, and which of the paper's claims
hold on which model (the claims themselves are judged by chapter 9's ``claims_by_specimen``)."""
from __future__ import annotations

import pandas as pd

from ..core.params import PaperLayers
from ..core.rules import jaccard
from ..importance import PAPER, connective_layers, importance_range_orders, rank_agreement
from ..manipulation import PAPER as MANIPULATION_PAPER
from ..verdicts import claims_by_specimen, generality_sentences

__all__ = ["claims_by_specimen", "findings", "importance_sentences"]

MODE = "neighbor_mean"  # the paper's ablation, the one every specimen is compared on


def _depths(table: pd.DataFrame, layers) -> str:
    depth = dict(zip(table["layer"], table["depth"]))
    return ", ".join(f"{l} ({depth[l]:.2f})" for l in layers) if layers else "none"


def importance_sentences(importance: pd.DataFrame, trained: pd.DataFrame | None = None) -> list[str]:
    """Per specimen (and trained model): the most important layer and its relative depth, the connective
    tissue, the range of importance, and whether Block Influence ranks the layers alike."""
    out = []
    parts = [importance[importance["mode"] == MODE]]
    if trained is not None and not trained.empty:
        parts.append(trained)
    for name, table in pd.concat(parts, ignore_index=True).groupby("specimen", sort=False):
        top = table.loc[table["change_pct"].idxmax()]
        connective = connective_layers(table)
        how = "neighbour-mean" if table["mode"].iloc[0] == MODE else table["mode"].iloc[0]
        out.append(
            f"{name} ({int(table['n_layers'].iloc[0])} layers): removing one layer by {how} ablation costs "
            f"at most {top.change_pct:+,.1f}% [{top.ci_low:+,.1f}, {top.ci_high:+,.1f}] at layer {int(top.layer)} "
            f"(relative depth {top.depth:.2f}); connective tissue (layer, depth): {_depths(table, connective)}; "
            f"importance spans {importance_range_orders(table):.1f} orders of magnitude; Block Influence ranks the "
            f"layers with Spearman {rank_agreement(table):+.2f} against the measured change.")
    return out


def layer_type_sentences(importance: pd.DataFrame, paper_core=PAPER["critical_core"]) -> list[str]:
    """For each specimen whose layers have more than one attention type: the paper's critical core mapped by
    relative depth and by attention type (every layer of the paper's model is global, so by type a critical layer
    is a global one), beside the specimen's own critical middle core under the paper's ablation, with the Jaccard
    overlap of each mapping."""
    out = []
    if "layer_type" not in importance:
        return out
    for name, table in importance[importance["mode"] == MODE].groupby("specimen", sort=False):
        if table["layer_type"].nunique() < 2:
            continue
        n_layers = int(table["n_layers"].iloc[0])
        core = sorted(int(l) for l in table.loc[table["class"] == "critical core", "layer"])
        by_depth = list(PaperLayers(paper_core).at_depth(n_layers))
        by_type = sorted(int(l) for l in table.loc[table["layer_type"] == "global", "layer"])
        parts = [f"by relative depth to {_layers(by_depth)} (Jaccard {jaccard(by_depth, core):.2f})",
                 f"by attention type to its global layers {_layers(by_type)} (Jaccard {jaccard(by_type, core):.2f})"]
        out.append(f"{name}: the paper's critical core {_layers(paper_core)} maps " + " and ".join(parts)
                   + f"; its own critical middle core under neighbour-mean ablation is {_layers(core)}.")
    return out


def _layers(layers) -> str:
    return ", ".join(f"L{l}" for l in layers) or "none"


def findings(tables: dict[str, pd.DataFrame], claims: pd.DataFrame | None = None,
             names: list[str] | None = None) -> list[str]:
    """What the atlas finds, in sentences computed from ``atlas`` tables (and a ``claims_by_specimen`` table)."""
    out = importance_sentences(tables["importance"], tables.get("trained"))
    out += layer_type_sentences(tables["importance"])
    held = tables["predictability"]
    if not held.empty:
        means = held.groupby(["specimen", "predictor"], sort=False)["r2"].mean().unstack()
        for name, row in means.iterrows():
            out.append(f"{name}: held-out R^2 of the next layer's weights averages {row['ridge']:+.2f} for ridge "
                       f"against {row['mean layer']:+.2f} for the mean of the other layers.")
    structure = tables["structure"]
    if not structure.empty:
        for name, rows in structure.groupby("specimen", sort=False):
            inside = ((rows["corr"] >= rows["null_low"]) & (rows["corr"] <= rows["null_high"])).sum()
            out.append(f"{name}: the lag-1 delta correlation is {rows['corr'].min():+.3f} to {rows['corr'].max():+.3f} "
                       f"over the components, inside the layer-shuffled null's range in {inside} of {len(rows)}.")
    alpha = tables["alpha"]
    if not alpha.empty:
        paper_alpha = MANIPULATION_PAPER["alpha"]
        for name, rows in alpha[alpha["alpha"] == paper_alpha].groupby("specimen", sort=False):
            out.append(f"{name}: scaling one layer's writers by the paper's alpha ({paper_alpha:g}) changes "
                       "perplexity by "
                       + ", ".join(f"{r.change_pct:+.2f}% [{r.ci_low:+.2f}, {r.ci_high:+.2f}] at layer {r.layer} "
                                   f"(depth {r.depth:.2f})" for r in rows.itertuples()) + ".")
    acts = tables.get("activations", pd.DataFrame())
    births = tables.get("massive", pd.DataFrame())
    for name, rows in (acts.groupby("specimen", sort=False) if not acts.empty else []):
        massive = rows[rows["massive_entries"] > 0]
        peak, largest = rows.loc[rows["ratio"].idxmax()], rows.loc[rows["max_abs"].idxmax()]
        where = (f"first pass the threshold at layer {int(massive['layer'].iloc[0])} (depth "
                 f"{massive['depth'].iloc[0]:.2f})" if len(massive) else "pass the threshold at no layer")
        born = births[births["specimen"] == name] if not births.empty else births
        if len(born):
            where += (f" and are born at layer {int(born['birth_layer'].iloc[0])} (depth {born['depth'].iloc[0]:.2f}: "
                      "the largest jump of the massive feature, chapter 2)")
        # two statistics: chapter 2 names the largest absolute value, which need not be the largest ratio
        absolute = ("the largest absolute value, chapter 2's 'largest', leaves the same layer"
                    if int(largest.layer) == int(peak.layer) else
                    f"the largest absolute value, chapter 2's 'largest', {largest.max_abs:,.0f}, leaves layer "
                    f"{int(largest.layer)} (depth {largest.depth:.2f})")
        out.append(f"{name}: massive activations {where}; the largest ratio to the median, {peak.ratio:,.0f}, "
                   f"leaves layer {int(peak.layer)} (depth {peak.depth:.2f}); {absolute}.")
    if not tables["not_run"].empty:
        missing = tables["not_run"].groupby("specimen")["measure"].apply(lambda m: ", ".join(m))
        out.append("Not run yet: " + "; ".join(f"{m} on {s}" for s, m in missing.items()) + ".")
    if claims is not None and names:
        out += generality_sentences(claims, names)
    return out
