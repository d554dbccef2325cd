"""What an importance table says: anatomy classes by interval, the rank agreement with Block Influence, and the
range of importance in orders of magnitude."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.stats import spearman


@dataclass(frozen=True)
class Thresholds:
    """Anatomy classes; defaults follow the paper (connective tissue under +30%; its input and output
    processors, L1-2 and L23-28, lie in the outer quarters of the 30 layers, its critical core L8-11 inside)."""

    connective_pct: float = 30.0  # upper interval bound below this: connective tissue
    critical_pct: float = 1000.0  # point change at or above this, in the middle: critical core
    io_fraction: float = 0.25  # layers that matter in the first / last fraction: input / output processors


UNDETERMINED = "undetermined"
CONNECTIVE = "connective tissue"


def classify(table: pd.DataFrame, n_layers: int, thresholds: Thresholds = Thresholds()) -> pd.Series:
    """One anatomy class per row of an importance table (columns layer, change_pct, ci_low, ci_high), every
    class decided by the interval: a layer whose interval straddles a threshold that decides its class is
    ``undetermined``, never classed by its point estimate.

    Position first, as the paper's taxonomy is: a layer that matters (whole interval at or above the connective
    threshold) in the outer ``io_fraction`` of the depth is an input or output processor however large its
    change; in the middle, the critical core is the layers whose whole interval reaches ``critical_pct``, an
    important middle layer's whole interval lies below it."""
    edge = int(round(n_layers * thresholds.io_fraction))

    def one(row) -> str:
        if row.ci_high < 0:
            return "anti-layer"
        if row.ci_high < thresholds.connective_pct:
            return CONNECTIVE
        if row.ci_low < thresholds.connective_pct:
            return UNDETERMINED
        if row.layer < edge:
            return "input processor"
        if row.layer >= n_layers - edge:
            return "output processor"
        if row.ci_low >= thresholds.critical_pct:
            return "critical core"
        if row.ci_high < thresholds.critical_pct:
            return "important (middle)"
        return UNDETERMINED

    return table.apply(one, axis=1)


def undetermined_reasons(table: pd.DataFrame, thresholds: Thresholds = Thresholds()) -> dict[int, str]:
    """For each undetermined layer of a classified table, the threshold its interval straddles."""
    out = {}
    for row in table[table["class"] == UNDETERMINED].itertuples():
        straddled = thresholds.connective_pct if row.ci_low < thresholds.connective_pct else thresholds.critical_pct
        out[int(row.layer)] = f"+{straddled:g}%"
    return out


def connective_layers(table: pd.DataFrame) -> list[int]:
    """The connective-tissue layers of a classified importance table."""
    return sorted(int(l) for l in table.loc[table["class"] == CONNECTIVE, "layer"])


def rank_agreement(table: pd.DataFrame) -> float:
    """Spearman correlation between Block Influence and the measured perplexity change."""
    return spearman(table["block_influence"], table["change_pct"])


def importance_range_orders(table: pd.DataFrame, significant_only: bool = False) -> float:
    """log10 of the largest over the smallest abs(change): the paper's "importance spans 10^7"."""
    changes = table["change_pct"].abs()
    if significant_only:
        changes = changes[(table["ci_low"] > 0) | (table["ci_high"] < 0)]
    changes = changes[changes > 0]
    return float(np.log10(changes.max() / changes.min())) if len(changes) > 1 else float("nan")


PAPER_RANGE_ORDERS = 7.0  # the paper's "importance spans 10^7", matched within half an order of magnitude


