"""The budget sweep: a decay branch is the fresh run under the same schedule (to the bit), G_stack forks the
shallow trajectory, bad input, and the scaling analysis on laws with known answers."""
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from anatomy_lib.growth import scaling
from anatomy_lib.growth.budgets import BudgetParams, run_budgets
from anatomy_lib.growth.compute import text_data
from anatomy_lib.growth.config import BranchSchedule, Schedule
from anatomy_lib.growth.trainer import train

SMOKE = BudgetParams.for_profile("smoke")


@pytest.mark.integration
def test_every_branch_is_the_fresh_run_of_its_budget():
    """One trajectory per (arm, seed) and a decay branch per smaller budget give, bit for bit, what a fresh run
    of each budget under the same schedule gives; G_stack's budgets fork the shallow trajectory."""
    params = replace(SMOKE, seeds=1, check_arms=())
    tables = run_budgets(params, progress=False)
    finals = tables["finals"]
    assert len(finals) == len(params.arms) * len(params.multiples)
    _, data = text_data(params)
    for arm in params.arms:
        for multiple in params.multiples:
            curve, _, _ = train(params.arm(arm), params.branch_config(multiple), data, 0)
            row = finals[(finals["arm"] == arm) & (finals["multiple"] == multiple)].iloc[0]
            assert curve.iloc[-1].val_loss == row.final_val_loss and curve.iloc[-1].step == row.steps, (arm, multiple)
            assert row.flops <= params.budget_at(multiple)


def test_the_branch_schedule_is_the_chapter_schedule_at_the_base_budget():
    base = Schedule(3e-3, 0.05, 0.2)
    branch = BranchSchedule(3e-3, 0.0, 0.2, warmup_flops=0.05 * 1000, floor=1e-3 / 0.05)
    for used in (0, 10, 49, 50, 500, 799, 800, 900, 999):
        assert branch.at(used, 1000) == pytest.approx(base.at(used, 1000), rel=1e-12)
    # at four times the budget the warm-up keeps its length in FLOPs and the rate stays constant until 0.8 of it
    assert branch.at(60, 4000) == base.lr and branch.at(3199, 4000) == base.lr and branch.at(3600, 4000) < base.lr


def test_bad_budget_sweeps_name_the_valid_choices():
    with pytest.raises(ValueError, match="budget sweep trains"):
        BudgetParams(arms=("uniform", "midas"))
    with pytest.raises(ValueError, match="increasing"):
        BudgetParams(multiples=(2.0, 1.0))
    with pytest.raises(ValueError, match="check_multiple"):
        BudgetParams(check_multiple=3.0)
    with pytest.raises(ValueError, match="overlap"):
        BudgetParams(multiples=(0.05, 1.0), check_arms=())
    with pytest.raises(ValueError, match="check_arms"):
        BudgetParams(check_arms=("gstack",))


def test_work_counts_trunks_branches_and_checks():
    p = BudgetParams(multiples=(1.0, 2.0), seeds=1, check_arms=("uniform",), check_multiple=1.0)
    per_seed = 2 * (2.0 + 0.2 * 1.0) + 0.75 * 3.0  # uniform and shallow trunks with a branch; G_stack's tails
    assert p.work() == pytest.approx((per_seed + 1.0) * p.budget)


def _law_tables(laws: dict, multiples=(0.25, 0.5, 1, 2, 4), seeds=3, noise=0.0):
    rng = np.random.default_rng(0)
    rows = []
    for arm, (floor, scale, exponent) in laws.items():
        for seed in range(seeds):
            for m in multiples:
                loss = scaling.saturating(m, floor, scale, exponent) + noise * rng.standard_normal()
                rows.append({"arm": arm, "seed": seed, "multiple": m, "protocol": "branch", "budget_flops": m * 1e12,
                             "final_val_loss": loss, "flops": m * 1e12, "steps": 1, "tokens": 1, "layers": 1,
                             "wall_s": 1.0, "own_wall_s": 1.0})
    return {"finals": pd.DataFrame(rows)}


def test_the_power_law_fit_recovers_a_known_law():
    tables = _law_tables({"uniform": (3.0, 2.0, 0.5)})
    fit = scaling.fits(tables).iloc[0]
    assert (fit.floor, fit.scale, fit.exponent) == pytest.approx((3.0, 2.0, 0.5), rel=1e-3)


