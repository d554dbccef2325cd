"""Precision as an explanation: chapter 2's importance map computed in float16 and bfloat16 beside float32.

The paper ran on a T4, plausibly in float16; every other number in this book is float32. Half precision could
change the map where an ablation drives the stream toward float16's largest value (65,504): a massive activation
of about 24,000 leaves little headroom, and an overflow turns a perplexity into inf. This module loads the same
specimen in each precision (a specimen's identity includes its dtype, so each map is stored apart), sweeps the
same operators on the same blocks through the same path (``importance.importance``), and compares:

- ``precision_panel``: the tidy table of every (precision, operator, layer) change, with the base perplexity of
  each precision (a precision that breaks the intact model is reported as such, its sweep not run);
- ``precision_summary``: per precision and operator, the range in orders of magnitude over the finite changes,
  the count of non-finite ones (inf or NaN perplexities are counted, never dropped silently), and the largest
  change against float32 (in orders of magnitude of ``1 + change``), with its layer.

Half precision on a CPU is slow (about 3 times float32 for bfloat16 here), so the map may be computed on fewer
blocks than the profile's (``PrecisionParams.n_blocks``); float32 is then recomputed on those same blocks.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from ..core.checks import one_of, positive_int
from ..core.corpus import load_corpus, sequence_prefix, token_blocks
from ..core.lab import Lab, NotStored, cached_specimen
from ..core.profiles import get_profile
from .analysis import PAPER_RANGE_ORDERS, importance_range_orders
from .compute import MODES, ImportanceParams, importance

PRECISIONS = ("float32", "bfloat16", "float16")
PRECISION_PROFILE = "smoke"  # the profile whose blocks the stored maps use (a CPU affords them in half precision)
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(frozen=True)
class PrecisionParams:
    """Which precisions and operators, on how many of the profile's blocks (None: all of them)."""

    precisions: tuple[str, ...] = field(default=PRECISIONS, metadata={"choices": PRECISIONS})
    modes: tuple[str, ...] = field(default=("neighbor_mean", "skip"), metadata={"choices": MODES})
    n_blocks: int | None = field(default=4, metadata={"help": "evaluation blocks (None: the profile's)"})
    seed: int = field(default=0, metadata={"help": "seed of the block selection and the bootstrap"})

    def __post_init__(self):
        for precision in self.precisions:
            one_of(precision, PRECISIONS, "precision")
        for mode in self.modes:
            one_of(mode, MODES, "ablation mode")
        if "float32" not in self.precisions:
            raise ValueError("float32 is the reference: keep it among the precisions")
        if self.n_blocks is not None:
            positive_int(self.n_blocks, "n_blocks")


def precision_lab(specimen: str, precision: str, profile: str = "quick", n_blocks: int | None = None,
                  corpus: str = "sotu", seed: int = 0, compute_missing: bool = True, progress: bool = True) -> Lab:
    """A lab of ``specimen`` loaded in ``precision``, on the profile's first ``n_blocks`` evaluation blocks' worth
    (the same blocks in every precision: they are chosen from the token stream by ``seed``)."""
    one_of(precision, PRECISIONS, "precision")
    spec = cached_specimen(specimen, dtype=DTYPES[precision], verbose=False)
    prof = get_profile(profile)
    blocks = token_blocks(load_corpus(corpus), spec.tokenizer, n_blocks or prof.n_blocks, prof.block_len, seed,
                          prefix=sequence_prefix(spec.tokenizer, spec.adapter.family))
    return Lab(spec, prof, blocks, corpus, progress, compute_missing)


def precision_panel(specimen: str, params: PrecisionParams = PrecisionParams(), profile: str = "quick",
                    corpus: str = "sotu", compute_missing: bool = True,
                    progress: bool = True) -> dict[str, pd.DataFrame]:
    """``changes`` (one row per precision, operator and layer) and ``base`` (one row per precision: the intact
    model's perplexity, whether it is finite, whether it is stored) of one specimen. A precision whose intact
    perplexity is not finite has no sweep; read-only (``compute_missing`` off), a half precision not stored is
    listed as such and float32 not stored raises ``NotStored``."""
    changes, bases = [], []
    for precision in params.precisions:
        lab = precision_lab(specimen, precision, profile, params.n_blocks, corpus, params.seed,
                            compute_missing=compute_missing, progress=progress)
        try:
            base = float(np.exp(np.mean(lab.baseline()["nll"])))
            tables = [importance(lab, ImportanceParams(mode, seed=params.seed), progress=progress)
                      for mode in params.modes] if np.isfinite(base) else []
        except NotStored:
            if precision == "float32":
                raise  # nothing to compare with
            bases.append({"specimen": lab.specimen.name, "precision": precision, "base_ppl": np.nan,
                          "finite": False, "stored": False, "blocks": lab.blocks.n_blocks})
            continue
        bases.append({"specimen": lab.specimen.name, "precision": precision, "base_ppl": base,
                      "finite": bool(np.isfinite(base)), "stored": True, "blocks": lab.blocks.n_blocks})
        changes += [table.assign(specimen=lab.specimen.name, precision=precision) for table in tables]
    return {"changes": pd.concat(changes, ignore_index=True) if changes else pd.DataFrame(),
            "base": pd.DataFrame(bases)}


