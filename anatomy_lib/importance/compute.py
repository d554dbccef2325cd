"""Chapter 2, the importance map: ablate one layer at a time and measure the perplexity change.

Ablation modes:

- ``neighbor_mean`` (the paper's): every tensor of layer l becomes the mean of layers l-1 and l+1; the first
  and last layer, having one neighbour, take that neighbour's tensors (the paper does not say; this is our choice).
- ``skip``: the layer becomes the identity on the residual stream (its o and down projections zeroed).
- ``attn_only`` / ``mlp_only``: only the attention / only the MLP block is removed.

Three more operators (``STREAM_OPERATORS``) act on what a layer hands on rather than on its weights, as
interpretability tools commonly ablate (a forward hook, ``WeightSurgery.override_output``). A decoder layer's
output is the whole residual stream, not its own update, so these are different experiments:

- ``zero_stream``: the stream leaving the layer is overwritten with zeros (everything before it is lost too);
- ``mean_stream``: overwritten with its mean over every position of the evaluation blocks (intact model);
- ``mean_update``: the layer's update (leaving minus entering) replaced by its mean over those positions (mean
  ablation): the stream before the layer passes through, the layer's position-specific work is removed.

The means are the intact model's, over every position of every evaluation block (first positions included),
so no operator sees another position's text: a per-sequence mean would leak later tokens into earlier ones.

Every change carries a paired bootstrap 95% interval over text blocks. In the same cached pass we compute
ShortGPT's Block Influence (1 - cosine of a layer's input and output residual).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd
import torch
from tqdm.auto import tqdm

from ..core.checks import one_of, positive_int
from ..core.generation import generate
from ..core.lab import NotStored
from ..core.params import DiagnosticParams
from ..core.surgery import WeightSurgery, surgery
from .analysis import Thresholds, classify

MODES = ("neighbor_mean", "skip", "attn_only", "mlp_only")  # chapter 2's map: weight edits
STREAM_OPERATORS = ("zero_stream", "mean_stream", "mean_update")  # edits of what a layer hands on
OPERATORS = MODES + STREAM_OPERATORS
TENSOR_SETS = ("all", "matrices")
SECOND_SELECTION = 1  # the other selection of evaluation text the store holds (blocks and bootstrap seed)
SKIP_PART = {"skip": "block", "attn_only": "attn", "mlp_only": "mlp"}


@dataclass(frozen=True)
class ImportanceParams(DiagnosticParams):
    """One importance sweep: how each layer is removed, and the seed of its bootstrap intervals."""

    DIAGNOSTIC = "importance"
    VERSION = 1

    mode: str = field(default="neighbor_mean", metadata={"choices": OPERATORS, "help": "how a layer is removed"})
    tensors: str = field(default="all", metadata={
        "choices": TENSOR_SETS, "help": "what neighbor_mean replaces: all tensors (norms too) or matrices only"})
    seed: int = field(default=0, metadata={"help": "seed of the bootstrap intervals"})

    def __post_init__(self):
        one_of(self.mode, OPERATORS, "ablation mode")
        one_of(self.tensors, TENSOR_SETS, "tensor set")


def neighbors(n_layers: int, layer: int) -> list[int]:
    """Layers whose mean replaces ``layer`` under ``neighbor_mean``: l-1 and l+1 where they exist."""
    return [n for n in (layer - 1, layer + 1) if 0 <= n < n_layers]


def stream_means(engine, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The intact model's stream leaving ``layer`` and its update (leaving minus entering), each averaged over
    every position of the engine's evaluation blocks: what ``mean_stream`` and ``mean_update`` install."""
    leaving = engine.stream(layer + 1).double().mean(dim=(0, 1))
    update = leaving - engine.stream(layer).double().mean(dim=(0, 1))
    return leaving.float(), update.float()


