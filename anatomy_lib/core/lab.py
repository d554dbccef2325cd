"""One specimen under study at one profile: its evaluation blocks, its perplexity engine, and the one way to
measure an edit.

Chapters, the CLI and the benchmarks all start from ``open_lab(...)`` so that the same names produce the same
blocks, the same baseline and the same results-store requests. ``Lab.measure(edit)`` is the measuring path
every diagnostic and explorer shares: build the engine from the intact model if it is not built yet, apply the
edit inside ``surgery`` (so the model is restored exactly), evaluate from the first edited layer, and compare
with the baseline block by block (paired bootstrap interval).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Callable

import numpy as np
import pandas as pd
import torch

from .bootstrap import paired_change_interval
from .corpus import TokenBlocks, load_corpus, sequence_prefix, token_blocks
from .distributed import world
from .engine import PerplexityEngine
from .estimate import announce
from .generation import generate
from .params import DiagnosticParams, PaperLayers
from .profiles import Profile, get_profile
from .results import ResultStore, load_or_compute
from .runtime import default_dtype, get_device, show_progress
from .specimens import Specimen, load_specimen
from .surgery import WeightSurgery, surgery

Edit = Callable[[WeightSurgery], None]  # changes weights through the editor it is handed


@dataclass(frozen=True)
class Measurement:
    """An edited model against the intact one on the lab's blocks: the row every diagnostic reports."""

    ppl: float  # perplexity of the edited model
    base_ppl: float  # perplexity of the intact model
    change_pct: float  # perplexity change, %
    ci_low: float  # paired bootstrap interval of the change, %
    ci_high: float
    continuation: str | None = None  # greedy continuation of the prompt under the edit, when one was asked for
    block_nll: np.ndarray = field(default=None, repr=False, compare=False)  # per-block NLL of the edited model

    def row(self) -> dict:
        """The five numbers (and the continuation, when there is one) as a table row."""
        row = {"ppl": self.ppl, "base_ppl": self.base_ppl, "change_pct": self.change_pct, "ci_low": self.ci_low,
               "ci_high": self.ci_high}
        return row if self.continuation is None else {**row, "continuation": self.continuation}


class NotStored(LookupError):
    """A read-only lab was asked for a result the store does not hold."""


@dataclass(frozen=True)
class Baseline(DiagnosticParams):
    """The intact model's per-block NLL (no knobs: the blocks and the specimen determine it)."""

    DIAGNOSTIC = "baseline"
    VERSION = 1


