"""The two specimens' stored answers for the page "Dissect your own model", in the page's shape: per component,
held-out R^2 per layer for ridge and its two baselines (chapter 3's ``fits``) and the lag-1 delta correlation per
layer with its layer-shuffled range (chapter 4's ``weights``), read through the chapters' own ``compute`` at
their defaults, so the page's lines are the chapters' numbers."""
from __future__ import annotations

from dataclasses import asdict

from .. import predictability, structure
from ..core.dissection import DissectionParams
from ..core.weightspace import ANALYTIC_NULL

HELD_OUT = "out-of-sample"


def specimen_reference(lab, label: str | None = None) -> dict:
    """One specimen's stored answers: {label, n_layers, ridge: {component: {predictor: [[layer, r2]]}},
    deltas: {component: [[layer, corr]]}, null: {component: [[layer, low, high]]}, layers: {}}."""
    fits = predictability.compute(lab, progress=False)["fits"]
    held = fits.query("model == 'specimen' and fit == @HELD_OUT")
    weights = structure.compute(lab, progress=False)["weights"].query("lag == 1")
    ridge = {}
    for (component, predictor), group in held.groupby(["component", "predictor"], sort=False):
        ridge.setdefault(component, {})[predictor] = group[["layer", "r2"]].values.tolist()
    deltas = {c: g[["layer", "corr"]].values.tolist()
              for c, g in weights.query("model == 'specimen'").groupby("component", sort=False)}
    shuffled = weights.query("model == 'layer-shuffled'").groupby(["component", "layer"])["corr"].agg(["min", "max"])
    null = {}
    for (component, layer), row in shuffled.iterrows():
        null.setdefault(component, []).append([int(layer), float(row["min"]), float(row["max"])])
    for rows in ridge.values():
        for predictor in rows:
            rows[predictor] = [[int(l), float(v)] for l, v in rows[predictor]]
    return {"label": label or lab.specimen.name, "name": lab.specimen.name, "n_layers": lab.adapter.n_layers,
            "ridge": ridge, "deltas": {c: [[int(l), float(v)] for l, v in rows] for c, rows in deltas.items()},
            "null": null, "layers": {}, "model": None}


def reference(labs) -> dict:
    """What the page embeds: each lab's stored answers, the parameters the browser uses, the paper's values."""
    params = DissectionParams()
    chapter3 = predictability.Params()
    chapter4 = structure.Params()
    if (chapter3.ridge_alpha, chapter3.proj_dim, chapter3.seed, chapter3.context) != (
            params.ridge_alpha, params.proj_dim, params.seed, 1) or (chapter4.n_shuffles, chapter4.seed) != (
            params.n_shuffles, params.seed):
        raise ValueError("core.dissection's parameters differ from chapters 3 and 4's defaults: the page's numbers "
                         "would not be comparable with the specimens'")
    paper = predictability.PAPER["gate_r2"]
    return {"specimens": [specimen_reference(lab, f"{lab.specimen.name} (stored)") for lab in labs],
            "params": asdict(params),
            "paper": {"r2": paper, "r2_component": "gate",
                      "r2_label": f"paper: R² ≈ {paper:g} for gate_proj (its fit unstated; chapter 3 finds that "
                                  "value only in-sample)",
                      "delta_label": f"independent layers: {ANALYTIC_NULL[1]:g} exactly (paper: about -0.50)"}}
