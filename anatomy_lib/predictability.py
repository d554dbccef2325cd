"""Chapter 3, weight predictability: can layer l+1's weights be predicted from earlier layers'?

The paper fits a ridge regression, reports R^2 ~ 0.91 for gate_proj, and finds that the predicted weights,
swapped in, destroy the model (PPL > 100,000): the "R^2-perplexity paradox". It does not say what the samples
and features were, nor whether R^2 was measured on layers the fit had seen. Two formulations, both stated:

- ``layerwise`` (default): a layer is a sample. Each layer's weights are flattened and reduced by a fixed random
  Gaussian projection to ``proj_dim`` features; ridge maps the projections of the ``context`` previous layers to
  the *full* next layer (a multi-output regression). With ~29 samples and more features than samples, an
  in-sample fit is nearly perfect whatever the weights; only held-out layers say anything.
- ``elementwise``: a weight position is a sample. Ridge predicts W_(l+1)[i, j] from W_(l-context+1..l)[i, j]
  (``context`` features), fitted on a seeded subsample of positions.

Two baselines any predictor must beat, both out-of-sample by construction: ``previous layer`` (copy layer t-1)
and ``mean layer`` (the element-wise mean of every layer but t). Ridge is also swept over its context and its
projection size, so no single setting stands for "ridge".

Out-of-sample means leave-one-layer-out: to predict layer t, every layer pair that involves t (as target or as
feature) is left out of the fit. In-sample fits every pair and predicts the layers it was fitted on.
R^2 for a layer is 1 - SSE / SST over its elements (SST around that layer's own mean); cosine is between the
predicted and the real weight vector.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from sklearn.linear_model import Ridge
from tqdm.auto import tqdm

from .checks import one_of, positive_int, positive_number
from .results import DiagnosticParams

FORMULATIONS = ("layerwise", "elementwise")
BASELINES = ("previous layer", "mean layer")
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
    def __init__(self, weights: np.ndarray, context: int, ridge_alpha: float, proj_dim: int, seed: int):
        self.weights, self.context, self.ridge_alpha = weights, context, ridge_alpha
        self.features = weights @ _projection(weights.shape[1], proj_dim, seed)  # (layers, proj_dim)

    def _x(self, sources):
        return np.concatenate([self.features[s] for s in sources])

    def predict(self, train_pairs, target_pair) -> np.ndarray:
        # A ridge prediction is linear in the training targets: fitting the same ridge to the identity targets
        # gives, for the new input, the weight of each training layer, and the prediction is that weighted sum.
        # Identical to fitting on the full weights, without copying them for every fit.
        x = np.stack([self._x(s) for s, _ in train_pairs])
        mixing = Ridge(alpha=self.ridge_alpha).fit(x, np.eye(len(train_pairs))).predict(self._x(target_pair[0])[None])[0]
        targets = [t for _, t in train_pairs]
        return mixing.astype(np.float32) @ self.weights[targets]


class _Elementwise:
    def __init__(self, weights: np.ndarray, context: int, ridge_alpha: float, max_positions: int, seed: int):
        self.weights, self.context, self.ridge_alpha = weights, context, ridge_alpha
        n = weights.shape[1]
        self.sample = np.random.default_rng(seed).choice(n, size=min(n, max_positions), replace=False)

    def predict(self, train_pairs, target_pair) -> np.ndarray:
        x = np.concatenate([self.weights[s][:, self.sample].T for s, _ in train_pairs])
        y = np.concatenate([self.weights[t][self.sample] for _, t in train_pairs])
        model = Ridge(alpha=self.ridge_alpha).fit(x, y)
        return model.predict(self.weights[target_pair[0]].T)


def predict_layers(weights: np.ndarray, formulation: str = "layerwise", context: int = 1, ridge_alpha: float = 1.0,
                   proj_dim: int = 64, max_positions: int = 200_000, seed: int = 0, in_sample: bool = False,
                   targets=None):
    """Predicted weights for each target layer (default: all that have ``context`` earlier layers):
    {target: flat prediction}, out-of-sample unless ``in_sample``."""
    one_of(formulation, FORMULATIONS, "formulation")
    if not 1 <= context < weights.shape[0] - 2:
        raise ValueError(f"context must be in 1..{weights.shape[0] - 3}, got {context}")
    positive_number(ridge_alpha, "ridge_alpha")
    model = (_Layerwise(weights, context, ridge_alpha, proj_dim, seed) if formulation == "layerwise"
             else _Elementwise(weights, context, ridge_alpha, max_positions, seed))
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


def baseline_predictions(weights: np.ndarray, baseline: str, targets) -> dict[int, np.ndarray]:
    """{target: flat prediction} from a baseline: copy the previous layer, or the mean of every other layer."""
    one_of(baseline, BASELINES, "baseline")
    if baseline == "previous layer":
        return {t: weights[t - 1] for t in targets}
    total = weights.sum(axis=0, dtype=np.float64)
    return {t: ((total - weights[t]) / (weights.shape[0] - 1)).astype(np.float32) for t in targets}


@dataclass(frozen=True)
class PredictabilityParams(DiagnosticParams):
    """The ridge fit (formulation, context, penalty, projection) and the layers swapped for predictions."""

    DIAGNOSTIC = "predictability"
    VERSION = 2

    formulation: str = field(default="layerwise", metadata={
        "choices": FORMULATIONS, "help": "a layer is a sample (layerwise) or a weight position is (elementwise)"})
    context: int = field(default=1, metadata={"help": "how many previous layers predict the next"})
    ridge_alpha: float = field(default=1.0, metadata={"help": "ridge penalty"})
    proj_dim: int = field(default=64, metadata={"help": "layerwise: random-projection features per layer"})
    substitutions: tuple[tuple[int, ...], ...] = field(default=((15,), tuple(range(10, 20))), metadata={
        "help": "layer sets whose weights are swapped for predictions, each as 15, 10-19 or 3,5,7"})
    sweep_contexts: tuple[int, ...] = field(default=(1, 2, 3), metadata={
        "help": "contexts of the ridge sweep (held-out R^2 of the specimen)"})
    sweep_proj_dims: tuple[int, ...] = field(default=(16, 64, 256), metadata={
        "help": "layerwise: projection sizes of the ridge sweep"})
    seed: int = field(default=0, metadata={"help": "seed of the projection, the shuffle and the intervals"})

    def __post_init__(self):
        one_of(self.formulation, FORMULATIONS, "formulation")
        for value in self.sweep_contexts + self.sweep_proj_dims:
            positive_int(value, "sweep value")
        positive_int(self.context, "context")
        positive_number(self.ridge_alpha, "ridge_alpha")
        positive_int(self.proj_dim, "proj_dim")


def predictability_table(adapter, params: PredictabilityParams = PredictabilityParams(), components=None,
                         order=None, model: str = "specimen", progress: bool = True) -> pd.DataFrame:
    """Tidy table: model, component, layer, predictor (ridge or a baseline), fit (in/out-of-sample), r2, cosine.
    Baselines are out-of-sample by construction."""
    components = adapter.matrix_names if components is None else components
    rows = []
    for component in tqdm(components, desc=f"ridge ({model})", disable=not progress, leave=False):
        weights = adapter.stacked(component, order).numpy()
        for fit, in_sample in (("out-of-sample", False), ("in-sample", True)):
            predicted = predict_layers(weights, params.formulation, params.context, params.ridge_alpha,
                                       params.proj_dim, seed=params.seed, in_sample=in_sample)
            for target, flat in predicted.items():
                r2, cosine = r2_and_cosine(flat, weights[target])
                rows.append({"model": model, "component": component, "layer": target, "predictor": "ridge",
                             "fit": fit, "r2": r2, "cosine": cosine})
        for baseline in BASELINES:
            for target, flat in baseline_predictions(weights, baseline, range(params.context, len(weights))).items():
                r2, cosine = r2_and_cosine(flat, weights[target])
                rows.append({"model": model, "component": component, "layer": target, "predictor": baseline,
                             "fit": "out-of-sample", "r2": r2, "cosine": cosine})
    return pd.DataFrame(rows)


def ridge_sweep(adapter, params: PredictabilityParams, progress: bool = True) -> pd.DataFrame:
    """Held-out R^2 of ridge for every (context, projection size) of the sweep: component, layer, context,
    proj_dim, r2 (layerwise; the elementwise formulation has no projection, so only context is swept)."""
    dims = params.sweep_proj_dims if params.formulation == "layerwise" else (params.proj_dim,)
    jobs = [(c, d) for c in params.sweep_contexts for d in dims]
    rows = []
    for component in tqdm(adapter.matrix_names, desc="ridge sweep", disable=not progress, leave=False):
        weights = adapter.stacked(component).numpy()
        for context, proj_dim in jobs:
            predicted = predict_layers(weights, params.formulation, context, params.ridge_alpha, proj_dim,
                                       seed=params.seed)
            rows += [{"component": component, "layer": t, "context": context, "proj_dim": proj_dim,
                      "r2": r2_and_cosine(flat, weights[t])[0]} for t, flat in predicted.items()]
    return pd.DataFrame(rows)


def substitution(params: PredictabilityParams, layers, in_sample: bool = False, predictor: str = "ridge"):
    """The edit that swaps every matrix of ``layers`` for its prediction (ridge, or a baseline) from the real
    layers."""
    one_of(predictor, ("ridge",) + BASELINES, "predictor")

    def edit(editor) -> None:
        adapter = editor.adapter
        for component in adapter.matrix_names:
            weights = adapter.stacked(component).numpy()
            if predictor == "ridge":
                predicted = predict_layers(weights, params.formulation, params.context, params.ridge_alpha,
                                           params.proj_dim, seed=params.seed, in_sample=in_sample, targets=layers)
            else:
                predicted = baseline_predictions(weights, predictor, layers)
            for layer in layers:
                shape = adapter.tensor(layer, component).shape
                editor.replace(layer, component, torch.from_numpy(predicted[layer].reshape(shape)))

    return edit


def substitute_predictions(lab, layers, params: PredictabilityParams = PredictabilityParams(),
                           in_sample: bool = False, predictor: str = "ridge"):
    """Swap every matrix of ``layers`` for its predicted weights and measure perplexity: the paradox, measured.
    Returns a ``Measurement``."""
    layers = sorted({lab.adapter.check_layer(l) for l in layers})
    if min(layers) < params.context:
        raise ValueError(f"layers below {params.context} have no {params.context} earlier layers to predict from")
    return lab.measure(substitution(params, layers, in_sample, predictor), seed=params.seed)


def predictability(lab, params: PredictabilityParams = PredictabilityParams(), recompute: bool = False,
                   progress: bool = True) -> dict[str, pd.DataFrame]:
    """R^2 and cosine for the specimen, a layer-shuffled copy and a randomly initialised model of the same
    config (in- and out-of-sample), plus the perplexity of the specimen with predicted weights swapped in."""
    from .specimens import random_like

    n_layers = lab.adapter.n_layers
    substitutions = [tuple(l for l in layers if params.context <= l < n_layers) for layers in params.substitutions]
    substitutions = [s for s in substitutions if s]

    def compute():
        order = np.random.default_rng(params.seed).permutation(n_layers).tolist()
        null = random_like(lab.specimen, params.seed)
        fits = pd.concat([predictability_table(lab.adapter, params, model="specimen", progress=progress),
                          predictability_table(lab.adapter, params, order=order, model="layer-shuffled",
                                               progress=progress),
                          predictability_table(null.adapter, params, model="random init", progress=progress)],
                         ignore_index=True)
        del null
        rows = []
        jobs = [("ridge", "out-of-sample", False), ("ridge", "in-sample", True)] + [
            (b, "out-of-sample", False) for b in BASELINES]
        for layers in tqdm(substitutions, desc="substitution", disable=not progress, leave=False):
            for predictor, fit, in_sample in jobs:
                measured = substitute_predictions(lab, layers, params, in_sample, predictor)
                rows.append({"layers": f"{layers[0]}-{layers[-1]}" if len(layers) > 1 else str(layers[0]),
                             "n_layers": len(layers), "predictor": predictor, "fit": fit, **measured.row()})
        return {"fits": fits, "substitution": pd.DataFrame(rows),
                "sweep": ridge_sweep(lab.adapter, params, progress)}

    return lab.stored(params, compute, recompute)


def paper_claims(tables: dict[str, pd.DataFrame]):
    """R^2 ~ 0.91 for gate and PPL > 100,000 after substitution, beside ours, each judged by a rule of
    ``verdicts``. In-sample R^2 is judged uninformative: a randomly initialised model scores as high."""
    from . import verdicts as v

    fits = tables["fits"].query("predictor == 'ridge'")
    mean = fits.groupby(["model", "component", "fit"])["r2"].mean()
    gate = "gate" if ("specimen", "gate", "in-sample") in mean.index else fits["component"].iloc[0]
    ins, oos = mean[("specimen", gate, "in-sample")], mean[("specimen", gate, "out-of-sample")]
    rnd = mean[("random init", gate, "in-sample")]
    best = _best_baseline(tables["fits"], gate)
    claims = [v.Claim(f"R^2 of {gate}, in-sample", f"{PAPER['gate_r2']:.2f}", f"{ins:.2f}", v.uninformative(),
                      f"a randomly initialised model scores {rnd:.2f} in-sample", "uninformative"),
              v.Claim(f"R^2 of {gate}, held-out layers", f"{PAPER['gate_r2']:.2f} (split not stated)", f"{oos:.2f}",
                      v.number(PAPER["gate_r2"], oos, absolute=0.1),
                      f"leave-one-layer-out; the {best[0]} baseline scores {best[1]:.2f}", "number")]
    sub = tables["substitution"].query("predictor == 'ridge' and fit == 'out-of-sample'")
    for row in sub.itertuples():
        claims.append(v.Claim(f"PPL after substituting layer(s) {row.layers}", f"> {PAPER['substitution_ppl']:,.0f}",
                              f"{row.ppl:,.1f} ({row.change_pct:+,.0f}% [{row.ci_low:+,.0f}, {row.ci_high:+,.0f}])",
                              v.bound(PAPER["substitution_ppl"], row.ppl, row.base_ppl * (1 + row.ci_low / 100),
                                      reference=row.base_ppl),
                              f"baseline {row.base_ppl:.2f}; out-of-sample ridge predictions", "bound"))
    return claims


def _best_baseline(fits: pd.DataFrame, component: str) -> tuple[str, float]:
    means = fits.query("model == 'specimen' and component == @component and predictor != 'ridge'") \
        .groupby("predictor")["r2"].mean()
    return str(means.idxmax()), float(means.max())


def findings(tables: dict[str, pd.DataFrame], specimen: str) -> list[str]:
    """What chapter 3 finds, in sentences computed from its tables."""
    fits = tables["fits"]
    spec = fits[fits["model"] == "specimen"]
    held = spec[spec["fit"] == "out-of-sample"].groupby(["predictor", "component"])["r2"].mean().unstack(0)
    ins = spec[(spec["fit"] == "in-sample")].groupby("component")["r2"].mean()
    rnd = fits[(fits["model"] == "random init") & (fits["fit"] == "in-sample")]["r2"].mean()
    out = [f"On {specimen}, ridge fits the layers it has seen almost exactly (in-sample R^2 {ins.min():.2f} to "
           f"{ins.max():.2f} over the components), and so does a randomly initialised model ({rnd:.2f} on average): "
           "in-sample R^2 measures the regression's capacity, not the weights."]
    out.append(f"On held-out layers ridge scores R^2 {held['ridge'].min():+.2f} to {held['ridge'].max():+.2f}; "
               f"copying the previous layer {held['previous layer'].min():+.2f} to "
               f"{held['previous layer'].max():+.2f}; "
               f"the mean of the other layers {held['mean layer'].min():+.2f} to {held['mean layer'].max():+.2f}.")
    worse = [c for c in held.index if held.loc[c, "ridge"] < held.loc[c, "mean layer"]]
    out.append(f"Ridge does worse than the mean layer in {len(worse)} of {len(held)} components"
               + (f" ({', '.join(worse)})." if worse else "."))
    if "sweep" in tables and not tables["sweep"].empty:
        sweep = tables["sweep"].groupby(["context", "proj_dim"])["r2"].mean()
        (c, d), top = sweep.idxmax(), sweep.max()
        out.append(f"The best ridge setting of the sweep ({len(sweep)} settings of context and projection size) "
                   f"is context {c}, {d} features, at mean held-out R^2 {top:+.2f} over components and layers; "
                   f"the mean layer scores {held['mean layer'].mean():+.2f}.")
    sub = tables["substitution"]
    for layers, group in sub[sub["fit"] == "out-of-sample"].groupby("layers", sort=False):
        parts = [f"{r.predictor} {r.change_pct:+,.0f}% [{r.ci_low:+,.0f}, {r.ci_high:+,.0f}]"
                 for r in group.itertuples()]
        out.append(f"Swapping layer(s) {layers} for predictions changes perplexity by: " + "; ".join(parts) + ".")
    return out
