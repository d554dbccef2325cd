"""Chapter 6 as the book's chapter protocol (``core.chapter``), so that chapter 9, the atlas and the seminar judge
recovery on the evidence chapter 6's claims table is judged on.

The quick sweep (``sweep``) answers the paper at its own budget with one noise seed for most layers. Once the
powered sweep (``power``) is complete at the chapter's learning rate, it is the stronger evidence for the same
claims: every layer with several noise seeds (the unit of replication) and its sham, on more evaluation blocks.
The claims are then judged on it, read at the paper's budget (``power.truncated``: its evaluations after that
dropped, the runs the same up to there), with what the quick sweep alone gives beside them. Nothing here trains
the powered sweep: ``python -m anatomy_lib recovery-power`` does.
"""
from __future__ import annotations

from dataclasses import replace

from ..core import rules as v
from .params import RecoveryParams
from .power import power_design, stored_sweep, truncated
from .report import PAPER, findings, paper_claims
from .sweep import compute

POWERED = "powered"  # the key of the powered sweep's tables (read at the paper's budget) in the chapter's tables
QUICK_ALONE = "Quick sweep alone"  # the claims table's column of what the quick sweep alone gives each claim


def chapter_compute(lab, params: RecoveryParams | None = None, *, recompute: bool = False,
                    progress: bool = True) -> dict:
    """``sweep.compute``'s tables, with the powered sweep at ``params.lr`` read at the paper's budget under
    ``POWERED`` where that rate's sweep is complete (the specimen's design, ``power.power_design``)."""
    params = (params or lab.defaults(RecoveryParams)).resolved(lab)
    tables = dict(compute(lab, params, recompute=recompute, progress=progress))
    powered = powered_at_budget(lab, params, tables["importance"])
    if powered is not None:
        tables[POWERED] = powered
    return tables


def powered_at_budget(lab, params: RecoveryParams, importance) -> dict | None:
    """The powered sweep at the chapter's rate, with chapter 2's ``importance``, read at the paper's budget; None
    where the specimen's design has no such rate, or its sweep there is not complete. Never trains."""
    design = power_design(lab.specimen.name)
    sweep = next((s for s in design.sweeps(params) if s.lr == params.lr), None)
    # a rate's sweep is stored once its last run is kept (``run_power``): no run checkpoint is read here
    stored = None if sweep is None else stored_sweep(lab, sweep)
    if stored is None:
        return None
    return truncated({**stored, "params": sweep, "importance": importance}, min(PAPER["budget_steps"], sweep.steps))


def verdict_evidence(tables: dict, params: RecoveryParams) -> tuple[dict, RecoveryParams]:
    """The tables and parameters the chapter's claims are judged on: the powered sweep where ``tables`` holds it,
    else the quick sweep."""
    powered = tables.get(POWERED)
    return (tables, params) if powered is None else (powered, powered["params"])


def evidence_sentence(tables: dict, params: RecoveryParams) -> str:
    """Which sweep the claims are judged on, computed from it."""
    evidence, used = verdict_evidence(tables, params)
    seeds = _seeds(evidence)
    if POWERED not in tables:
        named = ", ".join(f"L{int(layer)}" for layer in seeds.index)
        return (f"The verdicts are judged on the quick sweep ({len(seeds)} layers: {named}; "
                f"{_seed_range(seeds)} per layer, {used.eval_blocks or 'every'} evaluation blocks, {used.steps} "
                "steps): the powered sweep at the chapter's rate is not complete.")
    return (f"The verdicts are judged on the powered sweep at lr {used.lr:g} ({len(seeds)} layers, "
            f"{_seed_range(seeds)} per layer, {used.eval_blocks or 'every'} evaluation blocks), read at the "
            f"paper's budget of {used.steps} steps; the column \"{QUICK_ALONE}\" says what the quick sweep alone "
            "gives.")


def chapter_findings(tables: dict, params: RecoveryParams | None = None, specimen_name: str = "the specimen",
                     paper_one_based: bool = False) -> list[str]:
    """``report.findings`` on the quick sweep (the figures and tables the chapter shows first) and, where the claims
    are judged on the powered sweep, the same findings on it, read at the paper's budget: the numbers the verdicts
    rest on are stated beside the quick sweep's, each sentence saying which sweep it reads."""
    params = params or RecoveryParams()
    quick = findings(tables, params, specimen_name, paper_one_based=paper_one_based)
    evidence, used = verdict_evidence(tables, params)
    if evidence is tables:
        return quick
    powered = findings(evidence, used, specimen_name, fixed_note=False,  # the design leaves it out on purpose
                       paper_one_based=paper_one_based)
    return ([f"Quick sweep: {sentence}" for sentence in quick]
            + [f"Powered sweep (the verdicts' evidence: lr {used.lr:g}, read at the paper's {used.steps} steps): "
               f"{powered[0]}"] + [f"Powered sweep: {sentence}" for sentence in powered[1:]])


def _seed_range(seeds) -> str:
    low, high = int(seeds.min()), int(seeds.max())
    return f"{low} noise seed{'s' if low > 1 else ''}" if low == high else f"{low} to {high} noise seeds"


def chapter_claims(tables: dict, params: RecoveryParams, paper_one_based: bool = False) -> list[v.Claim]:
    """The paper's claims (``report.paper_claims``) judged on ``verdict_evidence``; on the powered sweep, each
    note says so, with its noise seeds per layer."""
    evidence, used = verdict_evidence(tables, params)
    claims = paper_claims(evidence, used, paper_one_based)
    if evidence is tables:
        return claims
    seeds = _seed_range(_seeds(evidence))
    fixed = fixed_noise_verdicts(tables, params, paper_one_based)
    return [replace(claim, note=f"{claim.note}; powered sweep, {seeds} per layer"
                    + (f"; the quick sweep at fixed noise (the paper's likely protocol), {fixed[claim.claim]}"
                       if claim.claim in fixed else "")) for claim in claims]


def fixed_noise_verdicts(tables: dict, params: RecoveryParams, paper_one_based: bool = False) -> dict[str, str]:
    """Claim -> what the quick sweep's fixed-noise protocol gives it, each sigma's verdict and its control's part in
    words ("sigma 0.25: reproduced, not discriminating against its control"): the powered sweep leaves that protocol
    out of its design, so the claims judged on it carry the quick sweep's in their notes. Empty where the quick
    sweep ran no fixed noise."""
    runs = tables["runs"]
    sigmas = sorted(runs.loc[(runs["protocol"] == "fixed") & (runs["kind"] == "damaged"), "sigma"].unique())
    said: dict[str, list[str]] = {}
    for sigma in sigmas:
        for claim in paper_claims(tables, replace(params, damage="sigma", sigmas=(float(sigma),)), paper_one_based):
            said.setdefault(claim.claim, []).append(
                f"sigma {sigma:g}: {claim.verdict}" + (f", {claim.survives} against its control" if claim.survives
                                                       else ""))
    return {claim: "; ".join(parts) for claim, parts in said.items()}


def quick_beside(tables: dict, params: RecoveryParams, paper_one_based: bool = False) -> dict[str, list[v.Claim]]:
    """Where the claims are judged on the powered sweep, the quick sweep's own claims, for ``show_claims``'
    ``beside`` (a column of what the quick sweep alone gives each claim); empty where the quick sweep is the
    evidence."""
    if verdict_evidence(tables, params)[0] is tables:
        return {}
    return {QUICK_ALONE: paper_claims(tables, params, paper_one_based)}


def _seeds(evidence: dict):
    runs = evidence["runs"]
    return runs[runs["kind"] == "damaged"].groupby("layer")["noise_seed"].nunique()
