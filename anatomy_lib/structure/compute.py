"""Chapter 4, weight structure: do consecutive layers' weight changes anti-correlate?

With D_l = W_(l+1) - W_l, the paper reports corr(D_l, D_(l+1)) of about -0.50 in every component and reads
it as an oscillatory "compensation". But if layers were independent draws W_l = mu + e_l, then
cov(D_l, D_(l+1)) = -Var(e) and Var(D_l) = 2 Var(e), so the correlation is exactly -1/2 with no structure at
all (and 0 at lags of two or more). This module measures the correlation at lags 1-3 and sets it beside null
models: the analytic -0.5, the same weights in shuffled layer order, and a randomly initialised model. A
functional view asks the compensation question directly, on the residual stream: do consecutive layers'
updates to the stream point in opposite directions? And for a quantised specimen, how much of each delta is
quantisation noise, which is independent per layer and so pulls the correlation toward -0.5 by itself?
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from ..core.checks import positive_int
from ..core.params import DiagnosticParams
from ..core.specimens import random_like
from ..core.weightspace import LAGS, correlation, delta_correlation_rows, shuffled_orders


def _corr(a: torch.Tensor, b: torch.Tensor) -> float:
    return correlation(a.detach().reshape(-1).numpy(), b.detach().reshape(-1).numpy())


def delta_correlations_of(weights, lags=LAGS) -> pd.DataFrame:
    """corr(D_l, D_(l+k)) for a (layers, elements) stack (a tensor or an array): one row per (layer l, lag k),
    computed by ``core.weightspace.delta_correlation_rows``, as in the in-browser page."""
    return pd.DataFrame(delta_correlation_rows(np.asarray(weights), lags), columns=["layer", "lag", "corr"])


def delta_correlations(adapter, components=None, lags=LAGS, order=None, model: str = "specimen") -> pd.DataFrame:
    """Tidy table: model, component, layer, lag, corr, for every weight matrix component."""
    components = adapter.matrix_names if components is None else components
    tables = []
    for component in components:
        table = delta_correlations_of(adapter.stacked(component, order), lags)
        tables.append(table.assign(component=component, model=model))
    return pd.concat(tables, ignore_index=True)[["model", "component", "layer", "lag", "corr"]]


def shuffled_null(adapter, n_shuffles: int = 5, seed: int = 0, components=None, lags=LAGS) -> pd.DataFrame:
    """The specimen's own weights in random layer orders: what is left when depth order carries nothing."""
    tables = []
    for i, order in enumerate(shuffled_orders(adapter.n_layers, n_shuffles, seed)):
        tables.append(delta_correlations(adapter, components, lags, order, model="layer-shuffled")
                      .assign(shuffle=i))
    return pd.concat(tables, ignore_index=True)


