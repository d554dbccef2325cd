"""Chapter 5, manipulation strategies: what can replace a redundant layer?

Strategies, applied to a chosen set of layers (each layer edited from the *intact* weights):

- ``zero``: every weight matrix set to zero; the norm gains are kept.
- ``clone``: every tensor (matrices and norms) copied from the neighbour l-1 (``neighbor="prev"``) or l+1; at
  the first / last layer the only neighbour there is.
- ``mix``: every tensor becomes t * W_l + (1 - t) * W_neighbour.
- ``lowrank_mix``: each matrix becomes the best rank-r approximation (truncated SVD) of that mix; norm gains
  are mixed exactly (a vector has no rank to cut).
- ``scale``: alpha * W for the matrices that write into the residual stream (o and down, plus their biases
  where present; ``scope="writers"``), which scales the layer's contribution by exactly alpha, or for every
  matrix (``scope="all"``). Scaling q and k by alpha multiplies attention logits by alpha^2: it changes the
  softmax temperature, not only the layer's output size.

Coherence of generation is measured, not only shown (``generation.coherence``): greedy continuations of fixed
prompts, their perplexity under the intact model, distinct-2 and distinct-3, a repetition rate, and correct
answers to fixed factual questions.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from .checks import finite_number, one_of, positive_int
from .generation import coherence
from .results import DiagnosticParams

STRATEGIES = ("zero", "clone", "mix", "lowrank_mix", "scale")
SCOPES = ("writers", "all")
SIDES = ("prev", "next")
PAPER = {"alpha": 0.9, "scale_change_pct": 49.0}
DEFAULT_ALPHAS = (0.0, 0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5)


@dataclass(frozen=True)
class Manipulation:
    """One strategy and its knobs (only the ones the strategy uses matter)."""

    strategy: str = "scale"
    alpha: float = 0.9  # scale
    t: float = 0.5  # mix, lowrank_mix: weight of the layer's own tensors
    rank: int = 16  # lowrank_mix
    neighbor: str = "prev"  # clone, mix, lowrank_mix
    scope: str = "writers"  # scale

    def __post_init__(self):
        one_of(self.strategy, STRATEGIES, "strategy")
        finite_number(self.alpha, "alpha")
        finite_number(self.t, "t")
        positive_int(self.rank, "rank")
        one_of(self.neighbor, SIDES, "neighbor")
        one_of(self.scope, SCOPES, "scope")

    def label(self) -> str:
        knobs = {"scale": f"alpha={self.alpha:g}, {self.scope}", "mix": f"t={self.t:g}, {self.neighbor}",
                 "lowrank_mix": f"t={self.t:g}, r={self.rank}, {self.neighbor}", "clone": self.neighbor,
                 "zero": ""}[self.strategy]
        return f"{self.strategy}({knobs})" if knobs else self.strategy

    def edit(self, layers):
        """The edit that applies this manipulation to every layer of ``layers`` (for ``Lab.measure``)."""
        layers = sorted(set(layers))
        if not layers:
            raise ValueError("choose at least one layer to manipulate")

        def edit(editor) -> None:
            for layer in layers:
                apply(editor, layer, self)

        return edit


def neighbour_of(n_layers: int, layer: int, side: str) -> int:
    if side == "prev":
        return layer - 1 if layer > 0 else layer + 1
    return layer + 1 if layer < n_layers - 1 else layer - 1


def low_rank(matrix: torch.Tensor, rank: int) -> torch.Tensor:
    """Best rank-``rank`` approximation in the Frobenius norm (truncated SVD)."""
    if rank > min(matrix.shape):
        raise ValueError(f"rank {rank} exceeds the matrix's full rank {min(matrix.shape)} for shape "
                         f"{tuple(matrix.shape)}; choose 1..{min(matrix.shape)}")
    u, s, vh = torch.linalg.svd(matrix.double(), full_matrices=False)
    return (u[:, :rank] * s[:rank]) @ vh[:rank]


def apply(editor, layer: int, manipulation: Manipulation) -> None:
    """Apply ``manipulation`` to ``layer`` inside an open ``surgery`` (reading intact weights via ``original``)."""
    adapter, m = editor.adapter, manipulation
    adapter.check_layer(layer)
    if m.strategy == "zero":
        for name in adapter.matrix_names:
            editor.replace(layer, name, torch.zeros_like(editor.original(layer, name)))
        return
    if m.strategy == "scale":
        editor.scale(layer, adapter.writer_names() if m.scope == "writers" else adapter.matrix_names, m.alpha)
        return
    source = neighbour_of(adapter.n_layers, layer, m.neighbor)
    for name in adapter.tensor_names:
        own, other = editor.original(layer, name).double(), editor.original(source, name).double()
        if m.strategy == "clone":
            value = other
        else:
            value = m.t * own + (1 - m.t) * other
            if m.strategy == "lowrank_mix" and value.ndim == 2:
                value = low_rank(value, m.rank)
        editor.replace(layer, name, value)


def measure(lab, layers, manipulation: Manipulation, seed: int = 0) -> dict:
    """Perplexity change (paired bootstrap interval) with ``manipulation`` applied to every layer of ``layers``."""
    layers = sorted({lab.adapter.check_layer(l) for l in layers})
    measured = lab.measure(manipulation.edit(layers), seed=seed)
    return {**asdict(manipulation), "label": manipulation.label(), "layers": ",".join(map(str, layers)),
            **measured.row()}


# ---- the sweeps ------------------------------------------------------------------------------------------------
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
    them: perplexity change and coherence of generation for each. Returns (one row per condition, one row per
    condition and factual question). The fact rate's change against the intact model is paired: the same
    resampled questions enter both rates."""
    from .bootstrap import mean_interval

    n_boot = lab.profile.n_boot
    intact, intact_answers = coherence(lab, seed=seed)
    intact_correct = intact_answers["correct"].dropna().to_numpy()
    rows = [{"strategy": "intact", "label": "intact", "alpha": 1.0, "change_pct": 0.0, "ci_low": 0.0,
             "ci_high": 0.0, "ppl": lab.engine.baseline.perplexity, **intact, "fact_change": 0.0,
             "fact_change_low": 0.0, "fact_change_high": 0.0}]
    answers = [intact_answers.assign(label="intact")]
    jobs = [Manipulation("scale", alpha=a) for a in alphas] + list(COMPARED_STRATEGIES)
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

    heatmap_layers: tuple[int, ...] = field(default=(0, 3, 7, 11, 14, 17, 22, 29),
                                            metadata={"help": "layers of the single-layer strategy map"})
    sweep_layers: tuple[int, ...] = field(default=(11, 14), metadata={"help": "layers whose alpha, t and rank "
                                                                               "curves are drawn"})
    compress_layers: tuple[int, ...] | None = field(default=None, metadata={
        "help": "layers scaled together (default: chapter 2's connective tissue)"})
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
        """With ``compress_layers`` filled in from the importance map when it is left to default."""
        if self.compress_layers is not None:
            return self
        from .importance import ImportanceParams, connective_layers, importance

        connective = connective_layers(importance(lab, ImportanceParams(seed=self.seed)))
        return replace(self, compress_layers=tuple(connective))


