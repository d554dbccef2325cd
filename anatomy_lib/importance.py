"""Chapter 2, the importance map: ablate one layer at a time and measure the perplexity change.

Ablation modes:

- ``neighbor_mean`` (the paper's): every tensor of layer l becomes the mean of layers l-1 and l+1; the first
  and last layer, having one neighbour, take that neighbour's tensors (the paper does not say; this is our choice).
- ``skip``: the layer becomes the identity on the residual stream (its o and down projections zeroed).
- ``attn_only`` / ``mlp_only``: only the attention / only the MLP block is removed.

Every change carries a paired bootstrap 95% interval over text blocks. In the same cached pass we compute
ShortGPT's Block Influence (1 - cosine of a layer's input and output residual).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from tqdm.auto import tqdm

from .checks import one_of
from .results import DiagnosticParams
from .surgery import WeightSurgery

MODES = ("neighbor_mean", "skip", "attn_only", "mlp_only")
TENSOR_SETS = ("all", "matrices")
SKIP_PART = {"skip": "block", "attn_only": "attn", "mlp_only": "mlp"}
PAPER = {"critical_core": [8, 9, 10, 11], "l11_change_pct": 63419.0, "anti_layers": [14, 17],
         "io_processors": [1, 2, 23, 24, 25, 26, 27, 28], "connective_below_pct": 30.0, "range_orders": 7.0}


@dataclass(frozen=True)
class ImportanceParams(DiagnosticParams):
    """One importance sweep: how each layer is removed, and the seed of its bootstrap intervals."""

    DIAGNOSTIC = "importance"
    VERSION = 1

    mode: str = field(default="neighbor_mean", metadata={"choices": MODES, "help": "how a layer is removed"})
    tensors: str = field(default="all", metadata={
        "choices": TENSOR_SETS, "help": "what neighbor_mean replaces: all tensors (norms too) or matrices only"})
    seed: int = field(default=0, metadata={"help": "seed of the bootstrap intervals"})

    def __post_init__(self):
        one_of(self.mode, MODES, "ablation mode")
        one_of(self.tensors, TENSOR_SETS, "tensor set")


def neighbors(n_layers: int, layer: int) -> list[int]:
    """Layers whose mean replaces ``layer`` under ``neighbor_mean``: l-1 and l+1 where they exist."""
    return [n for n in (layer - 1, layer + 1) if 0 <= n < n_layers]


def ablate(editor: WeightSurgery, layer: int, mode: str, tensors: str = "all") -> None:
    """Apply one ablation to ``layer`` inside an open ``surgery`` (neighbour means read the intact weights)."""
    one_of(mode, MODES, "ablation mode")
    one_of(tensors, TENSOR_SETS, "tensor set")
    adapter = editor.adapter
    adapter.check_layer(layer)
    if mode == "neighbor_mean":
        names = adapter.tensor_names if tensors == "all" else adapter.matrix_names
        sources = neighbors(adapter.n_layers, layer)
        for name in names:
            mean = sum(editor.original(n, name).double() for n in sources) / len(sources)
            editor.replace(layer, name, mean)
    else:
        editor.skip(layer, SKIP_PART[mode])


def ablation(layers, mode: str = "neighbor_mean", tensors: str = "all"):
    """The edit that ablates every layer of ``layers`` together (for ``Lab.measure``)."""
    one_of(mode, MODES, "ablation mode")
    one_of(tensors, TENSOR_SETS, "tensor set")
    layers = sorted(set(layers))
    if not layers:
        raise ValueError("choose at least one layer to ablate")

    def edit(editor: WeightSurgery) -> None:
        for layer in layers:
            ablate(editor, layer, mode, tensors)

    return edit


@dataclass(frozen=True)
class Thresholds:
    """Anatomy classes; defaults follow the paper (connective tissue under +30%)."""

    connective_pct: float = 30.0  # upper interval bound below this: connective tissue
    critical_pct: float = 1000.0  # point change at or above this: critical core
    io_fraction: float = 1 / 3  # important layers in the first / last fraction are input / output processors


def classify(table: pd.DataFrame, n_layers: int, thresholds: Thresholds = Thresholds()) -> pd.Series:
    """One anatomy class per row of an importance table (columns layer, change_pct, ci_low, ci_high)."""
    edge = int(round(n_layers * thresholds.io_fraction))

    def one(row) -> str:
        if row.ci_high < 0:
            return "anti-layer"
        if row.ci_high < thresholds.connective_pct:
            return "connective tissue"
        if row.change_pct >= thresholds.critical_pct:
            return "critical core"
        if row.layer < edge:
            return "input processor"
        if row.layer >= n_layers - edge:
            return "output processor"
        return "important (middle)"

    return table.apply(one, axis=1)


def importance_sweep(lab, params: ImportanceParams = ImportanceParams(), layers=None,
                     progress: bool = True) -> pd.DataFrame:
    """Ablate each layer in turn; one row per layer with the change, its interval and Block Influence."""
    adapter = lab.adapter
    layers = list(range(adapter.n_layers)) if layers is None else [adapter.check_layer(l) for l in layers]
    influence = lab.engine.block_influence()
    rows = []
    for layer in tqdm(layers, desc=f"importance ({params.mode})", disable=not progress):
        measured = lab.measure(ablation([layer], params.mode, params.tensors), seed=params.seed)
        rows.append({"layer": layer, "mode": params.mode, **measured.row(), "block_influence": influence[layer]})
    return pd.DataFrame(rows)


def importance(lab, params: ImportanceParams = ImportanceParams(), thresholds: Thresholds = Thresholds(),
               recompute: bool = False, progress: bool = True) -> pd.DataFrame:
    """The importance table for a lab's specimen (with anatomy classes), through the results store."""
    tables = lab.stored(params, lambda: {"layers": importance_sweep(lab, params, None, progress)}, recompute)
    table = tables["layers"]
    table["class"] = classify(table, lab.adapter.n_layers, thresholds)
    return table


