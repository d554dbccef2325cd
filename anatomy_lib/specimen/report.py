"""Chapter 1 in sentences and verdicts: what the specimen is, beside the paper's description of it."""
from __future__ import annotations

import pandas as pd

from ..core import rules as v
from .compute import MLP_MATRICES


def findings(tables: dict[str, pd.DataFrame], params=None, specimen_name: str = "the specimen") -> list[str]:
    """What chapter 1 finds, in sentences computed from its tables (the parameter budget, the architecture and
    the baseline perplexity with its interval)."""
    budget, ppl = tables["budget"], tables["perplexity"].iloc[0]
    n_layers = int(dict(zip(tables["architecture"]["property"], tables["architecture"]["value"]))["decoder layers"])
    share = dict(zip(budget["part"], budget["share_pct"]))
    count = dict(zip(budget["part"], budget["parameters"]))
    embedding = next(p for p in share if p.startswith("token embedding"))
    layer = count["one decoder layer"]
    names = {k.split()[-1]: v for k, v in count.items() if k.startswith("layer tensor ")}
    mlp = sum(v for k, v in names.items() if k in MLP_MATRICES)
    out = [f"{specimen_name} has {count['total (unique parameters)']:,} unique parameters: the {embedding} holds "
           f"{share[embedding]:.1f}% of them and the {n_layers} decoder layers "
           f"{share[f'all {n_layers} decoder layers']:.1f}%, {layer:,} per layer."]
    if mlp:
        out.append(f"Within a layer the MLP matrices hold {100 * mlp / layer:.1f}% of the weights.")
    if {"q", "k"} <= set(names):
        out.append(f"Grouped-query attention makes k {names['k'] / names['q']:.2f} the size of q "
                   f"({names['k']:,} against {names['q']:,} weights).")
    out.append(f"Its perplexity on the evaluation blocks is {ppl.perplexity:.2f} (95% bootstrap interval "
               f"{ppl.ci_low:.2f} to {ppl.ci_high:.2f}).")
    return out


PAPER = {"decoder layers": 30, "d_model": 576, "query heads": 9, "key/value heads": 3, "MLP width": 1536,
         "vocabulary": 49152, "tied embeddings": True, "parameters_millions": 134.5}


def paper_claims(tables: dict[str, pd.DataFrame], params=None):
    """The paper's description of its specimen beside the loaded model's ``architecture`` table."""
    arch = tables["architecture"]
    ours = dict(zip(arch["property"], arch["value"]))
    claims = [v.Claim(k, str(PAPER[k]), str(ours[k]), v.qualitative(ours[k] == PAPER[k]), "", "qualitative")
              for k in PAPER if k in ours]
    millions = ours["parameters"] / 1e6
    claims.append(v.Claim("parameters", f"~{PAPER['parameters_millions']}M", f"{millions:.2f}M",
                          v.number(PAPER["parameters_millions"], millions, absolute=0.1), "within 0.1M", "number"))
    return v.in_experiment("the specimen's configuration", claims)