def manipulation(lab, params: ManipulationParams = ManipulationParams(), recompute: bool = False,
                 progress: bool = True) -> dict[str, pd.DataFrame]:
    """Every table of the manipulation chapter, through the results store."""
    params = params.resolved(lab)
    for layer in params.heatmap_layers + params.sweep_layers + params.compress_layers:
        lab.adapter.check_layer(layer)
    seed = params.seed

    def compute():
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

    return lab.stored(params, compute, recompute)


def _fact_rate(row) -> str:
    return (f"facts {row.fact_rate:.0%} [{row.fact_rate_low:.0%}, {row.fact_rate_high:.0%}] of "
            f"{row.facts_total}")


def paper_claims(tables: dict[str, pd.DataFrame]):
    """Only scaling (alpha = 0.9, +49%) keeps coherence; zero / clone / mix destroy it ("millions of percent").
    Coherence is judged on the fact rate's paired change against the intact model, with its interval."""
    from . import verdicts as v

    comp = tables["compression"]
    intact = comp[comp["strategy"] == "intact"].iloc[0]
    scaled = comp[comp["label"].str.endswith("writers)") & (comp["alpha"] == PAPER["alpha"])]
    claims = []
    if not scaled.empty:
        row = scaled.iloc[0]
        claims.append(v.Claim(f"scale alpha={PAPER['alpha']} on the connective layers: perplexity change",
                              f"+{PAPER['scale_change_pct']:g}%",
                              f"{row.change_pct:+,.1f}% [{row.ci_low:+,.1f}, {row.ci_high:+,.1f}]",
                              v.number(PAPER["scale_change_pct"], row.change_pct, row.ci_low, row.ci_high),
                              "agreement within a factor of two, same sign", "number"))
        kept = row.fact_change_low <= 0 <= row.fact_change_high or row.fact_change_low > 0
        kept = kept and row.empty_share == 0 and row.repetition_rate <= intact.repetition_rate + 0.2
        claims.append(v.Claim(f"scale alpha={PAPER['alpha']} keeps generation coherent", "yes",
                              f"{_fact_rate(row)} (intact {intact.fact_rate:.0%}); change "
                              f"{row.fact_change:+.0%} [{row.fact_change_low:+.0%}, {row.fact_change_high:+.0%}]",
                              v.qualitative(bool(kept)),
                              "coherent: no loss of facts established (paired interval reaches zero), no empty "
                              "continuation, repetition at most +0.2 over intact", "qualitative"))
    for strategy in ("zero", "clone", "mix", "lowrank_mix"):
        rows = comp[comp["strategy"] == strategy]
        if rows.empty:
            continue
        row = rows.iloc[0]
        claims.append(v.Claim(f"{row.label} on the connective layers destroys coherence", "yes",
                              f"{_fact_rate(row)}; change {row.fact_change:+.0%} [{row.fact_change_low:+.0%}, "
                              f"{row.fact_change_high:+.0%}]; perplexity {row.change_pct:+,.0f}%",
                              v.comparison(row.fact_change, row.fact_change_low, row.fact_change_high,
                                           paper_direction=-1, paper_size=intact.fact_rate / 2),
                              "a loss of facts whose paired interval excludes zero, of at least half the intact "
                              "rate", "comparison"))
    others = comp[comp["strategy"].isin(["zero", "clone", "mix", "lowrank_mix"])]
    if not others.empty:
        huge = others[others["ci_low"] >= 1e6]
        claims.append(v.Claim("the other strategies cost millions of percent", "yes",
                              "; ".join(f"{r.strategy} {r.change_pct:+,.0f}%" for r in others.itertuples()),
                              v.share(len(huge), len(others)),
                              "a strategy counts when its interval's lower end is at least +1,000,000%", "share"))
    return claims