def connective_layers(table: pd.DataFrame) -> list[int]:
    """The connective-tissue layers of a classified importance table."""
    return sorted(int(l) for l in table.loc[table["class"] == "connective tissue", "layer"])


def joint_ablation(lab, layers, mode: str = "neighbor_mean", tensors: str = "all", seed: int = 0,
                   prompt: str | None = None, max_new_tokens: int | None = None) -> dict:
    """Ablate several layers together (neighbour means use the intact weights): the perplexity change with
    its paired interval, and, with ``prompt``, the ablated model's greedy continuation."""
    layers = sorted({lab.adapter.check_layer(l) for l in layers})
    measured = lab.measure(ablation(layers, mode, tensors), prompt, max_new_tokens, seed)
    return {"layers": layers, "mode": mode, **measured.row(), "continuation": measured.continuation}


def rank_agreement(table: pd.DataFrame) -> float:
    """Spearman correlation between Block Influence and the measured perplexity change."""
    return float(spearmanr(table["block_influence"], table["change_pct"]).statistic)


def importance_range_orders(table: pd.DataFrame, significant_only: bool = False) -> float:
    """log10 of the largest over the smallest abs(change): the paper's "importance spans 10^7"."""
    changes = table["change_pct"].abs()
    if significant_only:
        changes = changes[(table["ci_low"] > 0) | (table["ci_high"] < 0)]
    changes = changes[changes > 0]
    return float(np.log10(changes.max() / changes.min())) if len(changes) > 1 else float("nan")


def _fmt_layers(layers) -> str:
    return ", ".join(f"L{l}" for l in sorted(layers)) or "none"


def _overlap_verdict(ours: set, theirs: set) -> str:
    from .verdicts import verdict

    if ours == theirs:
        return verdict(True)
    return verdict(False, partly=bool(ours & theirs))


def paper_claims(table: pd.DataFrame, paper_one_based: bool = False, thresholds: Thresholds = Thresholds()):
    """The paper's importance claims beside ours (a ``neighbor_mean`` table with classes), verdicts computed.

    ``paper_one_based`` reads the paper's layer numbers as 1-based (L1 = our layer 0); the paper does not say.
    """
    from .verdicts import Claim, verdict

    shift = (lambda ls: {l - 1 for l in ls}) if paper_one_based else set
    by_class = lambda *names: set(table.loc[table["class"].isin(names), "layer"])
    change = dict(zip(table["layer"], table["change_pct"]))
    claims = []

    core, ours_core = shift(PAPER["critical_core"]), by_class("critical core")
    claims.append(Claim("critical core", _fmt_layers(core), _fmt_layers(ours_core),
                        _overlap_verdict(ours_core, core), f"our threshold: >= +{thresholds.critical_pct:g}%"))

    l11 = next(iter(shift([11])))
    ratio = change[l11] / PAPER["l11_change_pct"] if change[l11] > 0 else 0.0
    same_order = ratio > 0 and abs(np.log10(ratio)) < 0.5
    top = int(table.loc[table["change_pct"].idxmax(), "layer"])
    claims.append(Claim(f"L{l11} alone", f"+{PAPER['l11_change_pct']:,.0f}%", f"{change[l11]:+,.1f}%",
                        verdict(same_order, partly=change[l11] >= thresholds.critical_pct),
                        f"our most important layer: L{top} ({change[top]:+,.0f}%)"))

    anti, ours_anti = shift(PAPER["anti_layers"]), by_class("anti-layer")
    points = ", ".join(f"L{l}: {change[l]:+.2f}%" for l in sorted(anti))
    claims.append(Claim("anti-layers (interval below zero)", _fmt_layers(anti), _fmt_layers(ours_anti),
                        _overlap_verdict(ours_anti, anti), f"point estimates {points}"))

    io, ours_io = shift(PAPER["io_processors"]), by_class("input processor", "output processor")
    jaccard = len(io & ours_io) / len(io | ours_io) if io | ours_io else 0.0
    claims.append(Claim("input/output processors", _fmt_layers(io), _fmt_layers(ours_io),
                        verdict(jaccard >= 0.75, partly=jaccard >= 0.25), f"Jaccard overlap {jaccard:.2f}"))

    rest = set(table["layer"]) - core - io - anti
    below = table[table["layer"].isin(rest) & (table["ci_high"] < thresholds.connective_pct)]
    share = len(below) / len(rest) if rest else 0.0
    claims.append(Claim(f"remaining layers under +{PAPER['connective_below_pct']:g}%", _fmt_layers(rest),
                        f"{len(below)} of {len(rest)}", verdict(share == 1.0, partly=share >= 0.5),
                        "interval's upper end below the threshold"))

    orders, orders_sig = importance_range_orders(table), importance_range_orders(table, significant_only=True)
    claims.append(Claim("importance spans 10^7", f"10^{PAPER['range_orders']:g}", f"10^{orders:.1f}",
                        verdict(orders >= PAPER["range_orders"] - 0.5, partly=orders >= 4),
                        f"10^{orders_sig:.1f} over layers whose interval excludes zero"))
    return claims