@dataclass(frozen=True)
class Lab:
    """One specimen under study at one profile, on fixed evaluation blocks: what every dissection measures with.

    Immutable: its engine (the intact model's prefix cache) is built from these blocks on first use, so a lab
    on other blocks, another profile or another specimen is a new lab (``open_lab``, or ``dataclasses.replace``).
    ``measure`` is the one measuring path; ``stored`` reads and writes the results store under ``request``.
    """

    specimen: Specimen
    profile: Profile
    blocks: TokenBlocks
    corpus_name: str = "sotu"
    progress: bool = field(default_factory=show_progress)
    compute_missing: bool = True  # False: a result the store lacks raises NotStored (see ``read_only``)

    @cached_property
    def engine(self) -> PerplexityEngine:
        """The prefix-cache engine of the intact model, built on first use (a chapter that only reads stored
        results never pays for it)."""
        return PerplexityEngine(self.specimen.model, self.blocks, batch_size=self.profile.batch_size,
                                progress=self.progress)

    @property
    def adapter(self):
        return self.specimen.adapter

    def measure(self, edit: Edit, prompt: str | None = None, max_new_tokens: int | None = None,
                seed: int = 0) -> Measurement:
        """Apply ``edit`` inside ``surgery``, evaluate, and compare with the intact model.

        With ``prompt``, the edited model's greedy continuation of it is generated too. ``seed`` seeds the
        bootstrap. The engine is built (from the intact weights) before the edit is applied.
        """
        engine = self.engine
        with surgery(self.adapter) as editor:
            edit(editor)
            result = engine.evaluate()
            text = generate(self.specimen, prompt, max_new_tokens or self.profile.gen_tokens) if prompt else None
        base = engine.baseline
        change, low, high = paired_change_interval(base.block_nll, result.block_nll, self.profile.n_boot, seed)
        return Measurement(result.perplexity, base.perplexity, change, low, high, text, result.block_nll)

    def request(self, params: DiagnosticParams) -> dict:
        """Everything that determines a diagnostic's result, for the results store."""
        return {"specimen": self.specimen.identity, "blocks": self.blocks.description,
                "profile": self.profile.as_dict(), **params.as_request()}

    def stored(self, params: DiagnosticParams, compute: Callable[[], dict[str, pd.DataFrame]],
               recompute: bool = False, work_s: Callable[[dict[str, pd.DataFrame]], float] | None = None,
               computed_by: str = "") -> dict[str, pd.DataFrame]:
        """The tables for ``params`` from the results store, computed (and stored) when it lacks them (a
        ``read_only`` lab raises ``NotStored`` instead). Under ``torchrun`` only rank 0 writes. ``work_s``: the
        compute's own seconds from its tables, where part of it ran earlier; ``computed_by``: the command that
        computes a result no chapter computes itself (both ``results.load_or_compute``)."""
        if not self.compute_missing:
            found = ResultStore().load(params.DIAGNOSTIC, self.request(params))
            if found is None:
                raise NotStored(f"no stored {params.DIAGNOSTIC} result for {self.specimen.name} at profile "
                                f"{self.profile.name} with these parameters")
            return found[0]

        def before():
            announce(params, self.profile, str(self.specimen.device), quiet=not world().main,
                     specimen=self.specimen.name)

        tables, _ = load_or_compute(params.DIAGNOSTIC, self.request(params), compute, device=self.specimen.device,
                                    recompute=recompute, save=world().main, before=before, work_s=work_s,
                                    computed_by=computed_by)
        return tables

    def checkpoints(self, params: DiagnosticParams):
        """Where a sweep of independent runs toward ``params``' result keeps its finished runs
        (``results.RunCheckpoints``), so that it resumes where it stopped."""
        return ResultStore().checkpoints(params.DIAGNOSTIC, self.request(params))

    def defaults(self, params_class: type[DiagnosticParams], **overrides) -> DiagnosticParams:
        """``params_class``'s defaults at this lab's profile, sized for its specimen where the profile sizes it
        apart (``profiles.SPECIMEN_SIZES``): what a chapter computes when given no parameters."""
        return params_class.for_profile(self.profile, specimen=self.specimen.name, **overrides)

    def at_depth(self, layers) -> tuple[int, ...]:
        """``layers`` named on the paper's 30 layers, at the same relative depth of this lab's specimen (the
        layers themselves on a 30-layer model): how a chapter's layer parameters reach any specimen."""
        return PaperLayers(tuple(layers)).at_depth(self.adapter.n_layers)

    def read_only(self) -> "Lab":
        """This lab, reading the results store only: what the book does with a specimen whose results it shows
        but does not compute (a missing one raises ``NotStored`` instead of starting a long computation)."""
        return replace(self, compute_missing=False)

    def baseline(self, recompute: bool = False) -> pd.DataFrame:
        """Per-block NLL of the intact model (a tidy table), through the results store."""
        def run():
            nll = self.engine.baseline.block_nll
            return {"blocks": pd.DataFrame({"block": range(len(nll)), "start": self.blocks.starts, "nll": nll})}

        return self.stored(Baseline(), run, recompute)["blocks"]


_SPECIMENS: dict[tuple, Specimen] = {}


def cached_specimen(name: str, device: str | None = None, dtype=None, seed: int = 0, verbose: bool = True) -> Specimen:
    """Load a specimen once per process (chapters and widgets ask for the same one many times). The cache is
    keyed on what changes the loaded model: the name, the device, the dtype and (for ``random:`` names) the
    seed; ``verbose`` only changes what is printed."""
    device = torch.device(device) if device is not None else get_device()
    dtype = dtype or default_dtype(device)
    key = (name, str(device), str(dtype), seed if name.startswith("random:") else 0)
    if key not in _SPECIMENS:
        _SPECIMENS[key] = load_specimen(name, device=device, dtype=dtype, seed=seed, verbose=verbose)
    return _SPECIMENS[key]


def open_lab(specimen: str | Specimen = "default", profile: str | Profile = "quick", corpus: str = "sotu",
             years: tuple | None = None, seed: int = 0, progress: bool | None = None) -> Lab:
    """Load (or reuse) a specimen and pick the profile's evaluation blocks; the engine comes on first use."""
    spec = specimen if isinstance(specimen, Specimen) else cached_specimen(specimen)
    prof = get_profile(profile)
    if spec.tokenizer is None:
        raise ValueError(f"specimen {spec.name} has no tokenizer; build blocks with corpus.blocks_from_ids")
    blocks = token_blocks(load_corpus(corpus, years), spec.tokenizer, prof.n_blocks, prof.block_len, seed,
                          prefix=sequence_prefix(spec.tokenizer, spec.adapter.family))
    return Lab(spec, prof, blocks, corpus, show_progress() if progress is None else progress)
