"""Chapter 5's sweeps: the strategy-by-layer map, the knob sweeps and the compression experiment (also on the
layers each other cut of chapter 2's connective threshold picks), through the results store."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..core.bootstrap import mean_interval
from ..core.checks import finite_number, positive_int
from ..core.generation import coherence
from ..core.params import DiagnosticParams, PaperLayers
from ..importance.analysis import Thresholds, classify, connective_layers
from ..importance.compute import ImportanceParams, importance
from .strategies import DEFAULT_ALPHAS, PAPER_ALPHA, STRATEGIES, Manipulation, measure


def strategy_heatmap(lab, layers, manipulations, seed: int = 0, progress: bool = True) -> pd.DataFrame:
    """One row per (manipulation, single layer)."""
    jobs = [(m, l) for m in manipulations for l in layers]
    return pd.DataFrame([measure(lab, [l], m, seed) for m, l in tqdm(jobs, desc="strategy x layer",
                                                                       disable=not progress)])


def knob_sweep(lab, layers, base: Manipulation, knob: str, values, seed: int = 0, progress: bool = True):
    """Vary one knob (alpha, t or rank) of ``base`` on each layer of ``layers`` in turn."""
    rows = []
    for layer in tqdm(layers, desc=f"{knob} sweep ({base.strategy})", disable=not progress):
        for value in values:
            rows.append({**measure(lab, [layer], replace(base, **{knob: value}), seed), "knob": knob,
                         "value": value})
    return pd.DataFrame(rows)


# The strategies compared on single layers, and beside scaling on the connective layers together. Their knobs
# are Manipulation's defaults: changing those changes results, so bump ManipulationParams.VERSION with them.
HEATMAP_STRATEGIES = tuple(Manipulation(s) for s in STRATEGIES) + (Manipulation("scale", scope="all"),)

COMPARED_STRATEGIES = tuple(Manipulation(s) for s in ("zero", "clone", "mix", "lowrank_mix")) + (
    Manipulation("scale", scope="all"),)


def compression(lab, layers, alphas, seed: int = 0, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Scale all of ``layers`` together by each alpha, and compare with the other strategies and with removing
    them: perplexity change and coherence of generation for each (no ``layers``: the intact model's row only).
    Returns (one row per condition, one row per condition and factual question). The fact rate's change
    against the intact model is paired: the same resampled questions enter both rates."""
    n_boot = lab.profile.n_boot
    intact, intact_answers = coherence(lab, seed=seed)
    intact_correct = intact_answers["correct"].dropna().to_numpy()
    rows = [{"strategy": "intact", "label": "intact", "alpha": 1.0, "change_pct": 0.0, "ci_low": 0.0,
             "ci_high": 0.0, "ppl": lab.engine.baseline.perplexity, **intact, "fact_change": 0.0,
             "fact_change_low": 0.0, "fact_change_high": 0.0}]
    answers = [intact_answers.assign(label="intact")]
    # a specimen without connective tissue has nothing to compress: the intact row alone says so
    jobs = [Manipulation("scale", alpha=a) for a in alphas] + list(COMPARED_STRATEGIES)
    jobs = jobs if layers else []
    for m in tqdm(jobs, desc="compression", disable=not progress):
        change = measure(lab, layers, m, seed)
        metrics, table = coherence(lab, m.edit(layers), seed=seed)
        paired = mean_interval(table["correct"].dropna().to_numpy() - intact_correct, n_boot, seed)
        rows.append({"strategy": m.strategy, "label": m.label(), "alpha": m.alpha if m.strategy == "scale" else
                     np.nan, **{k: change[k] for k in ("change_pct", "ci_low", "ci_high", "ppl")}, **metrics,
                     **dict(zip(("fact_change", "fact_change_low", "fact_change_high"), paired))})
        answers.append(table.assign(label=m.label()))
    return pd.DataFrame(rows), pd.concat(answers, ignore_index=True)


@dataclass(frozen=True)
class ManipulationParams(DiagnosticParams):
    """Every table of chapter 5: the strategy-by-layer map, the knob sweeps and the compression experiment."""

    DIAGNOSTIC = "manipulate"
    VERSION = 2

    heatmap_layers: tuple[int, ...] = field(default=PaperLayers((0, 3, 7, 11, 14, 17, 22, 29)), metadata={
        "layers": True, "help": "layers of the single-layer strategy map"})
    sweep_layers: tuple[int, ...] = field(default=PaperLayers((11, 14)), metadata={
        "layers": True, "help": "layers whose alpha, t and rank curves are drawn"})
    compress_layers: tuple[int, ...] | None = field(default=None, metadata={
        "layers": True, "help": "layers scaled together (default: chapter 2's connective tissue)"})
    alphas: tuple[float, ...] = field(default=DEFAULT_ALPHAS, metadata={"help": "scale factors swept"})
    ts: tuple[float, ...] = field(default=(0.0, 0.25, 0.5, 0.75, 1.0), metadata={"help": "mix weights swept"})
    ranks: tuple[int, ...] = field(default=(1, 4, 16, 64), metadata={"help": "low-rank ranks swept"})
    seed: int = field(default=0, metadata={"help": "seed of the bootstrap intervals"})

    def __post_init__(self):
        for name in ("alphas", "ts"):
            for value in getattr(self, name):
                finite_number(value, name[:-1])
        for rank in self.ranks:
            positive_int(rank, "rank")

    def resolved(self, lab) -> "ManipulationParams":
        """For ``lab``'s specimen, with ``compress_layers`` filled in from its importance map when left to default."""
        params = super().resolved(lab)
        if params.compress_layers is not None:
            return params
        connective = connective_layers(importance(lab, ImportanceParams(seed=self.seed)))
        return replace(params, compress_layers=tuple(connective))


