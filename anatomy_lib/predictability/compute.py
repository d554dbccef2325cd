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
from tqdm.auto import tqdm

from ..core.checks import one_of, positive_int, positive_number
from ..core.params import DiagnosticParams, PaperLayers
from ..core.specimens import random_like
from ..core.weightspace import (
    BASELINES,
    FORMULATIONS,
    LayerGram,
    baseline_predictions,
    fit_rows,
    held_out_scores,
    predict_layers,
)


@dataclass(frozen=True)
class PredictabilityParams(DiagnosticParams):
    """The ridge fit (formulation, context, penalty, projection) and the layers swapped for predictions."""

    DIAGNOSTIC = "predictability"
    VERSION = 3  # 3: ridge solved in numpy float64 (core.weightspace, shared with the in-browser page)

    formulation: str = field(default="layerwise", metadata={
        "choices": FORMULATIONS, "help": "a layer is a sample (layerwise) or a weight position is (elementwise)"})
    context: int = field(default=1, metadata={"help": "how many previous layers predict the next"})
    ridge_alpha: float = field(default=1.0, metadata={"help": "ridge penalty"})
    proj_dim: int = field(default=64, metadata={"help": "layerwise: random-projection features per layer"})
    substitutions: tuple[tuple[int, ...], ...] = field(default=(PaperLayers((15,)), PaperLayers(range(10, 20))),
                                                      metadata={"layers": True, "help": "layer sets whose weights "
                                                                "are swapped for predictions, each as 15, 10-19 "
                                                                "or 3,5,7"})
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
        rows += [{"model": model, "component": component, **row}
                 for row in fit_rows(weights, params.formulation, params.context, params.ridge_alpha,
                                     params.proj_dim, params.seed)]
    return pd.DataFrame(rows, columns=["model", "component", "layer", "predictor", "fit", "r2", "cosine"])


def ridge_sweep(adapter, params: PredictabilityParams, progress: bool = True) -> pd.DataFrame:
    """Held-out R^2 of ridge for every (context, projection size) of the sweep: component, layer, context,
    proj_dim, r2 (layerwise; the elementwise formulation has no projection, so only context is swept)."""
    dims = params.sweep_proj_dims if params.formulation == "layerwise" else (params.proj_dim,)
    jobs = [(c, d) for c in params.sweep_contexts for d in dims]
    rows = []
    for component in tqdm(adapter.matrix_names, desc="ridge sweep", disable=not progress, leave=False):
        weights = adapter.stacked(component).numpy()
        gram = LayerGram(weights)
        for context, proj_dim in jobs:
            scores = held_out_scores(weights, params.formulation, context, params.ridge_alpha, proj_dim,
                                     params.seed, gram=gram)
            rows += [{"component": component, "layer": t, "context": context, "proj_dim": proj_dim, "r2": r2}
                     for t, (r2, _) in scores.items()]
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
                editor.replace(layer, component, torch.from_numpy(predicted[layer].reshape(shape)).float())

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
    params = params.resolved(lab)
    n_layers = lab.adapter.n_layers
    substitutions = [tuple(l for l in layers if params.context <= l < n_layers) for layers in params.substitutions]
    substitutions = [s for s in substitutions if s]

    def run():
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

    return lab.stored(params, run, recompute)


def compute(lab, params: PredictabilityParams | None = None, *, recompute: bool = False,
            progress: bool = True) -> dict[str, pd.DataFrame]:
    """Chapter 3's tables (the chapter protocol, ``core.chapter``)."""
    return predictability(lab, params or lab.defaults(PredictabilityParams), recompute, progress)
