"""Diagnostic 4, manipulation strategies: what can replace a redundant layer?

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

Coherence of generation is measured, not only shown: greedy continuations of fixed prompts, their perplexity
under the intact model, distinct-2 and distinct-3, a repetition rate, and correct answers to fixed factual
questions.
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from .generation import DEFAULT_PROMPTS, format_prompt, generate
from .stats import paired_change_interval
from .surgery import surgery

STRATEGIES = ("zero", "clone", "mix", "lowrank_mix", "scale")
SCOPES = ("writers", "all")
PAPER = {"alpha": 0.9, "scale_change_pct": 49.0}
FACTS = (
    ("What is the capital of France?", ("paris",)),
    ("What is the capital of Japan?", ("tokyo",)),
    ("What is the capital of Italy?", ("rome",)),
    ("How many days are in a week?", ("seven", "7")),
    ("What is the largest planet in our solar system?", ("jupiter",)),
    ("Who wrote Romeo and Juliet?", ("shakespeare",)),
    ("What is the chemical formula of water?", ("h2o", "h₂o")),
    ("What is two plus two?", ("four", "4")),
    ("What language is mainly spoken in Brazil?", ("portuguese",)),
    ("What color is the sky on a clear day?", ("blue",)),
)


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
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}; choose one of {list(STRATEGIES)}")
        for name in ("alpha", "t"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        if isinstance(self.rank, bool) or not isinstance(self.rank, int) or self.rank < 1:
            raise ValueError(f"rank must be a positive integer, got {self.rank!r}")
        if self.neighbor not in ("prev", "next"):
            raise ValueError(f"unknown neighbor {self.neighbor!r}; choose 'prev' or 'next'")
        if self.scope not in SCOPES:
            raise ValueError(f"unknown scope {self.scope!r}; choose one of {list(SCOPES)}")

    def label(self) -> str:
        knobs = {"scale": f"alpha={self.alpha:g}, {self.scope}", "mix": f"t={self.t:g}, {self.neighbor}",
                 "lowrank_mix": f"t={self.t:g}, r={self.rank}, {self.neighbor}", "clone": self.neighbor,
                 "zero": ""}[self.strategy]
        return f"{self.strategy}({knobs})" if knobs else self.strategy


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


def apply(op, layer: int, m: Manipulation) -> None:
    """Apply one manipulation to ``layer`` inside an open ``surgery`` (reads intact weights via ``original``)."""
    adapter = op.adapter
    adapter.check_layer(layer)
    matrices = adapter.matrix_names
    if m.strategy == "zero":
        for name in matrices:
            op.replace(layer, name, torch.zeros_like(op.original(layer, name)))
        return
    if m.strategy == "scale":
        names = [n for n in ("o", "down", "o_bias", "down_bias") if n in adapter.tensor_names] \
            if m.scope == "writers" else list(matrices)
        for name in names:
            op.replace(layer, name, op.original(layer, name) * m.alpha)
        return
    source = neighbour_of(adapter.n_layers, layer, m.neighbor)
    for name in adapter.tensor_names:
        own, other = op.original(layer, name).double(), op.original(source, name).double()
        if m.strategy == "clone":
            value = other
        else:
            value = m.t * own + (1 - m.t) * other
            if m.strategy == "lowrank_mix" and value.ndim == 2:
                value = low_rank(value, m.rank)
        op.replace(layer, name, value)


def measure(lab, layers, m: Manipulation, seed: int = 0) -> dict:
    """Perplexity change (paired bootstrap interval) with ``m`` applied to every layer in ``layers``."""
    adapter, engine = lab.adapter, lab.engine
    layers = sorted({adapter.check_layer(l) for l in layers})
    with surgery(adapter) as op:
        for layer in layers:
            apply(op, layer, m)
        result = engine.evaluate()
    change, low, high = paired_change_interval(engine.baseline.block_nll, result.block_nll, lab.profile.n_boot, seed)
    return {**asdict(m), "label": m.label(), "layers": ",".join(map(str, layers)), "ppl": result.perplexity,
            "base_ppl": engine.baseline.perplexity, "change_pct": change, "ci_low": low, "ci_high": high}


# ---- coherence of generation ---------------------------------------------------------------------------------
def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def distinct_n(text: str, n: int) -> float:
    """Unique word n-grams over all word n-grams (1.0: no n-gram repeats; empty text: 0)."""
    words = _words(text)
    grams = [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0


def repetition_rate(text: str, n: int = 3) -> float:
    """Share of word n-grams that already occurred earlier in the same text."""
    words = _words(text)
    seen, repeats, total = set(), 0, 0
    for i in range(len(words) - n + 1):
        gram = tuple(words[i:i + n])
        repeats += gram in seen
        total += 1
        seen.add(gram)
    return repeats / total if total else 0.0


def continuation_nll(specimen, prompt: str, continuation: str) -> float:
    """Mean NLL (nats) of ``continuation`` after the formatted ``prompt``, under the model as it is now."""
    tokenizer, model = specimen.tokenizer, specimen.model
    context = tokenizer(format_prompt(specimen, prompt), add_special_tokens=False)["input_ids"]
    answer = tokenizer(continuation, add_special_tokens=False)["input_ids"]
    if not answer:
        return float("nan")
    ids = torch.tensor([context + answer], device=model.device)
    with torch.inference_mode():
        logits = model(input_ids=ids).logits[0, len(context) - 1:-1].float()
    return float(torch.nn.functional.cross_entropy(logits, ids[0, len(context):]))


def coherence(lab, layers=(), m: Manipulation | None = None, prompts=DEFAULT_PROMPTS, facts=FACTS,
              max_new_tokens: int | None = None) -> tuple[dict, pd.DataFrame]:
    """Generate under the manipulation, then score under the intact model: (metrics, generations table)."""
    spec = lab.specimen
    tokens = max_new_tokens or lab.profile.gen_tokens
    with surgery(lab.adapter) as op:
        if m is not None:
            for layer in layers:
                apply(op, layer, m)
        texts = [generate(spec, p, tokens) for p in prompts]
        answers = [generate(spec, q, 16) for q, _ in facts]
    correct = [any(a in answer.lower() for a in accepted) for answer, (_, accepted) in zip(answers, facts)]
    nll = [continuation_nll(spec, p, t) for p, t in zip(prompts, texts)]
    joined = " ".join(texts)
    metrics = {"generated_ppl": float(np.exp(np.nanmean(nll))) if not all(np.isnan(nll)) else float("nan"),
               "distinct_2": distinct_n(joined, 2), "distinct_3": distinct_n(joined, 3),
               "repetition_rate": float(np.mean([repetition_rate(t) for t in texts])),
               "facts_correct": int(sum(correct)), "facts_total": len(facts)}
    table = pd.DataFrame({"prompt": list(prompts) + [q for q, _ in facts], "kind": ["prompt"] * len(prompts) +
                          ["fact"] * len(facts), "continuation": texts + answers,
                          "correct": [None] * len(prompts) + correct})
    return metrics, table


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


def compression(lab, layers, alphas, others, seed: int = 0, progress: bool = True) -> pd.DataFrame:
    """Scale all of ``layers`` together by each alpha, and compare with the other strategies and with removing
    them: perplexity change and coherence of generation for each."""
    rows = []
    intact, _ = coherence(lab)
    rows.append({"strategy": "intact", "label": "intact", "alpha": 1.0, "change_pct": 0.0, "ci_low": 0.0,
                 "ci_high": 0.0, "ppl": lab.engine.baseline.perplexity, **intact})
    jobs = [Manipulation("scale", alpha=a) for a in alphas] + list(others)
    for m in tqdm(jobs, desc="compression", disable=not progress):
        change = measure(lab, layers, m, seed)
        metrics, _ = coherence(lab, layers, m)
        rows.append({"strategy": m.strategy, "label": m.label(), "alpha": m.alpha if m.strategy == "scale" else
                     np.nan, **{k: change[k] for k in ("change_pct", "ci_low", "ci_high", "ppl")}, **metrics})
    return pd.DataFrame(rows)


def connective_layers(importance_table: pd.DataFrame) -> list[int]:
    return sorted(int(l) for l in importance_table.loc[importance_table["class"] == "connective tissue", "layer"])


DEFAULT_ALPHAS = (0.0, 0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5)


def manipulation(lab, heatmap_layers, sweep_layers, compress_layers, alphas=DEFAULT_ALPHAS,
                 ts=(0.0, 0.25, 0.5, 0.75, 1.0), ranks=(1, 4, 16, 64), seed: int = 0, recompute: bool = False,
                 progress: bool = True) -> dict[str, pd.DataFrame]:
    """Every table of the manipulation chapter, through the results store."""
    from .results import load_or_compute

    defaults = [Manipulation(s) for s in STRATEGIES] + [Manipulation("scale", scope="all")]
    others = [Manipulation("zero"), Manipulation("clone"), Manipulation("mix"), Manipulation("lowrank_mix"),
              Manipulation("scale", scope="all")]
    params = {"heatmap_layers": list(heatmap_layers), "sweep_layers": list(sweep_layers),
              "compress_layers": list(compress_layers), "alphas": list(alphas), "ts": list(ts),
              "ranks": list(ranks), "defaults": [asdict(m) for m in defaults], "seed": seed}

    def compute():
        lab.engine  # build the cache before any edit
        sweeps = pd.concat([
            knob_sweep(lab, sweep_layers, Manipulation("scale"), "alpha", alphas, seed, progress),
            knob_sweep(lab, sweep_layers, Manipulation("scale", scope="all"), "alpha", alphas, seed, progress),
            knob_sweep(lab, sweep_layers, Manipulation("mix"), "t", ts, seed, progress),
            knob_sweep(lab, sweep_layers, Manipulation("lowrank_mix", t=1.0), "rank", ranks, seed, progress),
        ], ignore_index=True)
        # alpha = 0 on the writers is exactly removing the layers (skip), so removal is a row of this table
        table = compression(lab, compress_layers, alphas, others, seed, progress)
        return {"heatmap": strategy_heatmap(lab, heatmap_layers, defaults, seed, progress), "sweeps": sweeps,
                "compression": table}

    tables, _ = load_or_compute("manipulate", lab.request(params), compute, device=lab.specimen.device,
                                recompute=recompute)
    return tables


def paper_claims(tables: dict[str, pd.DataFrame]):
    """Only scaling (alpha = 0.9, +49%) keeps coherence; zero / clone / mix destroy it. Verdicts computed."""
    from .report import Claim, verdict

    comp = tables["compression"]
    intact = comp[comp["strategy"] == "intact"].iloc[0]
    coherent = lambda row: (row.facts_correct >= 0.5 * intact.facts_correct
                            and row.repetition_rate <= intact.repetition_rate + 0.2)
    scaled = comp[comp["label"].str.endswith("writers)") & (comp["alpha"] == PAPER["alpha"])]
    claims = []
    if not scaled.empty:
        row = scaled.iloc[0]
        ratio = row.change_pct / PAPER["scale_change_pct"] if row.change_pct > 0 else 0
        claims.append(Claim(f"scale alpha={PAPER['alpha']} on the connective layers", f"+{PAPER['scale_change_pct']:g}%",
                            f"{row.change_pct:+,.1f}% [{row.ci_low:+,.1f}, {row.ci_high:+,.1f}]",
                            verdict(0.5 <= ratio <= 2, partly=row.change_pct < 1000),
                            "reproduced within a factor of two"))
        claims.append(Claim(f"scale alpha={PAPER['alpha']} keeps generation coherent", "yes",
                            f"facts {row.facts_correct}/{row.facts_total} (intact {intact.facts_correct}), "
                            f"repetition {row.repetition_rate:.2f} (intact {intact.repetition_rate:.2f})",
                            verdict(coherent(row)), "coherent: >= half the intact facts, repetition <= +0.2"))
    for strategy in ("zero", "clone", "mix", "lowrank_mix"):
        rows = comp[comp["strategy"] == strategy]
        if rows.empty:
            continue
        row = rows.iloc[0]
        destroyed = not coherent(row)
        claims.append(Claim(f"{row.label} on the connective layers destroys coherence", "yes (millions of %)",
                            f"{row.change_pct:+,.0f}%; facts {row.facts_correct}/{row.facts_total}, "
                            f"repetition {row.repetition_rate:.2f}",
                            verdict(destroyed and row.change_pct >= 1e4, partly=destroyed or row.change_pct >= 1e3),
                            "reproduced: incoherent and >= +10,000%"))
    return claims
