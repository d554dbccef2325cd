"""The quantisation null: how much of chapters 3 and 4's weight statistics 4-bit rounding creates or destroys.

Both offline specimens are quantised (SmolLM2 to Q4_1, Gemma to llama.cpp's Q4_K_M mix). Rounding error is
independent from layer to layer, so it can push a weight statistic toward the independent-layers nulls those
chapters compare against. Here the statistics are measured on fp32 models the book controls, then on the same
models quantised to each specimen's scheme by the ``core.quantise`` quantisers and read back, as a GGUF loader
would: the change is what quantisation does to the statistic.

Models (``QuantisationParams``): chapter 7's 12-layer models, retrained deterministically from their seeds (the
``uniform`` arm, trained from scratch, and ``gstack``, grown by stacking copies of a trained 3-layer base: the
strongest cross-layer similarity the book can build, where erasing structure would show first), and the
randomly initialised model of the same shape (independent layers by construction: what rounding does where
there is nothing to erase). Each retrained model's final validation loss is recorded beside the stored chapter-7
run of the same arm and seed, so a reader sees that it is that model.

Statistics: chapter 3's table (ridge in and out of sample, the baselines, R^2 and cosine per layer and component;
``predictability_table``) and chapter 4's delta correlations with their layer-shuffled null
(``delta_correlations``, ``shuffled_null``), on every model and scheme. The quantised copy lives inside a weight
surgery, so each model is back to fp32 bit for bit before the next scheme.

While the retrained fp32 models are at hand, their massive-activation profile (chapter 2's
``activation_profile``, on chapter 7's importance blocks) is recorded too: the atlas draws chapter 7's models
beside the specimens with it, and training them a second time for it would double the cost.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..core.adapter import ModelAdapter
from ..core.checks import positive_int
from ..core.corpus import TokenBlocks
from ..core.engine import PerplexityEngine
from ..core.quantise import QK_K, quantise
from ..core.specimens import weights_hash
from ..core.surgery import surgery
from ..growth.compute import text_data, through_store
from ..growth.models import build_model
from ..growth.params import ARMS, GrowthParams
from ..growth.trainer import train
from ..importance.activations import ActivationParams, activation_profile
from ..predictability.compute import PredictabilityParams, predictability_table
from ..structure.compute import delta_correlations, shuffled_null

FP32 = "fp32"
SCHEMES = ("Q4_1", "Q4_K_M")  # SmolLM2's GGUF (Q4_1 throughout) and Gemma's (llama.cpp's Q4_K_M mix)
SCHEME_SPECIMEN = {"Q4_1": "SmolLM2's", "Q4_K_M": "Gemma's"}
NULL_ARMS = ("uniform", "gstack")
RANDOM_INIT = "random init"
K_FALLBACK = {"Q4_K": "Q5_0", "Q6_K": "Q8_0"}  # llama.cpp's format for a row that is not a multiple of 256


def use_more_bits(layer: int, n_layers: int) -> bool:
    """llama.cpp's choice of the layers whose v and down get Q6_K under Q4_K_M: the first and last eighth of the
    depth and every third layer between (integer division, as in C)."""
    return layer < n_layers // 8 or layer >= 7 * n_layers // 8 or (layer - n_layers // 8) % 3 == 2


def tensor_format(scheme: str, component: str, layer: int, n_layers: int, row_length: int) -> str:
    """The GGUF format ``scheme`` stores one matrix in: Q4_1 everywhere, or Q4_K_M's Q4_K with v and down at Q6_K
    on ``use_more_bits`` layers, each falling back (``K_FALLBACK``) where rows are not a multiple of 256 values.
    On Gemma-3-270M this reproduces every layer matrix's format in its GGUF file (tests/specimen)."""
    if scheme == "Q4_1":
        return "Q4_1"
    if scheme != "Q4_K_M":
        raise ValueError(f"unknown scheme {scheme!r}; valid schemes: {list(SCHEMES)}")
    fmt = "Q6_K" if component in ("v", "down") and use_more_bits(layer, n_layers) else "Q4_K"
    return K_FALLBACK[fmt] if row_length % QK_K else fmt


@dataclass(frozen=True)
class QuantisationParams(GrowthParams):
    """Chapter 7's sizes (``GrowthParams``: which models are retrained, at its profile) and the null's own choices;
    chapters 3 and 4's statistics at their default parameters."""

    DIAGNOSTIC = "quantisation_null"
    VERSION = 1

    arms: tuple[str, ...] = field(default=NULL_ARMS, metadata={"help": f"chapter 7's arms to retrain, of {list(ARMS)}"})
    schemes: tuple[str, ...] = field(default=SCHEMES, metadata={"help": f"quantisation schemes, of {list(SCHEMES)}"})
    random_init: bool = field(default=True, metadata={"help": "also the untrained model of the same shape"})
    n_shuffles: int = field(default=5, metadata={"help": "layer orders of chapter 4's shuffled null"})

    def __post_init__(self):
        super().__post_init__()
        for scheme in self.schemes:
            if scheme not in SCHEMES:
                raise ValueError(f"unknown scheme {scheme!r}; valid schemes: {list(SCHEMES)}")
        positive_int(self.n_shuffles, "n_shuffles")

    def growth_params(self) -> GrowthParams:
        """The chapter-7 run these models come from (its stored result holds their final losses)."""
        return GrowthParams(**{f.name: getattr(self, f.name) for f in fields(GrowthParams) if f.name != "arms"})

    def work(self, profile=None) -> float:
        """Training FLOPs of the retrained runs (the statistics cost seconds beside them)."""
        return float(self.seeds * len(self.arms) * self.budget)