def paper_pattern(table: pd.DataFrame, n_layers: int, thresholds: Thresholds = Thresholds()) -> dict:
    """Whether one importance table (one operator) shows the paper's anatomy, part by part: a critical middle
    core (whole interval at or above ``critical_pct``), other middle layers, every one of them under the
    connective threshold (whole interval below it, or an anti-layer: the paper's connective tissue, so a map whose
    middle is all core does not pass), and a range within half an order of magnitude of 10^7."""
    classes = table["class"] if "class" in table else classify(table, n_layers, thresholds)
    edge = int(round(n_layers * thresholds.io_fraction))
    middle = table["layer"].between(edge, n_layers - edge - 1)
    core = sorted(int(l) for l in table.loc[middle & (classes == "critical core"), "layer"])
    rest = table[middle & (classes != "critical core")]
    above = sorted(int(l) for l in rest.loc[rest["ci_high"] >= thresholds.connective_pct, "layer"])
    orders = importance_range_orders(table)
    parts = {"critical_core": core, "middle_above_connective": above, "range_orders": orders,
             "has_core": bool(core), "rest_connective": len(rest) > 0 and not above,
             "range_matches": bool(abs(orders - PAPER_RANGE_ORDERS) <= 0.5)}
    return {**parts, "pattern": parts["has_core"] and parts["rest_connective"] and parts["range_matches"]}


def operator_summary(tables: dict[str, pd.DataFrame], n_layers: int,
                     thresholds: Thresholds = Thresholds()) -> pd.DataFrame:
    """One row per ablation operator ({operator: importance table}): its most important layer with the change
    and interval, the range in orders of magnitude, the anti-layers by interval, and the paper's pattern part by
    part (``paper_pattern``)."""
    rows = []
    for operator, table in tables.items():
        top = table.loc[table["change_pct"].idxmax()]
        pattern = paper_pattern(table, n_layers, thresholds)
        rows.append({"operator": operator, "top_layer": int(top.layer), "top_change_pct": float(top.change_pct),
                     "top_ci_low": float(top.ci_low), "top_ci_high": float(top.ci_high),
                     "anti_layers": sorted(int(l) for l in table.loc[table["ci_high"] < 0, "layer"]), **pattern})
    return pd.DataFrame(rows)


def panel_summary(panel: dict[str, dict[str, pd.DataFrame]], thresholds: Thresholds = Thresholds()) -> pd.DataFrame:
    """``operator_summary`` for every specimen of an operator panel ({specimen: {operator: table}}), stacked,
    with the specimen as the first column."""
    parts = [operator_summary(tables, len(next(iter(tables.values()))), thresholds).assign(specimen=name)
             for name, tables in panel.items()]
    table = pd.concat(parts, ignore_index=True)
    return table[["specimen"] + [c for c in table.columns if c != "specimen"]]


LAYER_TYPE_NAMES = {"full_attention": "global", "sliding_attention": "sliding-window"}


def layer_type_summary(table: pd.DataFrame, layer_types) -> pd.DataFrame:
    """Importance by attention type, for a family whose layers have types (Gemma 3: global layers among
    sliding-window ones); empty for a family with one type. One row per type: its layers, the median change,
    each layer's rank (1 = most important), and the mean rank's exact permutation p-value (the share of every
    equally sized set of layers whose mean rank is at most as large: small when the type's layers are the
    important ones); ``first`` names the type's first layer and its rank."""
    types = [LAYER_TYPE_NAMES.get(t, t) for t in layer_types]
    if len(set(types)) < 2 or len(types) != len(table):
        return pd.DataFrame()
    ordered = table.sort_values("layer")
    ranks = ordered["change_pct"].rank(ascending=False, method="min").astype(int).to_numpy()
    rows = []
    for kind in dict.fromkeys(types):
        chosen = [i for i, t in enumerate(types) if t == kind]
        observed = ranks[chosen].mean()
        sets = np.array(list(itertools.combinations(range(len(ranks)), len(chosen)))) \
            if math.comb(len(ranks), len(chosen)) <= 200_000 else \
            np.stack([np.random.default_rng(0).permutation(len(ranks))[:len(chosen)] for _ in range(20_000)])
        p_value = float(np.mean(ranks[sets].mean(axis=1) <= observed + 1e-12))
        rows.append({"type": kind, "layers": [int(ordered["layer"].iloc[i]) for i in chosen],
                     "median_change_pct": float(ordered["change_pct"].iloc[chosen].median()),
                     "ranks": [int(ranks[i]) for i in chosen], "mean_rank": float(observed), "p_value": p_value,
                     "first": int(ordered["layer"].iloc[chosen[0]]), "first_rank": int(ranks[chosen[0]])})
    return pd.DataFrame(rows)