def manipulation(lab, params: ManipulationParams = ManipulationParams(), recompute: bool = False,
                 progress: bool = True) -> dict[str, pd.DataFrame]:
    """Every table of the manipulation chapter, through the results store."""
    params = params.resolved(lab)
    seed = params.seed

    def run():
        sweeps = pd.concat([
            knob_sweep(lab, params.sweep_layers, Manipulation("scale"), "alpha", params.alphas, seed, progress),
            knob_sweep(lab, params.sweep_layers, Manipulation("scale", scope="all"), "alpha", params.alphas, seed,
                       progress),
            knob_sweep(lab, params.sweep_layers, Manipulation("mix"), "t", params.ts, seed, progress),
            knob_sweep(lab, params.sweep_layers, Manipulation("lowrank_mix", t=1.0), "rank", params.ranks, seed,
                       progress),
        ], ignore_index=True)
        # alpha = 0 on the writers is exactly removing the layers (skip), so removal is a row of this table
        table, answers = compression(lab, params.compress_layers, params.alphas, seed, progress)
        return {"heatmap": strategy_heatmap(lab, params.heatmap_layers, HEATMAP_STRATEGIES, seed, progress),
                "sweeps": sweeps, "compression": table, "answers": answers}

    return lab.stored(params, run, recompute)


@dataclass(frozen=True)
class CompressionParams(DiagnosticParams):
    """The compression experiment alone, on layers other than the chapter's: what chapter 5's verdicts read where
    chapter 2's connective threshold is cut elsewhere (``compression_at_cuts``). Only the paper's alpha is scaled
    beside the other strategies: the claims read nothing else."""

    DIAGNOSTIC = "compression"
    VERSION = 1

    compress_layers: tuple[int, ...] = field(default=(), metadata={
        "layers": True, "help": "layers compressed together"})
    alphas: tuple[float, ...] = field(default=(PAPER_ALPHA,), metadata={"help": "scale factors (the paper's)"})
    seed: int = field(default=0, metadata={"help": "seed of the bootstrap intervals"})

    def __post_init__(self):
        for value in self.alphas:
            finite_number(value, "alpha")


def compression_stored(lab, params: CompressionParams, recompute: bool = False,
                       progress: bool = True) -> dict[str, pd.DataFrame]:
    """The compression experiment on ``params.compress_layers``, through the results store."""
    params = params.resolved(lab)

    def run():
        table, answers = compression(lab, params.compress_layers, params.alphas, params.seed, progress)
        return {"compression": table, "answers": answers}

    return lab.stored(params, run, recompute, computed_by="python -m anatomy_lib compression-cuts")


def connective_cuts(lab, cuts, seed: int = 0) -> dict[float, tuple[int, ...]]:
    """The connective-tissue layers of ``lab``'s importance map (chapter 2's, stored) at each connective threshold
    of ``cuts`` (percent), the other thresholds playing no part in that class."""
    table = importance(lab, ImportanceParams(seed=seed))
    n_layers = lab.adapter.n_layers
    return {cut: tuple(connective_layers(table.assign(**{"class": classify(table, n_layers,
                                                                           Thresholds(connective_pct=cut))})))
            for cut in cuts}


def compression_at_cuts(lab, params: ManipulationParams, tables: dict[str, pd.DataFrame], cuts,
                        recompute: bool = False, progress: bool = True) -> dict[float, pd.DataFrame]:
    """Chapter 5's compression table at each connective threshold of ``cuts``: the chapter's own (``tables``)
    where a cut picks the chapter's layers, its intact row alone where it picks none, and elsewhere the compression
    experiment on that cut's layers, through the store (``CompressionParams``). A read-only lab raises
    ``NotStored`` for a cut never computed (``python -m anatomy_lib compression-cuts`` stores them)."""
    params = params.resolved(lab)
    own, out = tuple(sorted(params.compress_layers)), {}
    intact = tables["compression"][tables["compression"]["strategy"] == "intact"]
    for cut, layers in connective_cuts(lab, cuts, params.seed).items():
        if layers == own:
            out[cut] = tables["compression"]
        elif not layers:
            out[cut] = intact.reset_index(drop=True)
        else:
            cut_params = CompressionParams(compress_layers=layers, seed=params.seed)
            out[cut] = compression_stored(lab, cut_params, recompute, progress)["compression"]
    return out


def compute(lab, params: ManipulationParams | None = None, *, recompute: bool = False,
            progress: bool = True) -> dict[str, pd.DataFrame]:
    """Chapter 5's tables (the chapter protocol, ``core.chapter``)."""
    return manipulation(lab, params or lab.defaults(ManipulationParams), recompute, progress)