def precision_summary(panel: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per precision and operator: the range of importance (orders of magnitude, finite changes only), the
    non-finite changes counted, and the largest departure from float32 (``abs(log10(1 + change) -
    log10(1 + change_float32))``) with its layer; the float32 rows are the reference (departure 0)."""
    changes = panel["changes"]
    if changes.empty:
        return pd.DataFrame()
    rows = []
    for (precision, mode), table in changes.groupby(["precision", "mode"], sort=False):
        reference = changes[(changes["precision"] == "float32") & (changes["mode"] == mode)].set_index("layer")
        finite = table[np.isfinite(table["change_pct"])]
        mine = finite.set_index("layer")
        shared = mine.index.intersection(reference.index)
        departure = (np.log10(1 + mine.loc[shared, "change_pct"] / 100)
                     - np.log10(1 + reference.loc[shared, "change_pct"] / 100)).abs()
        worst = int(departure.idxmax()) if len(departure) else -1
        rows.append({"precision": precision, "mode": mode, "layers": len(table),
                     "non_finite": int((~np.isfinite(table["change_pct"])).sum()),
                     "range_orders": importance_range_orders(finite), "largest_departure_orders":
                     float(departure.max()) if len(departure) else np.nan, "departure_layer": worst})
    return pd.DataFrame(rows)


def precision_panels(specimens, params: PrecisionParams = PrecisionParams(), profile: str = "quick",
                     compute_missing: bool = False) -> dict[str, dict[str, pd.DataFrame]]:
    """``precision_panel`` of every specimen name ({name: panel}); read from the store only by default (what the
    book does: a specimen whose maps are not stored is left out, never computed for hours on a page build)."""
    panels = {}
    for name in specimens:
        try:
            panels[name] = precision_panel(name, params, profile, compute_missing=compute_missing, progress=False)
        except NotStored:
            continue
    return panels


def precision_findings(panels: dict[str, dict[str, pd.DataFrame]]) -> list[str]:
    """Per specimen, in computed sentences: the intact perplexity in each precision, then per operator the range
    of importance in each precision, the non-finite changes, the largest departure from float32, and whether half
    precision moves the range toward the paper's 10^7."""
    out = []
    for name, panel in panels.items():
        base = panel["base"]
        blocks = int(base["blocks"].iloc[0])
        def said(r) -> str:
            if not r.stored:
                return f"not run in {r.precision}"
            if not r.finite:
                return (f"not finite in {r.precision} (the precision breaks the intact model, whose largest "
                        f"representable value is {torch.finfo(DTYPES[r.precision]).max:,.0f}; no map)")
            return f"{r.base_ppl:,.3f} in {r.precision}"

        out.append(f"On {name} ({blocks} blocks), the intact model's perplexity: "
                   + ", ".join(said(r) for r in base.itertuples()) + ".")
        summary = precision_summary(panel)
        for mode, rows in summary.groupby("mode", sort=False):
            rows = rows.set_index("precision")
            reference = rows.loc["float32", "range_orders"]
            parts = []
            for precision, r in rows.drop(index="float32").iterrows():
                toward = abs(r.range_orders - PAPER_RANGE_ORDERS) < abs(reference - PAPER_RANGE_ORDERS) - 0.5
                parts.append(f"{precision} 10^{r.range_orders:.1f} with {r.non_finite} non-finite change"
                             f"{'' if r.non_finite == 1 else 's'}, at most 10^{r.largest_departure_orders:.2g} from "
                             f"float32 (L{r.departure_layer}), " + ("nearer" if toward else "no nearer")
                             + " the paper's 10^7 by more than half an order")
            out.append(f"On {name}, {mode}: float32 spans 10^{reference:.1f}; "
                       + ("; ".join(parts) if parts else "no half-precision map is stored") + ".")
    return out