def findings(tables: dict[str, pd.DataFrame], specimen: str) -> list[str]:
    """What chapter 5 finds, in sentences computed from its tables."""
    comp = tables["compression"]
    intact = comp[comp["strategy"] == "intact"].iloc[0]
    writers = comp[comp["label"].str.endswith("writers)")].sort_values("alpha")
    out = [f"On {specimen}, the intact model answers {intact.facts_correct} of {intact.facts_total} factual "
           f"questions ({intact.fact_rate:.0%} [{intact.fact_rate_low:.0%}, {intact.fact_rate_high:.0%}])."]
    best = writers.loc[writers["change_pct"].idxmin()]
    out.append(f"Scaling the connective layers' writers together, the lowest perplexity is at alpha = "
               f"{best.alpha:g}: {best.change_pct:+.1f}% [{best.ci_low:+.1f}, {best.ci_high:+.1f}]"
               + (", a small improvement over the intact model." if best.ci_high < 0 else "."))
    removed = writers[writers["alpha"] == 0]
    if not removed.empty:
        r = removed.iloc[0]
        out.append(f"Removing them (alpha = 0) costs {r.change_pct:+,.0f}% [{r.ci_low:+,.0f}, {r.ci_high:+,.0f}] and "
                   f"leaves {_fact_rate(r)}.")
    for r in comp[comp["strategy"].isin(["zero", "clone", "mix", "lowrank_mix"])].itertuples():
        out.append(f"{r.label}: perplexity {r.change_pct:+,.0f}% [{r.ci_low:+,.0f}, {r.ci_high:+,.0f}], "
                   f"{_fact_rate(r)}, change {r.fact_change:+.0%} [{r.fact_change_low:+.0%}, "
                   f"{r.fact_change_high:+.0%}].")
    heat = tables["heatmap"]
    if not heat.empty:
        gentle = heat.groupby("label")["change_pct"].median().sort_values()
        out.append(f"On single layers the gentlest strategy (median change over the mapped layers) is "
                   f"{gentle.index[0]} ({gentle.iloc[0]:+.1f}%), the harshest {gentle.index[-1]} "
                   f"({gentle.iloc[-1]:+,.0f}%).")
    return out
