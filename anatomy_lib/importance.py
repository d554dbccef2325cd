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

from .checks import one_of, positive_int
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
    """Anatomy classes; defaults follow the paper (connective tissue under +30%; its input and output
    processors, L1-2 and L23-28, lie in the outer quarters of the 30 layers, its critical core L8-11 inside)."""

    connective_pct: float = 30.0  # upper interval bound below this: connective tissue
    critical_pct: float = 1000.0  # point change at or above this, in the middle: critical core
    io_fraction: float = 0.25  # layers that matter in the first / last fraction: input / output processors


def classify(table: pd.DataFrame, n_layers: int, thresholds: Thresholds = Thresholds()) -> pd.Series:
    """One anatomy class per row of an importance table (columns layer, change_pct, ci_low, ci_high).

    Position first, as the paper's taxonomy is: a layer that matters (interval not below the connective
    threshold) in the outer ``io_fraction`` of the depth is an input or output processor however large its
    change; the critical core is the middle's layers at or above ``critical_pct``."""
    edge = int(round(n_layers * thresholds.io_fraction))

    def one(row) -> str:
        if row.ci_high < 0:
            return "anti-layer"
        if row.ci_high < thresholds.connective_pct:
            return "connective tissue"
        if row.layer < edge:
            return "input processor"
        if row.layer >= n_layers - edge:
            return "output processor"
        if row.change_pct >= thresholds.critical_pct:
            return "critical core"
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


@dataclass(frozen=True)
class ContinuationParams(DiagnosticParams):
    """Greedy continuations of one prompt with each layer removed in turn: what the published page's explorer
    shows beside each change (computed once, stored, never in a reader's browser)."""

    DIAGNOSTIC = "continuations"
    VERSION = 1

    mode: str = field(default="neighbor_mean", metadata={"choices": MODES, "help": "how a layer is removed"})
    tensors: str = field(default="all", metadata={"choices": TENSOR_SETS, "help": "what neighbor_mean replaces"})
    prompt: str = field(default="What is the capital of France?", metadata={"help": "the prompt continued"})
    max_new_tokens: int = field(default=24, metadata={"help": "tokens generated per continuation"})

    def __post_init__(self):
        one_of(self.mode, MODES, "ablation mode")
        one_of(self.tensors, TENSOR_SETS, "tensor set")
        positive_int(self.max_new_tokens, "max_new_tokens")


def ablation_continuations(lab, params: ContinuationParams = ContinuationParams(), recompute: bool = False,
                           progress: bool = True) -> pd.DataFrame:
    """One row per layer: the prompt's greedy continuation with that layer removed, through the results store."""
    from .generation import generate
    from .surgery import surgery

    def compute():
        rows = []
        for layer in tqdm(range(lab.adapter.n_layers), desc=f"continuations ({params.mode})",
                          disable=not progress):
            with surgery(lab.adapter) as editor:
                ablate(editor, layer, params.mode, params.tensors)
                text = generate(lab.specimen, params.prompt, params.max_new_tokens)
            rows.append({"layer": layer, "mode": params.mode, "prompt": params.prompt, "continuation": text})
        return {"layers": pd.DataFrame(rows)}

    return lab.stored(params, compute, recompute)["layers"]


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


def paper_claims(table: pd.DataFrame, paper_one_based: bool = False, thresholds: Thresholds = Thresholds()):
    """The paper's importance claims beside ours (a ``neighbor_mean`` table with classes), each judged by a rule
    of ``verdicts``.

    ``paper_one_based`` reads the paper's layer numbers as 1-based (L1 = our layer 0); the paper does not say.
    """
    from . import verdicts as v

    shift = (lambda ls: {l - 1 for l in ls}) if paper_one_based else set
    by_class = lambda *names: set(table.loc[table["class"].isin(names), "layer"])
    row_of = table.set_index("layer")
    claims = []

    core, ours_core = shift(PAPER["critical_core"]), by_class("critical core")
    claims.append(v.Claim("critical core", _fmt_layers(core), _fmt_layers(ours_core), v.layer_set(core, ours_core),
                          f"ours: middle layers >= +{thresholds.critical_pct:g}%; Jaccard "
                          f"{v.jaccard(core, ours_core):.2f}", "layer_set"))

    l11 = next(iter(shift([11])))
    r = row_of.loc[l11]
    top = int(table.loc[table["change_pct"].idxmax(), "layer"])
    claims.append(v.Claim(f"L{l11} alone", f"+{PAPER['l11_change_pct']:,.0f}%",
                          f"{r.change_pct:+,.0f}% [{r.ci_low:+,.0f}, {r.ci_high:+,.0f}]",
                          v.number(PAPER["l11_change_pct"], r.change_pct, r.ci_low, r.ci_high, factor=10 ** 0.5),
                          f"agreement: within half an order of magnitude; our most important layer: L{top} "
                          f"({row_of.loc[top].change_pct:+,.0f}%)", "number"))

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
                          "interval excludes zero", "number"))
    return claims


def _pct(row) -> str:
    return f"{row.change_pct:+,.0f}% [{row.ci_low:+,.0f}, {row.ci_high:+,.0f}]"


def findings(tables: dict[str, pd.DataFrame], specimen: str) -> list[str]:
    """What chapter 2 finds, in sentences computed from its tables ({mode: classified importance table})."""
    paper_mode = tables.get("neighbor_mean", next(iter(tables.values())))
    by_layer = {mode: t.set_index("layer") for mode, t in tables.items()}
    n = len(paper_mode)
    top = paper_mode.loc[paper_mode["change_pct"].idxmax()]
    out = [f"On {specimen}, the most important layer under the paper's neighbour-mean ablation is L{int(top.layer)}: "
           f"{_pct(top)} perplexity (95% interval)."]
    if 11 in by_layer.get("neighbor_mean", pd.DataFrame()).index:
        out.append(f"The paper's L11 costs {_pct(by_layer['neighbor_mean'].loc[11])} here, against its "
                   f"+{PAPER['l11_change_pct']:,.0f}%.")
    counts = paper_mode["class"].value_counts()
    plural = {"connective tissue": "connective tissue", "input processor": "input processors",
              "output processor": "output processors", "critical core": "critical core",
              "important (middle)": "important middle layers", "anti-layer": "anti-layers"}
    out.append(f"Of the {n} layers (neighbour-mean sweep, classes as defined on this page): "
               + ", ".join(f"{counts.get(c, 0)} {name}" for c, name in plural.items()) + ".")
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
               f"{_fmt_layers(PAPER['anti_layers'])}.")
    rho = rank_agreement(paper_mode)
    out.append(f"Block Influence ranks the layers with Spearman {rho:+.2f} against the neighbour-mean changes.")
    return out