def quantised_copy(editor, adapter, scheme: str) -> pd.DataFrame:
    """Inside an open ``surgery``: every layer matrix replaced by its ``scheme`` round trip; one row per matrix
    with its format and relative rms error."""
    rows = []
    for layer in range(adapter.n_layers):
        for name in adapter.matrix_names:
            weight = editor.original(layer, name).float().clone()  # a view of the live tensor until replaced
            fmt = tensor_format(scheme, name, layer, adapter.n_layers, weight.shape[1])
            back = quantise(weight.numpy(), fmt)
            editor.replace(layer, name, back)
            error = float(np.linalg.norm(back - weight.numpy()) / np.linalg.norm(weight.numpy()))
            rows.append({"layer": layer, "component": name, "format": fmt, "relative_error": error})
    return pd.DataFrame(rows)


def weight_statistics(adapter, params: QuantisationParams) -> dict[str, pd.DataFrame]:
    """Chapters 3 and 4's statistics of one model as it stands: the predictability table and the delta
    correlations with their shuffled null."""
    fits = predictability_table(adapter, PredictabilityParams(), progress=False)
    deltas = pd.concat([delta_correlations(adapter), shuffled_null(adapter, params.n_shuffles)], ignore_index=True)
    return {"fits": fits, "deltas": deltas}


def trained_activations(model, blocks) -> pd.DataFrame:
    """``activation_profile``'s per-layer table for one of chapter 7's models on token ``blocks`` (no tokenizer)."""
    engine = PerplexityEngine(model, TokenBlocks(blocks, list(range(blocks.shape[0])), {}), progress=False)
    return activation_profile(engine, ActivationParams())["layers"]


def models(params: QuantisationParams, data):
    """(model label, arm, seed, model, final validation loss) for every retrained run, and the random init."""
    config = params.config()
    for seed in range(params.seeds):
        for arm in params.arms:
            curve, _, model = train(params.arm(arm), config, data, seed)
            yield f"{arm} seed {seed}", arm, seed, model.eval(), float(curve.iloc[-1].val_loss)
    if params.random_init:
        yield RANDOM_INIT, RANDOM_INIT, 0, build_model(params.shape, params.target_layers, 0).eval(), np.nan


def run_null(params: QuantisationParams, progress: bool = True) -> dict[str, pd.DataFrame]:
    """Every model, fp32 and under every scheme: tidy ``fits``, ``deltas`` and ``errors`` tables, ``models`` (one
    row per model: its final loss, and whether its fp32 weights came back bit for bit after the schemes) and
    ``activations`` (each fp32 model's massive-activation profile)."""
    _, data = text_data(params)
    fits, deltas, errors, rows, profiles = [], [], [], [], []
    total = params.seeds * len(params.arms) + int(params.random_init)
    for label, arm, seed, model, loss in tqdm(models(params, data), total=total, desc="quantisation null",
                                              disable=not progress):
        adapter = ModelAdapter(model)
        profiles.append(trained_activations(model, data.importance).assign(model=label, arm=arm, seed=seed))
        before = weights_hash(model)
        for scheme in (FP32,) + tuple(params.schemes):
            with surgery(adapter) as editor:
                if scheme != FP32:
                    errors.append(quantised_copy(editor, adapter, scheme).assign(model=label, scheme=scheme))
                stats = weight_statistics(adapter, params)
            tag = dict(model=label, arm=arm, seed=seed, scheme=scheme)
            fits.append(stats["fits"].drop(columns="model").assign(**tag))
            deltas.append(stats["deltas"].rename(columns={"model": "null"}).assign(**tag))
        rows.append({"model": label, "arm": arm, "seed": seed, "final_val_loss": loss,
                     "restored": weights_hash(model) == before})
    return {"fits": pd.concat(fits, ignore_index=True), "deltas": pd.concat(deltas, ignore_index=True),
            "errors": pd.concat(errors, ignore_index=True), "models": pd.DataFrame(rows),
            "activations": pd.concat(profiles, ignore_index=True)}


def quantisation_null(params: QuantisationParams | None = None, profile: str = "quick", recompute: bool = False,
                      progress: bool = True) -> dict[str, pd.DataFrame]:
    """The quantisation null's tables, through the results store (stored with chapter 7's models' text)."""
    params = params or QuantisationParams.for_profile(profile)
    return through_store(params.DIAGNOSTIC, params, lambda: run_null(params, progress), recompute)
