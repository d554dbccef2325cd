"""Diagnostic 2, weight predictability: can layer l+1's weights be predicted from earlier layers'?

The paper fits a ridge regression, reports R^2 ~ 0.91 for gate_proj, and finds that the predicted weights,
swapped in, destroy the model (PPL > 100,000): the "R^2-perplexity paradox". It does not say what the samples
and features were, nor whether R^2 was measured on layers the fit had seen. Two formulations, both stated:

- ``layerwise`` (default): a layer is a sample. Each layer's weights are flattened and reduced by a fixed random
  Gaussian projection to ``proj_dim`` features; ridge maps the projections of the ``context`` previous layers to
  the *full* next layer (a multi-output regression). With ~29 samples and more features than samples, an
  in-sample fit is nearly perfect whatever the weights; only held-out layers say anything.
- ``elementwise``: a weight position is a sample. Ridge predicts W_(l+1)[i, j] from W_(l-context+1..l)[i, j]
  (``context`` features), fitted on a seeded subsample of positions.

Out-of-sample means leave-one-layer-out: to predict layer t, every layer pair that involves t (as target or as
feature) is left out of the fit. In-sample fits every pair and predicts the layers it was fitted on.
R^2 for a layer is 1 - SSE / SST over its elements (SST around that layer's own mean); cosine is between the
predicted and the real weight vector.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from sklearn.linear_model import Ridge
from tqdm.auto import tqdm

from .structure import stacked

FORMULATIONS = ("layerwise", "elementwise")
PAPER = {"gate_r2": 0.91, "substitution_ppl": 100_000.0}


def r2_and_cosine(predicted: np.ndarray, actual: np.ndarray) -> tuple[float, float]:
    sse = float(np.sum((actual - predicted) ** 2))
    sst = float(np.sum((actual - actual.mean()) ** 2))
    cosine = float(predicted @ actual / (np.linalg.norm(predicted) * np.linalg.norm(actual) + 1e-30))
    return 1.0 - sse / sst, cosine


def _pairs(n_layers: int, context: int) -> list[tuple[list[int], int]]:
    return [(list(range(t - context, t)), t) for t in range(context, n_layers)]


def _projection(n_features: int, proj_dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n_features, proj_dim)).astype(np.float32) / np.sqrt(proj_dim)


class _Layerwise:
    def __init__(self, weights: np.ndarray, context: int, alpha: float, proj_dim: int, seed: int):
        self.weights, self.context, self.alpha = weights, context, alpha
        self.features = weights @ _projection(weights.shape[1], proj_dim, seed)  # (layers, proj_dim)

    def _x(self, sources):
        return np.concatenate([self.features[s] for s in sources])

    def predict(self, train_pairs, target_pair) -> np.ndarray:
        # A ridge prediction is linear in the training targets: fitting the same ridge to the identity targets
        # gives, for the new input, the weight of each training layer, and the prediction is that weighted sum.
        # Identical to fitting on the full weights, without copying them for every fit.
        x = np.stack([self._x(s) for s, _ in train_pairs])
        mixing = Ridge(alpha=self.alpha).fit(x, np.eye(len(train_pairs))).predict(self._x(target_pair[0])[None])[0]
        targets = [t for _, t in train_pairs]
        return mixing.astype(np.float32) @ self.weights[targets]


class _Elementwise:
    def __init__(self, weights: np.ndarray, context: int, alpha: float, max_positions: int, seed: int):
        self.weights, self.context, self.alpha = weights, context, alpha
        n = weights.shape[1]
        self.sample = np.random.default_rng(seed).choice(n, size=min(n, max_positions), replace=False)

    def predict(self, train_pairs, target_pair) -> np.ndarray:
        x = np.concatenate([self.weights[s][:, self.sample].T for s, _ in train_pairs])
        y = np.concatenate([self.weights[t][self.sample] for _, t in train_pairs])
        model = Ridge(alpha=self.alpha).fit(x, y)
        return model.predict(self.weights[target_pair[0]].T)


def predict_layers(weights: np.ndarray, formulation: str = "layerwise", context: int = 1, alpha: float = 1.0,
                   proj_dim: int = 64, max_positions: int = 200_000, seed: int = 0, in_sample: bool = False,
                   targets=None):
    """Predicted weights for each target layer (default: all that have ``context`` earlier layers):
    {target: flat prediction}, out-of-sample unless ``in_sample``."""
    if formulation not in FORMULATIONS:
        raise ValueError(f"unknown formulation {formulation!r}; choose one of {list(FORMULATIONS)}")
    if not 1 <= context < weights.shape[0] - 2:
        raise ValueError(f"context must be in 1..{weights.shape[0] - 3}, got {context}")
    if not np.isfinite(alpha) or alpha <= 0:
        raise ValueError(f"ridge alpha must be a positive finite number, got {alpha}")
    model = (_Layerwise(weights, context, alpha, proj_dim, seed) if formulation == "layerwise"
             else _Elementwise(weights, context, alpha, max_positions, seed))
    pairs = _pairs(weights.shape[0], context)
    valid = [t for _, t in pairs]
    if targets is not None and not set(targets) <= set(valid):
        raise ValueError(f"target layers must be in {valid[0]}..{valid[-1]} (each needs {context} earlier layers)")
    out = {}
    for pair in pairs:
        target = pair[1]
        if targets is not None and target not in targets:
            continue
        train = pairs if in_sample else [p for p in pairs if target not in p[0] and p[1] != target]
        out[target] = model.predict(train, pair)
    return out


def predictability_table(adapter, components=None, formulation: str = "layerwise", context: int = 1,
                         alpha: float = 1.0, proj_dim: int = 64, seed: int = 0, order=None,
                         model: str = "specimen", progress: bool = True) -> pd.DataFrame:
    """Tidy table: model, component, layer, fit (in/out-of-sample), r2, cosine."""
    components = adapter.matrix_names if components is None else components
    rows = []
    for component in tqdm(components, desc=f"ridge ({model})", disable=not progress, leave=False):
        weights = stacked(adapter, component, order).numpy()
        for fit, in_sample in (("out-of-sample", False), ("in-sample", True)):
            predicted = predict_layers(weights, formulation, context, alpha, proj_dim, seed=seed,
                                       in_sample=in_sample)
            for target, flat in predicted.items():
                r2, cosine = r2_and_cosine(flat, weights[target])
                rows.append({"model": model, "component": component, "layer": target, "fit": fit,
                             "r2": r2, "cosine": cosine})
    return pd.DataFrame(rows)


def substitute_predictions(lab, layers, formulation: str = "layerwise", context: int = 1, alpha: float = 1.0,
                           proj_dim: int = 64, seed: int = 0, in_sample: bool = False):
    """Swap every matrix of ``layers`` for its predicted weights (each from the real earlier layers) and
    measure perplexity: the paradox, measured. Returns (change %, low, high, perplexity)."""
    from .stats import paired_change_interval
    from .surgery import surgery

    adapter, engine = lab.adapter, lab.engine  # the engine's cache must be built before any edit
    layers = sorted({adapter.check_layer(l) for l in layers})
    if min(layers) < context:
        raise ValueError(f"layers below {context} have no {context} earlier layers to predict from")
    with surgery(adapter) as op:
        for component in adapter.matrix_names:
            weights = stacked(adapter, component).numpy()
            predicted = predict_layers(weights, formulation, context, alpha, proj_dim, seed=seed,
                                       in_sample=in_sample, targets=layers)
            for layer in layers:
                shape = adapter.tensor(layer, component).shape
                op.replace(layer, component, torch.from_numpy(predicted[layer].reshape(shape)))
        result = engine.evaluate()
    change, low, high = paired_change_interval(engine.baseline.block_nll, result.block_nll,
                                               lab.profile.n_boot, seed)
    return change, low, high, result.perplexity


def predictability(lab, formulation: str = "layerwise", context: int = 1, alpha: float = 1.0, proj_dim: int = 64,
                   substitutions=((15,), tuple(range(10, 20))), seed: int = 0, recompute: bool = False,
                   progress: bool = True) -> dict[str, pd.DataFrame]:
    """R^2 and cosine for the specimen, a layer-shuffled copy and a randomly initialised model of the same
    config (in- and out-of-sample), plus the perplexity of the specimen with predicted weights swapped in."""
    from .results import load_or_compute
    from .specimens import random_like

    n_layers = lab.adapter.n_layers
    substitutions = [tuple(l for l in layers if context <= l < n_layers) for layers in substitutions]
    substitutions = [s for s in substitutions if s]
    params = {"formulation": formulation, "context": context, "alpha": alpha, "proj_dim": proj_dim,
              "substitutions": [list(s) for s in substitutions], "seed": seed}

    def compute():
        kw = dict(formulation=formulation, context=context, alpha=alpha, proj_dim=proj_dim, seed=seed,
                  progress=progress)
        order = np.random.default_rng(seed).permutation(n_layers).tolist()
        null = random_like(lab.specimen, seed)
        fits = pd.concat([predictability_table(lab.adapter, model="specimen", **kw),
                          predictability_table(lab.adapter, order=order, model="layer-shuffled", **kw),
                          predictability_table(null.adapter, model="random init", **kw)], ignore_index=True)
        del null
        rows = []
        for layers in tqdm(substitutions, desc="substitution", disable=not progress, leave=False):
            for fit, in_sample in (("out-of-sample", False), ("in-sample", True)):
                change, low, high, ppl = substitute_predictions(lab, layers, formulation, context, alpha,
                                                                proj_dim, seed, in_sample)
                rows.append({"layers": f"{layers[0]}-{layers[-1]}" if len(layers) > 1 else str(layers[0]),
                             "n_layers": len(layers), "fit": fit, "ppl": ppl,
                             "base_ppl": lab.engine.baseline.perplexity, "change_pct": change, "ci_low": low,
                             "ci_high": high})
        return {"fits": fits, "substitution": pd.DataFrame(rows)}

    tables, _ = load_or_compute("predictability", lab.request(params), compute, device=lab.specimen.device,
                                recompute=recompute)
    return tables


def paper_claims(tables: dict[str, pd.DataFrame]):
    """R^2 ~ 0.91 for gate and PPL > 100,000 after substitution, beside ours, verdicts computed."""
    from .report import Claim, verdict

    fits = tables["fits"]
    mean = fits.groupby(["model", "component", "fit"])["r2"].mean()
    gate = "gate" if ("specimen", "gate", "in-sample") in mean.index else fits["component"].iloc[0]
    ins, oos = mean[("specimen", gate, "in-sample")], mean[("specimen", gate, "out-of-sample")]
    rnd = mean[("random init", gate, "in-sample")]
    claims = [Claim(f"R^2 of {gate}, in-sample", f"{PAPER['gate_r2']:.2f}", f"{ins:.2f}",
                    verdict(abs(ins - PAPER["gate_r2"]) < 0.1, partly=ins > 0.5),
                    f"a randomly initialised model scores {rnd:.2f} in-sample"),
              Claim(f"R^2 of {gate}, held-out layers", f"{PAPER['gate_r2']:.2f} (split not stated)", f"{oos:.2f}",
                    verdict(oos > PAPER["gate_r2"] - 0.1, partly=oos > 0.3),
                    "leave-one-layer-out: the only R^2 that measures prediction")]
    sub = tables["substitution"].query("fit == 'out-of-sample'")
    for row in sub.itertuples():
        claims.append(Claim(f"PPL after substituting layer(s) {row.layers}", f"> {PAPER['substitution_ppl']:,.0f}",
                            f"{row.ppl:,.1f} ({row.change_pct:+,.0f}%)",
                            verdict(row.ppl > PAPER["substitution_ppl"], partly=row.change_pct > 100),
                            f"baseline {row.base_ppl:.2f}; out-of-sample predictions"))
    return claims
