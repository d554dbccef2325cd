"""Chapter 7 as the book's chapter protocol (``core.chapter``): both of its experiments, so that chapter 9 and the
introduction judge growth on the same evidence the chapter shows. The compute-optimal frontier (``frontier``),
the experiment that can answer the growth question, comes first; the paper's protocol at a small budget
(``compute``, ``report``) follows with its own controls.

The frontier is read at the lab's profile: ``smoke`` trains its tiny sweep (seconds); every other profile reads
what is kept and never starts the CPU-hours sweep (``frontier.frontier_kept``), so its claims join only once the
sweep is complete.
"""
from __future__ import annotations

import pandas as pd

from .compute import compute
from .frontier import FrontierParams, frontier, frontier_kept
from .frontier_report import claims as frontier_claims
from .frontier_report import is_complete
from .params import GrowthParams
from .report import paper_claims

FRONTIER = "frontier"  # the key of the frontier's tables (a dict of tables) in the chapter's tables
FRONTIER_PARAMS = "frontier_params"


def chapter_compute(lab=None, params: GrowthParams | None = None, *, recompute: bool = False,
                    progress: bool = True) -> dict:
    """The small-budget study's tables, with the frontier's tables and parameters at the lab's profile."""
    tables = dict(compute(lab, params, recompute=recompute, progress=progress))
    profile = lab.profile.name if lab is not None else "quick"
    frontier_params = FrontierParams.for_profile(profile)
    tables[FRONTIER] = frontier(frontier_params, progress=False) if profile == "smoke" else \
        frontier_kept(frontier_params)
    tables[FRONTIER_PARAMS] = frontier_params
    return tables


def chapter_claims(tables: dict, params: GrowthParams) -> list:
    """The frontier's claims (once its sweep is complete), then the small-budget study's."""
    out = []
    found: dict[str, pd.DataFrame] | None = tables.get(FRONTIER)
    if found is not None and is_complete(found):
        out += frontier_claims(found, tables[FRONTIER_PARAMS])
    return out + paper_claims(tables, params)
