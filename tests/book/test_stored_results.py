"""The results committed under data/ are exactly what the chapters ask for with their defaults.

A chapter's parameters cell must equal the defaults of its diagnostic's parameter dataclass, and for those
defaults the committed store must hold a result whose request (specimen, blocks, profile, algorithm version,
parameters) matches; no committed result may be left that no chapter asks for. Nothing is computed here.
"""
import json
from pathlib import Path

import pytest

from anatomy_lib.core.lab import Baseline
from anatomy_lib.core.results import ResultStore, request_key
from anatomy_lib.importance import (
    MODES,
    PRECISION_PROFILE,
    SECOND_SELECTION,
    STREAM_OPERATORS,
    ActivationParams,
    ContinuationParams,
    ImportanceParams,
    MassiveParams,
    PrecisionParams,
    Thresholds,
    classify,
    connective_layers,
)
from anatomy_lib.manipulation import CONNECTIVE_CUTS, CompressionParams, ManipulationParams
from anatomy_lib.predictability import PredictabilityParams
from anatomy_lib.recovery import RecoveryParams, power_design
from anatomy_lib.structure import StructureParams

ROOT = Path(__file__).resolve().parents[2]
STORE = ResultStore(ROOT / "data" / "results")
BOOK_PROFILE = "quick"

# chapter -> {parameters-cell name: (dataclass, field, how the chapter turns the cell's value into the field)}
CHAPTER_DEFAULTS = {
    "02_importance": {"TENSORS": (ImportanceParams, "tensors", str), "SEED": (ImportanceParams, "seed", int),
                      "MASSIVE_RATIO": (ActivationParams, "ratio", float),
                      "MASSIVE_FLOOR": (ActivationParams, "floor", float),
                      "CONTROL_GROWTH": (MassiveParams, "control_growth", float)},
    "03_predictability": {
        "FORMULATION": (PredictabilityParams, "formulation", str), "CONTEXT": (PredictabilityParams, "context", int),
        "RIDGE_ALPHA": (PredictabilityParams, "ridge_alpha", float),
        "PROJ_DIM": (PredictabilityParams, "proj_dim", int),
        "SUBSTITUTE": (PredictabilityParams, "substitutions", lambda v: tuple(tuple(s) for s in v)),
        "SWEEP_CONTEXTS": (PredictabilityParams, "sweep_contexts", tuple),
        "SWEEP_PROJ_DIMS": (PredictabilityParams, "sweep_proj_dims", tuple),
        "SEED": (PredictabilityParams, "seed", int)},
    "04_structure": {"LAGS": (StructureParams, "lags", tuple), "N_SHUFFLES": (StructureParams, "n_shuffles", int),
                     "SEED": (StructureParams, "seed", int)},
    "05_manipulation": {"HEATMAP_LAYERS": (ManipulationParams, "heatmap_layers", tuple),
                        "SWEEP_LAYERS": (ManipulationParams, "sweep_layers", tuple),
                        "ALPHAS": (ManipulationParams, "alphas", tuple), "SEED": (ManipulationParams, "seed", int)},
    "06_recovery": {"DAMAGE": (RecoveryParams, "damage", str), "TARGET_NATS": (RecoveryParams, "target_nats", float),
                    "LR": (RecoveryParams, "lr", float), "TRAINABLE": (RecoveryParams, "trainable", str)},
}