def delta_correlation_matrix(weights: torch.Tensor) -> np.ndarray:
    """corr(D_i, D_j) for every pair of deltas of a (layers, elements) stack: the delta correlation map."""
    deltas = (weights[1:] - weights[:-1]).double()
    deltas = deltas - deltas.mean(dim=1, keepdim=True)
    deltas = deltas / deltas.norm(dim=1, keepdim=True)
    return (deltas @ deltas.T).numpy()


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and spread of the correlation per model, component and lag."""
    return (table.groupby(["model", "component", "lag"], sort=False)["corr"]
            .agg(mean="mean", std="std", min="min", max="max").reset_index())


def residual_update_correlations(engine) -> pd.DataFrame:
    """The functional view: u_l = h_(l+1) - h_l, each layer's update to the residual stream on real text.

    Reports, per layer, the Pearson correlation of u_l and u_(l+1) over all tokens and dimensions, and the mean
    per-token cosine between them. Compensation would show as consistently negative values.
    """
    rows = []
    for layer in range(engine.adapter.n_layers - 1):
        u = (engine.stream(layer + 1) - engine.stream(layer)).float()
        v = (engine.stream(layer + 2) - engine.stream(layer + 1)).float()
        rows.append({"layer": layer, "corr": _corr(u.reshape(-1), v.reshape(-1)),
                     "mean_token_cosine": F.cosine_similarity(u, v, dim=-1).mean().item()})
    return pd.DataFrame(rows)


def q4_1_noise(weight: torch.Tensor, block: int = 32, tolerance: float = 1e-3) -> dict:
    """Quantisation noise bound of a tensor dequantised from GGUF Q4_1.

    Q4_1 stores each run of 32 weights as min + d * q with q in 0..15 and d = (max - min) / 15, so both the
    block's minimum and maximum are grid points and d can be read back from the dequantised values. Rounding to
    that grid leaves an error of at most d/2, uniform if the original values were spread evenly: variance d^2/12.
    Returns that variance and the share of blocks that really sit on a 16-level grid (a check of the premise).
    """
    flat = weight.detach().double().reshape(-1, block)
    low, high = flat.min(dim=1, keepdim=True).values, flat.max(dim=1, keepdim=True).values
    step = (high - low) / 15
    levels = torch.where(step > 0, (flat - low) / step.clamp_min(1e-30), torch.zeros_like(flat))
    on_grid = ((levels - levels.round()).abs() < tolerance).all(dim=1)
    return {"noise_var": float((step ** 2).mean() / 12), "on_grid_share": float(on_grid.double().mean()),
            "weight_var": float(flat.var())}


def quantisation_share(adapter, components=None) -> pd.DataFrame:
    """Per component and layer: the share of Var(D_l) that Q4_1 rounding noise can explain (2 sigma_q^2 / Var(D))
    and the delta correlation corrected for that noise, (rho Var(D) + sigma_q^2) / (Var(D) - 2 sigma_q^2)."""
    components = adapter.matrix_names if components is None else components
    rows = []
    for component in components:
        weights = adapter.stacked(component)
        noise = [q4_1_noise(w) for w in weights]
        deltas = weights[1:] - weights[:-1]
        for layer in range(len(deltas) - 1):
            var_d = float(deltas[layer].double().var())
            sigma2 = (noise[layer]["noise_var"] + 2 * noise[layer + 1]["noise_var"]
                      + noise[layer + 2]["noise_var"]) / 4  # the layers these two deltas share, averaged
            rho = _corr(deltas[layer], deltas[layer + 1])
            corrected = (rho * var_d + sigma2) / (var_d - 2 * sigma2) if var_d > 2 * sigma2 else float("nan")
            rows.append({"component": component, "layer": layer, "corr": rho, "delta_var": var_d,
                         "noise_var": sigma2, "noise_share": 2 * sigma2 / var_d, "corr_without_noise": corrected,
                         "on_grid_share": min(noise[layer]["on_grid_share"], noise[layer + 1]["on_grid_share"])})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class StructureParams(DiagnosticParams):
    """Which lags, how many layer-shuffled copies, and the seed of the shuffles and the random-init null."""

    DIAGNOSTIC = "structure"
    VERSION = 1

    lags: tuple[int, ...] = field(default=LAGS, metadata={"help": "corr(D_l, D_l+k) for these k"})
    n_shuffles: int = field(default=5, metadata={"help": "layer-shuffled copies of the specimen"})
    seed: int = field(default=0, metadata={"help": "seed of the shuffles and of the random-init null"})

    def __post_init__(self):
        for lag in self.lags:
            positive_int(lag, "lag")
        positive_int(self.n_shuffles, "n_shuffles")


def structure(lab, params: StructureParams = StructureParams(), recompute: bool = False) -> dict[str, pd.DataFrame]:
    """Delta correlations of the specimen beside its nulls (layer-shuffled, random init), the functional
    view on the residual stream, and the quantisation-noise budget."""
    lags = params.lags

    def run():
        null = random_like(lab.specimen, params.seed)
        weights = pd.concat([delta_correlations(lab.adapter, lags=lags).assign(shuffle=-1),
                             shuffled_null(lab.adapter, params.n_shuffles, params.seed, lags=lags),
                             delta_correlations(null.adapter, lags=lags, model="random init").assign(shuffle=-1)],
                            ignore_index=True)
        return {"weights": weights, "functional": residual_update_correlations(lab.engine),
                "quantisation": quantisation_share(lab.adapter)}

    return lab.stored(params, run, recompute)


def compute(lab, params: StructureParams | None = None, *, recompute: bool = False,
            progress: bool = True) -> dict[str, pd.DataFrame]:
    """Chapter 4's tables (the chapter protocol, ``core.chapter``)."""
    return structure(lab, params or lab.defaults(StructureParams), recompute)
