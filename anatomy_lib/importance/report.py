"""Chapter 2 in sentences and verdicts: the paper's importance claims beside ours, and the computed findings."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from ..core import rules as v
from ..core.display import Vocabulary
from ..core.params import PaperLayers
from ..core.stats import spearman
from . import massive
from .activations import appearance_layer
from .analysis import (
    Thresholds,
    classify,
    importance_range_orders,
    layer_type_summary,
    rank_agreement,
    undetermined_reasons,
)
from .compute import ImportanceParams

# this chapter's words for its tables' columns (and the intervals its estimates carry): ``show_table(t)``
show_table = Vocabulary(
    {"block_influence": "Block Influence", "class": "anatomy class"},
    {})

PAPER = {"critical_core": [8, 9, 10, 11], "l11_change_pct": 63419.0, "anti_layers": [14, 17],
         "io_processors": [1, 2, 23, 24, 25, 26, 27, 28], "connective_below_pct": 30.0, "range_orders": 7.0}


def _fmt_layers(layers) -> str:
    return ", ".join(f"L{l}" for l in sorted(layers)) or "none"


EXPERIMENT = "every layer ablated alone"  # the one experiment behind chapter 2's rows


def paper_claims(tables: dict[str, pd.DataFrame], params: ImportanceParams | None = None,
                 paper_one_based: bool = False, thresholds: Thresholds = Thresholds()):
    """The paper's importance claims beside ours (a ``neighbor_mean`` table with classes), each judged by a rule
    of ``core.rules``.

    ``paper_one_based`` reads the paper's layer numbers as 1-based (L1 = our layer 0); the paper does not say.
    The paper's layers are mapped to the same relative depth of the specimen (``PaperLayers``): on its own
    30 layers they stay as they are; on another model the claim about L11 is about the layer at L11's depth.
    """
    table = tables[(params or ImportanceParams()).mode]
    n_layers = len(table)

    def shift(layers) -> set[int]:
        named = [l - 1 for l in layers] if paper_one_based else list(layers)
        return set(PaperLayers(named).at_depth(n_layers))

    by_class = lambda *names: set(table.loc[table["class"].isin(names), "layer"])
    row_of = table.set_index("layer")
    claims = []

    unsure = undetermined_reasons(table, thresholds)
    core, ours_core = shift(PAPER["critical_core"]), by_class("critical core")
    unsure_core = sorted(l for l in core if l in unsure)
    claims.append(v.Claim("critical core", _fmt_layers(core), _fmt_layers(ours_core), v.layer_set(core, ours_core),
                          f"ours: middle layers whose whole interval is >= +{thresholds.critical_pct:g}%; Jaccard "
                          f"{v.jaccard(core, ours_core):.2f}"
                          + ("; undetermined (interval straddles a threshold): "
                             + ", ".join(f"L{l} ({unsure[l]})" for l in unsure_core) if unsure_core else ""),
                          "layer_set"))

    l11 = next(iter(shift([11])))
    r = row_of.loc[l11]
    top = int(table.loc[table["change_pct"].idxmax(), "layer"])
    at_depth = "" if l11 == (10 if paper_one_based else 11) else " (the paper's L11 depth)"
    claims.append(v.Claim(f"L{l11}{at_depth} alone", f"+{PAPER['l11_change_pct']:,.0f}%",
                          f"{r.change_pct:+,.0f}% [{r.ci_low:+,.0f}, {r.ci_high:+,.0f}]",
                          v.number(PAPER["l11_change_pct"], r.change_pct, r.ci_low, r.ci_high, factor=10 ** 0.5),
                          f"agreement: within half an order of magnitude; our most important layer: L{top} "
                          f"({row_of.loc[top].change_pct:+,.0f}%)", "number", kind=v.MAGNITUDE))

    anti, ours_anti = shift(PAPER["anti_layers"]), by_class("anti-layer")
    points = ", ".join(f"L{l}: {row_of.loc[l].change_pct:+.1f}% [{row_of.loc[l].ci_low:+.1f}, "
                       f"{row_of.loc[l].ci_high:+.1f}]" for l in sorted(anti))
    claims.append(v.Claim("anti-layers (interval below zero)", _fmt_layers(anti), _fmt_layers(ours_anti),
                          v.layer_set(anti, ours_anti), f"the paper's: {points}", "layer_set"))

    io, ours_io = shift(PAPER["io_processors"]), by_class("input processor", "output processor")
    claims.append(v.Claim("input/output processors", _fmt_layers(io), _fmt_layers(ours_io), v.layer_set(io, ours_io),
                          f"Jaccard {v.jaccard(io, ours_io):.2f}; ours: outer {thresholds.io_fraction:.0%} of the "
                          f"depth, interval not below +{thresholds.connective_pct:g}%", "layer_set"))

    rest = sorted(set(table["layer"]) - core - io - anti)
    above = [l for l in rest if row_of.loc[l].ci_high >= thresholds.connective_pct]
    claims.append(v.Claim(f"every other layer costs under +{PAPER['connective_below_pct']:g}%",
                          "all layers outside its named classes", f"{len(rest) - len(above)} of {len(rest)}",
                          v.share(len(rest) - len(above), len(rest)),
                          "interval's upper end below the threshold; above it: " + (_fmt_layers(above) or "none"),
                          "share"))

    orders, orders_sig = importance_range_orders(table), importance_range_orders(table, significant_only=True)
    claims.append(v.Claim("importance spans 10^7", f"10^{PAPER['range_orders']:g}", f"10^{orders:.1f}",
                          v.number(10 ** PAPER["range_orders"], 10 ** orders, factor=10 ** 0.5),
                          "largest / smallest change, agreement within half an order of magnitude; "
                          f"10^{orders_sig:.1f} over layers whose "
                          "interval excludes zero", "number", kind=v.MAGNITUDE))
    return v.in_experiment(EXPERIMENT, claims)


def _pct(row) -> str:
    return f"{row.change_pct:+,.0f}% [{row.ci_low:+,.0f}, {row.ci_high:+,.0f}]"


def findings(tables: dict[str, pd.DataFrame], params: ImportanceParams | None = None,
             specimen_name: str = "the specimen") -> list[str]:
    """What chapter 2 finds, in sentences computed from its tables ({mode: classified importance table})."""
    paper_mode = tables.get("neighbor_mean", tables[(params or ImportanceParams()).mode])
    by_layer = {mode: t.set_index("layer") for mode, t in tables.items()}
    n = len(paper_mode)
    top = paper_mode.loc[paper_mode["change_pct"].idxmax()]
    out = [f"On {specimen_name}, the most important layer under the paper's neighbour-mean ablation is "
           f"L{int(top.layer)}: "
           f"{_pct(top)} perplexity (95% interval)."]
    if "neighbor_mean" in by_layer:
        l11 = PaperLayers((11,)).at_depth(n)[0]
        where = "The paper's L11" if l11 == 11 else f"L{l11}, at the depth of the paper's L11,"
        out.append(f"{where} costs {_pct(by_layer['neighbor_mean'].loc[l11])} here, against its "
                   f"+{PAPER['l11_change_pct']:,.0f}%.")
    counts = paper_mode["class"].value_counts()
    plural = {"connective tissue": "connective tissue", "input processor": "input processors",
              "output processor": "output processors", "critical core": "critical core",
              "important (middle)": "important middle layers", "anti-layer": "anti-layers",
              "undetermined": "undetermined"}
    out.append(f"Of the {n} layers (neighbour-mean sweep, classes by interval as defined on this page): "
               + ", ".join(f"{counts.get(c, 0)} {name}" for c, name in plural.items()) + ".")
    unsure = undetermined_reasons(paper_mode)
    if unsure:
        out.append("Undetermined, because the interval straddles the threshold that decides the class: "
                   + ", ".join(f"L{l} ({where})" for l, where in unsure.items())
                   + "; more evaluation text would narrow these intervals, not a different rule.")
    if {"neighbor_mean", "skip"} <= set(by_layer):
        nm, sk = by_layer["neighbor_mean"], by_layer["skip"]
        positive = sk.index[(sk["change_pct"] > 0) & (nm["change_pct"] > 0)]
        ratio = (nm.loc[positive, "change_pct"] / sk.loc[positive, "change_pct"])
        worst = int(ratio.idxmax())
        out.append(f"Neighbour-averaging and skipping disagree most at L{worst}: averaging costs "
                   f"{_pct(nm.loc[worst])}, skipping {_pct(sk.loc[worst])}, {ratio.max():.1f} times less, so part of "
                   "the paper's map measures the averaged layer it installs rather than the layer it removes.")
    for part, mode in (("MLP", "mlp_only"), ("attention", "attn_only")):
        if mode in by_layer:
            t = tables[mode]
            big = t.loc[t["change_pct"].idxmax()]
            phrase = " (the paper's \"millions of percent\", found where it did not look)" \
                if big.change_pct >= 1e6 else ""
            out.append(f"Removing only L{int(big.layer)}'s {part} costs {_pct(big)}{phrase}.")
    anti = {mode: int((t["ci_high"] < 0).sum()) for mode, t in tables.items()}
    out.append("Layers whose removal lowers perplexity (interval below zero): "
               + ", ".join(f"{k} under {mode}" for mode, k in anti.items()) + f", against the paper's "
               f"{_fmt_layers(PAPER['anti_layers'])}"
               + ("." if n == 30 else f" (L{', L'.join(map(str, PaperLayers(PAPER['anti_layers']).at_depth(n)))} at "
                                      f"this model's depth)."))
    rho = rank_agreement(paper_mode)
    out.append(f"Block Influence ranks the layers with Spearman {rho:+.2f} against the neighbour-mean changes.")
    return out


def mode_summary(tables: dict[str, pd.DataFrame], reference: str) -> pd.DataFrame:
    """One row per ablation mode: its most important layer and that layer's change, the layers of each class, and
    the rank agreement of its changes with the ``reference`` mode's (the paper's)."""
    rows = []
    for mode, t in tables.items():
        top = t.loc[t["change_pct"].idxmax()]
        layers_of = lambda name: ", ".join(map(str, t.loc[t["class"] == name, "layer"]))
        rows.append({"mode": mode, "most important layer": int(top.layer), "its change": f"{top.change_pct:+,.0f}%",
                     "critical core": layers_of("critical core") or "none",
                     "anti-layers": layers_of("anti-layer") or "none",
                     "connective tissue": int((t["class"] == "connective tissue").sum()),
                     f"Spearman vs {reference}": spearman(tables[reference]["change_pct"], t["change_pct"])})
    return pd.DataFrame(rows)


def operator_findings(summary: pd.DataFrame) -> list[str]:
    """Per specimen and operator, in computed sentences (a ``panel_summary`` table): the largest change with its
    interval, the range, the anti-layers, and whether the paper's pattern appears; then one sentence on whether
    any operator on any specimen gives it."""
    out, matching = [], []
    for row in summary.itertuples():
        missing = [part for part, held in (("a critical middle core", row.has_core),
                                           ("connective tissue: other middle layers, all under +30%",
                                            row.rest_connective),
                                           ("a 10^7 range", row.range_matches)) if not held]
        out.append(f"{row.specimen}, {row.operator}: largest change L{row.top_layer} {row.top_change_pct:+,.0f}% "
                   f"[{row.top_ci_low:+,.0f}, {row.top_ci_high:+,.0f}]; range 10^{row.range_orders:.1f}; "
                   f"anti-layers {_fmt_layers(row.anti_layers)}; the paper's pattern "
                   + ("holds." if row.pattern else "does not hold (missing: " + ", ".join(missing) + ")."))
        if row.pattern:
            matching.append(f"{row.operator} on {row.specimen}")
    out.append("The paper's pattern appears under " + ", ".join(matching) + "." if matching else
               "No operator on any specimen gives the paper's pattern (a critical middle core, the other middle "
               "layers all under +30%, and a 10^7 range).")
    return out


def operator_table(summary: pd.DataFrame) -> pd.DataFrame:
    """A ``panel_summary`` table as the page shows it: one row per specimen and operator, in words."""
    yes = lambda held: "yes" if held else "no"
    return pd.DataFrame({
        "specimen": summary["specimen"], "operator": summary["operator"],
        "largest change": [f"L{r.top_layer} {r.top_change_pct:+,.0f}% [{r.top_ci_low:+,.0f}, {r.top_ci_high:+,.0f}]"
                           for r in summary.itertuples()],
        "range": [f"10^{o:.1f}" for o in summary["range_orders"]],
        "anti-layers": [_fmt_layers(a) for a in summary["anti_layers"]],
        "critical middle core": [_fmt_layers(c) for c in summary["critical_core"]],
        "middle layers not under +30%": [len(a) for a in summary["middle_above_connective"]],
        "the paper's pattern": [yes(p) for p in summary["pattern"]]})


def _rank_sentence(name: str, layer: int, importance_panel: dict, what: str) -> str:
    """Where ``layer`` ranks by importance under each operator of one specimen, with the layers above it."""
    parts = []
    for operator, table in importance_panel.get(name, {}).items():
        ordered = table.sort_values("change_pct", ascending=False)["layer"].astype(int).tolist()
        rank = ordered.index(layer) + 1
        above = ", ".join(f"L{l}" for l in ordered[:min(rank - 1, 5)])
        above += f" and {rank - 6} more" if rank > 6 else ""
        parts.append(f"{operator} {rank} of {len(ordered)}" + (f" (above it: {above})" if above else ""))
    return f"On {name}, {what} L{layer} ranks by importance: " + "; ".join(parts) + "." if parts else ""


def activation_findings(profiles: dict[str, dict[str, pd.DataFrame]], correlations: pd.DataFrame,
                        causal: dict[str, dict[str, pd.DataFrame]] | None = None,
                        importance_panel: dict | None = None) -> list[str]:
    """Per specimen, in computed sentences: where the massive activation is born (the largest jump of the
    massive feature, ``massive.onset_by_growth``, where ``causal`` holds it) beside the threshold detector's
    first layer, the largest activation and its features, whether the layers that grow the largest activation
    most are the important ones (``correlation_table``), and where the birth layer ranks by importance."""
    out, causal, importance_panel = [], causal or {}, importance_panel or {}
    for name, tables in profiles.items():
        layers, features = tables["layers"], tables["features"]
        first = appearance_layer(layers)
        peak = layers.loc[layers["max_abs"].idxmax()]
        largest = (f"the largest, {peak.max_abs:,.0f} ({peak.ratio:,.0f} times the median), leaves L{int(peak.layer)} "
                   f"in feature {int(peak.top_feature)} at position {int(peak.top_position)}")
        if first is None:
            out.append(f"On {name}, no layer's output holds a massive activation; {largest}.")
        else:
            there = features[features["layer"] == first]
            listed = "; ".join(f"feature {int(f.feature)} up to {f.max_abs:,.0f}, {f.first_position_share:.0%} of "
                               "its massive entries at the first position" for f in there.itertuples())
            out.append(f"On {name}, the first layer whose output holds a massive entry (the threshold detector) is "
                       f"L{first} ({listed}); {largest}.")
        birth = None
        if name in causal:
            s = causal[name]["summary"].iloc[0]
            birth = int(s.birth_layer)
            onset = causal[name]["onset"].set_index("layer")
            same = ", the same in every block: its site holds the same token in each" \
                if s.birth_ci_high - s.birth_ci_low < 1e-3 else ""
            said = (f"On {name}, the massive feature {int(s.feature)} is born at L{birth}: it grows there by "
                    f"10^{s.birth_growth:.2f} [{s.birth_ci_low:.2f}, {s.birth_ci_high:.2f}] (mean over blocks, 95% "
                    f"interval{same}; median {onset.loc[birth, 'entering']:,.0f} entering, "
                    f"{onset.loc[birth, 'leaving']:,.0f} leaving), the largest jump of any layer in "
                    f"{int(s.blocks_electing)} of {int(s.blocks)} "
                    f"blocks and {s.birth_share:.0%} of bootstrap resamples; the next largest is L{int(s.runner_up)}'s "
                    f"10^{s.runner_up_growth:.2f}.")
            if first is not None and first != birth:
                row = layers.set_index("layer").loc[first]
                said += (f" The threshold detector's L{first} is not the birth: {int(row.massive_entries)} entr"
                         f"{'y' if int(row.massive_entries) == 1 else 'ies'} there, up to {row.max_abs:,.0f}, "
                         f"pass{'es' if int(row.massive_entries) == 1 else ''} its threshold of "
                         f"{row.threshold:,.1f}, and the feature grows by 10^{onset.loc[first, 'growth']:.2f} there.")
            out.append(said)
        mine = correlations[correlations["specimen"] == name]
        if len(mine):
            out.append(f"On {name}, the growth of the largest activation across a layer against that layer's "
                       "importance (Spearman over layers, 95% interval): "
                       + "; ".join(f"{r.operator} {r.rho:+.2f} [{r.ci_low:+.2f}, {r.ci_high:+.2f}]"
                                   if r.rho == r.rho else f"{r.operator} undefined (every change equal)"
                                   for r in mine.itertuples()) + ".")
        if birth is not None:
            out.append(_rank_sentence(name, birth, importance_panel, "the birth layer"))
        elif first is not None and len(mine):
            out.append(_rank_sentence(name, first, importance_panel, "the threshold detector's first massive layer"))
    return [s for s in out if s]


def _share(row) -> str:
    added = " (negative: it adds damage)" if row.share_high < 0 else ""
    return f"{row.share:.0%} [{row.share_low:.0%}, {row.share_high:.0%}]{added}"


def massive_findings(causal: dict[str, dict[str, pd.DataFrame]]) -> list[str]:
    """The causal test per specimen, in computed sentences: each operator's damage at the birth layer, the share
    the restore undoes and the share the removal of the massive write reproduces (with intervals), the same at
    the control layer, and the verdict ``massive.causal_verdict`` gives."""
    out = []
    for name, tables in causal.items():
        s, rows = tables["summary"].iloc[0], tables["causal"]
        for role in ("birth", "control"):
            mine = rows[rows["role"] == role]
            if not len(mine):
                out.append(f"On {name}, no layer qualifies as a control (each changes the massive entries by more "
                           "than the control limit).")
                continue
            layer = int(mine["layer"].iloc[0])
            parts = []
            for operator, group in mine.groupby("operator", sort=False):
                g = group.set_index("intervention")
                ablate, restore, remove = (g.loc[k] for k in ("ablate", "ablate + restore", "remove write"))
                beyond = " (more than the ablation's whole damage)" if remove.share_low > 1 else ""
                parts.append(f"{operator} {ablate.change_pct:+,.0f}% [{ablate.ci_low:+,.0f}, {ablate.ci_high:+,.0f}],"
                             f" of which the restore undoes {_share(restore)} and the removal alone reproduces "
                             f"{_share(remove)}{beyond} ({massive.causal_verdict(rows, role, operator)})")
            what = (f"the birth layer L{layer}" if role == "birth" else
                    f"the control L{layer} (importance nearest the birth layer's among layers that move the massive "
                    "entries less than the control limit)")
            out.append(f"On {name}, ablating {what}: " + "; ".join(parts) + ".")
        plural = "s" if " " in str(s.sites_features) else ""
        out.append(f"On {name}, the restore sets {int(s.sites_entries)} entries (feature{plural} {s.sites_features}, "
                   f"{s.sites_first_position_share:.0%} of them at the first position) to the "
                   "intact model's values; shares are of the damage in log perplexity, the rule is that both "
                   f"whole intervals reach {massive.EXPLAINS:.0%}.")
    return out


def layer_type_findings(panel: dict[str, dict[str, pd.DataFrame]], layer_types: dict[str, tuple]) -> list[str]:
    """For each specimen whose layers have attention types (``layer_types``: {specimen: types}), importance by type
    under each operator of its panel (``analysis.layer_type_summary``), in sentences."""
    out = []
    for name, tables in panel.items():
        types = layer_types.get(name, ())
        parts = []
        for operator, table in tables.items():
            summary = layer_type_summary(table, types)
            if summary.empty or table["change_pct"].nunique() == 1:  # every change equal: no ranking
                continue
            rarest = summary.loc[summary["layers"].map(len).idxmin()]
            parts.append(f"{operator}: ranks {', '.join(f'L{l} {r}' for l, r in zip(rarest.layers, rarest.ranks))} "
                         f"of {len(table)} (permutation p = {rarest.p_value:.2f} that {rarest.type} layers rank this "
                         "high by chance)")
        if parts:
            rarest_layers = ", ".join(f"L{l}" for l in rarest.layers)
            out.append(f"On {name}, the {rarest.type} attention layers ({rarest_layers}; the first is L{rarest.first}) "
                       "by importance: " + "; ".join(parts) + ".")
    return out


def index_sensitivity(tables: dict[str, pd.DataFrame], params: ImportanceParams | None = None,
                      thresholds: Thresholds = Thresholds()) -> pd.DataFrame:
    """Every claim of ``paper_claims`` under both readings of the paper's layer numbers (as our indices, and
    1-based), side by side, with whether the verdict changes: the paper does not say which it uses."""
    rows = []
    for zero, one in zip(paper_claims(tables, params, False, thresholds),
                         paper_claims(tables, params, True, thresholds)):
        rows.append({"claim": zero.claim, "paper (as our indices)": zero.paper, "verdict (as our indices)":
                     zero.verdict, "paper (1-based)": one.paper, "verdict (1-based)": one.verdict,
                     "verdict changes": "yes" if zero.verdict != one.verdict else "no"})
    return pd.DataFrame(rows)


# The grid each unstated threshold is tried over: the book's value and values either side that a reader might pick
# (the critical core at +70% is the smallest cut that admits L8; +200% admits L10 and L11 on SmolLM2)
THRESHOLD_GRID = {"critical_pct": (70.0, 200.0, 500.0, 1000.0, 3000.0),
                  "connective_pct": (10.0, 20.0, 30.0, 50.0, 100.0),
                  "io_fraction": (0.15, 0.2, 0.25, 0.3)}
THRESHOLD_WORDS = {"critical_pct": "critical core at", "connective_pct": "connective below",
                   "io_fraction": "outer fraction"}


def threshold_label(parameter: str, value: float) -> str:
    return f"{value:.0%}" if parameter == "io_fraction" else f"+{value:g}%"


def threshold_sensitivity(tables: dict[str, pd.DataFrame], params: ImportanceParams | None = None,
                          paper_one_based: bool = False, thresholds: Thresholds = Thresholds(),
                          grid: dict[str, tuple] | None = None) -> pd.DataFrame:
    """Every claim of ``paper_claims`` as each threshold of the anatomy classes (``Thresholds``; the paper states
    none of them) moves over ``grid`` with the others at ``thresholds``: the layers are reclassified from the same
    measured intervals, nothing is recomputed. Tidy (``core.rules.sensitivity``)."""
    params = params or ImportanceParams()
    parts = []
    for parameter, values in (grid or THRESHOLD_GRID).items():
        def claims_at(value, parameter=parameter):
            moved = replace(thresholds, **{parameter: value})
            table = tables[params.mode]
            reclassified = {**tables, params.mode: table.assign(**{"class": classify(table, len(table), moved)})}
            return paper_claims(reclassified, params, paper_one_based, moved)
        parts.append(v.sensitivity(claims_at, values, parameter, getattr(thresholds, parameter)))
    return pd.concat(parts, ignore_index=True)


def class_stability(first: pd.DataFrame, second: pd.DataFrame, names=("first", "second")) -> pd.DataFrame:
    """Per layer, its class and change (with interval) in two importance tables of the same specimen (e.g. two
    selections of evaluation text), and whether the class survives."""
    a, b = (t.set_index("layer") for t in (first, second))
    rows = []
    for layer in a.index:
        row = {"layer": int(layer)}
        for name, t in zip(names, (a, b)):
            row[f"class ({name})"] = t.loc[layer, "class"]
            row[f"change ({name})"] = _pct(t.loc[layer])
        row["same class"] = "yes" if a.loc[layer, "class"] == b.loc[layer, "class"] else "no"
        rows.append(row)
    return pd.DataFrame(rows)


def stability_sentence(stability: pd.DataFrame, names=("first", "second")) -> str:
    """How many layers keep their class between the two tables, and which move (with both classes)."""
    moved = stability[stability["same class"] == "no"]
    text = f"{len(stability) - len(moved)} of {len(stability)} layers keep their class from the {names[0]} to the " \
           f"{names[1]} selection of text"
    if moved.empty:
        return text + "."
    moves = (f"L{r.layer} moves from {r[1]} to {r[3]}" for r in moved.itertuples(index=False))
    return text + "; " + ", ".join(moves) + "."
