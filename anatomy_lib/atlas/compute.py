"""The atlas's tables: each chapter's headline measure for several specimens, on one relative-depth axis.

Relative depth is ``layer / (n_layers - 1)``: 0 is the first decoder layer and 1 the last, whatever the depth,
so SmolLM2's 30 layers, Gemma's 18 and chapter 7's trained 12-layer models share an axis. Every table is read
through the chapters' own ``compute`` at their default parameters (so each number is the one its chapter
shows); ``labs`` are the specimens' labs, read-only in the book (a result the store lacks is then "not run",
never a long computation started from the atlas).
"""
from __future__ import annotations

import pandas as pd

from .. import growth, importance, manipulation, predictability, quantisation, recovery, structure
from ..core.lab import NotStored
from ..growth.compute import is_stored

HELD_OUT = "out-of-sample"
PREDICTORS = ("ridge", "mean layer")  # the paper's predictor and the baseline that beats it on SmolLM2


def relative_depth(layers, n_layers: int):
    """``layer / (n_layers - 1)``: 0 for the first decoder layer, 1 for the last."""
    return layers / max(n_layers - 1, 1)


def _with_depth(table: pd.DataFrame, name: str, n_layers: int) -> pd.DataFrame:
    return table.assign(specimen=name, n_layers=n_layers, depth=relative_depth(table["layer"], n_layers))


def layer_type_names(adapter) -> list[str]:
    """Each layer's attention type in the book's words ('global', 'sliding-window'); 'global' for every layer of a
    family without types (every SmolLM2 layer attends to the whole context)."""
    types = adapter.layer_types or ("full_attention",) * adapter.n_layers
    return [importance.LAYER_TYPE_NAMES.get(t, t) for t in types]


def importance_rows(lab, progress: bool = False) -> pd.DataFrame:
    """Chapter 2's table for every ablation mode (change with its interval, class, Block Influence), with each
    layer's attention type."""
    tables = importance.compute(lab, progress=progress)
    rows = _with_depth(pd.concat(tables.values(), ignore_index=True), lab.specimen.name, lab.adapter.n_layers)
    return rows.assign(layer_type=[layer_type_names(lab.adapter)[l] for l in rows["layer"]])


def trained_name(n_layers: int, arm) -> str:
    """How the atlas names one of chapter 7's trained models (its importance map is a skip ablation)."""
    return f"trained {n_layers}-layer: {arm}"


def trained_rows(profile: str, compute_missing: bool = True, progress: bool = False) -> pd.DataFrame:
    """Chapter 7's importance map of its trained models (skip ablation, seed 0), one per arm, at ``profile``;
    empty when it is not stored and ``compute_missing`` is off."""
    params = growth.Params.for_profile(profile)
    if not compute_missing and not is_stored("growth", params):
        return pd.DataFrame()
    anatomy = growth.compute(None, params, progress=progress)["anatomy"]
    n_layers = int(anatomy["layer"].max()) + 1
    return anatomy.assign(specimen=[trained_name(n_layers, arm) for arm in anatomy["arm"]], n_layers=n_layers,
                          depth=relative_depth(anatomy["layer"], n_layers))


def trained_activation_rows(profile: str, compute_missing: bool = True, progress: bool = False) -> pd.DataFrame:
    """Massive activations of chapter 7's trained models (seed 0 of each arm the quantisation null retrains, which
    records them), named as ``trained_rows`` names them; empty when not stored and ``compute_missing`` is off."""
    params = quantisation.QuantisationParams.for_profile(profile)
    if not compute_missing and not is_stored(params.DIAGNOSTIC, params):
        return pd.DataFrame()
    profiles = quantisation.quantisation_null(params, progress=progress)["activations"]
    profiles = profiles[(profiles["seed"] == 0) & (profiles["arm"] != quantisation.RANDOM_INIT)]
    n_layers = params.target_layers
    return profiles.assign(specimen=[trained_name(n_layers, arm) for arm in profiles["arm"]], n_layers=n_layers,
                           depth=relative_depth(profiles["layer"], n_layers))


def predictability_rows(lab, progress: bool = False) -> pd.DataFrame:
    """Chapter 3's held-out R^2 per layer (mean over components) for ridge and the mean-layer baseline."""
    fits = predictability.compute(lab, progress=progress)["fits"]
    held = fits.query("model == 'specimen' and fit == @HELD_OUT and predictor in @PREDICTORS")
    table = held.groupby(["predictor", "layer"], as_index=False)["r2"].mean()
    return _with_depth(table, lab.specimen.name, lab.adapter.n_layers)


