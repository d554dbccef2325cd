"""Chapter 1, the specimen: what the loaded model is (architecture, parameter budget) and descriptive statistics of
its weights (norms per layer, singular-value spectra, effective rank)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from ..core.bootstrap import perplexity_interval
from ..core.params import DiagnosticParams
from ..core.runtime import one_thread


def architecture(specimen) -> pd.DataFrame:
    """The specimen's architecture as read from its config and adapter (one row per fact)."""
    adapter, config = specimen.adapter, specimen.model.config
    get = lambda *names: next((getattr(config, n) for n in names if getattr(config, n, None) is not None), None)
    heads = get("num_attention_heads", "n_head")
    activation = str(get("hidden_activation", "hidden_act", "activation_function") or "")
    gating = ("GeGLU" if activation.startswith("gelu") else "SwiGLU") if "gate" in adapter.tensor_names else "none"
    kinds = adapter.layer_types or ("full_attention",) * adapter.n_layers
    sliding = [i for i, kind in enumerate(kinds) if kind == "sliding_attention"]
    attention = (f"sliding window of {get('sliding_window')} tokens, global at layers "
                 f"{', '.join(str(i) for i, kind in enumerate(kinds) if kind == 'full_attention')}"
                 if sliding else "global (causal) at every layer")
    facts = [
        ("family", adapter.family),
        ("decoder layers", adapter.n_layers),
        ("d_model", adapter.hidden_size),
        ("query heads", heads),
        ("key/value heads", get("num_key_value_heads") or heads),
        ("head dim", get("head_dim") or adapter.hidden_size // heads),
        ("attention", attention),
        ("MLP width", adapter.tensor(0, "up").shape[0]),
        ("MLP gating", gating),
        ("norms per layer", sum(n.endswith("norm") for n in adapter.tensor_names)),
        ("block outputs normalised", "yes (post-norms)" if adapter.has_post_norms else "no"),
        ("vocabulary", get("vocab_size")),
        ("tied embeddings", bool(get("tie_word_embeddings"))),
        ("parameters", specimen.n_parameters),
    ]
    return pd.DataFrame(facts, columns=["property", "value"])


def parameter_budget(specimen) -> pd.DataFrame:
    """Where the parameters sit: per tensor of one layer, all layers, embeddings, final norm, total."""
    adapter = specimen.adapter
    per_tensor = adapter.parameter_table().query("layer == 0")[["tensor", "shape", "parameters"]]
    per_layer = int(per_tensor["parameters"].sum())
    embedding = specimen.model.get_input_embeddings().weight.numel()
    rows = [{"part": f"layer tensor {r.tensor}", "shape": str(r.shape), "parameters": int(r.parameters)}
            for r in per_tensor.itertuples()]
    rows += [{"part": "one decoder layer", "shape": "", "parameters": per_layer},
             {"part": f"all {adapter.n_layers} decoder layers", "shape": "",
              "parameters": per_layer * adapter.n_layers},
             {"part": "token embedding (tied head)" if specimen.model.config.tie_word_embeddings else
              "token embedding", "shape": str(tuple(specimen.model.get_input_embeddings().weight.shape)),
              "parameters": embedding},
             {"part": "final norm", "shape": str(tuple(adapter.final_norm.weight.shape)),
              "parameters": adapter.final_norm.weight.numel()},
             {"part": "total (unique parameters)", "shape": "", "parameters": specimen.n_parameters}]
    table = pd.DataFrame(rows)
    table["share_pct"] = 100 * table["parameters"] / specimen.n_parameters
    return table


def weight_norms(adapter) -> pd.DataFrame:
    """Tidy table: layer, tensor, Frobenius norm and RMS of every named tensor; norm gains as the model applies
    them (Gemma stores ``w`` and multiplies by ``1 + w``)."""
    rows = []
    for layer in range(adapter.n_layers):
        for name in adapter.tensor_names:
            t = adapter.gain(layer, name).detach().float()
            rows.append({"layer": layer, "tensor": name, "kind": "matrix" if t.ndim == 2 else "vector",
                         "frobenius": t.norm().item(), "rms": t.pow(2).mean().sqrt().item()})
    return pd.DataFrame(rows)


def singular_values(adapter, layer: int, names=None) -> pd.DataFrame:
    """Singular values of a layer's matrices, largest first, with each normalised by the largest."""
    names = adapter.matrix_names if names is None else names
    rows = []
    for name in names:
        with one_thread():  # small matrices: a second thread gains nothing, and a busy machine punishes it
            sigma = torch.linalg.svdvals(adapter.tensor(layer, name).detach().float().cpu())
        for i, s in enumerate(sigma.tolist()):
            rows.append({"layer": layer, "tensor": name, "index": i, "sigma": s, "sigma_rel": s / sigma[0].item()})
    return pd.DataFrame(rows)


def effective_rank(spectrum: pd.DataFrame) -> pd.DataFrame:
    """Entropy effective rank (Roy & Vetterli 2007) per tensor of a ``singular_values`` table."""
    rows = []
    for name, group in spectrum.groupby("tensor", sort=False):
        p = group["sigma"].to_numpy() / group["sigma"].sum()
        p = p[p > 0]
        rows.append({"tensor": name, "effective_rank": float(np.exp(-(p * np.log(p)).sum())),
                     "full_rank": len(group)})
    return pd.DataFrame(rows)


MLP_MATRICES = ("gate", "up", "down")  # the adapter names them so for Llama, Qwen2 and GPT-2


@dataclass(frozen=True)
class SpecimenParams(DiagnosticParams):
    """Chapter 1 has one knob: the seed of the baseline perplexity's bootstrap interval. Its tables are cheap
    descriptions of the loaded model and are never stored under this name; the one stored table, the baseline,
    is kept under ``core.lab.Baseline``."""

    DIAGNOSTIC = "specimen"
    VERSION = 1

    seed: int = field(default=0, metadata={"help": "seed of the perplexity interval's bootstrap"})


def compute(lab, params: SpecimenParams | None = None, *, recompute: bool = False,
            progress: bool = True) -> dict[str, pd.DataFrame]:
    """Chapter 1's tables (the chapter protocol, ``core.chapter``): architecture, parameter budget, the intact
    model's per-block NLL (stored) and its perplexity with a bootstrap interval."""
    params = params or SpecimenParams()
    baseline = lab.baseline(recompute)
    ppl, low, high = perplexity_interval(baseline["nll"], n_boot=lab.profile.n_boot, seed=params.seed)
    return {"architecture": architecture(lab.specimen), "budget": parameter_budget(lab.specimen),
            "baseline": baseline, "perplexity": pd.DataFrame([{"perplexity": ppl, "ci_low": low, "ci_high": high,
                                                               "mean_nll": float(baseline["nll"].mean())}])}
