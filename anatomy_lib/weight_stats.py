"""Descriptive statistics of a specimen's weights: architecture, norms per layer, singular-value spectra."""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch


def architecture(specimen) -> pd.DataFrame:
    """The specimen's architecture as read from its config and adapter (one row per fact)."""
    adapter, config = specimen.adapter, specimen.model.config
    get = lambda *names: next((getattr(config, n) for n in names if getattr(config, n, None) is not None), None)
    heads = get("num_attention_heads", "n_head")
    facts = [
        ("family", adapter.family),
        ("decoder layers", adapter.n_layers),
        ("d_model", adapter.hidden_size),
        ("query heads", heads),
        ("key/value heads", get("num_key_value_heads") or heads),
        ("head dim", adapter.hidden_size // heads),
        ("MLP width", adapter.tensor(0, "up").shape[0]),
        ("MLP gating", "SwiGLU" if "gate" in adapter.tensor_names else "none"),
        ("norms per layer", sum(n.endswith("norm") for n in adapter.tensor_names)),
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
             {"part": f"all {adapter.n_layers} decoder layers", "shape": "", "parameters": per_layer * adapter.n_layers},
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
    """Tidy table: layer, tensor, Frobenius norm and RMS of every named tensor."""
    rows = []
    for layer in range(adapter.n_layers):
        for name, tensor in adapter.tensors(layer).items():
            t = tensor.detach().float()
            rows.append({"layer": layer, "tensor": name, "kind": "matrix" if t.ndim == 2 else "vector",
                         "frobenius": t.norm().item(), "rms": t.pow(2).mean().sqrt().item()})
    return pd.DataFrame(rows)


def singular_values(adapter, layer: int, names=None) -> pd.DataFrame:
    """Singular values of a layer's matrices, largest first, with each normalised by the largest."""
    names = adapter.matrix_names if names is None else names
    rows = []
    for name in names:
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


def findings(budget: pd.DataFrame, adapter, specimen: str, ppl: tuple[float, float, float]) -> list[str]:
    """What chapter 1 finds, in sentences computed from the parameter budget and the baseline perplexity
    (point, low, high)."""
    share = dict(zip(budget["part"], budget["share_pct"]))
    count = dict(zip(budget["part"], budget["parameters"]))
    embedding = next(p for p in share if p.startswith("token embedding"))
    layer = count["one decoder layer"]
    names = {k.split()[-1]: v for k, v in count.items() if k.startswith("layer tensor ")}
    mlp = sum(v for k, v in names.items() if k in MLP_MATRICES)
    out = [f"{specimen} has {count['total (unique parameters)']:,} unique parameters: the {embedding} holds "
           f"{share[embedding]:.1f}% of them and the {adapter.n_layers} decoder layers "
           f"{share[f'all {adapter.n_layers} decoder layers']:.1f}%, {layer:,} per layer."]
    if mlp:
        out.append(f"Within a layer the MLP matrices hold {100 * mlp / layer:.1f}% of the weights.")
    if {"q", "k"} <= set(names):
        out.append(f"Grouped-query attention makes k {names['k'] / names['q']:.2f} the size of q "
                   f"({names['k']:,} against {names['q']:,} weights).")
    out.append(f"Its perplexity on the evaluation blocks is {ppl[0]:.2f} (95% bootstrap interval "
               f"{ppl[1]:.2f} to {ppl[2]:.2f}).")
    return out


PAPER = {"decoder layers": 30, "d_model": 576, "query heads": 9, "key/value heads": 3, "MLP width": 1536,
         "vocabulary": 49152, "tied embeddings": True, "parameters_millions": 134.5}


def paper_claims(arch: pd.DataFrame):
    """The paper's description of its specimen beside the loaded model's ``architecture`` table."""
    from . import verdicts as v

    ours = dict(zip(arch["property"], arch["value"]))
    claims = [v.Claim(k, str(PAPER[k]), str(ours[k]), v.qualitative(ours[k] == PAPER[k]), "", "qualitative")
              for k in PAPER if k in ours]
    millions = ours["parameters"] / 1e6
    claims.append(v.Claim("parameters", f"~{PAPER['parameters_millions']}M", f"{millions:.2f}M",
                          v.number(PAPER["parameters_millions"], millions, absolute=0.1), "within 0.1M", "number"))
    return claims