def ablate(editor: WeightSurgery, layer: int, mode: str, tensors: str = "all", engine=None) -> None:
    """Apply one ablation to ``layer`` inside an open ``surgery`` (neighbour means read the intact weights; the
    mean operators read the intact streams of ``engine``, a ``PerplexityEngine``)."""
    one_of(mode, OPERATORS, "ablation mode")
    one_of(tensors, TENSOR_SETS, "tensor set")
    adapter = editor.adapter
    adapter.check_layer(layer)
    if mode in ("mean_stream", "mean_update") and engine is None:
        raise ValueError(f"{mode} needs the intact streams: pass the lab's engine")
    if mode == "zero_stream":
        editor.override_output(layer, lambda entering, leaving: torch.zeros_like(leaving))
    elif mode == "mean_stream":
        mean_leaving, _ = stream_means(engine, layer)
        editor.override_output(layer, lambda entering, leaving: mean_leaving)
    elif mode == "mean_update":
        _, mean_update = stream_means(engine, layer)
        editor.override_output(layer, lambda entering, leaving: entering + mean_update.to(entering.device))
    elif mode == "neighbor_mean":
        names = adapter.tensor_names if tensors == "all" else adapter.matrix_names
        sources = neighbors(adapter.n_layers, layer)
        for name in names:
            mean = sum(editor.original(n, name).double() for n in sources) / len(sources)
            editor.replace(layer, name, mean)
    else:
        editor.skip(layer, SKIP_PART[mode])


def ablation(layers, mode: str = "neighbor_mean", tensors: str = "all", engine=None):
    """The edit that ablates every layer of ``layers`` together (for ``Lab.measure``; ``engine``: the lab's,
    for the mean operators)."""
    one_of(mode, OPERATORS, "ablation mode")
    one_of(tensors, TENSOR_SETS, "tensor set")
    layers = sorted(set(layers))
    if not layers:
        raise ValueError("choose at least one layer to ablate")

    def edit(editor: WeightSurgery) -> None:
        for layer in layers:
            ablate(editor, layer, mode, tensors, engine)

    return edit


def importance_sweep(lab, params: ImportanceParams = ImportanceParams(), layers=None,
                     progress: bool = True) -> pd.DataFrame:
    """Ablate each layer in turn; one row per layer with the change, its interval and Block Influence."""
    adapter = lab.adapter
    layers = list(range(adapter.n_layers)) if layers is None else [adapter.check_layer(l) for l in layers]
    influence = lab.engine.block_influence()
    rows = []
    for layer in tqdm(layers, desc=f"importance ({params.mode})", disable=not progress):
        measured = lab.measure(ablation([layer], params.mode, params.tensors, lab.engine), seed=params.seed)
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
    def run():
        rows = []
        for layer in tqdm(range(lab.adapter.n_layers), desc=f"continuations ({params.mode})",
                          disable=not progress):
            with surgery(lab.adapter) as editor:
                ablate(editor, layer, params.mode, params.tensors)
                text = generate(lab.specimen, params.prompt, params.max_new_tokens)
            rows.append({"layer": layer, "mode": params.mode, "prompt": params.prompt, "continuation": text})
        return {"layers": pd.DataFrame(rows)}

    return lab.stored(params, run, recompute)["layers"]


def joint_ablation(lab, layers, mode: str = "neighbor_mean", tensors: str = "all", seed: int = 0,
                   prompt: str | None = None, max_new_tokens: int | None = None) -> dict:
    """Ablate several layers together (neighbour means use the intact weights): the perplexity change with
    its paired interval, and, with ``prompt``, the ablated model's greedy continuation."""
    layers = sorted({lab.adapter.check_layer(l) for l in layers})
    measured = lab.measure(ablation(layers, mode, tensors), prompt, max_new_tokens, seed)
    return {"layers": layers, "mode": mode, **measured.row(), "continuation": measured.continuation}


def compute(lab, params: ImportanceParams | None = None, *, modes=MODES, thresholds: Thresholds = Thresholds(),
            recompute: bool = False, progress: bool = True) -> dict[str, pd.DataFrame]:
    """Chapter 2's tables (the chapter protocol, ``core.chapter``): {mode: classified importance table}, the mode
    of ``params`` first, then every other mode of ``modes``."""
    params = params or lab.defaults(ImportanceParams)
    order = [params.mode] + [m for m in modes if m != params.mode]
    return {mode: importance(lab, replace(params, mode=mode), thresholds, recompute, progress) for mode in order}


def operator_panel(labs, params: ImportanceParams | None = None, operators=OPERATORS,
                   thresholds: Thresholds = Thresholds(), progress: bool = True) -> dict[str, dict[str, pd.DataFrame]]:
    """Chapter 2's operator panel: {specimen: {operator: classified importance table}} for every lab of ``labs``
    (each at ``params``, or its own defaults), every operator through the same measuring path. A read-only lab
    whose tables are not all stored is left out (the published page never starts a sweep for another specimen)."""
    panel = {}
    for lab in labs:
        try:
            panel[lab.specimen.name] = compute(lab, params, modes=operators, thresholds=thresholds,
                                               progress=progress)
        except NotStored:
            continue
    return panel