def structure_rows(lab, progress: bool = False) -> pd.DataFrame:
    """Chapter 4's lag-1 delta correlation per component: the specimen, its layer-shuffled null (range over
    shuffles) and the randomly initialised model."""
    weights = structure.compute(lab, progress=progress)["weights"].query("lag == 1")
    rows = []
    for component, group in weights.groupby("component", sort=False):
        by_model = group.groupby("model")["corr"]
        shuffled = group[group["model"] == "layer-shuffled"]["corr"]
        rows.append({"specimen": lab.specimen.name, "component": component,
                     "corr": by_model.mean().get("specimen"), "random_init": by_model.mean().get("random init"),
                     "null_low": shuffled.min(), "null_high": shuffled.max()})
    return pd.DataFrame(rows)


def alpha_rows(lab, progress: bool = False) -> pd.DataFrame:
    """Chapter 5's alpha curve: perplexity change when one layer's writers are scaled by alpha (each of its
    sweep layers), with intervals."""
    sweeps = manipulation.compute(lab, progress=progress)["sweeps"]
    curve = sweeps.query("knob == 'alpha' and scope == 'writers'").copy()
    curve["layer"] = curve["layers"].astype(int)
    return _with_depth(curve[["layer", "alpha", "change_pct", "ci_low", "ci_high"]], lab.specimen.name,
                       lab.adapter.n_layers)


def activation_rows(lab, progress: bool = False) -> pd.DataFrame:
    """Massive activations (``importance.activations``): the largest absolute activation leaving each layer, its
    ratio to the stream's median and how many entries are massive."""
    layers = importance.activations(lab)["layers"]
    return _with_depth(layers, lab.specimen.name, lab.adapter.n_layers)


def recovery_rows(lab, progress: bool = False) -> pd.DataFrame:
    """Chapter 6's damaged runs (matched damage) judged by its main criterion: the share of the damage undone at
    the end *against the sham of the same layer* (fine-tuning's own drift taken out, as chapter 6 argues a
    recovery must be read), where the specimen's sweep is stored (never trained from here: it takes the longest
    of any chapter); empty otherwise."""
    try:
        tables = recovery.compute(lab.read_only(), progress=progress)
    except NotStored:
        return pd.DataFrame()
    damaged = recovery.judged_runs(tables, recovery.MAIN_CRITERION, lab.profile.n_boot)
    if "protocol" in damaged:
        damaged = damaged[damaged["protocol"] == damaged["protocol"].iloc[0]]
    return _with_depth(damaged, lab.specimen.name, lab.adapter.n_layers)


def massive_rows(lab, progress: bool = False) -> pd.DataFrame:
    """Chapter 2's causal test of the massive activation, its summary row: the birth layer (largest jump of the
    massive feature) and its depth, the control layer, the sites restored."""
    summary = importance.massive_causal(lab)["summary"]
    return summary.assign(specimen=lab.specimen.name, n_layers=lab.adapter.n_layers,
                          depth=relative_depth(summary["birth_layer"], lab.adapter.n_layers))


MEASURES = {"importance": importance_rows, "predictability": predictability_rows, "structure": structure_rows,
            "alpha": alpha_rows, "recovery": recovery_rows, "activations": activation_rows,
            "massive": massive_rows}


def atlas(labs, progress: bool = False) -> dict[str, pd.DataFrame]:
    """Every measure of ``MEASURES`` for every lab, stacked (a ``specimen`` column tells them apart), plus chapter
    7's trained models under ``trained``. A measure a read-only lab has not stored is left out for that specimen
    and listed in ``not_run``."""
    tables: dict[str, list[pd.DataFrame]] = {name: [] for name in MEASURES}
    missing = []
    for lab in labs:
        for name, rows in MEASURES.items():
            try:
                table = rows(lab, progress)
            except NotStored:
                table = pd.DataFrame()
            if table.empty:
                missing.append({"specimen": lab.specimen.name, "measure": name})
            else:
                tables[name].append(table)
    out = {name: pd.concat(parts, ignore_index=True) if parts else pd.DataFrame() for name, parts in tables.items()}
    first = labs[0]
    out["trained"] = trained_rows(first.profile.name, first.compute_missing, progress)
    trained = trained_activation_rows(first.profile.name, first.compute_missing, progress)
    out["activations"] = pd.concat([out["activations"], trained], ignore_index=True)
    out["not_run"] = pd.DataFrame(missing, columns=["specimen", "measure"])
    return out