def parameters_cell(chapter: str) -> dict:
    nb = json.loads((ROOT / "book" / f"{chapter}.ipynb").read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    values: dict = {}
    exec("".join(cell["source"]), {}, values)
    return values


@pytest.mark.parametrize("chapter", sorted(CHAPTER_DEFAULTS))
def test_chapter_parameters_equal_the_dataclass_defaults(chapter):
    values = parameters_cell(chapter)
    assert values["PROFILE"] == BOOK_PROFILE
    for name, (params_class, field, convert) in CHAPTER_DEFAULTS[chapter].items():
        assert convert(values[name]) == getattr(params_class(), field), f"{chapter}: {name}"
    if chapter == "02_importance":
        assert tuple(values["MODES"]) == MODES and tuple(values["STREAM_OPERATORS"]) == STREAM_OPERATORS
        assert Thresholds() == Thresholds(
            values["CONNECTIVE_PCT"], values["CRITICAL_PCT"], values["IO_FRACTION"])
        assert values["PRECISION_PROFILE"] == PRECISION_PROFILE


def book_params(lab) -> list:
    """Every parameter set the chapters request at their defaults (chapter 5's compressed layers are chapter 2's
    connective tissue, read from the committed importance table, and those of each other cut of its threshold)."""
    importance = STORE.load("importance", lab.request(ImportanceParams()))
    assert importance is not None, "no committed importance table for the chapters' defaults: run make results"
    table = importance[0]["layers"]
    table["class"] = classify(table, lab.adapter.n_layers)
    manipulation = ManipulationParams(compress_layers=tuple(connective_layers(table)))
    # chapter 5's sensitivity table: the compression experiment at each connective cut whose layers differ
    cuts = {tuple(connective_layers(table.assign(**{"class": classify(table, lab.adapter.n_layers,
                                                                      Thresholds(connective_pct=cut))})))
            for cut in CONNECTIVE_CUTS}
    at_cuts = [CompressionParams(compress_layers=layers) for layers in sorted(cuts)
               if layers and layers != manipulation.compress_layers]
    recovery = lab.defaults(RecoveryParams).resolved(lab)  # sized for the specimen (profiles.SPECIMEN_SIZES)
    wanted = ([Baseline()] + [ImportanceParams(mode=m) for m in MODES + STREAM_OPERATORS]
              + [ContinuationParams(mode=m) for m in MODES]
              + [ActivationParams(), MassiveParams(), PredictabilityParams(), StructureParams(), manipulation,
                 *at_cuts, recovery]
              + ([recovery.fixed_protocol()] if recovery.sigmas else []))
    return [p.resolved(lab) for p in wanted]  # layers named on the paper's 30, at the specimen's depth


def precision_keys(name: str) -> set[str]:
    """The store keys of chapter 2's half-precision maps of one specimen (each precision is its own specimen
    identity, on the smoke profile's blocks): what the book may hold for it, not what it must."""
    from anatomy_lib.importance.precision import PRECISIONS, precision_lab

    keys = set()
    for precision in PRECISIONS:
        lab = precision_lab(name, precision, PRECISION_PROFILE, progress=False)
        keys |= {request_key(lab.request(p)) for p in
                 [Baseline()] + [ImportanceParams(mode=m) for m in PrecisionParams().modes]}
    return keys


def powered_keys(lab) -> set[str]:
    """The store keys of chapter 6's powered sweep of the lab's specimen, one per learning rate of its design
    (``recovery.power_design``): stored once a rate's sweep is complete, read by chapter 6 where it is (what the
    book may hold, not what it must: it is run apart, over CPU-hours)."""
    base = lab.defaults(RecoveryParams).resolved(lab)
    return {request_key(lab.request(sweep)) for sweep in power_design(lab.specimen.name).sweeps(base)}


def test_committed_growth_results_match_chapter_7():
    """The main runs, the budget sweep, the event study and the learning-rate check, each at the chapter's
    defaults, and the quantisation null of chapters 3 and 4 (chapter 7's models retrained); nothing else."""
    from anatomy_lib.growth import BudgetParams, EventParams, GrowthParams, lr_check_params, request
    from anatomy_lib.growth.text import load_text
    from anatomy_lib.quantisation import QuantisationParams

    params = GrowthParams.for_profile(BOOK_PROFILE)
    text = load_text(params.vocab_size)
    null = QuantisationParams.for_profile(BOOK_PROFILE)  # chapters 3 and 4 retrain chapter 7's models
    assert null.growth_params() == params
    wanted = [(p.DIAGNOSTIC, request(p, text)) for p in
              [params, BudgetParams.for_profile(BOOK_PROFILE), EventParams.for_profile(BOOK_PROFILE),
               *lr_check_params(params), null]]
    missing = [name for name, request_ in wanted if STORE.load(name, request_) is None]
    assert not missing, f"stale or missing growth results ({missing}): rerun make results"
    committed = {path.stem for path in (STORE.root / "growth-sotu").rglob("*.json")}
    assert committed == {request_key(r) for _, r in wanted}, "committed growth results no chapter asks for"


def test_committed_results_match_the_chapters_requests(real_specimen):
    from anatomy_lib.core.lab import open_lab

    lab = open_lab(real_specimen, BOOK_PROFILE, progress=False)
    wanted = book_params(lab)
    stale = [p for p in wanted if STORE.load(p.DIAGNOSTIC, lab.request(p)) is None]
    assert not stale, f"stale or missing committed results (rerun make results): {stale}"
    # chapter 2's exercise and the seminar's groups read a second selection of text, stored in chapter 2's modes
    second = open_lab(real_specimen, BOOK_PROFILE, seed=SECOND_SELECTION, progress=False)
    other = [second.request(ImportanceParams(mode=m, seed=SECOND_SELECTION)) for m in MODES]
    assert all(STORE.load("importance", r) is not None for r in other), "the second selection is not stored"
    keys = {request_key(lab.request(p)) for p in wanted} | {request_key(r) for r in other}
    keys |= precision_keys(real_specimen.name) | powered_keys(lab)
    committed = {path.stem for path in (STORE.root / real_specimen.name).rglob("*.json")}
    assert committed <= keys, f"committed results no chapter asks for: {sorted(committed - keys)}"


def test_committed_gemma_results_are_what_the_book_reads(real_gemma):
    """The second specimen's committed results are requests the book makes at its defaults (the atlas, chapter
    9's generality column, chapter 2's explorer), with the same parameters as for SmolLM2 mapped to its depth;
    the measures the atlas draws for every specimen are all there."""
    from anatomy_lib.core.lab import open_lab

    lab = open_lab(real_gemma, BOOK_PROFILE, progress=False)
    wanted = book_params(lab)
    keys = {request_key(lab.request(p)) for p in wanted} | precision_keys(real_gemma.name) | powered_keys(lab)
    committed = {path.stem for path in (STORE.root / real_gemma.name).rglob("*.json")}
    assert committed <= keys, f"committed Gemma results no chapter asks for: {sorted(committed - keys)}"
    required = [p for p in wanted if p.DIAGNOSTIC in {"importance", "continuations", "predictability", "structure",
                                                   "manipulate", "activations", "recovery"}]
    missing = [p for p in required if STORE.load(p.DIAGNOSTIC, lab.request(p)) is None]
    assert not missing, f"the atlas's measures are not all stored for Gemma (rerun them): {missing}"