def test_an_extrapolated_crossover_is_labelled_and_lands_where_the_laws_cross():
    # deep: 3 + 2 m^-0.5, shallow: 3.6 + 0.8 m^-0.5: they cross where 1.2 m^-0.5 = 0.6, at m = 4 ... beyond the
    # swept 0.25-2.5 but within twice its largest budget, so it must come back as an extrapolation
    laws = {"uniform": (3.0, 2.0, 0.5), "shallow": (3.6, 0.8, 0.5)}
    out = scaling.crossover(_law_tables(laws, multiples=(0.25, 0.5, 1, 2.5)))
    assert out["kind"] == "extrapolated" and out["seeds_crossing"] == 3 and out["limit"] == 5.0
    assert out["extrapolated"] == pytest.approx(4.0, rel=1e-3)
    # the same laws swept to 1.5 only: the crossing at 4 is past twice the sweep, so no fit is read out there
    too_far = scaling.crossover(_law_tables(laws, multiples=(0.25, 0.5, 1, 1.5)))
    assert too_far["kind"] == "none" and too_far["seeds_crossing"] == 0 and math.isnan(too_far["extrapolated"])
    measured = scaling.crossover(_law_tables(laws, multiples=(0.25, 1, 8, 16), noise=0.001))
    assert measured["kind"] == "measured" and measured["measured"] == 8
    never = scaling.crossover(_law_tables({"uniform": (3.7, 2.0, 0.5), "shallow": (3.6, 0.8, 0.5)}))
    assert never["kind"] == "none" and math.isnan(never["extrapolated"])


@pytest.mark.integration
def test_the_event_study_starts_every_variant_from_one_state():
    """Every variant of an arm starts from the same loss (the shared fork), and only the variant that changes
    the clone noise changes the loss right after the operator."""
    from anatomy_lib.growth.events import VARIANTS, EventParams, event_findings, event_summary, run_events

    params = EventParams.for_profile("smoke", seeds=1)
    tables = run_events(params, progress=False)
    summary = event_summary(tables)
    assert set(summary["variant"]) == set(VARIANTS) and set(summary["arm"]) == {"gstack", "developmental"}
    for arm, group in summary.groupby("arm"):
        assert group["before"].nunique() == 1, arm
        same_jump = group[group["variant"].isin(["as run", "fresh optimiser", "no re-warm-up"])]["jump"]
        assert same_jump.nunique() == 1, arm
    assert event_findings(tables, params)


def test_budget_sentences_name_the_depths_their_parameters_set():
    """The depths in the sentences come from the sweep's parameters (smoke: 4 over 2), never typed; GPU time by the
    book's one convention (core.gpu)."""
    from anatomy_lib.core.gpu import gpu_seconds

    laws = {"uniform": (3.0, 2.0, 0.5), "shallow": (3.6, 0.8, 0.5)}
    measured = scaling.budget_findings(_law_tables(laws, multiples=(0.25, 1, 8, 16), noise=0.001), SMOKE, 10 ** 6)
    assert any(f"{SMOKE.target_layers}-layer uniform model is better than the {SMOKE.start_layers}-layer one" in s
               for s in measured)
    assert not any("12-layer" in s or "3-layer" in s for s in measured)
    cost = scaling.compute_cost(8.0, SMOKE.budget, 1e10, "H200")
    assert cost["gpu_hours"] == pytest.approx(gpu_seconds(8.0 * SMOKE.budget, "H200") / 3600)


def test_each_seeds_crossing_is_read_once_whether_or_not_it_crosses():
    """A seed whose fit does not cross within the limit is counted, never listed once per seed ("not within 8x,
    not within 8x, ..."); the budgets of the seeds that cross are listed."""
    nan = math.nan
    none = scaling.seed_crossings([nan, nan, nan], 8.0)
    assert none.startswith("no seed's fitted laws put G_stack past it within 8x") and none.count("within") == 1
    some = scaling.seed_crossings([nan, 6.5, 5.25], 8.0)
    assert some.startswith("the fitted laws of 2 of 3 seeds put G_stack past it, at 5.25x and 6.5x")
    assert some.endswith("that of the other seed not within 8x the chapter's budget (2 times the largest swept one)")
    assert "those of the other 2 not within 8x" in scaling.seed_crossings([nan, 6.5, nan], 8.0)
    assert scaling.seed_crossings([5.0, 6.0, 7.0], 8.0) == ("each seed's fitted laws put G_stack past it, at 5x, 6x "
                                                            "and 7x (extrapolated)")


def test_budget_sentences_say_when_neither_depth_nor_growth_crosses():
    """The uniform model that never overtakes the shallow one is said so, G_stack's sweep beside it (its sentence
    once, not one "not within" per seed)."""
    laws = {"uniform": (3.7, 2.0, 0.5), "shallow": (3.6, 0.8, 0.5), "gstack": (3.8, 2.0, 0.5)}
    text = " ".join(scaling.budget_findings(_law_tables(laws), SMOKE, 10 ** 6))
    assert "Not reached within 4x, and no seed's fitted laws cross within 8x" in text
    assert "no seed's fitted laws put G_stack past it within 8x" in text and "not within 8x, not" not in text
